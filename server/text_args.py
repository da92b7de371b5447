"""Text arguments of every tool and command are checked for control characters here.

`check_text(fields)` raises a `ValidationError` naming the first field whose string (or a
string in its list) holds NUL or another control character, its position and what to do.
Tab, line feed and carriage return are allowed (a query may span lines). The MCP server's
argument middleware and the CLI's commands call it before any use case runs, so such a
value never reaches SQLite, the file system or a log line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ctxd.indexer.errors import ValidationError

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
                    f"{item!r}",
                    hint=f"Remove the control character from {name}: ctxd's arguments are "
                    "text (tab, line feed and carriage return are allowed).",
                    details={"field": name, "value": item, "position": m.start()},
                )
