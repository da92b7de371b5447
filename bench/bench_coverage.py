"""What a search's embedding-coverage count costs, before and after (issue 30 item 1).

    .venv/bin/python bench/bench_coverage.py [--sqlite INDEX.db] [--pg URL] [--runs 7]
        [--before /tmp/q31/head/ctxd] [--json out.json]

A semantic or hybrid search says how far each repository in its scope is embedded
(`search.legs.coverage`: `embedding_coverage`, kept per process until the text or the
vectors change). So a one-shot search (`ctxd --no-daemon search`, an MCP server's first
question) and a daemon's first search after any write pay one count over every
checkpoint in scope. On the stores of `bench/bench_scoped.py` (1M checkpoints: `big`
94%, `five` 5%, `one` 1%), each side ("before": the package at `--before`, "after": this
tree) runs in a child process that opens the store and times `embedding_coverage()`
for every repository, `("five",)` and `("one",)`, `--runs` times each (the first run
of each case is dropped: it reads cold pages); then what a search pays for the coverage
at a state its process has not met (`search.legs.coverage`, every repository): "after"
finds the record of `indexer.coverage_claim` (made first, by the writer's check, timed
once), "before" counts. The sides alternate. Medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_scoped import compared_sides

CHILD = r"""
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from ctxd.indexer.store.location import StoreOptions
from ctxd.indexer.store.open import open_store
kind, where, runs = sys.argv[2], sys.argv[3], int(sys.argv[4])
store = (open_store(Path(where), StoreOptions()) if kind == "sqlite"
         else open_store(None, StoreOptions(url=where)))
out = {}
for name, names in (("every repository", ()), ("five", ("five",)), ("one", ("one",))):
    times, rows = [], None
    for _ in range(runs + 1):
        t = time.perf_counter()
        rows = store.embedding_coverage(names)
        times.append((time.perf_counter() - t) * 1000)
    out[name] = {"ms": times[1:], "rows": rows}
# what a search pays (`search.legs.coverage`) at a state it has not met, every repository:
# "after" finds the writer's record (`indexer.coverage_claim`, made here first, its cost
# timed as "writer's check"), "before" counts
from ctxd.search import legs
coverage_claim = getattr(legs, "coverage_claim", None)  # (an editable install resolves
if coverage_claim is not None:                         # the module for "before" too)
    with store.transaction():  # no record yet: the writer checks
        store.set_meta(coverage_claim.KEY, "")
    t = time.perf_counter()
    assert coverage_claim.record(store)
    out["writer's check"] = {"ms": [(time.perf_counter() - t) * 1000], "rows": None}
times = []
for _ in range(runs + 1):
    legs._COVERAGE = type(legs._COVERAGE)(64)
    t = time.perf_counter()
    legs.coverage(store, ())
    times.append((time.perf_counter() - t) * 1000)
out["search, new state"] = {"ms": times[1:], "rows": None}
print("RESULT=" + json.dumps(out))
"""


def child(root: str, kind: str, where: str, runs: int) -> dict[str, Any]:
    r = subprocess.run([sys.executable, "-c", CHILD, root, kind, where, str(runs)],
                       capture_output=True, text=True, check=False,
                       env={**os.environ, "PYTHONPATH": root})
    line = [x for x in r.stdout.splitlines() if x.startswith("RESULT=")]
    if not line:
        raise SystemExit(r.stdout + r.stderr)
    return dict(json.loads(line[-1].removeprefix("RESULT=")))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sqlite", type=Path)
    ap.add_argument("--pg")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=2, help="children per side and store")
    ap.add_argument("--before", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    sides = compared_sides(args.before)
    stores = [("sqlite", str(args.sqlite))] if args.sqlite else []
    stores += [("pg", args.pg)] if args.pg else []
    report: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "runs": args.runs,
                              "rounds": args.rounds, "results": {}}
    for kind, where in stores:
        times: dict[tuple[str, str], list[float]] = {}
        answers: dict[str, Any] = {}
        for i in range(args.rounds):
            order = list(sides.items())
            for side, root in (order if i % 2 == 0 else order[::-1]):
                for case, got in child(root, kind, where, args.runs).items():
                    times.setdefault((side, case), []).extend(got["ms"])
                    answers.setdefault(case, got["rows"])  # the same on both sides
                    assert got["rows"] == answers[case], (side, case, got["rows"])
        for (side, case), ms in times.items():
            base = times.get(("before", case))
            row = {"p50_ms": round(statistics.median(ms), 1), "samples": len(ms),
                   "before_over_after": round(statistics.median(base) / statistics.median(ms), 2)
                   if base and side == "after" else None}
            report["results"][f"{kind} | {side} | {case}"] = row
            print(f"{kind:6} {side:6} {case:18} p50 {row['p50_ms']:8.1f} ms"
                  + (f"  before/after {row['before_over_after']:.2f}x"
                     if row["before_over_after"] else ""), flush=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
