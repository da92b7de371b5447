"""A scoped search's first search in a fresh process, against an unscoped one (issue 30 item 1).

    .venv/bin/python bench/bench_scoped_first.py URL QUERIES.npy [--runs 12]
        [--before /tmp/q31/head/ctxd] [--json out.json]

What a one-shot CLI search (`ctxd --no-daemon search`, an MCP server's first question)
pays on a store built by `bench/bench_scoped.py` (repositories `big` 94%, `five` 5%,
`one` 1%): each sample is a new process that opens the store and runs one
`rank_by_vector(limit=10)`, timed alone (the store opened, its pool connected, and the
process's first statement run before the clock starts: what differs between the cases is
the scope's work, not the connection). Cases: unscoped, `--repo five`, `--repo one`,
`--path '**/*.md'`, `--repo five --lang python`; query `i % 30` for run `i`, the cases
in turn and each first in turn; both sides ("before": the package at `--before`, "after":
this tree) alternate run by run. p50 / p90 and the ratio to the same side's unscoped p50.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_scoped import CASES, compared_sides
from bench.stats import against

CHILD = r"""
import json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
from ctxd.indexer.store.location import StoreOptions
from ctxd.indexer.store.open import open_store
from ctxd.search.filters import SearchFilters
from ctxd.search.semantic import rank_by_vector
url, qpath, case, q = sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), int(sys.argv[5])
store = open_store(None, StoreOptions(url=url))
store.has_vectors()
v = np.load(qpath)[q].tolist()
filters = SearchFilters(**{k: tuple(x) if isinstance(x, list) else x for k, x in case.items()})
t = time.perf_counter()
hits = rank_by_vector(store, v, filters=filters, limit=10)
print("RESULT=" + json.dumps({"ms": (time.perf_counter() - t) * 1000, "hits": len(hits)}))
"""


def one(root: str, url: str, queries: Path, case: dict[str, Any], q: int) -> float:
    """The time of one first search in a fresh process importing ctxd from `root`."""
    r = subprocess.run([sys.executable, "-c", CHILD, root, url, str(queries), json.dumps(case),
                        str(q)], capture_output=True, text=True, check=False,
                       env={**os.environ, "PYTHONPATH": root})
    line = [x for x in r.stdout.splitlines() if x.startswith("RESULT=")]
    if not line:
        raise SystemExit(r.stdout + r.stderr)
    return float(json.loads(line[-1].removeprefix("RESULT="))["ms"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("url")
    ap.add_argument("queries", type=Path)
    ap.add_argument("--runs", type=int, default=12)
    ap.add_argument("--before", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    sides = compared_sides(args.before)
    names = list(CASES)
    times: dict[str, dict[str, list[float]]] = {s: {n: [] for n in names} for s in sides}
    for i in range(args.runs):
        for j in range(len(names)):
            name = names[(i + j) % len(names)]
            for side, root in (sides.items() if i % 2 == 0 else reversed(sides.items())):
                times[side][name].append(one(root, args.url, args.queries, CASES[name], i % 30))
    report: dict[str, Any] = {"runs": args.runs, "results": {}}
    for side, by_case in times.items():
        for name, row in against(by_case, "unscoped").items():
            report["results"][f"{side} | {name}"] = row
            print(f"{side:6} {name:24} first search p50 {row['p50_ms']:8.2f} ms  "
                  f"p90 {row['p90_ms']:8.2f} ms  x{row['x_unscoped']:5.2f} unscoped", flush=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
