"""A chunked file's rows (record, checkpoints, symbols, summary, code graph) added to a
phase-1 `CommitBatch` (`write_chunked`), or, for a dry run, its embedding inputs.

Invariants: one file's rows are written by one `replace_file`, all-or-nothing; a code
graph the graph helper is still making (`Pending`) is taken when the batch is written,
inside the file's transaction, so a file is never stored without its graph row.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from ctxd.indexer.checkpoints import ChunkedFile, summary_of
from ctxd.indexer.commit_batch import CommitBatch
from ctxd.indexer.graph.worker import Pending
from ctxd.indexer.models import FileEntry, IndexStats
from ctxd.indexer.run_stats import count_checkpoints
from ctxd.indexer.store.protocol import IndexStore, TextFirst
from ctxd.indexer.store.records import GraphRow
from ctxd.indexer.store.sqlite.store import NO_SUMMARY, FileRecord


def line_count(text: str) -> int:
    """Lines of a text (a last line without a newline counts)."""
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def replace_pending(replace_file: Callable[[GraphRow], object], pending: Pending) -> object:
    """`replace_file(graph)` once the graph helper has made the file's graph row (made
    in-process if the helper failed)."""
    data, keys = pending.row()
    return replace_file(GraphRow(data, keys))


def write_chunked(
    store: IndexStore,
    entry: FileEntry,
    text: str,
    digest: str,
    role: str,
    lexical_only: bool,
    chunks: ChunkedFile,
    repo_id: int,
    now: str,
    stats: IndexStats,
    batch: CommitBatch,
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
        lines=line_count(text),
        role=role,
    )
    rows = ([(c.chunk, c.hash) for c in chunks.checkpoints], chunks.symbols, now, summary)
    if text_written:
        assert isinstance(store, TextFirst)
        replace = partial(store.replace_file, repo_id, record, None, *rows)
    else:
        replace = partial(store.replace_file, repo_id, record, text, *rows)
    if isinstance(chunks.graph, Pending):  # the row taken when the batch is written
        batch.add(partial(replace_pending, replace, chunks.graph))
    else:
        batch.add(partial(replace, chunks.graph))
    return True
