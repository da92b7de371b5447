"""Exact phrases first: a pasted error message or a quoted phrase that occurs verbatim in
a few files ranks those files first in the default (hybrid) mode.

The semantic and keyword legs read a message as words; neither knows that
"There was an error parsing the body" is written, letter for letter, in one source file
(on a real framework that file ranked 40th). `phrases(query)` names what to look up:

- the quoted parts of the query (`"error parsing the body"`, two words or more), or else
- a query of `MIN_WORDS` words or more as it was typed (quotes and trailing punctuation
  stripped), and its longest run of plain words between the values the program filled in
  (`Request failed with status code 404` -> `Request failed with status code`: the
  source has the message's fixed part, not the number); not a question (one ending in
  `?` or opening with `how`, `where`, `what`, ...: questions are not pasted, and the
  lookup, ~20 ms, is spared).

`lexical_query(phrase)` is that phrase as one case-insensitive literal in Zoekt syntax,
for the lexical engine (or Zoekt) to find; `exact_first(ranked, files)` then moves the
files holding it (at most `MAX_FILES`: a phrase in more files is common wording, not
evidence) to the front of the hybrid ranking: code before prose (the message's source
before a page that quotes it), source before tests and copies (`copies.copy_tier`), then
in hybrid order, then the files no leg found (in the
lexical engine's order, each as a hit on its first matching line). Natural
questions ("how are redirects followed") occur verbatim nowhere, so their ranking is
untouched.

Pure (hits in, hits out). Called by the hybrid search use case.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from ctxd.indexer.errors import CtxdError
from ctxd.indexer.walk.textclass import Role
from ctxd.search.copies import copy_tier
from ctxd.search.filters import SearchFilters
from ctxd.search.models import FileMatch, Hit, LexicalResult, MatchSource
from ctxd.search.path_kinds import is_prose
from ctxd.search.zoekt.query import escape_regex, scoped_query

__all__ = ["MAX_FILES", "MIN_WORDS", "exact_files", "exact_first", "lexical_query", "phrases"]

MIN_WORDS = 4
"""An unquoted query of this many words or more may be a pasted message."""
MAX_FILES = 10
"""A phrase found in more files than this is common wording: the ranking stays."""
MAX_CHARS = 300
"""Longer queries are not looked up verbatim."""

_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”|`([^`]+)`')
_WORD = re.compile(r"\S+")
_QUESTION = frozenset({"how", "where", "what", "which", "why", "when", "who", "whose",
                       "does", "do", "is", "are", "can", "could", "should", "would", "will",
                       "find", "show", "explain", "i", "my"})
"""First words of a question rather than of a pasted message (a cost filter only)."""
_HTML = (".html", ".htm")
"""Pages that quote a message as often as prose does (`path_kinds.is_prose` and these)."""
_VALUE = re.compile(r"\d|['\"`/\\<>{}\[\]=]")
"""A token the program fills in: a number, a quoted value, a path, a template."""


def phrases(query: str) -> list[str]:
    """The literal phrases of `query` to look up (see the module docstring), longest
    first; none for a short question."""
    text = query.strip()
    if not text or len(text) > MAX_CHARS or "\n" in text:
        return []
    quoted = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(text)]
    quoted = [q.strip() for q in quoted if len(q.split()) >= 2]
    if quoted:
        return list(dict.fromkeys(quoted))
    whole = text.strip("'\"`“”").rstrip(".!?:; ")
    words = _WORD.findall(whole)
    if len(words) < MIN_WORDS or text.endswith("?") or words[0].lower() in _QUESTION:
        return []
    out = [whole]
    run: list[str] = []
    best: list[str] = []
    for w in words:
        if _VALUE.search(w):
            best = max(best, run, key=len)
            run = []
        else:
            run.append(w)
    best = max(best, run, key=len)
    fixed = " ".join(best).rstrip(".!?:;, ")
    if len(best) >= MIN_WORDS - 1 and fixed != whole:
        out.append(fixed)
    return out


def lexical_query(phrase: str) -> str:
    """`phrase` as one case-insensitive literal in Zoekt syntax (inside quotes a
    backslash is written twice)."""
    pattern = escape_regex(phrase).replace("\\", "\\\\").replace('"', '\\"')
    return f'case:no "{pattern}"'


def exact_files(query: str, filters: SearchFilters,
                lexical: Callable[[str, int], LexicalResult],
                roles: Callable[[Sequence[str]], dict[tuple[str, str], str]]
                ) -> list[FileMatch]:
    """The files holding the first of `phrases(query)` that a few files hold, best first,
    without the files kept for lexical search only (a bundle holds the source's
    messages too); empty when no phrase is rare enough or the lookup fails.
    `lexical(query, max_files)`: the lexical engine (or Zoekt); `roles(paths)`: the
    stored roles (`IndexStore.file_roles`)."""
    fetch = 3 * MAX_FILES
    path_ok = filters.path_matcher()
    for phrase in phrases(query):
        scope = scoped_query(lexical_query(phrase), filters.repositories, filters.language)
        try:
            result = lexical(scope, fetch)
        except CtxdError:
            return []
        if len(result.files) >= fetch or result.partial:
            continue  # common wording (or a bounded scan): no evidence
        files = [fm for fm in result.files if fm.matches and path_ok(fm.path)]
        known = roles(sorted({fm.path for fm in files}))
        files = [fm for fm in files
                 if not Role(known.get((fm.repository, fm.path), "")).lexical_only]
        if files:
            return files if len(files) <= MAX_FILES else []
    return []


def exact_first(ranked: Sequence[Hit], files: Sequence[FileMatch],
                source: MatchSource = MatchSource.LEXICAL) -> list[Hit]:
    """`ranked` with the files of `files` (those holding the phrase, best first) moved to
    the front, each as its best hit in `ranked` or a hit on its first match; unchanged
    when `files` is empty or holds more than `MAX_FILES` files."""
    if not files or len(files) > MAX_FILES:
        return list(ranked)
    top = max((h.score for h in ranked), default=0.0)
    front: list[tuple[bool, int, int, Hit]] = []
    taken: set[int] = set()
    for n_file, fm in enumerate(files):
        prose = is_prose(fm.path) or fm.path.lower().endswith(_HTML)
        tier = copy_tier(fm.path)
        key = (fm.repository, fm.path)
        lines = {m.line for m in fm.matches}
        at = [i for i, h in enumerate(ranked) if (h.repository, h.path) == key
              and i not in taken]
        # The file's hit holding a matching line, else its best one.
        pick = next((i for i in at if any(ranked[i].start_line <= n <= ranked[i].end_line
                                          for n in lines)), at[0] if at else None)
        if pick is not None:
            taken.add(pick)
            hit = ranked[pick]
            sources = hit.sources if source in hit.sources else (*hit.sources, source)
            front.append((prose, tier, pick, replace(hit, sources=sources)))
        elif fm.matches:
            first = min(fm.matches, key=lambda m: m.line)
            front.append((prose, tier, len(ranked) + n_file, Hit(
                repository=fm.repository, path=fm.path, language=fm.language,
                start_line=first.line, end_line=first.line, score=top, sources=(source,),
                snippet=first.text, matches=fm.matches)))
    front.sort(key=lambda x: x[:3])
    n = len(front)
    moved = [replace(h, score=round(max(top, h.score) + 0.001 * (n - i), 4))
             for i, (_p, _t, _r, h) in enumerate(front)]
    return moved + [h for i, h in enumerate(ranked) if i not in taken]
