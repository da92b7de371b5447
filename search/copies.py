"""One result per distinct text: identical copies of a checkpoint answer once.

`collapse_copies(hits)` turns the checkpoint hits that carry the same text (a file and its
verbatim copy in `docs/snippets/`, a checked-in copy of a module, a second checkout
indexed as another repository) into one hit: the representative's location, the best
score of the group, every engine that found any copy, the copies' matching lines moved
onto the representative's lines (the texts are identical, so line `n` of a copy is line
`n + delta` of the representative), and the other places in `Hit.also_in` (`Copy`).

Which copy represents the group is decided by the paths alone, never by the scores, so
every checkpoint of two copied files picks the same file and the parts of one definition
still merge (`search.merge`): `copy_rank` puts ordinary source first, then copies made for
reading (`docs/`, `examples/`, `snippets/`, ...), then tests and their fixtures, then
build output, vendored trees, backups and generated files (`demoted`); within a tier the
original wins over a renamed copy of its folder (`lib/helpers/x.js` over `lib2/x.js`: a
folder named as another copy's folder plus a number or `copy`, `old`, `bak`, ...), then a
path under a source root (`src/`, `lib/`, `pkg/`, ...), then the shallowest, then the
shortest path (a package's module over a nested copy of it), then the name, so the choice
is the same on every page and every run.

What is collapsed: hits of one checkpoint (`Hit.checkpoint` set) or merged checkpoints
whose snippet spans exactly their lines and that carry no separate context blocks. A
lexical file-level hit (hybrid's lexical leg, `--mode lexical`) is never collapsed: its
snippet is one matching line, not the file's text, and lexical search lists every file
that matches, as grep does.

Pure and linear in the hits given (a dict keyed by the snippet string; the tier of a path
is a few set lookups, cached), and run on one page's candidates only, never on the index,
so its cost does not grow with the index (`bench/bench_copies.py`, docs/BENCHMARKS.md).
`search.merge` uses `union_copies` when it merges hits.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace
from functools import lru_cache

from ctxd.search.models import Copy, Hit, LineMatch, MatchSource
from ctxd.search.path_kinds import is_example, is_test_or_stub

_READING = frozenset({
    "doc", "docs", "documentation", "guide", "guides", "site", "website", "notebook",
    "notebooks"})
"""Folders of copies made for reading: documentation and notebooks (examples, samples and
snippets: `path_kinds.is_example`)."""

_COPIES = frozenset({
    "dist", "build", "out", "target", "vendor", "vendored", "_vendor", "third_party",
    "thirdparty", "external", "externals", "site-packages", "node_modules",
    "bower_components", "backup", "backups", "archive", "archived", "old", "bak", "cache",
    ".cache"})
"""Folders of build output, vendored trees, caches and backups: never the copy one edits."""

_SOURCE_ROOTS = frozenset({"src", "lib", "pkg", "internal", "source", "sources", "app"})
"""Top folders that hold a package's own source."""

_RENAMED = re.compile(r"(.+?)[ _.-]?(?:\d+|copy|old|new|bak|backup|orig)", re.IGNORECASE)
"""A folder named as another plus a number or a copy's suffix (`lib2`, `utils-old`)."""

_RENAMED_END = re.compile(r"(?:\d|copy|old|new|bak|backup|orig)$", re.IGNORECASE)
"""How every `_RENAMED` folder ends, within its last 6 characters (a quick test before
the full match)."""

_COPY_NAME = re.compile(r"[ _.-]copy( ?\d+)?(\.[^.]+)?$|\.(bak|orig|old)$")


_SOURCES = tuple(MatchSource)
"""Engines in `MatchSource` order (how every hit lists them)."""


@lru_cache(maxsize=16384)
def copy_tier(path: str) -> int:
    """0 ordinary source, 1 a copy for reading (docs, examples), 2 tests and fixtures,
    3 build output, vendored trees, caches and backups. By the path's folder names and its
    file name, case-insensitively (set lookups; a long-lived process keeps the answers)."""
    *folders, name = path.lower().split("/")
    if _COPY_NAME.search(name) or any(f in _COPIES or f.endswith(".egg-info")
                                      for f in folders):
        return 3
    if is_test_or_stub(path):
        return 2
    if any(f in _READING for f in folders) or is_example(path):
        return 1
    return 0


def copy_rank(repository: str, path: str, demoted: Collection[tuple[str, str]] = (),
              folders: Collection[str] = ()) -> tuple[int, int, int, int, int, str, str]:
    """The order in which copies of one text are preferred as its representative (lowest
    first): tier (`copy_tier`; `demoted` files, e.g. generated code, count as tier 3),
    a renamed copy of a folder among `folders` (the other copies' folders) last, a path
    under a source root first, folder depth, path length, path, repository."""
    tier, bases, outside, depth = _path_shape(path)
    if demoted and (repository, path) in demoted:
        tier = 3
    renamed = any(b in folders for b in bases)
    return (tier, int(renamed), outside, depth, len(path), path, repository)


@lru_cache(maxsize=65536)
def _path_shape(path: str) -> tuple[int, tuple[str, ...], int, int]:
    """What `copy_rank` reads of a path: its tier, the folders its folders would be
    renamed copies of (`lib` for `lib2`), whether it lies outside a source root, its
    depth (a page's copies rank thousands of paths: each is looked at once)."""
    parts = path.split("/")[:-1]
    bases = tuple(m.group(1) for f in parts
                  if _RENAMED_END.search(f[-6:]) and (m := _RENAMED.fullmatch(f)) is not None)
    outside = not parts or parts[0].lower() not in _SOURCE_ROOTS
    return copy_tier(path), bases, int(outside), path.count("/")


def text_key(hit: Hit) -> str | None:
    """What identifies a hit's text for collapsing, or None when it must stay apart: a
    checkpoint hit (or a merge of them) whose snippet spans exactly its lines."""
    if hit.checkpoint is None or hit.blocks or not hit.snippet:
        return None
    if hit.snippet.count("\n") != hit.end_line - hit.start_line:
        return None
    return hit.snippet


def distinct_texts(hits: Sequence[Hit]) -> int:
    """How many hits `collapse_copies(hits)` returns (merging them after can only make
    fewer): one per distinct `text_key`, plus every hit that is not collapsed."""
    keys: set[str] = set()
    loose = 0
    for h in hits:
        key = text_key(h)
        if key is None:
            loose += 1
        else:
            keys.add(key)
    return len(keys) + loose


def collapse_copies(hits: Sequence[Hit], demoted: Collection[tuple[str, str]] = ()
                    ) -> list[Hit]:
    """`hits` with each group of identical texts (`text_key`) turned into one hit (module
    docstring). Order: each result where its group's first member was; hits that are not
    collapsed are returned unchanged."""
    groups: dict[str, list[Hit]] = {}
    order: list[Hit | str] = []
    for h in hits:
        key = text_key(h)
        if key is None:
            order.append(h)
        elif key in groups:
            groups[key].append(h)
        else:
            groups[key] = [h]
            order.append(key)
    if all(len(g) == 1 for g in groups.values()):
        return list(hits)
    return [x if isinstance(x, Hit) else _one(groups[x], demoted) for x in order]


def _one(group: list[Hit], demoted: Collection[tuple[str, str]]) -> Hit:
    """One hit for a group of identical texts."""
    if len(group) == 1:
        return group[0]
    folders = {f for h in group for f in h.path.split("/")[:-1]}
    rep = min(group, key=lambda h: (*copy_rank(h.repository, h.path, demoted, folders),
                                    h.start_line))
    matches: set[LineMatch] = set()
    sources: set[MatchSource] = set()
    copies: list[Copy] = list(rep.also_in)
    for h in group:
        delta = rep.start_line - h.start_line
        matches.update(h.matches if not delta else
                       (LineMatch(m.line + delta, m.text, m.ranges) for m in h.matches))
        sources.update(h.sources)
        if h is not rep:
            copies.append(Copy(h.repository, h.path, h.start_line, h.end_line))
            copies.extend(h.also_in)
    return replace(
        rep, score=max(h.score for h in group),
        sources=tuple(s for s in _SOURCES if s in sources),
        matches=tuple(sorted(matches, key=lambda m: (m.line, m.ranges))),
        also_in=union_copies(copies, (), rep),
    )


def union_copies(a: Iterable[Copy], b: Iterable[Copy], hit: Hit, gap: int = 2
                 ) -> tuple[Copy, ...]:
    """The places of `a` and `b` in (repository, path, line) order, those of one file that
    overlap or lie within `gap` lines of each other joined into one range (the parts of
    one copied definition name one place), and any inside `hit`'s own lines dropped."""
    out: list[Copy] = []
    for c in sorted({*a, *b}, key=lambda c: (c.repository, c.path, c.start_line, c.end_line)):
        if (c.repository, c.path) == (hit.repository, hit.path) and (
                hit.start_line <= c.start_line and c.end_line <= hit.end_line):
            continue
        last = out[-1] if out else None
        if (last is not None and (last.repository, last.path) == (c.repository, c.path)
                and c.start_line <= last.end_line + 1 + gap):
            out[-1] = replace(last, end_line=max(last.end_line, c.end_line))
        else:
            out.append(c)
    return tuple(out)
