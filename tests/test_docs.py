"""README.md and docs/*.md agree with the command line and with each other: every `neardup ...`
line in their code blocks names a command and options that exist, every relative link points
to a file (and heading) that exists, and the README stays a short page for users."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from neardup.cli import main as cli_main

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 300


def _code_lines(text: str):
    """Lines of fenced code blocks, continuation lines (ending in a backslash) joined."""
    inside, buf = False, ""
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            inside, buf = not inside, ""
            continue
        if not inside:
            continue
        if line.rstrip().endswith("\\"):
            buf += line.rstrip()[:-1] + " "
            continue
        yield buf + line
        buf = ""


def _neardup_invocations(text: str):
    """Each `neardup ...` invocation in a page's code blocks, as a token list after `neardup`."""
    for line in _code_lines(text):
        for part in re.split(r"&&|\|\||;|\|", line.split(" #")[0]):
            try:
                toks = shlex.split(part, comments=True)
            except ValueError:
                continue
            if toks and toks[0] == "neardup":
                yield toks[1:]
    for m in re.finditer(
        r"`(neardup [^`]+)`", text
    ):  # inline code too (a table cell escapes its pipes)
        try:
            toks = shlex.split(re.split(r"\\?\||>", m.group(1))[0])
        except ValueError:
            continue
        yield toks[1:]


def _options(cmd: click.Command) -> set[str]:
    ctx = click.Context(cmd)
    return {o for p in cmd.get_params(ctx) for o in (*p.opts, *p.secondary_opts)}


def _check(tokens: list[str]) -> list[str]:
    """Problems with one invocation: an unknown command, subcommand or option."""
    if not tokens or tokens[0].startswith("-") or tokens[0] == "..." or tokens[0].isupper():
        return []  # an option of the main command, or a placeholder for any command
    ctx = click.Context(cli_main)
    cmd = cli_main.get_command(ctx, tokens[0])
    if cmd is None:
        return [f"no command {tokens[0]!r}"]
    rest = tokens[1:]
    if isinstance(cmd, click.Group):
        sub = next((t for t in rest if not t.startswith("-")), None)
        if sub is None or sub.startswith("<") or "|" in sub:
            return []
        if cmd.get_command(ctx, sub) is None:
            return [f"no command {tokens[0]} {sub!r}"]
        cmd = cmd.get_command(ctx, sub)
    opts = _options(cmd)
    return [
        f"{tokens[0]}: no option {t.split('=')[0]!r}"
        for t in rest
        if t.startswith("-") and t != "-" and t.split("=")[0] not in opts
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_command_in_the_docs_exists(page: Path):
    text = page.read_text(encoding="utf-8")
    problems = [
        f"neardup {' '.join(t)}: {p}" for t in _neardup_invocations(text) for p in _check(t)
    ]
    assert not problems, "\n".join(problems)


def test_the_check_finds_a_wrong_option():
    assert _check(["clusters", "--no-such-option"]) == ["clusters: no option '--no-such-option'"]
    assert _check(["no-such-command"]) == ["no command 'no-such-command'"]
    assert _check(["dashboards", "export", "--target", "kibana"]) == []
    assert _check(["clusters", "--write", "--json"]) == []


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation out, spaces to hyphens."""
    h = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return h.replace(" ", "-")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page: Path):
    text = page.read_text(encoding="utf-8")
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+://", target) or target.startswith("mailto:"):
            continue
        path, _, frag = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(target)
            continue
        if frag and dest.suffix == ".md":
            anchors = {
                _anchor(m) for m in re.findall(r"^#+ (.+)$", dest.read_text(encoding="utf-8"), re.M)
            }
            if frag not in anchors:
                broken.append(target)
    assert not broken, f"{page.name}: broken links {broken}"


def test_readme_is_short_and_has_the_two_set_up_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    lines = list(_code_lines(text))
    assert any(
        "pip install ." in x
        and "neardup index examples/sample.jsonl" in x
        and "neardup clusters" in x
        for x in lines
    )
    assert any("pip install '.[test]'" in x and "python -m pytest" in x for x in lines)
    assert (ROOT / "examples" / "sample.jsonl").exists()


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "'.[test]'" in ci and "python -m pytest" in ci
