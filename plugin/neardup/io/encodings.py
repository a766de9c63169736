"""The character encodings documents are read in: the byte order marks told apart, an encoding
named by the user checked (:func:`check_encoding`), JSON Lines refused in an encoding whose line
ends are not single bytes, and what a byte that does not decode says; and the bytes of a file,
decompressed (:func:`open_bytes`)."""

from __future__ import annotations

import codecs
import lzma
import zlib
from pathlib import Path
from typing import IO

from .files import COMPRESSED

BOM = b"\xef\xbb\xbf"
UTF16 = (b"\xff\xfe", b"\xfe\xff")
#: What reading a file's bytes (compressed ones too) raises when they are damaged.
CORRUPT = (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError)


def check_encoding(encoding: str) -> str | None:
    """Why ``encoding`` cannot be used to read documents, or None."""
    try:
        info = codecs.lookup(encoding)
    except LookupError:
        return f"unknown encoding {encoding!r} (e.g. utf-8, cp1251, koi8-r, windows-1256, latin-1)"
    try:
        codecs.decode(b"", info.name)
    except (TypeError, ValueError, LookupError):
        return f"{encoding!r} is not a text encoding"
    return None


def line_encoding_problem(encoding: str | None) -> str | None:
    """Why JSON Lines in ``encoding`` cannot be read line by line, or None."""
    if encoding is None or "\n".encode(encoding) == b"\n" and "{".encode(encoding) == b"{":
        return None
    return (
        f"JSON Lines in {encoding} cannot be read (its line ends are not single bytes): "
        "convert the file to UTF-8"
    )


def not_decodable(encoding: str | None, e: UnicodeDecodeError) -> str:
    if encoding is None:
        return (
            f"not valid UTF-8 (byte {e.start}); if the file is in another encoding, name it "
            "with --encoding (e.g. --encoding cp1251)"
        )
    return f"not valid {encoding} (byte {e.start})"


def open_bytes(path: Path) -> tuple[IO[bytes], IO[bytes]]:
    """(stream of the file's bytes, raw file for progress); decompressed when compressed."""
    raw = open(path, "rb")
    opener = COMPRESSED.get(path.suffix.lower())
    if opener is None:
        return raw, raw
    return opener(raw), raw
