"""Where a documents index keeps a document's fields: everything neardup writes is under
one object, ``neardup.*`` (signature, arrival number, tags), next to the document's own
fields. In neardup's own index those are ``title``, ``body`` and ``fields`` (the text and
title of a document in one of :data:`TEXT_LANGS` in a field of their own); in an index
adopted with ``neardup attach`` they are the user's, named by a :class:`Layout`, and neardup
only ever writes ``neardup.*`` there.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable, Mapping

#: The object every neardup field lives under.
ROOT = "neardup"


def n(name: str) -> str:
    """Path of a neardup field (``seq`` -> ``neardup.seq``)."""
    return f"{ROOT}.{name}"


#: The languages whose documents keep title and text in a field of their own (``title_fa``,
#: ``body_fa``...), analyzed once by ``neardup_<lang>`` (mappings/documents.json); a document
#: in another language (or none) keeps them in ``title`` and ``body`` (``neardup_default``).
#: Indices made before (no ``languages`` in their layout) keep both in ``title`` and ``body``,
#: analyzed again by each language's analyzer in their ``.fa``, ``.ru`` and ``.en``
#: subfields.
TEXT_LANGS = ("fa", "ru", "en")


@dataclass(frozen=True)
class Layout:
    """Where a documents index keeps the document's own fields (neardup's are under ``neardup``).

    neardup's own index: ``body``, ``title``, ``fields`` (the default), the text and title of
    a document in one of ``languages`` in ``body_<lang>`` and ``title_<lang>`` instead. An
    adopted index: the user's text field, optional title and language fields, and the field
    that orders arrival (``order``; None: index order); ``adopted`` indices are only ever
    updated in ``neardup.*``.
    """

    text: str = "body"
    title: str | None = "title"
    lang: str | None = None
    order: str | None = None
    adopted: bool = False
    languages: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> "Layout":
        given = {k: v for k, v in (d or {}).items() if k in cls.__dataclass_fields__}
        given["languages"] = tuple(given.get("languages") or ())  # (a list in JSON)
        return cls(**given)

    def field_of(self, field: str, lang: str | None) -> str:
        """The field holding ``field`` (``text`` or ``title``) of a document in ``lang``.

        >>> OWN.field_of("body", "fa"), OWN.field_of("body", "de"), Layout().field_of("body", "fa")
        ('body_fa', 'body', 'body')
        """
        return f"{field}_{lang}" if lang in self.languages else field

    def stored(self, field: str | None) -> list[str]:
        """The ``_source`` keys that may hold ``field`` (``text`` or ``title``): in a layout
        with ``languages``, the field and its language fields (a document has one of them)."""
        if not field:
            return []
        return [field, *(f"{field}_{x}" for x in self.languages)]

    def analyzed(self, field: str | None) -> list[str]:
        """The full-text fields searched for ``field`` (``text`` or ``title``): its
        :meth:`stored` fields; in neardup's own index made before ``languages``, the field and
        its language subfields; in an adopted index, the field itself."""
        if not field:
            return []
        if self.adopted:
            return [field]
        if self.languages:
            return self.stored(field)
        return [field, *(f"{field}.{x}" for x in TEXT_LANGS)]

    @property
    def own_fields(self) -> list[str]:
        """The document's own fields a StoredDoc reads (besides ``neardup``)."""
        out = [*self.stored(self.title), *([self.lang] if self.lang else [])]
        if self.adopted:
            return [*out, *([self.order] if self.order else [])]
        return [*out, "fields"]

    def describe(self, quote: Callable[[str], str] = str) -> str:
        """The fields as the options of ``neardup attach`` that name them, each field name
        passed through ``quote`` (the command line escapes them for its markup).

        >>> Layout(text="body", title="headline", order="published", adopted=True).describe()
        '--text-field body --title-field headline --order-field published'
        """
        return " ".join(
            f"--{name}-field {quote(value)}"
            for name, value in (
                ("text", self.text),
                ("title", self.title),
                ("lang", self.lang),
                ("order", self.order),
            )
            if value
        )

    def search_fields(self) -> list[str]:
        """Title fields (boosted 2x) and text fields a query searches.

        >>> OWN.search_fields()[:2], OWN.search_fields()[4:]
        (['title^2', 'title_fa^2'], ['body', 'body_fa', 'body_ru', 'body_en'])
        """
        return [*(f"{f}^2" for f in self.analyzed(self.title)), *self.analyzed(self.text)]


#: The layout of an index neardup makes.
OWN = Layout(languages=TEXT_LANGS)
