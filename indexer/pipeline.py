"""Indexes one repository: walk -> read -> chunk -> store (phase 1), then embed (phase 2).

`Indexer(store, embedder, chunk_options).index(root, walk_options)` is the one entry
point (`ctxd index`, the MCP `index_repository` tool, the watcher). Phase 1 writes each
changed file's rows (text, checkpoints, symbols, its summary: `indexer.chunk.summary`),
several files to a commit (batches of 1, 2, 4, ... 64 files, or what waited 1 s:
`CommitBatch`), so lexical and symbol search work at once. Where the store can
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

Here: the run (`Indexer.index`) and phase 1's walk and chunking passes, with the graph
helper's hand-off (they share one run's statistics, stop signal, batches and list of
files). Beside it: `indexer.commit_batch` (phase 1's transactions), `indexer.file_rows`
(a chunked file's rows), `indexer.run_scope` (the pinned root, the watcher's candidates,
removals), `indexer.run_stats` (samples in `IndexStats`), `indexer.redecide` (options
that re-decide files, the backfills), `indexer.embed_pass` (phase 2). What a file becomes
before it is stored is `indexer.checkpoints`, what it is for `indexer.walk.judge`.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from functools import cached_property, partial
from pathlib import Path

from ctxd.indexer import coverage_claim
from ctxd.indexer.checkpoints import ChunkedFile, checkpoints_of
from ctxd.indexer.chunk.chunker import ChunkOptions
from ctxd.indexer.chunk.languages import detect_language
from ctxd.indexer.commit_batch import CommitBatch
from ctxd.indexer.embed_pass import PLAN_STEP as PLAN_STEP
from ctxd.indexer.embed_pass import EmbedPass
from ctxd.indexer.embedder import Embedder, Vectors
from ctxd.indexer.file_rows import line_count, write_chunked
from ctxd.indexer.graph.worker import GraphWorker, shared_worker
from ctxd.indexer.models import (
    FileEntry,
    IndexStats,
    NotEmbedded,
    Progress,
    ProgressFn,
    Skipped,
    SkipReason,
    WindowedFile,
    now_rfc3339,
)
from ctxd.indexer.redecide import CHUNK_READ_BATCH as CHUNK_READ_BATCH
from ctxd.indexer.redecide import GRAPH_KEY as GRAPH_KEY
from ctxd.indexer.redecide import PARSED_KEY as PARSED_KEY
from ctxd.indexer.redecide import REDECIDE_KEYS as REDECIDE_KEYS
from ctxd.indexer.redecide import TEXT_RULE_KEYS as TEXT_RULE_KEYS
from ctxd.indexer.redecide import Backfills, FileRun, run_options
from ctxd.indexer.run_scope import candidates_of as candidates_of
from ctxd.indexer.run_scope import not_walked as not_walked
from ctxd.indexer.run_scope import pinned_root, remove_gone
from ctxd.indexer.run_scope import removal_reasons as removal_reasons
from ctxd.indexer.run_stats import LARGE_FILE_CHECKPOINTS as LARGE_FILE_CHECKPOINTS
from ctxd.indexer.run_stats import REMOVED_SAMPLE as REMOVED_SAMPLE
from ctxd.indexer.run_stats import SKIPPED_SAMPLE, record_skip
from ctxd.indexer.run_stats import TOP_FILES as TOP_FILES
from ctxd.indexer.run_stats import count_checkpoints as count_checkpoints
from ctxd.indexer.store.protocol import IndexStore, TextFirst
from ctxd.indexer.store.sqlite.store import FileRecord, StoredFile
from ctxd.indexer.walk.judge import FileJudge
from ctxd.indexer.walk.textclass import Role, short_lines
from ctxd.indexer.walk.walker import (
    WalkOptions,
    validate_walk_options,
    walk,
)

log = logging.getLogger(__name__)

GC_MIN_ORPHANS = 1000
"""Orphaned vectors are collected once there are this many (or 10% of all vectors)."""

HEADER_TOKEN_RESERVE = 2
"""[CLS] and [SEP]: added by the model to every input."""

PROGRESS_EVERY = 25
"""Walk progress is reported every this many files examined (admitted or refused)."""
FILES_PER_COMMIT = 64
"""Phase 1 writes the rows of up to this many files in one transaction (each file's still
all-or-nothing; the first batches are smaller: 1, 2, 4, ...): a commit per file cost a
third of phase 1, mostly FTS5 flushing and merging one small segment per file
(docs/BENCHMARKS.md, "Phase 1, continued")."""
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


@dataclass(frozen=True, slots=True)
class _Deferred:
    """A file whose text the walk wrote, to chunk after it (`Indexer._chunk_deferred`)."""

    entry: FileEntry
    digest: str
    role: str


def _defer(deferred: list[_Deferred], item: _Deferred) -> None:
    """A file to chunk after the walk; at the `GRAPH_HELPER_FILES`th, the graph helper
    starts (while the walk goes on: it is ready when the chunking begins)."""
    deferred.append(item)
    if len(deferred) == GRAPH_HELPER_FILES:
        shared_worker()


class Indexer(EmbedPass, Backfills):
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
        root_path, existing, root_id = pinned_root(self.store, root,
                                                   partial=only_paths is not None)
        report = progress or (lambda _p: None)
        self.store.check_model(self.embedder.name)
        now = now_rfc3339()
        decided = run_options(options, explicit, existing)
        opts_json, held = decided.wanted, decided.held
        run = FileRun(FileJudge(root_path, options), recheck=decided.recheck,
                      rechunk=decided.rechunk)
        regraph = decided.regraph
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
            if existing is not None:  # the backlog a real run embeds too
                new_inputs = {**self.pending_inputs(repo_id), **new_inputs}
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

    def embed_backlog(
        self,
        repo_id: int,
        stats: IndexStats,
        *,
        writing: Callable[[], AbstractContextManager[object]],
        should_stop: Callable[[], bool] | None = None,
        encode: Callable[[list[str]], Vectors] | None = None,
    ) -> None:
        """Phase 2 alone, for a repository whose phase 1 is written (the watcher's rounds
        of embedding): as `index(..., only_paths=[])` would, but holding the write lock
        (`writing()`) per commit instead of for the pass, so that a phase-1 write of an
        edited file never waits for the model (`encode` may make such writes while it
        runs). Ends, when not stopped, as a run does: orphaned vectors collected past the
        threshold, the coverage claim recorded, `indexed_at` set if anything was embedded.
        """
        self.embed_pending(repo_id, stats=stats, should_stop=should_stop,
                           budget=self.embed_budget, encode=encode, writing=writing)
        if stats.stopped:
            return
        with writing():
            total = self.store.vector_state()[0] if self.store.has_vectors() else 0
            self.store.gc_embeddings(min_orphans=max(GC_MIN_ORPHANS, total // 10))
            coverage_claim.record(self.store)
            self.store.mark_indexed(repo_id, now_rfc3339() if stats.chunks_embedded else None)

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
        run: FileRun,
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
        with bulk, CommitBatch(self.store, self.files_per_commit, COMMIT_EVERY_S,
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
                    record_skip(item, skipped, stats)
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
                    record_skip(outcome, skipped, stats)
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
            record_skip(why, skipped, stats)
            skip_reasons[path] = why.reason.value
        if new := [p for p, _why in refused if p not in stored]:
            self.store.delete_files(repo_id, new)  # its text, written by the walk
        if stats.stopped:
            return new_inputs
        self._compact_text(text_first, len(deferred), full=wanted is None,
                           should_stop=should_stop)
        candidates = stored.keys() if wanted is None else (wanted & stored.keys())
        remove_gone(self.store, sorted(p for p in candidates if p not in seen), unreadable,
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

    def _index_file(
        self,
        entry: FileEntry,
        repo_id: int,
        stored: dict[str, StoredFile],
        now: str,
        dry_run: bool,
        new_inputs: dict[str, tuple[str, int | None]],
        run: FileRun,
        stats: IndexStats,
        batch: CommitBatch,
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
                                lines=line_count(text), role=role.value)
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
        return write_chunked(self.store, entry, text, digest, role.value, role.lexical_only,
                             chunks, repo_id, now, stats, batch,
                             new_inputs if dry_run else None)

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
        with CommitBatch(self.store, self.files_per_commit, COMMIT_EVERY_S) as batch:
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
                    write_chunked(self.store, item.entry, text, item.digest, item.role,
                                  False, found, repo_id, now, stats, batch, None,
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
