"""What every `ctxd` command shares: the group, its errors, `--json`, the use cases and
the scope.

`CtxdGroup` is the command group: it checks text arguments (`CtxdCommand`), takes the
global options after the subcommand too (`hoist_global_options`), imports the
`LAZY_COMMANDS` only when one runs (`serve` starts the daemon while the MCP SDK loads),
and turns errors into `error: <code>: <message>` plus a hint on stderr (or the contract's
JSON error object with `--json`: `json_option`) in one place, `CtxdGroup.invoke`.
`service_for(ctx)` gives a command its `UseCases` (the daemon's when one runs, else an
in-process `Service`); `scope_for` what a search command answers from. Used by
`server.cli.main` and the command modules beside it; imports none of them.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from ctxd.indexer.errors import CtxdError, ValidationError
from ctxd.server.cli import render
from ctxd.server.cli.scope import Scope, command_scope
from ctxd.server.config import settings_from_cli
from ctxd.server.daemon import lifecycle
from ctxd.server.text_args import check_text
from ctxd.server.use_cases import UseCases

__all__ = ["GLOBAL_OPTIONS", "LAZY_COMMANDS", "CtxdCommand", "CtxdGroup",
           "hoist_global_options", "json_option", "scope_for", "service_for", "usage_error"]

F = TypeVar("F", bound=Callable[..., Any])
log = logging.getLogger("ctxd")


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
            render.emit("interrupted" + ("; the files committed so far are kept: run the same "
                                         "command again to resume" if ctx.invoked_subcommand
                                         == "index" else ""), err=True)
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


def service_for(ctx: click.Context, *, long_lived: bool = False, autostart: bool = False
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


def scope_for(service: UseCases, repos: tuple[str, ...], all_repos: bool, *, say: bool = True
           ) -> Scope:
    """What a search command answers from (`server/cli/scope.py`): the repository holding
    the current folder unless `--repo` or `--all-repos` says otherwise; its note goes to
    stderr once."""
    scope = command_scope(service.repo_roots(), repos, all_repos,
                          remote=bool(service.settings.search.zoekt_url))
    if scope.note and say:
        render.emit(scope.note, err=True)
    return scope
