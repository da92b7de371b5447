"""The file view: a file of an indexed repository, numbered and coloured, with its outline,
its branch and indexed state, and (when asked for a symbol) that symbol's definitions,
references, callers and callees.

The file is read only through the `file_content` use case: the same verified open as
`ctxd cat` and the MCP tool (inside the repository's root, no likely secret, the same size
caps); a refusal is shown as its message, never as file text. The colouring of a file is
cached by its text's hash, so a second view of an unchanged file skips the lexer.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from ctxd.search.models import FileContent, Reference
from ctxd.server.ui.highlight import iter_highlighted
from ctxd.server.ui.html import CHUNK_LINES, chunk_lines, e, file_url
from ctxd.server.ui.outline import OutlineItem, outline

CACHE_FILES = 32
CACHE_CHARS = 32_000_000
"""The colouring cache holds at most this many characters of HTML (~64 MB), whatever the
number of files (a 5,000-line file is ~0.7 M)."""


class Colouring:
    """A small cache of coloured files, least recently viewed out first: text hash ->
    (lines, outline)."""

    def __init__(self, size: int = CACHE_FILES, chars: int = CACHE_CHARS) -> None:
        self.size = size
        self.chars = chars
        self._items: OrderedDict[str, tuple[list[str], list[OutlineItem]]] = OrderedDict()
        self._sizes: dict[str, int] = {}
        self._jobs: dict[str, ColourJob] = {}
        self._lock = threading.Lock()

    @staticmethod
    def key(fc: FileContent) -> str:
        return hashlib.blake2b(f"{fc.language}\0{fc.path}\0{fc.content}".encode(
            "utf-8", "surrogatepass"), digest_size=16).hexdigest()

    def cached(self, fc: FileContent) -> tuple[list[str], list[OutlineItem]] | None:
        return self.by_key(self.key(fc))

    def by_key(self, key: str) -> tuple[list[str], list[OutlineItem]] | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
            return hit

    def keep(self, fc: FileContent, lines: list[str], items: list[OutlineItem]) -> None:
        size = sum(map(len, lines))
        if size > self.chars:
            return
        key = self.key(fc)
        with self._lock:
            self._items[key] = (lines, items)
            self._sizes[key] = size
            while len(self._items) > self.size or sum(self._sizes.values()) > self.chars:
                old, _ = self._items.popitem(last=False)
                del self._sizes[old]

    def stream(self, fc: FileContent, lines: list[str]) -> Iterator[str]:
        """The file's coloured lines as the lexer makes them, each also added to `lines`
        (`keep` them with the outline once all are made)."""
        for line in iter_highlighted(fc.content, fc.language, fc.path):
            lines.append(line)
            yield line

    def start(self, fc: FileContent) -> ColourJob:
        """A long file's colouring, to finish after its page went out plain (`ColourJob`);
        the page's script asks for the rest by the job's key (`job`)."""
        job = ColourJob(self, fc)
        with self._lock:
            self._jobs[job.key] = job
            while len(self._jobs) > MAX_JOBS:
                self._jobs.pop(next(iter(self._jobs)))
        return job

    def job(self, key: str) -> ColourJob | None:
        with self._lock:
            return self._jobs.get(key)

    def forget(self, job: ColourJob) -> None:
        with self._lock:
            if self._jobs.get(job.key) is job:
                del self._jobs[job.key]


MAX_JOBS = 8
"""Colourings in progress or waiting for their page's script to ask (the oldest go)."""

INLINE_LINES = 2 * CHUNK_LINES
"""A first view of a file up to this many lines is coloured as it streams; a longer one
goes out with its first block coloured and the rest plain, the rest's colouring following
(`ColourJob`): the page is there at once (lexing 5,000 lines of Python takes Pygments
~0.4 s), coloured a block at a time after."""


class ColourJob:
    """A long file's colouring on its first view: the page's request colours the first
    block itself (`head`), sends the rest plain and hands the lexer, mid-file, to a thread
    (`finish`) that parses the outline (`outline_part`; a 5,000-line file's parse is
    ~30 ms the page need not wait for) and colours the rest; the page's script asks for
    them (`/api/colour`) and puts each in place as it comes. Once done, the file and its
    outline go to the `Colouring` cache, so a later view is whole at once."""

    def __init__(self, owner: Colouring, fc: FileContent) -> None:
        self.owner = owner
        self.fc = fc
        self.key = Colouring.key(fc)
        self.lines: list[str] = []
        self.outline: list[OutlineItem] | None = None
        self.done = False
        self._lexer = iter_highlighted(fc.content, fc.language, fc.path)
        self._changed = threading.Condition()

    def head(self, count: int = CHUNK_LINES) -> list[str]:
        """The first `count` lines, coloured now (before `finish`)."""
        for line in self._lexer:
            self.lines.append(line)
            if len(self.lines) == count:
                break
        return list(self.lines)

    def finish(self) -> None:
        """Parse the outline and colour the rest in a thread of its own, then keep the file
        in the cache."""
        threading.Thread(target=self._run, name="ctxd-ui-colour", daemon=True).start()

    def _run(self) -> None:
        try:
            items = outline(self.fc.language, self.fc.content)
            with self._changed:
                self.outline = items
                self._changed.notify_all()
            for line in self._lexer:
                with self._changed:
                    self.lines.append(line)
                    if len(self.lines) % CHUNK_LINES == 0:
                        self._changed.notify_all()
            self.owner.keep(self.fc, self.lines, items)
        finally:
            with self._changed:
                self.done = True
                self._changed.notify_all()
            self.owner.forget(self)

    def outline_part(self, timeout: float = 30.0) -> str | None:
        """The outline's HTML once parsed (None when it takes longer than `timeout`)."""
        with self._changed:
            if not self._changed.wait_for(lambda: self.done or self.outline is not None,
                                          timeout):
                return None
            items = self.outline
        return outline_html(items or [])

    def block(self, index: int, timeout: float = 30.0) -> str | None:
        """Block `index`'s numbered, coloured lines once they are made (None past the end,
        or when the colouring takes longer than `timeout`)."""
        start, end = index * CHUNK_LINES, (index + 1) * CHUNK_LINES
        with self._changed:
            if not self._changed.wait_for(lambda: self.done or len(self.lines) >= end,
                                          timeout):
                return None
            part = self.lines[start:end]
        return chunk_lines(part, start + 1) if part else None


def crumbs(repo: str, path: str) -> str:
    parts = path.split("/")
    out = [f'<a href="/repos#repo-{e(repo)}">{e(repo)}</a>']
    out.extend(f"<span>{e(p)}</span>" for p in parts)
    return '<nav class="crumbs" aria-label="File">' + " / ".join(out) + "</nav>"


def state_line(fc: FileContent, repo_row: dict[str, Any] | None,
               modified: float | None) -> str:
    """Branch, where the text came from, when the repository was indexed, and a note when
    the file changed on disk since (`FileContent.index_state`: its text against the
    index's copy; `modified` is its time on disk, shown in the note)."""
    bits = [f'branch <span class="branch">{e(fc.branch)}</span>',
            "working tree" if fc.working_tree else "indexed text",
            f"{fc.total_lines} lines", e(fc.language)]
    if repo_row is not None:
        bits.append(f"indexed {e(repo_row.get('indexed_at') or 'never')}")
        if repo_row.get("indexing"):
            bits.append("re-indexing now")
    note = ""
    if fc.index_state == "changed":
        when = ("" if modified is None else " (modified " + datetime.fromtimestamp(
            modified, UTC).strftime("%Y-%m-%d %H:%M:%S UTC") + ")")
        note = (f'<p class="note changed" role="note">Changed on disk{when} since it was '
                "indexed: this is the text on disk; search results may point at old lines "
                "until the watcher or a re-index catches up.</p>")
    elif fc.index_state == "not indexed":
        note = ('<p class="note changed" role="note">Not in the index yet: search does not '
                "find this file until the watcher or a re-index adds it.</p>")
    return f'<p class="state">{" · ".join(bits)}</p>{note}'


def outline_html(items: list[OutlineItem]) -> str:
    if not items:
        return '<p class="muted">No outline for this file.</p>'
    rows = "".join(
        f'<li class="d{min(i.depth, 4)}"><a href="#L{i.line}-L{i.end_line}">'
        f'<span class="kind">{e(i.kind)}</span> {e(i.name)}</a></li>' for i in items)
    return f'<ol class="outline-list">{rows}</ol>'


CODE = "\0code\0"
"""Where the file view's lines go in `file_page_body` (they may come streamed)."""


OUTLINE_WAIT = ('<p class="muted outline-wait" aria-busy="true">The outline is on its '
                "way…</p>")
"""The outline's place on a long file's first view, until the page's script puts the
outline there (`ColourJob.outline_part`)."""


OUTLINE = "\0outline\0"
"""Where the outline goes: after the lines in the page (the stylesheet puts it beside
them), so a streamed view paints its first lines before the outline's parse."""


def file_page_body(fc: FileContent, state: str, symbol_panel: str,
                   colour: ColourJob | None = None) -> str:
    """The file view around its lines and outline, which stand in as `CODE` and
    `OUTLINE`; with `colour`, the lines after the first block come plain and the page's
    script asks for their colouring (`/api/colour/KEY?from=1`)."""
    follow = (f' data-colour="{e(colour.key)}" data-from="1"' if colour is not None else "")
    return (
        f"{crumbs(fc.repository, fc.path)}{state}"
        f'<div class="fileview{" with-symbol" if symbol_panel else ""}">{symbol_panel}'
        f'<div class="source" data-repo="{e(fc.repository)}" data-path="{e(fc.path)}" '
        f'data-lang="{e(fc.language)}" tabindex="0" aria-label="Source of {e(fc.path)}">'
        f'<div class="code file"{follow}>{CODE}</div></div>'
        f'<nav class="outline" aria-label="Outline"><h2>Outline</h2>{OUTLINE}</nav></div>')


def ref_list(title: str, refs: list[Reference], *, limit: int = 50) -> str:
    if not refs:
        return f"<h3>{e(title)}</h3><p class=\"muted\">None found.</p>"
    rows = "".join(
        f'<li><a href="{e(file_url(r.repository, r.path, r.line))}">{e(r.repository)}/'
        f'{e(r.path)}:{r.line}</a> <code>{e(r.context.strip()[:160])}</code></li>'
        for r in refs[:limit])
    more = f"<p class=\"muted\">and {len(refs) - limit} more</p>" if len(refs) > limit else ""
    return f"<h3>{e(title)} ({len(refs)})</h3><ul class=\"refs\">{rows}</ul>{more}"
