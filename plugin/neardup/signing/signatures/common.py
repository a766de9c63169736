"""Pieces every signature of the family shares: the :class:`Signature` protocol, 64-bit
digests (MD5 / SHA-1 / CRC32, as the source documents use them), positional keys and the
raw-text units (words, sentences) of the statistical signatures.

A signature is a small set of 64-bit keys stored as a keyword field. Two documents match
on a signature when they share at least ``min_match`` of its keys. Keys carry their
position (component number, super-shingle number, ...) mixed in, so one keyword field
can hold all of them and "share a key" always means "agree at the same position".
"""

from __future__ import annotations

import abc
import hashlib
import re
import zlib
from typing import Any, Callable, Mapping

import numpy as np

from ...sketches.hashing import U64, fmix64

_POS_SALT = np.uint64(0x9E3779B97F4A7C15)
WORD = re.compile(r"[^\W_]+")
#: sentence ends: . ! ? ellipsis, Arabic question mark, and blank lines
SENTENCE_END = re.compile(r"(?:[.!?\u2026\u061f\u06d4]+|\n\s*\n)")


def digest64(text: str, algo: str = "md5") -> int:
    """First 64 bits (big-endian) of MD5 or SHA-1 of the UTF-8 text; CRC32 for ``crc32``."""
    data = text.encode("utf-8")
    if algo == "crc32":
        return zlib.crc32(data)
    return int.from_bytes(hashlib.new(algo, data).digest()[:8], "big")


def mix_position(keys: np.ndarray, position: int | np.ndarray) -> np.ndarray:
    """fmix64(key XOR fmix64((pos+1) * C)): equal only for equal (position, key)."""
    pos = np.atleast_1d(np.asarray(position, dtype=U64)) + np.uint64(1)
    return fmix64(np.asarray(keys, dtype=U64) ^ fmix64(pos * _POS_SALT))


def words(text: str) -> list[str]:
    """Words as Kosinov defines them: maximal alphanumeric runs."""
    return WORD.findall(text)


def sentences(text: str) -> list[str]:
    """Non-empty sentences (split at . ! ? ... and blank lines) that contain a word."""
    return [s.strip() for s in SENTENCE_END.split(text) if WORD.search(s)]


def setting(config: Any, name: str, default: Any, kind: Callable[[Any], Any] = int) -> Any:
    """A signature setting from ``config.extra`` (or its default), converted by ``kind``."""
    extra: Mapping[str, Any] = dict(config.extra)
    if name not in extra:
        return default
    try:
        return kind(extra[name])
    except (TypeError, ValueError) as e:
        raise ValueError(
            f"setting extra.{name} = {extra[name]!r} is not a valid {kind.__name__}: {e}"
        ) from None


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
