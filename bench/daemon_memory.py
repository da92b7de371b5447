"""The daemon's resident memory before and after indexing through it (issue 16, item 6).

    .venv/bin/python bench/daemon_memory.py [--functions 7500] [--repos 2] [--json out.json]
        [--env NAME=VALUE ...] [--before REF]

Builds `--repos` synthetic repositories of `--functions` small Python functions in all
(split evenly; 25 functions per file, each distinct), starts a daemon for a fresh
temporary index home with the real model, and reads the daemon's RSS (`daemon_info`,
from /proc) after start-up, after the model warmed, after each `ctxd index` through the
daemon, and after a few seconds idle; the peak (`VmHWM`) too. `--env` sets variables
in the daemon's environment (e.g. `MALLOC_ARENA_MAX=2`, to compare allocator settings).
`--before REF` first runs the same sequence on commit REF's code (`bench_cli`'s
`extract_before`: imported through PYTHONPATH, same interpreter and machine, same run).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_cli import extract_before

CLI = [sys.executable, "-m", "ctxd.server.cli.main"]
WORDS = ("parse", "render", "fetch", "store", "retry", "merge", "split", "score", "cache",
         "index", "token", "route", "queue", "batch", "order", "price", "user", "session")


def write_repo(root: Path, first: int, n: int) -> None:
    for f in range(0, n, 25):
        lines = []
        for i in range(first + f, first + min(f + 25, n)):
            a, b = WORDS[i % len(WORDS)], WORDS[(i // len(WORDS)) % len(WORDS)]
            lines.append(f"def {a}_{b}_{i}(items, limit={i % 97}):\n"
                         f"    \"\"\"{a.title()} the {b} items, at most {i % 97} of them.\"\"\"\n"
                         f"    out = [x for x in items if x.{b} > {i % 13}]\n"
                         f"    return sorted(out, key=lambda x: x.{a})[:limit]\n\n")
        (root / f"mod_{first + f:05d}.py").write_text("\n".join(lines), encoding="utf-8")


def ctxd(home: Path, *args: str, env: dict[str, str] | None = None) -> str:
    full = {**os.environ, "CTXD_HOME": str(home), **(env or {})}
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, env=full, check=True)
    return done.stdout


def info(home: Path, env: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(ctxd(home, "daemon", "status", "--json", env=env))
    return out


def hwm(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--functions", type=int, default=7500)
    ap.add_argument("--repos", type=int, default=2)
    ap.add_argument("--json")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--before")
    args = ap.parse_args()
    daemon_env = dict(kv.split("=", 1) for kv in args.env)
    out: dict[str, Any] = {"functions": args.functions, "repos": args.repos, "env": daemon_env}
    if args.before:
        with tempfile.TemporaryDirectory(prefix="ctxd-before-") as tmp:
            pkg = extract_before(args.before, Path(tmp))
            print(f"before ({args.before}):", flush=True)
            out["before"] = {"ref": args.before,
                             "rows": measure(args, {**daemon_env, "PYTHONPATH": str(pkg)})}
        print("after (this checkout):", flush=True)
    out["rows"] = measure(args, daemon_env)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


def measure(args: argparse.Namespace, daemon_env: dict[str, str]) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="ctxd-mem-") as tmp:
        home = Path(tmp) / "home"
        per = args.functions // args.repos
        repos = []
        for r in range(args.repos):
            root = Path(tmp) / f"repo{r}"
            root.mkdir()
            write_repo(root, r * per, per)
            repos.append(root)
        # The daemon inherits this environment (`lifecycle.start`).
        ctxd(home, "daemon", "start", env=daemon_env)
        rows: list[dict[str, Any]] = []

        def sample(label: str, seconds: float | None = None) -> None:
            i = info(home, daemon_env)
            pid = int(i["pid"])
            row = {"when": label, "rss_mb": round(i["rss_bytes"] / 1e6, 1),
                   "peak_mb": round((hwm(pid) or 0) / 1e6, 1)}
            if seconds is not None:
                row["seconds"] = round(seconds, 1)
            rows.append(row)
            print(json.dumps(row), flush=True)

        try:
            sample("started")
            for n, root in enumerate(repos, 1):
                t0 = time.monotonic()
                ctxd(home, "index", str(root), env=daemon_env)
                sample(f"after indexing repo {n} ({per} functions)", time.monotonic() - t0)
            ctxd(home, "search", "sort the session items by price", env=daemon_env)
            sample("after a search")
            time.sleep(5)
            sample("idle 5 s")
        finally:
            ctxd(home, "daemon", "stop", env=daemon_env)
        return rows


if __name__ == "__main__":
    main()
