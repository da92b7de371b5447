"""Words shared by every index report (CLI text, MCP Markdown): samples of named files.

Pure: strings in, strings out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

SHOWN = 5
"""How many names a one-line summary shows before `... and N more`."""

EMBED_ALLOW_HINT = "`walk.embed_allow` (config) brings them in, e.g. [\"vendor\"]"


def named_sample(names: Sequence[str], total: int, shown: int = SHOWN) -> str:
    """`a, b, c and 12 more`: the first `shown` of `names`, with the rest counted."""
    head = ", ".join(names[:shown])
    rest = total - min(len(names), shown)
    return f"{head} and {rest} more" if rest > 0 else head


def not_embedded_line(counts: Mapping[str, int], names: Sequence[str]) -> str:
    """One line on the files kept for lexical search only: counts by role, first names,
    and the key that brings them in."""
    total = sum(counts.values())
    roles = ", ".join(f"{k} {v}" for k, v in counts.items())
    return (f"Not embedded (kept for lexical search): {total} ({roles}): "
            f"{named_sample(list(names), total)}; {EMBED_ALLOW_HINT}")
