"""Keyword and hybrid search through the service at scale, before vs after, one run.

    .venv/bin/python bench/bench_keyword_scale.py --store STORE.db --queries Q.npy \\
        [--url POSTGRESQL_URL] [--before CODE] [--rounds 2] [--runs 2] [--json out.json]

`STORE.db` is a store of `bench/bench_search.py --stores DIR` (real code copied under many
folders, synthetic vectors; `Q.npy` its query vectors, kept beside it). Each side runs in
its own process (`--before CODE`: a folder holding an older `ctxd` package, as
`bench/bench_phase1.py` takes it; the other side is this checkout), sides in turn every
round: a long-lived `Service` (as the daemon holds it: keyword postings in memory, warmed
before timing) answers eval-dev's first 30 questions `--runs` times in keyword mode, then
in hybrid mode; p50 / p95 per side, and a digest of every page (paths, lines, scores,
line matches, copies), which must be the same on both sides (`same_pages`; per mode, how
many of the 30 pages are: `same_pages_by_mode`; each page's digest under `pages`).
`--url`: the same over a PostgreSQL store (`bench/pg_bulk.py` builds `bench_search.py`'s
store there), whose `Service` holds the keyword postings too on the side that has them
(their build time is reported, untimed otherwise).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()


def side(store: Path, queries: Path, runs: int, url: str = "") -> dict[str, Any]:
    """Time the modes with the `ctxd` this process imports."""
    import numpy as np

    sys.path.insert(0, str(HERE.parents[1]))
    from bench.bench_search import QueryVectors
    from bench.corpus import eval_dir
    from ctxd.server.config import load_settings
    from ctxd.server.service import Service

    questions = [json.loads(line)["query"] for line in
                 (eval_dir() / "queries.jsonl").read_text().splitlines() if line.strip()][:30]
    with tempfile.TemporaryDirectory() as home:
        if not url:
            (Path(home) / "index.db").symlink_to(store)
        svc = Service(load_settings({"home": home, "store.url": url}),
                      embedder=QueryVectors(np.load(queries)),
                      long_lived=True)  # type: ignore[arg-type]
        st = svc.store()
        out: dict[str, Any] = {}
        if svc.keywords is not None:
            t = time.perf_counter()
            svc.postings(st)
            svc.keywords.wait()
            svc.postings(st)
            out["postings_build_s"] = round(time.perf_counter() - t, 1)
        digest = hashlib.sha256()
        pages: dict[str, list[str]] = {}
        for mode in ("keyword", "hybrid"):
            svc.search(questions[-1], mode=mode, limit=10)  # untimed: loads what the mode holds
            times = []
            for run in range(runs):
                for q in questions:
                    t = time.perf_counter()
                    page = svc.search(q, mode=mode, limit=10)
                    times.append(time.perf_counter() - t)
                    if run == 0:
                        text = repr([(h.path, h.start_line, h.end_line, h.score, h.matches,
                                      h.also_in) for h in page.results]).encode()
                        digest.update(text)
                        pages.setdefault(mode, []).append(hashlib.sha256(text).hexdigest()[:16])
            times.sort()
            out[mode] = {"p50_ms": round(1000 * statistics.median(times), 1),
                         "p95_ms": round(1000 * times[int(0.95 * len(times))], 1)}
        out["digest"] = digest.hexdigest()
        out["pages"] = pages
    return out


def run_side(code: Path | None, args: argparse.Namespace) -> dict[str, Any]:
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    done = subprocess.run([sys.executable, str(HERE), "--store", str(args.store), "--queries",
                           str(args.queries), "--runs", str(args.runs), "--url", args.url,
                           "--side"], env=env,
                          check=True, capture_output=True, text=True, cwd=tempfile.gettempdir())
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--queries", type=Path, required=True)
    ap.add_argument("--before", type=Path)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--url", default="",
                    help="a PostgreSQL store's URL (then --store is not read)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--side", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.side:
        print(json.dumps(side(args.store.resolve(), args.queries.resolve(), args.runs,
                              args.url)))
        return
    sides: dict[str, Path | None] = {"after": None}
    if args.before is not None:
        sides = {"before": args.before.resolve(), "after": None}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in sides}
    for r in range(args.rounds):
        for name, code in sides.items():
            runs[name].append(run_side(code, args))
            print(f"round {r + 1} {name}: {runs[name][-1]}", file=sys.stderr)
    out: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"),
                           "store": (args.url.split("?")[0].rsplit("/", 1)[-1] if args.url
                                     else str(args.store)),
                           "rounds": args.rounds, "runs": args.runs}
    for name, side_runs in runs.items():
        out[name] = {mode: {k: statistics.median(r[mode][k] for r in side_runs)
                            for k in ("p50_ms", "p95_ms")} for mode in ("keyword", "hybrid")}
        out[name]["digests"] = sorted({r["digest"] for r in side_runs})
        out[name]["postings_build_s"] = [r.get("postings_build_s") for r in side_runs]
        out[name]["pages"] = side_runs[0]["pages"]
    if "before" in out:
        out["same_pages"] = out["before"]["digests"] == out["after"]["digests"]
        out["same_pages_by_mode"] = {
            mode: sum(a == b for a, b in zip(out["before"]["pages"][mode],
                                              out["after"]["pages"][mode], strict=True))
            for mode in ("keyword", "hybrid")}
        out["keyword_p50_speedup"] = round(out["before"]["keyword"]["p50_ms"]
                                           / out["after"]["keyword"]["p50_ms"], 2)
        out["hybrid_p50_speedup"] = round(out["before"]["hybrid"]["p50_ms"]
                                          / out["after"]["hybrid"]["p50_ms"], 2)
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
