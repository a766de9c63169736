"""Every numeric option of every command is bounded and finite, and hostile numbers are
refused with one clear usage line (exit status 2), never a traceback. The command tree is
walked, so an option added later is covered without naming it here."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from neardup.cli import main
from neardup.cli.options import MAX_RESULTS, Finite

from .test_hardening import eargs, good_docs, prepare

HOSTILE = (
    "nan",
    "-nan",
    "NaN",
    "inf",
    "-inf",
    "1e400",
    "-1e400",
    "99999999999999999999",
    "-99999999999999999999",
    "1e3x",
    "",
)


def _commands(cmd: click.Command = main, path: tuple[str, ...] = ()):
    ctx = click.Context(main)
    if isinstance(cmd, click.Group):
        for name in cmd.list_commands(ctx):
            yield from _commands(cmd.get_command(ctx, name), (*path, name))
    else:
        yield path, cmd


def _numeric_options():
    for path, cmd in _commands():
        for p in cmd.params:
            if (
                isinstance(p, click.Option)
                and not p.is_flag
                and isinstance(p.type, (click.types.IntParamType, click.types.FloatParamType))
            ):
                yield path, cmd, p


NUMERIC = list(_numeric_options())


def test_the_walk_finds_the_numeric_options():
    names = {(" ".join(path), p.opts[0]) for path, _, p in NUMERIC}
    assert {
        ("query", "--top-k"),
        ("search", "--size"),
        ("clusters", "--threshold"),
        ("index", "--batch-size"),
        ("info", "--timeout"),
        ("attach", "--interval"),
    } <= names
    assert len(NUMERIC) > 40


@pytest.mark.parametrize(
    "path,cmd,opt", NUMERIC, ids=[f"{' '.join(p)} {o.opts[0]}" for p, _, o in NUMERIC]
)
def test_every_numeric_option_is_bounded_finite_and_refuses_hostile_numbers(
    tmp_path, path, cmd, opt
):
    t = opt.type
    if isinstance(t, click.types.FloatParamType):
        assert isinstance(t, Finite), f"{opt.opts[0]} takes NaN: use cli.options.Finite"
    assert getattr(t, "min", None) is not None and getattr(t, "max", None) is not None, (
        f"{opt.opts[0]} is unbounded"
    )
    existing = tmp_path / "x.jsonl"
    existing.write_text('{"id": "a", "text": "b"}\n')
    filler = []
    for p in cmd.params:
        if isinstance(p, click.Argument) and p.required:
            filler.append(str(existing) if isinstance(p.type, click.Path) else "x")
    for value in HOSTILE + (str(t.max + 1) if isinstance(t, click.IntRange) else str(t.max * 2),):
        r = CliRunner().invoke(main, [*path, opt.opts[0], value, *filler])
        assert r.exit_code == 2, (value, r.output)
        assert "Invalid value for" in r.output and opt.opts[0] in r.output, (value, r.output)
        assert "Traceback" not in r.output and isinstance(r.exception, SystemExit)


@pytest.mark.parametrize(
    "args",
    [
        ["index", "--bands-rows", "99999999999999999999x1"],
        ["index", "--bands-rows", "axb"],
        ["index", "--bands-rows", "0x8"],
        ["evaluate", "--thresholds", "0.9,nan"],
        ["evaluate", "--thresholds", "2"],
    ],
)
def test_numbers_inside_text_options_are_checked_too(tmp_path, args):
    existing = tmp_path / "x.jsonl"
    existing.write_text('{"id": "a", "text": "b"}\n')
    r = CliRunner().invoke(main, [*args, str(existing)])
    assert r.exit_code == 2 and "Invalid value" in r.output, r.output


def test_the_largest_accepted_numbers_work_on_both_engines(engine_target, tmp_path):
    """The bounds are what both engines take: MAX_RESULTS is their default result window."""
    from neardup.api import NearDup

    target, opts = engine_target
    prepare(target, opts)
    nd = NearDup.open(target, create=True, **opts)
    nd.index(good_docs(30))
    nd.engine.refresh()
    nd.close()
    e = eargs(target, opts)
    for args in (
        ["query", "-k", str(MAX_RESULTS), "--id", "good-1"],
        ["search", "-n", str(MAX_RESULTS), "river"],
        ["search", "-n", str(MAX_RESULTS), "--dedupe", "river"],
        ["clusters", "--top", str(2**31 - 1), "--min-size", "1"],
        ["query", "-k", str(MAX_RESULTS), "-t", "1e-300", "--id", "good-1"],
    ):
        r = CliRunner().invoke(main, [*args, *e])
        assert r.exit_code == 0, (args, r.output)
        assert "Traceback" not in r.output
