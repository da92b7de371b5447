"""Where phase 1's time goes: wall-clock seconds per stage of one index run of a tree.

    .venv/bin/python bench/phase1_split.py --tree DIR [--dry-run] [--files-per-commit N]

Wraps the per-file functions of the pipeline, chunker and store with timers (a few
per file, so the cost of timing is small, unlike cProfile's per-call overhead, which
inflated the many small calls of the tokenizer and identifier splitter in our profiles)
and prints each stage's seconds and share of the run. Stages nest: "chunk (all)" holds
tree-sitter and line counting; "tree-sitter" holds "definitions from the tree".
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ctxd.indexer.chunk.chunker as chunker
import ctxd.indexer.chunk.syntax as syntax
import ctxd.indexer.pipeline as pipeline
import ctxd.indexer.store.sqlite.store as store_mod
from ctxd.indexer.embedder import EmbedOptions, SentenceTransformerEmbedder
from ctxd.indexer.walk.walker import WalkOptions

SECONDS: Counter[str] = Counter()


def timed(owner: Any, name: str, stage: str) -> None:
    """Replace `owner.name` (a module function or a method) by a timed wrapper."""
    inner: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            SECONDS[stage] += time.perf_counter() - started

    setattr(owner, name, wrapper)


def time_commits() -> None:
    """The outermost transaction's COMMIT (a file's, or a batch's) as its own stage."""
    inner = store_mod.Store.transaction

    @contextmanager
    def transaction(self: store_mod.Store, *, savepoints: bool = True) -> Iterator[None]:
        outer = not self.db.in_transaction
        with inner(self, savepoints=savepoints):
            yield
            started = time.perf_counter()
        if outer:
            SECONDS["SQLite: COMMIT (FTS5 flush + merges)"] += time.perf_counter() - started

    store_mod.Store.transaction = transaction  # type: ignore[assignment]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", type=Path, required=True)
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--files-per-commit", type=int, default=pipeline.FILES_PER_COMMIT)
    args = ap.parse_args()
    for owner, name, stage in [
        (pipeline, "read_text", "read"),
        (pipeline, "content_hash", "hash (xxh3)"),
        (pipeline, "classify", "classify (file role)"),
        (pipeline, "summary_of", "file summary"),
        (pipeline.Indexer, "chunk", "chunk (all)"),
        (pipeline.Indexer, "_dry_run_plan", "dry-run plan"),
        (chunker, "parse_definitions", "tree-sitter: parse + queries + definitions"),
        (syntax, "_collect", "tree-sitter: definitions from the tree"),
        (chunker, "count_lines", "word pieces per line"),
        (chunker._Cutter, "split_lines", "cutting long definitions (split_lines)"),
        (store_mod, "chunk_fts_row", "FTS word rows (identifier humps)"),
        (store_mod.Store, "replace_file", "SQLite: replace_file inserts"),
    ]:
        timed(owner, name, stage)
    time_commits()
    emb = SentenceTransformerEmbedder(EmbedOptions())
    emb.count_tokens(["load the counter before timing"])
    with tempfile.TemporaryDirectory() as tmp, store_mod.Store.open(Path(tmp) / "i.db") as st:
        started = time.perf_counter()
        stats = pipeline.Indexer(st, emb, files_per_commit=args.files_per_commit).index(
            args.tree, WalkOptions(), embed=False, dry_run=args.dry_run)
        total = time.perf_counter() - started
    files = stats.files_updated
    print(f"{args.tree} {'dry run' if args.dry_run else 'phase 1'}: {files} files in "
          f"{total:.1f} s, {files / total:.1f} files/s")
    for stage, seconds in SECONDS.most_common():
        print(f"  {stage:46s} {seconds:7.1f} s {100 * seconds / total:5.1f}%")


if __name__ == "__main__":
    main()
