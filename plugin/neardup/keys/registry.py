"""Names of the signature family (:mod:`neardup.signing.signatures`) and where each one's class
lives, as ``"module:Class"`` strings: this module imports nothing of neardup, so
:mod:`neardup.config` can check signature names without importing the signatures (which
import canonicalization, which imports the config).

A name is what ``Config.signatures`` holds and what the engines store keys under
(``keys.<name>``), so a name once stored must keep working: renamed signatures keep their
old name as an alias (``ALIASES``), which signs exactly like the new one and keeps its own
key field, so indexes built under the old name still open and match.

>>> canonical_name("kosinov"), canonical_name("text_stats"), canonical_name("minhash84")
('text_stats', 'text_stats', 'minhash84')
>>> "sharapova" in REGISTRY and "descriptive_words" in REGISTRY and "nope" in REGISTRY
False
>>> REGISTRY["kosinov"].__name__
'TextStatistics'
>>> sorted(NEEDS_CONTEXT)
['descriptive_words', 'imatch', 'imatch_multi', 'sharapova']
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Iterator, Mapping

#: name -> "module:Class" of its :class:`~neardup.keys.signature.Signature` (called with
#: the signer's canonicalizer, context)
FACTORIES: dict[str, str] = {
    "super": "neardup.signing.signatures.supershingles:SuperShingles",
    "mega": "neardup.signing.signatures.supershingles:MegaShingles",
    "minhash84": "neardup.signing.signatures.sketches:Sketch84",
    "minhash70": "neardup.signing.signatures.sketches:Sketch70",
    "imatch": "neardup.signing.signatures.imatch:IMatch",
    "imatch_multi": "neardup.signing.signatures.imatch:IMatchMulti",
    "descriptive_words": "neardup.signing.signatures.descriptive_words:DescriptiveWords",
    "text_stats": "neardup.signing.signatures.text_stats:TextStatistics",
    "anchor": "neardup.signing.signatures.anchor:Anchor",
}

#: old name -> name: the names signatures were stored under before they were named by method
ALIASES: dict[str, str] = {
    "sharapova": "descriptive_words",
    "kosinov": "text_stats",
}

#: every name ``Config.signatures`` accepts from the family, aliases included
NAMES: tuple[str, ...] = (*FACTORIES, *ALIASES)

#: signatures that need collection statistics (``neardup.signing.signatures.build_context``),
#: aliases included
NEEDS_CONTEXT = frozenset(
    n for n in NAMES if ALIASES.get(n, n) in {"imatch", "imatch_multi", "descriptive_words"}
)


def canonical_name(name: str) -> str:
    """The current name of a signature given by its current or old name."""
    return ALIASES.get(name, name)


def needs_context(name: str) -> bool:
    return name in NEEDS_CONTEXT


class Registry(Mapping[str, Callable[[Any, "dict | None"], Any]]):
    """name -> signature class, imported on first use; old names (``ALIASES``) look up the
    class of their new name but are not listed when iterating."""

    def __getitem__(self, name: str) -> Callable[[Any, dict | None], Any]:
        path = FACTORIES[canonical_name(name)]
        module, _, attr = path.partition(":")
        return getattr(importlib.import_module(module), attr)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and canonical_name(name) in FACTORIES

    def __iter__(self) -> Iterator[str]:
        return iter(FACTORIES)

    def __len__(self) -> int:
        return len(FACTORIES)


REGISTRY = Registry()
