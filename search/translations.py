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

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from ctxd.indexer.walk.translations import language_code, prose_language, suffix_language
from ctxd.search.models import Hit
from ctxd.search.semantic import SearchFilters
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


def coverage(hit: Hit, terms: Sequence[str]) -> float:
    """The share of `terms` that occur in `hit`'s matching lines, case-insensitively."""
    if not terms:
        return 0.0
    text = "\n".join(m.text for m in hit.matches).lower() or hit.snippet.lower()
    return sum(1 for t in terms if t.lower() in text) / len(terms)


def own_language_pages(hits: Sequence[Hit], pages: Sequence[Hit], query: str) -> list[Hit]:
    """`hits` with the translated `pages` (lexical hits, one per file, in the question's
    language) added, each scored as the best hit times the share of the question's words
    it holds: a page holding all of them ranks with the best."""
    if not pages:
        return list(hits)
    terms = lexical_terms(query)
    top = max((h.score for h in hits), default=1.0) or 1.0
    seen = {(h.repository, h.path) for h in hits}
    added = [replace(p, score=top * coverage(p, terms) * 1.01) for p in pages
             if (p.repository, p.path) not in seen]
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
