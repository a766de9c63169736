"""neardup on real engines, side by side in one run, with the embedded engine beside them.

    python -m benchmarks.real_engines          # 100,000 documents, 20,000 more; OpenSearch 2, 3
    python -m benchmarks.real_engines --quick  # 3,000 documents: everything runs
    python -m benchmarks.real_engines --docs 100000 --sizes 20000 --engines opensearch-2

Each engine is started by ``tests/engines/run`` (one node, heap ``--heap``). The same synthetic
collection (:mod:`benchmarks.synth`, seeded) goes, a step at a time (``--sizes``: the index
grows to each size, then to ``--docs``),

* through ``neardup index`` (``NearDup.index``: signing, candidate lookups, exact
  verification, tags, with neardup's ingest pipeline) into a neardup index, and
* as the plain raw documents (title and body, no neardup fields) through ``_bulk`` into an
  index with a plain mapping: the engine's own ingest rate, so the ratio is the plugin's cost;

each step timed in wall seconds, CPU of this process and CPU of the engine's JVM (the scale
table), every request of ``neardup index`` timed by kind (where its wall time goes); then
``NearDup.query`` latency (p50/p99 of ``--queries`` edited copies and new texts) and the store
bytes per document from ``_stats`` (primaries, after a flush), for both indices. The whole-path
table runs ``neardup index FILE`` then ``neardup clusters --json`` in fresh processes on
:mod:`benchmarks.wholepath`'s corpus (``--whole-path`` documents of about 550 words) against a
plain ``_bulk`` of the same file and against the engine's own near-duplicate route as a peer
(:data:`MINHASH_MAPPING`: a subfield of 5-word shingles through the ``min_hash`` token filter,
128 buckets, loaded by the same ``helpers.bulk``, then one ``match`` query per document by
``_msearch``): its bulk, store and queries, and its whole job beside neardup's whole path. The
embedded engine takes the same documents and queries. The first table holds the targets:
ratios to the plain ``_bulk`` of the same documents (the whole path's wall time, the last
step's documents per second: the incremental one, store bytes per document of the scale
documents and of the whole path's, engine CPU per document) with their bounds, neardup's whole
path against the ``min_hash`` route's whole job, neardup's own CPU per document against the
embedded engine's run of the same documents, and the query p99 (10 ms). A table compares
the candidate lookups of stored documents as one search over each batch's keys and as one
search per document (``_msearch``). Prints the tables and writes ``real-engines.json`` and
``real-engines.md`` to ``--out``.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import os
import platform
import random
import shlex
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

from rich.console import Console
from rich.table import Table

from neardup.api import NearDup
from neardup.config import Config
from neardup.signing.records import Document
from tests.engines import launch

from . import synth, wholepath, wholepath_corpus
from .engine import base_documents, db_bytes, percentiles

REPO = Path(__file__).resolve().parents[1]
PLAIN_MAPPING = {
    "settings": {"index": {"number_of_shards": 1, "number_of_replicas": 0}},
    "mappings": {"properties": {"title": {"type": "text"}, "body": {"type": "text"}}},
}
#: The engine's own near-duplicate route, as its guides lay it out: the plain mapping with a
#: ``body.minhash`` subfield analyzed by the standard tokenizer, lowercase, 5-word shingles
#: (no unigrams) and the ``min_hash`` token filter (1 hash, 128 buckets, 1 hash a bucket, empty
#: buckets filled by rotation), each document's near-duplicates then found by a ``match`` of
#: its text on that subfield.
MINHASH_MAPPING = {
    "settings": {
        "index": {
            **PLAIN_MAPPING["settings"]["index"],
            "analysis": {
                "filter": {
                    "five_word_shingles": {
                        "type": "shingle",
                        "min_shingle_size": 5,
                        "max_shingle_size": 5,
                        "output_unigrams": False,
                    },
                    "minhash_128": {
                        "type": "min_hash",
                        "hash_count": 1,
                        "bucket_count": 128,
                        "hash_set_size": 1,
                        "with_rotation": True,
                    },
                },
                "analyzer": {
                    "minhash": {
                        "tokenizer": "standard",
                        "filter": ["lowercase", "five_word_shingles", "minhash_128"],
                    }
                },
            },
        }
    },
    "mappings": {
        "properties": {
            "title": {"type": "text"},
            "body": {
                "type": "text",
                "fields": {"minhash": {"type": "text", "analyzer": "minhash"}},
            },
        }
    },
}


class Engine:
    """``tests/engines/run ENGINE`` in the background until :meth:`close`; :meth:`cpu_s` is
    the CPU seconds (user + system) its JVM has used so far."""

    def __init__(self, name: str, heap: str, timeout: float = 900.0):
        self.proc, self.url = launch.start(
            name, "--heap", heap, stdin=subprocess.DEVNULL, timeout=timeout
        )
        import psutil

        kids = psutil.Process(self.proc.pid).children(recursive=True)
        self.jvm = next((k for k in kids if "java" in k.name()), None)

    def cpu_s(self) -> float:
        if self.jvm is None:
            return float("nan")
        t = self.jvm.cpu_times()
        return t.user + t.system

    def close(self) -> None:
        launch.stop(self.proc)


class Clock:
    """Wall, this process's CPU and the engine's CPU between :meth:`start` and :meth:`stop`."""

    def __init__(self, engine: Engine | None):
        self.engine = engine

    def start(self) -> Clock:
        self.t, self.c = time.perf_counter(), time.process_time()
        self.j = self.engine.cpu_s() if self.engine else float("nan")
        return self

    def stop(self) -> dict:
        return {
            "seconds": time.perf_counter() - self.t,
            "client_cpu_s": time.process_time() - self.c,
            "engine_cpu_s": (self.engine.cpu_s() if self.engine else float("nan")) - self.j,
        }


class RequestTimer:
    """Every request of ``neardup index`` timed by kind (``index documents``, ``msearch``,
    ``refresh``, ``mget``, the write lease ...), as the engine's one way of sending a request
    reports it (:attr:`neardup.engines.transport.Retrying.observe`): where the wall time
    goes."""

    def __init__(self) -> None:
        self.seconds: collections.Counter = collections.Counter()
        self.calls: collections.Counter = collections.Counter()

    def __call__(self, what: str, seconds: float) -> None:
        self.seconds[what] += seconds
        self.calls[what] += 1

    def report(self) -> dict:
        return {
            k: {"seconds": round(v, 3), "requests": self.calls[k]}
            for k, v in self.seconds.most_common()
        }


def commit() -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def store(client, index: str) -> dict:
    client.indices.flush(index=index)
    s = client.indices.stats(index=index, metric="store,docs")["indices"][index]["primaries"]
    n = s["docs"]["count"]
    return {
        "docs": n,
        "store_bytes": s["store"]["size_in_bytes"],
        "bytes_per_doc": s["store"]["size_in_bytes"] / n if n else None,
    }


def query_latency(nd: NearDup, queries: list) -> dict:
    nd.query("warm up the canonicalizer and the stop lists")
    lat, hits = [], 0
    for q in queries:
        t = time.perf_counter()
        hits += bool(nd.query(q.doc.text))
        lat.append(time.perf_counter() - t)
    return {**percentiles(lat), "queries_with_a_match": hits}


def _rate(part: dict) -> dict:
    """``part`` with its documents per second and CPU milliseconds per document."""
    n = part["docs"]
    return {
        **part,
        "docs_per_s": n / part["seconds"],
        "client_cpu_ms_per_doc": 1e3 * part["client_cpu_s"] / n,
        "engine_cpu_ms_per_doc": 1e3 * part["engine_cpu_s"] / n,
    }


def neardup_ingest(nd: NearDup, docs: list, clock: Clock) -> dict:
    clock.start()
    rep = nd.index(docs, batch_size=500, tag=True, progress=None)
    return _rate(
        {
            "docs": rep.indexed,
            "failed": len(rep.failed),
            "duplicates": rep.duplicates,
            **clock.stop(),
        }
    )


def plain_bulk(
    client,
    helpers,
    docs: Iterable,
    clock: Clock,
    index: str = "plain",
    mapping: dict = PLAIN_MAPPING,
) -> dict:
    """The raw documents (title and body) through ``_bulk`` into ``index`` (``mapping``,
    the plain one unless told, when it is created), then a refresh, as any client would load
    them."""
    clock.start()
    if not client.indices.exists(index=index):
        client.indices.create(index=index, body=mapping)
    actions = (
        {"_index": index, "_id": d.id, "_source": {"title": d.title, "body": d.text}} for d in docs
    )
    ok, errors = helpers.bulk(
        client, actions, chunk_size=500, raise_on_error=False, request_timeout=120
    )
    client.indices.refresh(index=index)
    return _rate({"docs": ok, "failed": len(errors), **clock.stop()})


def _total(parts: list[dict]) -> dict:
    """The steps of a run added up."""
    keys = ("docs", "failed", "seconds", "client_cpu_s", "engine_cpu_s")
    out = {k: sum(p[k] for p in parts) for k in keys}
    if "duplicates" in parts[0]:
        out["duplicates"] = sum(p["duplicates"] for p in parts)
    return _rate(out)


def steps(n: int, sizes: list[int]) -> list[tuple[int, int]]:
    """The (start, end) of each step of the scale table: the index grows to each size.

    >>> steps(100, [20, 100])
    [(0, 20), (20, 100)]
    """
    ends = sorted({s for s in sizes if 0 < s < n} | {n})
    return list(zip([0, *ends[:-1]], ends, strict=True))


def minhash_queries(client, docs: list, clock: Clock, index: str, batch: int = 100) -> dict:
    """Each document's near-duplicates by the engine's own route: one ``match`` query of its
    text on ``body.minhash`` (the best 10 hits, no ``_source``), ``batch`` queries to an
    ``_msearch``; wall and CPU, the queries that failed and the hits other than the document
    itself."""
    clock.start()
    failed = others = 0
    for at in range(0, len(docs), batch):
        these = docs[at : at + batch]
        body = []
        for d in these:
            body += [
                {"index": index},
                {"query": {"match": {"body.minhash": d.text}}, "size": 10, "_source": False},
            ]
        got = client.msearch(body=body, request_timeout=300)["responses"]
        for d, r in zip(these, got, strict=True):
            if "error" in r:
                failed += 1
            else:
                others += sum(h["_id"] != d.id for h in r["hits"]["hits"])
    part = _rate({"docs": len(docs), "failed": failed, **clock.stop()})
    return {**part, "ms_per_doc": 1e3 * part["seconds"] / len(docs), "other_hits": others}


def minhash_route(eng: Engine, client, helpers, docs: list, log) -> dict:
    """The engine's own ``min_hash`` route on ``docs`` (:data:`MINHASH_MAPPING`): the same
    ``helpers.bulk`` as the plain one into an index with the ``body.minhash`` subfield, then
    :func:`minhash_queries`; the whole job is the two added up."""
    log(f"{eng.url}: whole path, the engine's own min_hash route: bulk")
    bulk = plain_bulk(
        client, helpers, docs, Clock(eng), index="wholepath-minhash", mapping=MINHASH_MAPPING
    )
    log(f"{eng.url}: whole path, the engine's own min_hash route: one match per document")
    queries = minhash_queries(client, docs, Clock(eng), "wholepath-minhash")
    return {
        "bulk": bulk,
        "queries": queries,
        "seconds": bulk["seconds"] + queries["seconds"],
        "engine_cpu_s": bulk["engine_cpu_s"] + queries["engine_cpu_s"],
    }


def whole_path(eng: Engine, client, helpers, corpus: Path, log) -> dict:
    """``neardup index FILE`` then ``neardup clusters --json`` on the node, each in a fresh
    process (the command line's own ``main``, as :mod:`benchmarks.wholepath` runs it), against
    a plain ``_bulk`` of the file's raw documents from this process and the engine's own
    ``min_hash`` route (:func:`minhash_route`); the store bytes per document of the three
    indices after a flush."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "plugin"), str(REPO)]))
    target = [eng.url, "--index", "wholepath"]
    log(f"{eng.url}: whole path, neardup index + clusters of {corpus.name}")
    j0 = eng.cpu_s()
    w1, idx = wholepath._run_child(
        ["neardup", "index", str(corpus), "--engine", *target, "--quiet"], env
    )
    j1 = eng.cpu_s()
    w2, cl = wholepath._run_child(["neardup", "clusters", "--engine", *target, "--json"], env)
    j2 = eng.cpu_s()
    if idx["exit"] or cl["exit"]:
        raise RuntimeError(f"neardup index or clusters failed on {eng.url}: {idx} {cl}")
    log(f"{eng.url}: whole path, plain _bulk of {corpus.name}")
    with corpus.open(encoding="utf-8") as f:
        raw = [Document(d["id"], d["text"], title=d.get("title")) for d in map(json.loads, f)]
    plain = plain_bulk(client, helpers, raw, Clock(eng), index="wholepath-plain")
    minhash = minhash_route(eng, client, helpers, raw, log)
    neardup = {
        "seconds": w1 + w2,
        "index_s": w1,
        "clusters_s": w2,
        "cpu_s": idx["cpu_s"] + cl["cpu_s"],
        "engine_cpu_s": j2 - j0,
        "engine_cpu_index_s": j1 - j0,
        "clusters": cl.get("clusters"),
        "docs_in_clusters": cl.get("docs_in_clusters"),
        "peak_rss_mb": {"index": idx["peak_rss_mb"], "clusters": cl["peak_rss_mb"]},
    }
    return {
        "neardup": neardup,
        "plain_bulk": plain,
        "minhash": minhash,
        "store": {
            "neardup": store(client, "wholepath"),
            "plain": store(client, "wholepath-plain"),
            "minhash": store(client, "wholepath-minhash"),
        },
        "wall_ratio": (w1 + w2) / plain["seconds"],
        "minhash_ratio": (w1 + w2) / minhash["seconds"],
    }


#: Winnowing windows (in shingles) of the bulk parts table besides the index's own: what a
#: signature version with fewer winnowing keys would cost the engine
#: (:mod:`benchmarks.winnow_window` counts what it keeps of the containment candidates).
PART_WINDOWS = (16, 24, 32)


def bulk_parts(nd: NearDup, client, helpers, docs: list, eng: Engine, log) -> list[dict]:
    """What makes a ``_bulk`` of neardup's documents dearer than a plain one: the same signed
    documents (as ``neardup index`` stores them, tags left out) through ``_bulk`` into fresh
    indices, with neardup's mapping and ingest pipeline, then without the pipeline, then
    signed with the winnowing windows of :data:`PART_WINDOWS` (fewer winnowing keys), then
    without the signature keys too (what indexing them as keywords costs); the raw documents
    with the plain mapping first and last (the engine warming up shows as their difference).
    Each index's store bytes per document are read after a flush."""
    from neardup.engines.elastic import dsl, templates
    from neardup.engines.elastic.layout import ROOT
    from neardup.signing.signer import Signer

    signed = [nd.signer.sign(d) for d in docs]
    by_window = {
        w: Signer(nd.config.replace(winnow_window=w)).sign_batch(docs) for w in PART_WINDOWS
    }
    name = templates.documents_template_name(nd.engine.index)
    got = client.indices.get_index_template(name=name)["index_templates"][0]
    tmpl = got["index_template"]["template"]
    pipe = tmpl["settings"]["index"].pop("default_pipeline", None)
    full = {"settings": tmpl["settings"], "mappings": tmpl["mappings"]}

    def neardup_doc(s, i: int, keys: bool = True) -> dict:
        d = dsl.document_source(s, None, i + 1, "2026-01-01T00:00:00.000Z")
        if not keys:
            d[ROOT]["keys"] = {}
        return d

    def raw(s, i: int) -> dict:
        return {"title": s.doc.title, "body": s.doc.text}

    own = nd.config.winnow_window
    cases = [
        ("plain mapping, raw documents", "parts-plain", PLAIN_MAPPING, raw, None, signed),
        ("neardup mapping and pipeline", "parts-neardup", full, neardup_doc, pipe, signed),
        (
            f"neardup mapping, no pipeline (winnowing window {own})",
            "parts-nopipe",
            full,
            neardup_doc,
            None,
            signed,
        ),
        *(
            (
                f"neardup mapping, no pipeline, winnowing window {w}",
                f"parts-window-{w}",
                full,
                neardup_doc,
                None,
                by_window[w],
            )
            for w in PART_WINDOWS
        ),
        (
            "neardup mapping, no signature keys, no pipeline",
            "parts-nokeys",
            full,
            lambda s, i: neardup_doc(s, i, False),
            None,
            signed,
        ),
        ("plain mapping, raw documents (again)", "parts-plain2", PLAIN_MAPPING, raw, None, signed),
    ]
    out = []
    for what, index, body, make, pipeline, these in cases:
        log(f"{eng.url}: _bulk of {len(docs):,} documents, {what}")
        client.indices.create(index=index, body=body)
        actions = [
            {"_index": index, "_id": s.id, "_source": make(s, i)}
            | ({"pipeline": pipeline} if pipeline else {})
            for i, s in enumerate(these)
        ]
        size = sum(len(json.dumps(a["_source"], ensure_ascii=False).encode()) for a in actions)
        clock = Clock(eng).start()
        ok, errors = helpers.bulk(
            client, actions, chunk_size=500, raise_on_error=False, request_timeout=120
        )
        client.indices.refresh(index=index)
        part = _rate({"docs": ok, "failed": len(errors), **clock.stop()})
        keys = sum(
            len(k) for a in actions for k in (a["_source"].get(ROOT, {}).get("keys") or {}).values()
        )
        out.append(
            {
                "what": what,
                "source_bytes_per_doc": size / len(actions),
                "keys_per_doc": keys / len(actions),
                "store_bytes_per_doc": store(client, index)["bytes_per_doc"],
                **part,
            }
        )
    return out


def candidate_requests(nd: NearDup, docs: list, batch: int = 500) -> dict:
    """The candidate queries tagging makes for ``docs`` (stored ones: each excluded from its
    own), ``batch`` at a time against the whole index, sent as one search over a batch's keys
    and as one search per document by ``_msearch``: seconds and requests of each, and whether
    both found the same candidates."""
    import dataclasses

    from neardup.matching.tagging import TAG_LIMIT

    eng = nd.engine
    queries = [
        nd.rule.query(s.keys, s.n_shingles, exclude_id=s.id, limit=TAG_LIMIT, representatives=True)
        for s in (nd.signer.sign(d) for d in docs)
    ]
    out: dict = {"docs": len(docs)}
    found = {}
    timed = eng.remote.retry.observe
    for name, batched in (("batched", True), ("msearch", False)):
        eng.remote.paging = dataclasses.replace(eng.remote.paging, batched_candidates=batched)
        calls = dict(timed.calls) if isinstance(timed, RequestTimer) else {}
        t = time.perf_counter()
        got = []
        for at in range(0, len(queries), batch):
            got += eng.candidates(queries[at : at + batch])
        sent = (
            sum(timed.calls.values()) - sum(calls.values())
            if isinstance(timed, RequestTimer)
            else None
        )
        out[name] = {"seconds": time.perf_counter() - t, "requests": sent}
        found[name] = [[c.id for c in x] for x in got]
    eng.remote.paging = dataclasses.replace(eng.remote.paging, batched_candidates=True)
    out["same"] = found["batched"] == found["msearch"]
    out["candidates"] = sum(len(x) for x in found["batched"])
    return out


def run_engine(
    name: str,
    docs: list,
    sizes: list[int],
    queries: list,
    heap: str,
    corpus: Path | None,
    log,
    parts: int = 0,
) -> dict:
    eng = Engine(name, heap)
    try:
        nd = NearDup.open(eng.url, Config(), index="bench", pipeline=True)
        client = nd.engine.remote.client
        from opensearchpy import helpers

        timed = RequestTimer()
        nd.engine.remote.retry.observe = timed  # every request of neardup index, timed by kind
        clock = Clock(eng)
        version = client.info()["version"]["number"]
        scale = []
        for lo, hi in steps(len(docs), sizes):
            log(f"{name} {version}: plain _bulk of documents {lo:,} to {hi:,}")
            plain = plain_bulk(client, helpers, docs[lo:hi], clock)
            log(f"{name}: neardup index of documents {lo:,} to {hi:,}")
            ingest = neardup_ingest(nd, docs[lo:hi], clock)
            scale.append({"from": lo, "to": hi, "plain_bulk": plain, "neardup_index": ingest})
        requests = timed.report()
        nd.engine.refresh()
        log(f"{name}: candidate lookups, one search per batch and one per document")
        lookups = candidate_requests(nd, docs[-min(len(docs), 2000) :])
        log(f"{name}: {len(queries)} queries")
        plain = _total([s["plain_bulk"] for s in scale])
        ingest = _total([s["neardup_index"] for s in scale])
        out = {
            "engine": name,
            "version": version,
            "plain_bulk": plain,
            "neardup_index": ingest,
            "plugin_cost": plain["docs_per_s"] / ingest["docs_per_s"],
            "scale": scale,
            "requests": requests,
            "candidate_lookups": lookups,
            "query": query_latency(nd, queries),
            "store": {"neardup": store(client, "bench"), "plain": store(client, "plain")},
        }
        if corpus is not None:
            out["whole_path"] = whole_path(eng, client, helpers, corpus, log)
        if parts:
            out["bulk_parts"] = bulk_parts(nd, client, helpers, docs[:parts], eng, log)
        nd.close()
        return out
    finally:
        eng.close()


def run_embedded(docs: list, sizes: list[int], queries: list, log) -> dict:
    with tempfile.TemporaryDirectory() as d:
        db = Path(d) / "bench.db"
        nd = NearDup.open(str(db), Config())
        clock = Clock(None)
        scale = []
        for lo, hi in steps(len(docs), sizes):
            log(f"embedded: neardup index of documents {lo:,} to {hi:,}")
            scale.append(
                {"from": lo, "to": hi, "neardup_index": neardup_ingest(nd, docs[lo:hi], clock)}
            )
        ingest = _total([s["neardup_index"] for s in scale])
        q = query_latency(nd, queries)
        nd.close()
        n = ingest["docs"]
        return {
            "engine": "embedded",
            "version": "SQLite",
            "neardup_index": ingest,
            "scale": scale,
            "query": q,
            "store": {
                "neardup": {
                    "docs": n,
                    "store_bytes": db_bytes(db),
                    "bytes_per_doc": db_bytes(db) / n,
                }
            },
        }


def _cells(r: dict) -> list[str]:
    """One row of the table: the engine, ingest rates and their ratio, query latency, bytes."""
    plain = r.get("plain_bulk")
    return [
        f"{r['engine']} {r['version']}",
        f"{r['neardup_index']['docs_per_s']:,.0f}",
        f"{plain['docs_per_s']:,.0f}" if plain else "-",
        f"{r['plugin_cost']:.1f}x" if plain else "-",
        f"{r['query']['p50_ms']:.1f}",
        f"{r['query']['p99_ms']:.1f}",
        f"{r['store']['neardup']['bytes_per_doc']:,.0f}",
        f"{r['store']['plain']['bytes_per_doc']:,.0f}" if "plain" in r["store"] else "-",
    ]


COLUMNS = [
    "engine",
    "neardup index docs/s",
    "plain _bulk docs/s",
    "plain / neardup",
    "query p50 ms",
    "query p99 ms",
    "neardup bytes/doc",
    "plain bytes/doc",
]


def _f(x: float | None, fmt: str = ",.0f") -> str:
    return "-" if x is None or x != x else format(x, fmt)


def _scale_rows(res: dict) -> list[list[str]]:
    rows = []
    for r in res["runs"]:
        for s in r.get("scale", []):
            nd, plain = s["neardup_index"], s.get("plain_bulk")
            rows.append(
                [
                    f"{r['engine']} {r['version']}",
                    f"{s['from']:,} to {s['to']:,}",
                    _f(nd["docs_per_s"]),
                    _f(plain["docs_per_s"]) if plain else "-",
                    f"{plain['docs_per_s'] / nd['docs_per_s']:.1f}x" if plain else "-",
                    _f(nd["client_cpu_ms_per_doc"], ".2f"),
                    _f(nd["engine_cpu_ms_per_doc"], ".2f"),
                    _f(plain["engine_cpu_ms_per_doc"], ".2f") if plain else "-",
                ]
            )
    return rows


def _whole_path_rows(res: dict) -> list[list[str]]:
    rows = []
    for r in res["runs"]:
        w = r.get("whole_path")
        if not w:
            continue
        nd, plain = w["neardup"], w["plain_bulk"]
        rows.append(
            [
                f"{r['engine']} {r['version']}",
                f"{nd['seconds']:.1f} ({nd['index_s']:.1f} + {nd['clusters_s']:.1f})",
                f"{nd['cpu_s']:.1f}",
                f"{nd['engine_cpu_s']:.1f}",
                f"{plain['seconds']:.1f}",
                f"{plain['client_cpu_s']:.1f}",
                f"{plain['engine_cpu_s']:.1f}",
                f"{w['wall_ratio']:.1f}x",
                f"{nd['clusters']:,} / {nd['docs_in_clusters']:,}",
                f"{w['minhash']['seconds']:.1f}" if "minhash" in w else "-",
                f"{w['minhash_ratio']:.2f}" if "minhash" in w else "-",
            ]
        )
    return rows


def _minhash_rows(res: dict) -> list[list[str]]:
    rows = []
    for r in res["runs"]:
        w = r.get("whole_path") or {}
        if "minhash" not in w:
            continue
        m, plain, st = w["minhash"], w["plain_bulk"], w["store"]
        per_doc = {k: v["bytes_per_doc"] for k, v in st.items()}
        rows.append(
            [
                f"{r['engine']} {r['version']}",
                f"{m['bulk']['seconds']:.1f} ({m['bulk']['seconds'] / plain['seconds']:.1f}x)",
                f"{per_doc['minhash']:,.0f} ({per_doc['minhash'] / per_doc['plain']:.1f}x)",
                f"{per_doc['neardup']:,.0f} ({per_doc['neardup'] / per_doc['plain']:.1f}x)",
                f"{m['queries']['seconds']:.1f}",
                f"{m['queries']['ms_per_doc']:.2f}",
                f"{m['queries']['failed']:,}",
                f"{m['seconds']:.1f}",
                f"{w['neardup']['seconds']:.1f}",
                f"{w['minhash_ratio']:.2f}",
            ]
        )
    return rows


def _request_rows(res: dict) -> list[list[str]]:
    rows = []
    for r in res["runs"]:
        if "requests" not in r:
            continue
        nd = r["neardup_index"]
        rows.append(
            [
                f"{r['engine']} {r['version']}",
                "whole `neardup index`",
                f"{nd['seconds']:.1f}",
                "-",
                "-",
            ]
        )
        for k, v in r["requests"].items():
            if v["seconds"] >= 0.005 * nd["seconds"]:
                rows.append(
                    [
                        "",
                        k,
                        f"{v['seconds']:.1f}",
                        f"{v['requests']:,}",
                        f"{1e3 * v['seconds'] / v['requests']:.1f}",
                    ]
                )
        rows.append(["", "CPU: neardup process", f"{nd['client_cpu_s']:.1f}", "-", "-"])
        rows.append(["", "CPU: engine (JVM)", f"{nd['engine_cpu_s']:.1f}", "-", "-"])
    return rows


def _parts_rows(res: dict) -> list[list[str]]:
    rows = []
    for r in res["runs"]:
        for p in r.get("bulk_parts", []):
            rows.append(
                [
                    f"{r['engine']} {r['version']}",
                    p["what"],
                    _f(p["docs_per_s"]),
                    _f(p["engine_cpu_ms_per_doc"], ".2f"),
                    _f(p["source_bytes_per_doc"]),
                    _f(p.get("keys_per_doc"), ".1f"),
                    _f(p.get("store_bytes_per_doc")),
                ]
            )
    return rows


#: The targets, as (what, the ratio's name, the bound, whether the ratio must stay below it).
TARGETS = [
    ("whole path: neardup wall / plain _bulk wall", "whole_path", 2.0, True),
    ("incremental (last step): neardup docs/s / plain _bulk docs/s", "incremental", 1 / 3, False),
    ("store bytes/doc: neardup / plain", "store", 1.5, True),
    ("store bytes/doc on the whole-path documents: neardup / plain", "whole_path_store", 1.5, True),
    ("engine CPU/doc: neardup / plain _bulk (all steps)", "engine_cpu", 2.0, True),
    (
        "whole job: neardup whole path wall / the engine's min_hash route (bulk + queries)",
        "minhash_route",
        1.0,
        True,
    ),
    (
        "neardup's own CPU/doc: HTTP path / the embedded engine's whole path",
        "own_cpu",
        1.0,
        True,
    ),
    ("query p99 ms", "query_p99_ms", 10.0, True),
]


def ratios(r: dict, embedded: dict | None = None) -> dict:
    """The ratios the targets bound, of one engine's run (None where not measured);
    ``embedded``: the embedded engine's run of the same documents, whose CPU a document
    bounds neardup's own on the HTTP path."""
    out: dict = dict.fromkeys(t[1] for t in TARGETS)
    if "plain_bulk" not in r:
        return out
    if r.get("whole_path"):
        wp = r["whole_path"]
        out["whole_path"] = wp["wall_ratio"]
        out["minhash_route"] = wp.get("minhash_ratio")
        if "store" in wp:
            out["whole_path_store"] = (
                wp["store"]["neardup"]["bytes_per_doc"] / wp["store"]["plain"]["bytes_per_doc"]
            )
    if embedded is not None:
        out["own_cpu"] = (
            r["neardup_index"]["client_cpu_ms_per_doc"]
            / embedded["neardup_index"]["client_cpu_ms_per_doc"]
        )
    out["query_p99_ms"] = r["query"]["p99_ms"]
    last = r["scale"][-1]
    out["incremental"] = last["neardup_index"]["docs_per_s"] / last["plain_bulk"]["docs_per_s"]
    out["store"] = r["store"]["neardup"]["bytes_per_doc"] / r["store"]["plain"]["bytes_per_doc"]
    out["engine_cpu"] = (
        r["neardup_index"]["engine_cpu_ms_per_doc"] / r["plain_bulk"]["engine_cpu_ms_per_doc"]
    )
    return out


def _target_rows(res: dict) -> list[list[str]]:
    rows = []
    embedded = next((r for r in res["runs"] if r["engine"] == "embedded"), None)
    for r in res["runs"]:
        if r is embedded:
            continue
        got = ratios(r, embedded)
        if all(v is None for v in got.values()):
            continue
        for what, key, bound, below in TARGETS:
            v = got[key]
            if v is None:
                continue
            met = v <= bound if below else v >= bound
            rows.append(
                [
                    f"{r['engine']} {r['version']}",
                    what,
                    f"{v:.2f}",
                    f"{'<=' if below else '>='} {bound:.2f}",
                    "met" if met else f"missed ({v / bound:.1f}x the bound)",
                ]
            )
    return rows


def _lookup_rows(res: dict) -> list[list[str]]:
    rows = []
    for r in res["runs"]:
        c = r.get("candidate_lookups")
        if not c:
            continue
        for key, what in (
            ("batched", "one search over each batch's keys"),
            ("msearch", "one search per document (_msearch)"),
        ):
            rows.append(
                [
                    f"{r['engine']} {r['version']}",
                    what,
                    f"{c['docs']:,}",
                    f"{c[key]['seconds']:.2f}",
                    _f(c[key]["requests"]),
                    f"{c['candidates']:,}",
                    "yes" if c["same"] else "NO",
                ]
            )
    return rows


#: (heading, columns, rows of a result): the tables of a run, in order
TABLES = [
    (
        "Targets: ratios to the plain _bulk of the same documents",
        ["engine", "ratio", "measured", "target", "met"],
        _target_rows,
    ),
    ("Ingest and query", None, None),
    (
        "Whole path: index + clusters (seconds)",
        [
            "engine",
            "neardup wall (index + clusters)",
            "neardup CPU",
            "engine CPU",
            "plain _bulk wall",
            "plain client CPU",
            "plain engine CPU",
            "neardup / plain wall",
            "clusters / documents in them",
            "min_hash route wall (bulk + queries)",
            "neardup / min_hash route wall",
        ],
        _whole_path_rows,
    ),
    (
        "The engine's own min_hash route on the whole-path documents (seconds; a 5-word "
        "shingle + min_hash subfield, 128 buckets, then one match per document by _msearch)",
        [
            "engine",
            "bulk wall (x plain _bulk)",
            "min_hash store bytes/doc (x plain)",
            "neardup store bytes/doc (x plain)",
            "queries wall",
            "query ms/doc",
            "queries failed",
            "whole job wall",
            "neardup whole path wall",
            "neardup / min_hash route",
        ],
        _minhash_rows,
    ),
    (
        "Scale: the index growing (each step into the same index)",
        [
            "engine",
            "documents",
            "neardup docs/s",
            "plain _bulk docs/s",
            "plain / neardup",
            "neardup CPU ms/doc",
            "engine CPU ms/doc (neardup)",
            "engine CPU ms/doc (plain)",
        ],
        _scale_rows,
    ),
    (
        "Where the wall time of neardup index goes (requests by kind)",
        ["engine", "part", "seconds", "requests", "ms/request"],
        _request_rows,
    ),
    (
        "Candidate lookups of stored documents against the whole index (tagging's queries)",
        ["engine", "sent as", "documents", "seconds", "requests", "candidates", "same"],
        _lookup_rows,
    ),
    (
        "What a _bulk of neardup's documents costs, part by part (the same signed documents)",
        [
            "engine",
            "index",
            "docs/s",
            "engine CPU ms/doc",
            "_source bytes/doc",
            "keys/doc",
            "store bytes/doc (after a flush)",
        ],
        _parts_rows,
    ),
]


def tables(res: dict) -> list[tuple[str, list[str], list[list[str]]]]:
    out = []
    for head, cols, rows in TABLES:
        if rows is None:
            out.append((head, COLUMNS, [_cells(r) for r in res["runs"]]))
        else:
            body = rows(res)
            if body:
                out.append((head, cols, body))
    return out


def table(res: dict) -> list[Table]:
    title = (
        f"neardup on real engines: {res['docs']:,} documents, {res['queries']} queries "
        f"({res['started_at'][:10]}, {res['machine']['cpus']} CPUs, commit {res['commit']})"
    )
    out = []
    for head, cols, rows in tables(res):
        t = Table(title=f"{title}: {head}" if not out else head)
        for i, c in enumerate(cols):
            t.add_column(
                c,
                justify="left"
                if i < 2 and c in ("engine", "part", "documents", "index")
                else "right",
            )
        for row in rows:
            t.add_row(*row)
        out.append(t)
    return out


def _load(res: dict) -> str:
    """The 1-minute load average at start and end of the run (other work on the machine)."""
    m = res["machine"]
    if "load_average_at_start" not in m:
        return "not recorded"
    return f"{m['load_average_at_start'][0]:.1f} to {m['load_average_at_end'][0]:.1f}"


def markdown(res: dict) -> str:
    """The tables as Markdown (``real-engines.md`` beside the JSON)."""
    wp = res.get("whole_path_corpus")
    head = (
        f"{res['docs']:,} documents (scale steps {', '.join(f'{s:,}' for s in res['sizes'])}), "
        f"{res['queries']} queries, {res['started_at'][:10]}, "
        f"{res['machine']['cpus']} CPUs ({res['machine']['platform']}), "
        f"load average {_load(res)}, engine heap {res['heap']}, commit {res['commit']}: "
        f"`{res['command']}`"
    )
    if wp:
        head += (
            f"; whole path on {wp['documents']:,} documents of about {wp['words_per_doc']} words "
            f"({wp['edited_copies']:,} edited copies; benchmarks.wholepath's corpus)"
        )
    parts = [head + "\n"]
    for title, cols, rows in tables(res):
        md = [f"### {title}", "", "| " + " | ".join(cols) + " |"]
        md.append("| --- |" + " ---: |" * (len(cols) - 1))
        md += ["| " + " | ".join(r) + " |" for r in rows]
        parts.append("\n".join(md) + "\n")
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.real_engines", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument(
        "--docs",
        type=int,
        default=120_000,
        help="documents in the collection (default 120000: 100000, then 20000 more)",
    )
    ap.add_argument(
        "--queries", type=int, default=300, help="queries timed per engine (default 300)"
    )
    ap.add_argument(
        "--engines",
        default="opensearch-2,opensearch-3",
        help="comma-separated (tests/engines/run names)",
    )
    ap.add_argument(
        "--sizes",
        default="100000",
        help="comma-separated index sizes of the scale table's steps, the last step being the "
        "incremental one (default 100000)",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="a small run (3,000 documents in steps of 2,500 and 500, a whole path of 1,000, "
        "50 queries, no parts table) to check that everything runs",
    )
    ap.add_argument(
        "--whole-path",
        type=int,
        default=11_380,
        metavar="N",
        help="documents of the whole-path table (benchmarks.wholepath's corpus; 0: none)",
    )
    ap.add_argument(
        "--bulk-parts",
        type=int,
        default=5000,
        metavar="N",
        help="documents of the table of what a neardup _bulk costs, part by part (0: none)",
    )
    ap.add_argument("--heap", default="1g", help="JVM heap of each engine (default 1g)")
    ap.add_argument("--no-embedded", action="store_true", help="leave the embedded engine out")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument(
        "--out",
        type=Path,
        default=REPO / "benchmarks" / "results",
        help="folder for real-engines.json",
    )
    a = ap.parse_args(argv)
    if a.quick:
        a.docs, a.sizes, a.whole_path, a.queries, a.bulk_parts = 3000, "2500", 1000, 50, 0
    console = Console(stderr=True)
    log = lambda m: console.log(m)  # noqa: E731
    gen = synth.Generator(base_documents(), seed=a.seed)
    docs = [s.doc for s in itertools.islice(gen, a.docs)]
    qrng = random.Random(a.seed * 1_000_003 + a.docs)
    queries = [gen.query(f"q{i}", qrng) for i in range(a.queries)]
    sizes = [int(x) for x in a.sizes.split(",") if x.strip()]
    sizes = [e for _, e in steps(len(docs), sizes)]
    res: dict = {
        "command": "python -m benchmarks.real_engines "
        + " ".join(shlex.quote(x) for x in (argv if argv is not None else sys.argv[1:])),
        "docs": len(docs),
        "sizes": sizes,
        "queries": len(queries),
        "seed": a.seed,
        "heap": a.heap,
        "commit": commit(),
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_average_at_start": os.getloadavg(),
        },
        "runs": [],
    }
    with tempfile.TemporaryDirectory() as tmp:
        corpus = None
        if a.whole_path:
            corpus = Path(tmp) / "corpus.jsonl"
            res["whole_path_corpus"] = wholepath_corpus.build_corpus(corpus, a.whole_path)
        for name in [x.strip() for x in a.engines.split(",") if x.strip()]:
            res["runs"].append(
                run_engine(name, docs, sizes, queries, a.heap, corpus, log, a.bulk_parts)
            )
    if not a.no_embedded:
        res["runs"].append(run_embedded(docs, sizes, queries, log))
    res["machine"]["load_average_at_end"] = (
        os.getloadavg()
    )  # other work on the machine slows every row alike
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "real-engines.json").write_text(json.dumps(res, indent=2))
    (a.out / "real-engines.md").write_text(markdown(res))
    for t in table(res):
        Console(width=200).print(t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
