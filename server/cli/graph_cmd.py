"""`ctxd callers`, `ctxd callees`, `ctxd path` and `ctxd impact`: how code connects.

`graph_commands(service, scope, json_option)` makes the click commands over the CLI's
own helpers (passed in, so this module imports nothing of `server.cli.main`); each is a
short adapter: arguments -> one use case (`server.graph_cases`) -> `graph_render`.
`ctxd refs` itself stays in `server.cli.main` (its `--by-name` is the text search).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ctxd.server.cli import graph_render, render
from ctxd.server.cli.scope import Scope, all_repos_option
from ctxd.server.use_cases import UseCases

__all__ = ["graph_commands"]

ServiceFor = Callable[[click.Context], UseCases]
ScopeFor = Callable[[UseCases, tuple[str, ...], bool], Scope]
Decorator = Callable[[Any], Any]


def _repo_options(f: Any) -> Any:
    f = all_repos_option(f)
    return click.option("--repo", "repos", multiple=True, metavar="NAME",
                        help="Only this repository.")(f)


def graph_commands(service_for: ServiceFor, scope_for: ScopeFor,
                   json_option: Decorator) -> list[click.Command]:
    """The graph commands, built over the CLI's service and scope helpers."""

    def calls_command(direction: str, doc: str) -> click.Command:
        @click.command(name=direction, help=doc)
        @click.argument("symbol")
        @click.option("--depth", type=int, default=1, show_default=True,
                      help="Levels of the tree (1 to 6).")
        @_repo_options
        @click.option("--limit", type=int, default=200, show_default=True,
                      help="Calls listed at most.")
        @json_option
        @click.pass_context
        def command(ctx: click.Context, symbol: str, depth: int, repos: tuple[str, ...],
                    all_repos: bool, limit: int, as_json: bool) -> None:
            service = service_for(ctx)
            scope = scope_for(service, repos, all_repos)
            symbol, repositories = scope.place(symbol)
            result = service.calls(symbol, direction=direction, depth=depth,
                                   repositories=repositories, limit=limit)
            if as_json:
                render.emit_json(graph_render.calls_json(result))
            else:
                render.emit(graph_render.calls_text(result, scope.names))

        return command

    callers = calls_command("callers", """Show what calls SYMBOL, as a tree (--depth N).

    SYMBOL is a NAME, a qualified name (Session.fetch) or PATH:LINE of its definition;
    calls are resolved through imports, self/this and constructed variables.

    \b
    Example:
      ctxd callers Session.fetch --depth 2""")
    callees = calls_command("callees", """Show what SYMBOL calls, as a tree (--depth N).

    Calls that resolve to no indexed definition are listed as unresolved.

    \b
    Example:
      ctxd callees src/app.py:42 --depth 2""")

    @click.command(name="path")
    @click.argument("source")
    @click.argument("target")
    @click.option("--depth", type=int, default=5, show_default=True,
                  help="The longest chain looked for (1 to 6 calls).")
    @_repo_options
    @json_option
    @click.pass_context
    def path(ctx: click.Context, source: str, target: str, depth: int,
             repos: tuple[str, ...], all_repos: bool, as_json: bool) -> None:
        """Show the shortest call chains from SOURCE to TARGET.

        \b
        Example:
          ctxd path main Session.fetch
        """
        service = service_for(ctx)
        scope = scope_for(service, repos, all_repos)
        (source, in_source), (target, in_target) = scope.place(source), scope.place(target)
        result = service.call_path(source, target, depth=depth,
                                   repositories=in_target if in_source == scope.repositories
                                   else in_source)
        if as_json:
            render.emit_json(graph_render.call_paths_json(result))
        else:
            render.emit(graph_render.call_paths_text(result, scope.names))

    @click.command(name="impact")
    @click.argument("subject")
    @click.option("--depth", type=int, default=3, show_default=True,
                  help="How far dependents are followed (1 to 6).")
    @_repo_options
    @click.option("--limit", type=int, default=200, show_default=True,
                  help="Dependents listed at most.")
    @json_option
    @click.pass_context
    def impact(ctx: click.Context, subject: str, depth: int, repos: tuple[str, ...],
               all_repos: bool, limit: int, as_json: bool) -> None:
        """Show what depends on SUBJECT (a symbol or a file), nearest first, with tests.

        \b
        Examples:
          ctxd impact Session.fetch
          ctxd impact src/pkg/models.py
        """
        service = service_for(ctx)
        scope = scope_for(service, repos, all_repos)
        subject, repositories = scope.place(subject)
        result = service.impact(subject, depth=depth, repositories=repositories,
                                limit=limit)
        if as_json:
            render.emit_json(graph_render.impact_json(result))
        else:
            render.emit(graph_render.impact_text(result, scope.names))

    return [callers, callees, path, impact]
