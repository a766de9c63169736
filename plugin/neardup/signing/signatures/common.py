"""Pieces the signatures of the family share: 64-bit digests (MD5 / SHA-1 / CRC32, as the
source documents use them), positional keys, settings from ``Config.extra`` and the raw-text
units (words, sentences) of the statistical signatures. The base class they derive from,
:class:`~neardup.keys.signature.Signature`, is the built-in signatures' too.

A signature is a small set of 64-bit keys stored as a keyword field. Two documents match
on a signature when they share at least ``min_match`` of its keys. Keys carry their
position (component number, super-shingle number, ...) mixed in, so one keyword field
can hold all of them and "share a key" always means "agree at the same position".
"""

from __future__ import annotations

import hashlib
import re
import zlib
from typing import Any, Callable, Mapping


WORD = re.compile(r"[^\W_]+")
#: sentence ends: . ! ? ellipsis, Arabic question mark, and blank lines
SENTENCE_END = re.compile(r"(?:[.!?\u2026\u061f\u06d4]+|\n\s*\n)")


def digest64(text: str, algo: str = "md5") -> int:
    """First 64 bits (big-endian) of MD5 or SHA-1 of the UTF-8 text; CRC32 for ``crc32``."""
    data = text.encode("utf-8")
    if algo == "crc32":
        return zlib.crc32(data)
    return int.from_bytes(hashlib.new(algo, data).digest()[:8], "big")


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
