"""The signature family of the source documents, selectable by name in
``Config.signatures`` and stored as keyword fields ``keys.<name>``.

``REGISTRY[name](canonicalizer, context)`` (:mod:`neardup.keys.registry`, which maps names to
classes without importing them; ``canonicalizer``: the signer's one
:class:`~neardup.canonical.Canonicalizer`, whose ``config`` holds the settings) returns a
:class:`~neardup.keys.signature.Signature`: a callable ``Prepared -> np.ndarray`` of uint64
keys, with ``min_match`` (keys two documents must share to be candidates), ``components``
and ``parts()`` (keys per component).

=================  ==================================================  ===========  =========
name               what                                                 min_match    context
=================  ==================================================  ===========  =========
super              6 super-shingles of 84 min-hashes (Broder)           2            no
mega               15 mega-shingles (pairs of super-shingles)           1            no
minhash84          84-function min-hash sketch (002)                    ~t*84        no
minhash70          70-function min-hash sketch (004)                    ~t*70        no
imatch             I-Match, SHA-1 of lexicon terms (Chowdhury 2002)     1            yes
imatch_multi       I-Match over 1 + 10 randomized lexicons (Kolcz 2004) 1            yes
descriptive_words  8 full-duplicate signatures of 001 (Sharapova)       1            yes
text_stats         6 statistical local signatures of 003 (Kosinov)      1            no
anchor             anchor-bounded shingles, "Spamooborona" (004)        1            no
=================  ==================================================  ===========  =========

``sharapova`` and ``kosinov``, the names of ``descriptive_words`` and ``text_stats`` in
indexes built before they were named by method, are accepted as aliases
(:mod:`neardup.keys.registry`).

Signatures marked "context" need collection statistics: ``build_context(canonicalizer,
((text, lang), ...))`` over the indexed collection, stored by the engine under meta key
``"context"`` and passed to ``Signer(config, context, canonicalizer=canonicalizer)``.

The family's classes import when ``REGISTRY`` first looks one up, and ``match_probability``
and ``match_curve`` when first named (PEP 562), so signing with the built-in signatures
loads none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from ...keys import registry
from ...keys.registry import NEEDS_CONTEXT, REGISTRY
from ...keys.signature import Signature
from .stats import ContextError, collection_stats

if TYPE_CHECKING:
    from ...canonical import Canonicalizer
    from .supershingles import match_curve, match_probability


def __getattr__(name: str) -> Any:
    if name in ("match_curve", "match_probability"):
        from . import supershingles

        return getattr(supershingles, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def needs_context(config) -> bool:
    """True when a signature of ``config.signatures`` needs collection statistics."""
    return any(registry.needs_context(s) for s in config.signatures)


def build_context(canonicalizer: Canonicalizer, texts: Iterable[tuple[str, str | None]]) -> dict:
    """Collection statistics (JSON-serializable) over ``(text, lang)`` of the collection.

    Canonicalizes every text with ``canonicalizer`` (``Canonicalizer(config)``); one pass,
    memory proportional to the vocabulary. Store the result with
    ``engine.put_meta("context", ctx)`` and sign with
    ``Signer(config, ctx, canonicalizer=canonicalizer)``.
    """
    return collection_stats(canonicalizer, texts)


__all__ = [
    "REGISTRY",
    "NEEDS_CONTEXT",
    "Signature",
    "ContextError",
    "needs_context",
    "build_context",
    "match_probability",
    "match_curve",
]
