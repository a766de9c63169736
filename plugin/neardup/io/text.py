"""Plain text files read into documents, one document a file: UTF-8, or UTF-16 with a byte
order mark, unless an encoding is named; binary files and files over the limit refused."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterator

from ..signing.records import Document
from ..signing.validate import check_document
from .encodings import CORRUPT, UTF16, not_decodable, open_bytes
from .fields import MAX_CHARS, check_text
from .files import COMPRESSED, UNSUPPORTED, InputError, _not_document, _os_problem, _size


def read_text(
    path: Path, name: str, on_bytes: Callable[[int], None] | None, encoding: str | None = None
) -> Iterator[Document | InputError]:
    if path.suffix.lower() in UNSUPPORTED:
        yield InputError(str(path), _not_document(path))
        return
    data = _file_bytes(path)
    if isinstance(data, InputError):
        yield data
        return
    if on_bytes:
        on_bytes(_size(path))
    text = _file_text(data, encoding)
    problem = text if isinstance(text, _Unreadable) else check_text(text)
    if problem:
        yield InputError(str(path), problem)
        return
    plain = path.name[: -len(path.suffix)] if path.suffix.lower() in COMPRESSED else path.name
    doc = Document(id=name, text=text, title=Path(plain).stem, lang=None, fields={"path": name})
    problem = check_document(doc)
    yield InputError(str(path), problem) if problem else doc


def _file_bytes(path: Path) -> bytes | InputError:
    """The bytes of a text file (decompressed), up to one more than its limit; or why they
    cannot be read."""
    try:
        stream, raw = open_bytes(path)
        with raw, stream:
            return stream.read(4 * MAX_CHARS + 1)
    except OSError as e:
        return InputError(str(path), f"cannot read ({_os_problem(e)})")
    except CORRUPT as e:
        return InputError(str(path), f"compressed data is corrupt or truncated ({e})")


class _Unreadable(str):
    """Why a file's bytes are no text."""


def _file_text(data: bytes, encoding: str | None) -> str | _Unreadable:
    """The text of a text file's bytes in ``encoding`` (default UTF-8, or UTF-16 where they
    start with its byte order mark), or why they are none."""
    if len(data) > 4 * MAX_CHARS:
        return _Unreadable(
            f"file is larger than {4 * MAX_CHARS:,} bytes "
            f"(the limit is {MAX_CHARS:,} characters of text)"
        )
    utf16 = encoding is None and data.startswith(UTF16)
    if encoding is None and not utf16 and b"\x00" in data[:8192]:
        return _Unreadable("binary file (contains NUL bytes)")
    try:
        return data.decode(_text_codec(encoding, utf16))
    except UnicodeDecodeError as e:
        return _Unreadable(
            f"not valid UTF-16 (byte {e.start})" if utf16 else not_decodable(encoding, e)
        )


def _text_codec(encoding: str | None, utf16: bool) -> str:
    """The codec a text file is decoded with: ``encoding`` where given (UTF-8 with or without
    a byte order mark for "utf-8"), else UTF-16 where it starts with its byte order mark,
    else UTF-8."""
    if encoding and encoding != "utf-8":
        return encoding
    return "utf-16" if utf16 else "utf-8-sig"
