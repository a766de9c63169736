"""What every signature is, built-in (:mod:`neardup.keys.builtin`) or of the family
(:mod:`neardup.signing.signatures`): a small set of 64-bit keys stored as a keyword field.
Two documents match on a signature when they share at least ``min_match`` of its keys.
Keys carry their position (component number, band number, ...) mixed in or, for the
positional built-ins, written beside them, so "share a key" always means "agree at the same
position".
"""

from __future__ import annotations

import abc

import numpy as np

from ..sketches.hashing import U64, fmix64

_POS_SALT = np.uint64(0x9E3779B97F4A7C15)


def mix_position(keys: np.ndarray, position: int | np.ndarray) -> np.ndarray:
    """fmix64(key XOR fmix64((pos+1) * C)): equal only for equal (position, key).

    >>> k = np.array([5, 5], dtype=np.uint64)
    >>> a, b = mix_position(k, 0), mix_position(k, np.array([0, 1]))
    >>> bool(a[0] == b[0]), bool(b[0] == b[1])
    (True, False)
    """
    pos = np.atleast_1d(np.asarray(position, dtype=U64)) + np.uint64(1)
    return fmix64(np.asarray(keys, dtype=U64) ^ fmix64(pos * _POS_SALT))


class Signature(abc.ABC):
    """One signature of the family.

    ``parts(prepared)`` gives the keys of each component (dict in ``components`` order);
    calling the signature gives all keys, each component's keys mixed with the component
    number. ``min_match``: keys two documents must share to be a candidate pair in the
    engine (verified exactly afterwards); ``equality_min_match``: the rule of the source
    document when the signature alone decides (no verification). ``component_min_match``
    holds per-component rules where they differ from 1.
    """

    name: str = ""
    components: tuple[str, ...] = ()
    min_match: int = 1
    equality_min_match: int = 1
    component_min_match: dict[str, int] = {}
    #: keys form a set compared by resemblance (anchor shingles), not a fixed vector
    set_like: bool = False

    @abc.abstractmethod
    def parts(self, p) -> dict[str, np.ndarray]:
        """Keys of each component of ``p`` (a :class:`~neardup.signing.signer.Prepared`)."""

    def __call__(self, p) -> np.ndarray:
        parts = self.parts(p)
        if len(self.components) == 1:
            return np.asarray(parts[self.components[0]], dtype=U64)
        out = [
            mix_position(np.asarray(parts[c], dtype=U64), i)
            for i, c in enumerate(self.components)
            if len(parts.get(c, ()))
        ]
        return np.concatenate(out) if out else np.empty(0, dtype=U64)
