"""Hardening: bad input, faults and hostile data lose nothing, leak nothing, crash nothing.

One test (or one parametrized family) per class of the issue, on both engines where the
class concerns an engine (``engine_target``); each checks more instances than the issue
lists.
"""

from __future__ import annotations

import base64
import bz2
import gzip
import json
import lzma
import math
import os
import random
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st

from neardup.api import NearDup
from neardup.cli import main
from neardup.cli.output import clean, json_text, safe
from neardup.io.reading import read_documents
from neardup.io.files import InputError
from neardup.runtime.redact import add_secret, clear_secrets, redact
from neardup.signing.records import Document
from neardup.signing.validate import MAX_ID_BYTES, check_document, check_documents

WORDS = (
    "river water report committee northern province annual quality school teacher market "
    "price train station winter harvest bridge museum library garden festival doctor hospital "
    "village mountain forest ocean island engine bakery painter guitar theatre harbour lantern "
    "meadow orchard pepper saddle tunnel violin walnut"
).split()


def good_text(i: int) -> str:
    rnd = random.Random(i)
    return " ".join(rnd.choice(WORDS) + str(rnd.randrange(40)) for _ in range(40))


def good_docs(n: int = 49) -> list[Document]:
    return [Document(f"good-{i}", good_text(i), f"title {i}") for i in range(n)]


def run(*args: object, input: bytes | str | None = None):
    """The command line, on a terminal wide enough that table cells hold each value on one line."""
    return CliRunner().invoke(
        main, [str(a) for a in args], input=input, catch_exceptions=False, env={"COLUMNS": "400"}
    )


def eargs(target: str, opts: dict) -> list[str]:
    return ["-e", target] + (["--index", opts["index"]] if "index" in opts else [])


def prepare(target: str, opts: dict) -> None:
    """An empty index on the engine (HTTP indices without the ingest pipeline: osmem has none)."""
    if "index" in opts:
        r = run("init", *eargs(target, opts), "--no-pipeline")
        assert r.exit_code == 0, r.output


def write_jsonl(path: Path, records: list) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records),
        encoding="utf-8",
    )
    return path


# -- Security: credentials ------------------------------------------------------------------------
def test_redact_masks_every_form_of_credential():
    clear_secrets()
    cases = {
        "https://user:password@host:9200": "https://user:***@host:9200",
        "error at http://elastic:s3cr@t@10.0.0.1:9200/idx (GET /)": (
            "error at http://elastic:***@10.0.0.1:9200/idx (GET /)"
        ),
        "cannot reach 'https://admin:p%40ss@es.example.com/'": "cannot reach 'https://admin:***@es.example.com/'",
        "https://ghp_tok3n@github.com/x": "https://***@github.com/x",
        "http://h:9200/_search?api_key=abc123&size=1": "http://h:9200/_search?api_key=***&size=1",
        "https://h/x?token=t0k&access_token=a&X-Amz-Signature=f00": (
            "https://h/x?token=***&access_token=***&X-Amz-Signature=***"
        ),
        "headers {'Authorization': 'Basic ZWxhc3RpYzpzM2NyZXQ='}": (
            "headers {'Authorization': 'Basic ***'}"
        ),
        "authorization: ApiKey a2V5LWlkOmtleS1zZWNyZXQ=": "authorization: ApiKey ***",
        "no secret in http://host:9200/index or user@example.com": (
            "no secret in http://host:9200/index or user@example.com"
        ),
    }
    for raw, want in cases.items():
        assert redact(raw) == want, raw
    add_secret("hunter2-pw")
    try:
        assert (
            redact("client config {'basic_auth': ('elastic', 'hunter2-pw')}")
            == "client config {'basic_auth': ('elastic', '***')}"
        )
    finally:
        clear_secrets()


_PARAM_PIECES = [
    "token", "TOKEN", "api_key", "api-Key", "apikey", "client_secret", "x-amz-", "Signature",
    "sig", "auth", "_", "-", "=", "==", "&", ";", " ", "a", "b9", "\u212a", "K", "\u017fecret",
    "secret", "pwd", "passwd", "x", "?", "\u0130",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PARAM_PIECES), max_size=40).map("".join))
@example("token=;x=abc").via("a name with no value before a parameter that is none")
@example("x-amz-credential=k auth_token=a=b&sig=c").via("the longest name; = in a value")
def test_secret_parameters_are_masked_as_the_reference_regex_masks_them(text):
    """``mask_params`` (a name looked for before each "=") equals ``_PARAM.sub`` (the regex
    tried at every position)."""
    from neardup.runtime.redact import _PARAM, MASK, mask_params

    assert mask_params(text) == _PARAM.sub(lambda m: m.group("name") + MASK, text)


@pytest.mark.http
def test_credentials_are_never_printed(fault_proxy, tmp_path):
    secret = "s3cret-pw"
    url = fault_proxy.url.replace("http://", f"http://elastic:{secret}@")
    fault_proxy.require_auth = "Basic " + base64.b64encode(f"elastic:{secret}".encode()).decode()
    e = ["-e", url, "--index", "t"]
    src = write_jsonl(
        tmp_path / "d.jsonl", [{"id": f"d{i}", "text": good_text(i)} for i in range(5)]
    )
    outputs = {
        "init": run("init", *e, "--no-pipeline"),
        "init --json": run("init", *e, "--no-pipeline", "--json"),
        "index": run("index", src, *e, "-q"),
        "index --json": run("index", src, *e, "-q", "--json"),
        "info": run("info", *e),
        "info --json": run("info", *e, "--json"),
        "retag": run("retag", *e, "-q"),
        "retag --json": run("retag", *e, "-q", "--json"),
        "query error": run("query", "--id", "missing", *e),
        "report": run("report", *e, "-o", tmp_path / "r.html", "-q"),
        "engine error": run(
            "info",
            "-e",
            fault_proxy.url.replace("http://", "http://elastic:wrong-pw@"),
            "--index",
            "t",
        ),
        "password option": run(
            "info",
            "-e",
            fault_proxy.url,
            "--index",
            "t",
            "--user",
            "elastic",
            "--password",
            "wrong-pw2",
        ),
        "api key error": run(
            "info", "-e", fault_proxy.url, "--index", "t", "--api-key", "a2V5OnNlY3JldA=="
        ),
        "bad index name": run("info", "-e", url, "--index", "Bad Name"),
    }
    for what, r in outputs.items():
        for s in (secret, "wrong-pw", "a2V5OnNlY3JldA=="):
            assert s not in r.output, (what, r.output)
    # the engine takes credentials out of the URL (basic auth): where it is named, it is named
    # without them
    host = fault_proxy.url.removeprefix("http://")
    for what in ("index", "info", "retag", "query error", "init"):
        assert host in outputs[what].output and "elastic:" + secret not in outputs[what].output, (
            what,
            outputs[what].output,
        )
    assert json.loads(outputs["index --json"].stdout)["index"].startswith(fault_proxy.url)
    assert json.loads(outputs["info --json"].stdout)["index"].startswith(fault_proxy.url)
    assert (
        outputs["engine error"].exit_code == 1 and "wrong-pw" not in outputs["engine error"].output
    )
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert secret not in html and host in html


def test_an_unexpected_error_is_printed_redacted(tmp_path, monkeypatch):
    """The last boundary: an exception no command expected still prints no credentials."""
    from neardup import api

    def boom(*a, **k):
        raise RuntimeError(
            "client said: cannot use https://elastic:t0p-secret@es:9200 (api_key=k3y)"
        )

    monkeypatch.setattr(api.NearDup, "open", classmethod(lambda cls, *a, **k: boom()))
    r = run("info", "-e", tmp_path / "x.db")
    assert r.exit_code == 1 and "t0p-secret" not in r.output and "k3y" not in r.output
    assert "elastic:***@es:9200" in r.output and "RuntimeError" in r.output


# -- Security: data printed literally -------------------------------------------------------------
# id -> title (ids may not hold control characters: those are refused, and the refusal printed)
HOSTILE = {
    "markup-[bold]x[/]": "[bold]red[/] [link=https://evil.example]click[/link] [/]",
    "link-[link=https://evil.example]x[/link]": (
        "\x1b[31mred\x1b[0m \x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\ \x9b31m"
    ),
    "bidi-\u202egnp.exe": "\x1b]0;pwned\x07 \u2066abc\u2069 \u0007bell \x08\x08back",
    "emoji-:rocket:": "launch :rocket: now :warning:",
}


def test_output_for_a_terminal_is_cleaned_and_for_a_pipe_kept(monkeypatch):
    import sys

    from neardup.cli.output import terminal_text

    data = "id,title\nbidi-\u202egnp.exe,\x1b]0;x\x07 https://u:pw@h\n"
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False, raising=False)
    assert terminal_text(data) == data.replace("u:pw@", "u:***@")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    assert terminal_text(data) == "id,title\nbidi-\\u202egnp.exe,\\x1b]0;x\\x07 https://u:***@h\n"


def test_clean_and_safe_make_data_inert():
    s = clean("a\x1b]0;t\x07b\x9b1m\u202ec\u2028d\ud800e\tf\ng")
    assert not any(c in s for c in "\x1b\x07\x9b\u202e\u2028\ud800") and "\tf\ng" in s
    assert "\\x1b]0;t\\x07" in s and "\\u202e" in s
    assert safe("[bold]x[/]") == "\\[bold]x\\[/]"
    j = json_text({"t": "\x1b\x9b\u202e\ud800 https://u:p@h"}, indent=None)
    assert json.loads(j) == {"t": "\x1b\x9b\u202e\ud800 https://u:***@h"}
    assert not any(c in j for c in "\x1b\x9b\u202e")


def test_hostile_ids_titles_and_texts_are_printed_literally(engine_target, tmp_path):
    target, opts = engine_target
    prepare(target, opts)
    base = (
        good_text(1) + " " + good_text(2)
    )  # (long enough that the hostile titles' words keep each copy above t)
    recs = [
        {"id": i, "title": t, "text": base + (" extra words" if n else "") + " " + t}
        for n, (i, t) in enumerate(HOSTILE.items())
    ]
    recs.append({"id": "esc-\x1b]0;pwned\x07", "title": "[bold]", "text": base})
    src = write_jsonl(tmp_path / "h.jsonl", recs)
    e = eargs(target, opts)
    outs = [
        run("index", src, *e, "-q", "--skip-bad"),
        run("query", base, *e),
        run("query", "--id", "markup-[bold]x[/]", *e),
        run("clusters", *e),
        run("clusters", *e, "--csv"),
        run("search", "river", *e, "-n", "5"),
        run("search", "red", *e, "--dedupe", "-t", "0.5"),
        run("info", *e),
        run("compare", "--ids", "markup-[bold]x[/]", "bidi-\u202egnp.exe", *e),
    ]
    for n, r in enumerate(outs):
        assert r.exit_code == 0, r.output
        if (
            n != 4
        ):  # CSV into a pipe or file keeps the data exactly (on a terminal it is cleaned: below)
            assert not any(c in r.output for c in "\x1b\x07\x9b\u202e\u2066\x08"), r.output
    assert "bidi-\u202egnp.exe" in outs[4].output
    assert f"h.jsonl:{len(HOSTILE) + 1}: id contains a control character (U+001B" in " ".join(
        outs[0].output.split()
    )
    table = outs[1].output  # ids and titles shown as written (in folded table cells)
    assert (
        "markup-[bold]x[/]" in table and "[bold]red[/]" in table and "bidi-\\u202egnp.exe" in table
    )
    assert "\\x1b]0;pwned\\x07" in table and "[link=https://evil.example]" in table
    assert (
        "emoji-:rocket:" in table
        and "launch :rocket: now :warning:" in table
        and "\U0001f680" not in table
    )
    assert "[bold]" in outs[5].output + outs[6].output
    js = json.loads(run("query", base, *e, "--json").stdout)
    assert {m["id"] for m in js} == set(HOSTILE)  # --json keeps the data exactly
    assert {m["title"] for m in js} == set(HOSTILE.values())


# -- Losing good documents because of one bad one -------------------------------------------------
def _deep(n: int) -> dict:
    d: dict = {}
    for _ in range(n):
        d = {"x": d}
    return d


BAD = {
    "id-too-long": Document("x" * (MAX_ID_BYTES + 1), good_text(900)),
    "id-too-long-utf8": Document("ж" * (MAX_ID_BYTES // 2 + 1), good_text(901)),
    "id-lone-surrogate": Document("bad\ud800id", good_text(902)),
    "id-control": Document("bad\nid", good_text(903)),
    "id-empty": Document("", good_text(904)),
    "id-not-string": Document(17, good_text(905)),  # type: ignore[arg-type]
    "text-lone-surrogate": Document("bad-text", good_text(906) + " \udc80"),
    "text-not-string": Document("bad-text-type", b"bytes"),  # type: ignore[arg-type]
    "title-lone-surrogate": Document("bad-title", good_text(907), "t\ud83d"),
    "field-lone-surrogate": Document("bad-field", good_text(908), fields={"site": "a\udfffb"}),
    "field-key-surrogate": Document("bad-key", good_text(909), fields={"k\ud800": 1}),
    "field-empty-key": Document("bad-empty-key", good_text(910), fields={"": 1}),
    "field-nan": Document("bad-nan", good_text(911), fields={"score": math.nan}),
    "field-infinity": Document("bad-inf", good_text(912), fields={"n": [1, math.inf]}),
    "field-too-deep": Document("bad-deep", good_text(913), fields={"d": _deep(30)}),
    "field-not-json": Document("bad-obj", good_text(914), fields={"o": object()}),
    "field-dotted-key": Document("bad-dots", good_text(916), fields={"a": {"b..c": 1}}),
    "field-huge-int": Document("bad-int", good_text(917), fields={"n": 2**64}),
    "lang-not-string": Document("bad-lang", good_text(915), lang=["en"]),  # type: ignore[arg-type]
}


def test_validator_names_the_problem():
    for kind, doc in BAD.items():
        assert check_document(doc), kind
    assert (
        check_document(
            Document(
                id="ok-ид-" + "ж" * 200,
                text="text",
                title="title",
                lang="en",
                fields={"a": [1, 2.5, None, True, {"b": "c"}]},
            )
        )
        is None
    )
    assert "512" in check_document(BAD["id-too-long"]) and "surrogate" in check_document(
        BAD["text-lone-surrogate"]
    )


def test_the_batch_check_is_the_check_of_each_document():
    """check_documents (the ids checked together where all are plain) says what
    check_document says of each document, in a batch of good ones and one bad one of each
    kind, and in batches whose ids all pass (only the text, title, language or fields bad)."""
    good = [
        Document("ok-1", "text"),
        Document(
            id="ok-2", text="текст", title="заголовок", lang="ru", fields={"a": [1, {"b": "c"}]}
        ),
        Document("ok-3", "t", fields=None),
    ]
    for kind, bad in BAD.items():
        for docs in (good + [bad], [bad] + good):
            for flags in ([True] * len(docs), [False] * len(docs)):
                assert check_documents(docs, flags) == [
                    check_document(d, text_has_no_surrogate=f)
                    for d, f in zip(docs, flags, strict=True)
                ], kind
    assert check_documents(good, [False] * 3) == [None] * 3 and check_documents([], []) == []
    odd = Document("ok-4", "t", fields=[])  # type: ignore[arg-type]
    assert check_documents([odd], [True]) == [check_document(odd)] and check_document(odd)


@pytest.mark.parametrize("kind", sorted(BAD))
def test_one_bad_document_costs_only_itself(engine_target, kind):
    target, opts = engine_target
    docs = good_docs()
    docs.insert(20, BAD[kind])
    with NearDup.open(target, **opts) as nd:
        report = nd.index(docs, batch_size=500)
        nd.engine.refresh()
        assert report.indexed == 49 and nd.count() == 49
        assert len(report.failed) == 1 and report.failed[0].reason
        assert set(nd.engine.get([d.id for d in docs[:20] + docs[21:]])) == {
            d.id for d in docs if d is not BAD[kind]
        }


BAD_RECORDS = [
    '{"id": "%s", "text": "t"}' % ("x" * 600),
    '{"id": "bad\\ud800", "text": "some text"}',
    '{"id": "bad-text", "text": "text \\udc80 here"}',
    '{"id": "bad-text-upper", "text": "text \\uDFFF here"}',
    '{"id": "bad-title", "title": "\\ud83d", "text": "text"}',
    '{"id": "bad\\u0007bell", "text": "text"}',
    '{"id": true, "text": "text"}',
    '{"id": 1.5, "text": "text"}',
    '{"id": null, "text": "text"}',
    '{"id": ["a"], "text": "text"}',
    '{"id": "nan", "text": "text", "score": NaN}',
    '{"id": "inf", "text": "text", "score": -Infinity}',
    '{"id": "deep", "text": "text", "d": ' + "[" * 30 + "]" * 30 + "}",
    '{"id": "very-deep", "text": "t", "d": ' + "[" * 100_000 + "]" * 100_000 + "}",
    '{"id": "huge-int", "text": "t", "n": ' + "9" * 5000 + "}",
    '{"id": "big-int", "text": "t", "n": 18446744073709551616}',
    '{"id": "inf-literal", "text": "t", "n": 1e999}',
    '{"id": "dots", "text": "t", "a.": 1}',
    '{"id": "", "text": "t"}',
    "{" * 100_000,
    '{"id": "title-obj", "title": {"a": 1}, "text": "text"}',
    '{"id": "lang-list", "lang": ["en"], "text": "text"}',
    '{"id": "no-text"}',
    '{"id": "empty", "text": "   "}',
    "not json",
    '"a string"',
]


def test_every_bad_record_is_reported_with_file_and_line_and_the_good_ones_stored(
    engine_target, tmp_path
):
    target, opts = engine_target
    prepare(target, opts)
    good = [{"id": f"g{i}", "text": good_text(i)} for i in range(49)]
    lines: list = good[:10] + BAD_RECORDS + good[10:]
    src = write_jsonl(tmp_path / "mixed.jsonl", lines)
    (tmp_path / "raw.jsonl").write_bytes(
        src.read_bytes().replace(b'"g3",', b'"g3\xff",')
    )  # invalid UTF-8
    r = run("index", tmp_path / "raw.jsonl", *eargs(target, opts), "-q", "--skip-bad", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    skipped = out["skipped_records"]
    assert out["indexed"] == 48 and out["documents"] == 48 and out["failed"] == []
    bad_lines = {
        f"{tmp_path / 'raw.jsonl'}:{n}" for n in [4] + list(range(11, 11 + len(BAD_RECORDS)))
    }
    assert {s.rsplit(": ", 1)[0].split(": ")[0] for s in skipped} == bad_lines, skipped
    stop = run("index", src, *eargs(target, opts), "-q")
    assert stop.exit_code == 1 and f"{src}:11:" in stop.output and "--skip-bad" in stop.output
    assert "Traceback" not in stop.output


def test_documents_an_engine_refuses_are_named_by_file_and_line(
    engine_target, tmp_path, monkeypatch
):
    """Refused after reading (an HTTP engine's mapping conflict): the rest is stored and the
    refused one named by its file and line, in the table and in --json."""
    from neardup.engines.base import Failure
    from neardup.engines.embedded import EmbeddedEngine

    target, opts = engine_target
    prepare(target, opts)
    if "index" not in opts:  # SQLite stores any JSON value: refuse like a mapping conflict would
        real = EmbeddedEngine.put

        def put(self, docs, tags=None, prepared=None):
            bad = [s for s in docs if isinstance(s.doc.fields.get("x"), dict)]
            return real(self, [s for s in docs if s not in bad], tags, prepared=prepared) + [
                Failure(s.id, "mapping conflict (test)") for s in bad
            ]

        monkeypatch.setattr(EmbeddedEngine, "put", put)
    recs = [{"id": f"g{i}", "text": good_text(i), "x": "a string"} for i in range(10)]
    recs.insert(5, {"id": "conflict", "text": good_text(50), "x": {"an": "object"}})
    src = write_jsonl(tmp_path / "c.jsonl", recs)
    r = run("index", src, *eargs(target, opts), "-q", "--json")
    assert r.exit_code == 2, r.output
    out = json.loads(r.stdout)
    assert out["documents"] == 10 and [(f["id"], f["where"]) for f in out["failed"]] == [
        ("conflict", f"{src}:6")
    ]
    r = run("index", src, *eargs(target, opts), "-q")
    assert r.exit_code == 2 and f"failed {src}:6 conflict:" in " ".join(r.output.split())


# -- Input people actually have -------------------------------------------------------------------
def test_bom_crlf_compressed_files_stdin_and_folders(engine_target, tmp_path):
    target, opts = engine_target
    prepare(target, opts)
    d = tmp_path / "in"
    (d / "sub").mkdir(parents=True)
    (d / ".git").mkdir()
    (d / ".git" / "HEAD").write_text("ref")
    rec = lambda i: json.dumps({"id": f"r{i}", "text": good_text(i)})  # noqa: E731
    (d / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + (rec(0) + "\r\n" + rec(1) + "\r\n").encode())
    (d / "sub" / "a.jsonl.gz").write_bytes(gzip.compress((rec(2) + "\n" + rec(3) + "\n").encode()))
    (d / "sub" / "b.ndjson.bz2").write_bytes(bz2.compress((rec(4) + "\n").encode()))
    (d / "sub" / "c.json.xz").write_bytes(lzma.compress((rec(5) + "\n").encode()))
    (d / "page.html.gz").write_bytes(
        gzip.compress(("\ufeff<p>" + good_text(6) + "</p>\r\n").encode())
    )
    (d / "notes.txt").write_bytes(b"\xef\xbb\xbf" + good_text(7).encode() + b"\r\n")
    (d / "windows.txt").write_bytes(("\ufeff" + good_text(8) + "\r\n").encode("utf-16-le"))
    (d / "photo.png").write_bytes(b"\x89PNG")
    (d / "data.zip").write_bytes(b"PK")
    (d / ".hidden.jsonl").write_text(rec(99))
    e = eargs(target, opts)
    r = run("index", d, *e, "-q", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["indexed"] == 9 and out["skipped_records"] == []
    left_out = "\n".join(out["skipped_files"])
    for name in (".git", "photo.png", "data.zip", ".hidden.jsonl"):
        assert str(d / name) in left_out, name
    assert "zip archive" in left_out and len(out["skipped_files"]) == 4
    plain = run("index", d, *e, "-q")
    assert "skipped file" in plain.output and "photo.png" in plain.output
    r = run(
        "index",
        "-",
        *e,
        "-q",
        "--json",
        input=("\ufeff" + rec(10) + "\r\n" + rec(11) + "\n").encode(),
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["indexed"] == 2
    with NearDup.open(target, create=False, **opts) as nd:
        got = nd.engine.get(
            ["r0", "r1", "r2", "r5", "r10", "r11", "page.html.gz", "notes.txt", "windows.txt"],
            text=True,
        )
        assert len(got) == 9 and nd.count() == 11  # (text files: ids relative to the folder named)
        assert got["page.html.gz"].title == "page" and got["windows.txt"].text.startswith(
            good_text(8)[:20]
        )
    arr = write_jsonl(tmp_path / "array.json", ["[", rec(40) + ",", rec(41), "]"])
    one = write_jsonl(tmp_path / "one-line-array.json", ["[" + rec(42) + ", " + rec(43) + "]"])
    pretty = write_jsonl(tmp_path / "pretty.jsonl", ["{", '  "id": "p",', '  "text": "t"', "}"])
    for f, what in (
        (arr, "one JSON array"),
        (one, "one JSON array"),
        (pretty, "span several lines"),
    ):
        r = run("index", f, *e, "-q")
        assert r.exit_code == 1 and f"{f}:1: " in r.output and what in " ".join(r.output.split()), (
            r.output
        )
        r = run("index", f, *e, "-q", "--skip-bad", "--json")
        assert (
            len(json.loads(r.stdout)["skipped_records"]) == 1
        )  # one report for the file, not one per line
    u16 = tmp_path / "u16.jsonl"
    u16.write_bytes(("\ufeff" + rec(30) + "\n").encode("utf-16-le"))
    r = run("index", u16, *e, "-q")
    assert r.exit_code == 1 and f"{u16}:1: the file is UTF-16" in " ".join(r.output.split())
    bad_gz = tmp_path / "cut.jsonl.gz"
    bad_gz.write_bytes(gzip.compress((rec(20) + "\n" + rec(21) + "\n").encode() * 200)[:-40])
    r = run("index", bad_gz, *e, "-q")
    assert r.exit_code == 1 and f"{bad_gz}:" in r.output and "corrupt or truncated" in r.output


def test_ids_are_strings_or_integers():
    docs = []
    errors: list[InputError] = []
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        p = write_jsonl(
            Path(tmp) / "ids.jsonl",
            [
                {"id": 7, "text": "a"},
                {"id": -1, "text": "b"},
                {"id": "s", "text": "c"},
                {"id": True, "text": "d"},
                {"id": False, "text": "e"},
                {"id": 2.0, "text": "f"},
                {"text": "default id"},
            ],
        )
        docs = list(read_documents([p], skip_bad=True, on_error=errors.append))
    assert [d.id for d in docs] == ["7", "-1", "s", "ids.jsonl:7"]
    assert [e.where.rsplit(":", 1)[1] for e in errors] == ["4", "5", "6"]
    assert all("string or an integer" in e.problem for e in errors)


def _unreadable(monkeypatch, path: Path) -> None:
    """``path`` cannot be opened (chmod is not enough when the tests run as root)."""
    os.chmod(path, 0)
    real = open

    def guarded(file, *a, **k):
        if os.fspath(file) == str(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real(file, *a, **k)

    monkeypatch.setattr("builtins.open", guarded)


def test_unreadable_files_are_named_and_skipped_with_skip_bad(engine_target, tmp_path, monkeypatch):
    target, opts = engine_target
    prepare(target, opts)
    d = tmp_path / "in"
    d.mkdir()
    write_jsonl(d / "a.jsonl", [{"id": "a", "text": good_text(1)}])
    write_jsonl(d / "b.jsonl", [{"id": "b", "text": good_text(2)}])
    write_jsonl(d / "c.jsonl", [{"id": "c", "text": good_text(3)}])
    _unreadable(monkeypatch, d / "b.jsonl")
    e = eargs(target, opts)
    r = run("index", d, *e, "-q")
    assert (
        r.exit_code == 1
        and f"{d / 'b.jsonl'}: cannot read (Permission denied)" in r.output
        and "Traceback" not in r.output
    )
    r = run("index", d, *e, "-q", "--skip-bad", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["documents"] == 2 and out["skipped_records"] == [
        f"{d / 'b.jsonl'}: cannot read (Permission denied)"
    ]


def test_unreadable_folder_is_named(tmp_path, monkeypatch):
    d = tmp_path / "in"
    (d / "locked").mkdir(parents=True)
    write_jsonl(d / "a.jsonl", [{"id": "a", "text": good_text(1)}])
    real = os.scandir

    def guarded(p):
        if os.fspath(p) == str(d / "locked"):
            raise PermissionError(13, "Permission denied", str(p))
        return real(p)

    monkeypatch.setattr(os, "scandir", guarded)
    errors: list[InputError] = []
    assert [x.id for x in read_documents([d], skip_bad=True, on_error=errors.append)] == ["a"]
    assert [str(e) for e in errors] == [
        f"{d / 'locked'}: cannot read directory (Permission denied)"
    ]
    with pytest.raises(InputError, match="cannot read directory"):
        list(read_documents([d]))


def test_a_full_disk_is_a_clear_error_and_what_was_committed_stays(tmp_path, monkeypatch):
    """The command line's part: a disk that fills up mid-run (sqlite SQLITE_FULL or OSError
    ENOSPC from the engine) ends the run with one clear line; the batches committed before
    are all there, and running again completes the index."""
    import errno

    from neardup.engines.embedded import EmbeddedEngine

    src = write_jsonl(
        tmp_path / "d.jsonl", [{"id": f"d{i}", "text": good_text(i)} for i in range(250)]
    )
    db = tmp_path / "x.db"
    real_put = EmbeddedEngine.put
    for error in (
        sqlite3.OperationalError("database or disk is full"),
        OSError(errno.ENOSPC, "No space left on device"),
    ):
        calls = {"n": 0, "stored": 0}

        def put(self, docs, tags=None, error=error, calls=calls, prepared=None):
            if self.path == ":memory:":  # (the scratch index on which index warms up, once)
                return real_put(self, docs, tags, prepared=prepared)
            calls["n"] += 1
            if calls["n"] == 3:
                raise error
            calls["stored"] += len(docs)
            return real_put(self, docs, tags, prepared=prepared)

        monkeypatch.setattr(EmbeddedEngine, "put", put)
        r = run("index", src, "-e", db, "-q", "--batch-size", "50")
        assert r.exit_code == 1 and "Traceback" not in r.output
        assert "error:" in r.output and ("disk is full" in r.output or "no space left" in r.output)
        assert "run the same command again" in r.output
        monkeypatch.setattr(EmbeddedEngine, "put", real_put)
        with NearDup.open(str(db), create=False) as nd:
            assert nd.count() == calls["stored"] > 0  # the two batches before the failing one
        db.unlink()
    assert run("index", src, "-e", db, "-q").exit_code == 0


def test_a_really_full_database_keeps_whole_batches(tmp_path, monkeypatch):
    from neardup.engines import embedded

    real_open = embedded.EmbeddedEngine.open

    def small(self, *a, **k):
        cfg = real_open(self, *a, **k)
        pages, size = (
            self.connection.require().execute(f"PRAGMA {p}").fetchone()[0]
            for p in ("page_count", "page_size")
        )
        self.connection.require().execute(
            f"PRAGMA max_page_count={pages + max(3, (640 << 10) // size)}"
        )  # 640 KB more, whatever the page size
        return cfg

    monkeypatch.setattr(embedded.EmbeddedEngine, "open", small)
    src = write_jsonl(
        tmp_path / "d.jsonl", [{"id": f"d{i}", "text": good_text(i)} for i in range(1000)]
    )
    r = run("index", src, "-e", tmp_path / "x.db", "-q", "--batch-size", "50")
    assert (
        r.exit_code == 1
        and "run the same command again" in r.output
        and "Traceback" not in r.output
    )
    monkeypatch.undo()
    with NearDup.open(str(tmp_path / "x.db"), create=False) as nd:
        assert (
            nd.count() % 50 == 0
        )  # whole batches only: nothing stored outside a batch's transaction


# -- Documents without a single word --------------------------------------------------------------
WORDLESS = ["!!!", "<p></p>", "... --- ...", "<b> </b> &nbsp;", "the of and", "«»", "!!!"]


def test_wordless_documents_are_never_near_duplicates(engine_target, tmp_path):
    target, opts = engine_target
    prepare(target, opts)
    recs = [{"id": f"w{i}", "text": t} for i, t in enumerate(WORDLESS)]
    recs += [
        {"id": "a", "text": good_text(1)},
        {"id": "a-copy", "text": good_text(1)},
        {"id": "b", "text": good_text(2)},
    ]
    src = write_jsonl(tmp_path / "w.jsonl", recs)
    e = eargs(target, opts)
    r = run("index", src, *e, "-q", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    n_wordless = out["wordless"]
    assert out["indexed"] == len(recs) and out["duplicates"] == 1 and n_wordless == len(WORDLESS)
    assert f"{n_wordless} documents had no words" in run("index", src, *e, "-q").output
    clusters = json.loads(run("clusters", *e, "--json").stdout)
    assert [sorted(c["members"]) for c in clusters] == [["a", "a-copy"]]
    for text in ("!!!", "<p></p>"):
        q = run("query", text, *e, "--json")
        assert q.exit_code == 0 and json.loads(q.stdout) == [] and "no words" in q.stderr
    q = run("query", "--id", "w0", *e)
    assert q.exit_code == 0 and "has no words" in q.output
    with NearDup.open(target, create=False, **opts) as nd:
        stored = nd.engine.get([f"w{i}" for i in range(len(WORDLESS))])
        assert len(stored) == len(WORDLESS)
        assert all(
            s.tags is not None and not s.tags.is_duplicate and s.tags.dup_of is None
            for s in stored.values()
        )
        assert all(len(k) == 0 for s in stored.values() for k in s.keys.values())
        assert nd.compare("!!!", "<p></p>").resemblance == 0.0
        assert (
            nd.query("!!!") == []
            and nd.pairs() != []
            and all("w" not in p.a + p.b for p in nd.pairs())
        )


# -- Faults of the embedded engine ----------------------------------------------------------------
def _snapshot(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


@pytest.mark.parametrize("kind", ["foreign", "older-format", "newer-format", "not-sqlite"])
def test_a_file_that_is_not_an_index_is_refused_before_any_write(tmp_path, kind):
    d = tmp_path / "f"
    d.mkdir()
    path = d / "other.db"
    if kind == "not-sqlite":
        path.write_bytes(b"PK\x03\x04 not a database")
    else:
        db = sqlite3.connect(path)
        if kind == "foreign":
            db.execute("CREATE TABLE t(a)")
        else:
            db.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
            db.execute("CREATE TABLE docs(id TEXT)")
            db.execute(
                "INSERT INTO meta VALUES('format', ?)",
                ("neardup-sqlite/1" if kind == "older-format" else "neardup-sqlite/99",),
            )
        db.commit()
        db.close()
    before = _snapshot(d)
    src = write_jsonl(tmp_path / "d.jsonl", [{"id": "a", "text": good_text(1)}])
    for args in (("index", src), ("info",), ("clusters",), ("query", "words"), ("retag",)):
        r = run(*args, "-e", path)
        assert (
            r.exit_code == 1
            and "error:" in r.output
            and str(path) in r.output
            and "Traceback" not in r.output
        ), r.output
        assert _snapshot(d) == before, args  # same bytes, no -wal, no -shm, no journal
    assert "older neardup" in r.output if kind == "older-format" else True


def test_an_index_on_read_only_storage_opens_for_reading(tmp_path, monkeypatch):
    d = tmp_path / "ro"
    d.mkdir()
    path = d / "idx.db"
    src = write_jsonl(
        tmp_path / "d.jsonl",
        [
            {"id": "a", "text": good_text(1)},
            {"id": "b", "text": good_text(1)},
            {"id": "c", "text": good_text(2)},
        ],
    )
    assert run("index", src, "-e", path, "-q").exit_code == 0
    assert run("clusters", "-e", path).exit_code == 0
    before = _snapshot(d)
    os.chmod(path, 0o444)
    os.chmod(d, 0o555)
    real_access = os.access
    monkeypatch.setattr(
        os,
        "access",
        lambda p, mode, **k: (
            False if mode & os.W_OK and str(d) in os.fspath(p) else real_access(p, mode, **k)
        ),
    )
    try:
        info = run("info", "-e", path, "--json")
        assert info.exit_code == 0, info.output
        assert json.loads(info.stdout)["documents"] == 3
        q = run("query", "--id", "a", "-e", path, "--json")
        assert q.exit_code == 0 and [m["id"] for m in json.loads(q.stdout)] == ["b"]
        c = run(
            "query", "--id", "a", "--containment", "-e", path, "--json"
        )  # sample postings made in memory too
        assert c.exit_code == 0 and [m["id"] for m in json.loads(c.stdout)] == ["b"], c.output
        word = good_text(1).split()[0]
        found = run(
            "search", word, "-e", path, "--json"
        )  # the full-text index is made in memory: nothing is written
        want = {"a", "b"} | ({"c"} if word in good_text(2).split() else set())
        assert found.exit_code == 0 and {h["id"] for h in json.loads(found.stdout)} == want, (
            found.output
        )
        cl = run("clusters", "-e", path, "--no-write", "--json")
        assert cl.exit_code == 0 and len(json.loads(cl.stdout)) == 1
        assert run("report", "-e", path, "-o", tmp_path / "r.html", "-q").exit_code == 0
        w = run("clusters", "-e", path, "--write")
        assert w.exit_code != 0 and "read-only" in w.output and "Traceback" not in w.output
        new = run("index", src, "-e", d / "new.db", "-q")
        assert new.exit_code == 1 and "not writable" in new.output and "Traceback" not in new.output
        assert _snapshot(d) == before
    finally:
        os.chmod(d, 0o755)
        os.chmod(path, 0o644)


@pytest.mark.parametrize(
    "error,expected",
    [
        (sqlite3.OperationalError("database or disk is full"), "the disk is full"),
        (sqlite3.OperationalError("attempt to write a readonly database"), "read-only storage"),
        (sqlite3.OperationalError("database is locked"), "another process is writing it"),
        (sqlite3.DatabaseError("database disk image is malformed"), "may be damaged"),
        (
            PermissionError(13, "Permission denied", "/data/x.jsonl"),
            "/data/x.jsonl: permission denied",
        ),
        (
            OSError(28, "No space left on device", "/data/neardup.db"),
            "/data/neardup.db: no space left",
        ),
        (RecursionError("maximum recursion depth exceeded"), "nested too deeply"),
    ],
)
def test_errors_of_the_machine_are_one_clear_line(tmp_path, monkeypatch, error, expected):
    from neardup import api

    def boom(*a, **k):
        raise error

    monkeypatch.setattr(api.NearDup, "open", classmethod(lambda cls, *a, **k: boom()))
    r = run("info", "-e", tmp_path / "x.db")
    assert r.exit_code == 1 and expected in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


@pytest.mark.parametrize("suffix, opener", [(".jsonl", open), (".jsonl.gz", gzip.open)])
def test_progress_hears_every_byte_in_few_calls(tmp_path, suffix, opener):
    """on_bytes gets the file's bytes (the compressed ones for a compressed file) in all,
    in reports of at least 64 KB (the first line and the rest at the end aside), not a call
    per line."""
    path = tmp_path / f"many{suffix}"
    with opener(path, "wt", encoding="utf-8") as f:
        for i in range(3000):
            f.write(json.dumps({"id": i, "text": f"document {i} " + "word " * 40}) + "\n")
    reports: list[int] = []
    docs = list(read_documents([path], on_bytes=reports.append))
    assert len(docs) == 3000 and sum(reports) == path.stat().st_size
    assert len(reports) <= 2 + path.stat().st_size // 65536 + 1 and all(
        r >= 65536 for r in reports[1:-1]
    )


# -- search --dsl takes a JSON object only ---------------------------------------------------------
@pytest.mark.parametrize("query", ["[]", "null", "1", '"words"', "true", '[{"match_all": {}}]'])
def test_search_dsl_that_is_not_an_object_is_one_line(engine_target, query):
    target, opts = engine_target
    prepare(target, opts)
    r = run("search", query, "--dsl", *eargs(target, opts))
    lines = r.output.strip().splitlines()
    assert r.exit_code == 1 and "Traceback" not in r.output and "bug" not in r.output, r.output
    assert len(lines) == 1 and "--dsl: QUERY must be a JSON object" in lines[0], r.output


def test_a_text_file_that_is_not_valid_utf16_names_the_byte(tmp_path):
    d = tmp_path / "docs"
    d.mkdir()
    good = ("\ufeff" + good_text(1)).encode("utf-16-le")
    (d / "bad.txt").write_bytes(good + "\ud800".encode("utf-16-le", "surrogatepass"))
    r = run("index", d / "bad.txt", "-e", str(tmp_path / "nd.db"), "-q")
    assert r.exit_code == 1
    said = " ".join(r.output.split())
    assert f"bad.txt: not valid UTF-16 (byte {len(good)})" in said, r.output
