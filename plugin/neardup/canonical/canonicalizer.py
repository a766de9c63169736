"""The :class:`Canonicalizer`: the pipeline of steps, driven by the index's config."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache, partial
from itertools import filterfalse
from typing import Callable, Sequence

import numpy as np

from ..config import LANGUAGES, Config, is_language_code, language_of_code
from ..sketches.hashing import KeySet, hash_strings
from ..sketches.ragged import offsets_of
from .flags import DROPPED_MARK, RARE, UNSPACED, has_rare_characters, nfkc_flagged, text_flags_many
from .html import strip_html
from .spans import Span, TextOrSpan, decoded, joined_spans
from .letters import (
    Backend,
    check_backend,
    digit_table,
    late_steps_spans,
    drop_marks,
    drop_page_numbers,
    late_steps_table,
    drop_punctuation,
    has_arabic_script,
    nfkc,
    punctuation_matters,
    rejoin_hyphenation,
    split_tokens,
    token_char_table,
    token_hashes,
    unify_digits,
    yo_to_ye,
)
from . import persian
from .persian import Segmentation, normalize_persian
from .scripts import (
    detect_language,
    detect_languages,
    map_persian_runs,
    split_unspaced,
    token_language,
)
from .stemming import stemmer
from .stopwords import persian_stop_words, raw_stopwords, stop_languages, stop_languages_read_text


def _check_language(lang: str | None) -> None:
    """A ValueError where ``lang`` is given and is no language code
    (:func:`~neardup.config.is_language_code`)."""
    if lang is not None and not is_language_code(lang):
        raise ValueError(
            f"unknown language code {lang!r}; give a code of two or three letters "
            "(en, fa, ru, de, ar, zh, ...) or leave it out to detect"
        )


def _language(lang: str | None) -> str | None:
    """``lang`` as neardup keeps it (:func:`~neardup.config.language_of_code`), None if not
    given."""
    return language_of_code(lang) if lang else None


def generic(lang: str) -> bool:
    """Whether documents of ``lang`` get the generic rules only: no stop list, no Persian
    letter rules, no stemmer (every language but fa, ru and en)."""
    return lang not in LANGUAGES


def persian_step(
    text: str, segmentation: Segmentation = persian.DEFAULT, backend: Backend = "reference"
) -> str:
    """The Persian step: :func:`~.persian.normalize_persian` on each Persian run
    (:func:`~.scripts.map_persian_runs`), made by ``backend``.

    >>> persian_step("«کتاب‌ها» and ۱۲") == "«کتابها» and  ۱۲ "  # (digits set apart)
    True
    """
    if not has_arabic_script(text):
        return text
    return map_persian_runs(
        text, partial(normalize_persian, segmentation=segmentation, backend=backend)
    )


def _marks_to_persian_spans(
    texts: Sequence[str],
    late: np.ndarray | None = None,
    segmentation: Segmentation = persian.DEFAULT,
) -> list[tuple[Span, bool] | None]:
    """``persian_step(drop_punctuation(drop_marks(text)))`` of each text, and then the steps
    of ``late`` (:func:`~.letters.late_steps_table`) where they map each character to one, in
    compiled passes over groups of the texts (:func:`~.persian.compiled_spans`), each as a
    :data:`~.spans.Span` of the pass's output and whether ``late`` was applied; None where
    the pass does not apply (not cut at anchors; a character that needs one of hazm's steps
    the pass does not make)."""
    if segmentation.way != "anchors":
        return [None] * len(texts)
    return persian.compiled_spans(texts, late=late, marks=True, anchors=segmentation.anchors)


#: The steps before drop_marks that :meth:`Canonicalizer._steps` has a rule for.
_EARLY_STEPS = frozenset({"nfkc", "strip_html", "split_unspaced"})

#: The steps after the Persian one, in order (unify_digits where digits are unified).
_LATE_STEPS = ("casefold", "yo_to_ye", "unify_digits")


@dataclass(frozen=True)
class Canonical:
    """Canonical tokens of one document and its language."""

    tokens: list[str]
    lang: str


class Canonicalizer:
    """Text -> canonical tokens, as configured.

    >>> Canonicalizer(Config(stopwords=False)).tokens("<b>A rose</b> is a ROSE!")
    ['a', 'rose', 'is', 'a', 'rose']
    """

    def __init__(self, config: Config, backend: Backend = "compiled"):
        """``backend``: how the maps over code points run (:data:`~.letters.Backend`: the
        same tokens either way)."""
        self.config = config
        self.backend = check_backend(backend)
        self.segmentation = Segmentation.of(config)
        c = config
        steps: list[tuple[str, Callable[[str], str]]] = [("nfkc", nfkc)]
        if c.strip_html:
            steps.append(("strip_html", strip_html))
        steps += [
            ("rejoin_hyphenation", rejoin_hyphenation),
            ("drop_page_numbers", drop_page_numbers),
            ("split_unspaced", split_unspaced),
            ("drop_marks", drop_marks),
            ("drop_punctuation", drop_punctuation),
            ("persian", partial(persian_step, segmentation=self.segmentation, backend=backend)),
            ("casefold", str.casefold),
            ("yo_to_ye", yo_to_ye),
        ]
        if c.digits == "unify":
            steps.append(("unify_digits", unify_digits))
        self.text_steps = steps

    def _language_of(self, text: str) -> str:
        """The configured default language, or the one detected in ``text`` when it is "auto"."""
        return (
            _language(self.config.default_lang)
            if self.config.default_lang != "auto"
            else detect_language(text)
        )

    def text(self, text: str, lang: str | None = None) -> str:
        """The text after all string-level steps (before tokenizing); ``lang``: the
        document's, where given (the Persian step is not made for other languages:
        :meth:`_persian_rules`)."""
        fa_rules = self._persian_rules(text, lang)
        for name, step in self.text_steps:
            if fa_rules or name != "persian":
                text = step(text)
        return text

    def _texts_for_tokens(
        self,
        texts: Sequence[str],
        langs: Sequence[str | None] | None = None,
        flags: Sequence[int] | None = None,
    ) -> list[str]:
        """:meth:`text_and_language`'s text of each text (``langs[i]`` given with
        ``texts[i]``, checked as there): the scan for NFKC and the rare characters
        (:func:`~.flags.text_flags_many`), the compiled pass from drop_marks to the Persian
        step (:func:`_marks_to_persian_spans`) and the map of casefold and the steps after
        it (:func:`~.letters._late_steps_many`) each made over all the texts at once, the
        other steps text by text (:meth:`_steps`). ``flags``: the texts'
        :func:`~.flags.text_flags_many`, where the caller has them.

        >>> texts = ["Ёлка, <b>ДОМ</b>!", "A ﬁne day", "کتاب‌ها، ۱۲"]
        >>> Canonicalizer(Config())._texts_for_tokens(texts)
        ['елка,  дом !', 'a fine day', 'کتابها  12 ']
        """
        return decoded(self.spans_for_tokens(texts, langs, flags))

    def spans_for_tokens(
        self,
        texts: Sequence[str],
        langs: Sequence[str | None] | None = None,
        flags: Sequence[int] | None = None,
    ) -> list[TextOrSpan]:
        """:meth:`_texts_for_tokens`, the texts a compiled pass made left as
        :data:`~.spans.Span` of its output (:meth:`token_hashes_many` reads them there)."""
        for lang in langs or ():
            _check_language(lang)
        flags = text_flags_many(texts, self.backend).tolist() if flags is None else list(flags)
        out, persian_left, late_left = self._early_steps(texts, langs, flags)
        self._persian_pass(out, flags, persian_left, late_left)
        for (i, rare), made in zip(
            late_left,
            late_steps_spans([out[i] for i, _ in late_left], self._late_table, self.backend),
            strict=True,
        ):
            out[i] = made if made is not None else self._late_by_steps(out[i], rare)
        return out

    def _early_steps(
        self, texts: Sequence[str], langs: Sequence[str | None] | None, flags: Sequence[int]
    ) -> tuple[list[TextOrSpan], list[int], list[tuple[int, bool]]]:
        """Each text through :meth:`_steps`: (the texts so far, those whose steps from
        drop_marks to the Persian one are left to one pass of all, (text, rare) of those
        whose late steps are left to one map of all)."""
        out: list[TextOrSpan] = []
        persian_left: list[int] = []
        late_left: list[tuple[int, bool]] = []
        for i, (text, f) in enumerate(zip(texts, flags, strict=True)):
            text, left, rare = self._steps(
                text, f, fa_rules=self._persian_rules(text, langs[i] if langs else None, f)
            )
            out.append(text)
            if left == "persian":
                persian_left.append(i)
            elif left == "casefold":
                late_left.append((i, rare))
        return out, persian_left, late_left

    def _persian_pass(
        self,
        out: list[TextOrSpan],
        flags: Sequence[int],
        persian_left: list[int],
        late_left: list[tuple[int, bool]],
    ) -> None:
        """The texts ``persian_left`` of ``out`` through one compiled pass of the steps from
        drop_marks to the Persian one (:func:`_marks_to_persian_spans`), in place; those it
        leaves to the steps go on one by one, and those whose late steps are left go to
        ``late_left``."""
        for i, made in zip(
            persian_left,
            _marks_to_persian_spans(
                [out[i] for i in persian_left], self._late_table, self.segmentation
            ),
            strict=True,
        ):
            # (a character the pass leaves to the steps): one by one from drop_marks
            if made is None:
                # (the pass is only made where Persian rules apply)
                out[i], left, rare = self._steps(out[i], flags[i], resume=True)
                if left == "casefold":
                    late_left.append((i, rare))
            else:
                out[i], late = made
                if not late:  # (a character that casefolds to more than one)
                    out[i] = self._late_by_steps(decoded([out[i]])[0], True)

    def _persian_rules(self, text: str, lang: str | None, flags: int | None = None) -> bool:
        """Whether the Persian step applies to ``text`` (of ``lang``, None: not given): not to
        a text of another language than fa, ru and en (:func:`generic`), given or detected
        (Arabic is not Persian: :func:`~.scripts.language_by_script`); the script is looked
        at only where the text has Arabic script (not where its :func:`~.flags.text_flags`
        ``flags`` have no :data:`~.flags.RARE` character: Arabic script is one)."""
        if (flags is not None and not flags & RARE) or not has_arabic_script(text):
            return True
        lang = _language(lang) or self._language_of(text)
        return not generic(lang)

    def _steps(
        self, text: str, flags: int, resume: bool = False, fa_rules: bool = True
    ) -> tuple[str, str | None, bool]:
        """:meth:`text`, or a text with the same tokens, of a text whose
        :func:`~.flags.text_flags` are ``flags``: (the text, None, whether it has rare
        characters), or the text so far where the rest is left to :meth:`_texts_for_tokens`:
        (text, "persian", True) before drop_marks where the text has rare characters and
        punctuation matters (the compiled pass of :func:`_marks_to_persian_spans`), (text,
        "casefold", rare) before casefold where the text is not all ASCII. ``resume``: a text
        that stopped at "persian" and that the compiled pass left to the steps, from
        drop_marks on.

        Where drop_punctuation only turns separators into spaces, it is skipped, and so is
        persian (no Arabic script); where the text has none of the characters drop_marks,
        unify_digits and punctuation_matters act on (:func:`~.flags.has_rare_characters`),
        those steps are skipped too. ``flags`` tell NFKC where it has nothing to do, and
        drop_marks whether there are rare characters and split_unspaced whether there is a
        letter of a script written without spaces (:data:`~.flags.UNSPACED`), unless NFKC
        changed the text (it may make a rare one: U+037A -> U+0345; the unspaced bit
        counts what NFKC makes: U+2F00 -> U+4E00) or HTML entities were decoded: the steps
        between only take characters out (tags, hyphen breaks, page-number lines; a
        character taken out leaves the steps it would need to run for nothing, the same
        text).

        drop_punctuation replaces what is not in ``[^\\W_]`` by spaces. Without the
        characters of ``_PUNCTUATION_MATTERS`` the steps after it map each character on its
        own and never a separator to a word character, so tokenizing splits at the same
        places with or without it. The steps before drop_marks (HTML, hyphenation, page
        numbers) only remove characters, and casefold makes no digit: a text found without
        rare characters at drop_marks has none at the later steps.
        """
        plain, rare = False, True
        known = RARE | UNSPACED  # the bits of flags that still say what the text holds
        for name, step in self._step_list[self._step_at["drop_marks"] if resume else 0 :]:
            if name is None:  # (a step with no rule here)
                text = step(text)
            elif name in _EARLY_STEPS:
                text, known = self._early_step(name, step, text, flags, known)
            elif name == "drop_marks":
                if not resume:
                    rare = bool(flags & RARE) if known & RARE else has_rare_characters(text)
                    if (
                        rare
                        and fa_rules
                        and self.segmentation.way == "anchors"
                        and punctuation_matters(text)
                    ):
                        return text, "persian", True
                text = step(text) if rare else text
            elif name == "casefold" and not text.isascii():
                return text, "casefold", rare
            elif name == "drop_punctuation":
                plain = not rare or not punctuation_matters(text)
                text = text if plain else step(text)
            elif name == "persian":
                text = text if plain or not fa_rules else step(text)
            elif name == "unify_digits":
                text = step(text) if rare else text
            else:
                text = step(text)
        return text, None, rare

    def _early_step(
        self, name: str, step: Callable[[str], str], text: str, flags: int, known: int
    ) -> tuple[str, int]:
        """One of :data:`_EARLY_STEPS` in :meth:`_steps`: (the text after it, the bits of
        the text's ``flags`` that still say what it holds: ``known``; NFKC keeps
        :data:`~.flags.UNSPACED`, whose characters include those NFKC makes a letter
        of an unspaced script of)."""
        if name == "nfkc":
            # (marks NFKC would only move go at drop_marks, which this text comes to: they
            # are rare)
            normalized = nfkc_flagged(text, flags & ~DROPPED_MARK, self.backend)
            return normalized, known if normalized is text else known & ~RARE
        if name == "strip_html":  # entities may decode to rare characters (tags only go)
            stripped = step(text)
            return stripped, known if "&" not in text or stripped is text else 0
        return (step(text) if not known & UNSPACED or flags & UNSPACED else text), known

    @cached_property
    def _step_list(self) -> list[tuple[str | None, Callable[[str], str]]]:
        """:attr:`text_steps` with None for the name of each step :meth:`_steps` has no rule for."""
        ruled = {
            "nfkc",
            "strip_html",
            "split_unspaced",
            "drop_marks",
            "casefold",
            "drop_punctuation",
            "persian",
            "unify_digits",
        }
        return [(name if name in ruled else None, step) for name, step in self.text_steps]

    @cached_property
    def _step_at(self) -> dict[str, int]:
        """Each text step's place in :attr:`text_steps`."""
        return {name: i for i, (name, _) in enumerate(self.text_steps)}

    def _late_by_steps(self, text: str, rare: bool) -> str:
        """Casefold and the steps after it one by one (unify_digits only with ``rare``)."""
        for name, step in self.text_steps[self._step_at["casefold"] :]:
            if rare or name != "unify_digits":
                text = step(text)
        return text

    @cached_property
    def _late_table(self) -> np.ndarray:
        """:func:`~.letters.late_steps_table` of the steps after the Persian one."""
        names = [n for n, _ in self.text_steps]
        after = tuple(names[names.index("persian") + 1 :])
        assert after in (_LATE_STEPS[:2], _LATE_STEPS), after  # what late_steps_table makes
        return late_steps_table(unify=after == _LATE_STEPS)

    def tokens(self, text: str, lang: str | None = None) -> list[str]:
        return self.canonicalize(text, lang).tokens

    def tokens_many(self, texts: Sequence[str], langs: Sequence[str | None]) -> list[list[str]]:
        """:meth:`tokens` of each text (``langs[i]`` given with ``texts[i]``, or None), the
        string steps made over all of them at once (:meth:`_texts_for_tokens`): for many
        short texts, a fraction of the time of one call each.

        >>> c = Canonicalizer(Config(stopwords=False))
        >>> c.tokens_many(["Ёлка,", "<b>ДОМ</b>!", "co-op", ""], ["ru", None, "en", "en"])
        [['елка'], ['дом'], ['co', 'op'], []]
        """
        canons = self._texts_for_tokens(texts, langs)
        return [
            self._token_steps(canon, split_tokens(canon), lang)
            for canon, lang in zip(canons, self.languages(texts, langs), strict=True)
        ]

    def canonicalize(self, text: str, lang: str | None = None) -> Canonical:
        canon, doc_lang = self.text_and_language(text, lang)
        return Canonical(self._token_steps(canon, split_tokens(canon), doc_lang), doc_lang)

    def text_and_language(self, text: str, lang: str | None = None) -> tuple[str, str]:
        """The text the tokens are split from (:meth:`text`, or a text with the same tokens:
        :meth:`spans_for_tokens` of one text) and the document's language (``lang``, or
        detected); an unknown ``lang`` is a ValueError."""
        return self._texts_for_tokens([text], [lang])[0], _language(lang) or self._language_of(text)

    def languages(self, texts: Sequence[str], langs: Sequence[str | None]) -> list[str]:
        """:meth:`_language_of` each text where its ``lang`` is not given, the detected ones
        all at once (:func:`~.scripts.detect_languages`).

        >>> Canonicalizer(Config()).languages(["Привет, мир", "hello", "سلام"], [None, "ru", None])
        ['ru', 'ru', 'fa']
        """
        if self.config.default_lang != "auto":
            return [_language(lang) or _language(self.config.default_lang) for lang in langs]
        found = iter(
            detect_languages([t for t, lang in zip(texts, langs, strict=True) if not lang])
        )
        return [_language(lang) or next(found) for lang in langs]

    @property
    def hashes_tokens(self) -> bool:
        """Whether :meth:`token_hashes_many` applies: no stemming (a stem is a string)."""
        return self.config.stem == "none"

    def token_hashes_many(
        self, canons: Sequence[TextOrSpan], langs: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray]:
        """The canonical token hashes of many texts of :meth:`text_and_language` (``canons``,
        as ``str`` or as the spans of :meth:`spans_for_tokens`; ``langs``): (hashes, offsets),
        the hashes of document i at ``offsets[i]:offsets[i+1]``, equal to
        :func:`~neardup.sketches.hashing.hash_strings` of :meth:`_token_steps` of its tokens.

        Made without a string per token: the texts' code points in one array, the tokens as
        runs of token characters, each hashed from its code points as it is found
        (:func:`~.letters.token_hashes`); then numbers (a digit table) and stop words (their
        hashes) dropped in one more pass (:func:`.letters_loops.kept_tokens`).

        >>> c = Canonicalizer(Config())
        >>> texts = ["A rose is a rose.", "Roses!"]
        >>> h, off = c.token_hashes_many(*zip(*map(c.text_and_language, texts)))
        >>> off.tolist(), h[:2].tolist() == hash_strings(c.tokens(texts[0]), 1).tolist()
        ([0, 2, 3], True)
        """
        if not self.hashes_tokens:
            raise ValueError("token hashes are made from strings when tokens are stemmed")
        cps, starts = joined_spans(canons)  # each text and a space
        hashes, number, doc = token_hashes(cps, starts, self.config.seed)
        c = self.config
        # the stop words of a text depend on the text (else they are one set per language)
        per_text = stop_languages_read_text(c.fa_segmentation)
        if per_text:
            canons = decoded(canons)
        if c.stopwords:
            sets, group = self._stop_groups(canons, langs, per_text)
        else:  # (no document grouped by the stop words it drops)
            sets, group = [], np.full(len(canons), -1, dtype=np.int64)
        if not sets and c.digits != "drop":
            return hashes, offsets_of(np.bincount(doc, minlength=len(canons)))
        from ..sketches.loops import loops

        letters_loops = loops("neardup.canonical.letters_loops")

        hashes, counts = letters_loops.kept_tokens(
            hashes,
            number,
            doc,
            c.digits == "drop",
            group,
            *_probing_tables(tuple(sets)),
            len(canons),
        )
        return hashes, offsets_of(counts)

    def _stop_groups(
        self, canons: Sequence[str] | Sequence[TextOrSpan], langs: Sequence[str], per_text: bool
    ) -> tuple[list[KeySet], np.ndarray]:
        """The sets of stop word hashes :meth:`token_hashes_many` drops, and the documents
        grouped by the set they drop (its index, -1 for none); a set per text where
        ``per_text``, else one per language."""
        sets: list[KeySet] = []
        group = np.full(len(canons), -1, dtype=np.int64)
        at: dict[int, int] = {}  # id of a set -> its group
        of_lang: dict[str, KeySet] = {}
        for i, (t, lang) in enumerate(zip(canons, langs, strict=True)):
            stop = (
                self._stop_hashes(t, lang)
                if per_text
                else of_lang.get(lang) or of_lang.setdefault(lang, self._stop_hashes(t, lang))
            )
            if len(stop):
                if id(stop) not in at:
                    at[id(stop)] = len(sets)
                    sets.append(stop)
                group[i] = at[id(stop)]
        return sets, group

    def _stop_hashes(self, canon: str, lang: str) -> KeySet:
        """The hashes of the stop words :meth:`token_hashes_many` drops from ``canon``."""
        seg = self.config.fa_segmentation
        return stop_hashes(stop_languages(canon, lang, seg), lang, self.config.seed, seg)

    def warm_up(self, canon: str, lang: str) -> None:
        """Make the tables :meth:`token_hashes_many` reads for a text of
        :meth:`text_and_language` (token characters, digits, its canonical stop words)
        without running it, nor hashing anything (no compiled loop is loaded)."""
        token_char_table()
        if self.config.digits == "drop":
            digit_table()
        if self.config.stopwords and self.hashes_tokens:
            stopwords_to_drop(
                stop_languages(canon, lang, self.config.fa_segmentation),
                lang,
                self.config.fa_segmentation,
            )

    def _token_steps(self, canon: str, toks: list[str], doc_lang: str) -> list[str]:
        """Digits, stop words and stemming on the tokens of the canonical text ``canon``."""
        c = self.config
        if c.digits == "drop":
            toks = [t for t in toks if not t.isdigit()]
        if c.stopwords and c.stem == "none":
            drop = stopwords_to_drop(
                stop_languages(canon, doc_lang, c.fa_segmentation), doc_lang, c.fa_segmentation
            )
            toks = list(filterfalse(drop.__contains__, toks))
        elif c.stopwords or c.stem != "none":
            toks = self._by_token_language(toks, doc_lang)
        return toks

    def _by_token_language(self, toks: list[str], doc_lang: str) -> list[str]:
        """Stop words dropped and stems taken per token, each by its own script's language
        (:func:`~.scripts.token_language`, else ``doc_lang``)."""
        c = self.config
        out = []
        # (no stop list, no stemmer: its words are not read as en/ru/fa ones)
        plain = generic(doc_lang)
        for t in toks:
            tl = doc_lang if plain else token_language(t) or doc_lang
            if c.stopwords and t in stopwords_for(tl, c.fa_segmentation):
                continue
            st = stemmer(tl, c.stem) if c.stem != "none" and not plain else None
            out.append(st(t) if st is not None else t)
        return out


@lru_cache(maxsize=8)
def stopwords_for(lang: str, fa_segmentation: str = "anchors") -> frozenset[str]:
    """Stop words of ``lang``, passed through the same canonical steps as documents, so the
    words match the tokens they are meant to remove (none for Persian without
    :func:`persian_stop_words`: Persian cut at anchors)."""
    if lang == "fa" and not persian_stop_words(fa_segmentation):
        return frozenset()
    # (bands and rows given: a config for canonicalizing only, no LSH banding to optimize)
    config = Config(
        stopwords=False,
        stem="none",
        default_lang=lang,
        bands=1,
        rows=1,
        fa_segmentation=fa_segmentation,
    )
    plain = Canonicalizer(config, backend="reference")  # (a few hundred words)
    words = list(raw_stopwords(lang))
    out: set[str] = set()
    # (plain.tokens of each word, all at once)
    for canon in plain._texts_for_tokens(words, [lang] * len(words)):
        out.update(plain._token_steps(canon, split_tokens(canon), lang))
    return frozenset(out)


@lru_cache(maxsize=64)
def stopwords_to_drop(
    langs: frozenset[str], doc_lang: str, fa_segmentation: str = "anchors"
) -> frozenset[str]:
    """Stop words of the scripts in ``langs`` that the per-token rule removes: a word is
    dropped when it is a stop word of its own script, or of ``doc_lang`` if it has none.
    A document in a language without a stop list (none of LANGUAGES) drops none: its words
    are not read as English or Russian ones of the same script."""
    if generic(doc_lang):
        return frozenset()
    union = frozenset().union(*(stopwords_for(lang, fa_segmentation) for lang in langs))
    return frozenset(
        t for t in union if t in stopwords_for(token_language(t) or doc_lang, fa_segmentation)
    )


@lru_cache(maxsize=64)
def stop_hashes(
    langs: frozenset[str], doc_lang: str, seed: int, fa_segmentation: str = "anchors"
) -> KeySet:
    """:func:`stopwords_to_drop` as a set of token hashes
    (:func:`~neardup.sketches.hashing.hash_strings`); the same words give the same object."""
    return _key_set(stopwords_to_drop(langs, doc_lang, fa_segmentation), seed)


@lru_cache(maxsize=16)
def _probing_tables(sets: tuple[KeySet, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The probing tables (:attr:`~neardup.sketches.hashing.KeySet.probing`) of ``sets`` end to end,
    as :func:`.letters_loops.kept_tokens` reads them: (tables, bounds, empty values)."""
    parts = [s.probing for s in sets]
    table = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=np.uint64)
    return (
        table,
        offsets_of([len(p[0]) for p in parts]),
        np.array([p[1] for p in parts], dtype=np.uint64),
    )


@lru_cache(maxsize=64)
def _key_set(words: frozenset[str], seed: int) -> KeySet:
    return KeySet(hash_strings(sorted(words), seed))
