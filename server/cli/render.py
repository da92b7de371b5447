"""Rendering: records -> JSON objects, terminal text and progress bars.

The only module that prints (ruff T20 is allowed here alone): the CLI hands it
records from the service layer. JSON shapes are the documented `--json` contracts;
text is for people. Markdown for agents lives in `server/mcp/markdown.py` (search results)
and `server/mcp/markdown_status.py` (repositories, health, jobs).
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any, TextIO

from ctxd.indexer.errors import CtxdError
from ctxd.search.models import Hit, References, SymbolItem, SymbolPage, searched_note
from ctxd.server.cli.hits_text import (
    TextOptions,
    Where,
    file_lines,
    page_text,
    vimgrep_lines,
)
from ctxd.server.cli.styled import write_lines
from ctxd.server.index_report import (
    SHOWN,
    checkpoints_lines,
    masked_line,
    named_sample,
    not_embedded_line,
    sensitive_line,
    stopped_text,
)
from ctxd.server.pages import LexicalPage, SearchPage, file_hit

if TYPE_CHECKING:  # annotations only: the pipeline pulls in the chunker and tree-sitter
    from ctxd.indexer.models import IndexStats, Progress

_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def safe(text: str) -> str:
    """`text` with control characters (a newline or a CR in a file name, an escape
    sequence) shown as escapes (`\\n`, `\\x1b`), so one record stays on one line."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


_LONG_WORD = re.compile(r"\S{161,}")


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`1 repository`, `2 repositories`, `0 direct callers`: a count and its noun."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def shorten_words(text: str, keep: int = 160) -> str:
    """`text` with each run of over `keep` non-blank characters (a path thousands of
    characters long) cut to its start and end around `...`, so a report line stays one
    readable line (issue 39, item 12); `--json` keeps the whole text."""
    half = (keep - 3) // 2
    return _LONG_WORD.sub(lambda m: f"{m.group()[:half]}...{m.group()[-half:]}", text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _text_escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def dumps(obj: Any, *, indent: int | None = None,
          separators: tuple[str, str] | None = None) -> str:
    """JSON that is always valid UTF-8: a lone surrogate (an undecodable byte of a file
    name, as `os` returns it) is written as a `\\udcXX` escape, never as a raw byte."""
    text = json.dumps(obj, indent=indent, ensure_ascii=False, default=str,
                      separators=separators)
    try:
        text.encode("utf-8")  # far quicker than the search below, and fails on a surrogate
    except UnicodeEncodeError:
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def emit(text: str, *, err: bool = False) -> None:
    """Write a line to stdout (or stderr); an undecodable byte of a file name is shown as
    `\\xNN`."""
    print(_SURROGATE.sub(_text_escape, text), file=sys.stderr if err else sys.stdout)


def dumps_line(obj: Any) -> str:
    """`dumps` on one line without spaces (JSON Lines): by orjson where it takes the object
    as `dumps` would write it (str, int, float, bool, None, lists, tuples and dicts keyed
    by str: a search page), about 5x quicker on a page of ~100 KB; else by `dumps`. (An
    Enum that is not a str or int would be written as its value, a NaN as null: a search
    page holds neither.)"""
    try:
        import orjson  # imported here: only `--batch` writes JSON Lines
    except ImportError:  # an install without it: the same lines, slower
        return dumps(obj, separators=(",", ":"))
    # No `default`: what `json` would hand to `default=str` (a dataclass, a date, a
    # subclass of str or int) makes orjson raise, and `dumps` writes the object instead.
    strict = (orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
              | orjson.OPT_PASSTHROUGH_SUBCLASS)
    try:
        return orjson.dumps(obj, option=strict).decode()
    except TypeError:  # a lone surrogate, another type, a key that is not a str
        return dumps(obj, separators=(",", ":"))


def emit_line_json(obj: Any) -> None:
    """One compact JSON object on one line (JSON Lines), flushed."""
    print(dumps_line(obj), flush=True)


def emit_json(obj: Any) -> None:
    print(dumps(obj, indent=2))


# -- index ------------------------------------------------------------------------------


def index_stats_json(stats: IndexStats) -> dict[str, Any]:
    d = asdict(stats)
    d["files_failed"] = [{"file": f.file, "error": f.error} for f in stats.files_failed]
    if not stats.dry_run:
        d.pop("chunks_to_embed", None)
        d.pop("tokens_to_embed", None)
    return d


def patterns_text(include: Sequence[str], exclude: Sequence[str]) -> str:
    return f"include {' '.join(include) or '(all)'}  exclude {' '.join(exclude) or '(none)'}"


def options_text(options: dict[str, Any]) -> str:
    """A repository's walk options, one line of `ctxd status`."""
    size = options["max_file_size"] or "none"
    line = (f"    {patterns_text(options['include_patterns'], options['exclude_patterns'])}"
            f"  max-file-size {size}")
    if options["explicit"]:
        line += (f"  (given: {', '.join(options['explicit'])}; --reset-options returns to "
                 "the configuration's)")
    return safe(line)


def index_stats_text(stats: IndexStats) -> str:
    skipped = sum(stats.files_skipped.values())
    reasons = ", ".join(f"{k} {v}" for k, v in stats.files_skipped.items())
    head = "Dry run for" if stats.dry_run else "Stopped indexing" if stats.stopped else "Indexed"
    lines = [
        f"{head} {safe(stats.path)} as `{safe(stats.repository)}`: {stats.files_indexed} files "
        f"({stats.files_updated} new or changed, {stats.files_unchanged} unchanged, "
        f"{stats.files_removed} removed)",
    ]
    if stats.dry_run:
        lines.append(
            f"  would embed {stats.chunks_to_embed} checkpoints ({stats.tokens_to_embed} tokens)"
        )
        lines.extend(checkpoints_lines(stats.checkpoints_by_kind,
                                       [(safe(f.path), f.checkpoints) for f in stats.top_files]))
    else:
        lines.append(
            f"  {stats.checkpoints} checkpoints, {stats.chunks_embedded} embedded in this run"
        )
    if stats.over_budget:
        lines.append(f"  {stats.over_budget} checkpoints over the per-run budget of "
                     f"{stats.embed_budget} (embedding.run_budget): "
                     + ("a real run leaves them" if stats.dry_run else "left")
                     + " waiting, greppable, for the next runs; raise the budget or exclude "
                     "what need not be embedded (the largest files are listed by --dry-run)")
    lines.append(f"  skipped {skipped}" + (f" ({reasons})" if reasons else ""))
    if stats.skipped_files:
        lines.append("    " + named_sample(
            [f"{safe(s.path)} ({s.reason})" for s in stats.skipped_files], skipped)
            + ("; --json lists them" if skipped > SHOWN else ""))
    if stats.sensitive_files:
        lines.append("  " + sensitive_line(stats.files_skipped.get("sensitive", 0),
                                           [safe(p) for p in stats.sensitive_files]))
    if stats.masked_files:
        lines.append("  " + masked_line(stats.files_masked, [safe(p) for p in stats.masked_files]))
    if stats.not_embedded:
        lines.append("  " + not_embedded_line(stats.not_embedded,
                                              [safe(s.path) for s in stats.not_embedded_files]))
    lines.extend(f"  large: {safe(f.path)} yielded {f.checkpoints} checkpoints"
                 for f in stats.large_files)
    lines.extend(f"  line windows: {safe(f.path)}: {f.reason}" for f in stats.windowed_files)
    if stats.include_patterns or stats.exclude_patterns:
        lines.append(safe("  patterns: "
                          + patterns_text(stats.include_patterns, stats.exclude_patterns)))
    if stats.files_removed:
        why = ", ".join(f"{k} {v}" for k, v in stats.removed_reasons.items())
        lines.append(f"  removed {stats.files_removed} from the index ({why})")
    if stats.files_failed:
        lines.append(f"  failed {len(stats.files_failed)}:")
        lines.extend(f"    {safe(shorten_words(f.file))}: {safe(shorten_words(f.error))}"
                     for f in stats.files_failed[:20])
        if len(stats.files_failed) > 20:
            lines.append(f"    ... and {len(stats.files_failed) - 20} more (see --json)")
    lines.append(f"  in {stats.duration_ms / 1000:.1f}s")
    if stats.stopped:
        lines.append("  " + stopped_text(stats, f"`ctxd index {safe(stats.path)}`"))
    return "\n".join(lines)


def eta_text(left: int, rate: float) -> str:
    """`, ETA 1m05s` for `left` items at `rate` per second; empty before a rate is known
    or when nothing is left."""
    if left <= 0 or rate <= 0:
        return ""
    seconds = round(left / rate)
    return f", ETA {seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f", ETA {seconds}s"


class ProgressBar:
    """A one-line progress bar on a terminal's stderr; silent when not a terminal."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self._last = 0.0
        self._started = time.monotonic()

    def __call__(self, p: Progress) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if p.phase != "done" and now - self._last < 0.1 and p.done != p.total:
            return
        self._last = now
        if p.phase == "done":
            self.stream.write("\r\033[K")
        elif p.total:
            width = 30
            filled = int(width * p.done / p.total)
            rate = p.done / max(now - self._started, 1e-6)
            self.stream.write(
                f"\r\033[K{p.phase:6} [{'#' * filled}{'.' * (width - filled)}] "
                f"{p.done}/{p.total} ({rate:.0f}/s{eta_text(p.total - p.done, rate)})"
            )
        else:
            self.stream.write(f"\r\033[K{p.phase:6} {p.done} files  {safe(p.message[-50:])}")
        self.stream.flush()
        if p.phase == "embed" and p.total and p.done >= p.total:
            self._started = now


# -- search -----------------------------------------------------------------------------


def hit_json(hit: Hit) -> dict[str, Any]:
    return {
        "repository": hit.repository,
        "path": hit.path,
        "language": hit.language,
        "start_line": hit.start_line,
        "end_line": hit.end_line,
        "score": hit.score,
        "sources": [s.value for s in hit.sources],
        "symbol": hit.symbol,
        "snippet": hit.snippet,
        "also_in": [{"repository": c.repository, "path": c.path, "start_line": c.start_line,
                     "end_line": c.end_line} for c in hit.also_in],
        "matches": [
            {"line": m.line, "start_column": a, "end_column": b, "text": m.text}
            for m in hit.matches
            for (a, b) in (m.ranges or ((1, len(m.text) + 1),))
        ],
        **({"context": [{"start_line": b.start_line, "lines": list(b.lines)}
                        for b in hit.blocks]} if hit.blocks else {}),
    }


def search_page_json(page: SearchPage) -> dict[str, Any]:
    return {
        "query": page.query,
        "mode": page.mode,
        "results": [hit_json(h) for h in page.results],
        "stats": page.stats,
        "notes": page.notes,
        "next_cursor": page.next_cursor,
    }


def no_results_text(query: str) -> str:
    """`No results for `QUERY`.`: the query as typed (not as a Python literal, which
    doubles every backslash)."""
    return f"No results for `{safe(query)}`."


def search_page_text(page: SearchPage, where: Where, opts: TextOptions, *,
                     color: bool, output: str = "text") -> None:
    """Print a page for people: `output` is `text` (grouped, ripgrep style), `vimgrep`
    (`path:line:col:text`) or `files` (`-l`); `where` names a hit's file."""
    if output == "vimgrep":
        for line in vimgrep_lines(page.results, where):
            emit(safe(line))
    elif output == "files":
        for line in file_lines(page.results, where):
            emit(safe(line))
    else:
        write_lines(page_text(page.results, where, opts), color=color,
                    clean=lambda t: _SURROGATE.sub(_text_escape, safe(t)))
    if page.next_cursor:
        emit(f"more results: add --cursor {page.next_cursor}", err=True)


def notes_text(notes: list[str]) -> str:
    """The engines' notes (a bounded scan, a cut, partial coverage), for stderr."""
    return "\n".join(f"note: {n}" for n in notes)


# -- errors -----------------------------------------------------------------------------


CLI_NAMES = {
    "search_files": "ctxd files", "list_repos": "ctxd repos", "index_repository": "ctxd index",
    "index_status": "ctxd status", "get_file_content": "ctxd cat",
    "semantic_search": "ctxd search", "search_symbols": "ctxd symbols",
    "find_references": "ctxd refs", "include_patterns": "--include",
    "exclude_patterns": "--exclude",
}
"""The MCP tools and arguments that the service's hints name -> the CLI's commands and
flags, so that every hint the CLI prints names something the CLI has."""

_TOOL_NAME = re.compile(r"`(" + "|".join(CLI_NAMES) + r")`")


def cli_hint(hint: str) -> str:
    """`hint` with the MCP tool and argument names it quotes turned into CLI commands and
    flags (`search_files` -> `ctxd files`)."""
    return _TOOL_NAME.sub(lambda m: f"`{CLI_NAMES[m.group(1)]}`", hint)


def error_text(err: CtxdError) -> str:
    text = f"error: {err.code}: {err.message}"
    if err.hint:
        text += f"\nhint: {cli_hint(err.hint)}"
    return text


# -- symbols, references, files, repos --------------------------------------------------


def symbol_page_json(page: SymbolPage) -> dict[str, Any]:
    return {
        "query": page.query,
        "best_match": page.best_match,
        "exact": page.exact,
        "similar": page.total - page.exact,
        "items": [
            {"name": i.name, "kind": i.kind, "path": i.path, "line": i.line,
             "container": i.container, "repository": i.repository}
            for i in page.items
        ],
        "total": page.total,
        "start_index": page.start_index,
        "has_more": page.has_more,
        "pagination_id": page.pagination_id,
    }


def no_exact_match_text(query: str) -> str:
    """What `symbols` says before a list of fuzzy matches only."""
    return (f"No symbol name matches `{safe(query)}` exactly, by prefix or as a substring; "
            "closest fuzzy matches:")


def symbol_page_text(page: SymbolPage, where: Where, similar: bool = False) -> str:
    """The page's symbols, one a line; without `similar`, an exact hit's page shows the
    exact definitions and counts the similar names (prefix, substring, fuzzy)."""
    if not page.items:
        return f"No symbols match `{safe(page.query)}`."
    rows = [no_exact_match_text(page.query)] if page.best_match == "fuzzy" else []
    if (not similar and page.best_match == "exact" and page.start_index == 0
            and (page.exact < len(page.items) or not page.has_more)):  # all exact ones here
        rows += [symbol_line(i, where) for i in page.items[: page.exact]]
        others = page.total - page.exact
        rows.append(f"{page.exact} exact" + (
            f"; {others} similar names (prefix, substring or fuzzy matches): "
            f"`ctxd symbols {safe(page.query)} --similar` lists them" if others else ""))
        return "\n".join(rows)
    for i in page.items:
        rows.append(symbol_line(i, where))
    rows.append(f"{page.total} results" + (f"; next: --start {page.start_index + len(page.items)}"
                                           if page.has_more else ""))
    return "\n".join(rows)


def symbol_line(i: SymbolItem, where: Where) -> str:
    inside = f" (in {i.container})" if i.container else ""
    return f"{i.kind:<10} {i.name}{inside}  {safe(where(i.repository, i.path))}:{i.line}"


def references_json(r: References) -> dict[str, Any]:
    """`refs --by-name --json`: text matches, each usage labelled as one (`kind` text,
    `resolved` false), as MCP's `by_name` labels them."""
    def site(x: Any) -> dict[str, Any]:
        return {"repository": x.repository, "path": x.path, "line": x.line,
                "column": x.column, "context": x.context}

    return {
        "symbol": r.symbol,
        "definitions": [site(d) for d in r.definitions],
        "usages": [{**site(u), "kind": "text", "resolved": False} for u in r.usages],
        "stats": {"definitions": len(r.definitions), "usages": len(r.usages),
                  "duration_ms": r.duration_ms, "truncated": r.truncated,
                  "language": r.language, "languages": r.languages,
                  "code_only": r.code_only},
    }


def references_text(r: References, where: Where) -> str:
    out = [f"{len(r.definitions)} definitions, {len(r.usages)} usages of {r.symbol}"
           " (by name: text matches, not resolved)"]
    out += [f"def   {safe(where(d.repository, d.path))}:{d.line}:{d.column}  {safe(d.context)}"
            for d in r.definitions]
    out += [f"use   {safe(where(u.repository, u.path))}:{u.line}:{u.column}  {safe(u.context)}"
            for u in r.usages]
    if r.truncated:  # said in text too, as the resolved answer says it
        out += ["", f"(cut at {len(r.usages)} usages; raise --limit to see more)"]
    if skipped := searched_note(r):
        out += ["", f"({skipped}; --lang L searches one language)"]
    return "\n".join(out)


def lexical_page_json(page: LexicalPage) -> dict[str, Any]:
    res = page.result
    return {
        "query": page.query,
        "results": [hit_json(file_hit(fm)) for fm in res.files],
        "stats": {"match_count": res.match_count, "file_count": res.file_count,
                  "duration_ms": round(res.duration_ms, 1), "partial": res.partial,
                  "offset": page.offset},
        "notes": list(res.notes),
        "next_cursor": page.next_cursor,
    }


def files_text(page: LexicalPage, where: Where) -> str:
    if not page.result.files:
        return f"No files match `{safe(page.query)}`."
    out = [safe(where(fm.repository, fm.path)) for fm in page.result.files]
    if page.next_cursor:
        out.append(f"more: --cursor {page.next_cursor}")
    return "\n".join(out)


def repos_text(listing: dict[str, Any]) -> str:
    if not listing["repositories"]:
        return "No repositories are currently indexed."
    out = []
    for r in listing["repositories"]:
        branches = safe(", ".join(f"{b['name']}@{b['sha'][:7]}" if b["sha"] else b["name"]
                                  for b in r["branches"]))
        where = safe(r.get("root") or r["source"])
        out.append(f"{safe(r['name']):<24} {r['files']:>7} files  "
                   f"{safe(r['indexed_at'] or 'never')}  "
                   f"{branches + '  ' if branches else ''}{where}")
        if moved := r.get("root_moved"):
            out.append(f"  ROOT MOVED: {safe(moved)}; not read, watched or re-indexed")
    out.append(f"Total: {counted(listing['total'], 'repository', 'repositories')}, "
               f"{counted(listing['total_files'], 'file')}")
    return "\n".join(out)
