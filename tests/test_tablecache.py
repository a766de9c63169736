"""Tables kept on disk (per-code-point tables, the LSH banding): made once, loaded after, never
trusted when damaged, and never needed: an unwritable or unreadable cache only costs the time
to make them."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from neardup.runtime import tablecache
from neardup.canonical import letters
from neardup.runtime.tablecache import cached_table


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NEARDUP_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _maker(calls: list[int]):
    def make() -> np.ndarray:
        calls.append(1)
        return np.arange(10, dtype=np.uint8)

    return make


def test_made_once_then_loaded(cache: Path):
    calls: list[int] = []
    first = cached_table("t", _maker(calls), letters.__file__)
    again = cached_table("t", _maker(calls), letters.__file__)
    assert calls == [1] and first.tolist() == again.tolist() == list(range(10))
    assert not again.flags.writeable
    assert [p.suffix for p in cache.iterdir()] == [".npy"]  # no temporary file left behind


def test_loaded_by_mapping_a_version_3_file(cache: Path):
    """The file's header is numpy's format 3.0 (parsed without a tokenizer pass) and the table
    is the mapped file, not a copy: a one-text ``neardup query`` reads only the pages it
    looks up."""
    calls: list[int] = []
    cached_table("t", _maker(calls), letters.__file__)
    (path,) = cache.iterdir()
    with path.open("rb") as f:
        assert np.lib.format.read_magic(f) == (3, 0)
    again = cached_table("t", _maker(calls), letters.__file__)
    assert calls == [1] and isinstance(again.base, np.memmap)


def test_a_changed_module_makes_a_new_table(cache: Path, tmp_path: Path):
    src = tmp_path / "mod.py"
    src.write_text("a = 1\n")
    calls: list[int] = []
    cached_table("t", _maker(calls), str(src))
    src.write_text("a = 22\n")  # another size (and time): another file
    cached_table("t", _maker(calls), str(src))
    assert calls == [1, 1] and len(list(cache.iterdir())) == 2


def test_a_damaged_file_is_made_again(cache: Path):
    calls: list[int] = []
    cached_table("t", _maker(calls), letters.__file__)
    (path,) = cache.iterdir()
    path.write_bytes(path.read_bytes()[:20])  # cut short
    assert cached_table("t", _maker(calls), letters.__file__).tolist() == list(range(10))
    assert calls == [1, 1]


def test_an_unwritable_cache_still_gives_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("NEARDUP_CACHE_DIR", str(blocker / "cache"))  # cannot be made
    calls: list[int] = []
    assert cached_table("t", _maker(calls), letters.__file__).tolist() == list(range(10))
    assert cached_table("t", _maker(calls), letters.__file__).tolist() == list(range(10))
    assert calls == [1, 1]


def test_cache_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.delenv("NEARDUP_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert tablecache.cache_dir() == tmp_path / "neardup"
    monkeypatch.setenv("NEARDUP_CACHE_DIR", str(tmp_path / "x"))
    assert tablecache.cache_dir() == tmp_path / "x"


def test_the_real_tables_load_equal_to_made(cache: Path):
    """A table read back from the cache is the table its predicate makes."""
    letters.code_point_table.cache_clear()
    try:
        made = letters.code_point_table(str.isdigit).copy()
        letters.code_point_table.cache_clear()
        loaded = letters.code_point_table(str.isdigit)
        assert any(p.name.startswith("str.isdigit-") for p in cache.iterdir())
        assert np.array_equal(made, loaded) and int(loaded.sum()) == sum(
            chr(c).isdigit() for c in range(0x110000)
        )
    finally:
        letters.code_point_table.cache_clear()
    assert os.environ["NEARDUP_CACHE_DIR"] == str(cache)


def test_the_banding_is_searched_once_then_read(cache: Path, monkeypatch: pytest.MonkeyPatch):
    """optimal_lsh keeps its search's answer on disk; read back, it is the search's answer."""
    from neardup.sketches import lsh

    searches: list[tuple] = []
    search = lsh.search_lsh
    monkeypatch.setattr(lsh, "search_lsh", lambda *a: searches.append(a) or search(*a))
    args = [(0.8, 128, 0.05, 0.95, 20, 0), (0.7, 64, 0.5, 0.5, 8, 2), (0.8, 128, 0.05, 0.95, 20, 0)]
    found = [lsh.optimal_lsh.__wrapped__(*a) for a in args]
    assert found == [search(*a) for a in args] == [(20, 5, 4), search(*args[1]), (20, 5, 4)]
    assert searches == args[:2] and len(list(cache.iterdir())) == 2  # the third came from disk
    with pytest.raises(ValueError, match="no banding"):
        lsh.optimal_lsh.__wrapped__(
            0.8, 4, 0.5, 0.5, 2, 3
        )  # an impossible min_match is refused, not kept
    assert len(list(cache.iterdir())) == 2
