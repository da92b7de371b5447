"""The words a checkpoint is indexed under for keyword search, the same in every engine.

`chunk_fts_row(path, symbol, text)` is the (path, symbol, text) a checkpoint gives the
keyword index: its words plus the camelCase humps of its identifiers
(`split_identifiers`), so a question's words reach code (`parseHeader` is found by
`parse` and `header`); the keyword search splits a question's words the same way. The
SQLite store writes these texts into its FTS5 table `chunk_fts`, the PostgreSQL store into
the weighted `words` column; each engine's own tokenizer then stems them.

Pure and deterministic: rows written now and rows a migration rebuilds agree.
"""

from __future__ import annotations

import re

__all__ = ["chunk_fts_row", "split_identifiers"]


def split_identifiers(text: str) -> str:
    """The camelCase / PascalCase humps of identifiers in `text`, space-separated.

    FTS5's unicode61 tokenizer already splits snake_case at `_`; this adds `parse` and
    `Header` for `parseHeader` so a question's words reach code identifiers.
    """
    parts = []
    for ident in _ALNUM_WORD.findall(text):
        if _UPPER.search(ident, 1) is None:
            continue  # no hump after the first letter: not camelCase
        humps = _CAMEL_HUMP.findall(ident)
        if len(humps) > 1:
            parts.extend(humps)
    return " ".join(parts)


_ALNUM_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
"""A run of ASCII letters and digits starting with a letter. Matched greedily with no
alternative to backtrack into, so `findall` is linear in the text (the former
`[A-Za-z][a-z0-9]*[A-Z][A-Za-z0-9]*` retried every suffix of a long lowercase word:
quadratic, 7.7 s for a 40,000-letter query)."""
_UPPER = re.compile(r"[A-Z]")
_CAMEL_HUMP = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")


def chunk_fts_row(path: str, symbol: str | None, text: str) -> tuple[str, str, str]:
    """(path, symbol, text) as indexed for keyword search: words plus identifier humps."""
    path_words = path.replace("/", " ").replace(".", " ")
    sym = symbol or ""
    return (
        f"{path_words} {split_identifiers(path)}",
        f"{sym.replace('.', ' ')} {split_identifiers(sym)}",
        f"{text}\n{split_identifiers(text)}",
    )
