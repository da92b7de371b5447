"""Background index jobs: `index_repository` runs that outlive the call that started them.

`JobManager(service)` runs `Service.index` on one worker thread (indexing is serialised
by the index's write lock anyway, and one thread means one SQLite connection for all
jobs). `start(path, ...)` returns an `IndexJob` at once. A second request for a path
that is already queued or running joins that job when its arguments are the same; with
other arguments (patterns, size limit) it is queued to run after it (`after` names the
job it waits for), so the new arguments are never silently dropped.
`IndexJob.wait_for_change(version, timeout)` blocks until the job reports progress or
finishes, so the MCP tool can relay progress notifications without polling, and return
a job id when the caller's wait time runs out; `index_status` reads the same jobs.

Also provides the pure decisions `index_roots(...)` (the one root policy: which folders
`index_repository` may index, per transport), `allowed_roots(...)` / `check_allowed(...)`
and `overall_progress(...)` (one monotonic progress value over the walk and embed phases,
as MCP progress must only grow).

Invariants:
- A job's fields change only under its condition variable; readers get immutable
  `JobSnapshot`s whose `version` grows with every change.
- A job never raises into the server: its outcome is `stats` or a `CtxdError`; an
  unexpected exception is logged with its traceback and kept as `internal_error`
  without the exception text.
- Finished jobs are kept (the newest `keep`) so `index_status` can report results.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ctxd.indexer.errors import CtxdError, JobNotFound, PathOutsideRoot
from ctxd.indexer.models import IndexStats, Progress, now_rfc3339
from ctxd.indexer.walk.pathguard import is_inside
from ctxd.indexer.walk.rootguard import check_index_root
from ctxd.indexer.walk.walker import validate_root, validate_walk_options
from ctxd.server.config import ServerOptions
from ctxd.server.use_cases import UseCases

log = logging.getLogger(__name__)


class JobState(StrEnum):
    """Where a background index job is."""

    QUEUED = "queued"
    """Waiting for the index worker (another job is running)."""
    RUNNING = "running"
    """Walking, chunking or embedding."""
    SUCCEEDED = "succeeded"
    """Finished; `stats` holds the result."""
    FAILED = "failed"
    """Stopped with an error; `error` says why."""


@dataclass(frozen=True, slots=True)
class JobSnapshot:
    """An immutable view of a job at one moment."""

    job_id: str
    path: str
    state: JobState
    phase: str
    """`queued`, `walk`, `embed` or `done`."""
    progress: int
    """Work items done over both phases (files walked + checkpoints embedded); never decreases."""
    total: int | None
    """Work items in all, once known (after the walk)."""
    message: str
    started_at: str
    finished_at: str | None
    stats: IndexStats | None
    error: CtxdError | None
    version: int
    include_patterns: tuple[str, ...] = ()
    exclude_patterns: tuple[str, ...] = ()
    max_file_size: int | None = None
    after: str | None = None
    """The job of the same path, with other arguments, that this one was queued behind."""
    reset_options: bool = False

    @property
    def finished(self) -> bool:
        return self.state in (JobState.SUCCEEDED, JobState.FAILED)


def overall_progress(
    walked: int, embed_done: int, embed_total: int | None, previous: int = 0
) -> tuple[int, int | None]:
    """One progress value over both phases: (files walked + checkpoints embedded, total).

    The total is known once embedding starts (files walked + checkpoints to embed). The
    value never goes below `previous`, because MCP requires progress to increase.
    """
    value = max(previous, walked + embed_done)
    total = None if embed_total is None else max(value, walked + embed_total)
    return value, total


@dataclass(slots=True)
class _JobData:
    path: str
    include_patterns: tuple[str, ...]
    exclude_patterns: tuple[str, ...]
    max_file_size: int | None
    reset_options: bool = False
    after: str | None = None
    force: bool = False
    state: JobState = JobState.QUEUED
    phase: str = "queued"
    walked: int = 0
    embed_done: int = 0
    embed_total: int | None = None
    progress: int = 0
    total: int | None = None
    message: str = "waiting for the index worker"
    started_at: str = field(default_factory=now_rfc3339)
    finished_at: str | None = None
    stats: IndexStats | None = None
    error: CtxdError | None = None
    version: int = 0


class IndexJob:
    """One background index run; thread-safe."""

    def __init__(self, job_id: str, data: _JobData) -> None:
        self.job_id = job_id
        self._data = data
        self._cond = threading.Condition()

    def snapshot(self) -> JobSnapshot:
        with self._cond:
            d = self._data
            return JobSnapshot(
                job_id=self.job_id, path=d.path, state=d.state, phase=d.phase,
                progress=d.progress, total=d.total, message=d.message,
                started_at=d.started_at, finished_at=d.finished_at, stats=d.stats,
                error=d.error, version=d.version, include_patterns=d.include_patterns,
                exclude_patterns=d.exclude_patterns, max_file_size=d.max_file_size,
                after=d.after, reset_options=d.reset_options,
            )

    def wait_for_change(self, version: int, timeout: float) -> JobSnapshot:
        """Block until the job's version differs from `version`, it finishes, or `timeout`."""
        deadline = time.monotonic() + max(timeout, 0.0)
        with self._cond:
            while self._data.version == version and self._data.state not in (
                JobState.SUCCEEDED, JobState.FAILED
            ):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
        return self.snapshot()

    def wait(self, timeout: float) -> JobSnapshot:
        """Block until the job finishes or `timeout` seconds pass."""
        deadline = time.monotonic() + max(timeout, 0.0)
        with self._cond:
            while self._data.state not in (JobState.SUCCEEDED, JobState.FAILED):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
        return self.snapshot()

    # -- updates from the worker thread ---------------------------------------------------

    def _change(self, **values: object) -> None:
        with self._cond:
            for k, v in values.items():
                setattr(self._data, k, v)
            self._data.version += 1
            self._cond.notify_all()

    def _on_progress(self, p: Progress) -> None:
        with self._cond:
            d = self._data
            if p.phase == "walk":
                d.walked = max(d.walked, p.done)
                message = f"walking: {d.walked} files" + (f" ({p.message})" if p.message else "")
            elif p.phase == "chunk":  # every file's text written: chunking the new ones
                message = f"chunking: {p.done}/{p.total} files (all searchable as text)"
            elif p.phase == "embed":
                d.embed_done, d.embed_total = p.done, p.total
                message = f"embedding: {p.done}/{p.total} checkpoints"
            else:
                message = "finishing"
            d.progress, d.total = overall_progress(
                d.walked, d.embed_done, d.embed_total, d.progress
            )
            d.phase, d.message = p.phase, message
            d.version += 1
            self._cond.notify_all()


class JobManager:
    """Starts, dedupes and remembers background index jobs for one `Service`."""

    def __init__(self, service: UseCases, *, keep: int = 50) -> None:
        self.service = service
        self.keep = keep
        self._jobs: dict[str, IndexJob] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._queue: queue.SimpleQueue[IndexJob | None] = queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        self._stopping = threading.Event()

    def start(
        self,
        path: Path,
        *,
        include_patterns: Sequence[str] | None = None,
        exclude_patterns: Sequence[str] | None = None,
        max_file_size: int | None = None,
        force: bool = False,
        reset_options: bool = False,
    ) -> IndexJob:
        """Queue an index run of `path` (already resolved and checked), or join the last
        one queued or running for the same path when it has the same arguments (joining an
        earlier one would let a later run with other arguments have the last word). With
        other arguments the new run is queued after it (the worker runs jobs in order)."""
        args = (tuple(include_patterns or ()), tuple(exclude_patterns or ()), max_file_size,
                reset_options)
        with self._lock:
            pending = [j.snapshot() for j in self._jobs.values()]
            pending = [s for s in pending if s.path == str(path) and not s.finished]
            last = pending[-1] if pending else None
            if last is not None and (last.include_patterns, last.exclude_patterns,
                                     last.max_file_size, last.reset_options) == args:
                return self._jobs[last.job_id]
            after = last.job_id if last is not None else None
            job = IndexJob(f"idx-{next(self._ids)}",
                           _JobData(str(path), *args, after=after, force=force))
            if after is not None:
                job._data.message = f"queued after job {after} (same path, other arguments)"
            self._jobs[job.job_id] = job
            self._forget_old()
            if self._worker is None:
                # A daemon thread: a job in flight must not keep the process alive at exit
                # (the index is crash-safe; the next run resumes).
                self._worker = threading.Thread(target=self._work, name="ctxd-index", daemon=True)
                self._worker.start()
        self._queue.put(job)
        return job

    def get(self, job_id: str) -> IndexJob:
        """The job with this id.

        Raises:
            JobNotFound: unknown id (e.g. from before a server restart).
        """
        with self._lock:
            job = self._jobs.get(job_id)
            known = list(self._jobs)
        if job is None:
            raise JobNotFound(
                f"Job not found: {job_id}",
                hint="Call `index_status` without a job_id to list this server's jobs; job ids "
                "do not survive a server restart (`list_repos` shows what is indexed).",
                details={"field": "job_id", "value": job_id, "known": known[-10:]},
            )
        return job

    def jobs(self) -> list[IndexJob]:
        """Every remembered job, oldest first."""
        with self._lock:
            return list(self._jobs.values())

    def shutdown(self, wait: float | None = None) -> bool:
        """Take no more jobs.

        Without `wait` the worker finishes the queued jobs and stops. With `wait`, the
        running job is asked to stop at its next checkpoint (committed files are whole;
        the next index run resumes the rest), queued jobs are dropped, and the worker is
        joined for up to `wait` seconds, so that no indexing (and no model call) is in
        flight when the process exits: interpreter shutdown under a running torch call
        aborts the process.

        Returns:
            True when no worker is running any more.
        """
        if wait is not None:
            self._stopping.set()
        self._queue.put(None)
        worker = self._worker
        if wait is not None and worker is not None:
            worker.join(wait)
        return worker is None or not worker.is_alive()

    def _work(self) -> None:
        while (job := self._queue.get()) is not None:
            if self._stopping.is_set():
                job._change(state=JobState.FAILED, phase="done", finished_at=now_rfc3339(),
                            message="not started: the server stopped")
                continue
            self._run(job)

    def _forget_old(self) -> None:
        finished = [j for j in self._jobs.values() if j.snapshot().finished]
        for job in finished[: max(0, len(self._jobs) - self.keep)]:
            del self._jobs[job.job_id]

    def _run(self, job: IndexJob) -> None:
        d = job.snapshot()
        force = job._data.force
        job._change(state=JobState.RUNNING, phase="walk", message="starting")
        try:
            stats = self.service.index(
                d.path,
                include_patterns=list(d.include_patterns) or None,
                exclude_patterns=list(d.exclude_patterns) or None,
                max_file_size=d.max_file_size,
                reset_options=d.reset_options,
                progress=job._on_progress,
                lock_wait=None,
                should_stop=self._stopping.is_set,
                force=force,
            )
        except CtxdError as err:
            job._change(state=JobState.FAILED, phase="done", error=err,
                        message=f"{err.code}: {err.message}", finished_at=now_rfc3339())
        except Exception:
            log.exception("index job %s for %s failed", job.job_id, d.path)
            failure = CtxdError(
                "indexing failed with an unexpected error",
                hint="This is a bug in ctxd; the server log (stderr) has the traceback.",
                details={"job_id": job.job_id},
            )
            job._change(state=JobState.FAILED, phase="done", error=failure,
                        message=failure.message, finished_at=now_rfc3339())
        else:
            message = ("stopped: the server is shutting down; the next index run resumes"
                       if stats.stopped else "done")
            job._change(state=JobState.SUCCEEDED, phase="done", stats=stats, message=message,
                        finished_at=now_rfc3339())


# -- which folders may be indexed ------------------------------------------------------------


def root_from_uri(uri: str) -> Path | None:
    """The folder of a `file://` root URI (None for other schemes)."""
    parts = urlsplit(uri)
    if parts.scheme != "file":
        return None
    return Path(unquote(parts.path))


def index_roots(
    options: ServerOptions, client_roots: Sequence[str] | None, cwd: Path
) -> tuple[Path, ...]:
    """The folders `index_repository` may index: the one root policy of the MCP server.

    - `server.allowed_roots`, when configured: on every transport, and nothing else.
    - Else over stdio: the client's process runs as this very user, who started the server
      (in `cwd`): the `file://` roots the client declares, else `cwd`.
    - Else over HTTP: none. A network client, whoever it is, never widens what the server
      may read: roots it declares are ignored and `force` does not help (it only lets a
      configured root reach `/` or a home directory); `check_allowed` then refuses every
      path and says which setting to make.
    """
    if options.transport == "http" and not options.allowed_roots:
        return ()
    return allowed_roots(options.allowed_roots, client_roots, cwd)


def allowed_roots(
    configured: Sequence[str], client_roots: Sequence[str] | None, cwd: Path
) -> tuple[Path, ...]:
    """The folders `index_repository` may index, resolved (symlinks followed).

    Configured `server.allowed_roots` win; else the `file://` roots the MCP client
    declared; else the server's working directory.
    """
    if configured:
        chosen = [Path(p).expanduser() for p in configured]
    else:
        from_client = [r for r in (root_from_uri(u) for u in client_roots or ()) if r is not None]
        chosen = from_client or [cwd]
    return tuple(dict.fromkeys(p.resolve() for p in chosen))


def check_allowed(path: str, roots: Sequence[Path]) -> Path:
    """Resolve `path` (relative to the first root; `~` expanded; symlinks followed) and
    check that it lies inside one of `roots`.

    Raises:
        PathOutsideRoot: the resolved path is outside every allowed root.
    """
    if not roots:
        raise PathOutsideRoot(
            f"path {path} cannot be indexed: this HTTP server has no allowed roots",
            hint="Over HTTP only the folders the server's own configuration names may be "
            "indexed: start it with `server.allowed_roots` (CTXD_SERVER_ALLOWED_ROOTS=/path/a,"
            "/path/b), or index with `ctxd index PATH` on the server's machine.",
            details={"field": "path", "path": path, "allowed_roots": []},
        )
    given = Path(path).expanduser()
    real = (given if given.is_absolute() else roots[0] / given).resolve()
    if any(is_inside(str(root), str(real)) for root in roots):
        return real
    names = ", ".join(str(r) for r in roots)
    raise PathOutsideRoot(
        f"path {path} is outside the allowed roots ({names})",
        hint=f"Index a folder inside one of: {names}. The server's `server.allowed_roots` "
        "setting (or the roots your MCP client declares) decides which folders may be indexed.",
        details={"field": "path", "path": path, "resolved": str(real),
                 "allowed_roots": [str(r) for r in roots]},
    )


def validate_request(
    service: UseCases,
    path: Path,
    include_patterns: Sequence[str] | None,
    exclude_patterns: Sequence[str] | None,
    max_file_size: int | None,
    force: bool = False,
) -> None:
    """Check an index request before a job is queued (the same checks `Service.index`
    runs first), so bad input is answered at once instead of from a job.

    Raises:
        ValidationError: the path does not exist or is not a folder, is `/` or a home
            directory without `force`, a bad glob, or a bad `max_file_size`.
    """
    validate_root(path)
    check_index_root(path, force=force)
    walk = service.settings.walk
    if include_patterns:
        walk = replace(walk, include_patterns=tuple(include_patterns))
    if exclude_patterns:
        walk = replace(walk, exclude_patterns=tuple(exclude_patterns))
    if max_file_size is not None:
        walk = replace(walk, max_file_size=max_file_size)
    validate_walk_options(walk)
