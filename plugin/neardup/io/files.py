"""Which files a list of paths names as documents, and of what kind: files by their
suffix (JSON Lines, CSV/TSV, Parquet, text; compressed with gzip, bzip2 or xz), directories
walked in name order, standard input (``-``); what cannot be read is an
:class:`InputError` naming the file."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from ..errors import InvalidInput

JSONL_SUFFIXES = {".jsonl", ".ndjson", ".json"}
CSV_SUFFIXES = {".csv": ",", ".tsv": "\t"}
PARQUET_SUFFIXES = {".parquet", ".pq"}
TEXT_SUFFIXES = {".txt", ".text", ".md", ".html", ".htm", ""}
COMPRESSED = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


#: compressed or archive formats neardup cannot read: named in the message instead
UNSUPPORTED = {
    ".zst": "zstd-compressed",
    ".zip": "a zip archive",
    ".tar": "a tar archive",
    ".tgz": "a tar archive",
    ".7z": "a 7-Zip archive",
    ".rar": "a RAR archive",
    ".lz4": "lz4-compressed",
    ".br": "brotli-compressed",
}


STDIN = "-"


@dataclass
class InputError(InvalidInput):
    """A record or file neardup cannot read; ``where`` is ``file`` or ``file:line``.

    ``fatal`` False marks an entry of a directory that was left out (not a document file):
    it is reported through ``on_error`` and never stops a run.
    """

    where: str
    problem: str
    fatal: bool = True

    def __str__(self) -> str:
        return f"{self.where}: {self.problem}"


def kind_of(path: Path) -> str | None:
    """``"jsonl"``, ``"csv"``, ``"parquet"``, ``"text"`` or None (not a document file),
    looking through a compression suffix."""
    name = path.name.lower()
    if Path(name).suffix in PARQUET_SUFFIXES:
        return "parquet"
    if Path(name).suffix in COMPRESSED:
        name = name[: -len(Path(name).suffix)]
    suffix = Path(name).suffix
    if suffix in JSONL_SUFFIXES:
        return "jsonl"
    if suffix in CSV_SUFFIXES:
        return "csv"
    return "text" if suffix in TEXT_SUFFIXES else None


def iter_sources(paths: Iterable[str | os.PathLike]) -> Iterator[tuple[Path | InputError, str]]:
    """:func:`iter_files`, each file with the name its documents' ids start from: its path
    relative to the directory named (``/``-separated), or its own name when it was named."""
    for p in paths:
        if str(p) == STDIN:
            yield Path(STDIN), "stdin"
            continue
        root = Path(p)
        for f in iter_files([p]):
            if isinstance(f, InputError) or f == root:
                yield f, f.name if isinstance(f, Path) else ""
            else:
                yield f, f.relative_to(root).as_posix()


def iter_files(paths: Iterable[str | os.PathLike]) -> Iterator[Path | InputError]:
    """Files named, and document files under directories named (in name order); every
    entry of a directory that is left out, and every path that cannot be read, comes out as
    an :class:`InputError` in its place. ``-`` (standard input) comes out as ``Path("-")``."""
    for p in paths:
        if str(p) == STDIN:
            yield Path(STDIN)
            continue
        p = Path(p)
        try:
            st = p.stat()
        except OSError as e:
            yield InputError(str(p), _os_problem(e, "no such file or directory"))
            continue
        if stat.S_ISDIR(st.st_mode):
            yield from _walk(p)
        else:
            yield p


def _walk(root: Path) -> Iterator[Path | InputError]:
    """Entries under ``root`` in path order (a folder's entries by name, each subfolder where
    its name falls), as :func:`sorted` of ``rglob`` gave them."""
    stack: list[Iterator[os.DirEntry]] = []
    problem = _scan(root, stack)
    if problem:
        yield problem
    while stack:
        e = next(stack[-1], None)
        if e is None:
            stack.pop()
            continue
        path = Path(e.path)
        try:
            item = _entry(e, path, stack)
        except OSError as err:
            item = InputError(str(path), f"cannot read ({_os_problem(err)})")
        if item is not None:
            yield item


def _entry(
    e: os.DirEntry, path: Path, stack: list[Iterator[os.DirEntry]]
) -> Path | InputError | None:
    """Directory entry ``e`` (at ``path``) as :func:`_walk` gives it: a file to read, or why
    it is left out; a directory is pushed on ``stack`` to be walked (None, or why it cannot
    be)."""
    if e.name.startswith("."):
        return InputError(
            str(path),
            f"hidden {'directory' if e.is_dir(follow_symlinks=False) else 'file'} (not read)",
            fatal=False,
        )
    if e.is_dir(follow_symlinks=False):
        return _scan(path, stack)
    if e.is_symlink() and e.is_dir():
        return InputError(str(path), "symbolic link to a directory (not followed)", fatal=False)
    if not e.is_file():
        return InputError(
            str(path),
            "broken symbolic link" if e.is_symlink() else "not a regular file",
            fatal=False,
        )
    if kind_of(path) is None:
        return InputError(str(path), _not_document(path), fatal=False)
    return path


def _scan(d: Path, stack: list[Iterator[os.DirEntry]]) -> InputError | None:
    """Push the entries of folder ``d`` (sorted by name) onto ``stack``; or why it cannot be
    read."""
    try:
        with os.scandir(d) as it:
            stack.append(iter(sorted(it, key=lambda e: e.name)))
    except OSError as e:
        return InputError(str(d), f"cannot read directory ({_os_problem(e)})")
    return None


def _not_document(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in UNSUPPORTED:
        return f"{UNSUPPORTED[suffix]} file, which neardup does not read (extract it first)"
    known = sorted(JSONL_SUFFIXES | set(CSV_SUFFIXES) | PARQUET_SUFFIXES | TEXT_SUFFIXES - {""})
    return (
        f"not a JSONL, CSV, Parquet or text file (suffix {path.suffix or 'none'!r}; "
        f"reads {', '.join(known)}, files without a suffix, "
        f"and those compressed with {', '.join(sorted(COMPRESSED))})"
    )


def _os_problem(e: OSError, missing: str | None = None) -> str:
    if missing and isinstance(e, FileNotFoundError):
        return missing
    return e.strerror or str(e)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def total_bytes(paths: Iterable[str | os.PathLike]) -> int:
    """Bytes of the files :func:`~neardup.io.reading.read_documents` reads (compressed size;
    standard input counts 0)."""
    return sum(_size(f) for f in iter_files(paths) if isinstance(f, Path) and str(f) != STDIN)
