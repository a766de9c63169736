"""Signatures are the same on every Python neardup supports, with or without hazm installed:
one digest over every signature of the bundled sample (fa/ru/en) and, where the shared
corpora are present, of slices of them, pinned here. A signature that changed on one
interpreter, platform or dependency version would make its indexes disagree with the others'.

If the signing itself is changed on purpose (a new signature version), print the digests with
``python tests/test_signature_digest.py`` and pin them again."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

from neardup import Config, Document, NearDup
from neardup.signing.signer import Signer

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "examples" / "sample.jsonl"
CORPORA = Path(os.environ.get("NEARDUP_CORPORA") or ROOT.parent / "shared" / "corpora")
#: Documents taken from the start of each corpus file.
SLICE = 300
CORPUS_FILES = ("fa.jsonl", "ru.jsonl", "en.jsonl", "en_licenses.jsonl")

#: sha256 of :func:`signature_digest`, pinned: signature version 7 (a winnowing window of 12).
SAMPLE_DIGEST = "7bf7010bf133ff3dd195cb80669b6d0e7a44e2ccbdbf4cce1099374a1a0b8dfe"
CORPORA_DIGEST = "87ce208398c7427705b5608d33b5fa7826a82a7768c164d92b3ef92ee7cff653"
#: The same with ``Config(version=6)``: what this neardup signs into an index of version 6
#: it opens is what version 6 signed (a winnowing window of 8).
SAMPLE_DIGEST_V6 = "93a19344541488fe96cba058501a63c15c4086dccc5d538bee450e4cdb06c4ec"
CORPORA_DIGEST_V6 = "91d7a50bf3abf1d4b6f446abcf895c9e5b05f635950457b58888e9fab86e6370"
#: The same with ``Config(version=5)``: what this neardup signs into an index of version 5
#: it opens is what version 5 signed (its SimHash keys of single blocks).
SAMPLE_DIGEST_V5 = "665c944764c6781a446955a4c5a6560c5f459ac213d749e96f2edda2915c76d4"
CORPORA_DIGEST_V5 = "d594a43eac25715282eecbd09cfe5adfc6086107c514de97f65e39703b19bb57"
#: sha256 of :func:`keyword_digest` of the sample: the keywords an HTTP engine's index of each
#: version holds (hex before version 7, base64url from it).
KEYWORD_DIGESTS = {
    6: "3577435432ab3bd5d7c70f87240fb5530555e7a22d50c9237a5340a095660943",
    7: "bcb48846bf0384b9c396b74b4e8a82d2021ee130f7490902ac55c44146a7890e",
}


def _docs(path: Path, limit: int | None = None) -> list[Document]:
    out = []
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            if limit is not None and i >= limit:
                break
            r = json.loads(line)
            out.append(Document(str(r.get("id", i)), r["text"], lang=r.get("lang")))
    return out


def signature_digest(docs: list[Document], config: Config | None = None) -> str:
    """sha256 over every document's language, token count, exact hash, SimHash, shingle
    hashes and keys of every field, in order: what an index stores of a signed document."""
    h = hashlib.sha256()
    for s in Signer(config or Config()).sign_batch(docs):
        h.update(f"{s.id}\0{s.lang}\0{s.n_tokens}\0{s.exact}\0{s.simhash}\0".encode())
        h.update(np.ascontiguousarray(s.shingles, dtype="<u8").tobytes())
        for field in sorted(s.keys):
            h.update(field.encode() + b"\0")
            h.update(np.ascontiguousarray(s.keys[field], dtype="<u8").tobytes())
    return h.hexdigest()


def keyword_digest(docs: list[Document], version: int) -> str:
    """sha256 over every document's keywords of every field, as an HTTP engine's index of
    signature ``version`` stores them (``neardup.keys.<field>``)."""
    h = hashlib.sha256()
    for s in Signer(Config(version=version)).sign_batch(docs):
        for field in sorted(s.keys):
            h.update("\0".join([s.id, field, *s.keywords(field, version)]).encode() + b"\n")
    return h.hexdigest()


def _corpora() -> list[Document]:
    return [d for name in CORPUS_FILES for d in _docs(CORPORA / name, SLICE)]


def test_signatures_of_the_sample_are_pinned():
    assert signature_digest(_docs(SAMPLE)) == SAMPLE_DIGEST
    assert signature_digest(_docs(SAMPLE), Config(version=6)) == SAMPLE_DIGEST_V6
    assert signature_digest(_docs(SAMPLE), Config(version=5)) == SAMPLE_DIGEST_V5


def test_the_keywords_of_the_sample_are_pinned():
    assert {v: keyword_digest(_docs(SAMPLE), v) for v in KEYWORD_DIGESTS} == KEYWORD_DIGESTS


_NO_CORPORA = pytest.mark.skipif(
    not all((CORPORA / n).exists() for n in CORPUS_FILES),
    reason=f"shared corpora not at {CORPORA} (NEARDUP_CORPORA)",
)


@_NO_CORPORA
def test_signatures_of_the_shared_corpora_are_pinned():
    assert signature_digest(_corpora()) == CORPORA_DIGEST
    assert signature_digest(_corpora(), Config(version=6)) == CORPORA_DIGEST_V6
    assert signature_digest(_corpora(), Config(version=5)) == CORPORA_DIGEST_V5


def _tags(docs: list[Document], config: Config, path: Path) -> dict:
    with NearDup.open(str(path), config) as nd:
        nd.index(docs, batch_size=64, progress=None)
        return {
            d.id: (d.tags.cluster_id, d.tags.dup_of, d.tags.max_resemblance, d.tags.is_duplicate)
            for d in nd.engine.get([d.id for d in docs], keys=False).values()
        }


def _check_same_tags(docs: list[Document], tmp_path: Path) -> None:
    """Versions 5 and 6 differ in their SimHash keys only, 6 and 7 in their winnowing window
    (containment samples), all of which propose candidates: every pair within the SimHash
    distance, or holding a run of a window's shingles, is proposed by each, and verification
    is exact, so the tags are the same."""
    tags = {v: _tags(docs, Config(version=v), tmp_path / f"v{v}.db") for v in (5, 6, 7)}
    assert len(tags[7]) == len(docs) and any(t[3] for t in tags[7].values())
    assert tags[5] == tags[6] == tags[7]


def test_the_keys_of_versions_6_and_7_leave_the_tags_of_the_sample_unchanged(tmp_path):
    _check_same_tags(_docs(SAMPLE), tmp_path)


@_NO_CORPORA
def test_the_keys_of_versions_6_and_7_leave_the_tags_of_the_corpora_unchanged(tmp_path):
    _check_same_tags(_corpora(), tmp_path)


def test_the_digest_sees_a_changed_key():
    docs = _docs(SAMPLE, 20)
    base = signature_digest(docs)
    assert signature_digest(docs, Config(seed=2)) != base
    changed = [
        Document(d.id, d.text + (" extra" if i == 7 else ""), lang=d.lang)
        for i, d in enumerate(docs)
    ]
    assert signature_digest(changed) != base


if __name__ == "__main__":
    print("SAMPLE_DIGEST =", repr(signature_digest(_docs(SAMPLE))))
    if all((CORPORA / n).exists() for n in CORPUS_FILES):
        print("CORPORA_DIGEST =", repr(signature_digest(_corpora())))
    print("SAMPLE_DIGEST_V5 =", repr(signature_digest(_docs(SAMPLE), Config(version=5))))
    print("SAMPLE_DIGEST_V6 =", repr(signature_digest(_docs(SAMPLE), Config(version=6))))
    print("KEYWORD_DIGESTS =", {v: keyword_digest(_docs(SAMPLE), v) for v in (6, 7)})
