"""The embedded lexical engine as hybrid search's lexical leg, over a kept scale store.

    .venv/bin/python bench/bench_lexical_scale.py --store /tmp/w18/stores/s1000000.db \
        [--queries 12] [--json out.json]

For eval-dev's questions that have identifier-like words (`hybrid_lexical_query`), the
leg's own call (`EmbeddedLexical.search`, 100 files, no context) with the answer cache
off, once each: ms, matching files and lines. This is why hybrid search leaves the leg
out above `LARGE_INDEX_CHECKPOINTS` (docs/BENCHMARKS.md, issue 18).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_lexical import search_uncached
from bench.corpus import eval_dir
from bench.stats import emit
from ctxd.indexer.store.sqlite.store import Store
from ctxd.search.filters import SearchFilters
from ctxd.search.legs import hybrid_lexical_query
from ctxd.search.lexical.engine import EmbeddedLexical


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=12)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    questions = [json.loads(line)["query"] for line in
                 (eval_dir() / "queries.jsonl").read_text().splitlines() if line.strip()]
    store = Store.open(args.store, readonly=True)
    engine = EmbeddedLexical(store)
    rows = []
    for question in questions:
        query = hybrid_lexical_query(question, SearchFilters())
        if query is None:
            continue
        t = time.perf_counter()
        result = search_uncached(engine, query, {"max_files": 100, "context_lines": 0})
        rows.append({"query": query, "ms": round((time.perf_counter() - t) * 1000, 1),
                     "files": result.file_count, "lines": result.match_count})
        if len(rows) == args.queries:
            break
    times = [r["ms"] for r in rows]
    out = {"date": time.strftime("%Y-%m-%d"), "store": str(args.store),
           "checkpoints": int(store.query("SELECT count(*) FROM checkpoints")[0][0]),
           "median_ms": round(statistics.median(times), 1), "min_ms": min(times),
           "max_ms": max(times), "queries": rows}
    emit(out, args.json)


if __name__ == "__main__":
    main()
