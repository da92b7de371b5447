"""`ctxd ui`'s web application: `build_app(service, gate)` -> a Starlette app.

An edge like the CLI and the MCP server: every answer comes from the `UseCases` it is
given (the daemon's client, or an in-process `Service` with `--no-daemon`), rendered to
HTML here (`results`, `fileview`, `repos_view`) or to JSON under `/api/` for the page's
script. `security.Guard` wraps it all (host check, session cookie, Origin on POST, CSP);
the POST endpoints check the form's CSRF token too.

Addresses: `/` search (`?q=&mode=&repo=&path=&lang=&cursor=`); `/file/REPO/PATH` a file
(`#L10-L20` selects lines; `?sym=NAME&at=LINE` adds that symbol's references, callers
and callees: `symbol_view`); `/def?name=&repo=&lang=` an identifier's definition
(redirects to it when there is one); `/symbol?name=` a symbol's definitions and
references; `/repos` the repositories (POST `/repos/index|reindex|remove|skipped`);
`/api/search`, `/api/explain`, `/api/repos`, `/api/progress` (server-sent events of index
runs); `/static/ui.js|ui.css`.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.convertors import PathConvertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

from ctxd.indexer.errors import CtxdError, ErrorCode, ValidationError
from ctxd.indexer.walk.rootguard import check_index_root
from ctxd.indexer.walk.walker import validate_root
from ctxd.search.models import SymbolItem
from ctxd.server.jobs import JobManager, JobSnapshot
from ctxd.server.ui import fileview, repos_view
from ctxd.server.ui.highlight import MAX_HIGHLIGHT_CHARS, plain_lines, warm
from ctxd.server.ui.html import (
    CHUNK_LINES,
    chunk_lines,
    e,
    error_box,
    file_chunks,
    file_url,
    layout,
    search_form,
)
from ctxd.server.ui.outline import outline
from ctxd.server.ui.results import hits_html, more_link, results_html
from ctxd.server.ui.security import Gate, Guard
from ctxd.server.ui.symbol_view import symbol_panel
from ctxd.server.use_cases import UseCases

STATIC = Path(__file__).resolve().parent / "static"
STATIC_FILES = {"ui.js": "text/javascript; charset=utf-8", "ui.css": "text/css; charset=utf-8"}
DEFAULT_MODE = "hybrid"
COLOUR_KEY = re.compile(r"[0-9a-f]{32}")
STATUS_OF = {ErrorCode.NOT_FOUND: 404, ErrorCode.VALIDATION: 400, ErrorCode.QUERY_ERROR: 400,
             ErrorCode.INVALID_CURSOR: 400, ErrorCode.LOCKED: 409}


@dataclass
class Ui:
    """What the endpoints share: the use cases, the gate, the index runs started here."""

    service: UseCases
    gate: Gate
    jobs: JobManager = field(init=False)
    colouring: fileview.Colouring = field(default_factory=fileview.Colouring)
    skipped: dict[str, dict[str, int]] = field(default_factory=dict)
    """Skipped files by reason, per repository, from checks (dry runs) made on this page;
    a real run's counts are kept in the index (`status()`'s `skipped`)."""

    def __post_init__(self) -> None:
        self.jobs = JobManager(self.service)

    def page(self, title: str, body: str, *, active: str = "", status: int = 200) -> Response:
        return HTMLResponse(layout(title, body, csrf=self.gate.csrf, active=active),
                            status_code=status)

    def failure(self, err: CtxdError, title: str = "Error") -> Response:
        if "Refused" in type(err).__name__:  # a secret, ignored or over-size file
            status = 403
        else:
            status = STATUS_OF.get(err.code, 500 if err.code == ErrorCode.INTERNAL else 400)
        return self.page(title, f"<h1>{e(title)}</h1>{error_box(err.message, err.hint)}",
                         status=status)


def search_params(request: Request) -> dict[str, str]:
    q = request.query_params
    mode = q.get("mode") or DEFAULT_MODE
    return {"q": q.get("q", ""), "mode": mode, "repo": q.get("repo", ""),
            "path": q.get("path", ""), "lang": q.get("lang", "")}


def run_search(ui: Ui, params: dict[str, str], cursor: str | None) -> tuple[Any, float]:
    started = time.perf_counter()
    page = ui.service.search(
        params["q"], mode=params["mode"], cursor=cursor,
        repositories=[params["repo"]] if params["repo"] else None,
        path_glob=params["path"] or None, language=params["lang"] or None,
        context_lines=2 if params["mode"] == "lexical" else None)
    return page, (time.perf_counter() - started) * 1000


def home(ui: Ui, request: Request) -> Response:
    params = search_params(request)
    repos = sorted(ui.service.repo_roots())
    form = search_form(params["q"], params["mode"], params["repo"], params["path"],
                       params["lang"], repos)
    if not params["q"]:
        hint = ('<p class="muted">Search by meaning (<em>hybrid</em>, <em>semantic</em>), by '
                "words (<em>keyword</em>), or with Zoekt syntax (<em>lexical</em>: "
                "<code>sym:Retry lang:python</code>). "
                f"{len(repos)} repositories indexed; see <a href=\"/repos\">Repositories</a>."
                "</p>")
        return ui.page("Search", f'<h1 class="sr-only">Search</h1>{form}'
                       f'<section id="results" aria-label="Results">{hint}</section>',
                       active="search")
    try:
        page, took = run_search(ui, params, request.query_params.get("cursor"))
        results = results_html(page, params, took)
        status = 200
    except CtxdError as err:
        results, status = error_box(err.message, err.hint), STATUS_OF.get(err.code, 400)
    return ui.page(f"{params['q']}", f'<h1 class="sr-only">Search results</h1>{form}'
                   f'<section id="results" aria-label="Results">{results}</section>',
                   active="search", status=status)


def api_search(ui: Ui, request: Request) -> Response:
    params = search_params(request)
    cursor = request.query_params.get("cursor")
    try:
        page, took = run_search(ui, params, cursor)
    except CtxdError as err:
        return JSONResponse({"error": err.code, "message": err.message, "hint": err.hint,
                             "results": error_box(err.message, err.hint)},
                            status_code=STATUS_OF.get(err.code, 400))
    out: dict[str, Any] = {"next_cursor": page.next_cursor, "count": len(page.results),
                           "took_ms": round(took, 1), "notes": page.notes}
    started = time.perf_counter()
    if request.query_params.get("part") == "items":  # the next page, appended by the script
        first_text = request.query_params.get("first", "0")
        first = int(first_text) if first_text.isdigit() else 0
        out.update(items=hits_html(page, first_index=first), more=more_link(page, params))
    else:
        out["results"] = results_html(page, params, took)
    body = json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode()
    render = (time.perf_counter() - started) * 1000
    # where the answer's time went, for the browser's devtools and bench_ui (same origin)
    timing = f"search;dur={took:.1f}, render;dur={render:.1f}"
    return Response(body, media_type="application/json", headers={"server-timing": timing})


def api_explain(ui: Ui, request: Request) -> Response:
    q = request.query_params.get("q", "")
    mode = request.query_params.get("mode") or DEFAULT_MODE
    try:
        return JSONResponse({"text": ui.service.explain(q, mode)})
    except CtxdError as err:
        return JSONResponse({"text": f"{err.message}\n{err.hint or ''}".strip()},
                            status_code=STATUS_OF.get(err.code, 400))


def file_view(ui: Ui, request: Request) -> Response:
    repo, path = request.path_params["repo"], request.path_params["path"]
    try:
        fc = ui.service.file_content(repo, path)
    except CtxdError as err:
        return ui.failure(err, f"{repo}/{path}")
    cached = ui.colouring.cached(fc)
    repo_row = next((r for r in ui.service.freshness() if r["repository"] == repo), None)
    modified = None
    if fc.working_tree and fc.index_state == "changed":
        root = ui.service.repo_roots().get(repo)
        try:
            modified = os.stat(os.path.join(root, fc.path)).st_mtime if root else None
        except OSError:
            modified = None
    state = fileview.state_line(fc, repo_row, modified)
    if len(fc.content) > MAX_HIGHLIGHT_CHARS:
        state += '<p class="note">Shown plain (not coloured): the file is very large.</p>'
    sym, at = request.query_params.get("sym", ""), request.query_params.get("at", "")
    place = f"{fc.path}:{at}" if at.isdigit() else None
    panel = symbol_panel(ui.service, sym, repo, fc.language, place) if sym else ""
    job = (ui.colouring.start(fc) if cached is None and fc.total_lines > fileview.INLINE_LINES
           and len(fc.content) <= MAX_HIGHLIGHT_CHARS else None)
    page = layout(f"{repo}/{path}", fileview.file_page_body(fc, state, panel, job),
                  csrf=ui.gate.csrf)
    head, tail = page.split(fileview.CODE)
    if cached is not None:
        lines, items = cached
        return HTMLResponse(head + "".join(file_chunks(lines))
                            + tail.replace(fileview.OUTLINE, fileview.outline_html(items)))

    def streamed() -> Iterator[str]:  # the first lines go out while the rest are lexed
        yield head
        lines: list[str] = []
        yield from file_chunks(ui.colouring.stream(fc, lines))
        items = outline(fc.language, fc.content)
        ui.colouring.keep(fc, lines, items)
        yield tail.replace(fileview.OUTLINE, fileview.outline_html(items))

    def plain_first(job: fileview.ColourJob) -> Iterator[str]:
        # a long file: its first block coloured, the rest plain; their colours follow
        yield head
        first = job.head()
        yield from file_chunks(itertools.chain(
            first, itertools.islice(plain_lines(fc.content), len(first), None)))
        yield tail.replace(fileview.OUTLINE, fileview.OUTLINE_WAIT)
        job.finish()  # the outline, then the rest's colours

    return StreamingResponse(streamed() if job is None else plain_first(job),
                             media_type="text/html; charset=utf-8")


async def api_colour(ui: Ui, request: Request) -> Response:
    """What a long file's first view left to follow (`fileview.ColourJob`), one JSON line
    per part as each is made: its outline (`{"outline": html}`), then its blocks' colours
    (`{"block": i, "html": ...}`) from block `?from=`; 404 when the server holds no such
    colouring (restarted, or dropped)."""
    key = request.path_params["key"]
    start_text = request.query_params.get("from", "1")
    start = int(start_text) if start_text.isdigit() else 1
    job = ui.colouring.job(key) if COLOUR_KEY.fullmatch(key) else None
    cached = ui.colouring.by_key(key) if job is None and COLOUR_KEY.fullmatch(key) else None
    if job is None and cached is None:
        return JSONResponse({"error": "not_found", "message": "No colouring in progress for "
                             "this key: reload the page."}, status_code=404)

    async def blocks() -> AsyncIterator[str]:
        if job is not None:
            items = await anyio.to_thread.run_sync(job.outline_part)
        else:
            assert cached is not None
            items = fileview.outline_html(cached[1])
        if items is not None:
            yield json.dumps({"outline": items}, ensure_ascii=False) + "\n"
        index = start
        while True:
            if job is not None:
                part = await anyio.to_thread.run_sync(job.block, index)
            else:
                assert cached is not None
                lines = cached[0][index * CHUNK_LINES:(index + 1) * CHUNK_LINES]
                part = chunk_lines(lines, index * CHUNK_LINES + 1) if lines else None
            if part is None:
                return
            yield json.dumps({"block": index, "html": part}, ensure_ascii=False) + "\n"
            index += 1

    return StreamingResponse(blocks(), media_type="application/x-ndjson",
                             headers={"x-accel-buffering": "no"})


def definition(ui: Ui, request: Request) -> Response:
    """An identifier's definition: straight to it when one is found (in the repository
    asked first), else the symbol page listing the candidates."""
    q = request.query_params
    name, repo, lang = q.get("name", ""), q.get("repo", ""), q.get("lang", "")
    if not name:
        return ui.failure(ValidationError("name is required, e.g. /def?name=Retry"))
    found = exact_definitions(ui, name, repo)
    if len(found) == 1:
        d = found[0]
        return RedirectResponse(file_url(d.repository, d.path, d.line, d.end_line, sym=name,
                                         at=str(d.line)), status_code=303)
    return symbol_page(ui, name, repo, lang, found)


def exact_definitions(ui: Ui, name: str, repo: str) -> list[SymbolItem]:
    for scope in ([repo], None) if repo else (None,):
        try:
            page = ui.service.symbols(name, max_items=50, repositories=scope)
        except CtxdError:
            return []
        found = [i for i in page.items if i.name == name]
        if found:
            return found
    return []


def def_url(d: SymbolItem, name: str) -> str:
    return file_url(d.repository, d.path, d.line, d.end_line, sym=name, at=str(d.line))


def symbol_page(ui: Ui, name: str, repo: str, lang: str,
                found: list[SymbolItem] | None = None) -> Response:
    found = exact_definitions(ui, name, repo) if found is None else found
    defs = "".join(
        f'<li><a href="{e(def_url(d, name))}">'
        f'<span class="kind">{e(d.kind)}</span> {e(d.container + "." if d.container else "")}'
        f'{e(d.name)}</a> <span class="muted">{e(d.repository)}/{e(d.path)}:{d.line}</span>'
        "</li>" for d in found)
    listing = (f'<ul class="refs">{defs}</ul>' if defs else
               f'<p class="muted">No definition of <code>{e(name)}</code> is indexed.</p>')
    body = (f"<h1>Symbol <code>{e(name)}</code></h1><h2>Definitions ({len(found)})</h2>"
            f"{listing}{symbol_panel(ui.service, name, repo or None, lang or None)}")
    return ui.page(name, body)


def symbol(ui: Ui, request: Request) -> Response:
    q = request.query_params
    return symbol_page(ui, q.get("name", ""), q.get("repo", ""), q.get("lang", ""))


def repos_page(ui: Ui, request: Request) -> Response:
    del request
    body = repos_view.repos_body(ui.service.status(), ui.service.freshness(), ui.skipped,
                                 [j.snapshot() for j in ui.jobs.jobs()], ui.gate.csrf)
    return ui.page("Repositories", body, active="repos")


async def repos_action(ui: Ui, request: Request) -> Response:
    form = await request.form()
    csrf = form.get("csrf")
    if not ui.gate.csrf_ok(csrf if isinstance(csrf, str) else None):
        return ui.page("Refused", "<h1>Refused</h1><p>The form's token did not match this "
                       "session: reload the page and try again.</p>", status=403)
    action = request.path_params["action"]
    if action not in repos_view.CONFIRM_TEXT and action != "skipped":
        return not_found(ui, request)
    target = str(form.get("path" if action == "index" else "name", "")).strip()
    if not target:
        return ui.failure(ValidationError(f"{action}: no repository or folder given"))
    return await anyio.to_thread.run_sync(
        act, ui, action, target, form.get("confirm") == "yes")


def act(ui: Ui, action: str, target: str, confirmed: bool) -> Response:
    try:
        if action == "skipped":  # read-only: a dry run counts what the walk would skip
            root = ui.service.repo_roots().get(target, target)
            stats = ui.service.index(root, dry_run=True)
            ui.skipped[stats.repository or target] = dict(stats.files_skipped)
            return RedirectResponse(f"/repos#repo-{target}", status_code=303)
        if not confirmed:
            body = repos_view.confirm_body(action, target,
                                           "path" if action == "index" else "name",
                                           ui.gate.csrf)
            return ui.page("Confirm", body, active="repos")
        if action == "remove":
            ui.service.remove(target)
            ui.skipped.pop(target, None)
            return RedirectResponse("/repos", status_code=303)
        folder = ui.service.repo_roots().get(target, target) if action == "reindex" else target
        check_index_root(folder)
        ui.jobs.start(validate_root(folder))
        return RedirectResponse("/repos#jobs", status_code=303)
    except CtxdError as err:
        return ui.failure(err, "Could not " + {"index": "index", "reindex": "re-index",
                                               "remove": "remove"}.get(action, "check"))


def api_repos(ui: Ui, request: Request) -> Response:
    del request
    return JSONResponse({"status": ui.service.status(), "freshness": ui.service.freshness(),
                         "jobs": [snapshot_json(j.snapshot()) for j in ui.jobs.jobs()]})


def snapshot_json(s: JobSnapshot) -> dict[str, Any]:
    return {"job": s.job_id, "path": s.path, "state": str(s.state), "phase": s.phase,
            "progress": s.progress, "total": s.total, "message": s.message,
            "finished": s.finished, "error": s.error.message if s.error else None,
            "files": s.stats.files_indexed if s.stats else None}


async def api_progress(ui: Ui, request: Request) -> Response:
    """Server-sent events: a `job` event whenever an index run started here changes, then
    `done` once none is running."""
    del request

    async def events() -> AsyncIterator[str]:
        seen: dict[str, int] = {}
        while True:
            # One snapshot per job and round: what is sent is what decides whether to go
            # on (a job that finishes after its snapshot is sent in the next round).
            jobs = {job.job_id: job for job in ui.jobs.jobs()}
            snaps = [job.snapshot() for job in jobs.values()]
            for s in snaps:
                if seen.get(s.job_id) != s.version:
                    seen[s.job_id] = s.version
                    if s.finished and s.stats is not None:  # the index keeps its counts
                        ui.skipped.pop(s.stats.repository, None)
                    yield f"event: job\ndata: {json.dumps(snapshot_json(s))}\n\n"
            live = [s for s in snaps if not s.finished]
            if not live:
                yield "event: done\ndata: {}\n\n"
                return
            await anyio.to_thread.run_sync(jobs[live[0].job_id].wait_for_change,
                                           live[0].version, 5.0)

    return StreamingResponse(events(), media_type="text/event-stream",
                             headers={"x-accel-buffering": "no"})


def static(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in STATIC_FILES:
        return Response("Not found.\n", status_code=404, media_type="text/plain")
    return FileResponse(STATIC / name, media_type=STATIC_FILES[name],
                        headers={"cache-control": "no-cache"})


def not_found(ui: Ui, request: Request) -> Response:
    err = CtxdError(f"No page at {request.url.path}.", hint="Start from the search page, /.")
    err.code = ErrorCode.NOT_FOUND
    return ui.failure(err, "Not found")


def warm_up() -> None:
    warm()
    outline("python", "def f():\n    pass\n")


class AnyPath(PathConvertor):
    """A path that may hold any character, a newline too (git allows one in a name;
    Starlette's `path` stops there, so such a file's own link answered 404)."""

    regex = "(?s:.*)"


def build_app(service: UseCases, gate: Gate) -> Guard:
    """The page's ASGI app over `service`, behind `gate`'s guard."""
    ui = Ui(service, gate)
    # the lexers' imports and rules, and the outline's parser, before the first page needs
    # them (a thread: the server answers meanwhile)
    threading.Thread(target=warm_up, name="ctxd-ui-warm", daemon=True).start()

    def sync(fn: Callable[[Ui, Request], Response]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            return await anyio.to_thread.run_sync(fn, ui, request)
        return endpoint

    def asynchronous(fn: Callable[[Ui, Request], Any]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            response: Response = await fn(ui, request)
            return response
        return endpoint

    register_url_convertor("anypath", AnyPath())
    routes = [
        Route("/", sync(home)),
        Route("/file/{repo}/{path:anypath}", sync(file_view)),
        Route("/def", sync(definition)),
        Route("/symbol", sync(symbol)),
        Route("/repos", sync(repos_page)),
        Route("/repos/{action:str}", asynchronous(repos_action), methods=["POST"]),
        Route("/api/search", sync(api_search)),
        Route("/api/explain", sync(api_explain)),
        Route("/api/repos", sync(api_repos)),
        Route("/api/progress", asynchronous(api_progress)),
        Route("/api/colour/{key}", asynchronous(api_colour)),
        Route("/static/{name}", static),
    ]
    app = Starlette(routes=routes)
    app.state.ui = ui

    async def missing(request: Request, exc: Exception) -> Response:
        del exc
        return await anyio.to_thread.run_sync(not_found, ui, request)

    app.add_exception_handler(404, missing)
    return Guard(app, gate)


__all__ = ["Gate", "Ui", "build_app"]
