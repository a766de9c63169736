"""Letters, digits, marks, punctuation and line breaks: the script-independent text steps.

Speed notes for the patterns below. Python's regex engine skips quickly to candidate
positions only when a pattern starts with a literal or a character class (not a repeat or a
lookbehind), and rules out an alternative cheaply by its first character when that
alternative starts with a single character; hence "XX*" where "X+" would read better. Each
pattern is checked against its one-pass definition in tests/test_canonical_fast.py.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cached_property, lru_cache
from typing import Literal, Sequence, get_args

import numpy as np

from ..runtime.tablecache import cached_table
from .ranges import ARABIC_BLOCK, ARABIC_SCRIPT, char_class
from .spans import Span, decoded, grouped_code_points, spans_of

#: How the maps over code points run: "compiled" (:mod:`.letters_loops`, in C) or
#: "reference" (numpy, the rule as written); both give the same results (tested), so the
#: choice is not part of :class:`~neardup.config.Config`. Chosen by the caller
#: (:class:`~.canonicalizer.Canonicalizer`), never by what the process has imported.
Backend = Literal["compiled", "reference"]
BACKENDS: tuple[str, ...] = get_args(Backend)

ZWNJ = "\u200c"
# A hyphen at a line end with a word character on either side (see rejoin_hyphenation),
# on text without U+00AD and U+2010 (a literal first: fast); :func:`_hyphen_break` is the
# same for any hyphen
_ASCII_HYPHEN_BREAK = re.compile(r"-(?<=\w-)\s*\n\s*(?=\w)")
# A line holding only a page number ("- 12 -", "Page 3", "стр. 4", "صفحه ۱۲"), with the
# newline before it; the newline after it stays for the next line. The indentation is
# taken possessively ([ \t]*+): nothing after it can start with a space or tab, so giving
# it back could not make a match, and trying to is slow on indented text. The lookahead
# names the characters such a line can go on with (a dash, the first letter of a word, a
# digit): most lines fail there, at one test (half the time on texts of short lines).
_PAGE_NUMBER_LINE = re.compile(
    r"\n[ \t]*(?=[-\u2013\u2014p\u0441\u0635\d])(?:[-\u2013\u2014]\s*)?"
    r"(?:page|стр\.?|страница|صفحه)?[ \t]*\d{1,4}(?:[ \t]*[-\u2013\u2014])?[ \t]*(?=\r?\n)",
    re.I,
)
_TOKEN = re.compile(r"[^\W_]+")
# On ASCII text, where [^\W_] is [A-Za-z0-9], tokens are what splitting at the other
# characters leaves (and str.translate is fast on ASCII).
_ASCII_SEPARATORS = {cp: " " for cp in range(128) if not chr(cp).isalnum()}
_MARKS = re.compile(
    r"[\u0300-\u036f\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640\u200d\u200e\u200f\u00ad\ufeff]"
)
# The runs of whitespace that are not a single space (two or more characters, or one other
# than a space): replacing them by a space turns every run of whitespace into one.
SPACE_RUNS = re.compile(r"\s(?:\s+|(?<=[^\S ]))")
# Runs of non-word characters, of underscores, and of ZWNJ not between two Arabic-script
# letters: "[^\w\u200c]+|_+|(?<![\u0600-\u06ff])\u200c+|\u200c+(?![\u0600-\u06ff])", written
# with every alternative starting with a single character, and leaving out runs that are
# a single space (each run is replaced by a space).
_AB = char_class(ARABIC_BLOCK)
_PUNCT = re.compile(
    rf"[^\w\u200c][^\w\u200c]+|[^\w\u200c ]|__*|\u200c(?<![{_AB}]\u200c)\u200c*"
    rf"|\u200c\u200c*(?![{_AB}])"
)
# _PUNCT for texts without ZWNJ and underscores
_NON_WORD = re.compile(r"[^\w\u200c][^\w\u200c]+|[^\w\u200c ]")
_ARABIC_SCRIPT = re.compile(f"[{char_class(*ARABIC_SCRIPT)}]")
# Characters for which drop_punctuation can change the tokens, and not only put spaces
# where tokenizing splits anyway (see Canonicalizer._text_for_tokens): Arabic script (a
# ZWNJ between its letters is kept, and hazm sees the spacing) and U+0345 COMBINING GREEK
# YPOGEGRAMMENI, the one non-word character that casefolds to a letter ("ι"; checked over
# all of Unicode in tests/test_canonical_fast.py; drop_marks removes it before, but this
# condition does not rely on that).
_PUNCTUATION_MATTERS = re.compile(f"[{char_class(*ARABIC_SCRIPT)}\u0345]")

# Letter variants hazm may leave, mapped to the Persian forms.
FA_LETTERS = str.maketrans(
    {
        "ي": "ی",
        "ى": "ی",
        "ئ": "ی",
        "ك": "ک",
        "ة": "ه",
        "ۀ": "ه",
        "ؤ": "و",
        "أ": "ا",
        "إ": "ا",
        "ٱ": "ا",
        "ٲ": "ا",
    }
)


class CharMap:
    """``text.translate(table)``, translating only the runs of characters in the table.

    ``str.translate`` looks every character of a non-ASCII text up in the table, which
    costs about as much as the rest of a step; a regex finds the (few) runs to translate,
    compiled on the first call (a few ms for a large table), so a map no text reaches costs
    nothing.
    """

    def __init__(self, table: dict[int, str]):
        self.table = table

    @cached_property
    def _runs(self) -> re.Pattern[str]:
        chars = "".join(re.escape(chr(cp)) for cp in sorted(self.table))
        return re.compile(f"[{chars}][{chars}]*")

    def __call__(self, text: str) -> str:
        return self._runs.sub(self._translate, text)

    def _translate(self, m: re.Match) -> str:
        return m[0].translate(self.table)


FA_LETTER_MAP = CharMap(FA_LETTERS)


@lru_cache(maxsize=1)
def _digit_table() -> dict[int, str]:
    return {
        cp: str(unicodedata.decimal(chr(cp)))
        for cp in range(128, 0x10000)
        if unicodedata.decimal(chr(cp), None) is not None
    }


@lru_cache(maxsize=1)
def _digit_map() -> CharMap:
    return CharMap(_digit_table())


def unify_digits(text: str) -> str:
    """Every decimal digit (Arabic-Indic, Persian, Devanagari, ...) to ASCII."""
    return text if text.isascii() else _digit_map()(text)


@lru_cache(maxsize=2)
def late_steps_table(unify: bool) -> np.ndarray:
    """Per code point (all of Unicode, int32): ``str.casefold`` then :func:`yo_to_ye`, then
    with ``unify`` :func:`unify_digits`, of the character alone, when that is one character;
    -1 when it is more ("ß" -> "ss"). The three map each character on its own (full case
    folding has no context), so where no character maps to -1, mapping each character is
    making the three steps (:func:`neardup.canonical.persian_loops.persian_pieces_many` does so).

    >>> t = late_steps_table(True); [chr(t[ord(c)]) for c in "Ё۱a"], int(t[ord("ß")])
    (['е', '1', 'a'], -1)
    """

    def make() -> np.ndarray:
        digits = _digit_table() if unify else {}
        out = np.arange(0x110000, dtype=np.int32)
        for cp in range(0x110000):
            ch = chr(cp)
            folded = ch.casefold()
            if folded != ch or ch == "ё" or cp in digits:
                folded = yo_to_ye(folded)
                folded = "".join(digits.get(ord(c), c) for c in folded)
                out[cp] = ord(folded) if len(folded) == 1 else -1
        return out

    return cached_table(f"late-steps-{'unify' if unify else 'keep'}", make, __file__)


def nfkc(text: str, backend: Backend = "reference") -> str:
    """NFKC; an ASCII text is its own NFKC (``backend``: :data:`Backend`).

    >>> nfkc("№ 5 … ﬁle café")
    'No 5 ... file café'
    """
    return (
        text
        if text.isascii() or unicodedata.is_normalized("NFKC", text)
        else nfkc_words(text, backend)
    )


def nfkc_words(text: str, backend: Backend = "reference") -> str:
    """``unicodedata.normalize("NFKC", text)``, normalizing only the words (runs between
    whitespace characters NFKC leaves alone) that hold a character NFKC may change or join
    (:func:`nfkc_unstable`), which is most often none or a few: NFKC never changes,
    reorders or composes across such a whitespace character (UAX #15: it is a
    normalization boundary on both sides). The characters are found in one pass over the
    text's code points (numpy, or compiled: ``backend``)."""
    cps, letters_loops = (
        np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4"),
        compiled_loops(backend),
    )
    hits = (
        letters_loops.positions_in(cps, nfkc_table())
        if letters_loops
        else np.flatnonzero(nfkc_table()[cps])
    ).tolist()
    if not hits:
        return text
    if len(hits) > len(text) // 16:  # many words to normalize: at once
        return unicodedata.normalize("NFKC", text)
    stable_space, word_end = _stable_spaces(), _word_end()
    out: list[str] = []
    last = 0
    for at in hits:
        if at < last:
            continue  # inside the word just normalized
        start = at
        while start > last and text[start - 1] not in stable_space:  # back to the word's start
            start -= 1
        m = word_end.search(text, at)
        end = m.start() if m else len(text)
        out.append(text[last:start])
        out.append(unicodedata.normalize("NFKC", text[start:end]))
        last = end
    out.append(text[last:])
    return "".join(out)


@lru_cache(maxsize=1)
def nfkc_table() -> np.ndarray:
    """Per code point: is it one of :func:`nfkc_unstable` (kept on disk:
    :mod:`neardup.runtime.tablecache`)."""

    def make() -> np.ndarray:
        table = np.zeros(0x110000, dtype=bool)
        table[[ord(ch) for ch in nfkc_unstable()]] = True
        return table

    return cached_table("nfkc-unstable", make, __file__)


@lru_cache(maxsize=1)
def _word_end() -> re.Pattern:
    """The first of :func:`_stable_spaces`."""
    return re.compile("[" + "".join(f"\\U{ord(ch):08x}" for ch in sorted(_stable_spaces())) + "]")


@lru_cache(maxsize=1)
def nfkc_unstable() -> frozenset[str]:
    """Every character NFKC may change in a text: those with a decomposition (canonical or
    compatibility) or a nonzero combining class, those that compose with the character
    before them (second members of canonical pairs, Hangul vowel and trailing jamo), and
    Hangul syllables (they take a trailing jamo). Not among them: precomposed letters that
    NFKC leaves as they are (й, ё, é) and whose decomposition starts with a starter that
    composes with nothing before it; next to characters outside this set they stay as they
    are. Checked against NFKC over all of Unicode in tests/test_canonical_fast.py."""
    second = _composition_seconds()
    decomposed, cps = _by_decomposition()
    cps |= set(range(0x1161, 0x1176)) | set(range(0x11A8, 0x11C3)) | set(range(0xAC00, 0xD7A4))
    cps |= second
    # canonical decompositions of starters: kept unless stable as above
    cps |= {cp for cp in decomposed if _starter_may_change(cp, second)}
    return frozenset(map(chr, cps))


def _by_decomposition() -> tuple[list[int], set[int]]:
    """The code points that are starters with a canonical decomposition, and those with a
    compatibility decomposition or a nonzero combining class (none above U+2FFFF has
    either)."""
    decomposed: list[int] = []
    cps: set[int] = set()
    for cp in range(0x30000):
        ch = chr(cp)
        d = unicodedata.decomposition(ch)
        if d and not d.startswith("<") and not unicodedata.combining(ch):
            decomposed.append(cp)
        elif d or unicodedata.combining(ch):
            cps.add(cp)
    return decomposed, cps


def _starter_may_change(cp: int, second: frozenset[int]) -> bool:
    """Whether NFKC may change a starter with a canonical decomposition: it changes it
    alone, or its decomposition starts with a mark or a character that may compose with
    the one before (``second``)."""
    ch = chr(cp)
    first = unicodedata.normalize("NFD", ch)[0]
    return bool(
        unicodedata.normalize("NFKC", ch) != ch
        or unicodedata.combining(first)
        or ord(first) in second
    )


@lru_cache(maxsize=1)
def _canonical_pairs() -> frozenset[tuple[int, int]]:
    """The canonical decompositions into two characters, as (first, second) code points
    (those excluded from composition too)."""
    pairs = set()
    for cp in range(0x30000):
        parts = unicodedata.decomposition(chr(cp)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            pairs.add((int(parts[0], 16), int(parts[1], 16)))
    return frozenset(pairs)


@lru_cache(maxsize=1)
def _composition_seconds() -> frozenset[int]:
    """The second characters of :func:`_canonical_pairs` (those that may compose with the
    character before them)."""
    return frozenset(second for _, second in _canonical_pairs())


@lru_cache(maxsize=1)
def dropped_marks() -> frozenset[str]:
    """The characters of :func:`nfkc_unstable` that NFKC only moves among the marks next
    to them and that :func:`drop_marks` drops: marks of its list with a nonzero combining
    class, no decomposition, and that compose with nothing (not second in a canonical pair).
    In a text whose only such characters are these, NFKC and then drop_marks give what
    drop_marks alone gives (Persian and Arabic harakat; not the hamza above U+0654, which
    composes: ا + ٔ -> أ)."""
    second = _composition_seconds()
    return frozenset(
        ch
        for ch in nfkc_unstable()
        if _MARKS.match(ch)
        and unicodedata.combining(ch)
        and not unicodedata.decomposition(ch)
        and ord(ch) not in second
    )


@lru_cache(maxsize=1)
def composing_marks() -> frozenset[str]:
    """The characters of :func:`nfkc_unstable` that NFKC changes only by composing them with
    the character before (they are second in a canonical pair) or by moving them among the
    marks beside them: marks with a nonzero combining class and no decomposition, not
    :func:`dropped_marks` (U+0654, the hamza above; U+0301, the acute accent)."""
    second = _composition_seconds()
    return frozenset(
        ch
        for ch in nfkc_unstable()
        if unicodedata.combining(ch) and not unicodedata.decomposition(ch) and ord(ch) in second
    )


@lru_cache(maxsize=1)
def composing_pairs() -> np.ndarray:
    """Each of :func:`_canonical_pairs` whose second is one of :func:`composing_marks`, as
    ``first << 21 | second`` (uint64, sorted; kept on disk: :mod:`neardup.runtime.tablecache`; those
    excluded from composition too: more than NFKC composes)."""

    def make() -> np.ndarray:
        marks = {ord(ch) for ch in composing_marks()}
        return np.array(
            sorted(first << 21 | second for first, second in _canonical_pairs() if second in marks),
            dtype=np.uint64,
        )

    return cached_table("composing-pairs", make, __file__)


@lru_cache(maxsize=1)
def _stable_spaces() -> frozenset[str]:
    """The whitespace characters that end words for :func:`nfkc_words`: those NFKC leaves
    alone (U+00A0, a compatibility form of the space, is not one)."""
    unstable = nfkc_table()
    return frozenset(ch for ch in map(chr, range(0x3001)) if ch.isspace() and not unstable[ord(ch)])


def drop_marks(text: str) -> str:
    """Combining marks (Latin accents, Arabic diacritics), tatweel, ZWJ, bidi marks, soft
    hyphens out."""
    return text if text.isascii() else _MARKS.sub("", text)


def mark_code_points() -> list[int]:
    """The code points :func:`drop_marks` takes out (all in the BMP).

    >>> marks = mark_code_points()
    >>> [hex(c) for c in marks][:2], drop_marks("".join(map(chr, marks))) == ""
    (['0xad', '0x300'], True)
    """
    every = np.arange(0x10000, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")
    return [m.start() for m in _MARKS.finditer(every)]


def drop_page_numbers(text: str) -> str:
    """Lines holding only a page number out (``_PAGE_NUMBER_LINE``; none without a newline)."""
    return _PAGE_NUMBER_LINE.sub("\n ", text) if "\n" in text else text


def yo_to_ye(text: str) -> str:
    return text.replace("ё", "е")


def drop_punctuation(text: str) -> str:
    """Runs of non-word characters, of underscores, and ZWNJ not between two Arabic-script
    letters, each to a space."""
    if "\u200c" not in text and "_" not in text:
        return _NON_WORD.sub(" ", text)  # the other alternatives of _PUNCT cannot match
    return _PUNCT.sub(" ", text)


@lru_cache(maxsize=1)
def _hyphen_break() -> re.Pattern[str]:
    """A hyphen (``-``, U+00AD or U+2010) at a line end with a word character on either side,
    compiled on first use (a few ms), so text without U+00AD and U+2010 never pays for it."""
    return re.compile(r"[-\u00ad\u2010](?<=\w[-\u00ad\u2010])\s*\n\s*(?=\w)")


def rejoin_hyphenation(text: str) -> str:
    r"""Join words broken by a hyphen at a line end: "inter-\nnational" -> "international" (001).

    The result is that of ``re.sub(r"(\w)-\s*\n\s*(\w)", r"\1\2", text)``, found from the
    (rare) hyphens: joins are made left to right, and a break whose first word character
    is the second one of the previous join is left as it is ("a-\nb-\nc" -> "ab-\nc").
    """
    if "\n" not in text:
        return text
    parts, start, joined_at = [], 0, -1
    # whether U+00AD or U+2010 may start a break too (else only "-" can)
    wide = not text.isascii() and ("\u00ad" in text or "\u2010" in text)
    for m in (_hyphen_break() if wide else _ASCII_HYPHEN_BREAK).finditer(text):
        if m.start() - 1 != joined_at:  # joined_at: the second word character of the last join
            parts.append(text[start : m.start()])
            start = joined_at = m.end()
    if not parts:
        return text
    parts.append(text[start:])
    return "".join(parts)


def has_arabic_script(text: str) -> bool:
    return not text.isascii() and _ARABIC_SCRIPT.search(text) is not None


def punctuation_matters(text: str) -> bool:
    return not text.isascii() and _PUNCTUATION_MATTERS.search(text) is not None


def check_backend(backend: str) -> Backend:
    """``backend`` where it is one of :data:`BACKENDS`, else a ValueError naming them."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    return backend  # type: ignore[return-value]


def compiled_loops(backend: Backend):
    """The compiled form of :mod:`.letters_loops` for the "compiled" backend where it runs
    (:func:`neardup.sketches.loops.compiled`), None for "reference" or where the loops run
    interpreted (the numpy form of the same map then serves: faster than the loop
    interpreted); a ValueError for another name."""
    from ..sketches.loops import compiled

    if check_backend(backend) == "reference":
        return None
    return compiled("neardup.canonical.letters_loops")


def late_steps(text: str, table: np.ndarray, backend: Backend = "reference") -> str | None:
    """``text`` through :func:`late_steps_table` ``table`` (casefold, :func:`yo_to_ye` and
    perhaps :func:`unify_digits`), or None where a character maps to more than one (the
    steps then make it): :func:`_late_steps_many` of one text.

    >>> table = late_steps_table(True)
    >>> late_steps("Ёлка İ", table) is None, late_steps("Ёлка ۱۲ ABC", table)
    (True, 'елка 12 abc')
    """
    return _late_steps_many([text], table, backend)[0]


def _late_steps_many(
    texts: Sequence[str], table: np.ndarray, backend: Backend = "reference"
) -> list[str | None]:
    """:func:`late_steps` of each text, all in one compiled pass over their code points
    (:func:`.letters_loops.map_code_points`); the map keeps each text's length, so they are
    cut apart where they were joined. ``str.casefold`` reads a text that is not all ASCII at
    about 15 ns a character.

    >>> _late_steps_many(["Ёж", "ß", "ДОМ"], late_steps_table(True))
    ['еж', None, 'дом']
    """
    made = late_steps_spans(texts, table, backend)
    return [
        None if m is None else t
        for m, t in zip(made, decoded([m or "" for m in made]), strict=True)
    ]


def late_steps_spans(
    texts: Sequence[str], table: np.ndarray, backend: Backend = "reference"
) -> list[Span | None]:
    """:func:`_late_steps_many` as :data:`Span` of the map's output (not decoded)."""
    made: list[Span | None] = []
    letters_loops = compiled_loops(backend)
    for _, cps, bounds in grouped_code_points(texts, list(range(len(texts))), separated=True):
        if letters_loops:
            out, ok = letters_loops.map_code_points(cps, bounds, table)
        else:
            mapped = table[cps]
            # (each text has its space: none empty)
            ok = np.add.reduceat((mapped < 0).astype(np.int64), bounds[:-1]) == 0
            out = np.where(np.repeat(ok, np.diff(bounds)), mapped, cps)
        made += [
            span if good else None
            for span, good in zip(spans_of(out, bounds), ok.tolist(), strict=True)
        ]
    return made


@lru_cache(maxsize=1)
def rare_characters() -> re.Pattern:
    digits = "".join(f"\\U{cp:08x}" for cp in sorted(_digit_table()))
    return re.compile(f"[{_MARKS.pattern[1:-1]}{_PUNCTUATION_MATTERS.pattern[1:-1]}{digits}]")


def split_tokens(canon: str) -> list[str]:
    """Tokens (runs of ``[^\\W_]``) of a canonical text."""
    return canon.translate(_ASCII_SEPARATORS).split() if canon.isascii() else _TOKEN.findall(canon)


@lru_cache(maxsize=4)
def code_point_table(predicate) -> np.ndarray:
    """Per code point (all of Unicode): ``predicate`` of the character, a ``str`` method
    such as ``str.isalpha``, as a bool array indexed by code point (made once per machine
    and Python: :mod:`neardup.runtime.tablecache`).

    >>> code_point_table(str.isdigit)[[ord("7"), ord("x"), ord("\u0667")]].tolist()
    [True, False, True]
    """
    return cached_table(
        predicate.__qualname__,
        lambda: np.fromiter(map(predicate, map(chr, range(0x110000))), dtype=bool, count=0x110000),
        __file__,
    )


def token_char_table() -> np.ndarray:
    """Per code point: is it a token character, ``[^\\W_]`` of :data:`_TOKEN` (for Python's
    ``re``, a word character is one ``str.isalnum`` accepts, or the underscore; checked over
    all of Unicode in tests/test_canonical_fast.py)."""
    return code_point_table(str.isalnum)


def digit_table() -> np.ndarray:
    """Per code point: ``str.isdigit`` (a token of such characters only is a number)."""
    return code_point_table(str.isdigit)


def token_hashes(
    cps: np.ndarray, bounds: np.ndarray, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tokens of :func:`split_tokens` in the code points ``cps`` of texts that start at
    ``bounds`` (ascending; texts separated by a non-token character): for each token in
    order, its :func:`~neardup.sketches.hashing.hash_strings` hash, whether it is a number (all
    :func:`digit_table`) and its text. Tokens are the runs of :func:`token_char_table`
    characters, hashed from their code points in one compiled pass
    (:func:`neardup.canonical.letters_loops.token_hashes`), without a string per token.

    >>> from ..sketches.hashing import code_points, hash_strings
    >>> h, number, text = token_hashes(code_points("Hi, x_2 да! 42"), np.array([0, 8]), seed=1)
    >>> want = hash_strings(split_tokens("Hi, x_2 да! 42"), 1)
    >>> h.tolist() == want.tolist(), number.tolist(), text.tolist()
    (True, [False, False, True, False, True], [0, 0, 0, 1, 1])
    """
    from ..sketches.hashing import string_seed
    from ..sketches.loops import loops

    letters_loops = loops("neardup.canonical.letters_loops")

    return letters_loops.token_hashes(
        np.asarray(cps, dtype=np.uint32),
        token_char_table(),
        digit_table(),
        np.asarray(bounds, dtype=np.int64),
        np.uint64(string_seed(seed)),
    )
