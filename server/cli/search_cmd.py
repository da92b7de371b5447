"""`ctxd search`: the index searched by meaning and by text, printed as ripgrep prints.

`search` is a thin adapter: flags -> scope (the repository you are in, unless `--repo` or
`-a`) -> one `UseCases.search` (or `--explain`, or one query per line of `--batch`) ->
`server.cli.render` (text, `--vimgrep`, `-l` or `--json`). Exit code 1 when nothing
matched. Registered on the group by `server.cli.main`.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from typing import Any, TextIO

import click

from ctxd.indexer.errors import CtxdError, ValidationError
from ctxd.server.cli import render
from ctxd.server.cli.group import CtxdCommand, json_option, scope_for, service_for
from ctxd.server.cli.hits_text import TextOptions
from ctxd.server.cli.scope import all_repos_option
from ctxd.server.cli.styled import COLOR_CHOICES, use_color
from ctxd.server.first_search import loading_text, remember
from ctxd.server.pages import MODES
from ctxd.server.use_cases import UseCases

__all__ = ["search"]


@click.command(cls=CtxdCommand)
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
    service = service_for(ctx, long_lived=batch is not None,
                       autostart=mode in ("hybrid", "semantic") and not explain)
    scope = scope_for(service, repos, all_repos or (
        mode == "lexical" and query is not None and _names_repositories(query)),
        say=not explain)
    options: dict[str, Any] = {"mode": mode, "limit": limit, "repositories": scope.repositories,
                               "path_glob": path_glob, "language": lang}
    if batch is not None:
        # This process lives for the batch: what start-up made (modules, classes, the
        # store's objects) leaves the collector's full passes, which the texts the batch
        # keeps would otherwise set off over all of it (~13-20 ms each; docs/BENCHMARKS.md,
        # issue 30 item 3). The daemon and `ctxd serve` do not freeze. Unfrozen after it,
        # so that a caller in this process (a test's CliRunner) is left as it was.
        gc.freeze()
        try:
            _search_batch(service, batch, options)
        finally:
            gc.unfreeze()
        return
    if not query:
        raise click.UsageError("QUERY is required (or --batch FILE)")
    if explain:  # the plan; in hybrid mode each hit's features too (issue 42)
        # here: the ranking's modules (search.hybrid, its features) load only for --explain
        from ctxd.server.cli.explain_hits import explained

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
