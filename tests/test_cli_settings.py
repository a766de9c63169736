"""One Config from the command line's flags: ``init`` and ``index`` take the same settings
and build the index's Config the same way."""

from __future__ import annotations

import json

from click.testing import CliRunner

from neardup.cli import main

FLAGS = [
    "--stem",
    "snowball",
    "--char-shingles",
    "4",
    "--seed",
    "7",
    "--bands-rows",
    "16x8",
    "--no-stopwords",
    "--lang",
    "en",
]
try:  # Persian segmentations other than the default anchors take hazm's steps (neardup[hazm])
    import hazm  # noqa: F401

    FA_SEGMENTATION = "join"
except ImportError:
    FA_SEGMENTATION = "anchors"


def _params(name: str) -> set[str]:
    from neardup.cli import indexing

    cmd = {"init": indexing.init_cmd, "index": indexing.index_cmd}[name]
    return {p.name for p in cmd.params}


def test_init_and_index_offer_every_setting():
    from neardup.cli.indexing import _CONFIG_OPTIONS

    assert set(_CONFIG_OPTIONS) <= _params("init") & _params("index")


def test_init_and_index_build_the_same_config(tmp_path):
    runner = CliRunner()
    (tmp_path / "a.txt").write_text("one two three four five six seven eight", encoding="utf-8")
    made = {}
    for cmd in ("init", "index"):
        db = str(tmp_path / f"{cmd}.db")
        flags = [*FLAGS, "--fa-segmentation", FA_SEGMENTATION]
        args = (
            [cmd, "-e", db, *flags, "--json"]
            if cmd == "init"
            else [cmd, str(tmp_path / "a.txt"), "-e", db, *flags, "-q", "--json"]
        )
        r = runner.invoke(main, args)
        assert r.exit_code == 0, r.output
        r = runner.invoke(main, ["info", "-e", db, "--json"])
        made[cmd] = json.loads(r.stdout)["config"]
    assert made["init"] == made["index"]
    c = made["init"]
    assert (
        c["stem"],
        c["shingle"],
        c["shingle_size"],
        c["seed"],
        c["bands"],
        c["rows"],
        c["stopwords"],
        c["default_lang"],
        c.get("fa_segmentation", "anchors"),
    ) == ("snowball", "char", 4, 7, 16, 8, False, "en", FA_SEGMENTATION)


def test_a_malformed_bands_rows_is_a_usage_error(tmp_path):
    r = CliRunner().invoke(main, ["init", "-e", str(tmp_path / "x.db"), "--bands-rows", "16by8"])
    assert r.exit_code == 2 and "--bands-rows" in r.output and "BxR" in r.output
