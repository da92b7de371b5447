"""Code graphs made in a helper process while the pipeline chunks the next files.

The graph's extraction is Python walking every node of a file's tree, on the core that
also chunks and writes; a full run over many code files leaves another core idle.
`GraphWorker` hands a parsed file's definitions and the bytes its tree was parsed from
(`ParsedSource`, less the tree) to one helper process (`serve`: this module run by the
same interpreter, reading jobs on its stdin and answering on its stdout, pickled), which
parses the bytes again (tree-sitter alone: the chunker's definitions come along) and
extracts and encodes the graph (`row_of`); the pipeline takes the row when it writes the
file (`Pending.row`), so the graph still goes in the file's own transaction.

Invariants: a row made by the helper is the row made in-process (the same bytes give the
same tree; the same definitions, the same extraction); a helper that is still starting,
has failed or died makes nothing worse: the file's graph is made in-process instead
(`submit` gives None while the helper is not ready or is gone; `Pending.row` falls back
on any error); one helper per process at most (`shared_worker`), only on a machine with
two cores or more, ended by `close_all` (at interpreter exit too) or when its parent dies
(its stdin ends).
"""

from __future__ import annotations

import atexit
import logging
import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
from concurrent.futures import Future
from typing import IO

import tree_sitter

from ctxd.indexer.chunk.grammars import load_grammar
from ctxd.indexer.chunk.syntax import Definition, ParsedSource
from ctxd.indexer.graph import FileGraph, encode, graph_of, link_keys

__all__ = ["GraphWorker", "Job", "Pending", "close_all", "job_of", "row_of", "serve",
           "shared_worker"]

log = logging.getLogger(__name__)

Row = tuple[bytes, tuple[str, ...]]
"""An encoded graph and its link keys (`indexer.store.records.GraphRow`'s fields)."""

READY = -1
"""The job number of the helper's first answer: started, its imports done."""
MAX_BEHIND = 8
"""Jobs the helper may have unanswered; one more file's graph is made in-process (the
helper is slower than the chunking: a busy machine), so the pipeline never waits long."""


Job = tuple[str, list[Definition], bytes, str]
"""A parsed file less its tree: the language, the chunker's definitions, the bytes parsed,
and its path in its repository (a relative import's keys name the folder it climbs to:
`indexer.graph.links`)."""

_PARSERS: dict[str, tree_sitter.Parser] = {}


def row_of(language: str, definitions: list[Definition], source: bytes, path: str) -> Row:
    """The graph row of a file the chunker parsed, from its definitions and the bytes it
    parsed (parsed again here), at `path` in its repository. What the helper runs; also
    the in-process fallback."""
    parser = _PARSERS.get(language)
    if parser is None:
        grammar = load_grammar(language)
        if grammar is None:
            raise ValueError(f"no grammar for {language!r}")
        parser = _PARSERS[language] = tree_sitter.Parser(grammar)
    parsed = ParsedSource(definitions, parser.parse(source), source)
    graph = graph_of(language, parsed) or FileGraph(language)
    return encode(graph), tuple(link_keys(graph, path))


def job_of(language: str, parsed: ParsedSource, path: str) -> Job:
    """What the helper is sent of a parsed file at `path` in its repository."""
    return language, parsed.definitions, parsed.source, path


def serve() -> None:
    """The helper's loop: `(number, job)` in, `(number, row, error)` out, until its
    stdin ends. Whatever else writes to stdout goes to stderr (the answers own it); ^C is
    its parent's to handle (the helper ends with its stdin), and it logs nothing."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.getLogger().addHandler(logging.NullHandler())
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    jobs = sys.stdin.buffer
    pickle.dump((READY, None, None), answers)
    answers.flush()
    while True:
        try:
            number, job = pickle.load(jobs)
        except (EOFError, OSError):
            return
        try:
            answer: tuple[int, Row | None, str | None] = (number, row_of(*job), None)
        except Exception as exc:  # the parent makes this file's graph itself
            answer = (number, None, f"{type(exc).__name__}: {exc}")
        pickle.dump(answer, answers)
        answers.flush()


class Pending:
    """A file's graph row on its way from the helper."""

    __slots__ = ("future", "job")

    def __init__(self, future: Future[Row], job: Job) -> None:
        self.future = future
        self.job = job

    def row(self) -> Row:
        """The helper's row, waited for; made in-process if the helper failed; an empty
        graph if that fails too (it runs when the file's batch is written: the file is
        indexed without its graph rather than its batch lost)."""
        try:
            return self.future.result()
        except Exception as exc:  # a dead or broken helper: the graph is made here
            log.warning("the graph helper failed (%s); extracting in-process", exc)
        try:
            return row_of(*self.job)
        except Exception:
            log.exception("the code graph of a %s file failed", self.job[0])
            return encode(FileGraph(self.job[0])), ()


class GraphWorker:
    """One helper process making graph rows (`submit`), started at construction."""

    def __init__(self) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        self._proc = subprocess.Popen(
            [sys.executable, "-c", "from ctxd.indexer.graph.worker import serve; serve()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, close_fds=True)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._jobs: IO[bytes] = self._proc.stdin
        self._lock = threading.Lock()
        self._outbox: queue.SimpleQueue[tuple[int, Job] | None] = queue.SimpleQueue()
        self._waiting: dict[int, Future[Row]] = {}
        self._next = 0
        self._ready = False
        self._gone = False
        self._answered = threading.Event()
        """Set at the helper's first answer, or at its end."""
        self._owner = os.getpid()
        """The process whose helper it is (a forked child's copy has no threads: unusable)."""
        self._reader = threading.Thread(target=self._read, args=(self._proc.stdout,),
                                        name="ctxd-graph-helper", daemon=True)
        self._reader.start()
        self._feeder = threading.Thread(target=self._feed, name="ctxd-graph-jobs",
                                        daemon=True)
        self._feeder.start()

    @property
    def ready(self) -> bool:
        """Whether the helper has started and answered (a starting one takes a moment)."""
        return self._ready and not self._gone and self._owner == os.getpid()

    def wait_ready(self, timeout: float) -> bool:
        """Wait until the helper has started (or ended); whether it is ready."""
        self._answered.wait(timeout)
        return self.ready

    def submit(self, language: str, parsed: ParsedSource, path: str) -> Pending | None:
        """The graph row of the parsed file at `path` in its repository, made by the
        helper (None: not ready, gone, or `MAX_BEHIND` files behind: make it in-process).
        Never blocks."""
        if not self.ready or len(self._waiting) >= MAX_BEHIND:
            return None
        future: Future[Row] = Future()
        job = job_of(language, parsed, path)
        with self._lock:  # (`_read` fails every job registered before it ends)
            if self._gone:
                return None
            number, self._next = self._next, self._next + 1
            self._waiting[number] = future
        self._outbox.put((number, job))
        return Pending(future, job)

    def _feed(self) -> None:
        """The jobs into the helper's stdin, in order, until `close` (None)."""
        try:
            while (item := self._outbox.get()) is not None:
                pickle.dump(item, self._jobs)
                self._jobs.flush()
        except (OSError, ValueError) as exc:  # the helper died: `_read` fails the jobs
            log.warning("the graph helper is gone (%s); extracting in-process", exc)
            self._gone = True
        finally:
            try:
                self._jobs.close()
            except OSError:
                pass

    def _read(self, answers: IO[bytes]) -> None:
        """The answers, each to its job's future; at the helper's end, every job still
        waiting fails (its graph is then made in-process)."""
        try:
            while True:
                number, row, error = pickle.load(answers)
                if number == READY:
                    self._ready = True
                    self._answered.set()
                    continue
                with self._lock:
                    future = self._waiting.pop(number)
                if error is None:
                    future.set_result(row)
                else:
                    future.set_exception(RuntimeError(error))
        except Exception:  # EOF: the helper ended (or died)
            pass
        finally:
            answers.close()
            self._answered.set()
            with self._lock:
                self._gone = True
                waiting, self._waiting = self._waiting, {}
            for future in waiting.values():
                future.set_exception(RuntimeError("the graph helper ended"))
            try:  # reaped now, not left a zombie until the next run's helper
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass

    def close(self) -> None:
        """End the helper: it finishes the jobs it has, then sees its stdin end."""
        self._gone = True
        self._outbox.put(None)  # the feeder closes the helper's stdin after the jobs
        self._feeder.join(timeout=30)
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._reader.join(timeout=5)


_LOCK = threading.Lock()
_SHARED: list[GraphWorker] = []


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def shared_worker() -> GraphWorker | None:
    """The process's one helper, started at the first call (None on a one-core machine,
    where a helper only adds the second parse, or where it cannot start)."""
    if cores() < 2:
        return None
    with _LOCK:
        if _SHARED and _SHARED[0]._owner != os.getpid():
            _SHARED.clear()  # a forked child's copy of its parent's: the parent's to end
        if _SHARED and _SHARED[0]._gone:
            _SHARED.pop().close()
        if not _SHARED:
            try:
                _SHARED.append(GraphWorker())
            except OSError as exc:
                log.warning("no graph helper (%s); extracting in-process", exc)
                return None
        return _SHARED[0]


def close_all() -> None:
    """End the process's helper, if one was started (here, not in a parent)."""
    with _LOCK:
        while _SHARED:
            worker = _SHARED.pop()
            if worker._owner == os.getpid():
                worker.close()


atexit.register(close_all)
