"""The daemon's server-side search time, for an A/B between two checkouts.

    cd CHECKOUT && .venv/bin/python /path/to/bench/daemon_search_ab.py

Run it from each checkout in turn (interleaved, twice each): it builds bench_cli's
synthetic index (10,000 checkpoints with random vectors under the real model's name) in
a temporary home, starts a daemon from the current directory's `ctxd`, and times
`search` requests over the socket (a fresh connection each, as the CLI makes) for
bench_cli's questions, three times each: semantic, hybrid, semantic again. Prints the
p50 of each pass. Results: docs/BENCHMARKS.md (bench_cli re-run after the review).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.getcwd())

from bench.bench_cli import QUESTIONS, synthetic_index
from ctxd.server.config import load_settings
from ctxd.server.daemon import lifecycle
from ctxd.server.daemon.client import exchange
from ctxd.server.daemon.paths import DaemonPaths


def main() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        synthetic_index(home / "index.db", 10_000)
        paths = DaemonPaths.for_home(home)
        lifecycle.start(load_settings({"home": str(home)}), paths)
        try:
            exchange(paths, "search", {"query": "warm up", "mode": "semantic"})
            out: dict[str, list[float]] = {}
            for mode in ("semantic", "hybrid", "semantic"):
                ms = []
                for _ in range(3):
                    for q in QUESTIONS:
                        t = time.perf_counter()
                        exchange(paths, "search", {"query": q, "mode": mode})
                        ms.append((time.perf_counter() - t) * 1000)
                out.setdefault(mode, []).append(round(statistics.median(ms), 2))
        finally:
            lifecycle.stop(paths)
    print(os.getcwd(), out)


if __name__ == "__main__":
    main()
