"""PostgreSQL's plans for a scoped search, as a one-shot search meets them (issue 30 item 1).

    .venv/bin/python bench/bench_scoped_pg_plans.py URL QUERIES.npy [--runs 30] [--json out.json]

On a store built by `bench/bench_scoped.py --pg-bulk` (repositories `big`, `five`, `one`),
through the store's own methods, each case first in turn query by query (the first
search of a query vector pays the cold pages): the unscoped HNSW search (`nearest`, k 10,
as `rank_by_vector` asks for a page of 10), and for `--repo five` and `--repo one` (k 10)
both plans of `nearest_in`: the HNSW walk with the filter checked on each row (no count
given) and the filter's rows ranked exactly (told they are few). p50, p90, the ratio to
the unscoped p50, and the walk's recall@10 against the exact plan's ten. Run it with
PYTHONPATH=<a baseline package> to measure another commit's plans.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    import numpy as np

    from ctxd.indexer.store.location import StoreOptions
    from ctxd.indexer.store.open import open_store

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("url")
    ap.add_argument("queries", type=Path)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    store = open_store(None, StoreOptions(url=args.url))
    queries = np.load(args.queries)
    repo_ids = {str(n): int(i) for n, i in store.query("SELECT name, id FROM repos")}
    cases: dict[str, Callable[[list[float]], Any]] = {
        "unscoped, k 10": lambda v: store.nearest(v, 10),
        **{f"--repo {name}: {plan}, k 10": (
            lambda v, name=name, rows=rows: store.nearest_in(
                v, 10, "AND c.repo_id IN (?)", [repo_ids[name]], rows=rows))
           for name in ("five", "one") for plan, rows in (("HNSW walk", None), ("exact", 1))},
    }
    names = list(cases)
    times: dict[str, list[float]] = {n: [] for n in names}
    found: dict[str, list[set[int]]] = {n: [] for n in names}
    for n in names:
        cases[n](queries[0].tolist())
    for q in range(args.runs):
        v = queries[q % len(queries)].tolist()
        for j in range(len(names)):
            n = names[(q + j) % len(names)]
            t = time.perf_counter()
            got, _rows = cases[n](v)
            times[n].append((time.perf_counter() - t) * 1000)
            found[n].append(set(got.tolist()))
    base = statistics.median(times[names[0]])
    report: dict[str, Any] = {"runs": args.runs, "results": {}}
    for n in names:
        p50, ranked = statistics.median(times[n]), sorted(times[n])
        exact = n.replace("HNSW walk", "exact")
        pairs = zip(found[n], found[exact], strict=True)
        recall = (f"  recall@10 {statistics.mean(len(a & b) / 10 for a, b in pairs):.2f}"
                  if exact != n else "")
        p90 = ranked[int(0.9 * (len(ranked) - 1))]
        print(f"{n:30} p50 {p50:8.1f} ms  p90 {p90:8.1f} ms  x{p50 / base:5.2f}{recall}")
        report["results"][n] = {"p50_ms": round(p50, 2), "p90_ms": round(p90, 2),
                                "x_unscoped": round(p50 / base, 2), "recall": recall.strip()}
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    store.close()


if __name__ == "__main__":
    main()
