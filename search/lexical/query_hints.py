"""Hints about lexical (Zoekt-syntax) queries that parse but likely do not mean what was
typed. Pure; the service adds them to a search's notes (CLI and MCP alike)."""

from __future__ import annotations

import re

_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_SINGLE_ESCAPE = re.compile(r"(?<!\\)\\([wWdDsSbB])")


def quoted_escape_hint(query: str) -> str | None:
    """A hint when a quoted string of `query` holds a regex escape such as `\\w`: inside
    quotes a backslash escapes the next character (as in Zoekt), so `"def \\w+"` looks
    for `def w+`; the hint spells the query with the backslashes doubled. None when no
    quoted string has one."""
    for m in _QUOTED.finditer(query):
        found = _SINGLE_ESCAPE.search(m.group(1))
        if found is None:
            continue
        doubled = _QUOTED.sub(lambda q: '"' + _SINGLE_ESCAPE.sub(r"\\\\\1", q.group(1)) + '"',
                              query)
        return (f"inside quotes `\\{found.group(1)}` stands for `{found.group(1)}` (a quoted "
                f"backslash escapes the next character); for the regex class write "
                f"`{doubled}` (a doubled backslash)")
    return None
