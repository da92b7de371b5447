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


_META = frozenset("()[]{}+*?|^$")


def quoted_regex_hint(query: str) -> str | None:
    """A hint for a query that found nothing while a quoted string of it holds regex
    operators (`(`, `[`, `+`, ...): inside quotes the text is still a regular expression
    (as in Zoekt), so `"start(3)"` looks for `start3`. The hint spells the query with
    those characters escaped (a doubled backslash inside quotes). None when no quoted
    string holds one. Give it only for an empty answer: a quoted group may be meant."""
    found: list[str] = []

    def literal(m: re.Match[str]) -> str:
        text, out, i = m.group(1), [], 0
        while i < len(text):
            c = text[i]
            if c == "\\" and i + 1 < len(text):
                out.append(text[i : i + 2])
                i += 2
                continue
            if c in _META:
                found.append(c)
                out.append("\\\\" + c)
            else:
                out.append(c)
            i += 1
        return '"' + "".join(out) + '"'

    spelled = _QUOTED.sub(literal, query)
    if not found:
        return None
    ops = ", ".join(f"`{c}`" for c in dict.fromkeys(found))
    return (f"inside quotes the text is still a regular expression ({ops} are operators "
            f"there), so nothing matched it; for the literal text write `{spelled}` (a "
            f"doubled backslash escapes inside quotes)")
