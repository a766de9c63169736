"""Scripts and languages: the language of a letter, a token, a text, and the script runs
of a mixed-language text (Arabic script -> fa, Cyrillic -> ru, Latin -> en, for the rules of
those languages), and the language of a whole text among many more (:func:`detect_language`:
Arabic apart from Persian, English apart from other Latin-script languages, Chinese,
Japanese, Korean, ...)."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Sequence

import numpy as np

from ..sketches.hashing import code_points
from ..sketches.ragged import offsets_of
from ..runtime.tablecache import cached_table
from .letters import code_point_table
from .ranges import EN_LETTERS, FA_SCRIPT, RU_LETTERS, UNSPACED, char_class, within

_FA_CLASS = char_class(*FA_SCRIPT)
_RU_CLASS = char_class(*RU_LETTERS)
_EN_CLASS = char_class(*EN_LETTERS)
SCRIPT_RES = {
    "fa": re.compile(f"[{_FA_CLASS}]"),
    "ru": re.compile(f"[{_RU_CLASS}]"),
    "en": re.compile(f"[{_EN_CLASS}]"),
}
_ASCII_LETTER = re.compile("[A-Za-z]")
_OTHER_LETTER = re.compile(f"[{_RU_CLASS}{_EN_CLASS}]")
#: A letter of any script :func:`script_of` names, in a group named for its language.
_SCRIPTED = re.compile(f"(?P<fa>[{_FA_CLASS}])|(?P<ru>[{_RU_CLASS}])|(?P<en>[{_EN_CLASS}])")


def script_of(ch: str) -> str | None:
    """fa / ru / en for a letter of Arabic, Cyrillic or Latin script, else None."""
    o = ord(ch)
    for lang, ranges in (("fa", FA_SCRIPT), ("ru", RU_LETTERS), ("en", EN_LETTERS)):
        if within(o, *ranges):
            return lang
    return None


def token_language(token: str) -> str | None:
    """The language of the first letter of ``token`` in a script :func:`script_of` names,
    else None: :func:`token_language_by_letters`, the letter found by one regular expression
    search, its group naming the language, instead of a call per character (tested equal in
    tests/test_canonical_fast.py).

    >>> token_language("42-й"), token_language("12"), token_language("سلام"), token_language("a")
    ('ru', None, 'fa', 'en')
    """
    m = _SCRIPTED.search(token)
    return m.lastgroup if m else None


def token_language_by_letters(token: str) -> str | None:
    """:func:`token_language`'s reference form: each character in turn, the first one
    :func:`script_of` names."""
    for ch in token:
        s = script_of(ch)
        if s:
            return s
    return None


def map_persian_runs(text: str, fn) -> str:
    """``fn`` applied to each Persian run of ``text`` (all of it when it has no Cyrillic or
    Latin letter), the rest left as it is: mixed text gets Persian rules only where it is
    Persian."""
    if not _OTHER_LETTER.search(text):
        return fn(text)
    return _fa_run().sub(lambda m: fn(m[0]), text)


@lru_cache(maxsize=1)
def _fa_run() -> re.Pattern[str]:
    """A Persian run: from an Arabic-script character to the last one before a Cyrillic or
    Latin letter (spaces, digits and punctuation between Persian words stay inside the run).
    Compiled on first use (a few ms), so text without Persian never pays for it."""
    return re.compile(f"[{_FA_CLASS}](?:[^{_RU_CLASS}{_EN_CLASS}]*[{_FA_CLASS}])?")


def detect_language(text: str, default: str = "en", sample: int = 4000) -> str:
    """The language of ``text`` by the script of most of its first ``sample`` letters
    (:func:`language_by_script`); ``default`` when it has no letter.

    >>> texts = ("Привет", "سلام دنیا", "قالت الشركة إن الأرباح ارتفعت", "the cat")
    >>> texts += ("Der Hund ist groß und die Katze klein", "猫が好き", "我喜欢猫")
    >>> [detect_language(t) for t in texts]
    ['ru', 'fa', 'ar', 'en', 'und', 'ja', 'zh']
    """
    if text.isascii():  # its letters, if any, are Latin
        return _latin(text) if _ASCII_LETTER.search(text) else default
    return language_by_script(_script_counts(text, sample), text, default)


def detect_languages(texts: Sequence[str], default: str = "en", sample: int = 4000) -> list[str]:
    """:func:`detect_language` of each text. The letters of the non-ASCII ones are counted in
    one compiled pass (:func:`.scripts_loops.script_counts`) over their first ``2 * sample``
    characters; a text with fewer letters there and more characters after them is counted
    alone.

    >>> detect_languages(["Привет, мир", "سلام دنیا", "hello", "123", "Привет, hello world"])
    ['ru', 'fa', 'en', 'en', 'en']
    """
    out: list = [detect_language(t, default, sample) if t.isascii() else None for t in texts]
    rest = [i for i, lang in enumerate(out) if lang is None]
    if not rest:
        return out
    from ..sketches.loops import loops

    scripts_loops = loops("neardup.canonical.scripts_loops")

    cap = 2 * sample
    heads = [texts[i][:cap] for i in rest]
    letter, script = _code_point_tables()
    counts = scripts_loops.script_counts(
        code_points("".join(heads)),
        offsets_of([len(h) for h in heads]),
        letter,
        script,
        sample,
        _CODES,
    )
    for i, head, c in zip(rest, heads, counts.tolist(), strict=True):
        out[i] = _language_of_counts(texts[i], head, c, default, sample)
    return out


def _language_of_counts(
    text: str, head: str, counts: Sequence[int], default: str, sample: int
) -> str:
    """The language of ``text`` from the letters of its ``head`` counted by script, or by
    :func:`detect_language` where the head has fewer than ``sample`` letters and the text
    goes on after it."""
    if sum(counts) < sample and len(text) > len(head):
        return detect_language(text, default, sample)
    return language_by_script(counts, text, default)


# Script codes of letters (:func:`script_code`): Arabic script is split into the letters only
# Persian writes (پ چ ژ گ), those both write in their Persian form (ی ک) or Arabic form
# (ي ك ى), the Arabic ة, and the rest; CJK into Han and kana.
(
    _NONE,
    _ARAB,
    _CYRL,
    _LATN,
    _FA_ONLY,
    _FA_FORM,
    _AR_ONLY,
    _AR_FORM,
    _HAN,
    _KANA,
    _HANGUL,
    _THAI,
    _GREEK,
    _HEBREW,
    _DEVA,
    _OTHER,
) = range(16)
_CODES = 16
#: the language of a script where one language is meant when it is not said (Latin: :func:`_latin`)
_SCRIPT_LANGUAGE = {
    _CYRL: "ru",
    _HANGUL: "ko",
    _THAI: "th",
    _GREEK: "el",
    _HEBREW: "he",
    _DEVA: "hi",
    _OTHER: "und",
}
_FA_ONLY_LETTERS = frozenset("\u067e\u0686\u0698\u06af")  # پ چ ژ گ
_FA_FORM_LETTERS = frozenset("\u06cc\u06a9")  # ی ک
_AR_ONLY_LETTERS = frozenset("\u0629\u0625")  # ة إ
_AR_FORM_LETTERS = frozenset("\u064a\u0643\u0649")  # ي ك ى


def script_code(ch: str) -> int:
    """The script code of a letter for :func:`detect_language` (0 for a non-letter); a
    compatibility form (a ligature, a fullwidth letter) counts as the letter NFKC makes of it."""
    if not ch.isalpha():
        return _NONE
    folded = unicodedata.normalize("NFKC", ch)[:1]
    if folded != ch and folded.isalpha():
        return script_code(folded)
    s = script_of(ch)
    if s == "fa":
        return _arabic_script_code(ch)
    if s:
        return _CYRL if s == "ru" else _LATN
    o = ord(ch)
    for lo, hi, code in _OTHER_RANGES:
        if lo <= o <= hi:
            return code
    return _OTHER


def _arabic_script_code(ch: str) -> int:
    """The script code of a letter of Arabic script: Persian only, Persian form, Arabic
    only, Arabic form, or the rest."""
    for letters, code in (
        (_FA_ONLY_LETTERS, _FA_ONLY),
        (_FA_FORM_LETTERS, _FA_FORM),
        (_AR_ONLY_LETTERS, _AR_ONLY),
        (_AR_FORM_LETTERS, _AR_FORM),
    ):
        if ch in letters:
            return code
    return _ARAB


#: Letters of scripts beyond Arabic, Cyrillic and Latin (the rest are _OTHER).
_OTHER_RANGES = (
    (0x1E00, 0x1EFF, _LATN),
    (0x2C60, 0x2C7F, _LATN),
    (0xA720, 0xA7FF, _LATN),
    (0x370, 0x3FF, _GREEK),
    (0x1F00, 0x1FFF, _GREEK),
    (0x590, 0x5FF, _HEBREW),
    (0xFB1D, 0xFB4F, _HEBREW),
    (0x900, 0x97F, _DEVA),
    (0xE00, 0xE7F, _THAI),
    (0x1100, 0x11FF, _HANGUL),
    (0x3130, 0x318F, _HANGUL),
    (0xAC00, 0xD7AF, _HANGUL),
    (0x3040, 0x30FF, _KANA),
    (0x31F0, 0x31FF, _KANA),
    (0xFF66, 0xFF9F, _KANA),
    (0x3400, 0x4DBF, _HAN),
    (0x4E00, 0x9FFF, _HAN),
    (0xF900, 0xFAFF, _HAN),
    (0x20000, 0x3134F, _HAN),
)


def language_by_script(counts: Sequence[int], text: str, default: str) -> str:
    """The language of a text from its letters counted by :func:`script_code`: the script
    with the most letters (ties: Arabic, Cyrillic, Latin, then the others), and in it:

    * Arabic script: Persian (fa) unless the letters only Arabic writes outnumber those
      only Persian writes (ة إ against پ چ ژ گ), or, with as many (none, mostly), the Arabic
      forms ي ك ى outnumber the Persian ی ک: then Arabic (ar). Persian typed on an Arabic
      keyboard keeps پ چ ژ گ; Arabic has no ی nor ک.
    * Latin: English (en) unless function words of other Latin-script languages outnumber
      the English ones among its first words (:func:`_latin`): then und (undetermined:
      generic rules, no stop list).
    * Han and kana: Japanese (ja) where kana are at least a tenth of them, else Chinese (zh).
    * Cyrillic: ru; Hangul: ko; Thai: th; Greek: el; Hebrew: he; Devanagari: hi; other
      letters: und.

    ``default`` when there is no letter.
    """
    c = list(counts) + [0] * (_CODES - len(counts))
    groups = {
        "arab": c[_ARAB] + c[_FA_ONLY] + c[_FA_FORM] + c[_AR_ONLY] + c[_AR_FORM],
        "cyrl": c[_CYRL],
        "latn": c[_LATN],
        "cjk": c[_HAN] + c[_KANA],
        **{str(k): c[k] for k in (_HANGUL, _THAI, _GREEK, _HEBREW, _DEVA, _OTHER)},
    }
    best = max(groups, key=groups.__getitem__)
    if not groups[best]:
        return default
    if best == "arab":
        arabic = (c[_AR_ONLY], c[_AR_FORM]) > (c[_FA_ONLY], c[_FA_FORM])
        return "ar" if arabic else "fa"
    if best == "latn":
        return _latin(text)
    if best == "cjk":
        return "ja" if 10 * c[_KANA] >= groups["cjk"] else "zh"
    if best == "cyrl":
        return "ru"
    return _SCRIPT_LANGUAGE[int(best)]


#: Frequent English function words.
_ENGLISH_MARKERS = frozenset(
    "the and of to that with this are have has were been which from it by is was for on".split()
)
#: Frequent function words of other languages written in Latin script (German, French,
#: Spanish, Portuguese, Italian, Dutch, Turkish, Indonesian, Scandinavian, Polish, Czech,
#: Vietnamese, Tagalog) that are not English words, nor particles of names in English text
#: (de, du, la, el, van, den, da, di, al, sa).
_OTHER_LATIN_MARKERS = frozenset(
    """
der die das und ist nicht ein eine zu mit von dem sich auf für wird sind auch werden bei
le les des et est une que pour dans sur pas au aux qui avec sont ce cette
los las y es una del por para con se su lo como más
os em um uma não com dos das
il che è non sono della delle gli nel alla
het een en dat op te zijn niet voor met wordt
ve bir bu için ile olarak daha çok olan gibi
yang dan di ini itu dengan untuk dari tidak akan
og er det som på til av med att och är ikke inte
się jest nie że jak je že
và của là các có được trong những cho
ang ng mga
""".split()
)


def _latin(text: str, head: int = 240) -> str:
    """en, unless the first ``head`` characters read as another Latin-script language: und
    (undetermined: generic rules, no stop list). They do when their words (split at white
    space) hold more function words of other languages (:data:`_OTHER_LATIN_MARKERS`, two
    at least) than English ones (:data:`_ENGLISH_MARKERS`), or none of the English ones and
    Latin letters outside ASCII (ş, ı, ä, é, ...) are at least 1 in 50 of their Latin letters.
    Telegraphic English (tables, titles) has few of either and stays en. A few microseconds
    a text: it runs on every text whose letters are mostly Latin.

    >>> de = "Die Bank hat die Zinsen erhöht und die Inflation sinkt"
    >>> _latin("The bank raised its rates"), _latin(de), _latin("Shr 3.07 dlrs vs 3.08")
    ('en', 'und', 'en')
    >>> _latin("Milli basketbol takımı, hazırlık maçında güçlü rakibini yendi")
    'und'
    """
    words = text[:head].lower().split()
    other = sum(map(_OTHER_LATIN_MARKERS.__contains__, words))
    if other < 2 and text[:head].isascii():
        return "en"
    en = sum(map(_ENGLISH_MARKERS.__contains__, words))
    if other >= 2 and other > en:
        return "und"
    if en:
        return "en"
    return "und" if _accented_latin(text[:head]) else "en"


def _accented_latin(text: str) -> bool:
    """Whether at least 1 in 50 of the Latin letters of ``text`` are outside ASCII."""
    latin = [ch.isascii() for ch in text if ch.isalpha() and script_code(ch) == _LATN]
    return bool(latin) and 50 * latin.count(False) >= len(latin)


@lru_cache(maxsize=1)
def _code_point_tables() -> tuple[np.ndarray, np.ndarray]:
    """Per code point: is it a letter (``str.isalpha``), and its :func:`script_code`."""
    letter = code_point_table(str.isalpha)

    def make() -> np.ndarray:
        script = np.zeros(0x110000, dtype=np.uint8)
        for cp in np.flatnonzero(letter).tolist():
            script[cp] = script_code(chr(cp))
        return script

    return letter, cached_table("scripts", make, __file__)


def _script_counts(text: str, sample: int) -> list[int]:
    """Letters by :func:`script_code` among the first ``sample`` letters (``str.isalpha``) of
    ``text``, all of them if it has fewer: counted over code points with numpy, chunk by
    chunk (a chunk twice as long as the letters still needed; the last one is cut right
    after the last letter needed)."""
    letter, script = _code_point_tables()
    if len(text) <= sample:  # every letter counts (a script code is 0 but on letters)
        return np.bincount(
            script[np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")],
            minlength=_CODES,
        ).tolist()
    counts = np.zeros(_CODES, dtype=np.int64)
    pos, need = 0, sample
    while need > 0 and pos < len(text):
        chunk = text[
            pos : pos + max(2 * need, 4096)
        ]  # (letters are most of a text: one chunk, most often)
        pos += len(chunk)
        cps = np.frombuffer(chunk.encode("utf-32-le", "surrogatepass"), dtype="<u4")
        is_letter = letter[cps]
        cum = np.cumsum(is_letter)
        if cum[-1] >= need:  # the chunk holds the last letter needed: stop right after it
            end = int(np.searchsorted(cum, need)) + 1
            cps, is_letter = cps[:end], is_letter[:end]
        counts += np.bincount(script[cps[is_letter]], minlength=_CODES)
        need -= int(is_letter.sum())
    return counts.tolist()


#: Letters of scripts written without spaces between words (:data:`.ranges.UNSPACED`).
_UNSPACED_CLASS = char_class(*UNSPACED)


@lru_cache(maxsize=1)
def _unspaced() -> re.Pattern[str]:
    """One letter of :data:`_UNSPACED_CLASS`, compiled on first use (its class is long: over
    10 ms), so ASCII text never pays for it."""
    return re.compile(f"[{_UNSPACED_CLASS}]")


def split_unspaced(text: str) -> str:
    """Each character of a script written without spaces (:data:`_UNSPACED_CLASS`) made a
    word of its own, so that word shingles of w tokens are character w-grams there (the
    usual shingles of Chinese, Japanese and Thai text), while words of other scripts stay
    words.

    >>> split_unspaced("我喜欢猫 and 猫が好き")
    ' 我  喜  欢  猫  and  猫  が  好  き '
    """
    if text.isascii() or not _unspaced().search(text):
        return text
    return _unspaced().sub(r" \g<0> ", text)
