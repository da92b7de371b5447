"""The `ctxd` command line: thin adapters over the use cases, rendered by `server/cli/render.py`.

Every command: parse flags -> build `Settings` -> call one `UseCases` method -> render.
The use cases run in the `ctxd daemon` of the index home when one runs (a semantic or
hybrid search starts it, unless `--no-daemon` or `daemon.autostart = false`), else in this
process (`Service`); both return the same records, so the output is the same either way.

Start-up stays light: `serve` (MCP) and `watch` (watchdog) are imported only when run
(`server.cli.group.LAZY_COMMANDS`), and nothing here imports torch or
sentence-transformers (the model loads on first use, in the daemon or in-process).
Errors are turned into `error: <code>: <message>` plus a hint on stderr (or the
contract's JSON error object with `--json`) in one place, `CtxdGroup.invoke`
(`server.cli.group`, with what every command shares: `service_for`, `scope_for`,
`json_option`).
Exit codes: 0 ok, 1 nothing matched, 2 errors, 3 an index run stopped before the end
(143: stopped by SIGTERM), 130 interrupted (Ctrl-C).

Here: the group (`main`, its global options) and the light commands (a few lines each,
plus their click options), which `ctxd --help` and every command import anyway; `search`
is `search_cmd`, the graph commands `graph_cmd`, the heavy ones live apart
(`daemon_cmd`, `watch_cmd`, `mcp.serve`).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from pathlib import Path

import click

from ctxd.indexer.errors import ValidationError
from ctxd.server.cli import graph_render, render
from ctxd.server.cli.daemon_cmd import daemon, daemon_summary, summary_text
from ctxd.server.cli.graph_cmd import graph_commands
from ctxd.server.cli.group import CtxdGroup, json_option, scope_for, service_for
from ctxd.server.cli.scope import all_repos_option
from ctxd.server.cli.search_cmd import search
from ctxd.server.cli.stop_signals import stop_on_signals
from ctxd.server.daemon.client import DaemonClient

STOPPED_EXIT = 3
"""`ctxd index` when the run was stopped before the end (its daemon was stopped): the
index is consistent, and running the command again finishes it."""

TERMINATED_EXIT = 128 + signal.SIGTERM
"""`ctxd index` (in this process) that got SIGTERM: stopped before the end as with
`STOPPED_EXIT`, or (a signal after its last stop point) finished; the status a shell gives
a process that SIGTERM ended (143) either way, as a signal's sender expects."""

COMPACT_HINT_BYTES = 1 << 20
"""`remove` suggests `ctxd compact` once at least this much of the index is free space."""


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


@click.group(cls=CtxdGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--home", type=click.Path(file_okay=False), help="Index folder (CTXD_HOME).")
@click.option("--config", "config", type=click.Path(dir_okay=False),
              help="Config file (CTXD_CONFIG).")
@click.option("--model", help="Embedding model name or folder (CTXD_MODEL).")
@click.option("--store", "store", metavar="URL",
              help="A PostgreSQL store a team shares, e.g. postgresql://ctxd@db/ctxd "
              "(CTXD_STORE_URL; default: the SQLite file in the home).")
@click.option("--no-daemon", is_flag=True, envvar="CTXD_NO_DAEMON",
              help="Work in this process; do not use or start the ctxd daemon (CTXD_NO_DAEMON).")
@click.version_option(package_name="ctxd", prog_name="ctxd")
@click.pass_context
def main(ctx: click.Context, home: str | None, config: str | None, model: str | None,
         store: str | None, no_daemon: bool) -> None:
    """ctxd: index local repositories and search them by meaning and by text.

    \b
    Quickstart:
      ctxd index ~/src/myrepo
      ctxd search "where are retries with backoff configured"
      ctxd serve            # MCP server for coding agents (stdio)
      ctxd --store postgresql://ctxd@db/ctxd index .   # into a team's store
    """
    logging.basicConfig(
        level=cli_log_level(os.environ.get("LOG_LEVEL")), stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s")
    home, config = pin_paths(home, config)
    flags = {k: v for k, v in {"home": home, "embedding.model": model,
                               "store.url": store}.items() if v}
    ctx.obj = {"flags": flags, "config": Path(config) if config else None,
               "no_daemon": no_daemon}


def cli_log_level(name: str | None) -> int:
    """The CLI's log level: `LOG_LEVEL` when it names one (`LOG_LEVEL=debug` shows the
    traceback of an internal error), else warnings only."""
    level = logging.getLevelName((name or "").strip().upper())
    return level if isinstance(level, int) else logging.WARNING


def pin_paths(home: str | None, config: str | None) -> tuple[str | None, str | None]:
    """Make the index home and the config file absolute, once, before anything uses them:
    `--home`/`--config` and `CTXD_HOME`/`CTXD_CONFIG` (rewritten in this process's
    environment, which the daemon and other children inherit). A relative path is taken
    from the current folder; the daemon runs in `/`, so without this it would serve
    another folder than the one the command names."""
    for name in ("CTXD_HOME", "CTXD_CONFIG"):
        value = os.environ.get(name)
        if value:
            os.environ[name] = os.path.abspath(os.path.expanduser(value))

    def absolute(path: str | None) -> str | None:
        return os.path.abspath(os.path.expanduser(path)) if path else path

    return absolute(home), absolute(config)


@main.command()
@click.argument("path", type=click.Path())
@click.option("--include", "include", multiple=True, metavar="GLOB",
              help="Only index files matching GLOB (repeatable; basename or path, ** allowed).")
@click.option("--exclude", "exclude", multiple=True, metavar="GLOB",
              help="Never index files matching GLOB (repeatable; wins over --include).")
@click.option("--max-file-size", type=int, metavar="BYTES",
              help="Skip larger files (default 1048576, max 10485760, 0 = no limit).")
@click.option("--reset-options", is_flag=True, help="Forget the --include/--exclude/"
              "--max-file-size of earlier runs: back to the configuration's.")
@click.option("--dry-run", is_flag=True, help="Walk and chunk only: report what would be indexed.")
@click.option("--force", is_flag=True, help="Index even / or a home directory (refused "
              "otherwise: that would index the whole machine), or confirm a repository's "
              "folder replaced under a parent other users can write.")
@json_option
@click.pass_context
def index(
    ctx: click.Context,
    path: str,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    max_file_size: int | None,
    reset_options: bool,
    dry_run: bool,
    force: bool,
    as_json: bool,
) -> None:
    """Index (or refresh) the repository at PATH.

    Incremental: unchanged files are skipped by size and modification time.
    --include, --exclude and --max-file-size stick to the repository: a later
    `ctxd index PATH` (and the watcher) uses them again; give them again to change
    them, or --reset-options to go back to the configuration's (`ctxd status` shows
    them).

    \b
    Example:
      ctxd index . --include '*.py' --exclude 'tests/**'
    """
    service = service_for(ctx)
    # In this process SIGTERM (`kill`, a service manager, a CI timeout) asks the run to
    # stop at its next consistent point (between files, between embedding commits), which
    # then says what it kept; a second SIGTERM ends it at once. A daemon's run is the
    # daemon's: this client just goes, as before.
    stop = threading.Event()
    terms = () if isinstance(service, DaemonClient) else (signal.SIGTERM,)
    with stop_on_signals(stop, terms, second_ends=True) as received:
        stats = service.index(
            path,
            include_patterns=list(include) if include else None,
            exclude_patterns=list(exclude) if exclude else None,
            max_file_size=max_file_size,
            reset_options=reset_options,
            dry_run=dry_run,
            force=force,
            progress=render.ProgressBar(),
            lock_wait=None,
            on_lock_wait=lambda who: render.emit(
                f"waiting for another ctxd process ({'pid ' + who if who.isdigit() else who}) "
                "that is writing the index...", err=True
            ),
            should_stop=stop.is_set,
        )
        if as_json:  # inside: a SIGTERM now does not cut the report short
            render.emit_json(render.index_stats_json(stats))
        else:
            render.emit(render.index_stats_text(stats))
    if received:  # SIGTERM: non-zero even when it came after the last stop point
        if not stats.stopped:
            render.emit("SIGTERM came after the run's last step: nothing is missing.",
                        err=True)
        sys.exit(TERMINATED_EXIT)
    if stats.stopped:  # the daemon doing the work was stopped: not a finished run
        sys.exit(STOPPED_EXIT)


@main.command()
@json_option
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Show where the index lives, its model, and each repository's state.

    \b
    Example:
      ctxd status --json
    """
    service = service_for(ctx)
    info = service.status()
    info["daemon"] = daemon_summary(service.settings)
    if as_json:
        render.emit_json(info)
        return
    render.emit(summary_text(info["daemon"]))
    render.emit(f"index:  {info['database']} ({info['size_bytes'] / 1e6:.1f} MB)")
    render.emit(f"model:  {info['model']}" + (f" ({info['dimension']} dims)"
                                              if info["dimension"] else ""))
    if enc := info.get("query_encoder"):
        why = enc.get("reason") or enc.get("path")
        render.emit(f"query encoder: {enc['kind']}" + (f" ({render.safe(why)})" if why else ""))
    t = info["totals"]
    render.emit(f"totals: {render.counted(t['repositories'], 'repository', 'repositories')}, "
                f"{render.counted(t['files'], 'file')}, "
                f"{render.counted(t['checkpoints'], 'checkpoint')}, "
                f"{render.counted(t['symbols'], 'symbol')}")
    if mem := info.get("memory"):
        v = mem["vectors"]
        held = [f"vectors {v['form']} {v['rows']} rows {v['bytes'] / 2**20:.1f} MB"] + [
            f"{name.replace('_', ' ')} {m['state']}"
            + (f" {m['bytes'] / 2**20:.1f} MB" if m["bytes"] else "")
            for name, m in mem.items() if name != "vectors"]
        render.emit("memory: " + ", ".join(held))
    for r in info["repositories"]:
        state = "indexing" if r["indexing"] else f"indexed {r['indexed_at']}"
        render.emit(f"  {render.safe(r['name']):<20} {r['files']:>6} files "
                    f"{r['checkpoints']:>7} checkpoints embedded {r['coverage'] * 100:5.1f}%  "
                    f"{render.safe(state)}  {render.safe(r['root'])}")
        render.emit(render.options_text(r["options"]))
        if (kept := r.get("skipped")) and kept["counts"]:  # as its last whole run counted
            counts = sorted(kept["counts"].items(), key=lambda kv: (-kv[1], kv[0]))
            render.emit("    skipped: " + ", ".join(f"{render.safe(k)} {n}" for k, n in counts)
                        + f" (at the run of {render.safe(str(kept['at']))})")
        if moved := r.get("root_moved"):
            render.emit(f"    ROOT MOVED: {moved}; not read, watched or re-indexed")
        ws = r.get("watch")
        if ws:
            lag = "-" if ws["lag_ms"] is None else f"{ws['lag_ms']} ms"
            rescan = f", rescan ({ws['rescan']})" if ws.get("rescan") else ""
            render.emit(f"    {'watching ' + ws['mode'] if ws['watching'] else 'not watching'}, "
                        f"pending {ws['pending']}{rescan}, "
                        f"updated {ws['last_update'] or 'never'}, lag {lag}")


@main.command()
@click.option("--filter", "filter_", metavar="RE", help="Only names matching this regex.")
@json_option
@click.pass_context
def repos(ctx: click.Context, filter_: str | None, as_json: bool) -> None:
    """List indexed repositories (local, plus Zoekt's when ZOEKT_URL is set).

    \b
    Example:
      ctxd repos --filter '^req' --json
    """
    listing = service_for(ctx).list_repos(filter_)
    if as_json:
        render.emit_json(listing)
        return
    render.emit(render.repos_text(listing))


@main.command()
@click.argument("repo")
@json_option
@click.pass_context
def remove(ctx: click.Context, repo: str, as_json: bool) -> None:
    """Remove repository REPO (a name from `ctxd repos`, or its folder) from the index.

    \b
    Example:
      ctxd remove myrepo
    """
    result = service_for(ctx).remove(repo)
    if as_json:
        render.emit_json(result)
    else:
        render.emit(f"Removed {result['removed']} ({result['files']} files, "
                    f"{result['checkpoints']} checkpoints).")
        if result["reclaimable_bytes"] >= COMPACT_HINT_BYTES:
            render.emit(f"{_mb(result['reclaimable_bytes'])} of the index "
                        f"({_mb(result['size_bytes'])}) is free space now: "
                        "`ctxd compact` gives it back to the disk.")


@main.command()
@json_option
@click.pass_context
def compact(ctx: click.Context, as_json: bool) -> None:
    """Give the index's free space back to the disk (after `remove`, or large re-indexes).

    Rewrites the database without its free pages; waits for a running index job first.

    \b
    Example:
      ctxd remove old-repo && ctxd compact
    """
    result = service_for(ctx).compact()
    if as_json:
        render.emit_json(result)
    else:
        render.emit(f"Compacted {result['database']}: {_mb(result['before_bytes'])} -> "
                    f"{_mb(result['after_bytes'])} ({_mb(result['freed_bytes'])} given back).")


@main.command()
@click.argument("query")
@click.option("--kind", "kinds", multiple=True, metavar="K",
              help="Only these kinds (class, function, method, ...; repeatable).")
@click.option("--repo", "repos", multiple=True, metavar="NAME", help="Only this repository.")
@all_repos_option
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True)
@click.option("--start", "start_index", type=click.IntRange(0), default=0, show_default=True,
              help="Skip this many results (paging).")
@click.option("--similar", is_flag=True,
              help="After exact matches, list the similar names too (prefix, substring, fuzzy).")
@json_option
@click.pass_context
def symbols(ctx: click.Context, query: str, kinds: tuple[str, ...], repos: tuple[str, ...],
            all_repos: bool, limit: int, start_index: int, similar: bool, as_json: bool) -> None:
    """Find definitions by name: exact, prefix, substring, then fuzzy (camelCase/snake_case).

    When a name matches exactly, only the exact definitions are listed, with a count of
    the similar names (`--similar` lists them; JSON lists every item, with `exact` and
    `similar` counts).

    When no name matches exactly, by prefix or as a substring, it says so before the
    fuzzy matches (JSON: `best_match` is `fuzzy`) and exits 1.

    \b
    Example:
      ctxd symbols calc --kind function --kind method
    """
    service = service_for(ctx)
    scope = scope_for(service, repos, all_repos)
    page = service.symbols(query, kinds=list(kinds) or None, max_items=limit,
                           start_index=start_index, repositories=scope.repositories)
    if as_json:
        render.emit_json(render.symbol_page_json(page))
    else:
        render.emit(render.symbol_page_text(page, scope.names, similar=similar))
    if not page.items or page.best_match == "fuzzy":
        sys.exit(1)


@main.command()
@click.argument("symbol")
@click.option("--by-name", is_flag=True,
              help="Every word-boundary text match of the name instead (what resolution "
              "cannot see: dynamic calls, other languages).")
@click.option("--lang", metavar="L", help="With --by-name: language of usages (default: "
              "the definition's).")
@click.option("--repo", "repos", multiple=True, metavar="NAME", help="Only this repository.")
@all_repos_option
@click.option("--limit", type=click.IntRange(1, 2000), default=200, show_default=True)
@json_option
@click.pass_context
def refs(ctx: click.Context, symbol: str, by_name: bool, lang: str | None,
         repos: tuple[str, ...], all_repos: bool, limit: int, as_json: bool) -> None:
    """Show the references of one definition, resolved: calls, imports, subclasses,
    other uses and overrides, grouped by file, each in its enclosing definition.

    SYMBOL is a NAME, a qualified name (Session.fetch, pkg.Session.fetch) or PATH:LINE
    of its definition; a name several definitions bear lists them and asks which.

    \b
    Examples:
      ctxd refs Retry.increment
      ctxd refs src/app.py:42 --json
      ctxd refs increment --by-name
    """
    if lang is not None and not by_name:  # resolved references: the definition's language
        raise ValidationError(f"--lang {lang} goes with --by-name only",
                              hint="Resolved references are in the definition's language; "
                                   "add --by-name for text matches in one language.",
                              details={"field": "lang", "value": lang})
    service = service_for(ctx)
    scope = scope_for(service, repos, all_repos)
    symbol, repositories = scope.place(symbol)
    if not by_name:
        graph = service.graph_refs(symbol, repositories=repositories, limit=limit)
        if as_json:
            render.emit_json(graph_render.refs_json(graph))
        else:
            render.emit(graph_render.refs_text(graph, scope.names))
        return
    result = service.references(symbol, language=lang, repositories=repositories,
                                limit=limit)
    if as_json:
        render.emit_json(render.references_json(result))
    else:
        render.emit(render.references_text(result, scope.names))
    if not result.definitions and not result.usages:
        sys.exit(1)


@main.command()
@click.argument("pattern")
@click.option("--repo", "repos", multiple=True, metavar="NAME", help="Only this repository.")
@all_repos_option
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True)
@click.option("--cursor", help="Continue from a previous page's next_cursor.")
@json_option
@click.pass_context
def files(ctx: click.Context, pattern: str, repos: tuple[str, ...], all_repos: bool,
          limit: int, cursor: str | None, as_json: bool) -> None:
    """Find files by path: a glob (`**/*.py`) or a regular expression (`_test\\.go$`).

    \b
    Example:
      ctxd files '**/retry*.py'
    """
    service = service_for(ctx)
    scope = scope_for(service, repos, all_repos)
    page = service.files(pattern, limit=limit, cursor=cursor, repositories=scope.repositories)
    if as_json:
        render.emit_json(render.lexical_page_json(page))
    else:
        render.emit(render.files_text(page, scope.names))
    if not page.result.files:
        sys.exit(1)


@main.command()
@click.argument("repo")
@click.argument("path")
@click.option("--lines", metavar="RANGE", help="Only these lines (1-based, inclusive): A:B, "
              "A: (A to the end), :B (the start to B) or N (line N alone).")
@json_option
@click.pass_context
def cat(ctx: click.Context, repo: str, path: str, lines: str | None, as_json: bool) -> None:
    """Print a file of an indexed repository (read from disk, inside the repository root).

    A range that starts past the end of the file is an error that names its length.

    \b
    Example:
      ctxd cat myrepo src/app.py --lines 10:40
    """
    start, end = parse_lines(lines) if lines else (None, None)
    fc = service_for(ctx).file_content(repo, path, start_line=start, end_line=end)
    if as_json:
        render.emit_json({"repository": fc.repository, "path": fc.path, "language": fc.language,
                          "start_line": fc.start_line, "end_line": fc.end_line,
                          "total_lines": fc.total_lines, "truncated": fc.truncated,
                          "index_state": fc.index_state, "content": fc.content})
    else:  # print() ends the line: the file's own final newline is not doubled
        render.emit(fc.content.removesuffix("\n"))
        where = render.safe(f"{fc.repository}/{fc.path}")
        if fc.index_state == "changed":
            render.emit(f"note: {where} changed on disk since it was indexed: these are the "
                        "lines on disk; search results may point at old lines until the "
                        "watcher or `ctxd index` catches up", err=True)
        elif fc.index_state == "not indexed":
            render.emit(f"note: {where} is not in the index yet: search does not find it "
                        "until the watcher or `ctxd index` adds it", err=True)


def parse_lines(lines: str) -> tuple[int | None, int | None]:
    """`--lines`: `A:B`, `A:`, `:B` or `N` (line N alone) -> (start, end); line numbers
    start at 1, as `file_content`'s `start_line` does.

    Raises:
        ValidationError: anything else (0 and negative numbers too).
    """
    a, colon, b = lines.partition(":")
    try:
        start, end = (int(a) if a else None), (int(b) if b else None)
    except ValueError:
        start = end = None
        colon = ""
    if (not colon and start is None) or any(n is not None and n < 1 for n in (start, end)):
        raise ValidationError(
            f"--lines must look like A:B, A:, :B or N with line numbers from 1, got {lines!r}",
            hint="Use 1-based inclusive line numbers, e.g. --lines 10:40 (or --lines 10 for "
            "line 10 alone).",
            details={"field": "lines", "value": lines},
        )
    return (start, end if colon else start)


main.add_command(daemon)
main.add_command(search)
for _command in graph_commands(service_for, scope_for, json_option):
    main.add_command(_command)

if __name__ == "__main__":
    main()
