"""`ParsedQuery`: a search query read once, at the search use case, and handed to every
leg: its text, its keyword terms (`search.keyword.keyword_terms`) and its identifier-like
words (`search.hybrid.identifier_terms`). The legs read these fields instead of splitting
the text again. Pure: no store, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxd.search.hybrid import identifier_terms
from ctxd.search.keyword import keyword_terms


@dataclass(frozen=True)
class ParsedQuery:
    """One query, split once."""

    text: str
    """The query as the caller wrote it."""
    terms: tuple[str, ...]
    """Its keyword terms, in order (content words and identifier parts)."""
    identifiers: tuple[str, ...]
    """Its identifier-like words (`Retry.increment`, `MAX_RETRIES`), in order, distinct."""

    @classmethod
    def parse(cls, text: str) -> ParsedQuery:
        return cls(text, tuple(keyword_terms(text)), tuple(identifier_terms(text)))
