"""Evaluation of near-duplicate methods against ground truth, in the format of Kosinov (003)
with the additions of 000.

For a method's set of found pairs and the set of true pairs over m = n(n-1)/2 document
pairs: a = found and true, b = found only, c = true only, d = m - a - b - c, and

    P = a/(a+b),  R = a/(a+c),  F1 = 2PR/(P+R),  Accuracy = (a+d)/m.

Agreement of two methods x, y (Gwet's AC1) on the same m pairs, with a = found by both,
b, c = found by one only, d = by neither:

    A = (a+d)/m,  P' = (2a+b+c)/(2m),  p(E) = 2P'(1-P'),  AC1 = (A - p(E)) / (1 - p(E)).

(003 prints "p(E)A / (1-p(E))"; the minus sign of Gwet's formula was lost in print.)

HFM and separation (Hoad & Zobel 2003, in 000): HFM = the highest score the method gives
to a found pair that is not a true duplicate (0 when there is none); separation = the
lowest score it gives to a found true pair minus HFM.

Ground truth (``truth``):

* ``jaccard``: exact resemblance of canonical w-shingle sets >= t, by
  :func:`neardup.evaluation.ppjoin.ppjoin`;
* ``levenshtein``: 1 - d_Lev(A, B) / max(|A|, |B|) >= t on the tag-stripped texts, among
  documents of >= 20 words (Kosinov's ROMIP truth); every method is then scored on those
  documents only;
* ``labels``: given pairs (a pairs file's positive labels, or a labels file). A labels file
  that also names pairs that are not duplicates (label 0 / false) scores every method on the
  labelled pairs only: a found pair no label speaks of counts neither way, m = the labelled
  pairs (the user's own judgement, not neardup's Jaccard, decides).

Methods:

* ``engine``: candidates from the engine (LSH bands, SimHash blocks, exact keys), verified
  exactly -- what ``neardup`` itself reports; ``engine:FIELD`` uses one signature field;
* ``NAME``: signature equality as in the source documents (pair found iff the two
  documents share >= ``equality_min_match`` keys of signature NAME; no verification);
* ``NAME:PART``: one component of a signature (``text_stats:1`` .. ``text_stats:6`` are
  Kosinov's tests 1-6; ``descriptive_words:tfidf``, ``imatch_multi:main``, ...). Old
  signature names (``kosinov``, ``sharapova``) are accepted too.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..canonical import Canonicalizer, strip_html
from ..config import Config
from ..sketches.ragged import join, pair_count, pairs_sharing
from ..signing.signatures import REGISTRY, build_context, needs_context
from ..keys.builtin import BUILTIN
from ..signing.signer import Signer
from ..signing.records import Document
from .corpus import Corpus, EvaluationError, Pair

THRESHOLDS = (1.0, 0.95, 0.90, 0.85)
BANDS = ((20, 50), (51, 500), (501, 5000), (5001, None))
DEFAULT_METHODS = (
    "engine",
    "super",
    "mega",
    "minhash84",
    "minhash70",
    "imatch",
    "imatch_multi",
    "descriptive_words",
    "text_stats:1",
    "text_stats:6",
    "anchor",
)
MIN_WORDS_LEVENSHTEIN = 20


# -- metrics -----------------------------------------------------------------------------------
@dataclass
class Counts:
    """One row of Kosinov's tables (plus accuracy, HFM and separation)."""

    threshold: float
    truth: int
    found: int
    common: int
    unique_truth: int
    unique_method: int
    recall: float
    precision: float
    f1: float
    accuracy: float
    hfm: float | None = None
    separation: float | None = None


def confusion(truth: set[Pair], found: set[Pair], m: int, threshold: float = 0.0) -> Counts:
    """a, b, c of found vs true pairs over m pairs, and P, R, F1, Accuracy."""
    a = len(truth & found)
    b = len(found) - a
    c = len(truth) - a
    d = m - a - b - c
    p = a / (a + b) if a + b else 0.0
    r = a / (a + c) if a + c else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return Counts(
        threshold=threshold,
        truth=len(truth),
        found=len(found),
        common=a,
        unique_truth=c,
        unique_method=b,
        recall=r,
        precision=p,
        f1=f,
        accuracy=(a + d) / m if m else 0.0,
    )


def ac1(x: set[Pair], y: set[Pair], m: int) -> float:
    """Gwet's AC1 agreement of two methods' found pairs over m pairs."""
    if m == 0:
        return 1.0
    a = len(x & y)
    b = len(x) - a
    c = len(y) - a
    d = m - a - b - c
    agree = (a + d) / m
    p1 = (2 * a + b + c) / (2 * m)
    pe = 2 * p1 * (1 - p1)
    return (agree - pe) / (1 - pe) if pe < 1 else 1.0


def hfm_separation(scores: dict[Pair, float], truth: set[Pair]) -> tuple[float, float | None]:
    """(HFM, separation) of a method's scored found pairs against the true pairs."""
    wrong = [s for p, s in scores.items() if p not in truth]
    right = [s for p, s in scores.items() if p in truth]
    hfm = max(wrong, default=0.0)
    return hfm, (min(right) - hfm) if right else None


def n_pairs(n: int) -> int:
    return n * (n - 1) // 2


def band_of(n_words: int) -> str | None:
    for lo, hi in BANDS:
        if n_words >= lo and (hi is None or n_words <= hi):
            return f"{lo}-{hi}" if hi else f"{lo}+"
    return None


# -- ground truth -------------------------------------------------------------------------------
def jaccard_truth(
    shingle_sets: Sequence[np.ndarray], thresholds: Sequence[float]
) -> dict[float, dict[Pair, float]]:
    """Exact Jaccard pairs for every threshold (one PP-join at the lowest)."""
    from .ppjoin import ppjoin

    found = ppjoin(shingle_sets, min(thresholds))
    return {t: {(i, j): s for i, j, s in found if s >= t - 1e-12} for t in thresholds}


def levenshtein_truth(
    texts: Sequence[str], scope: Sequence[int], thresholds: Sequence[float]
) -> dict[float, dict[Pair, float]]:
    """Pairs with normalized Levenshtein similarity >= t among documents ``scope``.

    sim = 1 - d / max(|A|, |B|) (rapidfuzz). Filters before the exact distance: lengths
    (d >= |A| - |B|, so sim >= t needs |short| >= t |long|) and a bag-of-characters bound
    (each edit changes at most two character counts, so d >= L1(counts) / 2; counts are
    taken over 64 hashed character classes, which only lowers L1).
    """
    from rapidfuzz.distance import Levenshtein

    t0 = min(thresholds)
    idx = sorted(scope, key=lambda i: len(texts[i]))
    lens = np.array([len(texts[i]) for i in idx], dtype=np.int64)
    hist = np.zeros((len(idx), 64), dtype=np.int32)
    for r, i in enumerate(idx):
        cps = np.frombuffer(texts[i].encode("utf-32-le"), dtype=np.uint32)
        hist[r] = np.bincount((cps * np.uint32(2654435761)) >> np.uint32(26), minlength=64)
    out: dict[Pair, float] = {}
    for r in range(len(idx)):
        hi = np.searchsorted(lens, lens[r] / t0 + 1e-9, side="right")
        if hi <= r + 1:
            continue
        cand = np.arange(r + 1, hi)
        bound = np.abs(hist[cand] - hist[r]).sum(axis=1) / 2.0
        longest = np.maximum(lens[cand], lens[r])
        ok = cand[(1.0 - bound / np.maximum(longest, 1)) >= t0 - 1e-12]
        a = texts[idx[r]]
        for c in ok:
            s = Levenshtein.normalized_similarity(a, texts[idx[c]], score_cutoff=t0 - 1e-12)
            if s >= t0 - 1e-12:
                i, j = idx[r], idx[c]
                out[(min(i, j), max(i, j))] = s
    return {t: {p: s for p, s in out.items() if s >= t - 1e-12} for t in thresholds}


# -- methods -----------------------------------------------------------------------------------
@dataclass
class MethodSpec:
    name: str  # as given: engine, engine:FIELD, SIG, SIG:PART
    kind: str  # engine | signature
    signature: str | None = None
    part: str | None = None


def parse_method(name: str) -> MethodSpec:
    head, _, tail = name.partition(":")
    if head == "engine":
        if tail and tail not in BUILTIN and tail not in REGISTRY:
            raise EvaluationError(
                f"engine field {tail!r} is not a signature; known: "
                f"{', '.join([*BUILTIN, *REGISTRY])}"
            )
        return MethodSpec(name, "engine", tail or None)
    if head not in REGISTRY:
        raise EvaluationError(
            f"unknown method {name!r}; use engine, engine:FIELD, or one of "
            f"{', '.join(REGISTRY)} (optionally NAME:PART)"
        )
    return MethodSpec(name=name, kind="signature", signature=head, part=tail or None)


def resolve_part(sig, part: str | None) -> str | None:
    """A component name from a name or a 1-based number (text_stats:1 = test 1)."""
    if part is None:
        return None
    if part.isdigit() and 1 <= int(part) <= len(sig.components):
        return sig.components[int(part) - 1]
    if part not in sig.components:
        raise EvaluationError(
            f"signature {sig.name!r} has no part {part!r}; parts: {', '.join(sig.components)} "
            f"(or 1..{len(sig.components)})"
        )
    return part


#: most document pairs a signature-equality method may produce before it is refused
MAX_PAIRS = 20_000_000


def shared_key_counts(keys: Sequence[np.ndarray], max_pairs: int = MAX_PAIRS) -> dict[Pair, int]:
    """For every pair of documents sharing a key: how many keys they share
    (:func:`~neardup.sketches.ragged.pairs_sharing`), refused above ``max_pairs`` pairs."""
    values, offsets = join(keys)
    total, biggest = pair_count(values, offsets)
    if total > max_pairs:
        raise EvaluationError(
            f"{total} document pairs share a key (one key is shared by {biggest} documents): "
            f"more than {max_pairs}; this signature does not separate these documents -- "
            "leave it out or evaluate fewer documents (--limit)"
        )
    i, j, n = pairs_sharing(values, offsets)
    return {(a, b): c for a, b, c in zip(i.tolist(), j.tolist(), n.tolist(), strict=True)}


def equality_pairs(
    keys: Sequence[np.ndarray], min_match: int, set_like: bool = False, threshold: float = 1.0
) -> dict[Pair, float]:
    """Pairs found by signature equality, with a score.

    Vector signatures: found when >= ``min_match`` keys agree; score = agreeing keys / keys.
    Set-like signatures (anchor shingles): found when the resemblance of the key sets is
    >= ``threshold``; score = that resemblance.
    """
    counts = shared_key_counts(keys)
    sizes = [len(np.unique(k)) for k in keys]
    out = {}
    for (i, j), c in counts.items():
        if set_like:
            s = c / (sizes[i] + sizes[j] - c)
            if s >= threshold - 1e-12:
                out[(i, j)] = s
        elif c >= min_match:
            out[(i, j)] = c / max(sizes[i], sizes[j])
    return out


@dataclass
class MethodResult:
    name: str
    seconds: float
    found: dict[float, dict[Pair, float]]  # threshold -> found pair -> score
    note: str = ""


def _sign_pairs(
    spec: MethodSpec,
    prepared: list,
    canonicalizer: Canonicalizer,
    context: dict,
    thresholds: Sequence[float],
) -> MethodResult:
    from ..signing.signatures.sketches import min_matches

    t0 = time.perf_counter()
    sig = REGISTRY[spec.signature](canonicalizer, context)
    part = resolve_part(sig, spec.part)
    if part is None:
        keys = [sig(p) for p in prepared]
    else:
        keys = [np.asarray(sig.parts(p)[part]) for p in prepared]
    found = {}
    for t in thresholds:
        if spec.signature in ("minhash84", "minhash70"):
            mm = min_matches(t, int(spec.signature[7:]))[1]
        elif part is not None:
            mm = sig.component_min_match.get(part, 1)
        else:
            mm = sig.equality_min_match
        try:
            found[t] = equality_pairs(keys, mm, sig.set_like, t)
        except EvaluationError as e:
            raise EvaluationError(f"method {spec.name}: {e}") from None
    return MethodResult(spec.name, time.perf_counter() - t0, found)


def _engine_pairs(
    spec: MethodSpec,
    corpus: Corpus,
    config: Config,
    context: dict | None,
    thresholds: Sequence[float],
    target: str | None,
    engine_opts: dict,
) -> MethodResult:
    from ..api import RESEMBLANCE_FIELDS, NearDup
    from ..engines import open_engine

    t0 = time.perf_counter()
    engine = open_engine(target or ":memory:", **engine_opts)
    cfg = engine.open(config.replace(threshold=min(thresholds)))
    try:
        if context:
            engine.put_meta("context", context)
        nd = NearDup(engine, cfg)
        if engine.count() == 0:
            _index_corpus(nd, corpus)
        engine.refresh()
        pos = {d: i for i, d in enumerate(corpus.ids)}
        fields = (spec.signature,) if spec.signature else RESEMBLANCE_FIELDS
        found = {t: _found_at(nd, t, fields, pos) for t in thresholds}
    finally:
        engine.close()
    return MethodResult(spec.name, time.perf_counter() - t0, found)


def _index_corpus(nd, corpus: Corpus) -> None:
    """Every document of ``corpus`` indexed by ``nd``; an EvaluationError where one is refused."""
    report = nd.index(
        (
            Document(i, t, lang=l)
            for i, t, l in zip(corpus.ids, corpus.texts, corpus.langs, strict=True)
        ),
        progress=None,
    )
    if report.failed:
        raise EvaluationError(
            f"the engine refused {len(report.failed)} document(s), "
            f"first: {report.failed[0].id}: {report.failed[0].reason}"
        )


def _found_at(nd, threshold: float, fields, pos: dict[str, int]) -> dict[Pair, float]:
    """The pairs ``nd`` finds at ``threshold`` as (i, j) positions of ``pos`` (i < j), each
    with its resemblance."""
    got = {}
    for p in nd.pairs(threshold=threshold, fields=fields):
        if p.a in pos and p.b in pos:
            i, j = pos[p.a], pos[p.b]
            got[(min(i, j), max(i, j))] = p.resemblance
    return got


# -- the runner ----------------------------------------------------------------------------------
@dataclass
class Evaluation:
    corpus: str
    documents: int
    scope: int
    pairs: int  # m
    truth_kind: str
    thresholds: list[float]
    prepare_seconds: float
    truth_seconds: float
    rows: dict[str, list[Counts]] = field(default_factory=dict)
    agreement: dict[float, dict[str, dict[str, float]]] = field(default_factory=dict)
    bands: list[dict[str, Any]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["agreement"] = {str(t): v for t, v in self.agreement.items()}
        return d


def evaluate(
    corpus: Corpus,
    *,
    methods: Sequence[str] = DEFAULT_METHODS,
    thresholds: Sequence[float] = THRESHOLDS,
    truth: str = "jaccard",
    labels: set[Pair] | None = None,
    config: Config | None = None,
    target: str | None = None,
    engine_opts: dict | None = None,
    name: str = "",
    progress: Callable[[str], None] | None = None,
) -> Evaluation:
    """Score ``methods`` on ``corpus`` against the chosen ground truth (see the module docstring).

    Steps: collection statistics (when a signature needs them), canonical tokens and
    shingles of every document, the ground truth, each method's found pairs, and the
    scores (rows per threshold, AC1 agreement, rows per length band).
    """
    say = progress or (lambda msg: None)
    thresholds = _check_thresholds(thresholds)
    specs = [parse_method(m) for m in methods]
    if len(corpus) < 2:
        raise EvaluationError("the corpus needs at least two documents")
    base = config or Config()
    config, engine_config = _method_configs(base, specs)
    canonicalizer = Canonicalizer(config)  # (the settings of every method's signatures)
    context = _context(canonicalizer, corpus, say)

    say("canonicalizing and shingling")
    t0 = time.perf_counter()
    signer = Signer(
        config.replace(signatures=base.signatures), context, canonicalizer=canonicalizer
    )
    prepared = [signer.prepare(t, l) for t, l in zip(corpus.texts, corpus.langs, strict=True)]
    prepare_seconds = time.perf_counter() - t0

    n_words = corpus.n_words
    scope = _scope(truth, n_words)
    in_scope = set(scope)
    say(f"ground truth ({truth})")
    t0 = time.perf_counter()
    true_pairs = _ground_truth(
        truth, corpus, prepared, scope, thresholds, labels, config.strip_html
    )
    truth_seconds = time.perf_counter() - t0
    labelled = _labelled(truth, labels, corpus)

    results: list[MethodResult] = []
    for spec in specs:
        say(f"method {spec.name}")
        if spec.kind == "engine":
            r = _engine_method(
                spec, corpus, engine_config, context, thresholds, target, engine_opts
            )
        else:
            r = _sign_pairs(spec, prepared, canonicalizer, context, thresholds)
        r.found = _scored(r.found, in_scope if truth == "levenshtein" else None, labelled)
        results.append(r)

    ev = Evaluation(
        corpus=name,
        documents=len(corpus),
        scope=len(scope),
        pairs=_pairs_scored(labelled, scope),
        truth_kind=truth,
        thresholds=thresholds,
        prepare_seconds=prepare_seconds,
        truth_seconds=truth_seconds,
    )
    truth_sets = {t: set(v) for t, v in true_pairs.items()}
    _score(ev, results, truth_sets)
    ev.bands = _band_rows(_bands(n_words, in_scope), results, truth_sets, thresholds)
    return ev


def _bands(n_words: Sequence[int], in_scope: set[int]) -> list[str | None]:
    """Each document's length band (:func:`band_of`), None for one not scored."""
    return [band_of(n) if i in in_scope else None for i, n in enumerate(n_words)]


def _engine_method(
    spec: MethodSpec,
    corpus: Corpus,
    config: Config,
    context: dict | None,
    thresholds: Sequence[float],
    target: str | None,
    engine_opts: dict | None,
) -> MethodResult:
    """:func:`_engine_pairs` with the collection statistics where ``config`` needs them."""
    return _engine_pairs(
        spec,
        corpus,
        config,
        context if needs_context(config) else None,
        thresholds,
        target,
        engine_opts or {},
    )


def _context(
    canonicalizer: Canonicalizer, corpus: Corpus, say: Callable[[str], None]
) -> dict | None:
    """The collection statistics of ``corpus`` (its tokens by ``canonicalizer``) where a
    signature of ``canonicalizer.config`` needs them."""
    if not needs_context(canonicalizer.config):
        return None
    say("collection statistics")
    return build_context(canonicalizer, zip(corpus.texts, corpus.langs, strict=True))


def _scope(truth: str, n_words: Sequence[int]) -> list[int]:
    """The documents scored: those of at least :data:`MIN_WORDS_LEVENSHTEIN` words for the
    Levenshtein truth, else all."""
    if truth == "levenshtein":
        return [i for i, n in enumerate(n_words) if n >= MIN_WORDS_LEVENSHTEIN]
    return list(range(len(n_words)))


def _pairs_scored(labelled: set[Pair] | None, scope: Sequence[int]) -> int:
    """m, the number of pairs scored: the labelled ones, else every pair of the scope."""
    return len(labelled) if labelled is not None else n_pairs(len(scope))


def _labelled(truth: str, labels: set[Pair] | None, corpus: Corpus) -> set[Pair] | None:
    """The pairs scored where the labels say which pairs are not duplicates too (the
    labelled pairs, both kinds), else None (every pair is scored)."""
    if truth != "labels" or not corpus.negatives:
        return None
    return (labels if labels is not None else corpus.labels or set()) | corpus.negatives


def _scored(
    found: dict[float, dict[Pair, float]], docs: set[int] | None, labelled: set[Pair] | None
) -> dict[float, dict[Pair, float]]:
    """The found pairs that are scored: both documents in ``docs`` and the pair in
    ``labelled`` (each where given)."""
    if docs is not None:
        found = {t: _within(f, docs) for t, f in found.items()}
    if labelled is not None:
        found = {t: {p: s for p, s in f.items() if p in labelled} for t, f in found.items()}
    return found


def _check_thresholds(thresholds: Sequence[float]) -> list[float]:
    """Distinct thresholds, highest first; each in (0, 1]."""
    out = sorted({float(t) for t in thresholds}, reverse=True)
    if not out or not all(0.0 < t <= 1.0 for t in out):
        raise EvaluationError(f"thresholds must be in (0, 1], got {out}")
    return out


def _method_configs(base: Config, specs: Sequence[MethodSpec]) -> tuple[Config, Config]:
    """The config signing every signature method, and the engine's (its extra fields only)."""
    sigs = sorted({s.signature for s in specs if s.signature and s.signature in REGISTRY})
    config = base.replace(signatures=tuple(dict.fromkeys((*base.signatures, *sigs))))
    engine_sigs = [s.signature for s in specs if s.kind == "engine" and s.signature in REGISTRY]
    engine_config = base.replace(signatures=tuple(dict.fromkeys((*base.signatures, *engine_sigs))))
    return config, engine_config


def _ground_truth(
    truth: str,
    corpus: Corpus,
    prepared: list,
    scope: Sequence[int],
    thresholds: Sequence[float],
    labels: set[Pair] | None,
    strip: bool,
) -> dict[float, dict[Pair, float]]:
    """threshold -> true pair -> its similarity (1.0 for labels)."""
    if truth == "jaccard":
        return jaccard_truth([p.shingles.set for p in prepared], thresholds)
    if truth == "levenshtein":
        texts = [strip_html(t) if strip else t for t in corpus.texts]
        return levenshtein_truth(texts, scope, thresholds)
    if truth == "labels":
        return _label_truth(labels if labels is not None else corpus.labels, thresholds)
    raise EvaluationError(f"truth must be jaccard, levenshtein or labels, not {truth!r}")


def _label_truth(
    labels: set[Pair] | None, thresholds: Sequence[float]
) -> dict[float, dict[Pair, float]]:
    """The labelled pairs, similarity 1.0, at every threshold."""
    if labels is None:
        raise EvaluationError("truth 'labels' needs a pairs file with labels or --labels FILE")
    return {t: dict.fromkeys(labels, 1.0) for t in thresholds}


def _within(found: dict[Pair, float], docs: set[int]) -> dict[Pair, float]:
    """The found pairs whose two documents are both in ``docs``."""
    return {p: s for p, s in found.items() if p[0] in docs and p[1] in docs}


def _score(
    ev: Evaluation, results: Sequence[MethodResult], truth_sets: dict[float, set[Pair]]
) -> None:
    """Rows (confusion counts, HFM, separation) per method and threshold, and AC1 agreement."""
    for r in results:
        rows = []
        for t in ev.thresholds:
            c = confusion(truth_sets[t], set(r.found[t]), ev.pairs, t)
            c.hfm, c.separation = hfm_separation(r.found[t], truth_sets[t])
            rows.append(c)
        ev.rows[r.name] = rows
        ev.seconds[r.name] = r.seconds
    for t in ev.thresholds:
        ev.agreement[t] = {
            x.name: {y.name: ac1(set(x.found[t]), set(y.found[t]), ev.pairs) for y in results}
            for x in results
        }


def _band_rows(
    band: Sequence[str | None],
    results: Sequence[MethodResult],
    truth_sets: dict[float, set[Pair]],
    thresholds: Sequence[float],
) -> list[dict[str, Any]]:
    """Recall, precision and F1 within each length band (``band[i]``: document i's band, or
    None)."""
    out = []
    for b in [band_of(lo) for lo, _ in BANDS]:
        docs = sum(1 for x in band if x == b)
        if docs < 2:
            continue
        mb = n_pairs(docs)
        for t in thresholds:
            tb = _in_band(truth_sets[t], band, b)
            for r in results:
                c = confusion(tb, _in_band(r.found[t], band, b), mb, t)
                out.append(
                    {
                        "band": b,
                        "documents": docs,
                        "threshold": t,
                        "method": r.name,
                        "truth": c.truth,
                        "found": c.found,
                        "recall": c.recall,
                        "precision": c.precision,
                        "f1": c.f1,
                    }
                )
    return out


def _in_band(pairs: Iterable[Pair], band: Sequence[str | None], b: str) -> set[Pair]:
    """The pairs whose two documents are both in length band ``b``."""
    return {p for p in pairs if band[p[0]] == b and band[p[1]] == b}
