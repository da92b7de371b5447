"""How an MCP tool answers: its errors, its results, its cursors and its index jobs.

`adapter(fn)` makes a tool's failures readable: a `CtxdError` becomes a `ToolError`
whose text is `{code}: {message}` + hint + details (the model reads an `is_error` result
it can act on); anything else is logged with its traceback on stderr and reaches the
model only as `internal_error`. `answer(rendered)` is the `CallToolResult` of rendered
Markdown plus its structured content; `cursor_at` the cursor after the first `n`
results of a page (when the budget cuts it); `follow` waits on an index job relaying
its progress, `job_answer` / `job_out` say where it stands. Used by
`server.mcp.tools.Tools`, whose methods are the tools.
"""

import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, ListRootsResult, TextContent

from ctxd.indexer.errors import CtxdError
from ctxd.search.cursor import with_offset
from ctxd.server.jobs import IndexJob, JobSnapshot, JobState
from ctxd.server.mcp import markdown_status as status_md
from ctxd.server.mcp import schemas

__all__ = ["adapter", "answer", "cursor_at", "follow", "job_answer", "job_out", "root_uris"]

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])


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
