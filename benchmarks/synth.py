"""Synthetic collections of any size from the real fa / ru / en corpora, deterministic by seed.

New documents are collages of real sentences (3-9 sentences of one language drawn from the
pooled corpora), so unrelated documents share little text. A share of the documents are
edited copies of earlier ones, with the edits near-duplicates have in practice:

* sentence insertions, deletions and reorders;
* word substitutions and dropped letters (typos);
* header / footer lines added or changed (dates, sources, copyright notices);
* Persian orthographic variants: Arabic yeh/kaf (ي/ك) for Persian ی/ک, ZWNJ removed or
  replaced by a space, which canonicalization must undo.

The stream starts with the corpus documents themselves. Everything follows from ``seed``.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Iterator, Sequence

from neardup.signing.records import Document

_SENTENCE_END = re.compile(r"(?<=[.!?؟…])\s+|\n+")
_ZWNJ = "\u200c"

HEADERS = {
    "en": [
        "Updated {d} {m} {y}",
        "Posted by staff on {d}/{m}/{y}",
        "Source: newswire, {y}",
        "From the archive ({y})",
    ],
    "ru": [
        "Обновлено {d}.{m}.{y}",
        "Источник: агентство новостей, {y}",
        "Опубликовано {d}.{m}.{y}",
    ],
    "fa": ["به‌روزرسانی: {y}/{m}/{d}", "منبع: خبرگزاری، {y}", "تاریخ انتشار {y}/{m}/{d}"],
}
FOOTERS = {
    "en": [
        "(c) {y} The Publisher. All rights reserved.",
        "Reporting by staff; editing by the desk.",
        "Share this article",
    ],
    "ru": ["© {y} Все права защищены.", "При перепечатке ссылка обязательна.", "Поделиться"],
    "fa": ["کلیه حقوق محفوظ است © {y}", "انتهای پیام", "اشتراک‌گذاری"],
}


@dataclass(frozen=True)
class Synth:
    """A generated document and where it came from (``source`` = index of the document it
    edits, or -1)."""

    doc: Document
    sentences: tuple[str, ...]
    lang: str
    source: int


class SentencePool:
    """Sentences and words of the base documents, per language."""

    def __init__(self, base: Sequence[Document]):
        self.sentences: dict[str, list[str]] = {"fa": [], "ru": [], "en": []}
        self.words: dict[str, list[str]] = {"fa": [], "ru": [], "en": []}
        for d in base:
            lang = d.lang if d.lang in self.sentences else "en"
            for s in _SENTENCE_END.split(d.text):
                s = s.strip()
                n = s.count(" ") + 1
                if 3 <= n <= 60:
                    self.sentences[lang].append(s)
        for lang, ss in self.sentences.items():
            words = [w for s in ss[:20000] for w in s.split() if len(w) > 2]
            self.words[lang] = words or ["word"]
        self.langs = [lang for lang in ("en", "ru", "fa") if self.sentences[lang]]
        if not self.langs:
            raise ValueError("the base documents hold no usable sentences (3 to 60 words)")


def split_sentences(text: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in _SENTENCE_END.split(text) if s.strip())


class Generator:
    """An endless, reproducible stream of documents: the base documents, then collages and
    edited copies (``dup_rate`` of the stream)."""

    def __init__(
        self,
        base: Sequence[Document],
        seed: int = 7,
        dup_rate: float = 0.3,
        memory: int = 50_000,
        langs: Sequence[str] | None = None,
        sentences: tuple[int, int] = (3, 9),
    ):
        self.base = list(base)
        self.pool = SentencePool(self.base)
        if langs is not None:  # collages only in these languages
            self.pool.langs = [x for x in self.pool.langs if x in langs]
        self.sentences = sentences  # sentences per collage (inclusive range)
        self.rng = random.Random(seed)
        self.seed = seed
        self.dup_rate = dup_rate
        self.memory = memory  # how many recent documents edits may copy from
        self.recent: list[Synth] = []
        self.count = 0

    def __iter__(self) -> Iterator[Synth]:
        return self

    def __next__(self) -> Synth:
        i = self.count
        if i < len(self.base):
            d = self.base[i]
            s = Synth(
                Document(f"s{self.seed}-{i:07d}", d.text, lang=None),
                split_sentences(d.text),
                d.lang or "en",
                -1,
            )
        elif self.recent and self.rng.random() < self.dup_rate:
            j = self.rng.randrange(len(self.recent))
            s = self.edit(self.recent[j], f"s{self.seed}-{i:07d}", j)
        else:
            s = self.collage(f"s{self.seed}-{i:07d}")
        self.count += 1
        if len(self.recent) < self.memory:
            self.recent.append(s)
        else:
            self.recent[self.rng.randrange(self.memory)] = s
        return s

    def take(self, n: int) -> list[Synth]:
        return [next(self) for _ in range(n)]

    # -- documents ------------------------------------------------------------------------
    def collage(self, doc_id: str) -> Synth:
        rng = self.rng
        lang = rng.choices(
            self.pool.langs,
            weights=[{"en": 0.45, "ru": 0.25, "fa": 0.3}[x] for x in self.pool.langs],
        )[0]
        ss = self.pool.sentences[lang]
        sentences = tuple(ss[rng.randrange(len(ss))] for _ in range(rng.randint(*self.sentences)))
        return Synth(Document(doc_id, render(sentences, rng)), sentences, lang, -1)

    def query(self, doc_id: str, rng: random.Random) -> Synth:
        """A query document: an edited copy of a document seen so far (70%) or a new one.
        Drawn with ``rng``, so queries leave the collection's stream unchanged."""
        saved, self.rng = self.rng, rng
        try:
            if self.recent and rng.random() < 0.7:
                return self.edit(self.recent[rng.randrange(len(self.recent))], doc_id, -1)
            return self.collage(doc_id)
        finally:
            self.rng = saved

    def edit(self, src: Synth, doc_id: str, source: int) -> Synth:
        rng = self.rng
        ss = list(src.sentences) or [""]
        lang = src.lang
        for _ in range(rng.randint(1, 3)):
            op = rng.random()
            if op < 0.2:
                ss.insert(
                    rng.randrange(len(ss) + 1),
                    rng.choice(self.pool.sentences[lang] or self.pool.sentences["en"]),
                )
            elif op < 0.35 and len(ss) > 2:
                del ss[rng.randrange(len(ss))]
            elif op < 0.5 and len(ss) > 1:
                k = rng.randrange(len(ss) - 1)
                ss[k], ss[k + 1] = ss[k + 1], ss[k]
            elif op < 0.7:
                self._replace_words(ss, lang)
            elif op < 0.8:
                self._drop_letter(ss)
            else:
                stamp = dict(d=rng.randint(1, 28), m=rng.randint(1, 12), y=rng.randint(1995, 2026))
                if rng.random() < 0.5:
                    ss.insert(0, rng.choice(HEADERS[lang]).format(**stamp))
                else:
                    ss.append(rng.choice(FOOTERS[lang]).format(**stamp))
        text = render(tuple(ss), rng)
        if lang == "fa":
            text = persian_variants(text, rng)
        return Synth(Document(doc_id, text), tuple(ss), lang, source)

    def _replace_words(self, ss: list[str], lang: str) -> None:
        """Replace one to three words of a random sentence of ``ss`` with pool words."""
        rng = self.rng
        k = rng.randrange(len(ss))
        words = ss[k].split()
        for _ in range(rng.randint(1, 3)):
            if words:
                words[rng.randrange(len(words))] = rng.choice(self.pool.words[lang])
        ss[k] = " ".join(words)

    def _drop_letter(self, ss: list[str]) -> None:
        """Drop one letter of a random word (longer than three) of a random sentence of ``ss``."""
        rng = self.rng
        k = rng.randrange(len(ss))
        words = ss[k].split()
        if words:
            w = rng.randrange(len(words))
            if len(words[w]) > 3:
                c = rng.randrange(len(words[w]))
                words[w] = words[w][:c] + words[w][c + 1 :]
            ss[k] = " ".join(words)


def render(sentences: Sequence[str], rng: random.Random) -> str:
    """Sentences joined into paragraphs of 1-4 sentences."""
    out, para = [], []
    for s in sentences:
        para.append(s)
        if len(para) >= rng.randint(1, 4):
            out.append(" ".join(para))
            para = []
    if para:
        out.append(" ".join(para))
    return "\n\n".join(out)


def persian_variants(text: str, rng: random.Random) -> str:
    """Spellings canonicalization must fold: Arabic yeh / kaf, ZWNJ dropped or spaced."""
    r = rng.random()
    if r < 0.3:
        text = text.replace("ی", "ي").replace("ک", "ك")
    elif r < 0.5:
        text = text.replace(_ZWNJ, "")
    elif r < 0.65:
        text = text.replace(_ZWNJ, " ")
    elif r < 0.8:
        text = text.replace("می ", "می" + _ZWNJ)
    return text
