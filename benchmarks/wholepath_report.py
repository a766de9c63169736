"""The whole path's results written as Markdown (:func:`markdown`): each corpus's comparison,
its stage table and the peers not measured."""

from __future__ import annotations

from typing import Any

from .wholepath_peers import PEERS
from .wholepath_stages import STAGES


def wholepath_peers(wp: dict) -> tuple[dict, dict]:
    """The peers of a whole-path result and their ratios (peer / neardup, wall and CPU). A
    result from before the peers were several had datasketch alone, a new ``MinHash`` per
    document: "datasketch new", with its wall ratio."""
    if "peers" in wp:
        return wp["peers"], wp.get("ratios", {})
    return {"datasketch_new": wp["datasketch"]}, {
        "datasketch_new": {"wall": wp["ratio"], "cpu": None}
    }


def whole_day(nd: dict[str, Any]) -> float:
    """neardup's whole day: ``index`` + ``clusters`` + the first search + the first
    containment query after indexing, seconds (wall, each a fresh process)."""
    return nd["seconds"] + nd["first_search_s"] + nd["first_containment_query_s"]


def _day_md(
    nd: dict[str, Any], peers: dict[str, dict[str, Any]], index: str = "`index`"
) -> list[str]:
    """The line of neardup's whole day (``index`` as ``index`` says) beside the peers' runs
    (their scripts have no search: their day is their run; x = peer / neardup)."""
    beside = ", ".join(
        f"{PEERS[p][1]} {x['seconds']:.2f} s ({x['seconds'] / whole_day(nd):.2f}x)"
        for p, x in peers.items()
    )
    return [
        f"The whole day: {index} {nd['index_s']:.2f} s, `clusters` {nd['clusters_s']:.2f} s, "
        f"the first `search` {nd['first_search_s']:.2f} s, the first containment `query` "
        f"{nd['first_containment_query_s']:.2f} s (targets <= 0.5 s each): "
        f"**{whole_day(nd):.2f} s**; beside the peers' runs (no search): {beside or 'none'}.",
        "",
    ]


def _comparison_md(title: str, res: dict[str, Any]) -> list[str]:
    """The lines of one corpus's comparison (:func:`compare`): the headline, the stage table,
    the CPU stages, the peers not measured."""
    nd, one, c = res["neardup"], res.get("neardup_one_process"), res["corpus"]
    peers, ratios = wholepath_peers(res)
    ok = {p: x for p, x in peers.items() if "error" not in x}
    cols: list[tuple[str, dict[str, Any]]] = [("neardup", nd)] + (
        [("neardup, one process", one)] if one else []
    )
    cols += [(PEERS[p][1], x) for p, x in ok.items()]
    head = ", ".join(
        f"{PEERS[p][1]} {ok[p]['seconds']:.2f} s (**{r['wall']:.2f}x** wall"
        + ("" if r["cpu"] is None else f", {r['cpu']:.2f}x CPU")
        + ")"
        for p, r in ratios.items()
        if p in ok
    )
    fast = res.get("rensa_faster")
    faster = (
        f" Against the faster rensa script ({PEERS[fast['peer']][1]}): **{fast['wall']:.2f}x**."
        if fast
        else ""
    )
    workers = "" if res.get("workers") is None else f", neardup index --workers {res['workers']}"
    what = (
        f"{c['documents']:,} documents (~{c['words_per_doc']} words, "
        + (c["source"] if "source" in c else f"{c['edited_copies']:,} edited copies")
        + ")"
    )
    lines = [
        f"**{title}**, {what}, {res.get('kept', 'best')} of {res['repeat']}{workers}: "
        f"neardup {nd['seconds']:.2f} s wall, {nd.get('cpu_s', 0):.2f} s CPU; {head} "
        f"(x = peer / neardup; targets: >= 3x datasketch bulk, >= 1.5x rensa).{faster}",
        "",
        *_day_md(nd, ok),
        *(
            _day_md(res["neardup_search_ready"], ok, "`index --search-ready`")
            if "neardup_search_ready" in res
            else []
        ),
        "| stage (s) | " + " | ".join(name for name, _ in cols) + " |",
        "|---|" + "---:|" * len(cols),
    ]
    for s in (*STAGES, "other"):
        lines.append(
            f"| {s} | " + " | ".join(f"{x['stages'].get(s, 0.0):.2f}" for _, x in cols) + " |"
        )

    def rss(x: dict[str, Any]) -> str:
        m = x["peak_rss_mb"]
        return (
            f"index {m['index']:.0f}, clusters {m['clusters']:.0f}"
            if "index" in m
            else f"{m['all']:.0f}"
        )

    lines += [
        "| **total (wall)** | " + " | ".join(f"**{x['seconds']:.2f}**" for _, x in cols) + " |",
        "| **CPU (user + sys)** | "
        + " | ".join(f"**{x.get('cpu_s', 0):.2f}**" for _, x in cols)
        + " |",
        "| peak RSS (MB) | " + " | ".join(rss(x) for _, x in cols) + " |",
        "| clusters (docs in them) | "
        + " | ".join(f"{x['clusters']:,} ({x['docs_in_clusters']:,})" for _, x in cols)
        + " |",
        "",
    ]
    lines += _cpu_stages([(name, x) for name, x in cols[: 2 if one else 1]])
    for p, x in peers.items():
        if "error" in x:
            lines += [f"{PEERS[p][1]}: not measured ({x['error'][:300]}).", ""]
    return lines


def markdown(res: dict[str, Any]) -> str:
    nd, c = res["neardup"], res["corpus"]
    lines = [
        f"Load average {res.get('load_before', 0):.1f} before, "
        f"{res.get('load_after', 0):.1f} after.",
        "",
    ]
    lines += _comparison_md(
        "Real documents" if res.get("corpus_kind") == "real" else "Synthetic corpus", res
    )
    if res.get("real"):
        lines += _comparison_md("Real documents", res["real"])
    q = res["fresh_query"]
    loops = res["compiled_loops"]
    lines += [
        "After `neardup index` (default): the first `neardup search` (it adds the "
        f"{c['documents']:,} documents to the full-text index) {nd['first_search_s']:.2f} s, "
        f"the next one {nd['next_search_s']:.2f} s; the first containment `neardup query` "
        f"(it adds their winnowing postings) {nd['first_containment_query_s']:.2f} s, "
        f"the next one {nd['next_containment_query_s']:.2f} s.",
        "",
        f"Fresh-process `neardup query` (median of {q['queries']}, index of {q['index_docs']} "
        f"fa + ru documents): Persian {q['fa_s']:.2f} s wall, {q.get('fa_cpu_s', 0):.2f} s CPU; "
        f"Russian {q['ru_s']:.2f} s wall, {q.get('ru_cpu_s', 0):.2f} s CPU; "
        f"Persian / Russian **{q['fa_over_ru']:.2f}x** (target <= 1.5x; target <= 0.15 s each).",
        "",
        f"Loading the compiled signing loops ({loops.get('form', 'numba')}), in a fresh process "
        f"that has made its tables (median of {loops['runs']}): {loops['load_s']:.3f} s and "
        f"{loops['rss_mb']:.0f} MB resident. With signing workers the storing process first "
        f"waits {nd['first_wait_s'] or 0:.2f} s for a signed batch."
        + (
            f" The default chose {nd['default_workers']} signing workers in that run (one per "
            "idle CPU less the storing process's, read from "
            f"{res.get('workers_from', 'the load average')} as the command starts)."
            if nd.get("default_workers") is not None
            else ""
        ),
        "",
        "neardup: `neardup index` + `neardup clusters` in fresh processes (defaults, embedded "
        "engine; stages are this process's own: with signing workers, `canonicalize` and "
        "`sign` are what it signed itself and `wait` the time it waited for the workers; "
        "`other` = interpreter start, opening the index, commits). The one-process column is "
        "`neardup index --workers 0`, every stage's whole cost. CPU: user + system seconds of "
        "the processes, signing workers included. Peers, each reading the same JSONL file in "
        "a fresh process, then union-find over the candidates (unverified): *datasketch "
        "bulk*, its strongest usage: Python `\\w+` 5-shingles, `MinHash.bulk` (one set of "
        "permutations for all documents), `MinHashLSH` at 0.8 filled in an insertion session, "
        "a query per document; *datasketch new*: a new `MinHash` per document with "
        "`update_batch`, one `insert` each; *rensa script*: the same shingles, "
        "`RMinHash.from_token_sets`, `RMinHashLSH` (16 bands of 8 rows) `insert_many` and "
        "`query_all`; *rensa plain*: per document the set of shingles, "
        "`RMinHash(num_perm=128, seed=42).update`, `RMinHashLSH.insert`, then `query` per "
        "document; *text-dedup*: the file read into a dataset, then its `minhash` command "
        "(one process, xxh3).",
    ]
    return "\n".join(lines) + "\n"


def _cpu_stages(cols: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """The CPU seconds per stage of neardup's ``index`` and ``clusters`` processes (their
    own: signing workers' CPU is in the total only), where the results have them."""
    cols = [(name, x) for name, x in cols if x.get("stages_cpu")]
    if not cols:
        return []
    lines = [
        "| stage, CPU (s) | " + " | ".join(name for name, _ in cols) + " |",
        "|---|" + "---:|" * len(cols),
    ]
    for s in (*STAGES, "other"):
        lines.append(
            f"| {s} | " + " | ".join(f"{x['stages_cpu'].get(s, 0.0):.2f}" for _, x in cols) + " |"
        )
    lines.append(
        "| **storing + clusters processes** | "
        + " | ".join(f"**{sum(x['stages_cpu'].values()):.2f}**" for _, x in cols)
        + " |"
    )
    return lines + [""]
