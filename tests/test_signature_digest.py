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

#: sha256 of :func:`signature_digest`, pinned: signature version 6.
SAMPLE_DIGEST = "93a19344541488fe96cba058501a63c15c4086dccc5d538bee450e4cdb06c4ec"
CORPORA_DIGEST = "91d7a50bf3abf1d4b6f446abcf895c9e5b05f635950457b58888e9fab86e6370"
#: The same with ``Config(version=5)``: what this neardup signs into an index of version 5
#: it opens is what version 5 signed (its SimHash keys of single blocks).
SAMPLE_DIGEST_V5 = "665c944764c6781a446955a4c5a6560c5f459ac213d749e96f2edda2915c76d4"
CORPORA_DIGEST_V5 = "d594a43eac25715282eecbd09cfe5adfc6086107c514de97f65e39703b19bb57"


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


def _corpora() -> list[Document]:
    return [d for name in CORPUS_FILES for d in _docs(CORPORA / name, SLICE)]


def test_signatures_of_the_sample_are_pinned():
    assert signature_digest(_docs(SAMPLE)) == SAMPLE_DIGEST
    assert signature_digest(_docs(SAMPLE), Config(version=5)) == SAMPLE_DIGEST_V5


_NO_CORPORA = pytest.mark.skipif(
    not all((CORPORA / n).exists() for n in CORPUS_FILES),
    reason=f"shared corpora not at {CORPORA} (NEARDUP_CORPORA)",
)


@_NO_CORPORA
def test_signatures_of_the_shared_corpora_are_pinned():
    assert signature_digest(_corpora()) == CORPORA_DIGEST
    assert signature_digest(_corpora(), Config(version=5)) == CORPORA_DIGEST_V5


def _tags(docs: list[Document], config: Config, path: Path) -> dict:
    with NearDup.open(str(path), config) as nd:
        nd.index(docs, batch_size=64, progress=None)
        return {
            d.id: (d.tags.cluster_id, d.tags.dup_of, d.tags.max_resemblance, d.tags.is_duplicate)
            for d in nd.engine.get([d.id for d in docs], keys=False).values()
        }


def _check_same_tags(docs: list[Document], tmp_path: Path) -> None:
    """Versions 5 and 6 differ in their SimHash keys only, which propose candidates: every
    pair within the SimHash distance is proposed by both, and verification is exact, so the
    tags are the same."""
    old = _tags(docs, Config(version=5), tmp_path / "v5.db")
    new = _tags(docs, Config(), tmp_path / "v6.db")
    assert len(new) == len(docs) and any(t[3] for t in new.values())
    assert new == old


def test_the_simhash_keys_of_version_6_leave_the_tags_of_the_sample_unchanged(tmp_path):
    _check_same_tags(_docs(SAMPLE), tmp_path)


@_NO_CORPORA
def test_the_simhash_keys_of_version_6_leave_the_tags_of_the_corpora_unchanged(tmp_path):
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
