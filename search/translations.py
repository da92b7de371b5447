"""Questions asked in the language of a translation: find the translated pages.

Translated documentation is kept for lexical search only (`Role.TRANSLATION`,
`indexer.walk.translations`): it never enters a semantic, keyword or hybrid answer to a
question in another language. A question written in a translation's language
(`query_language`: its script, or the commonest words of a language written in Latin
script) still finds it: hybrid search asks the lexical engine for the question's words
(`lexical_terms`), keeps the translated pages in that language (`page_language`), and
`own_language_pages` scores them by the share of the question's words each holds, against
the best fused hit, so the page that matches most of the question ranks at the top.

Pure: strings and hits in, strings and hits out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ctxd.indexer.walk.translations import language_code, prose_language, suffix_language
from ctxd.search.filters import SearchFilters
from ctxd.search.models import Hit
from ctxd.search.zoekt.query import escape_regex, scoped_query

__all__ = ["TranslationQuery", "lexical_terms", "own_language_pages", "page_language",
           "query_language", "translation_query"]

_HAN_KANA = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_RUNS = re.compile(r"[\u30a0-\u30ff\u30fc]+|[\u3400-\u4dbf\u4e00-\u9fff]+|[\uac00-\ud7af]+|"
                   r"[\u3040-\u309f]+|[^\W\d_]+|\w+", re.UNICODE)
_HIRAGANA = re.compile(r"[\u3040-\u309f]+")


def query_language(query: str) -> str | None:
    """The language a question is written in when it is not English (a code such as
    `de`, `ja`), else None. The script decides for one letter in five; otherwise the
    question needs a handful of words in which a language's commonest words stand out
    (`indexer.walk.translations.prose_language`, on the question repeated so that its
    length passes the check)."""
    words = re.findall(r"[^\W\d_]+", query)
    letters = sum(len(w) for w in words)
    if not letters:
        return None
    lang = prose_language(" ".join([query] * max(1, -(-40 // letters), -(-20 // len(words)))))
    if lang is None or lang == "en":
        return None
    if not _HAN_KANA.search(query) and len(words) < 4:
        return None
    return lang


def page_language(path: str) -> str | None:
    """The language a translated page's path names (`docs/de/...`, `README.zh-CN.md`)."""
    *folders, name = path.split("/")
    if (code := suffix_language(name)) not in (None, "en"):
        return code
    for seg in folders:
        if (code := language_code(seg)) not in (None, "en"):
            return code
    return None


def lexical_terms(query: str, limit: int = 8) -> list[str]:
    """The words of a question to look up in translated pages: runs of one script (so a
    Japanese question splits at its kana and kanji), hiragana particles and words of one
    to three letters dropped, longest first; Han runs longer than four characters are cut
    into pairs (Chinese writes no spaces)."""
    terms: dict[str, None] = {}
    for run in _RUNS.findall(query):
        if _HIRAGANA.fullmatch(run):
            continue
        if re.fullmatch(r"[\u3400-\u4dbf\u4e00-\u9fff]+", run) and len(run) > 4:
            for i in range(0, len(run) - 1, 2):
                terms.setdefault(run[i:i + 2], None)
            continue
        if len(run) >= (1 if _HAN_KANA.search(run) else 4):
            terms.setdefault(run, None)
    return sorted(terms, key=len, reverse=True)[:limit]


def _text(hit: Hit) -> str:
    return ("\n".join(m.text for m in hit.matches) or hit.snippet).lower()


def coverage(hit: Hit, terms: Sequence[str], weights: Mapping[str, float] | None = None
             ) -> float:
    """The share of `terms` (weighted by `weights`, default 1 each) that occur in `hit`'s
    matching lines, case-insensitively."""
    if not terms:
        return 0.0
    text = _text(hit)
    w = weights or {}
    total = sum(w.get(t, 1.0) for t in terms)
    return sum(w.get(t, 1.0) for t in terms if t.lower() in text) / total


FULL_SHARE = 0.75
"""A page holding this share of the question's (weighted) words counts as holding them
all: questions inflect words that pages inflect otherwise."""


def original_key(path: str) -> str:
    """A page's path with its language left out (`docs/de/x.md` and `docs/en/x.md` ->
    `docs/*/x.md`; `README.zh-CN.md` -> `README.md`): the same key for a page and its
    translations."""
    *folders, name = path.split("/")
    if suffix_language(name) is not None:
        stem, _sep, ext = name.rpartition(".")
        name = re.sub(r"[._-][A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,4})?$", "", stem) + "." + ext
    return "/".join([*("*" if language_code(f) else f for f in folders), name])


def own_language_pages(hits: Sequence[Hit], pages: Sequence[Hit], query: str) -> list[Hit]:
    """`hits` with the translated `pages` (lexical hits, one per file, in the question's
    language) added. Each is scored against the best hit: by the share of the question's
    words it holds (`FULL_SHARE` counts as all), times its quality relative to the best
    page's: more when its original (the same page in another language, `original_key`)
    is among `hits` and scores well, more when it holds the question's rarer words
    (rare among the pages), a little more for more matching lines. The page holding the
    question's words, whose original answers best, ranks first."""
    if not pages:
        return list(hits)
    terms = lexical_terms(query)
    texts = [_text(p) for p in pages]
    weights = {t: math.log(1 + len(pages) / (1 + sum(t.lower() in x for x in texts)))
               for t in terms}
    top = max((h.score for h in hits), default=1.0) or 1.0
    originals: dict[str, float] = {}
    for h in hits:
        key = original_key(h.path)
        originals[key] = max(originals.get(key, 0.0), h.score / top)
    most = max(len(p.matches) for p in pages) or 1
    seen = {(h.repository, h.path) for h in hits}
    scored = []
    for p in pages:
        if (p.repository, p.path) in seen:
            continue
        quality = (0.65 + 0.2 * originals.get(original_key(p.path), 0.0)
                   + 0.1 * coverage(p, terms, weights)
                   + 0.05 * math.log1p(len(p.matches)) / math.log1p(most))
        scored.append((p, coverage(p, terms), quality))
    best = max((q for _p, _s, q in scored), default=1.0)
    added = [replace(p, score=top * 1.01 * min(1.0, share / FULL_SHARE) * quality / best)
             for p, share, quality in scored]
    return [*hits, *added]


@dataclass(frozen=True, slots=True)
class TranslationQuery:
    """The lexical query that finds translated pages for a question in their language."""

    language: str
    query: str
    """Zoekt syntax: the question's words (`lexical_terms`), ORed, scoped."""

    def keep(self, hits: Sequence[Hit], roles: Mapping[tuple[str, str], str]) -> list[Hit]:
        """The hits that are translated pages (`roles`: (repository, path) -> role) in
        this language."""
        return [h for h in hits if roles.get((h.repository, h.path)) == "translation"
                and page_language(h.path) == self.language]


def translation_query(query: str, filters: SearchFilters) -> TranslationQuery | None:
    """The lexical query for the translated pages in `query`'s language, or None when
    `query` is in English (or has no words to look up)."""
    lang = query_language(query)
    terms = lexical_terms(query) if lang is not None else []
    if lang is None or not terms:
        return None
    text = " or ".join(escape_regex(t) for t in terms)
    return TranslationQuery(lang, scoped_query(text, filters.repositories, filters.language))
