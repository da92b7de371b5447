"""Text arguments of every tool and command are checked for control characters here.

`check_text(fields)` raises a `ValidationError` naming the first field whose string (or a
string in its list) holds NUL or another control character, its position and what to do.
Tab, line feed and carriage return are allowed (a query may span lines). The MCP server's
argument middleware and the CLI's commands call it before any use case runs, so such a
value never reaches SQLite, the file system or a log line.

Also the bounds every edge shares: `too_deep(value, limit)` (nesting, checked without
recursion), `shown(value)` (a value as an error message may echo it: long ones cut, so
an error never sends a megabyte back) and `MAX_FILTER_LENGTH`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ctxd.indexer.errors import ValidationError

MAX_FILTER_LENGTH = 1000
"""The longest `list_repos` / `ctxd repos` name filter (a regular expression)."""

SHOWN_CHARS = 200
"""How much of a value an error message repeats."""


def shown(value: Any, limit: int = SHOWN_CHARS) -> Any:
    """`value` as an error may echo it: itself when short, else the start of its text (or
    JSON) and its length."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    if len(text) <= limit:
        return value
    return f"{text[:limit]}... ({len(text)} characters)"


def too_deep(value: Any, limit: int) -> bool:
    """Whether lists, tuples and dicts nest deeper than `limit` in `value` (iteratively: a
    value too deep for recursion is answered, not crashed on)."""
    if not isinstance(value, dict | list | tuple):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, dict | list | tuple):
                if depth + 1 > limit:
                    return True
                stack.append((child, depth + 1))
    return limit < 1


CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
"""Control characters refused in text arguments (all of C0 but tab, LF, CR; and DEL)."""


def check_text(fields: Mapping[str, Any], *, allow_nul: frozenset[str] = frozenset()) -> None:
    """Refuse control characters in the string values of `fields` (field label -> value;
    lists and tuples of strings are checked item by item).

    Args:
        allow_nul: fields whose NUL characters a use case reports itself (a query's NUL
            is a `QUERY_ERROR` with its position).

    Raises:
        ValidationError: with `details` `{"field", "value", "position"}`.
    """
    for field, value in fields.items():
        items = value if isinstance(value, list | tuple) else [value]
        for i, item in enumerate(items):
            if not isinstance(item, str):
                continue
            for m in CONTROL.finditer(item):
                if m.group() == "\x00" and field in allow_nul:
                    continue
                name = f"{field}[{i}]" if isinstance(value, list | tuple) else field
                code = f"\\x{ord(m.group()):02x}"
                raise ValidationError(
                    f"{name} contains a control character ({code}) at position {m.start()}: "
                    f"{shown(item)!r}",
                    hint=f"Remove the control character from {name}: ctxd's arguments are "
                    "text (tab, line feed and carriage return are allowed).",
                    details={"field": name, "value": shown(item), "position": m.start()},
                )
