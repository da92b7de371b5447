"""Code over prose: for a question about behaviour, the code that does it before the page
that describes it.

A tutorial page explains what the code does in plain words, so for "how are dates
converted to JSON" it often reads closer to the question than the encoder does, and it
ranks first. An agent asking how something works wants the code. `code_first` (the last
step of `search.hybrid.rank_hybrid`) re-orders the fused candidates:

- **What the question asks for** (`wants_prose`): a usage question ("how do I ...",
  "can I ...", "is there a way ..."), one that names the documentation (a guide, a
  tutorial, an example, the docs, the README, install or getting started), or one asked
  in another language than the code's (`search.translations.query_language`) is answered
  by prose: nothing changes. Any other question about behaviour is answered by code.
- **Prose that describes a candidate** (`describes`): a page whose candidate hits name
  an identifier defined by a code hit among the candidates (its symbol, or the code
  file's name) has each of its hits placed just below the best such code hit: the page
  comes right after the code it describes, never above it. Prose that describes no
  candidate keeps its place but loses `PROSE_FACTOR` of its score (the code that answers
  may be among the candidates under words the page does not use).
- **A bounded share of the top**: at most `MAX_PROSE_TOP` prose hits among the first
  `TOP` results, so a question that code answers still shows the pages that explain it,
  after the code, and never a first page of prose alone. When no code hit scores at
  least `CODE_FLOOR` of the best hit, no code answers the question, and prose keeps its
  place.

The signals are the kind of file (`is_prose`), the identifiers the candidates define and
the prose names (any language), and the question's form; none is a word list alone.
Pure: hits in, hits out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ctxd.search.models import Hit

__all__ = ["code_first", "describes", "is_prose", "wants_prose"]

PROSE_FACTOR = 0.85
"""Score factor for a prose hit that describes no candidate code, for a behaviour question."""
MAX_PROSE_TOP = 3
"""At most this many prose hits among the first `TOP` for a behaviour question."""
TOP = 10
CODE_FLOOR = 0.5
"""A code hit scoring at least this share of the best hit answers the question."""

_PROSE = re.compile(r"\.(md|mdx|markdown|rst|txt|adoc|asciidoc|rdoc|textile|org|pod)$",
                    re.IGNORECASE)
_DOCS = re.compile(
    r"\b(docs?|documentation|documented|guides?|readme|tutorials?|manual|examples?|"
    r"usage|install(ation|ing)?|getting started|quick ?start|walkthrough|faq|"
    r"changelog|release notes?)\b", re.IGNORECASE)
_USAGE = re.compile(
    r"\b(how (do|can|should|would) (i|we|you)|how to|(can|could|do|should) (i|we)|"
    r"i'm|i am|i want|is there a way|is it possible)\b", re.IGNORECASE)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")


def is_prose(path: str) -> bool:
    """Documentation pages (`.md`, `.rst`, `.txt`, `.adoc`, ...), not code or data."""
    return bool(_PROSE.search(path))


def wants_prose(query: str) -> bool:
    """Whether prose answers `query`: a user's usage question, a question naming the
    documentation, or one not in English (module docstring)."""
    from ctxd.search.translations import query_language

    if _DOCS.search(query) or _USAGE.search(query):
        return True
    return query_language(query) is not None


def _names(hit: Hit) -> set[str]:
    """What a code hit defines: its symbol's parts (`Retry.increment` -> `Retry`,
    `increment`) and its file's stem, those of four characters or more."""
    out: set[str] = set()
    if hit.symbol:
        out.update(p for p in re.split(r"[.:#]+", hit.symbol) if len(p) >= 4)
    stem = hit.path.rsplit("/", 1)[-1].split(".", 1)[0]
    if len(stem) >= 4 and stem not in ("__init__", "index", "main", "utils", "util"):
        out.add(stem)
    return out


def describes(words: set[str], code: Sequence[Hit]) -> Hit | None:
    """The best-scored hit of `code` (best first) that a page holding `words` (the
    identifiers of its candidate hits, `_IDENT`) names an identifier of, or None."""
    if not words:
        return None
    for c in code:
        if _names(c) & words:
            return c
    return None


def code_first(query: str, hits: Sequence[Hit], *, factor: float = PROSE_FACTOR,
               max_prose_top: int = MAX_PROSE_TOP, top: int = TOP) -> list[Hit]:
    """`hits` best first, prose placed after the code it describes for a behaviour
    question (module docstring); unchanged order (best first) otherwise."""
    ranked = sorted(hits, key=lambda h: (-h.score, h.repository, h.path, h.start_line))
    if not ranked or wants_prose(query):
        return ranked
    best = ranked[0].score
    code = [h for h in ranked if not is_prose(h.path)]
    if not code or code[0].score < CODE_FLOOR * best:
        return ranked
    words: dict[tuple[str, str], set[str]] = {}
    for h in ranked:
        if is_prose(h.path):
            words.setdefault((h.repository, h.path), set()).update(_IDENT.findall(h.snippet))
    out: list[Hit] = []
    for h in ranked:
        if not is_prose(h.path):
            out.append(h)
            continue
        anchor = describes(words[(h.repository, h.path)], code)
        if anchor is not None and anchor.score < h.score:
            h = replace(h, score=anchor.score * 0.999)
        elif anchor is None:
            h = replace(h, score=h.score * factor)
        out.append(h)
    out.sort(key=lambda h: (-h.score, h.repository, h.path, h.start_line))
    return _bound(out, max_prose_top, top)


def _bound(ranked: list[Hit], most: int, top: int) -> list[Hit]:
    """At most `most` prose hits among the first `top` (by file): the rest move down
    to just after the `top`-th result, in their order."""
    head: list[Hit] = []
    held: list[Hit] = []
    files: set[tuple[str, str]] = set()
    prose_files: set[tuple[str, str]] = set()
    rest = list(ranked)
    while rest and len(files) < top:
        h = rest.pop(0)
        f = (h.repository, h.path)
        if is_prose(h.path) and f not in prose_files and len(prose_files) >= most:
            held.append(h)
            continue
        if is_prose(h.path):
            prose_files.add(f)
        files.add(f)
        head.append(h)
    if not held:
        return ranked
    out = [*head, *held, *rest]
    # Scores stay descending, so that sorting by score (pages, cursors) keeps this order.
    for i in range(1, len(out)):
        if out[i].score >= out[i - 1].score:
            out[i] = replace(out[i], score=out[i - 1].score * 0.999)
    return out
