"""Collection statistics some signatures need (I-Match lexicon, TF*IDF weights, support
words), built once from the indexed collection and stored with the index as "context".

The context is plain JSON: the number of documents N, the mean length of word tokens,
and document frequency df and collection frequency cf of every canonical term found in
at least two documents. Terms seen once are left out (that keeps the table small); a
term absent from the table is treated as df = cf = 1, which is exact for those terms and
the natural value for words first seen after the context was built.

Weights (natural logarithms unless noted):

* idf(t)     = ln(N / df)                                 (Sparck Jones 1972)
* nidf(t)    = ln(N / df) / ln(N)  in [0, 1]               (normalized, for I-Match cut-offs)
* ridf(t)    = log2(N / df) + log2(1 - exp(-cf / N))       (residual idf: observed idf minus
  the idf a Poisson model with the same cf predicts; Church & Gale 1995)
* idf_opt(t) = ln(N) - |ln(df) - ln(df_opt)|, df_opt = sqrt(N) by default: highest for
  words of an "optimal" middle document frequency, falling off symmetrically (in log df)
  towards rare and towards common words. 001 names IDF_opt without a formula; this is the
  reading implemented here (setting ``idf_opt_df`` overrides df_opt).
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Iterable, Mapping

from ...canonical import Canonicalizer
from ...errors import ConfigError

KIND = "neardup.collection-stats"
VERSION = 1
#: Config settings that change canonical tokens; the context is valid only under them.
CANONICAL_SETTINGS = ("strip_html", "stopwords", "digits", "stem", "default_lang")


class ContextError(ConfigError):
    """A signature needs collection statistics that are missing or were built otherwise."""


def canonical_settings(config) -> dict[str, Any]:
    return {k: getattr(config, k) for k in CANONICAL_SETTINGS}


def collection_stats(
    canonicalizer: Canonicalizer, texts: Iterable[tuple[str, str | None]]
) -> dict[str, Any]:
    """df, cf, N and mean word length of the canonical tokens (``canonicalizer``'s) of
    ``(text, lang)`` pairs."""
    canon, config = canonicalizer, canonicalizer.config
    df: Counter[str] = Counter()
    cf: Counter[str] = Counter()
    n_docs = n_tokens = n_chars = 0
    for text, lang in texts:
        toks = canon.tokens(text, lang)
        n_docs += 1
        n_tokens += len(toks)
        n_chars += sum(map(len, toks))
        tf = Counter(toks)
        cf.update(tf)
        df.update(tf.keys())
    terms = sorted(t for t, d in df.items() if d >= 2)
    return {
        "kind": KIND,
        "version": VERSION,
        "canonical": canonical_settings(config),
        "n_docs": n_docs,
        "n_tokens": n_tokens,
        "avg_word_len": (n_chars / n_tokens) if n_tokens else 0.0,
        "terms": terms,
        "df": [df[t] for t in terms],
        "cf": [cf[t] for t in terms],
    }


class Stats:
    """Lookups over a stored context: df, cf and the weights above."""

    def __init__(self, context: Mapping[str, Any], config, needed_by: str):
        if not context or context.get("kind") != KIND:
            raise ContextError(
                f"signature {needed_by!r} needs collection statistics: build them with "
                "neardup.signing.signatures.build_context(Canonicalizer(config), "
                "((text, lang) for each document)) and open the Signer with context=... "
                "(the engine stores them under meta key 'context')"
            )
        if context.get("version") != VERSION:
            raise ContextError(
                f"collection statistics have version {context.get('version')}, "
                f"this neardup reads {VERSION}; rebuild them"
            )
        want, have = canonical_settings(config), dict(context.get("canonical", {}))
        if have != want:
            diff = ", ".join(
                f"{k}: built with {have.get(k)!r}, index uses {v!r}"
                for k, v in want.items()
                if have.get(k) != v
            )
            raise ContextError(
                "collection statistics were built with other canonicalization "
                f"({diff}); rebuild them"
            )
        self.n_docs = max(int(context["n_docs"]), 1)
        self.avg_word_len = float(context["avg_word_len"])
        self.df = dict(zip(context["terms"], context["df"], strict=True))
        self.cf = dict(zip(context["terms"], context["cf"], strict=True))
        self._log_n = math.log(self.n_docs)
        self.df_opt = float(dict(config.extra).get("idf_opt_df", math.sqrt(self.n_docs)))

    def idf(self, term: str) -> float:
        return math.log(self.n_docs / self.df.get(term, 1))

    def nidf(self, term: str) -> float:
        return self.idf(term) / self._log_n if self._log_n > 0 else 0.0

    def ridf(self, term: str) -> float:
        n = self.n_docs
        predicted = -math.log2(-math.expm1(-self.cf.get(term, 1) / n))
        return math.log2(n / self.df.get(term, 1)) - predicted

    def idf_opt(self, term: str) -> float:
        return self._log_n - abs(math.log(self.df.get(term, 1)) - math.log(self.df_opt))
