"""A new process's first code-graph query at scale: each run a process of its own.

    .venv/bin/python bench/bench_graph_fresh.py --folder /tmp/gp/scale \\
        [--checkpoints 1000000] [--pg] [--no-sqlite] [--layout repos] [--runs 5] \\
        [--only HTTPResponse.read ...] [--json out.json]

`bench/bench_graph_scale.py`'s `cold` clears the workspace's caches in a process that
has run queries before (its modules imported, its regular expressions compiled, its
store connection open and warm). Here every run is a new Python process on the stores
`bench_graph_scale.py` built in `--folder`, timing apart, as `ctxd refs` / `ctxd
callers` in a shell would pay them:

- `imports_ms`: from the child's first line to `Service` made (the interpreter's own
  start is in `process_ms` only);
- `open_ms`: opening the store (SQLite: the file; PostgreSQL: the driver's import, the
  schema check and the pool's first connection);
- `query_ms` / `cpu_ms`: the query through `GraphCases`, as the CLI asks it, wall clock
  and this process's CPU time (PostgreSQL's own work is not in it);
- `process_ms`: the child process as the parent saw it, start to exit.

Each query's answers (usages or edges, entry by entry) must be the same in every run;
their digest is reported (`answer`), to compare two checkouts (`PYTHONPATH`).
"""

from __future__ import annotations

import time

_STARTED = time.perf_counter()

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
QUERIES = [  # (file suffix in copy c000, qualified name), as bench_graph_scale.QUERIES
    ("requests/sessions.py", "Session.get"),
    ("urllib3/response.py", "HTTPResponse.read"),
    ("click/core.py", "Context.invoke"),
    ("internal/Observable.ts", "Observable.subscribe"),
    ("requests/sessions.py", "merge_setting"),
    ("urllib3/util/response.py", "is_fp_closed"),
]
ASKS = ("refs", "callers", "callers --depth 3")


def child(spec: dict[str, Any]) -> dict[str, Any]:
    """One run, in this (new) process: import, open, ask once."""
    sys.path.insert(0, str(ROOT))
    from ctxd.server.config import load_settings
    from ctxd.server.requests import CallsRequest, GraphRefsRequest
    from ctxd.server.service import Service

    service = Service(load_settings(spec["settings"]))
    made = time.perf_counter()
    service.resources.store()
    opened = time.perf_counter()
    what, symbol, repos = spec["what"], spec["symbol"], [spec["repository"]]
    t0, c0 = time.perf_counter(), time.process_time()
    if what == "refs":
        result: Any = service.graph.graph_refs(GraphRefsRequest(symbol, repositories=repos,
                                                                limit=2000))
    else:
        result = service.graph.calls(CallsRequest(symbol, depth=3 if "depth" in what else 1,
                                                  repositories=repos, limit=2000))
    t1, c1 = time.perf_counter(), time.process_time()
    entries = getattr(result, "usages", None) or getattr(result, "edges", [])
    digest = hashlib.sha256(json.dumps([dataclasses.asdict(e) for e in entries],
                                       sort_keys=True, default=str).encode()).hexdigest()
    service.close()
    return {"imports_ms": (made - _STARTED) * 1000, "open_ms": (opened - made) * 1000,
            "query_ms": (t1 - t0) * 1000, "cpu_ms": (c1 - c0) * 1000,
            "answers": len(entries), "answer": digest[:16]}


def definitions(db: Path, only: set[str]) -> list[str]:
    """`PATH:LINE` in copy c000 of each of `QUERIES` (those in `only`, if any), from the
    SQLite store's symbols (the PostgreSQL one holds the same files)."""
    import sqlite3

    out = []
    with sqlite3.connect(db) as conn:
        for suffix, qualname in QUERIES:
            if only and qualname not in only:
                continue
            container, _, name = qualname.rpartition(".")
            row = conn.execute(
                "SELECT path, line FROM symbols WHERE name = ? AND coalesce(container, '') = ?"
                " AND path LIKE 'c000/%' AND path LIKE ? ORDER BY path, line LIMIT 1",
                (name, container, f"%/{suffix}")).fetchone()
            if row is None:
                print(f"warning: no {qualname} in c000/**/{suffix}", file=sys.stderr)
            else:
                out.append(f"{row[0]}:{row[1]}")
    return out


def stores(args: argparse.Namespace) -> list[tuple[str, str, dict[str, str]]]:
    """(engine, layout, settings) of the stores `bench_graph_scale.py` built."""
    out = []
    for layout in args.layout or ["repos"]:
        if not args.no_sqlite:
            out.append(("sqlite", layout, {"home": str(args.folder / f"home-sqlite-{layout}")}))
        if args.pg:
            from bench.pg_helpers import database_url, local_server

            url = database_url(local_server(args.folder / "pg"),
                               f"graph{args.checkpoints}{layout}")
            out.append(("postgresql", layout, {"home": str(args.folder / "home-pg"),
                                               "store.url": url}))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--folder", type=Path)
    ap.add_argument("--checkpoints", type=int, default=1_000_000)
    ap.add_argument("--pg", action="store_true")
    ap.add_argument("--no-sqlite", action="store_true")
    ap.add_argument("--layout", action="append", choices=("mono", "repos"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    if args.folder is None:
        ap.error("--folder is required")
    sys.path.insert(0, str(ROOT))
    db = args.folder / f"graph-scale-{args.checkpoints}-repos.db"
    symbols = definitions(db, set(args.only))
    result: dict[str, Any] = {"load_average_start": " ".join(
        f"{x:.2f}" for x in os.getloadavg()), "runs": args.runs}
    for engine, layout, settings in stores(args):
        rows = []
        for symbol in symbols:
            for what in ASKS:
                runs = []
                for _ in range(args.runs):
                    spec = {"settings": settings, "what": what, "symbol": symbol,
                            "repository": "c000" if layout == "repos" else "mono"}
                    t0 = time.perf_counter()
                    done = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)],
                                          capture_output=True, text=True, check=False)
                    if done.returncode:
                        raise SystemExit(f"{what} {symbol} on {engine}: the run failed:\n"
                                         f"{done.stderr[-3000:]}")
                    run = json.loads(done.stdout.strip().splitlines()[-1])
                    run["process_ms"] = (time.perf_counter() - t0) * 1000
                    runs.append(run)
                digests = {r["answer"] for r in runs}
                if len(digests) != 1:
                    raise SystemExit(f"{what} {symbol}: answers differ between runs")
                row = {"symbol": symbol, "query": what, "answers": runs[0]["answers"],
                       "answer": digests.pop(), **{
                           f"{k}_p50": round(statistics.median(r[k] for r in runs), 1)
                           for k in ("query_ms", "cpu_ms", "open_ms", "imports_ms",
                                     "process_ms")},
                       "cpu_ms_min": round(min(r["cpu_ms"] for r in runs), 1)}
                print(json.dumps({"store": f"{engine}-{layout}", **row}), file=sys.stderr,
                      flush=True)
                rows.append(row)
        result[f"{engine}-{layout}"] = rows
    result["load_average_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    json.dump(result, sys.stdout, indent=1)
    print()
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
