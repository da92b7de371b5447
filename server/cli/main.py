"""The `ctxd` command line: thin adapters over the use cases, rendered by `server/cli/render.py`.

Every command: parse flags -> build `Settings` -> call one `UseCases` method -> render.
The use cases run in the `ctxd daemon` of the index home when one runs (a semantic or
hybrid search starts it, unless `--no-daemon` or `daemon.autostart = false`), else in this
process (`Service`); both return the same records, so the output is the same either way.

Start-up stays light: `serve` (MCP) and `watch` (watchdog) are imported only when run
(`LazyGroup`), and nothing here imports torch or sentence-transformers (the model loads
on first use, in the daemon or in-process).
Errors are turned into `error: <code>: <message>` plus a hint on stderr (or the
contract's JSON error object with `--json`) in one place, `CtxdGroup.invoke`.
Exit codes: 0 ok, 1 nothing matched, 2 errors, 3 an index run stopped before the end
(143: stopped by SIGTERM), 130 interrupted (Ctrl-C).

Why one module of ~750 lines: it holds every light command (a few lines each, plus their
click options), which `ctxd --help` and every command import anyway; the heavy ones live
apart (`daemon_cmd`, `watch_cmd`, `mcp.serve`).
"""

from __future__ import annotations

import gc
import importlib
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO, TypeVar

import click

from ctxd.indexer.errors import CtxdError, ValidationError
from ctxd.server.cli import graph_render, render
from ctxd.server.cli.daemon_cmd import daemon, daemon_summary, summary_text
from ctxd.server.cli.explain_hits import explained
from ctxd.server.cli.graph_cmd import graph_commands
from ctxd.server.cli.hits_text import TextOptions
from ctxd.server.cli.scope import Scope, all_repos_option, command_scope
from ctxd.server.cli.stop_signals import stop_on_signals
from ctxd.server.cli.styled import COLOR_CHOICES, use_color
from ctxd.server.config import settings_from_cli
from ctxd.server.daemon import lifecycle
from ctxd.server.daemon.client import DaemonClient
from ctxd.server.first_search import loading_text, remember
from ctxd.server.pages import MODES
from ctxd.server.text_args import check_text
from ctxd.server.use_cases import UseCases

F = TypeVar("F", bound=Callable[..., Any])
log = logging.getLogger("ctxd")

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


LAZY_COMMANDS = {
    "serve": ("ctxd.server.mcp.serve", "serve",
              "Run the MCP server for coding agents (stdio by default, or streamable HTTP)."),
    "watch": ("ctxd.server.cli.watch_cmd", "watch",
              "Keep indexed repositories fresh by watching their files."),
    "ui": ("ctxd.server.cli.ui_cmd", "ui",
           "Search, read and navigate the index in a browser (a local page)."),
}
"""Commands imported when run, not at start-up: `serve` pulls in the MCP SDK (~0.6 s of
imports) and `watch` watchdog; (module, attribute, short help for `ctxd --help`)."""


@click.command("serve", add_help_option=False, help=LAZY_COMMANDS["serve"][2],
               context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.pass_context
def serve_starting_the_daemon(ctx: click.Context) -> Any:
    """`ctxd serve` before its module loads: starts the daemon (where `serve` will use
    one) in a thread, then imports the MCP server (the SDK: 0.6 s quiet, 1-3 s busy) and
    hands it the arguments, so the daemon's start-up overlaps that import (issue 41)."""
    args = list(ctx.args)
    if not ({"-h", "--help"} & set(args) or ctx.obj.get("no_daemon")):
        try:
            settings = settings_from_cli(ctx.obj)
        except CtxdError:  # `serve` itself reports it
            settings = None
        if settings is not None and settings.daemon.autostart:
            ctx.meta[lifecycle.EARLY_START] = lifecycle.start_early(settings)
    module, attr, _help = LAZY_COMMANDS["serve"]
    command = getattr(importlib.import_module(module), attr)
    assert isinstance(command, click.Command)
    with command.make_context("serve", args, parent=ctx.parent) as sub:
        return command.invoke(sub)


class CtxdCommand(click.Command):
    """A command whose text arguments are checked for control characters before it runs
    (`text_args.check_text`; a query's NUL is the search's own `QUERY_ERROR`)."""

    def invoke(self, ctx: click.Context) -> Any:
        labels = {p.name: (p.opts[0] if isinstance(p, click.Option) else p.name)
                  for p in self.params if p.name}
        check_text({labels.get(k, k) or k: v for k, v in ctx.params.items()},
                   allow_nul=frozenset({"query"}))
        return super().invoke(ctx)


class CtxdGroup(click.Group):
    """Turns CtxdError (and any unexpected error) into a clean message and exit code;
    loads the `LAZY_COMMANDS` only when one of them runs."""

    command_class = CtxdCommand

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name == "serve" and cmd_name not in self.commands:
            self.add_command(serve_starting_the_daemon, cmd_name)
        elif cmd_name in LAZY_COMMANDS and cmd_name not in self.commands:
            module, attr, _help = LAZY_COMMANDS[cmd_name]
            command = getattr(importlib.import_module(module), attr)
            assert isinstance(command, click.Command)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            if name in LAZY_COMMANDS and name not in self.commands:
                rows.append((name, LAZY_COMMANDS[name][2]))
                continue
            cmd = super().get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(formatter.width - 6 - len(name))))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, hoist_global_options(self, ctx, args))

    def invoke(self, ctx: click.Context) -> Any:
        raw = _raw_args(ctx)  # the group clears them before it resolves the subcommand
        try:
            return super().invoke(ctx)
        except CtxdError as err:
            _fail(ctx, err)
        except click.UsageError as exc:
            if not (ctx.meta.get("json") or "--json" in raw):
                raise
            ctx.meta["json"] = True
            _fail(ctx, usage_error(exc))
        except KeyboardInterrupt:
            render.emit("interrupted", err=True)
            sys.exit(130)
        except BrokenPipeError:  # `ctxd search ... | head`: the reader has what it wanted
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(0)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except Exception as exc:
            log.debug("internal error", exc_info=True)
            _fail(ctx, CtxdError(
                f"{type(exc).__name__}: {exc}",
                hint="This is a bug in ctxd. Re-run with LOG_LEVEL=debug for the traceback.",
            ))


GLOBAL_OPTIONS = {"--home": True, "--config": True, "--model": True, "--store": True,
                  "--no-daemon": False}
"""The group's options (-> whether each takes a value), taken after the subcommand too."""


def hoist_global_options(group: click.Group, ctx: click.Context, args: list[str]
                         ) -> list[str]:
    """`args` with the global options given after the subcommand (`ctxd refs X
    --no-daemon`, `ctxd status --home DIR`) moved before it, where the group reads them;
    an option the subcommand defines itself (`search --no-daemon`), an option's value and
    anything after `--` stay where they are."""
    k = 0
    while k < len(args) and args[k].startswith("-"):  # the group's own options
        k += 2 if GLOBAL_OPTIONS.get(args[k]) else 1
    if k >= len(args):
        return args
    command = group.get_command(ctx, args[k])
    own: dict[str, bool] = {}  # the subcommand's options (and its subcommands') -> value?
    for c in [command, *(command.commands.values() if isinstance(command, click.Group)
                         else [])]:
        for p in c.params if c is not None else []:
            if isinstance(p, click.Option):
                own.update(dict.fromkeys(p.opts, not p.is_flag and not p.count))
    rest = args[k + 1:]
    moved: list[str] = []
    kept: list[str] = []
    j = 0
    while j < len(rest):
        arg = rest[j]
        name = arg.split("=", 1)[0]
        if arg == "--":
            kept += rest[j:]
            break
        if name in GLOBAL_OPTIONS and name not in own:
            takes = GLOBAL_OPTIONS[name] and "=" not in arg
            moved += rest[j: j + 1 + takes]
            j += 1 + takes
            continue
        kept.append(arg)
        if own.get(arg) and j + 1 < len(rest):  # its value, whatever it looks like
            kept.append(rest[j + 1])
            j += 1
        j += 1
    return [*args[:k], *moved, args[k], *kept]


def _raw_args(ctx: click.Context) -> list[str]:
    """The group's unparsed arguments (the subcommand's name and its arguments), up to a
    `--` (after which `--json` is an argument, not the flag)."""
    raw = [*getattr(ctx, "_protected_args", []), *ctx.args]
    return raw[: raw.index("--")] if "--" in raw else raw


def usage_error(exc: click.UsageError) -> ValidationError:
    """A click usage error (bad option value, unknown option or command, missing argument)
    as the contract's `validation_error`, for `--json` callers."""
    cmd = exc.ctx.command_path if exc.ctx is not None else "ctxd"
    details: dict[str, Any] = {"usage": exc.ctx.get_usage() if exc.ctx is not None else ""}
    param = getattr(exc, "param", None)
    if param is not None and param.name:
        details["field"] = param.name
    return ValidationError(exc.format_message(), hint=f"Run `{cmd} --help` for the usage.",
                           details=details)


def _fail(ctx: click.Context, err: CtxdError) -> None:
    if ctx.meta.get("json"):
        body = err.to_dict()
        if body.get("hint"):
            body["hint"] = render.cli_hint(body["hint"])
        render.emit_json(body)
    else:
        render.emit(render.error_text(err), err=True)
    sys.exit(err.exit_code)


def json_option(f: F) -> F:
    def remember(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
        ctx.meta["json"] = value
        return value

    return click.option(
        "--json", "as_json", is_flag=True, callback=remember, is_eager=True,
        help="Print machine-readable JSON.",
    )(f)


def _service(ctx: click.Context, *, long_lived: bool = False, autostart: bool = False
             ) -> UseCases:
    """The use cases for this command: the daemon's when one runs (or, with `autostart`,
    once started), else an in-process `Service`."""
    settings = settings_from_cli(ctx.obj)

    def local() -> UseCases:
        # Imported here: the service pulls in every search engine (~0.15 s), which a
        # command answered by the daemon never needs.
        from ctxd.server.service import Service

        service = Service(settings, long_lived=long_lived)
        ctx.call_on_close(service.close)
        return service

    if not ctx.obj.get("no_daemon"):
        client = lifecycle.connect(
            settings, autostart=autostart and settings.daemon.autostart, local=local,
            note=lambda text: render.emit(f"note: {text}", err=True))
        if client is not None:
            ctx.call_on_close(client.close)
            return client
    return local()


def _scope(service: UseCases, repos: tuple[str, ...], all_repos: bool, *, say: bool = True
           ) -> Scope:
    """What a search command answers from (`server/cli/scope.py`): the repository holding
    the current folder unless `--repo` or `--all-repos` says otherwise; its note goes to
    stderr once."""
    scope = command_scope(service.repo_roots(), repos, all_repos,
                          remote=bool(service.settings.search.zoekt_url))
    if scope.note and say:
        render.emit(scope.note, err=True)
    return scope


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
    service = _service(ctx)
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
@click.argument("query", required=False)
@click.option("--mode", type=click.Choice(MODES), default="hybrid", show_default=True,
              help="hybrid (meaning + keywords, fused), semantic, keyword (BM25), "
              "lexical (QUERY is Zoekt syntax).")
@click.option("--repo", "repos", multiple=True, metavar="NAME", help="Only this repository.")
@all_repos_option
@click.option("--path", "path_glob", metavar="GLOB", help="Only paths matching GLOB.")
@click.option("--lang", metavar="L",
              help="Only this language: a name or alias (python, js, go, ...), in every mode.")
@click.option("--limit", type=click.IntRange(1, 100), help="Results per page (default 10).")
@click.option("--cursor", help="Continue from a previous page's next_cursor.")
@click.option("--explain", is_flag=True, help="Show how the query would run (parsed query, "
              "trigrams, SQL / keyword terms); in hybrid mode, then each hit of the first "
              "page with its features' contributions to its score.")
@click.option("--batch", "batch", type=click.File("r", encoding="utf-8"), metavar="FILE",
              help="Run one query per line of FILE ('-' = stdin; plain text or JSON "
              '{"id", "query"}); print one JSON object per line.')
@click.option("--no-daemon", is_flag=True,
              help="Run in this process: neither use nor start the ctxd daemon.")
@click.option("-C", "--context", "context", type=click.IntRange(0, 10), metavar="N",
              help="Lines of context around each matching line (default 2, at most 10; "
              "a checkpoint's context ends with the checkpoint).")
@click.option("-A", "--after-context", "after", type=click.IntRange(0, 10), metavar="N",
              help="Lines of context after each matching line.")
@click.option("-B", "--before-context", "before", type=click.IntRange(0, 10), metavar="N",
              help="Lines of context before each matching line.")
@click.option("-l", "--files-with-matches", "files_only", is_flag=True,
              help="Print only the files with results, one per line.")
@click.option("--vimgrep", is_flag=True,
              help="Print path:line:column:text, one line per match (as rg --vimgrep).")
@click.option("-v", "--verbose", is_flag=True,
              help="Show each result's score, engines and line range.")
@click.option("--color", type=click.Choice(COLOR_CHOICES), default="auto", show_default=True,
              help="Colour: auto (a terminal, unless NO_COLOR is set), always, never.")
@json_option
@click.pass_context
def search(
    ctx: click.Context,
    query: str | None,
    mode: str,
    repos: tuple[str, ...],
    all_repos: bool,
    path_glob: str | None,
    lang: str | None,
    limit: int | None,
    cursor: str | None,
    explain: bool,
    batch: TextIO | None,
    no_daemon: bool,
    context: int | None,
    after: int | None,
    before: int | None,
    files_only: bool,
    vimgrep: bool,
    verbose: bool,
    color: str,
    as_json: bool,
) -> None:
    """Search the index for QUERY (a question, keywords, or Zoekt syntax with --mode lexical).

    Results are grouped by file; each starts with PATH:LINE and its symbol, then its
    lines (`N:` matching, `N-` context), as ripgrep prints them. Inside an indexed
    repository only that one is searched (-a for all, --repo for others); its paths are
    relative to the current folder, other repositories' are REPO/PATH. Identical copies of
    a text answer once, naming the other places (`also in:`).

    \b
    Example:
      ctxd search "how are HTTP redirects followed" --lang python --limit 5
      ctxd search 'sym:Retry lang:python' --mode lexical -C 1
      ctxd search 'def\\s\\w+_handler' --mode lexical --vimgrep
    """
    if no_daemon:
        ctx.obj["no_daemon"] = True
    # Only a query that needs the model is worth starting the daemon for.
    service = _service(ctx, long_lived=batch is not None,
                       autostart=mode in ("hybrid", "semantic") and not explain)
    scope = _scope(service, repos, all_repos or (
        mode == "lexical" and query is not None and _names_repositories(query)),
        say=not explain)
    options: dict[str, Any] = {"mode": mode, "limit": limit, "repositories": scope.repositories,
                               "path_glob": path_glob, "language": lang}
    if batch is not None:
        # This process lives for the batch: what start-up made (modules, classes, the
        # store's objects) leaves the collector's full passes, which the texts the batch
        # keeps would otherwise set off over all of it (~13-20 ms each; docs/BENCHMARKS.md,
        # issue 30 item 3). The daemon and `ctxd serve` do not freeze.
        gc.freeze()
        _search_batch(service, batch, options)
        return
    if not query:
        raise click.UsageError("QUERY is required (or --batch FILE)")
    if explain:  # the plan; in hybrid mode each hit's features too (issue 42)
        render.emit(explained(service, query, mode, options))
        return
    loads = mode in ("hybrid", "semantic") and not getattr(service, "model_loaded", True)
    home = service.settings.home
    if loads and sys.stderr.isatty():
        # In this process (no daemon): the model loads now, once.
        render.emit(f"{loading_text(home)}; `ctxd daemon start` keeps it warm...", err=True)
    before, after = _first(before, context, 2), _first(after, context, 2)
    # Lexical hits come with their context lines; the others carry their checkpoint.
    lexical_context = min(max(before, after), 10) if mode == "lexical" else None
    started = time.monotonic()
    page = service.search(query, cursor=cursor, context_lines=lexical_context, **options)
    if loads:
        remember(home, time.monotonic() - started)  # what the next one will say
    if as_json:
        render.emit_json(render.search_page_json(page))
    elif page.results:
        opts = TextOptions(before=before, after=after, verbose=verbose)
        output = "vimgrep" if vimgrep else "files" if files_only else "text"
        render.search_page_text(page, scope.names, opts, color=use_color(color),
                                output=output)
    else:
        render.emit(render.no_results_text(query))
    if page.notes and not as_json:
        render.emit(render.notes_text(page.notes), err=True)
    if not page.results:
        if not as_json and service.list_repos()["total"] == 0:
            render.emit("nothing is indexed yet: run `ctxd index PATH` first.", err=True)
        sys.exit(1)


def _names_repositories(query: str) -> bool:
    """Whether a lexical query names its repositories (`repo:`): then it is not narrowed
    to the current one. Imported here: the query parser loads RE2 (~0.1 s), which other
    commands do not need."""
    from ctxd.search.lexical.query import names_repositories

    return names_repositories(query)


def _first(*values: int | None) -> int:
    """The first value given (`-A`/`-B` win over `-C`, which wins over the default)."""
    for v in values:
        if v is not None:
            return v
    return 0


def _search_batch(service: UseCases, lines: TextIO, options: dict[str, Any]) -> None:
    """One JSON result object per input line, the model loaded once."""
    for n, raw in enumerate(lines, start=1):
        raw = raw.strip()
        if not raw:
            continue
        qid: Any = n
        query = raw
        if raw.startswith("{"):
            try:
                obj = json.loads(raw)
                qid, query = obj.get("id", n), str(obj["query"])
            except (ValueError, KeyError, TypeError):
                render.emit_line_json({"id": n, "error": ValidationError.code,
                                       "message": f"line {n} is not {{\"id\", \"query\"}} JSON"})
                continue
        try:
            page = service.search(query, **options)
            render.emit_line_json({"id": qid, **render.search_page_json(page)})
        except CtxdError as err:
            render.emit_line_json({"id": qid, **err.to_dict()})


@main.command()
@json_option
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Show where the index lives, its model, and each repository's state.

    \b
    Example:
      ctxd status --json
    """
    service = _service(ctx)
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
    render.emit(f"totals: {t['repositories']} repositories, {t['files']} files, "
                f"{t['checkpoints']} checkpoints, {t['symbols']} symbols")
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
    listing = _service(ctx).list_repos(filter_)
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
    result = _service(ctx).remove(repo)
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
    result = _service(ctx).compact()
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
    service = _service(ctx)
    scope = _scope(service, repos, all_repos)
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
    service = _service(ctx)
    scope = _scope(service, repos, all_repos)
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
    service = _service(ctx)
    scope = _scope(service, repos, all_repos)
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
    fc = _service(ctx).file_content(repo, path, start_line=start, end_line=end)
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
for _command in graph_commands(_service, _scope, json_option):
    main.add_command(_command)

if __name__ == "__main__":
    main()
