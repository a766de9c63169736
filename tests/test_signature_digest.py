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

from neardup import Config, Document
from neardup.signer import Signer

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "examples" / "sample.jsonl"
CORPORA = Path(os.environ.get("NEARDUP_CORPORA") or ROOT.parent / "shared" / "corpora")
#: Documents taken from the start of each corpus file.
SLICE = 300
CORPUS_FILES = ("fa.jsonl", "ru.jsonl", "en.jsonl", "en_licenses.jsonl")

#: sha256 of :func:`signature_digest`, pinned.
SAMPLE_DIGEST = (
    "665c944764c6781a446955a4c5a6560c5f459ac213d749e96f2edda2915c76d4"  # signature version 5
)
CORPORA_DIGEST = "d594a43eac25715282eecbd09cfe5adfc6086107c514de97f65e39703b19bb57"


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


@pytest.mark.skipif(
    not all((CORPORA / n).exists() for n in CORPUS_FILES),
    reason=f"shared corpora not at {CORPORA} (NEARDUP_CORPORA)",
)
def test_signatures_of_the_shared_corpora_are_pinned():
    assert signature_digest(_corpora()) == CORPORA_DIGEST


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
