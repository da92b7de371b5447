"""Words shared by every index report (CLI text, MCP Markdown): samples of named files,
what a run that was stopped left undone.

Pure: strings in, strings out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from ctxd.indexer.walk.translations import translation_place

SHOWN = 5
"""How many names a one-line summary shows before `... and N more`."""

EMBED_ALLOW_HINT = "`walk.embed_allow` (config) brings them in, e.g. [\"vendor\"]"
SENSITIVE_ALLOW_HINT = ("`walk.sensitive_allow` (config) lets a file in that holds no "
                        "secret, e.g. [\".env.example\"]")


def named_sample(names: Sequence[str], total: int, shown: int = SHOWN) -> str:
    """`a, b, c and 12 more`: the first `shown` of `names`, with the rest counted."""
    head = ", ".join(names[:shown])
    rest = total - min(len(names), shown)
    return f"{head} and {rest} more" if rest > 0 else head


def sensitive_line(count: int, names: Sequence[str]) -> str:
    """One line on the files left out as likely secrets: how many, the first names, and
    the key that lets one in."""
    return (f"Likely secrets, not indexed: {count}: {named_sample(list(names), count)}; "
            f"{SENSITIVE_ALLOW_HINT}")


def masked_line(count: int, names: Sequence[str]) -> str:
    """One line on the files indexed with a likely secret masked: how many, the first
    names."""
    return (f"Likely secrets masked (indexed with the secret's characters as `*`): {count}: "
            f"{named_sample(list(names), count)}")


def not_embedded_line(counts: Mapping[str, int], names: Sequence[str]) -> str:
    """One line on the files kept for lexical search only: counts by role, first names,
    and the key that brings them in."""
    total = sum(counts.values())
    roles = ", ".join(f"{k} {v}" for k, v in counts.items())
    line = (f"Not embedded (kept for lexical search): {total} ({roles}): "
            f"{named_sample(list(names), total)}; {EMBED_ALLOW_HINT}")
    if counts.get("changelog"):
        line += "; long changelogs are embedded coarsely: their newest releases only"
    if counts.get("long-lines"):
        line += "; code made mostly of very long lines has its short lines embedded only"
    if counts.get("translation"):
        pairs = [(n, p) for n in names if (p := translation_place(n))]
        place = next((p for n, p in pairs if p != n), pairs[0][1] if pairs else "docs/de")
        line += (f"; translated docs come back one language at a time, e.g. "
                 f"`walk.embed_allow = [\"{place}\"]`")
    return line


def checkpoints_lines(by_kind: Mapping[str, int], top: Sequence[tuple[str, int]]) -> list[str]:
    """Two lines on where a run's checkpoints come from: their count by kind of file, and
    the files that yield the most (`top`: path, checkpoints)."""
    lines = []
    if by_kind:
        lines.append("  checkpoints by kind: " + ", ".join(f"{k} {v}" for k, v in by_kind.items()))
    if top:
        lines.append("  most checkpoints: " + ", ".join(f"{p} ({n})" for p, n in top))
    return lines


class StoppedRun(Protocol):
    """What `stopped_text` reads of a run's `IndexStats`."""

    path: str
    stopped_in: str
    embeddings_pending: int
    files_indexed: int
    checkpoints: int


def stopped_text(stats: StoppedRun, again: str) -> str:
    """Why a stopped run is not a finished one: what it left undone and how to finish it
    (`again`: the command or call that runs it again; every committed file is whole and
    the next run resumes)."""
    if stats.stopped_in == "embed":
        missing = (f"{stats.embeddings_pending} texts still have no embedding (semantic "
                   "search does not see them yet)")
    else:
        missing = (f"the walk did not finish: {stats.files_indexed} files are in the index, "
                   "files not reached yet are not, deleted files are not removed, and new "
                   "checkpoints have no embedding yet")
    return (f"Stopped before the end (the process doing the work was asked to stop): "
            f"{missing}. {again} again resumes where this run stopped.")
