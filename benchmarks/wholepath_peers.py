"""The peers of the whole path (:mod:`benchmarks.wholepath`), each the plain script a user of it
would write, run as a child process (:data:`PEERS`), and the interpreter that has each."""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, Iterator

from .wholepath_stages import Stages, peak_rss_mb

_WORD = re.compile(r"\w+")


def _union_find(keys: list[Any], pairs: Iterator[tuple[Any, Any]]) -> dict[str, Any]:
    """Clusters of ``keys`` joined by ``pairs`` (union-find): how many, and the documents in
    them."""
    parent = {k: k for k in keys}

    def find(x: Any) -> Any:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    sizes: dict[Any, int] = {}
    for x in parent:
        r = find(x)
        sizes[r] = sizes.get(r, 0) + 1
    big = [s for s in sizes.values() if s > 1]
    return {"clusters": len(big), "docs_in_clusters": sum(big)}


def _shingles(words: list[str], w: int) -> list[str]:
    return [" ".join(words[i : i + w]) for i in range(max(1, len(words) - w + 1))]


def child_datasketch(
    path: str, how: str = "bulk", threshold: float = 0.8, num_perm: int = 128, w: int = 5
) -> dict[str, Any]:
    """The plain datasketch pipeline: read, shingle, MinHash, LSH, union-find; seconds per
    stage. ``how``: ``new`` a new ``MinHash`` per document (``update_batch``), ``bulk``
    ``MinHash.bulk`` (one set of permutations, reused) and an insertion session."""
    st = Stages()
    with st.stage("import"):
        from datasketch import MinHash, MinHashLSH
    with st.stage("read"):
        docs = [json.loads(line) for line in open(path, encoding="utf-8")]
    with st.stage("canonicalize"):  # lower-case and \w+ words
        words = [_WORD.findall(d["text"].lower()) for d in docs]
    with st.stage("sign"):  # shingles and MinHash
        if how == "bulk":
            sketches = MinHash.bulk(
                [[s.encode() for s in _shingles(ws, w)] for ws in words], num_perm=num_perm
            )
        else:
            sketches = []
            for ws in words:
                m = MinHash(num_perm=num_perm)
                m.update_batch([s.encode() for s in _shingles(ws, w)])
                sketches.append(m)
    ids = [d["id"] for d in docs]
    with st.stage("store"):  # LSH insert
        lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
        if how == "bulk":
            with lsh.insertion_session() as session:
                for i, m in zip(ids, sketches, strict=True):
                    session.insert(i, m, check_duplication=False)
        else:
            for i, m in zip(ids, sketches, strict=True):
                lsh.insert(i, m)
    with st.stage("cluster"):  # query every document, union-find
        found = _union_find(
            ids, ((i, o) for i, m in zip(ids, sketches, strict=True) for o in lsh.query(m))
        )
    return {
        "stages": st.seconds,
        "peak_rss_mb": peak_rss_mb(),
        **found,
        "bands": lsh.b,
        "rows": lsh.r,
    }


def child_rensa(
    path: str, threshold: float = 0.8, num_perm: int = 128, bands: int = 16, w: int = 5
) -> dict[str, Any]:
    """A plain rensa script: read, ``\\w+`` words of the lower-cased text, word 5-shingles,
    ``RMinHash.from_token_sets`` (its batch constructor), ``RMinHashLSH`` (16 bands of 8 rows)
    ``insert_many`` and ``query_all``, union-find; seconds per stage."""
    st = Stages()
    with st.stage("import"):
        import rensa
    with st.stage("read"):
        docs = [json.loads(line) for line in open(path, encoding="utf-8")]
    with st.stage("canonicalize"):
        words = [_WORD.findall(d["text"].lower()) for d in docs]
    with st.stage("sign"):
        sketches = rensa.RMinHash.from_token_sets(
            [_shingles(ws, w) for ws in words], num_perm=num_perm, seed=42
        )
    with st.stage("store"):
        lsh = rensa.RMinHashLSH(threshold=threshold, num_perm=num_perm, num_bands=bands)
        lsh.insert_many(sketches)
    with st.stage("cluster"):
        found = _union_find(
            list(range(len(docs))),
            ((i, j) for i, hits in enumerate(lsh.query_all(sketches)) for j in hits),
        )
    return {
        "stages": st.seconds,
        "peak_rss_mb": peak_rss_mb(),
        **found,
        "bands": bands,
        "rows": num_perm // bands,
    }


def child_rensa_plain(
    path: str, threshold: float = 0.8, num_perm: int = 128, bands: int = 16, w: int = 5
) -> dict[str, Any]:
    """The plainest rensa script: per document ``re.findall(r"\\w+", text.lower())``, the set of
    word 5-shingles, ``RMinHash(num_perm=128, seed=42).update(list(shingles))`` and
    ``RMinHashLSH(threshold=0.8, num_perm=128, num_bands=16).insert(i, m)``; then
    ``lsh.query(m)`` for each document, and a union-find; seconds per stage."""
    st = Stages()
    with st.stage("import"):
        from rensa import RMinHash, RMinHashLSH
    with st.stage("read"):
        docs = [json.loads(line) for line in open(path, encoding="utf-8")]
    with st.stage("canonicalize"):
        words = [re.findall(r"\w+", d["text"].lower()) for d in docs]
    with st.stage("sign"):
        sketches = []
        for ws in words:
            m = RMinHash(num_perm=num_perm, seed=42)
            m.update(list(set(_shingles(ws, w))))
            sketches.append(m)
    with st.stage("store"):
        lsh = RMinHashLSH(threshold=threshold, num_perm=num_perm, num_bands=bands)
        for i, m in enumerate(sketches):
            lsh.insert(i, m)
    with st.stage("cluster"):
        found = _union_find(
            list(range(len(docs))), ((i, j) for i, m in enumerate(sketches) for j in lsh.query(m))
        )
    return {
        "stages": st.seconds,
        "peak_rss_mb": peak_rss_mb(),
        **found,
        "bands": bands,
        "rows": num_perm // bands,
    }


def child_text_dedup(
    path: str, workdir: str, threshold: float = 0.8, num_perm: int = 128, w: int = 5
) -> dict[str, Any]:
    """text-dedup's MinHash command (one process, ``--hash_func xxh3``) on the file: read the
    JSONL into a dataset, then its command (load, MinHash, LSH, union-find, filter, save)."""
    import importlib

    st = Stages()
    with st.stage("import"):
        import datasets

        mod = importlib.import_module("text_dedup.minhash")
    with st.stage("read"):
        src = os.path.join(workdir, "td_in")
        datasets.Dataset.from_json(path, cache_dir=os.path.join(workdir, "td_cache")).save_to_disk(
            src
        )
    args = [
        "--path",
        src,
        "--local",
        "--output",
        os.path.join(workdir, "td_out"),
        "--column",
        "text",
        "--num_proc",
        "1",
        "--threshold",
        str(threshold),
        "--num_perm",
        str(num_perm),
        "--ngram",
        str(w),
        "--min_length",
        "0",
        "--hash_func",
        "xxh3",
        "--cache_dir",
        os.path.join(workdir, "td_cache"),
    ]
    with st.stage("cluster"):  # everything of its command
        try:
            mod.main.main(args, standalone_mode=False)
        except SystemExit as e:
            if e.code:
                raise RuntimeError(f"text-dedup minhash exited with {e.code}") from e
    n = sum(1 for _ in open(path, encoding="utf-8"))
    labels = [mod.uf.find(i) for i in range(n)]
    found = _union_find(list(range(n)), ((i, r) for i, r in enumerate(labels) if r != i))
    return {"stages": st.seconds, "peak_rss_mb": peak_rss_mb(), **found}


def datasketch_python() -> str:
    """This interpreter when it has datasketch (the ``bench`` extra), else the peers' venv."""
    import importlib.util

    if importlib.util.find_spec("datasketch") is not None:
        return sys.executable
    from . import peers

    peers.ensure(False, log=lambda *a: None)
    return str(peers._python())


#: The peers of the whole path, strongest first: the child kind and its arguments, what the
#: table calls it.
PEERS = {
    "datasketch_bulk": (["datasketch", "{corpus}", "bulk"], "datasketch bulk"),
    "rensa": (["rensa", "{corpus}"], "rensa script"),
    "rensa_plain": (["rensa-plain", "{corpus}"], "rensa plain"),
    "datasketch_new": (["datasketch", "{corpus}", "new"], "datasketch new"),
    "text_dedup": (["text-dedup", "{corpus}", "{workdir}"], "text-dedup"),
}


def peer_python(peer: str) -> str | None:
    """The interpreter that has ``peer``'s package: this one (the ``bench`` extra), else the
    peers' venv; None where neither has it (text-dedup is only in the venv's full install)."""
    import importlib.util

    module = {"text_dedup": "text_dedup", "rensa": "rensa", "rensa_plain": "rensa"}.get(
        peer, "datasketch"
    )
    if importlib.util.find_spec(module) is not None:
        return sys.executable
    from . import peers

    try:
        peers.ensure(peer == "text_dedup", log=lambda *a: None)
    except peers.PeersUnavailable:
        return None
    if peer == "text_dedup" and not peers.has("text-dedup"):
        return None
    return str(peers._python())
