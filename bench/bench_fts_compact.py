"""The trigram index's merge after a big walk: FTS5 `optimize` (one transaction, as
60d0164's `compact_text`) against `compact_text` in `merge` steps (a stop request ends it
between two), on copies of one real store.

    .venv/bin/python bench/bench_fts_compact.py --tree /tmp/i30b/py3k [--rounds 5] \
        [--step-pages N] [--json bench/results/robustness_fts_compact.json]

The store is written once by phase 1 (`embed=False`) with the merge after the walk turned
off, so its `file_text` holds the walk's unmerged segments; every round copies it twice
and merges one copy each way, in turn (which goes first alternates). Per way: wall and
CPU seconds of the merge, segments left, the file's size (WAL checkpointed), the CPU
milliseconds of 40 phrase queries (8 literals, 5 times) and their match counts; for the
steps, how many and the longest (what a stop request waits at most). A third copy is
merged with a stop requested after two steps: the segments it leaves, its queries'
answers, and that the next call finishes the merge. Medians over the rounds.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

QUERIES = ("max_retries", "_header(", "parse_retry_after", "self.assert", "raise ValueError",
           "def __init__(self", "import numpy as np", "tensor")


def build(tree: Path, db: Path) -> dict[str, Any]:
    import ctxd.indexer.pipeline as pipeline
    from ctxd.indexer.embedder import EmbedOptions, SentenceTransformerEmbedder
    from ctxd.indexer.store.sqlite.store import Store
    from ctxd.indexer.walk.walker import WalkOptions

    pipeline.COMPACT_AFTER_TEXTS = 10**12  # leave the walk's segments unmerged
    emb = SentenceTransformerEmbedder(EmbedOptions())  # counts tokens; never loads torch
    with Store.open(db) as store:
        stats = pipeline.Indexer(store, emb).index(tree, WalkOptions(), embed=False)
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return {"files": stats.files_indexed, "segments": segments(store)}


def segments(store: Any) -> int:
    return int(store.query("SELECT count(DISTINCT segid) FROM file_text_idx")[0][0])


def queries(store: Any) -> tuple[float, list[int]]:
    counts = []
    cpu = time.process_time()
    for _ in range(5):
        counts = [store.query("SELECT count(*) FROM file_text WHERE file_text MATCH ?",
                              ['"' + q.replace('"', '""') + '"'])[0][0] for q in QUERIES]
    return (time.process_time() - cpu) * 1000, counts


def merge(base: Path, tmp: Path, way: str, step_pages: int) -> dict[str, Any]:
    import ctxd.indexer.store.sqlite.files as files
    from ctxd.indexer.store.sqlite.store import Store

    files.COMPACT_STEP_PAGES = step_pages

    db = tmp / f"{way}.db"
    shutil.copyfile(base, db)
    out: dict[str, Any] = {}
    with Store.open(db) as store:
        marks: list[float] = []
        stop_after = 2 if way == "stopped" else None

        def should_stop() -> bool:
            marks.append(time.perf_counter())
            return stop_after is not None and len(marks) > stop_after

        wall, cpu = time.perf_counter(), time.process_time()
        if way == "optimize":  # 60d0164's compact_text
            with store.transaction():
                store.db.execute("INSERT INTO file_text(file_text) VALUES ('optimize')")
            finished = True
        else:
            finished = store.compact_text(should_stop)
        out["merge_s"] = time.perf_counter() - wall
        out["merge_cpu_s"] = time.process_time() - cpu
        out["finished"] = finished
        out["segments"] = segments(store)
        if way != "optimize":
            steps = [b - a for a, b in itertools.pairwise(marks)]
            out["steps"] = len(steps)
            out["longest_step_s"] = max(steps, default=0.0)
        out["queries_cpu_ms"], out["counts"] = queries(store)
        if way == "stopped":
            out["unfinished_flag"] = store.text_merge_unfinished()
            out["then_finished"] = store.compact_text()
            out["then_segments"] = segments(store)
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    out["mb"] = db.stat().st_size / 1e6
    db.unlink()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--step-pages", type=int, default=0,
                    help="pages a step (default: compact_text's COMPACT_STEP_PAGES)")
    args = ap.parse_args()
    import ctxd.indexer.store.sqlite.files as files

    step_pages = args.step_pages or files.COMPACT_STEP_PAGES
    with tempfile.TemporaryDirectory() as raw:
        tmp = Path(raw)
        base = tmp / "base.db"
        built = build(args.tree, base)
        print(json.dumps({"built": built}), flush=True)
        runs: dict[str, list[dict[str, Any]]] = {"optimize": [], "steps": [], "stopped": []}
        for r in range(args.rounds):
            order = ["optimize", "steps"] if r % 2 == 0 else ["steps", "optimize"]
            for way in [*order, "stopped"]:
                runs[way].append(merge(base, tmp, way, step_pages))
                print(json.dumps({"round": r, "way": way, **runs[way][-1]}), flush=True)
    summary: dict[str, Any] = {"built": built, "rounds": args.rounds, "step_pages": step_pages}
    for way, rows in runs.items():
        summary[way] = {k: statistics.median(row[k] for row in rows)
                        for k in rows[0] if isinstance(rows[0][k], float | int)
                        and not isinstance(rows[0][k], bool)}
        summary[way]["counts"] = rows[0]["counts"]
        summary[way]["same_counts_every_round"] = all(r["counts"] == rows[0]["counts"]
                                                      for r in rows)
        for flag in ("finished", "unfinished_flag", "then_finished"):
            if flag in rows[0]:
                summary[way][flag] = all(r[flag] for r in rows)
    o, s = summary["optimize"], summary["steps"]
    summary["ratio_merge_s_steps_over_optimize"] = s["merge_s"] / o["merge_s"]
    summary["ratio_merge_cpu_s_steps_over_optimize"] = s["merge_cpu_s"] / o["merge_cpu_s"]
    summary["median_of_round_ratios_merge_s"] = statistics.median(
        a["merge_s"] / b["merge_s"] for a, b in zip(runs["steps"], runs["optimize"], strict=True))
    summary["ratio_queries_cpu_steps_over_optimize"] = s["queries_cpu_ms"] / o["queries_cpu_ms"]
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "runs": runs}, indent=1) + "\n")


if __name__ == "__main__":
    main()
