"""The MCP server: ctxd's use cases as MCP tools, thin adapters over `Service`.

`build_server(service, jobs=None) -> MCPServer` registers the ten tools
(`index_repository`, `index_status`, `search`, `semantic_search`, `search_symbols`,
`find_references`, `search_files`, `file_content`, `list_repos`, `get_health`). Each tool
is an adapter of a few lines: parse (the SDK validates arguments against the tool's
JSON schema) -> one `Service` call -> `server/mcp/markdown.py` (code results) or
`server/mcp/markdown_status.py` (server state) renders Markdown for the model plus structured
content with the same data (the output schema is a TypedDict in `server/mcp/schemas.py`).
`server/mcp/serve.py` runs it over stdio or streamable HTTP; tests use the SDK's in-memory
`Client(server)`.

Errors (`adapter`): a `CtxdError` becomes a `ToolError` whose text is
`{code}: {message}` + hint + details, so the model reads an `is_error` result it can act
on; anything else is logged with its traceback on stderr and reaches the model only as
`internal_error`. Arguments are checked by the `ArgumentErrors` middleware against the
input schema `tools/list` publishes, strictly (`"10"` and `true` are not integers), before
the tool runs; what fails is a `validation_error` naming each field, echoing at most
`text_args.SHOWN_CHARS` of a value.

Scope: built with the project `ctxd serve` runs in (`server.project.ProjectScope`), the
search tools answer from that project unless given `all_repos: true` or a `repository`
(the `search` tool also when its query names repositories with `repo:`); without one they
answer from every indexed repository.

Invariants: sync tools run in the SDK's worker threads, so the service's per-thread
SQLite connections are never shared; `index_repository` is async and only waits on
(and relays progress from) a background job, so the event loop never blocks.
"""

import functools
import inspect
import json
import logging
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import anyio
import anyio.to_thread
import jsonschema
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, ListRoots, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, ListRootsResult, TextContent, ToolAnnotations
from pydantic import Field

from ctxd.indexer.errors import CtxdError, ToolNotFound, ValidationError
from ctxd.indexer.walk.walker import DEFAULT_MAX_FILE_SIZE, MAX_FILE_SIZE_LIMIT
from ctxd.search.cursor import with_offset
from ctxd.search.lexical.query import names_repositories
from ctxd.search.zoekt.query import scoped_query
from ctxd.server.jobs import (
    IndexJob,
    JobManager,
    JobSnapshot,
    JobState,
    check_allowed,
    index_roots,
    validate_request,
)
from ctxd.server.mcp import markdown as md
from ctxd.server.mcp import markdown_status as status_md
from ctxd.server.mcp import schemas
from ctxd.server.mcp.budget import select_freshness
from ctxd.server.project import ProjectScope
from ctxd.server.search_cases import not_indexed
from ctxd.server.text_args import (
    MAX_FILTER_LENGTH,
    SHOWN_CHARS,
    check_text,
    shown,
    too_deep,
)
from ctxd.server.use_cases import UseCases
from ctxd.server.version import package_version

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

INSTRUCTIONS = """\
ctxd searches local code repositories that were indexed on this machine.
- `semantic_search` for questions in plain language ("where are retries configured");
  results say which engines (semantic, keyword, lexical or zoekt) found them.
- `search` for exact text or regular expressions in Zoekt syntax (`lang:python retry`,
  `file:\\.go$ "func \\\\w+Handler"`: bare words and quoted strings are regexes, no
  `/.../` delimiters), `search_symbols` for definitions by name,
  `find_references` for definitions plus usages, `search_files` for paths.
- `file_content` reads a file (or a line range) of an indexed repository.
- `list_repos` shows what is indexed and when; `index_repository` adds or refreshes a folder
  (long runs continue in the background: follow them with `index_status`).
Started inside a project, the server indexes it by itself and the search tools answer from
that project and the folders you ask it to index (`get_health` shows the project and its
index job); pass `all_repos: true` (or a `repository`) to search other indexed repositories.
Every list of results states how fresh the index is and gives a cursor when there is more.
"""

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
INDEXING = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True,
                           open_world_hint=False)
"""`index_repository` is destructive: files that its options (or the disk) no longer admit
leave the index, e.g. narrower `include_patterns`; the answer says how many and why."""

# -- errors ---------------------------------------------------------------------------------


def _internal(tool: str) -> ToolError:
    return ToolError(status_md.error_text(CtxdError(
        f"{tool} failed with an unexpected error",
        hint="This is a bug in ctxd, not in your request; the server's log (stderr) has the "
        "traceback. Other tools keep working.",
    )))


def adapter(fn: F) -> F:
    """Make a tool's failures readable: `CtxdError` -> `ToolError(code, message, hint,
    details)`; any other exception -> logged traceback + a bare `internal_error`."""
    name = fn.__name__

    def translate(exc: Exception) -> Exception:
        if isinstance(exc, CtxdError):
            return ToolError(status_md.error_text(exc))
        log.exception("tool %s raised an unexpected exception", name)
        return _internal(name)

    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except (ToolError, MCPError, anyio.get_cancelled_exc_class()):
                raise
            except Exception as exc:
                raise translate(exc) from exc

        return run_async  # type: ignore[return-value]  # same signature, via functools.wraps

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (ToolError, MCPError):
            raise
        except Exception as exc:
            raise translate(exc) from exc

    return run  # type: ignore[return-value]  # same signature, via functools.wraps


MAX_ARGUMENT_DEPTH = 8
"""Tool arguments are at most lists of strings: anything nested deeper is refused before
it is validated (or echoed)."""

_ARG_ERROR = re.compile(r"^Error executing tool (\S+): \d+ validation errors? for \S+Arguments")
_UNKNOWN_TOOL = re.compile(r"^Unknown tool: (.*)$", re.DOTALL)
_REQUIRED = re.compile(r"^'(.+)' is a required property")


def _expected(prop: dict[str, Any]) -> str:
    """What a property's schema accepts, in words: `an integer from 1 to 100 (default 30)`."""
    variants = prop.get("anyOf") or [prop]
    words = []
    for v in variants:
        kind = v.get("type", "value")
        text = {"integer": "an integer", "number": "a number", "string": "a string",
                "array": "a list", "boolean": "true or false", "null": "null",
                "object": "an object"}.get(str(kind), str(kind))
        if kind == "array" and isinstance(v.get("items"), dict) and "type" in v["items"]:
            text += f" of {v['items']['type']}s"
        if "maxLength" in v:
            text += f" of at most {v['maxLength']} characters"
        lo, hi = v.get("minimum"), v.get("maximum")
        if lo is not None and hi is not None:
            text += f" from {lo} to {hi}"
        elif lo is not None:
            text += f" >= {lo}"
        if "enum" in v:
            text = "one of " + ", ".join(json.dumps(x) for x in v["enum"])
        words.append(text)
    out = " or ".join(words)
    if "default" in prop:
        out += f" (default {json.dumps(prop['default'])}; omit it for the default)"
    return out


def schema_problems(schema: dict[str, Any], arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """Every way `arguments` break a JSON schema: `{"field", "problem", "value"?}`, by field.

    A value of the wrong type is reported as the JSON the client sent (`null`, `"ten"`)
    with what the field accepts."""
    validator = jsonschema.Draft202012Validator(schema)
    props = schema.get("properties", {})
    out: list[dict[str, Any]] = []
    for e in sorted(validator.iter_errors(arguments), key=lambda e: list(map(str, e.path))):
        path = ".".join(str(p) for p in e.path)
        m = _REQUIRED.match(e.message)
        if m and not path:
            out.append({"field": m.group(1), "problem": "is required"})
            continue
        problem = e.message
        if len(echo := repr(e.instance)) > SHOWN_CHARS:  # never send a megabyte back
            size = len(json.dumps(e.instance, default=str))
            problem = problem.replace(echo, f"a value of {size} characters")
        top = str(e.path[0]) if e.path else ""
        if e.validator in ("type", "anyOf") and len(e.path) == 1 and top in props:
            sent = shown(json.dumps(e.instance, ensure_ascii=False, default=str))
            problem = f"got {sent}, expected {_expected(props[top])}"
            if e.instance is None:
                problem += ("; a client that turns text into numbers sends null for text "
                            "that is not a number")
        out.append({"field": path or "(arguments)", "problem": problem,
                    "value": shown(e.instance)})
    return out


def argument_error(tool: str, problems: list[dict[str, Any]], fallback: str = ""
                   ) -> ValidationError:
    """The `validation_error` for arguments that break `tool`'s input schema."""
    what = "; ".join(f"{p['field']} {p['problem']}" if p["problem"] == "is required"
                     else f"{p['field']}: {p['problem']}" for p in problems)
    return ValidationError(
        f"invalid arguments for {tool}: {what or fallback}",
        hint="Fix the named arguments; `tools/list` gives each tool's types, bounds and "
        "defaults.",
        details={"fields": problems} if problems else {},
    )


class ArgumentErrors:
    """Server middleware: arguments that fail a tool's input schema come back as a
    `validation_error` naming each field, its value and the bound it broke (instead of
    pydantic's message), so the model can fix its call; an unknown tool name comes back as
    `NOT_FOUND` with the tools this server has, like every other error. Before the tool
    runs, arguments nested deeper than `MAX_ARGUMENT_DEPTH`, an argument the tool does not
    have (which the SDK would drop silently), any value the published schema refuses
    (pydantic alone would turn `"10"` and `true` into integers) and a text argument holding
    a control character (`text_args`) are refused the same way."""

    def __init__(self, server: MCPServer[Any]) -> None:
        self.server = server
        self._schemas: dict[str, dict[str, Any]] | None = None

    async def schemas(self) -> dict[str, dict[str, Any]]:
        """Each tool's input schema (the tool set is fixed once the server is built: read
        once, not on every call)."""
        if self._schemas is None:
            self._schemas = {t.name: t.input_schema for t in await self.server.list_tools()}
        return self._schemas

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method == "tools/call" and (refused := await self._refuse(ctx)) is not None:
            return refused
        result = await call_next(ctx)
        if ctx.method != "tools/call" or not isinstance(result, dict) or not result.get("isError"):
            return result
        content = result.get("content") or []
        text = content[0].get("text", "") if content and isinstance(content[0], dict) else ""
        if unknown := _UNKNOWN_TOOL.match(text):
            return await self._unknown_tool(result, unknown.group(1))
        m = _ARG_ERROR.match(text)
        if not m:
            return result
        tool = m.group(1)
        arguments = dict((ctx.params or {}).get("arguments") or {})
        schemas = await self.schemas()
        problems = schema_problems(schemas.get(tool, {}), arguments) if tool in schemas else []
        fallback = " ".join(line.strip() for line in text.split("\n")[1:3])
        err = argument_error(tool, problems, shown(fallback))
        new = dict(result)
        new["content"] = [{"type": "text", "text": f"Error executing tool {tool}: "
                           + status_md.error_text(err)}]
        return new

    async def _refuse(self, ctx: ServerRequestContext[Any, Any]) -> HandlerResult | None:
        """The error answer for arguments no tool should run with, or None."""
        params = ctx.params or {}
        tool = str(params.get("name", ""))
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict):
            return None  # the SDK's own validation answers that
        schemas = await self.schemas()
        if tool not in schemas:
            return None  # the unknown tool is answered after the call
        known = sorted(schemas[tool].get("properties", {}))
        try:
            if too_deep(arguments, MAX_ARGUMENT_DEPTH):
                raise ValidationError(
                    f"invalid arguments for {tool}: nested deeper than {MAX_ARGUMENT_DEPTH} "
                    "levels",
                    hint="Arguments are strings, numbers, booleans and lists of strings "
                    "(`tools/list` gives each tool's).", details={"field": "arguments"})
            unknown = sorted(set(arguments) - set(known))
            if unknown:
                raise ValidationError(
                    f"invalid arguments for {tool}: unknown argument"
                    f"{'s' if len(unknown) > 1 else ''} {shown(', '.join(unknown))}",
                    hint=f"{tool} takes: {', '.join(known) or 'no arguments'}.",
                    details={"field": shown(unknown[0]), "value": shown(arguments[unknown[0]]),
                             "known": known})
            # Strictly the schema `tools/list` publishes: "10" and true are not integers
            # (pydantic alone would coerce them, yet refuse 5.5).
            if problems := schema_problems(schemas[tool], arguments):
                raise argument_error(tool, problems)
            check_text(arguments, allow_nul=frozenset({"query"}))
        except ValidationError as err:
            text = f"Error executing tool {tool}: {status_md.error_text(err)}"
            return CallToolResult(content=[TextContent(type="text", text=text)],
                                  is_error=True).model_dump(by_alias=True, exclude_none=True,
                                                            mode="json")
        return None

    async def _unknown_tool(self, result: dict[str, Any], name: str) -> HandlerResult:
        names = sorted(await self.schemas())
        err = ToolNotFound(
            f"Unknown tool: {name}",
            hint=f"This server's tools: {', '.join(names)} (`tools/list` describes them).",
            details={"field": "name", "value": name},
        )
        new = dict(result)
        new["content"] = [{"type": "text", "text": status_md.error_text(err)}]
        return new


# -- paging -----------------------------------------------------------------------------------


def cursor_at(
    known: str | None, offset: int, refetch: Callable[[int], str | None], limit: int
) -> Callable[[int], str | None]:
    """A function giving the cursor that continues after the first `n` results of a page
    that starts at `offset`. `known` is any cursor of the same query (the one the caller
    sent, or the page's next cursor; it carries the page size); without one, `refetch(n)`
    asks the service for the first `n` results and its next cursor is given the page size
    `limit` back, so the pages after a budget cut stay as large as the caller asked."""

    def at(n: int) -> str | None:
        if known:
            return with_offset(known, offset + n)
        found = refetch(n)
        return with_offset(found, offset + n, limit) if found else None

    return at


def answer(rendered: schemas.Rendered) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=rendered.markdown)],
                          structured_content=rendered.data)


# -- index jobs --------------------------------------------------------------------------------


async def follow(job: IndexJob, ctx: Context, wait_seconds: float) -> JobSnapshot:
    """Wait up to `wait_seconds` for `job`, relaying its progress as MCP notifications."""
    deadline = anyio.current_time() + wait_seconds
    snap, reported = job.snapshot(), -1
    while not snap.finished:
        if snap.progress > reported:
            try:
                await ctx.report_progress(snap.progress, snap.total, snap.message)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                log.info("client gone while following job %s; it continues", job.job_id)
                return snap
            reported = snap.progress
        left = deadline - anyio.current_time()
        if left <= 0:
            break
        snap = await anyio.to_thread.run_sync(
            job.wait_for_change, snap.version, min(left, 5.0), abandon_on_cancel=True
        )
    return snap


def job_answer(snap: JobSnapshot, wait_seconds: float, budget: int) -> CallToolResult:
    """The tool answer for a job: its result, its error, or (a normal answer) the job that
    continues in the background, with its id, progress and how to follow it."""
    if snap.state is JobState.SUCCEEDED and snap.stats is not None:
        return answer(status_md.render_index(snap.stats, snap.job_id, budget=budget))
    if snap.error is not None:
        raise snap.error
    return answer(status_md.render_index_job(
        path=snap.path, job_id=snap.job_id, state=snap.state.value, phase=snap.phase,
        progress=snap.progress, total=snap.total, started_at=snap.started_at,
        after=snap.after, waited=status_md.format_duration(wait_seconds), budget=budget))


def job_out(snap: JobSnapshot) -> schemas.JobOut:
    return status_md.job_out(
        job_id=snap.job_id, path=snap.path, state=snap.state.value, phase=snap.phase,
        progress=snap.progress, total=snap.total, message=snap.message,
        started_at=snap.started_at, finished_at=snap.finished_at, stats=snap.stats,
        error=snap.error,
    )


def root_uris(roots: ListRootsResult | None) -> list[str] | None:
    return [str(r.uri) for r in roots.roots] if roots is not None else None


# -- the server ---------------------------------------------------------------------------------


ALL_REPOS = ("Search every indexed repository. By default a server started inside a "
             "project answers from that project and the folders indexed through it "
             "(`get_health` names the project).")


def build_server(  # noqa: C901 - one small closure per tool
    service: UseCases, jobs: JobManager | None = None, *, project: ProjectScope | None = None
) -> MCPServer[Any]:
    """An `MCPServer` named `ctxd` exposing every tool over `service`.

    Args:
        service: the use cases (its settings give the token budget, allowed roots and the
            index wait time).
        jobs: background index jobs (one is created when not given).
        project: the project the server runs in: the search tools answer from it by
            default (module docstring); None = from every indexed repository.
    """
    settings = service.settings
    jobs = jobs or JobManager(service)
    budget = settings.search.token_budget
    server: MCPServer[Any] = MCPServer("ctxd", title="ctxd code search", version=package_version(),
                                       instructions=INSTRUCTIONS)
    server.middleware.append(ArgumentErrors(server))

    def fresh(repositories: Sequence[str] | None = None) -> list[schemas.Freshness]:
        return select_freshness(service.freshness(), repositories)

    def scope(repository: str | None, all_repos: bool) -> list[str] | None:
        """The repositories a search tool answers from (None = all)."""
        if project is None:
            return [repository] if repository else None
        return project.scope(repository, all_repos)

    def scope_note(repository: str | None, all_repos: bool, repos: list[str] | None
                   ) -> list[str]:
        """What an answer scoped to the project by default says about it."""
        if project is None or repository or all_repos or not repos:
            return []
        named = ", ".join(f"`{r}`" for r in repos)
        if len(repos) == 1:
            return [f"Searched the project {named} only (the folder this server runs in); "
                    "pass `all_repos: true` for every indexed repository."]
        return [f"Searched {named} only (the project this server runs in and the folders "
                "indexed through it); pass `all_repos: true` for every indexed repository."]

    def client_roots(ctx: Context) -> ListRoots | None:
        """Ask the client for its roots when they decide what may be indexed (over stdio
        without configured roots: `jobs.index_roots`)."""
        caps = ctx.client_capabilities
        wanted = (not settings.server.allowed_roots and settings.server.transport == "stdio"
                  and caps is not None and caps.roots is not None)
        return ListRoots() if wanted else None

    @server.tool(annotations=INDEXING)
    @adapter
    async def index_repository(
        path: Annotated[str, Field(min_length=1, description=(
            "Folder to index: absolute, or relative to the first allowed root (the server's "
            "configured roots; over stdio without them, your client's roots, else the "
            "server's working directory; over HTTP only configured roots)."))],
        include_patterns: Annotated[list[str], Field(description=(
            "Only index files matching one of these globs (basename or repo-relative path; "
            "`**` allowed), e.g. ['*.py', 'docs/**/*.md']. Empty = the ones given before "
            "(every file when none were)."
        ))] = [],  # noqa: B006 - pydantic copies defaults
        exclude_patterns: Annotated[list[str], Field(description=(
            "Never index files matching these globs; they win over includes, e.g. "
            "['*.log', 'vendor/**']. Empty = the ones given before. .gitignore files and "
            "likely secrets are always left out."
        ))] = [],  # noqa: B006 - pydantic copies defaults
        max_file_size: Annotated[int, Field(ge=0, le=MAX_FILE_SIZE_LIMIT, description=(
            "Skip files larger than this many bytes (default: the one given before, else "
            "1 MiB; at most 10 MiB, 0 = no limit)."))] = DEFAULT_MAX_FILE_SIZE,
        force: Annotated[bool, Field(description=(
            "Index even the filesystem root or a home directory inside the allowed roots "
            "(refused otherwise: that would index the whole machine). Never reaches outside "
            "the allowed roots."))] = False,
        reset_options: Annotated[bool, Field(description=(
            "Forget the patterns and max_file_size given to earlier runs of this folder: "
            "back to the server's configured ones (plus any given in this call)."))] = False,
        *,
        ctx: Context,
        roots: Annotated[ListRootsResult | None, Resolve(client_roots)],
    ) -> Annotated[CallToolResult, schemas.IndexRepositoryOutput]:
        """Index (or refresh) a repository or folder for search. Incremental: unchanged files
        are skipped. Patterns and max_file_size stick to the folder: a later call without
        them (and the file watcher) uses them again; give them again to change them, or
        `reset_options` to go back to the server's configured ones (`get_health` shows
        them). Sends progress notifications; if it runs longer than the server's wait
        time (`server.index_wait_seconds`, default 20 s) it continues in the background and
        the answer (not an error) gives its `job_id`, `state` and `progress`: follow it
        with `index_status`."""
        allowed = index_roots(settings.server, root_uris(roots), Path.cwd())
        real = check_allowed(path, allowed)
        size = None if max_file_size == DEFAULT_MAX_FILE_SIZE else max_file_size
        validate_request(service, real, include_patterns, exclude_patterns, size, force)
        job = jobs.start(real, include_patterns=include_patterns,
                         exclude_patterns=exclude_patterns, max_file_size=size, force=force,
                         reset_options=reset_options)
        if project is not None:
            project.ask(real)  # searched by default from now on, beside the project
        wait = float(settings.server.index_wait_seconds)
        return job_answer(await follow(job, ctx, wait), wait, budget)

    @server.tool(annotations=READ_ONLY)
    @adapter
    def index_status(
        job_id: Annotated[str | None, Field(description=(
            "A job id from `index_repository`; omit to list every job of this server."))] = None,
        wait_seconds: Annotated[float, Field(ge=0, le=600, description=(
            "With job_id: wait up to this many seconds for the job to finish."))] = 0,
    ) -> Annotated[CallToolResult, schemas.IndexStatusOutput]:
        """Progress and results of background index jobs, plus when each repository was last
        indexed."""
        chosen = [jobs.get(job_id)] if job_id else jobs.jobs()
        snaps = [j.wait(wait_seconds) if job_id else j.snapshot() for j in chosen]
        return answer(status_md.render_jobs([job_out(s) for s in snaps], fresh=fresh(),
                                            budget=budget, single=job_id is not None))

    @server.tool(annotations=READ_ONLY)
    @adapter
    def search(
        query: Annotated[str, Field(min_length=1, description=(
            "Zoekt search query. Bare words and \"quoted strings\" are RE2 regular expressions "
            "(escape metacharacters, e.g. `foo\\(`; spaces mean AND). Filters: file:/f:, "
            "lang:, repo:/r:, sym: (definitions), case:yes|no, type:filename; combine with "
            "`or`, `-term` (negation) and parentheses. Example: "
            "`lang:python \"def \\\\w+_handler\"` (inside quotes, write `\\\\` for `\\`)."
        ))],
        limit: Annotated[int, Field(ge=1, le=100, description=(
            "Maximum number of file matches to return"))] = 30,
        contextLines: Annotated[int, Field(
            ge=0, le=10, description="Number of context lines to include around each match"
        )] = 3,
        cursor: Annotated[str | None, Field(description=(
            "`next_cursor` of the previous page, to continue."))] = None,
        repository: Annotated[str | None, Field(description=(
            "Only this repository (a name from `list_repos`)."))] = None,
        all_repos: Annotated[bool, Field(description=ALL_REPOS)] = False,
    ) -> Annotated[CallToolResult, schemas.SearchOutput]:
        """Search code across indexed repositories using Zoekt query syntax (exact text and
        regular expressions). One section per file with line-numbered matches and context."""
        named = names_repositories(query)  # `repo:` in the query: no default scope
        repos = scope(repository, all_repos or named)
        if repository and not settings.search.zoekt_url and (
                repository not in (roots := service.repo_roots())):
            raise not_indexed(repository, set(roots))
        scoped = scoped_query(query, repos) if repos else query
        page = service.lexical(scoped, limit=limit, context_lines=contextLines, cursor=cursor)
        r = page.result
        at = cursor_at(cursor or page.next_cursor, page.offset, lambda n: service.lexical(
            scoped, limit=n, context_lines=contextLines).next_cursor, limit)
        notes = [*r.notes, *scope_note(repository, all_repos or named, repos)]
        return answer(md.render_search(
            query, r.files, match_count=r.match_count, file_count=r.file_count,
            duration_ms=r.duration_ms, partial=r.partial, notes=notes,
            next_cursor=page.next_cursor, cursor_at=at, fresh=fresh(repos), budget=budget))

    @server.tool(annotations=READ_ONLY)
    @adapter
    def semantic_search(
        query: Annotated[str, Field(min_length=1, description=(
            "What you are looking for, in natural language, e.g. 'where are HTTP retries "
            "configured'. Identifiers in the question help."))],
        mode: Annotated[Literal["hybrid", "semantic", "keyword", "lexical"], Field(description=(
            "hybrid (default) fuses meaning and keyword matches; semantic = meaning only; "
            "keyword = ranked word matches only; lexical = the query is Zoekt syntax."
        ))] = "hybrid",
        limit: Annotated[int, Field(ge=1, le=100, description="Results per page.")] = (
            settings.search.default_limit),
        cursor: Annotated[str | None, Field(description=(
            "`next_cursor` of the previous page, to continue."))] = None,
        repository: Annotated[str | None, Field(description=(
            "Only this repository (a name from `list_repos`)."))] = None,
        path: Annotated[str | None, Field(description=(
            "Only paths matching this glob, e.g. 'src/**' or '*.py'."))] = None,
        language: Annotated[str | None, Field(description=(
            "Only this language, e.g. 'python', 'typescript', 'go', 'markdown'."))] = None,
        all_repos: Annotated[bool, Field(description=ALL_REPOS)] = False,
    ) -> Annotated[CallToolResult, schemas.SemanticOutput]:
        """Find code and docs by meaning (hybrid semantic + keyword ranking by default). Each
        result gives its location, line-numbered snippet and the engines that found it;
        identical copies of a text answer once, naming the other places (`also_in`)."""
        # A lexical query naming its repositories (`repo:`) gets no default scope.
        all_repos = all_repos or (mode == "lexical" and names_repositories(query))
        repos = scope(repository, all_repos)

        def run(n: int | None, c: str | None) -> Any:
            return service.search(query, mode=mode, limit=n, cursor=c, repositories=repos,
                                  path_glob=path, language=language)

        page = run(limit, cursor)
        offset = int(page.stats.get("offset", 0))
        at = cursor_at(cursor or page.next_cursor, offset, lambda n: run(n, None).next_cursor,
                       limit)
        return answer(md.render_hits(
            query, page.mode, page.results, offset=offset,
            notes=[*page.notes, *scope_note(repository, all_repos, repos)],
            next_cursor=page.next_cursor, cursor_at=at, fresh=fresh(repos), budget=budget))

    @server.tool(annotations=READ_ONLY)
    @adapter
    def search_symbols(
        query: Annotated[str, Field(min_length=1, description=(
            "Symbol name or part of one: exact, prefix, substring or fuzzy (e.g. 'AuthService', "
            "'calc')."))],
        kinds: Annotated[list[str] | None, Field(description=(
            "Only these kinds, e.g. ['class'], ['function', 'method'] (others: constructor, "
            "interface, type, enum, struct, trait, module, constant, variable, section)."))] = None,
        max_items: Annotated[int | None, Field(ge=1, le=1000, description=(
            "Results per page (default: all that fit the token budget)."))] = None,
        start_index: Annotated[int, Field(ge=0, description=(
            "Number of results to skip, for paging."))] = 0,
        pagination_id: Annotated[str | None, Field(description=(
            "`pagination_id` of the previous page, to continue."))] = None,
        repository: Annotated[str | None, Field(description=(
            "Only this repository (a name from `list_repos`)."))] = None,
        all_repos: Annotated[bool, Field(description=ALL_REPOS)] = False,
    ) -> Annotated[CallToolResult, schemas.SymbolsOutput]:
        """Fast fuzzy search for symbol definitions (functions, classes, methods, ...) by name,
        ranked exact > prefix > substring > fuzzy. `best_match` says how the best one matches:
        `fuzzy` means no name holds the query (the items are only guesses)."""
        repos = scope(repository, all_repos)
        page = service.symbols(query, kinds=kinds, max_items=max_items, start_index=start_index,
                               pagination_id=pagination_id, repositories=repos)
        return answer(md.render_symbols(page, kinds=kinds, max_items=max_items,
                                        pagination_id=pagination_id, fresh=fresh(repos),
                                        budget=budget))

    @server.tool(annotations=READ_ONLY)
    @adapter
    def find_references(
        symbol: Annotated[str, Field(min_length=1, description=(
            "The identifier, e.g. 'parse_header' (a dotted name matches its last part)."))],
        language: Annotated[str | None, Field(description=(
            "Only usages in this language (default: the definition's language)."))] = None,
        repository: Annotated[str | None, Field(description="Only this repository.")] = None,
        limit: Annotated[int, Field(ge=1, le=1000, description=(
            "Maximum usages to collect."))] = 100,
        all_repos: Annotated[bool, Field(description=ALL_REPOS)] = False,
    ) -> Annotated[CallToolResult, schemas.ReferencesOutput]:
        """Where a symbol is defined and where it is used (whole-word matches), labelled
        definition / usage, with counts."""
        repos = scope(repository, all_repos)
        refs = service.references(symbol, language=language, repositories=repos, limit=limit)
        return answer(md.render_references(refs, fresh=fresh(repos), budget=budget))

    @server.tool(annotations=READ_ONLY)
    @adapter
    def search_files(
        pattern: Annotated[str, Field(min_length=1, description=(
            "File name or path pattern: a substring ('package.json'), a regex ('\\.test\\.ts$') "
            "or Zoekt syntax."))],
        limit: Annotated[int, Field(ge=1, le=500, description="Files per page.")] = 50,
        cursor: Annotated[str | None, Field(description=(
            "`next_cursor` of the previous page, to continue."))] = None,
        repository: Annotated[str | None, Field(description="Only this repository.")] = None,
        all_repos: Annotated[bool, Field(description=ALL_REPOS)] = False,
    ) -> Annotated[CallToolResult, schemas.FilesOutput]:
        """Find files by name or path across indexed repositories."""
        repos = scope(repository, all_repos)
        page = service.files(pattern, limit=limit, cursor=cursor, repositories=repos)
        r = page.result
        at = cursor_at(cursor or page.next_cursor, page.offset, lambda n: service.files(
            pattern, limit=n, repositories=repos).next_cursor, limit)
        return answer(md.render_files(
            pattern, r.files, offset=page.offset, file_count=r.file_count,
            duration_ms=r.duration_ms, next_cursor=page.next_cursor, cursor_at=at,
            fresh=fresh(repos), budget=budget))

    @server.tool(annotations=READ_ONLY)
    @adapter
    def file_content(
        repository: Annotated[str, Field(min_length=1, description=(
            "Repository name as shown by `list_repos` / search results."))],
        path: Annotated[str, Field(min_length=1, description=(
            "Path of the file within the repository, e.g. 'src/main.py'."))],
        branch: Annotated[str, Field(description="Branch name (default: HEAD).")] = "HEAD",
        start_line: Annotated[int | None, Field(ge=1, description=(
            "First line to return (1-based)."))] = None,
        end_line: Annotated[int | None, Field(ge=1, description=(
            "Last line to return (inclusive)."))] = None,
    ) -> Annotated[CallToolResult, schemas.FileContentOutput]:
        """Read a file (or a line range of it) from an indexed repository."""
        fc = service.file_content(repository, path, branch=branch, start_line=start_line,
                                  end_line=end_line)
        return answer(md.render_file(fc, budget=budget))

    @server.tool(annotations=READ_ONLY)
    @adapter
    def list_repos(
        filter: Annotated[str | None, Field(max_length=MAX_FILTER_LENGTH, description=(
            "Optional filter pattern to match repository names (regex supported)"))] = None,
    ) -> Annotated[CallToolResult, schemas.ReposOutput]:
        """List indexed repositories with file counts, size, branches, symbol support, when
        each was last indexed and whether a re-index is running."""
        listing = service.list_repos(filter)
        return answer(status_md.render_repos(listing, name_filter=filter, budget=budget))

    @server.tool(annotations=READ_ONLY)
    @adapter
    def get_health() -> Annotated[CallToolResult, dict[str, Any]]:
        """Health of the index and search backends: store state, model, counts, per-repository
        freshness and embedding coverage, the Zoekt backend when configured, and the
        project this server runs in (its repository, index job and watcher), if any."""
        health = service.health()
        health["project"] = project.info() if project is not None else None
        return answer(status_md.render_health(health, budget=budget))

    return server
