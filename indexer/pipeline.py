"""Indexes one repository: walk -> read -> chunk -> store (phase 1), then embed (phase 2).

`Indexer(store, embedder, chunk_options).index(root, walk_options)` is the one entry
point (`ctxd index`, the MCP `index_repository` tool, the watcher). Phase 1 writes each
changed file's rows (text, checkpoints, symbols, its summary: `indexer.chunk.summary`),
several files to a commit (batches of 1, 2, 4, ... 64 files, or what waited 1 s:
`_CommitBatch`), so lexical and symbol search work at once. Where the store can
(`TextFirst`: SQLite), the walk writes each changed file's text and the files are chunked
after it (`_chunk_deferred`), so the whole tree is greppable before any chunking; the
walk's writes run on a thread of their own (`indexer.write_thread`: reading and judging
the next files overlaps SQLite's trigram inserts), with the trigram index's merging left
for after (`TextFirst.bulk_text`, `compact_text`). Elsewhere each file's rows are
written all-or-nothing. Phase 2 embeds the checkpoint and
summary texts that have no vector yet, longest-first-sorted batches, committed as it goes,
so semantic search covers more and more while it runs.

Invariants:
- Incremental and idempotent: a file whose (size, mtime_ns) is unchanged is not read;
  one whose content hash is unchanged is not rewritten; files gone from disk or now
  excluded leave the index, files under a folder that cannot be read stay (`not_walked`).
  Running twice gives the same index.
- Crash-safe: every committed file is whole, or (text first) has its text and a row
  marked unfinished that the next run rewrites; a killed run resumes where it stopped
  (unchanged files are recognised by stat, pending embeddings are found by hash).
- A text already embedded anywhere in the index (same hash) is never embedded again.
- A bad file is recorded (`Skipped` or `FileFailure`) and the run goes on.

About 800 lines: the two phases share one run's statistics, stop signal and commits, and
phase 1's two passes (text first, then checkpoints) share its batches and its list of
files; what a file becomes before it is stored is `indexer.checkpoints`, what it is for
`indexer.walk.judge`.
"""

from __future__ import annotations

import errno
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, replace
from functools import cached_property, partial
from pathlib import Path
from types import TracebackType

from ctxd.indexer import coverage_claim
from ctxd.indexer.checkpoints import (
    ChunkedFile,
    checkpoints_of,
    embedding_input,
    graph_row,
    summary_of,
)
from ctxd.indexer.chunk.chunker import ChunkOptions
from ctxd.indexer.chunk.languages import (
    PARSED_BEFORE_RECORD,
    detect_language,
    parsed_languages,
)
from ctxd.indexer.embedder import Embedder
from ctxd.indexer.errors import ValidationError
from ctxd.indexer.graph.model import EXTRACTION as GRAPH_EXTRACTION
from ctxd.indexer.graph.specs import SPECS as GRAPH_LANGUAGES
from ctxd.indexer.graph.worker import GraphWorker, Pending, shared_worker
from ctxd.indexer.models import (
    Chunk,
    FileEntry,
    FileFailure,
    IndexStats,
    LargeFile,
    NotEmbedded,
    Progress,
    ProgressFn,
    RemovedFile,
    Skipped,
    SkipReason,
    WindowedFile,
    now_rfc3339,
)
from ctxd.indexer.store.protocol import IndexStore, TextFirst
from ctxd.indexer.store.records import GraphRow, RepoRow
from ctxd.indexer.store.sqlite.store import (
    NO_SUMMARY,
    FileRecord,
    StoredFile,
    serialize_vector,
)
from ctxd.indexer.walk.filefilter import FileFilter
from ctxd.indexer.walk.judge import FileJudge
from ctxd.indexer.walk.repo_options import EXPLICIT_KEY
from ctxd.indexer.walk.rootpin import identity_of, pinned_identity, root_moved
from ctxd.indexer.walk.textclass import RULES_VERSION, Role, short_lines
from ctxd.indexer.walk.walker import (
    WalkOptions,
    validate_root,
    validate_walk_options,
    walk,
)
from ctxd.indexer.write_thread import WriteThread

log = logging.getLogger(__name__)

GC_MIN_ORPHANS = 1000
"""Orphaned vectors are collected once there are this many (or 10% of all vectors)."""

HEADER_TOKEN_RESERVE = 2
"""[CLS] and [SEP]: added by the model to every input."""


def count_checkpoints(stats: IndexStats, path: str, kind: str, checkpoints: int) -> None:
    """Count one chunked file's checkpoints by kind, name it if it yields
    `LARGE_FILE_CHECKPOINTS` or more, and keep it if it is among the `TOP_FILES` that
    yield the most."""
    if not checkpoints:
        return
    if checkpoints >= LARGE_FILE_CHECKPOINTS:
        stats.large_files.append(LargeFile(path, checkpoints))
    stats.checkpoints_by_kind[kind] = stats.checkpoints_by_kind.get(kind, 0) + checkpoints
    top = stats.top_files
    if len(top) < TOP_FILES or checkpoints > top[-1].checkpoints:
        top.append(LargeFile(path, checkpoints))
        top.sort(key=lambda f: (-f.checkpoints, f.path))
        del top[TOP_FILES:]


PROGRESS_EVERY = 25
"""Walk progress is reported every this many files examined (admitted or refused)."""
PLAN_STEP = 512
"""Texts per token count of a dry run's plan (one `plan` progress report each)."""
REMOVED_SAMPLE = 50
"""How many removed files `IndexStats.removed_files` names."""
SKIPPED_SAMPLE = 100
"""How many skipped (and how many not-embedded) files `IndexStats` names."""
LARGE_FILE_CHECKPOINTS = 1000
"""A file that yields this many checkpoints is named in `IndexStats.large_files`."""
TOP_FILES = 10
"""How many files `IndexStats.top_files` names."""
FILES_PER_COMMIT = 64
"""Phase 1 writes the rows of up to this many files in one transaction (each file's still
all-or-nothing; the first batches are smaller: 1, 2, 4, ...): a commit per file cost a
third of phase 1, mostly FTS5 flushing and merging one small segment per file
(docs/BENCHMARKS.md, "Phase 1, continued")."""
CHUNK_READ_BATCH = 64
"""Texts read back per statement by phase 1's chunking pass."""
GRAPH_HELPER_FILES = 64
"""A full run with this many files to chunk has their code graphs made by a helper process
(`indexer.graph.worker`, on another core, started while the walk goes on) instead of in
the chunking loop; a smaller one (an edit, a small repository) makes them in-process."""
COMMIT_EVERY_S = 1.0
"""... or the files that have waited this long (seconds), so that search sees new files
soon."""
COMPACT_AFTER_TEXTS = 1000
"""A full run whose walk wrote at least this many texts, and at least half of all the
index's, merges the trigram index's segments after phase 1 (`TextFirst.compact_text`;
its walk left them unmerged: `bulk_text`)."""
PARSED_KEY = "parsed_languages"
"""The repository option that records which languages were cut by their syntax
(`indexer.chunk.languages.parsed_languages`): a full run chunks the files of a language
parsed since (a new grammar) or parsed otherwise since (`PARSE_REVISIONS`) again, so that
they get symbols and definition-aligned checkpoints without being edited."""
GRAPH_KEY = "graph_extraction"
"""The repository option that records which extractor made its code graphs
(`indexer.graph.model.EXTRACTION`): another one makes the next full run extract them all
again."""
TEXT_RULE_KEYS = ("lexical_only_rules", "lexical_only_patterns", "embed_allow",
                  "rules_version")
"""Walk options that decide a file's role (and the version of the built-in rules): a
repository whose stored values differ is re-read (`Role`s and secrets re-decided) even
where the stat is unchanged."""
REDECIDE_KEYS = (*TEXT_RULE_KEYS, GRAPH_KEY, PARSED_KEY)
"""Options whose change makes a full run decide every file again (its role, its chunks,
its code graph). A run records the new values only once it has gone through every file
and the backfills (a full run, not stopped); a partial run (the watcher's), a stopped or a
killed one keeps the old ones, so that the next full run re-decides the files it did not
reach."""


@dataclass(frozen=True, slots=True)
class _Deferred:
    """A file whose text the walk wrote, to chunk after it (`Indexer._chunk_deferred`)."""

    entry: FileEntry
    digest: str
    role: str


def _line_count(text: str) -> int:
    """Lines of a text (a last line without a newline counts)."""
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


@dataclass(frozen=True, slots=True)
class _FileRun:
    """What every file of one run is judged by."""

    judge: FileJudge
    recheck: bool
    """The text rules changed since the last run: ignore the stat shortcut."""
    rechunk: frozenset[str] = frozenset()
    """Languages parsed now but not when the repository was last indexed (`PARSED_KEY`):
    their files are chunked again even where unchanged."""


class _CommitBatch:
    """Phase-1 writes of several whole files, kept in memory and run in one transaction,
    all-or-nothing: each file's own `Store.transaction` joins it, without a savepoint of
    its own (an error drops the whole batch; FTS5 would flush at every savepoint). The
    write lock is held only while writing, never while the next file is chunked. Batches
    grow 1, 2, 4, ... up to `max_files`, so the first files are searchable at once; a
    batch is also written once its first file has waited `max_seconds`. Leaving the `with`
    block writes what is left; an exception drops it (the next run re-indexes it).

    `background`: the batches are written by a `WriteThread` while the caller goes on
    (the walk's text pass: reading and judging the next files overlaps the trigram
    writes); the caller must not use the store until the `with` block is left, which
    waits for the thread."""

    def __init__(self, store: IndexStore, max_files: int, max_seconds: float, *,
                 background: bool = False) -> None:
        self._store = store
        self._max_files = max(max_files, 1)
        self._max_seconds = max_seconds
        self._pending: list[Callable[[], object]] = []
        self._size = 1
        self._since = 0.0
        self._thread = WriteThread(store) if background else None

    def add(self, write: Callable[[], object]) -> None:
        """One file's writes."""
        if not self._pending:
            self._since = time.perf_counter()
        self._pending.append(write)
        if (len(self._pending) >= self._size
                or time.perf_counter() - self._since >= self._max_seconds):
            self.flush()

    def flush(self) -> None:
        pending, self._pending = self._pending, []
        if pending:
            if self._thread is not None:
                self._thread.submit(pending)
            else:
                with self._store.transaction(savepoints=False):  # dropped whole on error
                    for write in pending:
                        write()
            self._size = min(self._size * 2, self._max_files)

    def __enter__(self) -> _CommitBatch:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if kind is None:
                self.flush()
        finally:
            if self._thread is not None:
                self._thread.close(drop=kind is not None)


def _defer(deferred: list[_Deferred], item: _Deferred) -> None:
    """A file to chunk after the walk; at the `GRAPH_HELPER_FILES`th, the graph helper
    starts (while the walk goes on: it is ready when the chunking begins)."""
    deferred.append(item)
    if len(deferred) == GRAPH_HELPER_FILES:
        shared_worker()


def _replace_pending(replace_file: Callable[[GraphRow], object], pending: Pending) -> object:
    """`replace_file(graph)` once the graph helper has made the file's graph row (made
    in-process if the helper failed)."""
    data, keys = pending.row()
    return replace_file(GraphRow(data, keys))


def removal_reasons(
    gone: Iterable[str], skip_reasons: Mapping[str, str], root: Path
) -> list[RemovedFile]:
    """Why each removed file left the index: the walk's skip reason when it was walked and
    refused, `deleted` when it no longer exists, else `not_walked` (under a pruned or
    unreadable directory)."""
    return [
        RemovedFile(p, skip_reasons.get(p)
                    or ("not_walked" if os.path.lexists(root / p) else "deleted"))
        for p in gone
    ]


def not_walked(gone: list[str], unreadable: list[str], root: Path) -> set[str]:
    """The files of `gone` to keep in the index: those under a folder the walk could not
    read that is still there (`chmod 000`: its files were not walked, not deleted), and
    those whose very existence cannot be told (a folder on the way refuses a `stat`, as
    the watcher's single-path checks meet it). A folder that vanished loses its files."""
    folders = [p for p in unreadable if p == "." or os.path.lexists(root / p)]
    kept: set[str] = set()
    for path in gone:
        if any(f == "." or path.startswith(f + "/") for f in folders):
            kept.add(path)
            continue
        try:
            os.lstat(root / path)
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
                kept.add(path)
    return kept


def _note_kept(stats: IndexStats, kept: set[str]) -> None:
    """Say, on each unreadable folder's failure, how many indexed files under it were kept."""
    for i, failure in enumerate(stats.files_failed):
        folder = failure.file
        n = sum(1 for p in kept if folder == "." or p.startswith(folder + "/"))
        if n:
            stats.files_failed[i] = FileFailure(
                folder, f"{failure.error} (not walked: its {n} indexed files are kept)")


def _identity(real: str) -> str:
    """`rootpin.identity_of`, with a folder gone since it was validated as a bad path."""
    try:
        return identity_of(real)
    except OSError as exc:
        raise ValidationError(
            f"the folder {real} changed while it was opened: {exc.strerror}",
            hint="Check the path and index it again.",
            details={"field": "path", "path": real},
        ) from None


def candidates_of(
    root: Path, options: WalkOptions, paths: Iterable[str], *, pin: str | None = None
) -> Iterator[FileEntry | Skipped]:
    """What `walk` would yield for just these repo-relative paths (the watcher's batch):
    each is checked by the same policy, at the cost of one stat, not a walk of the tree.
    Paths that no longer exist yield nothing (they are removals, not failures). `pin`:
    the root's identity, as `walk` takes it."""
    policy = FileFilter(root, options, pin=pin)
    for path in sorted(paths):
        if os.path.lexists(root / path):
            yield policy.entry(path)


class Indexer:
    """Runs index passes against one store with one embedder."""

    def __init__(
        self,
        store: IndexStore,
        embedder: Embedder,
        chunk_options: ChunkOptions | None = None,
        *,
        embed_commit_every: int = 32,
        files_per_commit: int = FILES_PER_COMMIT,
        text_first: bool = True,
        embed_budget: int = 0,
    ) -> None:
        """
        Args:
            embed_commit_every: checkpoints embedded per commit. One embedder batch: each
                commit is a point where `should_stop` is honoured (server shutdown, a
                watcher with edits waiting), 0.3-0.6 s of work on this 2-core CPU (32
                texts at 53-111 texts/s, docs/BENCHMARKS.md).
            files_per_commit: files whose phase-1 rows commit together (at most
                `COMMIT_EVERY_S` apart); 1 commits each file on its own.
            text_first: where the store can (`TextFirst`), write every changed file's
                text during the walk and chunk after it, so that the whole tree is
                greppable before any chunking; False chunks each file as it is read.
            embed_budget: the most checkpoints one `index` run embeds (0: no limit,
                `embedding.run_budget`); the rest wait for the next runs, and
                `IndexStats.over_budget` says how many (a dry run too).
        """
        self.embed_budget = embed_budget
        self.store = store
        self.embedder = embedder
        limit = embedder.max_tokens - HEADER_TOKEN_RESERVE
        base = chunk_options or ChunkOptions()
        # Leave room for the path/symbol header; oversized inputs are re-split anyway.
        self.chunk_options = ChunkOptions(
            max_tokens=min(base.max_tokens, limit - 24),
            target_tokens=min(base.target_tokens, limit - 24),
            min_tokens=base.min_tokens,
            window_overlap_lines=base.window_overlap_lines,
            parse_budget_ms=base.parse_budget_ms,
        )
        self.input_limit = limit
        self.embed_commit_every = embed_commit_every
        self.files_per_commit = files_per_commit
        self.text_first = text_first
        self._graphs: GraphWorker | None = None
        """The graph helper of the chunking under way (`_chunk_deferred`'s pass, or a walk
        that chunks as it goes from its `GRAPH_HELPER_FILES`th file on), if any."""
        self._chunked = 0

    # -- phase 1 -------------------------------------------------------------------------

    def _pinned(self, root: Path | str, *, partial: bool) -> tuple[Path, RepoRow | None, str]:
        """The folder a run indexes, its stored repository (None: a new one) and the
        folder's identity now (`indexer.walk.rootpin`), which the run pins and records.

        A partial run (the watcher's) re-indexes a stored repository at its stored path,
        which must still be the folder indexed (or one of this user's re-created there:
        `rootpin`): it is never resolved again. A full run resolves the path it is given
        (the user's own request: a folder re-created at the same place is pinned anew),
        but a stored root given by its path that now leads elsewhere is refused rather
        than indexed as a new repository there.

        Raises:
            RootMoved: the stored root is no longer the folder indexed.
            ValidationError: a bad path (`validate_root`).
        """
        given = os.path.abspath(os.path.expanduser(str(root)))
        stored = self.store.repo_by_root(given)
        if partial and stored is not None:
            return Path(stored.root), stored, pinned_identity(stored.root, stored.root_id)
        root_path = validate_root(root)
        if stored is None:
            stored = self.store.repo_by_root(str(root_path))
        elif str(root_path) != given:
            raise root_moved(given, f"it now leads to {root_path}")
        return root_path, stored, _identity(str(root_path))

    def index(
        self,
        root: Path | str,
        options: WalkOptions,
        *,
        progress: ProgressFn | None = None,
        dry_run: bool = False,
        embed: bool = True,
        only_paths: Iterable[str] | None = None,
        should_stop: Callable[[], bool] | None = None,
        explicit: Iterable[str] = (),
    ) -> IndexStats:
        """Bring the index of `root` up to date.

        Args:
            root: the repository folder.
            options: walk policy (patterns, size limit, ignore files, sensitive files).
            progress: called as files are processed and chunks embedded.
            dry_run: walk and chunk, write nothing, embed nothing; report what would be done.
            embed: run phase 2 (False leaves embeddings pending, e.g. for a later batch).
            only_paths: when given, treat only these repo-relative paths as candidates
                (the watcher's changed set): each is checked by the walk's policy with one
                stat, no tree walk; other stored files are left alone.
            should_stop: polled between files and between embedding commits; when it
                returns True the run ends early (`stats.stopped`), leaving a consistent
                index that the next run completes.
            explicit: the names of the options in `options` that were given explicitly
                (stored with them: a plain refresh keeps those, `indexer.walk.repo_options`).

        Raises:
            ValidationError: bad root or options, before any work.
            ModelMismatch: the index was built with another model.
        """
        started = time.perf_counter()
        validate_walk_options(options)
        root_path, existing, root_id = self._pinned(root, partial=only_paths is not None)
        report = progress or (lambda _p: None)
        self.store.check_model(self.embedder.name)
        now = now_rfc3339()
        opts_json = {
            "include_patterns": list(options.include_patterns),
            "exclude_patterns": list(options.exclude_patterns),
            "max_file_size": options.max_file_size,
            "sensitive_excludes": options.sensitive_excludes,
            "sensitive_allow": list(options.sensitive_allow),
            "use_gitignore": options.use_gitignore,
            "lexical_only_rules": options.lexical_only_rules,
            "lexical_only_patterns": list(options.lexical_only_patterns),
            "embed_allow": list(options.embed_allow),
            "rules_version": RULES_VERSION,
            GRAPH_KEY: GRAPH_EXTRACTION,
            PARSED_KEY: parsed_languages(),
            EXPLICIT_KEY: sorted(set(explicit)),
        }
        held = dict(opts_json)  # what the repository records until this run has gone through
        rechunk: frozenset[str] = frozenset()
        if existing is not None:
            held.update({k: existing.options.get(k) for k in REDECIDE_KEYS})
            before: list[str] = existing.options.get(PARSED_KEY, sorted(PARSED_BEFORE_RECORD))
            held[PARSED_KEY] = before
            rechunk = frozenset(lang.partition("@")[0]  # `c@2`: the language is `c`
                                for lang in set(parsed_languages()) - set(before))
        run = _FileRun(FileJudge(root_path, options), recheck=existing is not None
                       and any(held[k] != opts_json[k] for k in TEXT_RULE_KEYS),
                       rechunk=rechunk)
        regraph = existing is not None and held[GRAPH_KEY] != GRAPH_EXTRACTION
        first_run = False
        if dry_run:
            repo_id, repo_name = (existing.id, existing.name) if existing else (-1, root_path.name)
        else:
            repo = self.store.upsert_repo(str(root_path), held, now, root_id)
            repo_id, repo_name = repo.id, repo.name
            first_run = repo.indexed_at is None
        stats = IndexStats(
            path=str(root_path),
            repository=repo_name,
            include_patterns=list(options.include_patterns),
            exclude_patterns=list(options.exclude_patterns),
            max_file_size=options.max_file_size,
            dry_run=dry_run,
        )
        stop = should_stop or (lambda: False)
        new_inputs = self._sync_files(
            root_path, options, repo_id, now, stats, report, dry_run=dry_run,
            wanted=None if only_paths is None else set(only_paths), should_stop=stop, run=run,
            pin=root_id,
        )
        if dry_run:
            stats.files_indexed = stats.files_updated + stats.files_unchanged
            stats.chunks_to_embed, stats.tokens_to_embed = self._dry_run_plan(new_inputs, report)
            stats.embed_budget = self.embed_budget
            if self.embed_budget:
                stats.over_budget = max(0, stats.chunks_to_embed - self.embed_budget)
        else:
            if not stats.stopped and only_paths is None:
                self.backfill_summaries(repo_id)
                self.backfill_graphs(repo_id, should_stop=stop, every=regraph)
                if held != opts_json and not stop():  # every file re-decided: record why
                    self.store.upsert_repo(str(root_path), opts_json, now, root_id)
            if embed and not stats.stopped:
                self.embed_pending(repo_id, progress=report, stats=stats, should_stop=stop,
                                   budget=self.embed_budget)
                total = self.store.vector_state()[0] if self.store.has_vectors() else 0
                self.store.gc_embeddings(min_orphans=max(GC_MIN_ORPHANS, total // 10))
                if not stats.stopped:  # searches need not count the coverage
                    coverage_claim.record(self.store)
            if not stats.stopped:
                # A partial run (the watcher's) that changed nothing leaves `indexed_at`.
                changed = (only_paths is None or first_run or stats.files_updated
                           or stats.files_removed or stats.chunks_embedded)
                self.store.mark_indexed(repo_id, now_rfc3339() if changed else None)
            counts = self.store.repo_counts(repo_id)
            stats.files_indexed = counts["files"]
            stats.checkpoints = counts["checkpoints"]
            stats.not_embedded, sample = self.store.lexical_only_files(repo_id, SKIPPED_SAMPLE)
            stats.not_embedded_files = [NotEmbedded(*row) for row in sample]
        stats.checkpoints_by_kind = dict(sorted(stats.checkpoints_by_kind.items(),
                                                key=lambda kv: (-kv[1], kv[0])))
        stats.indexed_at = now_rfc3339()
        stats.duration_ms = int((time.perf_counter() - started) * 1000)
        report(Progress("done", stats.files_indexed, stats.files_indexed))
        return stats

    def _sync_files(
        self,
        root: Path,
        options: WalkOptions,
        repo_id: int,
        now: str,
        stats: IndexStats,
        report: ProgressFn,
        *,
        dry_run: bool,
        wanted: set[str] | None,
        should_stop: Callable[[], bool],
        run: _FileRun,
        pin: str,
    ) -> dict[str, tuple[str, int | None]]:
        """Phase 1: walk, write changed files, remove vanished ones; counts go to `stats`.

        Returns, for a dry run, the embedding inputs (by hash) of new or changed
        checkpoints, with their word pieces where the chunker knows them; a real run
        writes them to the store instead.
        """
        stored = self.store.stored_files(repo_id) if repo_id >= 0 else {}
        skipped: Counter[str] = Counter()
        skip_reasons: dict[str, str] = {}  # stored files the walk now refuses
        unreadable: list[str] = []  # paths the walk could not read (folders among them)
        seen: set[str] = set()
        new_inputs: dict[str, tuple[str, int | None]] = {}
        done = examined = 0
        items = (walk(root, options, pin=pin) if wanted is None
                 else candidates_of(root, options, wanted, pin=pin))
        deferred: list[_Deferred] = []
        # Text first: the walk's writes run on their own thread (`indexer.write_thread`);
        # nothing below reads the store until the batch is closed.
        text_first = self._text_first(dry_run)
        bulk = nullcontext() if text_first is None or wanted is not None else (
            text_first.bulk_text())
        with bulk, _CommitBatch(self.store, self.files_per_commit, COMMIT_EVERY_S,
                                background=text_first is not None) as batch:
            for item in items:
                if should_stop():
                    stats.stopped, stats.stopped_in = True, "walk"
                    return new_inputs  # removals need a complete walk: left to the next run
                examined += 1
                if examined % PROGRESS_EVERY == 0:
                    # Refused files count too: a walk of a huge tree that admits little (or a
                    # dry run of one) still shows it is moving.
                    report(Progress("walk", done, None, f"{examined} examined, at {item.path}"))
                if isinstance(item, Skipped):
                    self._record_skip(item, skipped, stats)
                    if item.reason is SkipReason.UNREADABLE:
                        unreadable.append(item.path)
                    if item.path in stored:
                        skip_reasons[item.path] = item.reason.value
                    continue
                seen.add(item.path)
                outcome = self._index_file(item, repo_id, stored, now, dry_run, new_inputs, run,
                                           stats, batch, deferred)
                if isinstance(outcome, Skipped):
                    seen.discard(item.path)
                    self._record_skip(outcome, skipped, stats)
                    skip_reasons[item.path] = outcome.reason.value
                elif outcome:
                    stats.files_updated += 1
                    self._prepare_model(stats, dry_run)
                else:
                    stats.files_unchanged += 1
                done += 1
        report(Progress("walk", done, done))
        refused = self._chunk_deferred(deferred, repo_id, now, stats, report, should_stop)
        for path, why in refused:
            seen.discard(path)  # a file indexed before leaves with the removals below
            stats.files_updated -= 1
            self._record_skip(why, skipped, stats)
            skip_reasons[path] = why.reason.value
        if new := [p for p, _why in refused if p not in stored]:
            self.store.delete_files(repo_id, new)  # its text, written by the walk
        if stats.stopped:
            return new_inputs
        self._compact_text(text_first, len(deferred), full=wanted is None,
                           should_stop=should_stop)
        candidates = stored.keys() if wanted is None else (wanted & stored.keys())
        self._remove_gone(sorted(p for p in candidates if p not in seen), unreadable,
                          skip_reasons, root, repo_id, stats, dry_run=dry_run)
        stats.files_skipped = dict(sorted(skipped.items()))
        return new_inputs

    def _prepare_model(self, stats: IndexStats, dry_run: bool) -> None:
        """At the run's first changed file: its new texts will be embedded, so the embedder
        may start loading its model in a thread now (`ModelEmbedder.prepare`), while the
        walk, the text, trigrams and symbols go on; a run that changes nothing never
        loads it."""
        prepare = getattr(self.embedder, "prepare", None)
        if prepare is not None and stats.files_updated == 1 and not dry_run:
            prepare()

    def _text_first(self, dry_run: bool) -> TextFirst | None:
        """The store, where this run writes each file's text during the walk."""
        return (self.store if self.text_first and not dry_run
                and isinstance(self.store, TextFirst) else None)

    def _compact_text(self, store: TextFirst | None, written: int, *, full: bool,
                      should_stop: Callable[[], bool]) -> None:
        """After a full run's phase 1: merge the trigram index's segments if its walk
        wrote `COMPACT_AFTER_TEXTS` texts or more, at least half of the index's, or an
        earlier run's merge was stopped part-way. A stop request ends the merge at its
        next step (search answers the same part-merged; the next full run finishes it);
        the run then stops at its next check, as it would have without the merge."""
        if store is None or not full:
            return
        if store.text_merge_unfinished() or (
                written >= COMPACT_AFTER_TEXTS
                and 2 * written >= self.store.query("SELECT count(*) FROM files")[0][0]):
            store.compact_text(should_stop)

    def _remove_gone(self, gone: list[str], unreadable: list[str],
                     skip_reasons: Mapping[str, str], root: Path, repo_id: int,
                     stats: IndexStats, *, dry_run: bool) -> None:
        """Remove the stored files the walk did not see (keeping those under unreadable
        folders), with their reasons in `stats`."""
        if kept := not_walked(gone, unreadable, root):
            gone = [p for p in gone if p not in kept]
            _note_kept(stats, kept)
        removed = removal_reasons(gone, skip_reasons, root)
        stats.removed_reasons = dict(sorted(Counter(r.reason for r in removed).items()))
        stats.removed_files = removed[:REMOVED_SAMPLE]
        if dry_run:
            stats.files_removed = len(gone)
        elif gone:
            stats.files_removed = self.store.delete_files(repo_id, gone)

    @staticmethod
    def _record_skip(item: Skipped, skipped: Counter[str], stats: IndexStats) -> None:
        if item.reason is SkipReason.UNREADABLE:
            stats.files_failed.append(FileFailure(item.path, item.detail or "unreadable"))
        else:
            skipped[item.reason.value] += 1
            if skipped[item.reason.value] <= SKIPPED_SAMPLE:  # every reason gets its sample
                stats.skipped_files.append(item)
            if (item.reason is SkipReason.SENSITIVE
                    and len(stats.sensitive_files) < SKIPPED_SAMPLE):
                stats.sensitive_files.append(item.path)

    def _index_file(
        self,
        entry: FileEntry,
        repo_id: int,
        stored: dict[str, StoredFile],
        now: str,
        dry_run: bool,
        new_inputs: dict[str, tuple[str, int | None]],
        run: _FileRun,
        stats: IndexStats,
        batch: _CommitBatch,
        deferred: list[_Deferred],
    ) -> bool | Skipped:
        """Index one file; True if rows were (or would be) written, False if unchanged.

        The file is read and judged by `indexer.walk.judge` (secrets, role, size by role);
        a file whose role is lexical-only keeps its text (lexical search) but gets no
        checkpoints, symbols or summary. Where the store writes text first (`TextFirst`),
        a file to embed gets its text written now and joins `deferred`, chunked after the
        walk."""
        text_first = self._text_first(dry_run)
        old = stored.get(entry.path)
        rechunk = (old is not None and bool(run.rechunk)
                   and detect_language(entry.path) in run.rechunk)
        if (old is not None and not run.recheck and not rechunk and old.size == entry.size
                and old.mtime_ns == entry.mtime_ns):
            return False
        judged = run.judge.judge(entry)
        if isinstance(judged, Skipped):
            return judged
        text, role, why = judged.text, judged.role, judged.why
        digest = judged.digest  # == content_hash(text), hashed as read
        if old is not None and old.hash == digest and old.role == role.value and not rechunk:
            if not dry_run:
                batch.add(partial(self.store.touch_file, old.id, entry.size, entry.mtime_ns))
            return False
        if judged.redacted:  # indexed, with the secret's characters masked
            stats.files_masked += 1
            if len(stats.masked_files) < SKIPPED_SAMPLE:
                stats.masked_files.append(entry.path)
        if role.lexical_only:
            chunks = ChunkedFile(detect_language(entry.path, text), [], [])
        elif text_first is not None:
            # Greppable now; chunked after the walk (`_chunk_deferred`), text read back.
            record = FileRecord(path=entry.path, size=entry.size, mtime_ns=entry.mtime_ns,
                                hash=digest, language=detect_language(entry.path, text),
                                lines=_line_count(text), role=role.value)
            batch.add(partial(text_first.put_file_text, repo_id, record, text, now))
            _defer(deferred, _Deferred(entry, digest, role.value))
            return True
        else:
            found = self._chunk_reporting(entry.path, text, stats, role.value)
            if isinstance(found, Skipped):
                return found
            chunks = found
        if (role.lexical_only or role in (Role.CHANGELOG, Role.LONG_LINES)) and dry_run:
            stats.not_embedded[role.value] = stats.not_embedded.get(role.value, 0) + 1
            if len(stats.not_embedded_files) < SKIPPED_SAMPLE:
                stats.not_embedded_files.append(NotEmbedded(entry.path, role.value, why))
        return self._write_chunked(entry, text, digest, role.value, role.lexical_only, chunks,
                                   repo_id, now, stats, batch, new_inputs if dry_run else None)

    def _write_chunked(
        self,
        entry: FileEntry,
        text: str,
        digest: str,
        role: str,
        lexical_only: bool,
        chunks: ChunkedFile,
        repo_id: int,
        now: str,
        stats: IndexStats,
        batch: _CommitBatch,
        new_inputs: dict[str, tuple[str, int | None]] | None,
        *,
        text_written: bool = False,
    ) -> bool:
        """A chunked file's rows into the batch (a dry run: its inputs into `new_inputs`);
        `text_written`: `put_file_text` wrote its text already."""
        count_checkpoints(stats, entry.path, chunks.language, len(chunks.checkpoints))
        summary = NO_SUMMARY if lexical_only else summary_of(
            entry.path, chunks.language, text, chunks.symbols)
        if new_inputs is not None:
            new_inputs.update((c.hash, (c.input, c.tokens)) for c in chunks.checkpoints)
            if summary.text:
                new_inputs[summary.hash] = (summary.text, None)
            return True
        record = FileRecord(
            path=entry.path,
            size=entry.size,
            mtime_ns=entry.mtime_ns,
            hash=digest,
            language=chunks.language,
            lines=_line_count(text),
            role=role,
        )
        rows = ([(c.chunk, c.hash) for c in chunks.checkpoints], chunks.symbols, now, summary)
        if text_written:
            assert isinstance(self.store, TextFirst)
            replace = partial(self.store.replace_file, repo_id, record, None, *rows)
        else:
            replace = partial(self.store.replace_file, repo_id, record, text, *rows)
        if isinstance(chunks.graph, Pending):  # the row taken when the batch is written
            batch.add(partial(_replace_pending, replace, chunks.graph))
        else:
            batch.add(partial(replace, chunks.graph))
        return True

    def _chunk_deferred(
        self,
        deferred: list[_Deferred],
        repo_id: int,
        now: str,
        stats: IndexStats,
        report: ProgressFn,
        should_stop: Callable[[], bool],
    ) -> list[tuple[str, Skipped]]:
        """Phase 1's second pass: chunk the files whose text the walk wrote (greppable
        already), reading each text back, and write their checkpoints, symbols and
        summaries. Returns the files the chunker refused (they leave the index). Stops
        early when `should_stop` says so: the rest stay unfinished, and the next run
        rewrites them."""
        refused: list[tuple[str, Skipped]] = []
        if not deferred:
            return refused
        ids = {path: f.id for path, f in self.store.stored_files(repo_id).items()}
        total = len(deferred)
        report(Progress("chunk", 0, total, "every file is searchable as text; chunking"))
        self._graphs = shared_worker() if total >= GRAPH_HELPER_FILES else None
        try:
            return self._chunk_texts(deferred, ids, repo_id, now, stats, report,
                                     should_stop, refused)
        finally:
            self._graphs = None

    def _chunk_texts(
        self,
        deferred: list[_Deferred],
        ids: dict[str, int],
        repo_id: int,
        now: str,
        stats: IndexStats,
        report: ProgressFn,
        should_stop: Callable[[], bool],
        refused: list[tuple[str, Skipped]],
    ) -> list[tuple[str, Skipped]]:
        """`_chunk_deferred`'s loop: read the texts back in slices, chunk and write them."""
        total = len(deferred)
        with _CommitBatch(self.store, self.files_per_commit, COMMIT_EVERY_S) as batch:
            for start in range(0, total, CHUNK_READ_BATCH):
                part = deferred[start : start + CHUNK_READ_BATCH]
                texts = self.store.file_texts([ids[d.entry.path] for d in part])
                for n, item in enumerate(part, start):
                    if should_stop():
                        stats.stopped, stats.stopped_in = True, "walk"
                        return refused
                    if n % PROGRESS_EVERY == 0:
                        report(Progress("chunk", n, total, item.entry.path))
                    text = texts[ids[item.entry.path]]
                    found = self._chunk_reporting(item.entry.path, text, stats, item.role)
                    if isinstance(found, Skipped):
                        refused.append((item.entry.path, found))
                        continue
                    self._write_chunked(item.entry, text, item.digest, item.role, False,
                                        found, repo_id, now, stats, batch, None,
                                        text_written=True)
        report(Progress("chunk", total, total))
        return refused

    def _chunk_reporting(self, path: str, text: str, stats: IndexStats, role: str = ""
                         ) -> ChunkedFile | Skipped:
        """`chunk`, naming in `stats` a file cut into line windows for want of a parse; a
        file the chunker fails on is UNREADABLE (a bug, logged), the run goes on. A role
        embedded coarsely (`Role.embedded_lines`: a long changelog) keeps the checkpoints
        of its head only."""
        try:  # a file of mostly long lines: its short lines only (`Role.LONG_LINES`)
            chunks = self.chunk(path, short_lines(text) if role == Role.LONG_LINES else text)
        except Exception as exc:
            log.exception("chunking %s failed", path)
            return Skipped(path, SkipReason.UNREADABLE,
                           f"could not be chunked: {type(exc).__name__}: {exc}")
        if (last := Role(role).embedded_lines(text)) is not None:
            chunks = replace(chunks, checkpoints=[
                c for c in chunks.checkpoints if c.chunk.start_line <= last])
        if chunks.windows_reason and len(stats.windowed_files) < SKIPPED_SAMPLE:
            stats.windowed_files.append(WindowedFile(path, chunks.windows_reason))
        return chunks

    @cached_property
    def _tokens_add_up(self) -> bool:
        return bool(getattr(self.embedder, "tokens_add_up", False))

    def chunk(self, path: str, text: str) -> ChunkedFile:
        """The file's checkpoints, each embedding input fitting the model
        (`indexer.checkpoints.checkpoints_of`)."""
        self._chunked += 1
        if self._chunked == GRAPH_HELPER_FILES and self._graphs is None:
            self._graphs = shared_worker()  # a walk that chunks as it goes (no `TextFirst`)
        return checkpoints_of(path, text, self.chunk_options, self.embedder.count_tokens,
                              self.input_limit, tokens_add_up=self._tokens_add_up,
                              graphs=self._graphs)

    def _dry_run_plan(
        self, inputs: dict[str, tuple[str, int | None]], report: ProgressFn | None = None
    ) -> tuple[int, int]:
        """(texts, word pieces) a real run would embed: new hashes not already in the index.
        Texts whose count the chunker gave are summed, the others counted, in slices,
        each reported as `plan` progress."""
        known = {r[0] for r in self.store.query(
            "SELECT hash FROM embeddings UNION SELECT hash FROM summaries "
            "WHERE vector IS NOT NULL")}
        todo = [item for h, item in inputs.items() if h not in known]
        tokens = 0
        for start in range(0, len(todo), PLAN_STEP):
            if report is not None:
                report(Progress("plan", start, len(todo), "counting tokens to embed"))
            step = todo[start : start + PLAN_STEP]
            tokens += sum(n for _text, n in step if n is not None)
            tokens += sum(self.embedder.count_tokens([t for t, n in step if n is None]))
        if report is not None and todo:
            report(Progress("plan", len(todo), len(todo), "counting tokens to embed"))
        return len(todo), tokens

    def backfill_graphs(self, repo_id: int, *,
                        should_stop: Callable[[], bool] = lambda: False,
                        every: bool = False) -> int:
        """Write the code graphs of files indexed before the graph existed (`every`: of
        every file, indexed by an older extractor: `GRAPH_EXTRACTION`), parsed again from
        their stored text, `CHUNK_READ_BATCH` files a transaction; returns how many files
        got a row. Full runs only (a stop request ends it between batches; the next full
        run goes on with the files that have no row)."""
        todo = self.store.files_without_graph(repo_id, sorted(GRAPH_LANGUAGES), every=every)
        done = 0
        for start in range(0, len(todo), CHUNK_READ_BATCH):
            if should_stop():
                break
            part = todo[start : start + CHUNK_READ_BATCH]
            texts = self.store.file_texts([fid for fid, _p, _l in part])
            items = [(fid, graph_row(lang, texts[fid], self.chunk_options.parse_budget_ms))
                     for fid, _path, lang in part if fid in texts]
            self.store.put_graphs(repo_id, items)
            done += len(items)
        return done

    def backfill_summaries(self, repo_id: int) -> int:
        """Write the summaries of files indexed before summaries existed, from their stored
        text and symbols (no re-chunking); returns how many files got a row. Full runs
        only: a watcher's batch writes the summaries of the files it changes."""
        items = [
            (file_id, path, summary_of(path, language, text, symbols))
            for file_id, path, language, text, symbols in self.store.files_without_summary(
                repo_id)
        ]
        if items:
            self.store.put_summaries(repo_id, items)
        return len(items)

    # -- phase 2 -------------------------------------------------------------------------

    def embed_pending(
        self,
        repo_id: int | None = None,
        *,
        progress: ProgressFn | None = None,
        stats: IndexStats | None = None,
        should_stop: Callable[[], bool] | None = None,
        budget: int = 0,
    ) -> int:
        """Embed every checkpoint text and file summary without a vector (of one repo, or
        all), at most `budget` checkpoint texts when it is not 0 (the rest wait for the
        next call: `stats.over_budget`); returns how many texts were embedded
        (`stats.chunks_embedded` counts the checkpoint texts among them)."""
        report = progress or (lambda _p: None)
        # (hash, text): checkpoint texts first, then summaries (index >= n_chunks).
        pending = [
            (p.hash, embedding_input(p.path, Chunk(0, 0, p.text, symbol=p.symbol)))
            for p in self.store.pending_chunks(repo_id)
        ]
        if stats is not None:
            stats.embed_budget = budget
        if budget and len(pending) > budget:
            if stats is not None:
                stats.over_budget = len(pending) - budget
            del pending[budget:]
        n_chunks = len(pending)
        pending += self.store.pending_summaries(repo_id)
        if not pending:
            return 0
        self.store.ensure_model(self.embedder.name, self.embedder.dimension)
        inputs = [text for _h, text in pending]
        if (expect := getattr(self.embedder, "expect", None)) is not None:
            expect(len(inputs))  # many texts: the bulk encoder loads meanwhile
        order = sorted(range(len(pending)), key=lambda i: len(inputs[i]), reverse=True)
        total, done, chunks_done = len(order), 0, 0
        report(Progress("embed", 0, total))
        step = self.embed_commit_every
        for start in range(0, total, step):
            if should_stop is not None and should_stop():
                if stats is not None:
                    stats.stopped, stats.stopped_in = True, "embed"
                    stats.embeddings_pending = total - done
                break
            idx = order[start : start + step]
            vecs = self.embedder.embed([inputs[i] for i in idx])
            blobs = [(i, serialize_vector(v.tolist())) for i, v in zip(idx, vecs, strict=True)]
            self.store.add_embeddings(
                [(pending[i][0], b) for i, b in blobs if i < n_chunks],
                [(pending[i][0], b) for i, b in blobs if i >= n_chunks],
            )
            done += len(idx)
            chunks_done += sum(1 for i in idx if i < n_chunks)
            report(Progress("embed", done, total))
        if stats is not None:
            stats.chunks_embedded += chunks_done
        return done
