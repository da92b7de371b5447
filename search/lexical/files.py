"""File-name search for the embedded lexical engine: globs, regexes or text over paths.

Provides `search_file_names(store, pattern, ...)`, which backs
`EmbeddedLexical.search_files` (`Service.files`: `ctxd files` and the MCP
`search_files` tool), and the pure pattern readers `file_pattern_regex` (which kind a
pattern is, as an RE2 regex) and `glob_to_regex`. Reads the index through
`IndexStore.query` only.

Invariants: a pattern with regex operators (`\\ ^ $ ( ) | + { }`) is a regex, one with
`*`, `?` or `[` a glob (a glob without `/` also matches base names), anything else a
substring; case-sensitive iff the pattern has an uppercase letter. Results carry no
line matches; the best path match comes first, then shorter paths, repository, path.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence

from ctxd.indexer.errors import QueryError
from ctxd.indexer.store.protocol import IndexStore
from ctxd.search.lexical.eval import Row, compile_regex, utf8
from ctxd.search.lexical.rank import path_fragment_score
from ctxd.search.lexical.regex_trigrams import check_pattern, has_uppercase, quote_meta
from ctxd.search.lexical.sql import Cond, CondOp, c_and, path_cond, render_cond
from ctxd.search.models import FileMatch, LexicalResult


def search_file_names(
    store: IndexStore, pattern: str, *, max_files: int, repos: Sequence[str] | None
) -> LexicalResult:
    """Files whose path matches a glob (`*.py`, `src/**/test_*.py`), a regex or text.

    A pattern with regex operators (`\\ ^ $ ( ) | + { }`) is an RE2 regex; one
    with `*`, `?` or `[` is a glob (matched against the whole path, and against
    the base name when it has no `/`); anything else is a substring. Case:
    sensitive iff the pattern has an uppercase letter. Files come back without
    line matches, best path match first (base-name matches before others).

    Raises:
        QueryError: empty pattern or invalid regex.
    """
    started = time.perf_counter()
    regex, kind = file_pattern_regex(pattern)
    case_sensitive = has_uppercase(pattern)
    # A glob's `**` (`.*`) spans every character, a newline in a file name too (issue 39,
    # item 12); its `*` and `?` are classes (`[^/]`), which match one anyway.
    rx = compile_regex(("(?s)" if kind == "glob" else "") + regex, case_sensitive,
                       multiline=False)
    conds: list[Cond] = [path_cond(regex, case_sensitive)] if kind != "glob" else []
    if repos is not None:
        conds.append(Cond(CondOp.IN_VALUES, sql="r.name", params=tuple(repos)))
    where, params = render_cond(c_and(conds), store.dialect)
    rows = store.candidate_files(where, params)
    hits: list[tuple[float, Row, list[tuple[int, int]]]] = []
    for raw in rows:
        row = Row(*raw)
        path = utf8(row.path)
        found = [m.span() for m in rx.finditer(path)]
        if not found:
            continue
        spans = [(s + (path[s : s + 1] == b"/" and kind == "glob"), e) for s, e in found]
        spans = [(s, e) for s, e in spans if e > s] or [(0, len(path))]
        score = max(path_fragment_score(path, s, e) for s, e in spans)
        hits.append((score, row, spans))
    hits.sort(key=lambda h: (-h[0], len(h[1].path), h[1].repo, h[1].path))
    files = [
        FileMatch(
            repository=row.repo, path=row.path, language=row.language, score=score, matches=()
        )
        for score, row, _ in hits[:max_files]
    ]
    return LexicalResult(
        files=files,
        match_count=len(hits),
        file_count=len(hits),
        duration_ms=(time.perf_counter() - started) * 1000.0,
        notes=(f"pattern read as a {kind}: {regex}",),
    )


_GLOB_CHARS = re.compile(r"[*?\[]")
_REGEX_CHARS = re.compile(r"[\\^$()|+{}]")


def file_pattern_regex(pattern: str) -> tuple[str, str]:
    """(RE2 regex, kind) for a file pattern: kind is 'regex', 'glob' or 'substring'.

    Raises:
        QueryError: empty pattern or invalid regex.
    """
    if not pattern.strip():
        raise QueryError(
            "Query syntax error: the file pattern is empty",
            hint="Give a glob (`*.py`), a regex (`^src/.*_test\\.go$`) or part of a path.",
            details={"position": 0},
        )
    if _REGEX_CHARS.search(pattern):
        problem = check_pattern(pattern)
        if problem is not None:
            raise QueryError(
                f"Query syntax error: invalid regular expression `{pattern}`: {problem}",
                hint="Escape metacharacters with a backslash, or use a glob such as `*.py`.",
                details={"position": 0},
            )
        return pattern, "regex"
    if _GLOB_CHARS.search(pattern):
        return glob_to_regex(pattern), "glob"
    return quote_meta(pattern), "substring"


def glob_to_regex(glob: str) -> str:
    """An anchored RE2 regex for a glob: `**` spans folders, `*`/`?` stay within one.

    A glob without `/` also matches the base name of any path.
    """
    out: list[str] = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = glob.find("]", i + 2 if glob[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end < 0:
                out.append(quote_meta(c))
            else:
                body = glob[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end + 1
                continue
        else:
            out.append(quote_meta(c))
        i += 1
    body = "".join(out)
    if "/" not in glob:
        return f"(?:^|/){body}$"
    return f"^{body}$"
