"""A record as a :class:`~neardup.signing.records.Document`: which field of a record holds the
text, the id, the title and the language (:class:`RecordFields`), and the check of each, so
a bad record is refused with what is wrong with which field."""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..config import is_language_code
from ..signing.records import Document
from ..signing.validate import check_document
from .files import InputError

#: The most characters of text a document may have.
MAX_CHARS = 50_000_000


@dataclass(frozen=True)
class RecordFields:
    """Which field of a record holds the text, the id, the title and the language."""

    text: str = "text"
    id: str = "id"
    title: str = "title"
    lang: str = "lang"

    def names(self) -> tuple[str, str, str, str]:
        return (self.id, self.text, self.title, self.lang)


DEFAULT_FIELDS = RecordFields()


def record_document(
    rec: object,
    where: str,
    default_id: str,
    no_surrogate: bool = False,
    fields: RecordFields = DEFAULT_FIELDS,
    blank_is_absent: bool = False,
) -> Document | InputError:
    """A record (a dict) -> a :class:`Document`, or the problem; ``blank_is_absent``: an
    empty id, title or language counts as absent (a CSV cell)."""
    if not isinstance(rec, dict):
        return InputError(where, f"a record must be a JSON object, not {_json_type(rec)}")
    f = fields

    def get(name: str) -> object:
        v = rec.get(name)
        return None if blank_is_absent and v == "" else v

    text, lang = rec.get(f.text), get(f.lang)
    absent = f.id not in rec or blank_is_absent  # (an id given as null stays null: refused)
    doc_id = default_id if absent and get(f.id) is None else get(f.id)
    title = _title(rec, get(f.title), f)
    problems = (
        _text_problem(rec, text, f),
        _lang_problem(lang, f),
        _id_problem(doc_id, f),
        _title_problem(title, f),
    )
    problem = next(filter(None, problems), None)  # the first, in the order of the fields
    if problem:
        return InputError(where, problem)
    kept = {k: v for k, v in rec.items() if k not in f.names()}
    doc = Document(
        id=str(doc_id),
        text=text,
        title=None if title is None else str(title),
        lang=lang,
        fields=kept,
    )
    problem = check_document(doc, text_has_no_surrogate=no_surrogate)
    return InputError(where, problem) if problem else doc


def _text_problem(rec: dict, text: object, f: RecordFields) -> str | None:
    """Why ``text``, the text field of record ``rec``, cannot be a document's text, or None."""
    if text is None:
        known = ", ".join(repr(k) for k in list(rec)[:8])
        return (
            f"record has no {f.text!r} field (its fields: {known or 'none'}; "
            "name the text field with --text-field)"
        )
    if not isinstance(text, str):
        return f"{f.text!r} must be a string, not {_json_type(text)}"
    return check_text(text)


def _lang_problem(lang: object, f: RecordFields) -> str | None:
    """Why ``lang`` is no language code, or None (None for an absent one)."""
    if lang is not None and not is_language_code(lang):
        return (
            f"unknown language code {lang!r} in {f.lang!r} (give a code of two or three "
            "letters: en, fa, ru, de, ar, zh, ...; or leave it out to detect)"
        )
    return None


def _id_problem(doc_id: object, f: RecordFields) -> str | None:
    """Why ``doc_id`` cannot be a document's id, or None."""
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)) or doc_id == "":
        return (
            f"{f.id!r} must be a non-empty string or an integer, "
            f"not {_json_type(doc_id)} {json.dumps(doc_id, default=str)[:40]}"
        )
    return None


def _title(rec: dict, title: object, f: RecordFields) -> object:
    """The title of record ``rec``: its title field, else (for the field named "title") a
    string ``meta.title``."""
    if (
        title is None
        and f.title == "title"
        and isinstance(rec.get("meta"), dict)
        and isinstance(rec["meta"].get("title"), str)
    ):
        return rec["meta"]["title"]
    return title


def _title_problem(title: object, f: RecordFields) -> str | None:
    """Why ``title`` cannot be a document's title, or None."""
    if title is not None and (isinstance(title, bool) or not isinstance(title, (str, int, float))):
        return f"{f.title!r} must be a string, not {_json_type(title)}"
    return None


def _json_type(v: object) -> str:
    if v is None:
        return "null"
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(v), type(v).__name__)


def check_text(text: str) -> str | None:
    """Why ``text`` cannot be indexed, or None."""
    if not text.strip():
        return "empty or whitespace-only text"
    if len(text) > MAX_CHARS:
        return f"text has {len(text):,} characters, more than the limit of {MAX_CHARS:,}"
    return None
