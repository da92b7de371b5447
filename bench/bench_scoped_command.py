"""Whole `ctxd search` commands, scoped against unscoped, on a team store (issue 30 item 1).

    .venv/bin/python bench/bench_scoped_command.py URL [--runs 8] [--daemon-runs 30]
        [--mode semantic] [--before /tmp/q31/head] [--json out.json]

What a person (or an agent's shell) waits for: the wall time of a whole `ctxd --store URL
search QUESTION` process on a store built by `bench/bench_scoped.py --pg-bulk`
(repositories `big` 94%, `five` 5%, `one` 1%), for the cases `-a`, `--repo five`,
`--repo one`, `--path '**/*.md'` and `--repo five --lang python`, in two ways:

- `--no-daemon`: the one-shot path (the process loads the model, connects, embeds the
  question and runs the scope's first search in a fresh PostgreSQL backend);
- through a warm daemon (`ctxd daemon start` once per side and one unscoped search to load
  its model, then one CLI process per question: the default path; each scope's first
  search is among the samples).

`bench_scoped_first.py` times the search statement alone in a fresh process; this
benchmark says what that costs of the command. The store's vectors are synthetic, so its
recorded model is set to the real one for the run (the answers are meaningless, their
cost is not) and put back afterwards. Questions `QUESTIONS[i % 12]`; cases in turn, each
first in turn; sides ("before": the checkout at `--before`, "after": this tree) alternate
run by run. p50 / p90 of the wall time, and the ratio to the same side's unscoped p50.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_scoped import compared_sides
from bench.stats import against

MODEL = "all-MiniLM-L6-v2"
CASES: dict[str, list[str]] = {
    "unscoped": ["-a"],
    "repo 5%": ["--repo", "five"],
    "repo 1%": ["--repo", "one"],
    "path **/*.md": ["--path", "**/*.md"],
    "repo 5% + lang python": ["--repo", "five", "--lang", "python"],
}
QUESTIONS = [
    "how does the retry policy back off", "where are sessions closed", "parse the config file",
    "which function writes the cache to disk", "how are HTTP redirects followed",
    "where is the connection pool sized", "validate user input before saving",
    "how are errors reported to the caller", "where is the lock released",
    "format a date for the log", "how does the scheduler pick the next job",
    "where are temporary files removed",
]


@contextmanager
def recorded_model(url: str) -> Iterator[None]:
    """The store's recorded model set to the real one for the run, then put back."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = 'model'").fetchone()
        assert row is not None, f"{url}: no recorded model (not a ctxd store?)"
        conn.execute("UPDATE meta SET value = %s WHERE key = 'model'", (MODEL,))
    try:
        yield
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("UPDATE meta SET value = %s WHERE key = 'model'", (row[0],))


def command(root: str, home: Path, url: str, args: list[str]) -> tuple[float, str]:
    """(wall ms, stdout) of one `ctxd` process importing ctxd from `root`."""
    env = {**os.environ, "PYTHONPATH": root, "CTXD_HOME": str(home), "CTXD_STORE_URL": url,
           "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
    t = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "ctxd.server.cli.main", *args], env=env,
                          capture_output=True, text=True, check=False, cwd=tempfile.gettempdir())
    ms = (time.perf_counter() - t) * 1000
    if done.returncode != 0:
        raise SystemExit(f"ctxd {' '.join(args)}: exit {done.returncode}\n{done.stderr}")
    return ms, done.stdout


def search(root: str, home: Path, url: str, mode: str, case: str, q: int,
           daemon: bool) -> float:
    """The wall ms of one whole search command; checks that it answered."""
    flags = [] if daemon else ["--no-daemon"]
    ms, out = command(root, home, url, ["search", QUESTIONS[q % len(QUESTIONS)], "--mode", mode,
                                        "--limit", "10", "--json", *flags, *CASES[case]])
    assert json.loads(out)["results"], f"{case}: no results"
    return ms


def rows(times: dict[str, dict[str, list[float]]], way: str) -> dict[str, Any]:
    """p50 / p90 / ratio rows (`bench.stats.against`), printed as they are made."""
    out: dict[str, Any] = {}
    for side, by_case in times.items():
        for name, row in against(by_case, "unscoped").items():
            out[f"{way} | {side} | {name}"] = row
            print(f"{way:9} {side:6} {name:24} p50 {row['p50_ms']:8.1f} ms  "
                  f"p90 {row['p90_ms']:8.1f} ms  x{row['x_unscoped']:6.3f}", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("url")
    ap.add_argument("--runs", type=int, default=8, help="--no-daemon samples per case and side")
    ap.add_argument("--daemon-runs", type=int, default=30, help="samples through the daemon")
    ap.add_argument("--mode", default="semantic", choices=["semantic", "hybrid"])
    ap.add_argument("--before", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    sides = compared_sides(args.before)
    homes = {side: Path(tempfile.mkdtemp(prefix=f"ctxd-cmd-{side}-")) for side in sides}
    names = list(CASES)
    report: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "mode": args.mode,
                              "runs": args.runs, "daemon_runs": args.daemon_runs,
                              "results": {}}
    with recorded_model(args.url):
        for way, runs in (("no-daemon", args.runs), ("daemon", args.daemon_runs)):
            if way == "daemon":
                for side, root in sides.items():  # started, and its model loaded
                    command(root, homes[side], args.url, ["daemon", "start"])
                    search(root, homes[side], args.url, args.mode, "unscoped", 0, True)
            try:
                times = {s: {n: [] for n in names} for s in sides}
                for i in range(runs):
                    for j in range(len(names)):
                        name = names[(i + j) % len(names)]
                        order = list(sides.items())
                        for side, root in (order if i % 2 == 0 else order[::-1]):
                            times[side][name].append(search(root, homes[side], args.url,
                                                            args.mode, name, i, way == "daemon"))
                report["results"].update(rows(times, way))
            finally:
                if way == "daemon":
                    for side, root in sides.items():
                        command(root, homes[side], args.url, ["daemon", "stop"])
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
