"""Request bodies of the HTTP engine's reads and writes, as pure functions: the documents it
stores (bulk actions for documents, tags, deletes and clusters), candidate queries (one per
document, or one over a batch's keys), collisions, scans, counts and full-text search.

Nothing here talks to a server: every function maps neardup values to a JSON-ready dict
(or list of action lines), so tests can validate each body against the OpenSearch API
specification and the engine's parts stay a thin layer of I/O. Where the document's fields
are is a :class:`~.layout.Layout`; what sets an index up (templates, pipeline, names) is
:mod:`.templates`.
"""

from __future__ import annotations

import base64
import copy
from typing import Any, Collection, Mapping, Sequence

import numpy as np

from ...canonical.search import MAX_QUERY_TERMS, MINIMUM_SHOULD_MATCH, query_words
from ...config import SIGNATURE_VERSION
from ...keys.encoding import render_batch, render_keys
from ...signing.records import Signed
from ..base import CandidateQuery, ClusterRecord, NativeQuery, SearchQuery, Tags
from .. import stored_shingles
from .layout import OWN, ROOT, Layout, n
from .templates import MANAGED_BY, clusters_index


#: Fields the verifier needs from a candidate hit (no second round trip).
CANDIDATE_SOURCE = [n("n_shingles"), n("simhash"), n("shingles"), n("cluster_id"), n("seq")]
#: What a hit of :func:`candidate_body` carries besides, to be verified without another
#: request: what a shingles marker is made again from (the text, with the layout's text
#: fields) and what the made set is cached by (:func:`~.index.set_key`).
VERIFY_SOURCE = [n("exact"), n("lang")]
#: neardup fields of a tag row (TagRow): no shingles, keys or text.
TAG_FIELDS = [
    n("id"),
    n("seq"),
    n("cluster_id"),
    n("dup_of"),
    n("max_resemblance"),
    n("is_duplicate"),
    n("lang"),
    n("indexed_at"),
]


def text_hash(text: str) -> int:
    """Java's ``String.hashCode`` of ``text`` (``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16 code
    units, as a signed 32-bit integer): what the attached index's pipeline computes in painless
    to tell whether a write changed the signed text.

    >>> text_hash("hello"), text_hash(""), text_hash("سلام 😀")
    (99162322, 0, -100249612)
    """
    h = 0
    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] | data[i + 1] << 8)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


# -- documents ---------------------------------------------------------------------------------
def tags_source(t: Tags | None) -> dict[str, Any]:
    """The tag fields (inside ``neardup``)."""
    if t is None:
        return {"cluster_id": None, "dup_of": None, "max_resemblance": None, "is_duplicate": None}
    return {
        "cluster_id": t.cluster_id,
        "dup_of": t.dup_of,
        "max_resemblance": float(t.max_resemblance),
        "is_duplicate": bool(t.is_duplicate),
    }


def neardup_source(
    s: Signed,
    tags: Tags | None,
    seq: int,
    indexed_at: str,
    version: int = SIGNATURE_VERSION,
    keywords: Mapping[str, list[str]] | None = None,
) -> dict[str, Any]:
    """The ``neardup`` object of one signed document (see mappings/documents.json), signed
    as signature ``version`` (the index's) says. ``keywords``: its keys as rendered for its
    batch (:func:`~neardup.keys.encoding.render_batch`), else rendered here."""
    return {
        "id": s.id,
        "lang": s.lang,
        "exact": s.exact,
        "simhash": f"{int(s.simhash) & 0xFFFFFFFFFFFFFFFF:016x}",
        "keys": keywords if keywords is not None else {f: s.keywords(f, version) for f in s.keys},
        # the hashes, or a marker where they follow from the text (made again to verify)
        "shingles": base64.b64encode(stored_shingles.column(s)).decode("ascii"),
        "n_shingles": int(s.n_shingles),
        "n_tokens": int(s.n_tokens),
        "too_short": bool(s.too_short),
        "seq": int(seq),
        "indexed_at": indexed_at,
        "signature_version": version,
        **tags_source(tags),
    }


def document_source(
    s: Signed,
    tags: Tags | None,
    seq: int,
    indexed_at: str,
    layout: Layout = OWN,
    version: int = SIGNATURE_VERSION,
    keywords: Mapping[str, list[str]] | None = None,
) -> dict[str, Any]:
    """The whole stored JSON of one signed document: its own fields and ``neardup``
    (``keywords`` as :func:`neardup_source` takes them)."""
    d = s.doc
    src: dict[str, Any] = {layout.field_of(layout.text, s.lang): d.text}
    if d.title is not None and layout.title:
        src[layout.field_of(layout.title, s.lang)] = d.title
    if d.fields and not layout.adopted:
        src["fields"] = dict(d.fields)
    src[ROOT] = neardup_source(s, tags, seq, indexed_at, version, keywords)
    return src


def index_action(
    index: str,
    s: Signed,
    tags: Tags | None,
    seq: int,
    indexed_at: str,
    layout: Layout = OWN,
    version: int = SIGNATURE_VERSION,
    *,
    create: bool = True,
    keywords: Mapping[str, list[str]] | None = None,
) -> dict[str, Any]:
    """A bulk action storing one signed document (idempotent: the document id is the ``_id``).

    neardup's own index: ``index`` the whole document. An adopted index: ``update`` only
    ``neardup`` of an existing document (the user's fields are never rewritten); a new
    document (``create``: the index did not hold it) is created from the text and title in
    the user's field names (``upsert``). Without ``create`` a document removed meanwhile is
    refused (404), never made again from the signed text alone. ``keywords`` as
    :func:`neardup_source` takes them."""
    if not layout.adopted:
        return {
            "_op_type": "index",
            "_index": index,
            "_id": s.id,
            "_source": document_source(s, tags, seq, indexed_at, layout, version, keywords),
        }
    nd = {
        **neardup_source(s, tags, seq, indexed_at, version, keywords),
        "text_hash": text_hash(s.doc.text),
    }
    action = {"_op_type": "update", "_index": index, "_id": s.id, "doc": {ROOT: nd}}
    if create:
        action["upsert"] = document_source(s, tags, seq, indexed_at, layout, version, keywords)
        action["upsert"][ROOT]["text_hash"] = nd["text_hash"]
    return action


def index_actions(
    index: str,
    docs: Sequence[Signed],
    tags: Mapping[str, Tags],
    seqs: Mapping[str, int],
    indexed_at: str,
    layout: Layout = OWN,
    version: int = SIGNATURE_VERSION,
    *,
    held: Collection[str] = (),
) -> list[dict[str, Any]]:
    """:func:`index_action` of each of a batch's documents (``held``: the ids the index holds,
    not created again), their keys rendered in one call for the whole batch
    (:func:`~neardup.keys.encoding.render_batch`)."""
    keywords = render_batch([s.keys for s in docs], version)
    return [
        index_action(
            index,
            s,
            tags.get(s.id),
            seqs[s.id],
            indexed_at,
            layout,
            version,
            create=s.id not in held,
            keywords=kw,
        )
        for s, kw in zip(docs, keywords, strict=True)
    ]


def update_tags_action(index: str, doc_id: str, t: Tags) -> dict[str, Any]:
    return {"_op_type": "update", "_index": index, "_id": doc_id, "doc": {ROOT: tags_source(t)}}


def delete_action(index: str, doc_id: str) -> dict[str, Any]:
    return {"_op_type": "delete", "_index": index, "_id": doc_id}


def cluster_action(index: str, c: ClusterRecord, updated_at: str) -> dict[str, Any]:
    """A bulk action storing one cluster, marked as neardup's (``managed_by``)."""
    return {
        "_op_type": "index",
        "_index": clusters_index(index),
        "_id": c.cluster_id,
        "_source": {**c.to_dict(), "updated_at": updated_at, "managed_by": MANAGED_BY},
    }


# -- candidate retrieval -----------------------------------------------------------------------
def candidate_query(
    q: CandidateQuery, max_clauses: int = 1024, *, version: int
) -> dict[str, Any] | None:
    """The query clause of one candidate query, or None when it has no keys (written as an
    index of signature ``version`` holds them).

    Each key is a ``constant_score`` term (boost 1), so a document's score is the number of
    keys it shares within the groups it matches -- the order the embedded engine uses.
    A group with ``min_match`` 1 whose keys would push the query past ``max_clauses`` becomes
    one ``terms`` clause (scores 1), and a larger min_match group a ``terms_set`` query.
    """
    groups = []
    for g in q.groups:
        kws = list(
            dict.fromkeys(render_keys(g.field, np.asarray(g.keys, dtype=np.uint64), version))
        )
        if kws:
            groups.append((g.field, kws, int(g.min_match)))
    if not groups:
        return None
    degraded = _degraded([len(kws) for _, kws, _ in groups], max_clauses)
    clause: dict[str, Any] = {
        "bool": {
            "filter": _candidate_filters(q),
            "should": [
                _group_clause(field, kws, need, i in degraded)
                for i, (field, kws, need) in enumerate(groups)
            ],
            "minimum_should_match": 1,
        }
    }
    if q.exclude_id is not None:
        clause["bool"]["must_not"] = [{"ids": {"values": [q.exclude_id]}}]
    return clause


def _degraded(sizes: list[int], max_clauses: int) -> set[int]:
    """The groups (by position) made one clause each, the largest first, until the leaf
    clauses of all fit the engine's limit (two left for the filters).

    >>> sorted(_degraded([5, 1, 3], 7))
    [0]
    """
    total = sum(sizes)
    out = set()
    for i in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
        if total <= max_clauses - 2:
            break
        if sizes[i] > 1:
            out.add(i)
            total -= sizes[i] - 1
    return out


def _group_clause(field: str, kws: list[str], need: int, degraded: bool) -> dict[str, Any]:
    """One key group's clause: a ``bool`` of ``constant_score`` terms (a key apiece), or,
    ``degraded``, one ``terms`` (need 1) or ``terms_set`` clause."""
    path = n(f"keys.{field}")
    if degraded and need == 1:
        return {"terms": {path: kws, "_name": field}}
    if degraded:
        script = {"source": "Math.min(params.num_terms, params.need)", "params": {"need": need}}
        return {
            "terms_set": {
                path: {"terms": kws, "_name": field, "minimum_should_match_script": script}
            }
        }
    return {
        "bool": {
            "should": [
                {"constant_score": {"filter": {"term": {path: kw}}, "boost": 1.0}} for kw in kws
            ],
            "minimum_should_match": need,
            "_name": field,
        }
    }


def _candidate_filters(q: CandidateQuery) -> list[dict[str, Any]]:
    """The filters of a candidate query: its length range, arrival window, representatives."""
    lte = int(min(q.max_shingles, 2**31 - 1))
    filters: list[dict[str, Any]] = [
        {"range": {n("n_shingles"): {"gte": int(q.min_shingles), "lte": lte}}}
    ]
    order: dict[str, int] = {}
    if q.before_seq is not None:
        order["lt"] = int(q.before_seq)
    if q.after_seq is not None:
        order["gt"] = int(q.after_seq)
    if order:
        filters.append({"range": {n("seq"): order}})
    if q.representatives:
        filters.append({"term": {n("is_duplicate"): False}})
    return filters


def candidate_body(
    q: CandidateQuery,
    max_clauses: int = 1024,
    max_window: int = 10000,
    *,
    version: int,
    read_fields: Sequence[str] = (),
) -> dict[str, Any] | None:
    """A search body: matching documents by shared keys, best (most keys) first, then arrival.
    With ``read_fields`` (where the layout keeps the text and the title), each hit carries
    what verifying and showing it needs (:data:`VERIFY_SOURCE`, the text, the title): the
    shingles of a marker are made again from the hit, with no read by id after the search."""
    query = candidate_query(q, max_clauses, version=version)
    if query is None:
        return None
    verify = [*VERIFY_SOURCE, *read_fields] if read_fields else []
    return {
        "query": query,
        "size": int(min(q.limit, max_window)),
        "_source": [*CANDIDATE_SOURCE, *verify],
        "sort": [{"_score": {"order": "desc"}}, {n("seq"): {"order": "asc"}}],
        "track_total_hits": False,
    }


#: What a hit of :func:`keys_body` carries: the keys, to be matched to each query here.
KEYS_SOURCE = [*CANDIDATE_SOURCE, n("keys"), n("is_duplicate")]
#: Keywords per ``terms`` clause (the engines' ``index.max_terms_count`` is 65,536).
MAX_TERMS = 65536


def keys_body(
    queries: Sequence[CandidateQuery],
    size: int,
    search_after: Sequence[Any] | None = None,
    *,
    version: int,
) -> dict[str, Any] | None:
    """One page of the stored documents that hold any key of any of ``queries`` (one
    ``terms`` clause per field) and pass the filters all of them share, in arrival order,
    with their keys: the hits are matched to each query in the caller, by the rule of
    :func:`candidate_query` (:class:`~neardup.engines.elastic.key_match.KeyMatcher`). None when
    the queries have no keys.

    >>> import numpy as np
    >>> from neardup.engines.base import KeyGroup
    >>> def q(keys, lo):
    ...     group = KeyGroup("exact", np.array(keys, dtype=np.uint64), 1)
    ...     return CandidateQuery(groups=(group,), min_shingles=lo, max_shingles=2 * lo,
    ...                           before_seq=9)
    >>> b = keys_body([q([1, 2], 10), q([2, 3], 4)], 100, version=6)
    >>> [k[-1:] for k in b["query"]["bool"]["should"][0]["terms"]["neardup.keys.exact"]]
    ['1', '2', '3']
    >>> [list(f["range"].values()) for f in b["query"]["bool"]["filter"]]
    [[{'gte': 4, 'lte': 20}], [{'lt': 9}]]
    """
    per_field = _keywords_by_field(queries, version)
    if not per_field:
        return None
    should = [
        {"terms": {n(f"keys.{f}"): list(kws)[at : at + MAX_TERMS]}}
        for f, kws in per_field.items()
        for at in range(0, len(kws), MAX_TERMS)
    ]
    shared = _shared_filters(queries)
    body: dict[str, Any] = {
        "query": {
            "bool": {
                "filter": _candidate_filters(shared),
                "should": should,
                "minimum_should_match": 1,
            }
        },
        "size": int(size),
        "_source": list(KEYS_SOURCE),
        "sort": [{n("seq"): {"order": "asc"}}],
        "track_total_hits": False,
    }
    if search_after:
        body["search_after"] = list(search_after)
    return body


def _keywords_by_field(
    queries: Sequence[CandidateQuery], version: int
) -> dict[str, dict[str, None]]:
    """The distinct keywords of each field the queries ask for, in the order first asked."""
    per_field: dict[str, dict[str, None]] = {}
    for q in queries:
        for g in q.groups:
            kws = render_keys(g.field, np.asarray(g.keys, dtype=np.uint64).ravel(), version)
            if kws:
                per_field.setdefault(g.field, {}).update(dict.fromkeys(kws))
    return per_field


def _shared_filters(queries: Sequence[CandidateQuery]) -> CandidateQuery:
    """A query without keys whose filters every one of ``queries`` passes: the loosest
    length and arrival bounds, representatives only when all of them ask for that."""
    return CandidateQuery(
        groups=(),
        min_shingles=min(q.min_shingles for q in queries),
        max_shingles=max(q.max_shingles for q in queries),
        before_seq=_loosest([q.before_seq for q in queries], max),
        after_seq=_loosest([q.after_seq for q in queries], min),
        representatives=all(q.representatives for q in queries),
    )


def _loosest(bounds: Sequence[int | None], pick: Any) -> int | None:
    """The bound every query's filter lies within (None when one query has none)."""
    return None if any(b is None for b in bounds) else pick(bounds)


def msearch_lines(index: str, bodies: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Header/body pairs of an ``_msearch`` request."""
    lines: list[dict[str, Any]] = []
    for b in bodies:
        lines.append({"index": index})
        lines.append(dict(b))
    return lines


# -- collisions, scans, counts -----------------------------------------------------------------
def field_keys_body(
    field: str,
    size: int,
    search_after: Sequence[Any] | None = None,
    pit: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A page of the id and the keys of one signature field of every document that has them,
    in arrival order (``neardup.seq``), for PIT + search_after or scroll: the collisions of the
    field are grouped from them in the client, so the keys need no doc values."""
    body = {
        "size": int(size),
        "query": {"bool": {"filter": [signed_query(), {"exists": {"field": n(f"keys.{field}")}}]}},
        "_source": [n("id"), n(f"keys.{field}")],
    }
    return _by_seq(body, search_after, pit)


def signed_query() -> dict[str, Any]:
    """Documents neardup has signed (other clients' documents have no ``neardup.seq``)."""
    return {"exists": {"field": n("seq")}}


def count_body(signed: bool = True) -> dict[str, Any]:
    """Signed documents, or (``signed`` False) those without neardup's fields."""
    return {"query": signed_query() if signed else {"bool": {"must_not": [signed_query()]}}}


def max_seq_body() -> dict[str, Any]:
    return {"size": 0, "track_total_hits": False, "aggs": {"max_seq": {"max": {"field": n("seq")}}}}


def source_filter(text: bool, layout: Layout = OWN) -> dict[str, Any]:
    """What a StoredDoc needs: ``neardup``, the title/language/fields, the text if ``text``."""
    return {"includes": [ROOT, *layout.own_fields, *(layout.stored(layout.text) if text else [])]}


def _by_seq(
    body: dict[str, Any], search_after: Sequence[Any] | None, pit: Mapping[str, Any] | None
) -> dict[str, Any]:
    body["sort"] = [{n("seq"): {"order": "asc"}}]
    body["track_total_hits"] = False
    if pit:
        body["pit"] = dict(pit)
    if search_after:
        body["search_after"] = list(search_after)
    return body


def scan_body(
    size: int,
    search_after: Sequence[Any] | None = None,
    pit: Mapping[str, Any] | None = None,
    text: bool = False,
    layout: Layout = OWN,
) -> dict[str, Any]:
    """A page of every signed document in arrival order (``neardup.seq``), for PIT +
    search_after or scroll."""
    body = {
        "size": int(size),
        "query": {"bool": {"filter": [signed_query()]}},
        "_source": source_filter(text, layout),
    }
    return _by_seq(body, search_after, pit)


def tag_scan_body(
    size: int,
    search_after: Sequence[Any] | None = None,
    pit: Mapping[str, Any] | None = None,
    layout: Layout = OWN,
) -> dict[str, Any]:
    """A page of tag rows in arrival order (no shingles, keys or text)."""
    body = {
        "size": int(size),
        "query": {"bool": {"filter": [signed_query()]}},
        "_source": [*TAG_FIELDS, *layout.stored(layout.title)],
    }
    return _by_seq(body, search_after, pit)


def members_body(
    representatives: Sequence[str], size: int, search_after: Sequence[Any] | None = None
) -> dict[str, Any]:
    """A page of the documents whose ``dup_of`` is one of ``representatives``, in arrival order."""
    body = {
        "size": int(size),
        "query": {"bool": {"filter": [{"terms": {n("dup_of"): list(representatives)}}]}},
        "_source": [n("id"), n("dup_of")],
    }
    return _by_seq(body, search_after, None)


def unsigned_body(
    size: int, search_after: Sequence[Any] | None, pit: Mapping[str, Any] | None, layout: Layout
) -> dict[str, Any]:
    """A page of the documents without neardup's fields, in the layout's arrival order (its
    ``order`` field, then index order), with the fields signing needs. Those without the
    text field come too, so that the pass counts every document it cannot sign."""
    sort: list[dict[str, Any]] = [{layout.order: {"order": "asc"}}] if layout.order else []
    sort.append({"_doc": {"order": "asc"}})  # index order: stable inside one point in time
    body: dict[str, Any] = {
        "size": int(size),
        "query": {"bool": {"must_not": [signed_query()]}},
        "_source": [layout.text, *layout.own_fields],
        "sort": sort,
        "track_total_hits": False,
    }
    if pit:
        body["pit"] = dict(pit)
    if search_after:
        body["search_after"] = list(search_after)
    return body


def mget_body(ids: Sequence[str], text: bool = False, layout: Layout = OWN) -> dict[str, Any]:
    src = source_filter(text, layout)
    return {"docs": [{"_id": i, "_source": src} for i in ids]}


def existing_seq_body(ids: Sequence[str]) -> dict[str, Any]:
    return {"docs": [{"_id": i, "_source": [n("seq")]} for i in ids]}


def cluster_ids_body(size: int, search_after: Sequence[Any] | None = None) -> dict[str, Any]:
    """The ids of the clusters neardup wrote (those marked ``managed_by``), page by page."""
    body: dict[str, Any] = {
        "size": int(size),
        "_source": False,
        "sort": [{"cluster_id": {"order": "asc"}}],
        "query": {"term": {"managed_by": MANAGED_BY}},
        "track_total_hits": False,
    }
    if search_after:
        body["search_after"] = list(search_after)
    return body


def read_clusters_body(size: int, search_after: Sequence[Any] | None = None) -> dict[str, Any]:
    """Clusters, largest first, ties by id (the embedded engine's order)."""
    body: dict[str, Any] = {
        "size": int(size),
        "query": {"match_all": {}},
        "sort": [{"size": {"order": "desc"}}, {"cluster_id": {"order": "asc"}}],
        "track_total_hits": False,
    }
    if search_after:
        body["search_after"] = list(search_after)
    return body


# -- full-text search --------------------------------------------------------------------------
def highlight_fields(layout: Layout = OWN, lang: str | None = None) -> list[str]:
    """The highlighted text fields, in the order a hit's snippet is taken from them: the
    language fields first (the document's language, then the others), then the text field
    itself. In an index with ``languages`` a document has one of them, which gives a fragment
    whether or not it matches; in one made before, the subfields mark inflected forms and
    letter variants the plain field misses and give a fragment only where they match, and the
    plain field always gives one. An adopted index: its text field."""
    plain, *per_lang = layout.analyzed(layout.text)
    return [*sorted(per_lang, key=lambda f: f[len(plain) + 1 :] != lang), plain]


def highlight(layout: Layout = OWN) -> dict[str, Any]:
    fields: dict[str, Any] = {
        f: {"fragment_size": 160, "number_of_fragments": 1} for f in highlight_fields(layout)
    }
    for f in layout.stored(layout.text):  # the beginning of the text when no word is marked
        fields[f]["no_match_size"] = 160
    return {"pre_tags": ["["], "post_tags": ["]"], "fields": fields}


def snippet_of(
    highlights: Mapping[str, Sequence[str]] | None, layout: Layout = OWN, lang: str | None = None
) -> str:
    """A hit's snippet: the first non-empty fragment in :func:`highlight_fields` order."""
    hl = highlights or {}
    return next(
        (frags[0] for f in highlight_fields(layout, lang) if (frags := hl.get(f)) and frags[0]), ""
    )


def query_terms_limit(layout: Layout = OWN, max_clauses: int = 1024) -> int:
    """Distinct words a query keeps (:func:`~neardup.canonical.search.query_words`): at most
    :data:`~neardup.canonical.search.MAX_QUERY_TERMS`, and few enough that one clause per
    word and searched field stays within the engine's clause limit (``maxClauseCount``).

    >>> query_terms_limit(), query_terms_limit(max_clauses=400)
    (100, 50)
    """
    return max(1, min(MAX_QUERY_TERMS, max_clauses // len(layout.search_fields())))


def fulltext_body(
    query: SearchQuery, size: int, layout: Layout = OWN, max_clauses: int = 1024
) -> dict[str, Any]:
    """Words -> ``multi_match`` over title and text (and, in neardup's own index, their
    language fields), cut to :func:`query_terms_limit` distinct words; a hit needs all of
    up to 8 words, else most of them (:data:`~neardup.canonical.search.MINIMUM_SHOULD_MATCH`,
    as in the embedded engine). A :class:`~neardup.engines.base.NativeQuery` holds the query
    DSL: a whole search body when it has ``query``, else the query clause itself."""
    if isinstance(query, str):
        body: dict[str, Any] = {
            "query": {
                "multi_match": {
                    "query": query_words(query, query_terms_limit(layout, max_clauses)),
                    "fields": layout.search_fields(),
                    "type": "cross_fields",
                    "operator": "or",
                    "minimum_should_match": MINIMUM_SHOULD_MATCH,
                }
            }
        }
    elif isinstance(query, NativeQuery) and isinstance(query.body, Mapping):
        given = copy.deepcopy(dict(query.body))
        body = given if "query" in given else {"query": given}
    else:
        raise TypeError(
            "search query must be words (str) or a NativeQuery of a query-DSL dict, "
            f"not {query!r:.80}"
        )
    body.setdefault("size", int(size))
    body.setdefault("_source", [n("cluster_id"), n("lang"), *layout.stored(layout.title)])
    body.setdefault("highlight", highlight(layout))
    return body


def collapsed_bodies(
    query: SearchQuery,
    size: int,
    inner: int = 100,
    layout: Layout = OWN,
    max_clauses: int = 1024,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two bodies for query-time dedupe: tagged hits collapsed on ``neardup.cluster_id``
    (near-copies in ``inner_hits``), and untagged hits as they are; the caller merges them by
    score."""
    base = fulltext_body(query, size, layout, max_clauses)
    tagged = copy.deepcopy(base)
    tagged["query"] = {
        "bool": {"must": [base["query"]], "filter": [{"exists": {"field": n("cluster_id")}}]}
    }
    tagged["collapse"] = {
        "field": n("cluster_id"),
        "inner_hits": {
            "name": "copies",
            "size": int(inner),
            "_source": False,
            "sort": [{"_score": {"order": "desc"}}, {n("seq"): {"order": "asc"}}],
        },
    }
    untagged = copy.deepcopy(base)
    untagged["query"] = {
        "bool": {"must": [base["query"]], "must_not": [{"exists": {"field": n("cluster_id")}}]}
    }
    return tagged, untagged
