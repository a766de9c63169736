"""The thin layer between the HTTP engine and the clients, in the style of the clients' own
``helpers``: one pager and one bulk streamer, both sending through one
:class:`~neardup.engines.transport.Retrying` (one call-with-retry, one :class:`Backoff`).

* :class:`Pager` reads a sorted search page after page: over a point in time with
  ``search_after`` (a scroll where the engine has none), plain ``search_after``, or the
  ``after_key`` of a composite aggregation.
* :class:`BulkStreamer` sends bulk actions in chunks with the client's ``streaming_bulk``;
  items refused for a passing reason (:data:`RETRIED_ITEM_STATUS`: 429 overloaded, 503 a
  primary shard not active) are sent again after the Backoff's delay, as whole requests
  refused so are; a request refused as a whole for something one action carries is split
  and sent action by action, and one refused for its size (413) or its memory (a circuit
  breaker's 429, or indexing pressure over its limit with this request alone; as a whole or
  item by item) is sent again in halves, down to one document
  alone, so one bad document never costs the good ones; every refusal comes back as a
  :class:`~neardup.engines.base.Failure` (or :class:`BulkRefused` carrying them all).
* :func:`document_problem` says what makes a document unsendable before it is sent (an
  ``_id`` over 512 bytes, text that is not valid Unicode).
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

from ..base import EngineError, Failure
from ..transport import (
    MORE_HEAP,
    Retrying,
    describe,
    error_of,
    memory_limit,
    status_of,
    what_lifts,
)

#: Statuses of a bulk item refused for a passing reason, sent again with backoff: 429
#: (``es_rejected_execution_exception``, a full queue) and 503 (``unavailable_shards_exception``,
#: a primary shard not active while a cluster restarts or recovers). A refusal for the
#: request's memory (:func:`~neardup.engines.transport.memory_limit`: a circuit breaker's
#: 429, or indexing pressure over its limit with this request alone) is not one: its
#: request is split instead.
RETRIED_ITEM_STATUS = (429, 503)

#: Error types of a refused bulk item that are about the index, not the document (a write
#: block: the index made read-only, or the cluster's disk over its flood-stage watermark):
#: every other document would be refused alike, so the operation stops with one message.
INDEX_REFUSALS = ("cluster_block_exception", "index_closed_exception")

#: The longest ``_id`` both engines accept, in UTF-8 bytes.
MAX_ID_BYTES = 512


class BulkRefused(EngineError):
    """Bulk actions the engine refused; ``failures`` holds every one with its reason."""

    def __init__(self, location: str, what: str, failures: list[Failure]):
        self.failures = failures
        shown = "; ".join(f"{f.id}: {f.reason}" for f in failures[:5])
        more = f" (and {len(failures) - 5} more)" if len(failures) > 5 else ""
        super().__init__(f"{location}: {what}: {len(failures)} refused: {shown}{more}")


def chunks(seq: Iterable[Any], n: int) -> Iterator[list[Any]]:
    it = iter(seq)
    while chunk := list(itertools.islice(it, max(1, n))):
        yield chunk


# -- validation --------------------------------------------------------------------------------
def document_problem(doc_id: str, texts: Iterable[Any]) -> str | None:
    """Why a document cannot be sent (None: it can): an id over 512 bytes, or a text (title,
    body, field values) with a lone surrogate or anything else UTF-8 cannot encode. Either
    would make the engine (or the client's serializer) refuse the whole bulk request."""
    try:
        size = len(doc_id.encode("utf-8"))
    except UnicodeEncodeError as e:
        return f"id is not valid Unicode ({e.reason} at position {e.start})"
    if size > MAX_ID_BYTES:
        return (
            f"id is {size} bytes in UTF-8; Elasticsearch and OpenSearch allow at most "
            f"{MAX_ID_BYTES}"
        )
    for t in texts:
        if t is None:
            continue
        s = t if isinstance(t, str) else json.dumps(t, ensure_ascii=False, default=str)
        try:
            s.encode("utf-8")
        except UnicodeEncodeError as e:
            return (
                f"text is not valid Unicode: {e.reason} at position {e.start} "
                f"({s[e.start]!r}); clean it and index it again"
            )
    return None


# -- paging ------------------------------------------------------------------------------------
class Pager:
    """Sorted searches page after page, through ``retry``."""

    def __init__(self, client: Any, product: str, retry: Retrying, keep_alive: str = "5m"):
        self.client = client
        self.product = product
        self.retry = retry
        self.keep_alive = keep_alive

    def hits(
        self, index: str, body_of: Callable[[Any], dict[str, Any]], size: int, what: str = "search"
    ) -> Iterator[dict[str, Any]]:
        """Every hit of ``body_of(search_after)`` (a body sorted on a unique key), page after
        page."""
        after = None
        while True:
            hits = self.retry.call(what, self.client.search, index=index, body=body_of(after))[
                "hits"
            ]["hits"]
            yield from hits
            if len(hits) < size:
                return
            after = hits[-1]["sort"]

    def buckets(
        self, index: str, body_of: Callable[[Any], dict[str, Any]], agg: str, what: str
    ) -> Iterator[dict[str, Any]]:
        """Every bucket of the composite aggregation ``agg`` of ``body_of(after_key)``."""
        after = None
        while True:
            r = self.retry.call(what, self.client.search, index=index, body=body_of(after))
            a = (r.get("aggregations") or {}).get(agg) or {}
            buckets = a.get("buckets") or []
            yield from buckets
            after = a.get("after_key")
            if not buckets or not after:
                return

    def snapshot(
        self, index: str, body_of: Callable[[Any, dict[str, Any] | None], dict[str, Any]], size: int
    ) -> Iterator[dict[str, Any]]:
        """Every hit of ``body_of(search_after, pit)`` over one point in time (a consistent
        view while the index changes); a scroll on engines without point in time."""
        pit = self._open_pit(index)
        if pit is None:
            yield from self._scroll(index, body_of(None, None))
            return
        try:
            after = None
            while True:
                r = self.retry.call(
                    "scan",
                    self.client.search,
                    body=body_of(after, {"id": pit, "keep_alive": self.keep_alive}),
                )
                pit = r.get("pit_id", pit)
                hits = r["hits"]["hits"]
                yield from hits
                if len(hits) < size:
                    return
                after = hits[-1]["sort"]
        finally:
            self._close_pit(pit)

    def _open_pit(self, index: str) -> str | None:
        opener = (
            self.client.create_pit
            if self.product == "opensearch"
            else self.client.open_point_in_time
        )
        try:
            r = self.retry.call(
                "open point in time",
                opener,
                index=index,
                keep_alive=self.keep_alive,
                ok_status=(400, 404, 405),
            )
        except Exception as e:  # noqa: BLE001
            if status_of(e) in (400, 404, 405):  # no point in time on this engine: scroll instead
                return None
            raise
        return r.get("pit_id") if self.product == "opensearch" else r.get("id")

    def _close_pit(self, pit: str) -> None:
        try:
            if self.product == "opensearch":
                self.client.delete_pit(body={"pit_id": [pit]})
            else:
                self.client.close_point_in_time(body={"id": pit})
        except Exception:  # noqa: BLE001 - it expires by itself
            pass

    def _scroll(self, index: str, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
        body.pop("track_total_hits", None)  # not allowed with scroll
        r = self.retry.call(
            "scan", self.client.search, index=index, body=body, scroll=self.keep_alive
        )
        sid = r.get("_scroll_id")
        try:
            while True:
                hits = r["hits"]["hits"]
                yield from hits
                if not hits or not sid:
                    return
                r = self.retry.call(
                    "scroll", self.client.scroll, body={"scroll_id": sid, "scroll": self.keep_alive}
                )
                sid = r.get("_scroll_id", sid)
        finally:
            if sid:
                try:
                    self.client.clear_scroll(body={"scroll_id": [sid]})
                except Exception:  # noqa: BLE001
                    pass


# -- bulk --------------------------------------------------------------------------------------
@dataclass
class BulkResult:
    failures: list[Failure] = field(default_factory=list)
    deleted: int = 0
    sent: int = 0


class BulkStreamer:
    """Bulk actions in chunks through the client's ``streaming_bulk`` and one Backoff."""

    def __init__(self, client: Any, helpers: Any, retry: Retrying, chunk_size: int = 500):
        self.client = client
        self.helpers = helpers
        self.retry = retry
        self.chunk_size = chunk_size

    def run(
        self, actions: Sequence[dict[str, Any]], what: str, *, ignore_missing: bool = False
    ) -> BulkResult:
        """Send every action; refusals are in the result (404s dropped with ``ignore_missing``)."""
        out = BulkResult()
        for chunk in chunks(actions, self.chunk_size):
            self._chunk(chunk, what, ignore_missing, out)
        return out

    def run_or_raise(
        self, actions: Sequence[dict[str, Any]], what: str, *, ignore_missing: bool = False
    ) -> BulkResult:
        result = self.run(actions, what, ignore_missing=ignore_missing)
        if result.failures:
            raise BulkRefused(self.retry.location, what, result.failures)
        return result

    def _chunk(
        self, chunk: list[dict[str, Any]], what: str, ignore_missing: bool, out: BulkResult
    ) -> None:
        def send(pending: Sequence[dict[str, Any]], last: bool) -> list[dict[str, Any]]:
            again = []
            for action, (ok, item) in zip(pending, self._send(list(pending), what), strict=True):
                info = next(iter(item.values()))
                out.sent += ok
                if ok:
                    out.deleted += info.get("result") == "deleted"
                elif _error_type(info) in INDEX_REFUSALS:  # (a block's 429 is not "busy")
                    raise EngineError(
                        f"{self.retry.location}: {what}: the index refuses writes "
                        f"({item_reason(info)}): {what_lifts(item_reason(info))}; what was "
                        "stored before is kept: run the same command again once the block is "
                        "lifted"
                    )
                elif (
                    info.get("status") in RETRIED_ITEM_STATUS
                    and memory_limit(_error(info)) is None
                    and not last
                ):
                    again.append(action)
                elif not (ignore_missing and info.get("status") == 404):
                    out.failures.append(
                        Failure(str(info.get("_id", action.get("_id"))), item_reason(info))
                    )
            return again

        self.retry.backoff.resend(chunk, send)

    def _send(self, actions: list[dict[str, Any]], what: str) -> list[tuple[bool, dict[str, Any]]]:
        """One result per action, in order. A request refused as a whole for its content (400,
        or a body the client cannot serialize) is sent again action by action, so each refusal
        has its own reason and the other actions go through; one refused for its size (413) or
        its memory (:func:`~neardup.engines.transport.memory_limit`) is sent again in halves,
        as are the actions refused for their memory item by item, until a document refused
        alone is named with what would let it in."""
        try:
            results = self.retry(
                what,
                _Bulk(self.helpers, self.client, actions),
                ok_status=(400, 413),
                ok_memory=True,
            )
        except Exception as e:  # noqa: BLE001
            if not _whole_request_refusal(e):
                if (
                    status_of(e) is not None
                ):  # re-raised for the split above: name the server as Retrying does
                    raise EngineError(
                        f"{self.retry.location}: {what} failed: {describe(e)}"
                    ) from None
                raise
            too_large = status_of(e) == 413
            tripped = memory_limit(error_of(e)) is not None
            if len(actions) == 1:
                if too_large:
                    return [(False, self._too_large(actions[0]))]
                if tripped:
                    return [(False, self._tripped(actions[0], error_of(e)))]
                return [(False, _refused_item(actions[0], e))]
            if too_large or tripped:  # refused for its size or memory: halves, each as it is
                return self._halves(actions, what)
            return [r for a in actions for r in self._send([a], what)]
        if len(results) != len(actions):  # the helper yields one result per action
            raise EngineError(
                f"{self.retry.location}: {what}: {len(actions)} actions sent, {len(results)} "
                "answered"
            )
        tripped_items = [
            i
            for i, (ok, item) in enumerate(results)
            if not ok and memory_limit(_error(_info(item))) is not None
        ]
        if tripped_items and len(actions) == 1:
            results[0] = (False, self._tripped(actions[0], _error(_info(results[0][1]))))
        elif tripped_items:  # refused for their memory item by item: those again, in halves
            again = self._halves([actions[i] for i in tripped_items], what)
            for i, result in zip(tripped_items, again, strict=True):
                results[i] = result
        return results

    def _halves(
        self, actions: list[dict[str, Any]], what: str
    ) -> list[tuple[bool, dict[str, Any]]]:
        half = (len(actions) + 1) // 2
        return self._send(actions[:half], what) + (
            self._send(actions[half:], what) if actions[half:] else []
        )

    def _tripped(self, action: dict[str, Any], error: dict[str, Any]) -> dict[str, Any]:
        """The refusal of one document whose bulk request alone the engine refused for its
        memory (:func:`~neardup.engines.transport.memory_limit`): the engine's reason, the
        request's size, and what would let it in."""
        size = request_bytes(self.helpers, [action])
        op = action.get("_op_type", "index")
        explained = (
            f"{error.get('reason')}: the bulk request holding this document alone is {size:,} "
            f"bytes, more than the engine's heap can take under {memory_limit(error)}, and a "
            f"smaller --batch-size cannot send it: {MORE_HEAP}, or shorten the document (it is "
            "within neardup's own limit on a text's length, which let it through)"
        )
        return {
            op: {
                "_id": action.get("_id"),
                "status": 429,
                "error": {**error, "reason": explained},
            }
        }

    def _too_large(self, action: dict[str, Any]) -> dict[str, Any]:
        """The refusal of one document whose bulk request alone the engine (or a proxy in
        front of it) refused with 413: its size, the engine's limit, and what can be done."""
        size = request_bytes(self.helpers, [action])
        limit = self._content_limit()
        if limit is None:
            where = (
                "over the limit on a request's size (http.max_content_length, 100mb by default, "
                "or a proxy's in front of the engine)"
            )
        elif size > limit:
            where = f"over the engine's limit of {limit:,} bytes (http.max_content_length)"
        else:
            where = (
                f"under the engine's limit of {limit:,} bytes (http.max_content_length), so a "
                "proxy in front of it allows less"
            )
        op = action.get("_op_type", "index")
        reason = (
            f"413 request too large: the bulk request holding this document alone is {size:,} "
            f"bytes, {where}; a smaller --batch-size cannot send it: shorten the document or "
            "raise the limit"
        )
        return {op: {"_id": action.get("_id"), "status": 413, "error": reason}}

    def _content_limit(self) -> int | None:
        """The engine's ``http.max_content_length`` in bytes (a node's own setting, else the
        cluster's default), or None when it cannot be read (no monitor privilege)."""
        try:
            r = self.retry.call(
                "read http.max_content_length",
                self.client.cluster.get_settings,
                include_defaults=True,
                flat_settings=True,
            )
        except EngineError:
            return None
        for part in ("transient", "persistent", "defaults"):
            value = (r.get(part) or {}).get("http.max_content_length")
            if value is not None:
                return byte_size(str(value))
        return None


def byte_size(value: str) -> int | None:
    """Bytes of an engine's byte-size setting (``100mb``, ``512kb``, ``1gb``, ``2048b``: units
    of 1024, as Elasticsearch and OpenSearch read them), None when it is not one.

    >>> byte_size("100mb"), byte_size("512kb"), byte_size("2048"), byte_size("lots")
    (104857600, 524288, 2048, None)
    """
    units = {"b": 1, "kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30, "tb": 1 << 40, "pb": 1 << 50}
    v = value.strip().lower()
    unit = next((u for u in sorted(units, key=len, reverse=True) if v.endswith(u)), "b")
    number = v[: len(v) - len(unit)] if v.endswith(unit) else v
    try:
        return int(float(number) * units[unit])
    except ValueError:
        return None


def request_bytes(helpers: Any, actions: Sequence[dict[str, Any]]) -> int:
    """The size of the bulk request body of ``actions`` in bytes, as the clients write it
    (compact JSON in UTF-8, one line for the action and one for its source)."""
    size = 0
    for action in actions:
        for part in helpers.expand_action(dict(action)):
            if part is not None:
                size += len(json.dumps(part, ensure_ascii=False, separators=(",", ":")).encode())
                size += 1
    return size


class _Bulk:
    """One bulk request of ``actions`` (a callable for Retrying, bound to its actions)."""

    def __init__(self, helpers: Any, client: Any, actions: list[dict[str, Any]]):
        self.helpers, self.client, self.actions = helpers, client, actions

    def __call__(self) -> list[tuple[bool, dict[str, Any]]]:
        return list(
            self.helpers.streaming_bulk(
                self.client,
                self.actions,
                chunk_size=len(self.actions),
                raise_on_error=False,
                raise_on_exception=True,
                max_retries=0,
            )
        )


def _whole_request_refusal(e: BaseException) -> bool:
    """A refusal of the whole request for its content (not overload, not the network)."""
    if (
        isinstance(e, (UnicodeError, ValueError, TypeError))
        or type(e).__name__ == "SerializationError"
    ):
        return True
    return status_of(e) in (400, 413) or memory_limit(error_of(e)) is not None


def _error(info: dict[str, Any]) -> dict[str, Any]:
    """The ``error`` object of one bulk item's answer (``{}`` for none or a bare string)."""
    err = info.get("error")
    return err if isinstance(err, dict) else {}


def _info(item: dict[str, Any]) -> dict[str, Any]:
    """The answer of one bulk item (``{"index": {...}}`` -> ``{...}``)."""
    return next(iter(item.values()))


def _refused_item(action: dict[str, Any], e: BaseException) -> dict[str, Any]:
    op = action.get("_op_type", "index")
    return {op: {"_id": action.get("_id"), "status": status_of(e) or 400, "error": describe(e)}}


def _error_type(info: dict[str, Any]) -> str | None:
    return _error(info).get("type")


def item_reason(info: dict[str, Any]) -> str:
    """``STATUS type: reason (cause)`` of one refused bulk item."""
    err = info.get("error")
    if isinstance(err, dict):
        reason = f"{err.get('type')}: {err.get('reason')}"
        cause = err.get("caused_by")
        if isinstance(cause, dict) and cause.get("reason"):
            reason += f" ({cause.get('reason')})"
        return f"{info.get('status')} {reason}"
    text = str(err or info.get("exception") or "refused")
    return text if text.startswith(f"{info.get('status')} ") else f"{info.get('status')} {text}"
