"""One frozen configuration, stored with every index.

Every setting that changes canonical tokens, shingles or signatures lives here. The engine
stores :meth:`Config.to_json` when an index is created and hands it back when the index is
opened, so a query always canonicalizes and signs the way indexing did. Opening an index
with a different config is refused (:class:`ConfigMismatch`).
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping, get_args

import xxhash

from .errors import ConfigError
from .keys.builtin import BUILTIN
from .keys.registry import NAMES as FAMILY_SIGNATURES

#: Bumped whenever signing changes in a way that makes old keys incomparable.
#: 3: Persian tokens are anchor pieces of runs without spaces (segmentation-invariant);
#: 4: tokens hashed from their code points (no string per token), the exact key over the
#: token hashes; 5: stop lists of function words only (canonical/data), languages beyond
#: fa/ru/en (character tokens for scripts without spaces, Arabic apart from Persian);
#: 6: SimHash keys over pairs of k + 2 blocks (:func:`neardup.sketches.simhash.agreeing_blocks`);
#: 7: a winnowing window of 12 shingles unless one is given (:func:`default_winnow_window`),
#: and keywords in base64url for the HTTP engines (:mod:`neardup.keys.encoding`).
SIGNATURE_VERSION = 7
#: Signature versions whose indices this neardup opens, queries and extends, signing new
#: documents as the index's stored ``Config.version`` says: 5 differs from 6 only in the
#: SimHash keys, which are made for the stored version; 6 from 7 in the default winnowing
#: window (each index stores its own) and in how the HTTP engines' keywords are written.
OPENS_VERSIONS = (5, 6, SIGNATURE_VERSION)


def default_winnow_window(version: int) -> int:
    """The winnowing window, in shingles, of a config of signature ``version`` that gives
    none: 8 before version 7, 12 from it. A window of w keeps about 2 / (w + 1) of the
    shingles as keys (Schleimer, Wilkerson and Aiken 2003): on documents of the shared
    corpora of 150 words or more, 12 keeps 45 winnowing keys a document instead of 66 (16:
    34), and the containment query still proposes the document of 99.6 % of its passages of
    60 words with one word replaced (8: 99.9 %, 16: 98.2 %; copied passages 99.9 % at each;
    ``python -m benchmarks.winnow_window --windows 8,12,16 --docs 1000``).

    >>> default_winnow_window(6), default_winnow_window(7)
    (8, 12)
    """
    return 8 if version < 7 else 12


# -- settings with a fixed set of values: the Literal types are the one source of the choices
#: The languages with rules of their own (stop lists, Persian letters, stemmers).
Language = Literal["fa", "ru", "en"]
DefaultLang = str  # "auto" (detect by script) or a language code (:func:`is_language_code`)
Digits = Literal["unify", "drop", "keep"]  # unify: to ASCII
Stem = Literal["none", "snowball", "lemma"]  # snowball: ru, en; lemma: ru (pymorphy3)
Shingle = Literal["word", "char"]
MinhashScheme = Literal["oph", "kperm"]  # one permutation + densification | K permutations
#: Persian runs (neardup.canonical.persian): cut at content-defined anchors | compounds joined |
#: as written
FaSegmentation = Literal["anchors", "join", "none"]
#: Joins the "join" segmentation may make: a lexicon word, a productive first / second part
FaJoinRule = Literal["first", "lexicon", "second"]

#: setting -> its allowed values, checked by :class:`Config` (and the ones a CLI option should
#: offer)
CHOICES: dict[str, tuple[str, ...]] = {
    "digits": get_args(Digits),
    "stem": get_args(Stem),
    "shingle": get_args(Shingle),
    "minhash_scheme": get_args(MinhashScheme),
    "fa_segmentation": get_args(FaSegmentation),
}

LANGUAGES: tuple[str, ...] = get_args(Language)
_LANGUAGE_CODE = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*")


def is_language_code(code: object) -> bool:
    """Whether ``code`` reads as a language code: an ISO 639 code of two or three letters,
    optionally with BCP 47 subtags ("pt-BR", "zh-Hant", "und"). Any such code is accepted:
    fa, ru and en have rules of their own, every other language the generic ones.

    >>> [is_language_code(c) for c in ("en", "de", "pt-BR", "zh_Hant", "english", "e", "", 3)]
    [True, True, True, True, False, False, False, False]
    """
    return isinstance(code, str) and _LANGUAGE_CODE.fullmatch(code) is not None


def language_of_code(code: str) -> str:
    """The language a code names, as neardup stores it: its first subtag in lower case
    ("en-GB" -> "en"), so that a region or script subtag never separates a language from
    its rules.

    >>> language_of_code("EN-gb"), language_of_code("zh_Hant"), language_of_code("ar")
    ('en', 'zh', 'ar')
    """
    return re.split("[-_]", code, maxsplit=1)[0].lower()


#: The signatures of an index unless chosen otherwise (the table's defaults).
SIGNATURES = tuple(name for name, sig in BUILTIN.items() if sig.default)
#: Samples of the shingle set that propose candidates for containment (not resemblance).
CONTAINMENT_SAMPLES = tuple(name for name, sig in BUILTIN.items() if sig.sample)


#: Settings added after indices were first stored: left out of :meth:`Config.to_dict` (hence
#: of the stored form and the fingerprint) where they have these defaults, so an index
#: stored before they existed opens with the same fingerprint as before.
_LATER_DEFAULTS: dict[str, Any] = {
    "fa_segmentation": "anchors",
    "fa_join_rules": ("lexicon", "second"),
    "fa_anchors": (3, 2, 14),
}


class ConfigMismatch(ConfigError):
    """An index was built with other settings than the ones asked for."""


@dataclass(frozen=True)
class Config:
    """Canonicalization, shingling and signature settings of one index.

    MinHash LSH: ``bands`` keys of ``rows`` min-hash values each; a document is a candidate
    when it shares at least ``min_match`` (m) of them, P(s) = P[Binomial(b, s^r) >= m].
    ``bands``, ``rows`` and ``min_match`` are resolved at construction: when bands and rows
    are not given, :func:`neardup.sketches.lsh.optimal_lsh` chooses (b, r, m) for ``threshold``,
    minimising the ``fp_weight``/``fn_weight``-weighted error areas with b <= ``max_bands``
    (a given ``min_match`` is kept and b, r chosen for it). Given bands and rows without
    ``min_match`` mean m = 1, the classic any-band scheme -- and so does every index stored
    before ``min_match`` existed. All three are stored explicitly, so the index keeps them
    even if the optimizer changes; ``max_bands`` only bounds the optimizer's choice.
    ``winnow_window`` is resolved the same way (0: the version's default) and stored too.
    """

    version: int = SIGNATURE_VERSION
    # -- canonicalization ------------------------------------------------------------
    #: "auto" (detect by script) or a language code (:func:`is_language_code`)
    default_lang: DefaultLang = "auto"
    strip_html: bool = True
    stopwords: bool = True
    digits: Digits = "unify"  # unify (to ASCII) | drop | keep
    stem: Stem = "none"  # none | snowball (ru, en) | lemma (ru: pymorphy3)
    fa_segmentation: FaSegmentation = "anchors"  # Persian runs: anchors | join | none
    fa_join_rules: tuple[FaJoinRule, ...] = ("lexicon", "second")  # joins of fa_segmentation="join"
    #: (first_mod, second_mod, seed) of the anchor letter pairs
    fa_anchors: tuple[int, int, int] = (3, 2, 14)
    # -- shingles ----------------------------------------------------------------------
    shingle: Shingle = "word"  # word | char
    shingle_size: int = 5
    shingle_size_by_lang: tuple[tuple[str, int], ...] = ()
    # -- signatures --------------------------------------------------------------------
    signatures: tuple[str, ...] = SIGNATURES
    seed: int = 1
    num_perm: int = 128
    minhash_scheme: MinhashScheme = "oph"  # oph (one permutation + densification) | kperm
    threshold: float = 0.8
    bands: int = 0
    rows: int = 0
    #: m: band keys a candidate shares (0: chosen with bands/rows; 1 when they are given)
    min_match: int = 0
    max_bands: int = 20  # bound on the optimizer's b: each band is one posting per document
    fp_weight: float = 0.05
    fn_weight: float = 0.95
    simhash_k: int = 3
    #: w = t - n + 1 in shingles: shared runs of >= t shingles always show; 0: the version's
    #: (:func:`default_winnow_window`), stored resolved
    winnow_window: int = 0
    mod_m: int = 16
    containment_fraction: float = 0.5
    extra: tuple[tuple[str, Any], ...] = field(default=())

    def __post_init__(self) -> None:
        self._check_choices()
        if not self.winnow_window:
            object.__setattr__(self, "winnow_window", default_winnow_window(self.version))
        if self.default_lang != "auto":
            object.__setattr__(self, "default_lang", language_of_code(self.default_lang))
        self._check_ranges()
        self._resolve_lsh()
        object.__setattr__(
            self,
            "shingle_size_by_lang",
            tuple(sorted((str(k), int(v)) for k, v in self.shingle_size_by_lang)),
        )
        object.__setattr__(self, "signatures", tuple(self.signatures))
        object.__setattr__(self, "fa_join_rules", tuple(sorted(set(self.fa_join_rules))))
        object.__setattr__(self, "fa_anchors", tuple(int(x) for x in self.fa_anchors))

    def _check_choices(self) -> None:
        """Settings of :data:`CHOICES` and signature names."""
        for name, allowed in CHOICES.items():
            value = getattr(self, name)
            if value not in allowed:
                raise ConfigError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
        if self.default_lang != "auto" and not is_language_code(self.default_lang):
            raise ConfigError(
                "default_lang must be auto or a language code (en, de, ar, zh, ...), "
                f"not {self.default_lang!r}"
            )
        known = set(BUILTIN) | set(FAMILY_SIGNATURES)
        unknown = set(self.signatures) - known
        if unknown:
            raise ConfigError(f"unknown signature(s) {sorted(unknown)}; known: {sorted(known)}")
        rules = get_args(FaJoinRule)
        if not set(self.fa_join_rules) <= set(rules):
            raise ConfigError(
                f"fa_join_rules must be among {', '.join(rules)}, not {list(self.fa_join_rules)!r}"
            )

    def _check_ranges(self) -> None:
        """Numeric settings within their ranges."""
        for lang, w in ((None, self.shingle_size), *self.shingle_size_by_lang):
            if not 1 <= int(w) <= (10 if self.shingle == "word" else 32):
                raise ConfigError(
                    f"shingle size {w} for {lang or 'all languages'} is out of range "
                    "(word: 1..10, char: 1..32)"
                )
        checks = (
            (self.mod_m >= 1, f"mod_m must be >= 1, not {self.mod_m}"),
            (0.0 < self.threshold <= 1.0, f"threshold must be in (0, 1], not {self.threshold}"),
            (1 <= self.num_perm <= 4096, f"num_perm must be in 1..4096, not {self.num_perm}"),
            (0 <= self.simhash_k <= 16, f"simhash_k must be in 0..16, not {self.simhash_k}"),
            (self.winnow_window >= 1, f"winnow_window must be >= 1, not {self.winnow_window}"),
            (
                0.0 < self.containment_fraction <= 1.0,
                f"containment_fraction must be in (0, 1], not {self.containment_fraction}",
            ),
            (self.max_bands >= 1, f"max_bands must be >= 1, not {self.max_bands}"),
            (
                self.min_match >= 0,
                f"min_match must be >= 0 (0: chosen for the threshold), not {self.min_match}",
            ),
            (
                len(self.fa_anchors) == 3 and min(self.fa_anchors[:2], default=0) >= 1,
                "fa_anchors must be (first_mod >= 1, second_mod >= 1, seed), "
                f"not {self.fa_anchors!r}",
            ),
        )
        for ok, message in checks:
            if not ok:
                raise ConfigError(message)

    def _resolve_lsh(self) -> None:
        """Fix bands, rows and min_match: given ones checked, missing ones chosen for the
        threshold."""
        if self.bands and self.rows:
            if self.bands * self.rows > self.num_perm:
                raise ConfigError(
                    f"bands*rows = {self.bands * self.rows} exceeds num_perm = {self.num_perm}"
                )
            if self.min_match > self.bands:
                raise ConfigError(f"min_match = {self.min_match} exceeds bands = {self.bands}")
            object.__setattr__(self, "min_match", self.min_match or 1)
        elif self.bands or self.rows:
            raise ConfigError(
                "give both bands and rows, or neither (then they are chosen for the threshold)"
            )
        else:
            from .sketches.lsh import optimal_lsh

            if self.min_match > min(self.max_bands, self.num_perm):
                raise ConfigError(
                    f"min_match = {self.min_match} exceeds max_bands = {self.max_bands} "
                    "(or num_perm)"
                )
            b, r, m = optimal_lsh(
                self.threshold,
                self.num_perm,
                self.fp_weight,
                self.fn_weight,
                self.max_bands,
                self.min_match,
            )
            object.__setattr__(self, "bands", b)
            object.__setattr__(self, "rows", r)
            object.__setattr__(self, "min_match", m)

    def shingle_size_for(self, lang: str) -> int:
        return dict(self.shingle_size_by_lang).get(lang, self.shingle_size)

    # -- persistence ----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["shingle_size_by_lang"] = dict(self.shingle_size_by_lang)
        d["extra"] = dict(self.extra)
        d["signatures"] = list(self.signatures)
        for name, default in _LATER_DEFAULTS.items():
            if getattr(self, name) == default:
                del d[name]
            elif isinstance(d[name], tuple):
                d[name] = list(d[name])
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Config":
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise ConfigError(f"unknown setting(s) {sorted(unknown)}")
        kw = dict(d)
        if "shingle_size_by_lang" in kw:
            kw["shingle_size_by_lang"] = tuple(dict(kw["shingle_size_by_lang"]).items())
        if "extra" in kw:
            kw["extra"] = tuple(dict(kw["extra"]).items())
        for name in ("signatures", "fa_join_rules", "fa_anchors"):
            if name in kw:
                kw[name] = tuple(kw[name])
        return cls(**kw)

    @classmethod
    def from_json(cls, s: str) -> "Config":
        return cls.from_dict(json.loads(s))

    def fingerprint(self) -> str:
        """Short stable hash of the settings, stored in the index for mismatch checks."""
        return xxhash.xxh64_hexdigest(self.to_json().encode())

    def replace(self, **changes: Any) -> "Config":
        """A copy with ``changes``. bands/rows/min_match are re-derived when an input of the
        optimizer changes (threshold, num_perm, weights, max_bands) or min_match alone is
        given; given bands/rows without min_match mean m = 1."""
        d = self.to_dict()
        if {"bands", "rows"} & set(changes):
            d["min_match"] = 0
        elif {"threshold", "num_perm", "fp_weight", "fn_weight", "max_bands", "min_match"} & set(
            changes
        ):
            d["bands"] = d["rows"] = d["min_match"] = 0
        d.update(changes)
        return Config.from_dict(d)

    def check_same(self, other: "Config", where: str) -> None:
        """Raise :class:`ConfigMismatch` naming the differing settings. Signature versions
        that both open (:data:`OPENS_VERSIONS`) do not differ here, nor do their own default
        winnowing windows: the index signs as its own says.

        >>> Config().check_same(Config(version=6), "an index of version 6")
        >>> try:
        ...     Config(winnow_window=10).check_same(Config(version=6), "it")
        ... except ConfigMismatch as e:
        ...     print(str(e)[:60])
        it was built with other settings (winnow_window: index has 8
        """
        a, b = ({**_LATER_DEFAULTS, **c.to_dict()} for c in (self, other))
        if a["version"] in OPENS_VERSIONS and b.get("version") in OPENS_VERSIONS:
            if (a["winnow_window"], b.get("winnow_window")) == (
                default_winnow_window(a["version"]),
                default_winnow_window(b["version"]),
            ):
                b["winnow_window"] = a["winnow_window"]
            b["version"] = a["version"]
        diff = sorted(k for k in a if a[k] != b.get(k))
        if diff:
            shown = ", ".join(f"{k}: index has {b.get(k)!r}, asked {a[k]!r}" for k in diff[:6])
            raise ConfigMismatch(
                f"{where} was built with other settings ({shown}); open it without settings "
                "to use its own, or build a new index"
            )
