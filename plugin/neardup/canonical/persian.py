"""Persian: hazm normalization (its tables shipped with neardup) and segmentation-invariant tokens.

hazm's ``Normalizer`` unifies Arabic letter variants, digits, diacritics and tatweel and
fixes the spacing of affixes ("می", "ها", "ترین", ...). Writers also type the zero-width
non-joiner (ZWNJ) of compounds as a space or leave it out ("دانش‌آموزان", "دانش آموزان",
"دانشآموزان"), and hazm does not rejoin compounds. Two remedies, measured in
``benchmarks/persian.py`` (results/persian.md) on held-out texts of the Persian corpus:

* ``fa_segmentation="anchors"`` (the default, a setting of :class:`~neardup.config.Config`):
  in each run of Persian words the spaces are removed and the run is cut again before every
  *anchor*, a letter pair of chosen letters (``fa_anchors``), so the pieces are
  content-defined (the anchor-based boundaries of source 004, "Spamooborona") and about a
  word long (4.4 letters on fa.jsonl, words 4.7).
  Spaces, ZWNJ and joined forms give the same string, hence the same tokens: resemblance
  1.0 by construction for every segmentation variant. A letter changed changes the one or
  two pieces around it, as a changed word does. Persian stop words are not removed (they are
  inside the pieces; :func:`~.stopwords.stopwords_for` gives none for fa).
* ``"join"``: words kept, and words written apart joined by hazm's lexicon
  (:func:`join_compounds`, rules in ``fa_join_rules``). Measured: far from invariant (median 0.93,
  many copies below 0.95), as names and new compounds are not in the lexicon.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from types import ModuleType
from typing import Any, Sequence, get_args

import numpy as np
import xxhash

from ..config import Config, FaJoinRule, FaSegmentation
from ..errors import NeardupError
from ..runtime.tablecache import cached_table
from .letters import (
    Backend,
    check_backend,
    FA_LETTER_MAP,
    FA_LETTERS,
    ZWNJ,
    CharMap,
    SPACE_RUNS,
    code_point_table,
    mark_code_points,
    token_char_table,
)
from .spans import Span, decoded, grouped_code_points, spans_of
from .ranges import (
    ARABIC_BLOCK,
    ARABIC_SCRIPT,
    OTHER_LETTERS,
    PERSIAN_DIGITS,
    PERSIAN_LETTERS,
    char_class,
)


#: A part starting (ending) at least this many of the ZWNJ compounds of hazm's lexicon is
#: joined to the next (previous) word wherever it stands apart (benchmarks/persian.py).
PRODUCTIVE = 5
#: Longest run of words joined into one.
MAX_PARTS = 3
#: Joins :func:`join_compounds` may make: "lexicon" (the joined words are a word),
#: "first" / "second" (a productive first / second part). Compared in benchmarks/persian.py.
JOIN_RULES: tuple[str, ...] = get_args(FaJoinRule)
#: "anchors" | "join" | "none" (ZWNJ removed between letters only, the earlier behaviour).
SEGMENTATIONS: tuple[str, ...] = get_args(FaSegmentation)


@dataclass(frozen=True, kw_only=True)
class Segmentation:
    """How Persian runs become tokens (module docstring), made from the index's
    :class:`~neardup.config.Config` (``fa_segmentation``, ``fa_join_rules``,
    ``fa_anchors``) by the :class:`~.canonicalizer.Canonicalizer`: ``way`` one of
    :data:`SEGMENTATIONS`; ``rules`` the joins of :func:`join_compounds` ("join");
    ``anchors`` (first_mod, second_mod, seed) of :func:`_anchor_re` ("anchors": pieces of
    4.4 letters on average on fa.jsonl, standard deviation 3.6; words 4.7)."""

    way: str = "anchors"
    rules: frozenset[str] = frozenset({"lexicon", "second"})
    anchors: tuple[int, int, int] = (3, 2, 14)

    @classmethod
    def of(cls, config: Config) -> "Segmentation":
        """The segmentation ``config`` sets."""
        return cls(
            way=config.fa_segmentation,
            rules=frozenset(config.fa_join_rules),
            anchors=config.fa_anchors,
        )


#: The default segmentation (that of a default :class:`~neardup.config.Config`).
DEFAULT = Segmentation()

# ZWNJ runs between Arabic-script letters ("(?<=[\u0600-\u06ff])\u200c+(?=[\u0600-\u06ff])",
# starting at the ZWNJ).
_AB, _FA = char_class(ARABIC_BLOCK), char_class(PERSIAN_LETTERS)
_ZWNJ_INSIDE = re.compile(rf"\u200c(?<=[{_AB}]\u200c)\u200c*(?=[{_AB}])")
# Two or more Persian words separated by single spaces (Arabic-script letters, U+0621..U+06D5).
_FA_WORD_RUN = re.compile(rf"[{_FA}][{_FA}]*(?: [{_FA}][{_FA}]*)+")


#: hazm 0.10.0's normalizer tables (:data:`TABLES`), shipped with neardup with their source and
#: hazm's MIT license (``data/hazm-LICENSE``): the letter steps need no hazm installed, and
#: they are the same wherever neardup runs, whichever hazm is installed or none.
HAZM_TABLES_FILE = Path(__file__).resolve().parent / "data" / "hazm-0.10.0-normalizer.json"
HAZM_EXTRA = "pip install 'neardup[hazm]'"


class HazmMissing(NeardupError, ImportError):
    """A step that needs hazm's word lists or models, and hazm is not installed."""


def import_hazm(what: str):
    """The ``hazm`` module, or :class:`HazmMissing` saying what needs it and how to install it."""
    try:
        import hazm
    except ImportError as e:
        raise HazmMissing(
            f"{what} uses hazm, which is not installed: {HAZM_EXTRA} "
            "(hazm installs on Python 3.10 to 3.13)"
        ) from e
    return hazm


@lru_cache(maxsize=1)
def has_hazm() -> bool:
    """Whether hazm can be imported (without importing it); asked once per process (the
    finders' search, tenths of a millisecond, would otherwise come with each Persian text
    that has a "می")."""
    import importlib.util

    return importlib.util.find_spec("hazm") is not None


@lru_cache(maxsize=1)
def shipped_tables() -> dict[str, Any]:
    """The normalizer tables of ``HAZM_TABLES_FILE``."""
    import json

    return json.loads(HAZM_TABLES_FILE.read_text(encoding="utf-8"))["tables"]


@lru_cache(maxsize=1)
def _hazm_normalizer() -> "PrebuiltNormalizer":
    """The Persian normalizer: :class:`PrebuiltNormalizer` on the shipped tables of hazm 0.10."""
    return PrebuiltNormalizer(shipped_tables())


#: The tables of hazm 0.10's ``Normalizer.__init__`` its letter steps use (the keys of
#: ``HAZM_TABLES_FILE``'s "tables").
TABLES = (
    "translation_src",
    "translation_dst",
    "number_translation_src",
    "number_translation_dst",
    "persian_style_patterns",
    "diacritics_patterns",
    "specials_chars_patterns",
    "replacements",
)


class PrebuiltNormalizer:
    """hazm 0.10's ``Normalizer`` on its tables (shipped with neardup, :func:`shipped_tables`),
    built once; hazm itself imported only when a step needs its word lists.

    hazm 0.10's ``normalize`` builds its letter and digit tables (``hazm.maketrans``) on
    every call and applies them to every character; here they are built at construction and
    applied to the runs they change. The letter steps (``persian_style``, ``persian_number``,
    ``remove_diacritics``, ``unicodes_replacement``, ``remove_specials_chars``) are hazm's
    own code on hazm's own tables, so signing (:meth:`normalize_letters`) never needs hazm.
    ``correct_spacing``, ``decrease_repeated_chars`` and ``seperate_mi`` look words up in
    hazm's lexicon: with hazm 0.10 the last two are hazm's code on its word and verb lists,
    kept on disk once made (:func:`hazm_words`, :func:`mi_verbs`: no hazm import and no
    lemmatizer set-up, two to three seconds, in every process), with another hazm they go to
    a stock ``hazm.Normalizer`` made on first use (as ``correct_spacing`` always does); the
    two run only when they can change the text (a character three times in a row, a superset of
    ``more_than_two_repeat_pattern``; "می" in it, as every match of ``joint_mi_patterns``
    holds it). Without hazm installed those two leave the text as it is (:attr:`has_lexicon`)
    and ``correct_spacing`` raises :class:`HazmMissing`. ``normalize`` runs the same public
    steps in the same order as hazm 0.10.0's. Checked against the stock ``Normalizer`` in
    tests/test_canonical_fast.py where hazm 0.10 is installed.
    """

    def __init__(self, tables: dict[str, Any]) -> None:
        """``tables``: those of :data:`TABLES` (:func:`shipped_tables`). The maps and
        patterns built from them are public: :func:`_piece_tables` reads them."""
        t = tables
        self.letter_map = CharMap(
            {ord(a): b for a, b in zip(t["translation_src"], t["translation_dst"], strict=False)}
        )
        self.number_map = CharMap(
            {
                ord(a): b
                for a, b in zip(
                    t["number_translation_src"], t["number_translation_dst"], strict=False
                )
            }
        )
        compiled = lambda patterns: [(re.compile(p), r) for p, r in patterns]  # noqa: E731
        self.style_patterns = compiled(t["persian_style_patterns"])
        self.diacritic_patterns = compiled(t["diacritics_patterns"])
        self.special_patterns = compiled(t["specials_chars_patterns"])
        self.replacement_patterns = compiled(t["replacements"])
        self._repeat = re.compile(r"(.)\1\1", re.S)
        self._stock: Any = None

    @property
    def has_lexicon(self) -> bool:
        """Whether the steps that look words up can run (hazm is installed)."""
        return has_hazm()

    def _full(self) -> Any:
        if self._stock is None:
            self._stock = import_hazm("Persian spacing and word-list steps").Normalizer()
        return self._stock

    @staticmethod
    def _replace(patterns: list[tuple[re.Pattern, str]], text: str) -> str:
        for p, r in patterns:  # hazm.regex_replace (zip above: hazm.maketrans, which truncates too)
            text = p.sub(r, text)
        return text

    def normalize(self, text: str) -> str:
        text = self.letter_map(text)
        steps = (
            self.persian_style,
            self.persian_number,
            self.remove_diacritics,
            self.correct_spacing,
        )
        steps += (
            self.unicodes_replacement,
            self.remove_specials_chars,
            self.decrease_repeated_chars,
            self.seperate_mi,
        )
        for step in steps:  # all of them: the default settings
            text = step(text)
        return text

    def normalize_letters(self, text: str) -> str:
        """:meth:`normalize` without its spacing steps (``correct_spacing``,
        ``seperate_mi``, four fifths of its time) and without ``decrease_repeated_chars``
        (it looks words up, so its result depends on where words end): for anchor
        pieces, where the spaces between Persian letters are removed anyway."""
        text = self.letter_map(text)
        steps = (
            self.persian_style,
            self.persian_number,
            self.remove_diacritics,
            self.unicodes_replacement,
            self.remove_specials_chars,
        )
        for step in steps:
            text = step(text)
        return text

    def persian_style(self, text: str) -> str:
        return self._replace(self.style_patterns, text)

    def persian_number(self, text: str) -> str:
        return self.number_map(text)

    def remove_diacritics(self, text: str) -> str:
        return self._replace(self.diacritic_patterns, text)

    def remove_specials_chars(self, text: str) -> str:
        return self._replace(self.special_patterns, text)

    def unicodes_replacement(self, text: str) -> str:
        return self._replace(self.replacement_patterns, text)

    def correct_spacing(self, text: str) -> str:
        return self._full().correct_spacing(text)

    def decrease_repeated_chars(self, text: str) -> str:
        """hazm 0.10's ``Normalizer.decrease_repeated_chars`` (its patterns, its rule) with
        the words of its tokenizer from :func:`hazm_words`: a letter three or more times is
        cut to one or two, whichever makes a known word (two when neither or both do)."""
        if not self._repeat.search(text) or not self.has_lexicon:
            return text
        if not _hazm_is_0_10():
            return self._full().decrease_repeated_chars(text)
        words = hazm_words()
        for m in _repeated_word().finditer(text):
            word = m.group()
            if word not in words:
                no_repeat = _MORE_THAN_TWO.sub(r"\1", word)
                two_repeat = _MORE_THAN_TWO.sub(r"\1\1", word)
                if (no_repeat in words) != (two_repeat in words):
                    text = text.replace(word, no_repeat if no_repeat in words else two_repeat)
                else:
                    text = text.replace(word, two_repeat)
        return text

    def seperate_mi(self, text: str) -> str:
        """hazm 0.10's ``Normalizer.seperate_mi`` (its pattern, its replacement) looked up in
        :func:`mi_verbs` instead of a stock ``Normalizer``'s verbs: the same result, without
        importing hazm and building its lemmatizer (two to three seconds) in every process."""
        if "می" not in text or not self.has_lexicon:
            return text
        if not _hazm_is_0_10():
            return self._full().seperate_mi(text)
        verbs = mi_verbs()
        for m in _JOINT_MI.findall(text):
            r = _MI_PREFIX.sub("\\1\u200c", m)
            if r in verbs:
                text = text.replace(m, r)
        return text


#: hazm 0.10's ``more_than_two_repeat_pattern`` (and, in :func:`_repeated_word`,
#: ``repeated_chars_pattern``).
_MORE_THAN_TWO = re.compile(r"([آابپتثجچحخدذرزژسشصضطظعغفقکگلمنوهی])\1{2,}")


@lru_cache(maxsize=1)
def _repeated_word() -> re.Pattern[str]:
    """hazm 0.10's ``repeated_chars_pattern``, compiled on first use (a few ms), so text
    without Persian never pays for it."""
    return re.compile(
        r"[آابپتثجچحخدذرزژسشصضطظعغفقکگلمنوهی]*"
        + _MORE_THAN_TWO.pattern
        + "[آابپتثجچحخدذرزژسشصضطظعغفقکگلمنوهی]*"
    )


@lru_cache(maxsize=1)
def _hazm_is_0_10() -> bool:
    """Whether the installed hazm is 0.10 (whose steps :func:`hazm_words` and :func:`mi_verbs`
    serve)."""
    from importlib.metadata import version

    return version("hazm").startswith("0.10.")


def _hazm_cached(what: str, make) -> frozenset[str]:
    """The strings ``make()`` derives from hazm's data, made once per machine and hazm version
    (hazm imported then) and kept on disk (:func:`neardup.runtime.tablecache.cached_table`)."""
    from importlib.metadata import version

    return frozenset(
        cached_table(
            f"hazm-{version('hazm')}-{what}", lambda: np.array(sorted(make()), dtype=str), __file__
        ).tolist()
    )


@lru_cache(maxsize=1)
def hazm_words() -> frozenset[str]:
    """The words of hazm's ``WordTokenizer(join_verb_parts=False).words`` (its word list)."""

    def make() -> list[str]:
        return list(import_hazm("Persian search text").WordTokenizer(join_verb_parts=False).words)

    return _hazm_cached("words", make)


#: hazm 0.10's ``joint_mi_patterns`` and the prefix its ``seperate_mi`` separates.
_JOINT_MI = re.compile(r"\bن?می[آابپتثجچحخدذرزژسشصضطظعغفقکگلمنوهی]+")
_MI_PREFIX = re.compile("^(ن?می)")


@lru_cache(maxsize=1)
def mi_verbs() -> frozenset[str]:
    """The verb forms of hazm's lemmatizer (``Lemmatizer(joined_verb_parts=False).verbs``)
    that start with "می" or "نمی" and a ZWNJ: all that ``seperate_mi`` looks up. Made once
    per machine and hazm version (:func:`_hazm_cached`)."""

    def make() -> list[str]:
        verbs = import_hazm("Persian search text").Lemmatizer(joined_verb_parts=False).verbs
        return [v for v in verbs if v.startswith(("می\u200c", "نمی\u200c"))]

    return _hazm_cached("mi-verbs", make)


@lru_cache(maxsize=1)
def compound_lexicon() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """From hazm's word list (``hazm.words_list``): every word with its ZWNJ and spaces
    removed, and the productive first and second parts of its ZWNJ compounds."""
    words_list = import_hazm("Joining Persian compounds by hazm's lexicon").words_list

    joined: set[str] = set()
    first: Counter[str] = Counter()
    second: Counter[str] = Counter()
    for word, _freq, _tags in words_list():
        parts = [p for p in re.split("[\u200c ]", FA_LETTER_MAP(word)) if p]
        if not parts:
            continue
        joined.add("".join(parts))
        if len(parts) > 1:
            first[parts[0]] += 1
            second[parts[-1]] += 1
    return (
        frozenset(joined),
        frozenset(p for p, n in first.items() if n >= PRODUCTIVE),
        frozenset(p for p, n in second.items() if n >= PRODUCTIVE),
    )


def join_compounds(text: str, rules: frozenset[str] = DEFAULT.rules) -> str:
    """Join Persian words written apart that form one word (see the module docstring).

    Left to right, the longest run of up to ``MAX_PARTS`` words that joins is joined: a run
    joins when its concatenation is in the lexicon, or (two words) when the first is a
    productive first part or the second a productive second part. A joined word may join
    the next one again ("نیمه حرفه ای" -> "نیمهحرفهای").
    """
    if " " not in text:
        return text
    return _FA_WORD_RUN.sub(partial(_join_run, rules=rules), text)


def _join_run(m: re.Match, rules: frozenset[str]) -> str:
    lexicon, first, second = compound_lexicon()
    if "lexicon" not in rules:
        lexicon = frozenset()
    first = first if "first" in rules else frozenset()
    second = second if "second" in rules else frozenset()
    words = m[0].split(" ")
    out: list[str] = []
    i, n = 0, len(words)
    while i < n:
        cur = words[i]
        i += 1
        while i < n:
            cand, k = _joins(cur, words, i, lexicon, first, second)
            if not k:
                break
            cur = cand
            i += k
        out.append(cur)
    return " ".join(out)


def _joins(
    cur: str,
    words: list[str],
    i: int,
    lexicon: frozenset[str],
    first: frozenset[str],
    second: frozenset[str],
) -> tuple[str, int]:
    """(``cur`` joined, how many of ``words`` from ``i`` on it takes): the most (up to
    ``MAX_PARTS`` - 1) that make a word of ``lexicon``, else the next one where ``cur`` is a
    productive first part or it a productive second part, else none (``cur``, 0)."""
    for k in range(min(MAX_PARTS - 1, len(words) - i), 0, -1):
        cand = cur + "".join(words[i : i + k])
        if cand in lexicon:
            return cand, k
    if cur in first or words[i] in second:
        return cur + words[i], 1
    return cur, 0


# Spaces between two Persian letters (U+0621..U+06D5).
_SPACE_INSIDE = re.compile(rf" (?<=[{_FA}] ) *(?=[{_FA}])")
# Runs of Persian digits (hazm writes every digit so): set apart from the letters around
# them, so that "۲۰‌دسامبر", "۲۰ دسامبر" and "۲۰دسامبر" give the same tokens.
_DIGITS = re.compile(f"[{char_class(PERSIAN_DIGITS)}][{char_class(PERSIAN_DIGITS)}]*")
# A Persian letter three or more times (hazm's decrease_repeated_chars, on joined runs).
_REPEATS = re.compile(rf"([{_FA}])\1\1\1*")


@lru_cache(maxsize=4)
def _anchor_re(first_mod: int, second_mod: int, seed: int) -> re.Pattern:
    """Positions before an anchor: a Persian letter of the set A followed by one of the set
    B, each set chosen by the letters' xxh32 (0 mod ``first_mod`` / ``second_mod``). One
    lookahead of two character classes: a seventh of the time of a table of letter pairs."""
    import xxhash

    letters = [
        chr(c) for c in range(PERSIAN_LETTERS[0], PERSIAN_LETTERS[1] + 1) if chr(c).isalpha()
    ]
    first = "".join(a for a in letters if xxhash.xxh32_intdigest(a.encode(), seed) % first_mod == 0)
    second = "".join(
        b for b in letters if xxhash.xxh32_intdigest(b.encode(), seed + 1000) % second_mod == 0
    )
    return re.compile(f"(?=[{first}][{second}])")


def anchor_pieces(text: str, anchors: tuple[int, int, int] = DEFAULT.anchors) -> str:
    """Every run of Persian words as one string (a letter repeated three times or more kept
    twice) cut again before each anchor (see the module docstring): "دانش آموزان",
    "دانش‌آموزان" and "دانشآموزان" give the same pieces."""
    text = _SPACE_INSIDE.sub("", _DIGITS.sub(r" \g<0> ", text))
    return _anchor_re(*anchors).sub(
        " ", _REPEATS.sub(r"\1\1", text) if _REPEATS.search(text) else text
    )


def normalize_persian(
    text: str, segmentation: Segmentation = DEFAULT, backend: Backend = "reference"
) -> str:
    """hazm normalization, the remaining Arabic letter variants, then ZWNJ: removed between
    Arabic-script letters (one word), a space elsewhere (hazm may attach a prefix to a
    word of another script); then ``segmentation`` (for anchors, hazm's
    spacing steps are skipped: the spaces between Persian letters go anyway).

    The "reference" ``backend`` makes the steps one regular expression or table at a time;
    "compiled", with anchors, one compiled pass (:func:`_compiled`) where it applies (no
    character that needs hazm's ``persian_style`` or maps to more than one), the same text
    (tests/test_canonical_fast.py).

    >>> joined = normalize_persian("دانشآموزان")
    >>> normalize_persian("دانش آموزان") == normalize_persian("دانش\u200cآموزان") == joined
    True
    >>> normalize_persian("دانش\u200cآموزان", backend="compiled") == joined
    True
    """
    if check_backend(backend) == "compiled" and segmentation.way == "anchors":
        made = _compiled(text, step=False, anchors=segmentation.anchors)
        if made is not None:
            return made[0]
    hazm = _hazm_normalizer()
    anchors = segmentation.way == "anchors"
    text = (hazm.normalize_letters if anchors else hazm.normalize)(SPACE_RUNS.sub(" ", text))
    text = _ZWNJ_INSIDE.sub("", FA_LETTER_MAP(text)).replace(ZWNJ, " ")
    if segmentation.way == "anchors":
        return anchor_pieces(text, segmentation.anchors)
    return join_compounds(text, segmentation.rules) if segmentation.way == "join" else text


@lru_cache(maxsize=4)
def _piece_tables(
    anchors: tuple[int, int, int] = DEFAULT.anchors,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The tables of :func:`.persian_loops.persian_pieces_many`: whitespace (``str.isspace``,
    Python's ``\\s``), the letter map and the two anchor sets of ``anchors``; None where the
    tables hold a pattern wider than one character (none in hazm 0.10's).

    The letter map is ``FA_LETTER_MAP(hazm.normalize_letters(c))`` of each BMP character
    ``c``: its code point, -1 for none, -2 for more than one or where ``persian_style``
    could act (a character the letter table makes a quotation mark or a period: its
    patterns need one). The steps it composes each replace single characters (checked:
    their patterns match one character exactly), so mapping each character is making the
    steps in turn. It is derived from the code points the tables name, and kept on disk
    under a digest of the tables (:mod:`neardup.runtime.tablecache`)."""
    hazm = _hazm_normalizer()
    patterns = hazm.diacritic_patterns + hazm.special_patterns + hazm.replacement_patterns

    def make() -> np.ndarray:
        every = np.arange(0x110000, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")
        # (a pattern that can match a run, or two characters, matches more here)
        doubled = "".join(c + c for c in every)
        touched = (
            set(hazm.letter_map.table)
            | set(hazm.number_map.table)
            | set(FA_LETTERS)
            | {ord('"'), ord(".")}
        )
        for p, _ in patterns:
            found = [m for text in (every, doubled) for m in p.finditer(text)]
            if any(m.end() - m.start() != 1 for m in found):
                # (none in hazm 0.10) a pattern wider than a character: the pass is off
                return np.zeros(0, dtype=np.int32)
            touched.update(ord(m[0]) for m in found)
        if max(touched) >= 0x10000:
            return np.zeros(0, dtype=np.int32)  # (none in hazm 0.10) the compiled pass is off
        table = np.arange(0x10000, dtype=np.int32)
        for cp in touched:
            out = FA_LETTER_MAP(hazm.normalize_letters(chr(cp)))
            table[cp] = ord(out) if len(out) == 1 else -1 if not out else -2
            if hazm.letter_map(chr(cp)) in ('"', "."):
                table[cp] = -2
        return table

    digest = xxhash.xxh64_hexdigest(
        repr(
            (
                sorted(hazm.letter_map.table.items()),
                sorted(hazm.number_map.table.items()),
                [(p.pattern, r) for p, r in patterns],
                sorted(FA_LETTERS.items()),
            )
        ).encode()
    )
    table = cached_table(f"persian-letters-{digest}", make, __file__)
    if not len(table):
        return None
    # (0x700: any code point above)
    first, second = (np.zeros(0x701, dtype=np.bool_) for _ in range(2))
    for chars, flags in zip(
        re.findall(r"\[([^\]]*)\]", _anchor_re(*anchors).pattern), (first, second), strict=True
    ):
        flags[[ord(c) for c in chars]] = True
    return code_point_table(str.isspace), table, first, second


def _compiled(
    text: str,
    step: bool = True,
    late: np.ndarray | None = None,
    marks: bool = False,
    anchors: tuple[int, int, int] = DEFAULT.anchors,
    form: ModuleType | None = None,
) -> tuple[str, bool] | None:
    """:func:`compiled_spans` of one text, decoded: with ``marks`` drop_marks first; with
    ``step`` the punctuation step and the Persian step after it
    (``persian_step(drop_punctuation(text))``), else :func:`normalize_persian` with anchors;
    then the characters through ``late`` (:func:`~.letters.late_steps_table`) where each maps
    to one: (text, whether ``late`` was applied), or None where the pass does not apply.
    ``form``: the form of :mod:`.persian_loops` that makes the pass (as
    :func:`compiled_spans`); here the interpreted one, which every install has:

    >>> from neardup.canonical import persian_loops
    >>> made = _compiled("دانش\u200cآموزان", step=False, form=persian_loops)
    >>> made[0] == normalize_persian("دانشآموزان")
    True
    """
    made = compiled_spans([text], step, late, marks, anchors, form)[0]
    return None if made is None else (decoded([made[0]])[0], made[1])


def compiled_spans(
    texts: Sequence[str],
    step: bool = True,
    late: np.ndarray | None = None,
    marks: bool = False,
    anchors: tuple[int, int, int] = DEFAULT.anchors,
    form: ModuleType | None = None,
) -> list[tuple[Span, bool] | None]:
    """:func:`_compiled` of each text as a :data:`~.spans.Span` of the pass's output, the
    texts in groups joined for one compiled pass each
    (:func:`.persian_loops.persian_pieces_many`).
    ``form`` is the form of :mod:`.persian_loops` that makes the pass: by default the compiled
    one, and None for every text where the loops run interpreted
    (:func:`neardup.sketches.loops.compiled`): the steps one by one then serve, as where the
    pass does not apply (faster than the pass interpreted). The tests give the interpreted
    form to check it equal to the compiled one and to the steps."""
    from ..sketches.loops import compiled

    persian_loops = form or (compiled("neardup.canonical.persian_loops") if texts else None)
    tables = _piece_tables(anchors) if persian_loops is not None else None
    if tables is None:
        return [None] * len(texts)

    space, letter_map, first, second = tables
    classes, late = _pass_classes(), _NO_LATE if late is None else late
    made: list[tuple[Span, bool] | None] = []
    for _, cps, bounds in grouped_code_points(texts, list(range(len(texts)))):
        out, at, status = persian_loops.persian_pieces_many(
            cps, bounds, classes, letter_map, space, first, second, step, marks, late
        )
        made += [
            (span, s == 2) if s else None
            for span, s in zip(spans_of(out, at), status.tolist(), strict=True)
        ]
    return made


@lru_cache(maxsize=1)
def _pass_classes() -> np.ndarray:
    """The classes of each code point (uint8) the compiled pass reads, bits of
    :mod:`.persian_loops`: ``WORD`` (``str.isalnum``, the punctuation step's word
    characters but the underscore), ``MARK`` (:func:`~.letters.mark_code_points`),
    ``ARABIC`` (a word character U+0600..U+06FF or U+FB50..U+FEFF: Arabic script the
    punctuation step leaves) and ``OTHER`` (a word character of the Cyrillic and Latin class
    that ends a Persian run, :data:`.scripts._OTHER_LETTER`).

    >>> from neardup.canonical import persian_loops as k
    >>> got = [int(_pass_classes()[ord(c)]) for c in "a،ك\u064e"]
    >>> got == [k.WORD | k.OTHER, 0, k.WORD | k.ARABIC, k.MARK]
    True
    """
    from ..sketches.loops import loops

    k = loops("neardup.canonical.persian_loops")

    word = token_char_table()
    cp = np.arange(0x110000)

    def within(*ranges: tuple[int, int]) -> np.ndarray:
        return np.logical_or.reduce([(lo <= cp) & (cp <= hi) for lo, hi in ranges])

    classes = np.where(word, k.WORD, 0).astype(np.uint8)
    classes[mark_code_points()] |= k.MARK
    classes[word & within(*ARABIC_SCRIPT)] |= k.ARABIC
    classes[word & within(*OTHER_LETTERS)] |= k.OTHER
    return classes


_NO_LATE = np.empty(0, dtype=np.int32)


def split_persian(text: str) -> str:
    """hazm normalization (its letter steps, repeated letters and the "می" prefix; its
    affix spacing would only put in a ZWNJ) and the remaining Arabic letter variants, then
    every ZWNJ a space:
    the parts of compounds and affixed words as separate words, whichever way they were
    written ("می‌خواهم", "میخواهم", "می خواهم" -> "می خواهم"; hazm separates the affixes it
    knows; without hazm installed, only the letter steps: "میخواهم" stays one word). For
    full-text search, where a query word should find the compounds it is part of."""
    hazm = _hazm_normalizer()
    text = SPACE_RUNS.sub(" ", text)
    # the spacing hazm would fix is undone here: every ZWNJ becomes a space
    text = hazm.seperate_mi(hazm.decrease_repeated_chars(hazm.normalize_letters(text)))
    return FA_LETTER_MAP(text).replace(ZWNJ, " ")
