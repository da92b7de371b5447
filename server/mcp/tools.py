"""The MCP server: ctxd's use cases as MCP tools, thin adapters over `UseCases`.

`build_server(service, jobs=None, project=None) -> MCPServer` registers the tools of the
table `TOOLS` (`index_repository`, `index_status`, `search`, `semantic_search`,
`search_symbols`, `find_references`, `find_callers`, `find_callees`, `trace_call_path`,
`search_files`, `file_content`, `list_repos`, `get_health`): each is a method of `Tools`,
whose signature is the tool's input schema and whose docstring its description. A tool
is an adapter of a few lines: parse (arguments are checked first by
`server/mcp/arguments.py`) -> one `UseCases` call ->
`server/mcp/markdown.py` (code results) or `server/mcp/markdown_status.py` (server state)
renders Markdown for the model plus structured content with the same data (the output
schema is a TypedDict in `server/mcp/schemas.py`). `server/mcp/serve.py` runs it over stdio
or streamable HTTP; tests use the SDK's in-memory `Client(server)`.

Errors (`adapter`, in `server/mcp/answers.py` with the other parts of an answer: the
result, its cursors, an index job's progress): a `CtxdError` becomes a `ToolError` whose
text is `{code}: {message}` + hint + details, so the model reads an `is_error` result it
can act on; anything else is logged with its traceback on stderr and reaches the model
only as `internal_error`.

Scope: built with the project `ctxd serve` runs in (`server.project.ProjectScope`), the
search tools answer from that project unless given `all_repos: true` or a `repository`
(the `search` tool also when its query names repositories with `repo:`); without one they
answer from every indexed repository.

Invariants: sync tools run in the SDK's worker threads, so the service's per-thread
SQLite connections are never shared; `index_repository` is async and only waits on
(and relays progress from) a background job, so the event loop never blocks.
"""

import inspect
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, ListRoots, MCPServer, Resolve
from mcp_types import CallToolResult, ListRootsResult, ToolAnnotations
from pydantic import Field

from ctxd.indexer.errors import ValidationError
from ctxd.indexer.walk.walker import DEFAULT_MAX_FILE_SIZE, MAX_FILE_SIZE_LIMIT
from ctxd.search.cursor import decode_cursor, encode_cursor
from ctxd.search.lexical.query import names_repositories
from ctxd.search.models import SearchOptions
from ctxd.search.zoekt.query import scoped_query
from ctxd.server.config import Settings
from ctxd.server.graph_cases import MAX_LIMIT
from ctxd.server.jobs import (
    JobManager,
    check_allowed,
    index_roots,
    validate_request,
)
from ctxd.server.mcp import graph_markdown as graph_md
from ctxd.server.mcp import markdown as md
from ctxd.server.mcp import markdown_status as status_md
from ctxd.server.mcp import schemas
from ctxd.server.mcp.answers import (
    adapter,
    answer,
    cursor_at,
    follow,
    job_answer,
    job_out,
    root_uris,
)
from ctxd.server.mcp.arguments import ArgumentErrors
from ctxd.server.mcp.budget import select_freshness
from ctxd.server.project import ProjectScope
from ctxd.server.repo_names import not_indexed
from ctxd.server.text_args import (
    MAX_FILTER_LENGTH,
)
from ctxd.server.use_cases import UseCases
from ctxd.server.version import package_version

INSTRUCTIONS = """\
ctxd searches local code repositories that were indexed on this machine.
- `semantic_search` for questions in plain language ("where are retries configured");
  results say which engines (semantic, keyword, lexical or zoekt) found them.
- `search` for exact text or regular expressions in Zoekt syntax (`lang:python retry`,
  `file:\\.go$ "func \\\\w+Handler"`: bare words and quoted strings are regexes, no
  `/.../` delimiters), `search_symbols` for definitions by name,
  `find_references` for the resolved references of one definition, `find_callers` /
  `find_callees` for what calls it and what it calls (trees), `trace_call_path` for how
  one function reaches another, `search_files` for paths.
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

# -- the server ---------------------------------------------------------------------------------


SYMBOL = ("One definition: a name ('fetch'), a qualified name ('Session.fetch', "
          "'pkg.Session.fetch') or PATH:LINE of its definition ('src/app.py:42', the path "
          "relative to the repository root).")
ALL_REPOS = ("Search every indexed repository. By default a server started inside a "
             "project answers from that project and the folders indexed through it "
             "(`get_health` names the project).")


SEARCH_DEFAULTS = SearchOptions()
"""`[search]`'s defaults: a tool's default that comes from the settings is written with
these and set from the server's own (`SETTING_DEFAULTS`)."""


def client_roots(ctx: Context) -> ListRoots | None:
    """Ask the client for its roots when they decide what may be indexed (over stdio
    without configured roots: `jobs.index_roots`)."""
    settings = _SERVED[ctx.mcp_server].settings
    caps = ctx.client_capabilities
    wanted = (not settings.server.allowed_roots and settings.server.transport == "stdio"
              and caps is not None and caps.roots is not None)
    return ListRoots() if wanted else None


class Tools:
    """The tools over one `UseCases`: each public method below is one tool (its signature
    the input schema, its docstring the description, its return annotation the output
    schema); `TOOLS` lists them with their annotations, and `build_server` registers them.

    Args:
        service: the use cases (its settings give the token budget, allowed roots and the
            index wait time).
        jobs: background index jobs.
        project: the project the server runs in: the search tools answer from it by
            default (module docstring); None = from every indexed repository.
    """

    def __init__(self, service: UseCases, jobs: JobManager, project: ProjectScope | None
                 ) -> None:
        self.service = service
        self.settings = service.settings
        self.jobs = jobs
        self.project = project
        self.budget = self.settings.search.token_budget

    def fresh(self, repositories: Sequence[str] | None = None) -> list[schemas.Freshness]:
        return select_freshness(self.service.freshness(), repositories)

    def scope(self, repository: str | None, all_repos: bool) -> list[str] | None:
        """The repositories a search tool answers from (None = all)."""
        if self.project is None:
            return [repository] if repository else None
        return self.project.scope(repository, all_repos)

    def scope_note(self, repository: str | None, all_repos: bool, repos: list[str] | None
                   ) -> list[str]:
        """What an answer scoped to the project by default says about it."""
        if self.project is None or repository or all_repos or not repos:
            return []
        named = ", ".join(f"`{r}`" for r in repos)
        if len(repos) == 1:
            return [f"Searched the project {named} only (the folder this server runs in); "
                    "pass `all_repos: true` for every indexed repository."]
        return [f"Searched {named} only (the project this server runs in and the folders "
                "indexed through it); pass `all_repos: true` for every indexed repository."]

    def tool(self, name: str) -> Callable[..., Any]:
        """The method `name` as a tool function: errors translated (`adapter`), the
        defaults that come from the settings (`SETTING_DEFAULTS`) filled in."""
        fn: Callable[..., Any] = adapter(getattr(self, name))
        given = {param: default(self.settings) for (tool, param), default
                 in SETTING_DEFAULTS.items() if tool == name}
        if given:
            sig = inspect.signature(fn)
            fn.__signature__ = sig.replace(parameters=[  # type: ignore[attr-defined]
                p.replace(default=given[p.name]) if p.name in given else p
                for p in sig.parameters.values()])
        return fn

    async def index_repository(
        self,
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
            "(refused otherwise: that would index the whole machine), or confirm a "
            "repository folder replaced while other users can write its parent. Never "
            "reaches outside the allowed roots."))] = False,
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
        allowed = index_roots(self.settings.server, root_uris(roots), Path.cwd())
        real = check_allowed(path, allowed)
        size = None if max_file_size == DEFAULT_MAX_FILE_SIZE else max_file_size
        validate_request(self.service, real, include_patterns, exclude_patterns, size, force)
        job = self.jobs.start(real, include_patterns=include_patterns,
                              exclude_patterns=exclude_patterns, max_file_size=size,
                              force=force, reset_options=reset_options)
        if self.project is not None:
            self.project.ask(real)  # searched by default from now on, beside the project
        wait = float(self.settings.server.index_wait_seconds)
        return job_answer(await follow(job, ctx, wait), wait, self.budget)

    def index_status(
        self,
        job_id: Annotated[str | None, Field(description=(
            "A job id from `index_repository`; omit to list every job of this server."))] = None,
        wait_seconds: Annotated[float, Field(ge=0, le=600, description=(
            "With job_id: wait up to this many seconds for the job to finish."))] = 0,
    ) -> Annotated[CallToolResult, schemas.IndexStatusOutput]:
        """Progress and results of background index jobs, plus when each repository was last
        indexed."""
        chosen = [self.jobs.get(job_id)] if job_id else self.jobs.jobs()
        snaps = [j.wait(wait_seconds) if job_id else j.snapshot() for j in chosen]
        return answer(status_md.render_jobs([job_out(s) for s in snaps], fresh=self.fresh(),
                                            budget=self.budget, single=job_id is not None))

    def search(
        self,
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
        repos = self.scope(repository, all_repos or named)
        if repository and not self.settings.search.zoekt_url and (
                repository not in (roots := self.service.repo_roots())):
            raise not_indexed(repository, set(roots))
        scoped = scoped_query(query, repos) if repos else query
        page = self.service.lexical(scoped, limit=limit, context_lines=contextLines, cursor=cursor)
        r = page.result
        at = cursor_at(cursor or page.next_cursor, page.offset, lambda n: self.service.lexical(
            scoped, limit=n, context_lines=contextLines).next_cursor, limit)
        notes = [*r.notes, *self.scope_note(repository, all_repos or named, repos)]
        return answer(md.render_search(
            query, r.files, match_count=r.match_count, file_count=r.file_count,
            duration_ms=r.duration_ms, partial=r.partial, notes=notes,
            next_cursor=page.next_cursor, cursor_at=at, fresh=self.fresh(repos),
            budget=self.budget))

    def semantic_search(
        self,
        query: Annotated[str, Field(min_length=1, description=(
            "What you are looking for, in natural language, e.g. 'where are HTTP retries "
            "configured'. Identifiers in the question help."))],
        mode: Annotated[Literal["hybrid", "semantic", "keyword", "lexical"], Field(description=(
            "hybrid (default) fuses meaning and keyword matches; semantic = meaning only; "
            "keyword = ranked word matches only; lexical = the query is Zoekt syntax."
        ))] = "hybrid",
        limit: Annotated[int, Field(ge=1, le=100, description="Results per page.")] = (
            SEARCH_DEFAULTS.default_limit),  # the server's `search.default_limit` (TOOLS)
        cursor: Annotated[str | None, Field(description=(
            "`next_cursor` of the previous page, to continue."))] = None,
        repository: Annotated[str | None, Field(description=(
            "Only this repository (a name from `list_repos`)."))] = None,
        path: Annotated[str | None, Field(description=(
            "Only paths matching this glob, e.g. 'src/**' or '*.py'."))] = None,
        language: Annotated[str | None, Field(description=(
            "Only this language, e.g. 'python', 'typescript', 'go', 'markdown'."))] = None,
        all_repos: Annotated[bool, Field(description=ALL_REPOS)] = False,
        explain: Annotated[bool, Field(description=(
            "Hybrid mode: also each result's features and their contributions to its score "
            "(why it ranks there)."))] = False,
    ) -> Annotated[CallToolResult, schemas.SemanticOutput]:
        """Find code and docs by meaning (hybrid semantic + keyword ranking by default). Each
        result gives its location, line-numbered snippet and the engines that found it;
        identical copies of a text answer once, naming the other places (`also_in`)."""
        # A lexical query naming its repositories (`repo:`) gets no default scope.
        all_repos = all_repos or (mode == "lexical" and names_repositories(query))
        repos = self.scope(repository, all_repos)

        def run(n: int | None, c: str | None, why: bool = False) -> Any:
            return self.service.search(query, mode=mode, limit=n, cursor=c,
                                       repositories=repos, path_glob=path, language=language,
                                       explain=why)

        page = run(limit, cursor, explain)
        offset = int(page.stats.get("offset", 0))
        at = cursor_at(cursor or page.next_cursor, offset, lambda n: run(n, None).next_cursor,
                       limit)
        rendered = md.render_hits(
            query, page.mode, page.results, offset=offset,
            notes=[*page.notes, *self.scope_note(repository, all_repos, repos)],
            next_cursor=page.next_cursor, cursor_at=at, fresh=self.fresh(repos),
            budget=self.budget)
        if explain and mode == "hybrid":
            rendered = md.with_explain(rendered, page.stats.get("explain") or [], offset)
        return answer(rendered)

    def search_symbols(
        self,
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
        repos = self.scope(repository, all_repos)
        page = self.service.symbols(query, kinds=kinds, max_items=max_items,
                                    start_index=start_index, pagination_id=pagination_id,
                                    repositories=repos)
        return answer(md.render_symbols(page, kinds=kinds, max_items=max_items,
                                        pagination_id=pagination_id, fresh=self.fresh(repos),
                                        budget=self.budget))

    def find_references(
        self,
        symbol: Annotated[str, Field(min_length=1, description=SYMBOL)],
        by_name: Annotated[bool, Field(description=(
            "Every whole-word text match of the name instead of the resolved references "
            "(for what resolution cannot see: dynamic calls, other languages)."))] = False,
        language: Annotated[str | None, Field(description=(
            "With by_name: only matches in this language (default: the definition's)."
        ))] = None,
        repository: Annotated[str | None, Field(description="Only this repository.")] = None,
        limit: Annotated[int, Field(ge=1, le=1000, description=(
            "Maximum usages to collect."))] = 100,
        cursor: Annotated[str | None, Field(description=(
            "`next_cursor` of the previous page, to continue."))] = None,
        all_repos: Annotated[bool, Field(description=ALL_REPOS)] = False,
    ) -> Annotated[CallToolResult, graph_md.GraphRefsOutput]:
        """The references of one definition, resolved through imports, self/this and
        constructed variables: each labelled call / import / inherit / reference /
        override, grouped by file, with the definition it is in. A name several
        definitions bear is an error listing them: name one (Class.method or PATH:LINE)."""
        if language is not None and not by_name:  # resolved: the definition's language
            raise ValidationError(f"language {language!r} goes with by_name: true only",
                                  hint="Resolved references are in the definition's language; "
                                       "set by_name: true for text matches in one language.",
                                  details={"field": "language", "value": language})
        repos = self.scope(repository, all_repos)
        params = {"symbol": symbol, "by_name": by_name, "language": language,
                  "repository": repository, "all_repos": all_repos}
        offset = decode_cursor(cursor, params)[0] if cursor else 0
        if by_name:
            refs = graph_md.by_name_refs(self.service.references(
                symbol, language=language, repositories=repos, limit=min(offset + limit, 2000)))
        else:
            refs = self.service.graph_refs(symbol, repositories=repos,
                                           limit=min(offset + limit, 2000))
        return answer(graph_md.render_graph_refs(
            refs, offset=offset, cursor_at=lambda n: encode_cursor(params, n, limit),
            fresh=self.fresh(repos), budget=self.budget))

    def find_callers(
        self,
        symbol: Annotated[str, Field(min_length=1, description=SYMBOL)],
        depth: Annotated[int, Field(ge=1, le=6, description=(
            "Levels of callers: 1 direct callers, 2 their callers too, ..."))] = 1,
        repository: Annotated[str | None, Field(description="Only this repository.")] = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="Calls per page.")] = 200,
        cursor: Annotated[str | None, Field(description=(
            "`next_cursor` of the previous page, to continue."))] = None,
        all_repos: Annotated[bool, Field(description=ALL_REPOS)] = False,
    ) -> Annotated[CallToolResult, graph_md.CallsOutput]:
        """What calls a definition (resolved call sites and the functions they are in), as a
        tree `depth` levels deep: who to check before changing it."""
        return answer(self._calls_page("callers", cursor, symbol, depth, repository,
                                       all_repos, limit))

    def find_callees(
        self,
        symbol: Annotated[str, Field(min_length=1, description=SYMBOL)],
        depth: Annotated[int, Field(ge=1, le=6, description=(
            "Levels of callees: 1 what it calls, 2 what those call too, ..."))] = 1,
        repository: Annotated[str | None, Field(description="Only this repository.")] = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="Calls per page.")] = 200,
        cursor: Annotated[str | None, Field(description=(
            "`next_cursor` of the previous page, to continue."))] = None,
        all_repos: Annotated[bool, Field(description=ALL_REPOS)] = False,
    ) -> Annotated[CallToolResult, graph_md.CallsOutput]:
        """What a definition calls, resolved to the definitions called (calls that resolve to
        nothing indexed are marked unresolved), as a tree `depth` levels deep."""
        return answer(self._calls_page("callees", cursor, symbol, depth, repository,
                                       all_repos, limit))

    def _calls_page(self, direction: str, cursor: str | None, symbol: str, depth: int,
                    repository: str | None, all_repos: bool, limit: int) -> schemas.Rendered:
        """One page of a call tree: `limit` calls (breadth first) after those the cursor
        says were listed; its cursor continues after the calls it lists."""
        params = {"symbol": symbol, "direction": direction, "depth": depth,
                  "repository": repository, "all_repos": all_repos}
        offset = decode_cursor(cursor, params)[0] if cursor else 0
        repos = self.scope(repository, all_repos)
        calls = self.service.calls(symbol, direction=direction, depth=depth,
                                   repositories=repos, limit=min(offset + limit, MAX_LIMIT))
        return graph_md.render_calls(
            calls, offset=offset, limit=limit,
            cursor_at=lambda n: encode_cursor(params, n, limit) if n < MAX_LIMIT else None,
            fresh=self.fresh(repos), budget=self.budget)

    def trace_call_path(
        self,
        source: Annotated[str, Field(min_length=1, description=(
            "Where the chain starts: " + SYMBOL))],
        target: Annotated[str, Field(min_length=1, description=(
            "Where the chain ends: " + SYMBOL))],
        depth: Annotated[int, Field(ge=1, le=6, description=(
            "The longest chain looked for, in calls."))] = 5,
        repository: Annotated[str | None, Field(description="Only this repository.")] = None,
        limit: Annotated[int, Field(ge=1, le=100, description=(
            "Chains per page."))] = 5,
        cursor: Annotated[str | None, Field(description=(
            "`next_cursor` of the previous page, to continue."))] = None,
        all_repos: Annotated[bool, Field(description=ALL_REPOS)] = False,
    ) -> Annotated[CallToolResult, graph_md.CallPathOutput]:
        """The shortest chains of calls from one definition to another (how does A reach
        B?), each call with its site."""
        repos = self.scope(repository, all_repos)
        params = {"source": source, "target": target, "depth": depth,
                  "repository": repository, "all_repos": all_repos}
        offset = decode_cursor(cursor, params)[0] if cursor else 0
        paths = self.service.call_path(source, target, depth=depth, repositories=repos,
                                       limit=min(offset + limit, MAX_LIMIT))
        return answer(graph_md.render_call_paths(
            paths, offset=offset, limit=limit,
            cursor_at=lambda n: encode_cursor(params, n, limit) if n < MAX_LIMIT else None,
            fresh=self.fresh(repos), budget=self.budget))

    def search_files(
        self,
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
        repos = self.scope(repository, all_repos)
        page = self.service.files(pattern, limit=limit, cursor=cursor, repositories=repos)
        r = page.result
        at = cursor_at(cursor or page.next_cursor, page.offset, lambda n: self.service.files(
            pattern, limit=n, repositories=repos).next_cursor, limit)
        return answer(md.render_files(
            pattern, r.files, offset=page.offset, file_count=r.file_count,
            duration_ms=r.duration_ms, next_cursor=page.next_cursor, cursor_at=at,
            fresh=self.fresh(repos), budget=self.budget))

    def file_content(
        self,
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
        fc = self.service.file_content(repository, path, branch=branch,
                                       start_line=start_line, end_line=end_line)
        return answer(md.render_file(fc, budget=self.budget))

    def list_repos(
        self,
        filter: Annotated[str | None, Field(max_length=MAX_FILTER_LENGTH, description=(
            "Optional filter pattern to match repository names (regex supported)"))] = None,
    ) -> Annotated[CallToolResult, schemas.ReposOutput]:
        """List indexed repositories with file counts, size, branches, symbol support, when
        each was last indexed and whether a re-index is running."""
        listing = self.service.list_repos(filter)
        return answer(status_md.render_repos(listing, name_filter=filter, budget=self.budget))

    def get_health(self) -> Annotated[CallToolResult, dict[str, Any]]:
        """Health of the index and search backends: store state, model, counts, per-repository
        freshness and embedding coverage, the Zoekt backend when configured, and the
        project this server runs in (its repository, index job and watcher), if any."""
        health = self.service.health()
        health["project"] = self.project.info() if self.project is not None else None
        return answer(status_md.render_health(health, budget=self.budget))


TOOLS: tuple[tuple[str, ToolAnnotations], ...] = (
    ("index_repository", INDEXING),
    ("index_status", READ_ONLY),
    ("search", READ_ONLY),
    ("semantic_search", READ_ONLY),
    ("search_symbols", READ_ONLY),
    ("find_references", READ_ONLY),
    ("find_callers", READ_ONLY),
    ("find_callees", READ_ONLY),
    ("trace_call_path", READ_ONLY),
    ("search_files", READ_ONLY),
    ("file_content", READ_ONLY),
    ("list_repos", READ_ONLY),
    ("get_health", READ_ONLY),
)
"""The tool table: each tool (a `Tools` method) and its annotations, in `tools/list` order.
A new tool is a method of `Tools` and a row here."""

SETTING_DEFAULTS: dict[tuple[str, str], Callable[[Settings], Any]] = {
    ("semantic_search", "limit"): lambda s: s.search.default_limit,
}
"""(tool, argument) -> its default, read from the server's settings."""

_SERVED: weakref.WeakKeyDictionary[MCPServer[Any], Tools] = weakref.WeakKeyDictionary()
"""Each built server's tools (`client_roots` reads their settings through the request)."""


def build_server(
    service: UseCases, jobs: JobManager | None = None, *, project: ProjectScope | None = None
) -> MCPServer[Any]:
    """An `MCPServer` named `ctxd` exposing every tool of `TOOLS` over `service` (`Tools`
    gives the arguments); `jobs` is created when not given."""
    tools = Tools(service, jobs or JobManager(service), project)
    server: MCPServer[Any] = MCPServer("ctxd", title="ctxd code search", version=package_version(),
                                       instructions=INSTRUCTIONS)
    server.middleware.append(ArgumentErrors(server))
    _SERVED[server] = tools
    for name, annotations in TOOLS:
        server.add_tool(tools.tool(name), annotations=annotations)
    return server
