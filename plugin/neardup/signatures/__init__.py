"""The signature family of the source documents, selectable by name in
``Config.signatures`` and stored as keyword fields ``keys.<name>``.

``REGISTRY[name](config, context)`` returns a :class:`~.common.Signature`: a callable
``Prepared -> np.ndarray`` of uint64 keys, with ``min_match`` (keys two documents must
share to be candidates), ``components`` and ``parts()`` (keys per component).

=============  ==================================================  ===========  =========
name           what                                                 min_match    context
=============  ==================================================  ===========  =========
super          6 super-shingles of 84 min-hashes (Broder)           2            no
mega           15 mega-shingles (pairs of super-shingles)           1            no
minhash84      84-function min-hash sketch (002)                    ~t*84        no
minhash70      70-function min-hash sketch (004)                    ~t*70        no
imatch         I-Match, SHA-1 of lexicon terms (Chowdhury 2002)     1            yes
imatch_multi   I-Match over 1 + 10 randomized lexicons (Kolcz 2004) 1            yes
sharapova      8 full-duplicate signatures of 001                   1            yes
kosinov        6 statistical local signatures of 003                1            no
anchor         anchor-bounded shingles, "Spamooborona" (004)        1            no
=============  ==================================================  ===========  =========

Signatures marked "context" need collection statistics: ``build_context(config,
((text, lang), ...))`` over the indexed collection, stored by the engine under meta key
``"context"`` and passed to ``Signer(config, context)``.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from .anchor import Anchor
from .common import Signature
from .imatch import IMatch, IMatchMulti
from .kosinov import Kosinov
from .sharapova import Sharapova
from .sketches import Sketch70, Sketch84
from .stats import ContextError, collection_stats
from .supershingles import MegaShingles, SuperShingles, match_curve, match_probability

REGISTRY: dict[str, Callable[[Any, dict | None], Signature]] = {
    "super": SuperShingles,
    "mega": MegaShingles,
    "minhash84": Sketch84,
    "minhash70": Sketch70,
    "imatch": IMatch,
    "imatch_multi": IMatchMulti,
    "sharapova": Sharapova,
    "kosinov": Kosinov,
    "anchor": Anchor,
}

#: signatures that need collection statistics (``build_context``)
NEEDS_CONTEXT = frozenset({"imatch", "imatch_multi", "sharapova"})


def needs_context(config) -> bool:
    """True when a signature of ``config.signatures`` needs collection statistics."""
    return any(s in NEEDS_CONTEXT for s in config.signatures)


def build_context(config, texts: Iterable[tuple[str, str | None]]) -> dict:
    """Collection statistics (JSON-serializable) over ``(text, lang)`` of the collection.

    Canonicalizes every text with ``config``'s settings; one pass, memory proportional to
    the vocabulary. Store the result with ``engine.put_meta("context", ctx)`` and sign
    with ``Signer(config, ctx)``.
    """
    return collection_stats(config, texts)


__all__ = ["REGISTRY", "NEEDS_CONTEXT", "Signature", "ContextError", "needs_context", "build_context",
           "match_probability", "match_curve"]
