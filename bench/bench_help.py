"""`ctxd --help` and a piped / coloured lexical search, before and after (issue 17).

    .venv/bin/python bench/bench_help.py [--runs 10] [--before 01e615a] [--json out.json]

Every command is a whole process (bench_cli's `run_ctxd`: the console script's own code),
timed start to exit; medians over `--runs`, the commit `--before` extracted and imported
through PYTHONPATH so both sides run on this interpreter and this machine, interleaved in
the same run. The search runs over bench_cli's synthetic index (1,000 checkpoints); `rich`
is imported only for `--color always`. The bare interpreter (`python -c pass`) is timed in
the same rounds: `--help above bare python` is the goal's measure (issue 30: <= 0.15 s).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_cli import extract_before, run_ctxd, synthetic_index

COMMANDS = {
    "--help": ["--help"],
    "search --mode lexical (piped)": ["search", "--mode", "lexical", "retrysession"],
    "search --mode lexical --color always": ["search", "--mode", "lexical", "retrysession",
                                             "--color", "always"],
}


def cli_import_us(env: dict[str, str]) -> int:
    """`-X importtime`'s cumulative microseconds for `ctxd.server.cli.main`."""
    r = subprocess.run([sys.executable, "-X", "importtime", "-c",
                        "import ctxd.server.cli.main"], capture_output=True, text=True,
                       env=env, check=True)
    return next(int(line.split("|")[1]) for line in r.stderr.splitlines()
                if line.rstrip().endswith("| ctxd.server.cli.main"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--before", default="01e615a")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ctxd-bench-help-"))
    home = tmp / "home"
    home.mkdir()
    synthetic_index(home / "index.db", 1000)
    base = {k: v for k, v in os.environ.items() if not k.startswith("CTXD_")}
    base.update({"CTXD_HOME": str(home), "HF_HUB_OFFLINE": "1",
                 "CTXD_DAEMON_AUTOSTART": "false"})
    sides = {"before": {**base, "PYTHONPATH": str(extract_before(args.before, tmp / "b"))},
             "after": base}
    times: dict[str, dict[str, list[float]]] = {c: {s: [] for s in sides} for c in COMMANDS}
    bare: list[float] = []
    for _ in range(args.runs):
        t = time.perf_counter()  # the interpreter alone, same run (issue 30: --help above it)
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=base)
        bare.append(time.perf_counter() - t)
        for name, cmd in COMMANDS.items():
            for side, env in sides.items():
                if side == "before" and "--color" in cmd:
                    continue  # no such option before
                dt, r = run_ctxd(cmd, env)
                if r.returncode not in (0, 1):
                    raise SystemExit(f"{side} ctxd {' '.join(cmd)}: {r.stderr}")
                times[name][side].append(dt)
    out: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                           "python": sys.version.split()[0], "before": args.before,
                           "runs": args.runs, "median_s": {}}
    for name, by_side in times.items():
        out["median_s"][name] = {s: round(statistics.median(t), 3)
                                 for s, t in by_side.items() if t}
    out["median_s"]["bare python (-c pass)"] = round(statistics.median(bare), 3)
    # CPU time of the imports alone (-X importtime's cumulative figure for the CLI module):
    # steadier than wall time when the machine is shared
    out["cli_import_ms_median"] = {
        side: round(statistics.median(cli_import_us(env) for _ in range(args.runs)) / 1000, 1)
        for side, env in sides.items()}
    out["--help above bare python_s"] = {
        s: round(t - out["median_s"]["bare python (-c pass)"], 3)
        for s, t in out["median_s"]["--help"].items()}
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
