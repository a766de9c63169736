"""A small index for the report tests: organic near-duplicates from examples/sample.jsonl
(a Persian pair, an English trio) plus unrelated documents and one copy whose title and
text carry HTML that must be escaped."""

from __future__ import annotations

import json
from pathlib import Path

from .corpora import SAMPLE

FA_PAIR = ("fa-farsnews-a1274429a493", "fa-farsnews-e2f6ffa22525")
EN_TRIO = ("en-reuters-c7807b1aedb6", "en-reuters-d4c79da2e470", "en-reuters-ee191679fdca")
SINGLES = (
    "fa-varzesh3-4e43456b3995",
    "ru-natasha-lenta-0ae4fc769f9f",
    "ru-natasha-lenta-25aabd3886f4",
    "en-reuters-9cf3409046ab",
    "en-lic-08c56546f4dcf84d",
)
HOSTILE_OF = "en-reuters-8ffe52940db3"
HOSTILE_TITLE = '<script>window.__pwned = 1</script> & "quoted" <b>title</b>'


def sample_docs() -> list:
    from neardup import Document

    wanted = set(FA_PAIR + EN_TRIO + SINGLES + (HOSTILE_OF,))
    recs = {}
    with SAMPLE.open(encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["id"] in wanted:
                recs[r["id"]] = r
    missing = wanted - set(recs)
    assert not missing, f"{SAMPLE} lacks {sorted(missing)}"
    order = [FA_PAIR[0], EN_TRIO[0], *SINGLES, HOSTILE_OF, FA_PAIR[1], EN_TRIO[1], EN_TRIO[2]]
    docs = [
        Document(
            id=i,
            text=recs[i]["text"],
            title=recs[i]["title"],
            lang=recs[i]["lang"],
            fields={"source": recs[i]["source"]},
        )
        for i in order
    ]
    base = recs[HOSTILE_OF]
    docs.append(
        Document(
            id="hostile-copy",
            text=base["text"] + " <img src=x onerror=alert(1)>",
            title=HOSTILE_TITLE,
            lang="en",
            fields={"source": "<i>site</i>"},
        )
    )
    return docs


def build_index(path: Path, *, clusters: bool = True):
    """Index the documents at ``path`` (SQLite); store N-to-N clusters unless told not to."""
    from neardup import NearDup

    nd = NearDup.open(str(path))
    nd.index(sample_docs(), progress=None)
    if clusters:
        nd.clusters(write=True)
    return nd
