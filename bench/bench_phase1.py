"""Phase 1 of indexing a large real tree, before vs after, interleaved in one run.

    .venv/bin/python bench/bench_phase1.py --tree DIR [--before CODE] [--rounds N]
        [--modes dry_run,phase1,greppable] [--json out.json]

Times `ctxd index --dry-run` (walk, read, hash, classify, chunk, count tokens) and phase 1
written (the same plus file text, checkpoints, symbols, summaries and both FTS5 indexes
committed; no embedding) of `--tree` into a fresh store, as files/s and MB/s (bytes of
the files indexed), and the time to greppable inside phase 1 (every file's text
committed); ripgrep's one scan of the tree is timed in each round beside them. The mode
`greppable` times the text pass alone (the run is stopped when chunking would start: for
trees too large to chunk in every round), with the CPU seconds of the process (all its
threads) beside it.
With `--before CODE` (a folder holding an older `ctxd` package, e.g.
`git archive <commit> indexer search server | tar -x -C CODE/ctxd` plus an empty
`CODE/ctxd/__init__.py`), every round runs the older code and this checkout in turn, each
in its own process, and the result gives medians and after/before ratios: on a shared
machine only numbers of one run compare.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def measure(tree: Path, modes: tuple[str, ...] = ("dry_run", "phase1")) -> dict[str, float]:
    """One dry run and one phase-1 run of `tree` with the `ctxd` this process imports.
    The phase-1 run also gives the time to greppable: when the text of every file is
    committed (the first `chunk` progress report of text-first code; the end of phase 1
    for code that writes each file's text with its checkpoints)."""
    from ctxd.indexer.embedder import EmbedOptions, SentenceTransformerEmbedder
    from ctxd.indexer.pipeline import Indexer
    from ctxd.indexer.store.sqlite.store import Store
    from ctxd.indexer.walk.walker import WalkOptions

    emb = SentenceTransformerEmbedder(EmbedOptions())  # counts tokens; never loads torch
    emb.count_tokens(["load the counter before timing"])
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in modes:
            with Store.open(Path(tmp) / f"{mode}.db") as store:
                marks: dict[str, float] = {}

                def progress(p: Any, marks: dict[str, float] = marks) -> None:
                    marks.setdefault(p.phase, time.perf_counter())

                def stop(marks: dict[str, float] = marks, mode: str = mode) -> bool:
                    return mode == "greppable" and "chunk" in marks

                t, cpu = time.perf_counter(), time.process_time()
                stats = Indexer(store, emb).index(tree, WalkOptions(), embed=False,
                                                  dry_run=mode == "dry_run", progress=progress,
                                                  should_stop=stop)
                end = time.perf_counter()
                out[f"{mode}_s"] = end - t
                if mode == "greppable":
                    out["greppable_s"] = marks.get("chunk", end) - t
                    out["greppable_cpu_s"] = time.process_time() - cpu
                    out["files"] = store.query("SELECT count(*) FROM files")[0][0]
                    out["checkpoints"] = 0
                    out["bytes"] = store.query("SELECT sum(size) FROM files")[0][0]
                if mode == "phase1":
                    out["greppable_s"] = marks.get("chunk", end) - t
                    out["files"] = stats.files_indexed
                    out["checkpoints"] = stats.checkpoints
                    out["bytes"] = store.query("SELECT sum(size) FROM files")[0][0]
    return out


def rg_scan(tree: Path) -> float:
    """Seconds for ripgrep to search every file of `tree` once (no index: its time to
    greppable is none, each query pays this)."""
    rg = shutil.which("rg") or str(Path(sys.executable).with_name("rg"))
    if not Path(rg).exists():
        return float("nan")  # no ripgrep here
    t = time.perf_counter()
    subprocess.run([rg, "-c", "--no-messages", "-F", "max_retries", str(tree)],
                   capture_output=True, check=False)
    return time.perf_counter() - t


def run_side(code: Path | None, tree: Path, modes: tuple[str, ...]) -> dict[str, float]:
    """`measure` in a child process whose `ctxd` comes from `code` (None: this checkout)."""
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    script = str(Path(__file__).resolve())
    done = subprocess.run([sys.executable, script, "--tree", str(tree), "--side",
                           "--modes", ",".join(modes)], env=env,
                          check=True, capture_output=True, text=True,
                          cwd=tempfile.gettempdir())
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def summarise(runs: list[dict[str, float]]) -> dict[str, float]:
    files, mb = runs[0]["files"], runs[0]["bytes"] / 1e6
    out = {"files": files, "checkpoints": runs[0]["checkpoints"], "mb": round(mb, 1)}
    for mode in ("dry_run", "phase1", "greppable"):
        if f"{mode}_s" not in runs[0]:
            continue
        med = statistics.median(r[f"{mode}_s"] for r in runs)
        out[f"{mode}_s"] = round(med, 1)
        out[f"{mode}_files_per_s"] = round(files / med, 1)
        out[f"{mode}_mb_per_s"] = round(mb / med, 2)
    if "greppable_cpu_s" in runs[0]:
        out["greppable_cpu_s"] = round(statistics.median(r["greppable_cpu_s"] for r in runs), 1)
    out["rounds_greppable_s"] = [round(r["greppable_s"], 1) for r in runs if "greppable_s" in r]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", type=Path, required=True)
    ap.add_argument("--before", type=Path, help="folder holding the older `ctxd` package")
    ap.add_argument("--after", type=Path, help="the same for the newer one (default: this "
                    "checkout; a copy lets the checkout change while the benchmark runs)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--modes", default="dry_run,phase1",
                    help="what to time: dry_run, phase1 (which gives greppable too), "
                    "greppable (the text pass alone)")
    ap.add_argument("--side", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    tree = args.tree.resolve()
    modes = tuple(m for m in args.modes.split(",") if m)
    if args.side:
        print(json.dumps(measure(tree, modes)))
        return
    after = args.after.resolve() if args.after is not None else None
    sides: dict[str, Path | None] = {"after": after}
    if args.before is not None:
        sides = {"before": args.before.resolve(), "after": after}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in sides}
    rg: list[float] = []
    for round_ in range(args.rounds):
        for name, code in sides.items():
            runs[name].append(run_side(code, tree, modes))
            print(f"round {round_ + 1} {name}: {runs[name][-1]} load "
                  f"{os.getloadavg()[0]:.1f}", file=sys.stderr)
        rg.append(rg_scan(tree))
    out: dict[str, object] = {"date": time.strftime("%Y-%m-%d"), "tree": str(tree),
                              "rounds": args.rounds, "load_at_end": os.getloadavg()}
    for name, side_runs in runs.items():
        out[name] = summarise(side_runs)
    out["rg_scan_s"] = round(statistics.median(rg), 2)
    if "before" in out:
        before, after = runs["before"], runs["after"]
        for mode in ("dry_run", "phase1", "greppable", "greppable_cpu"):
            if f"{mode}_s" not in before[0]:
                continue
            b = statistics.median(r[f"{mode}_s"] for r in before)
            a = statistics.median(r[f"{mode}_s"] for r in after)
            out[f"{mode}_speedup"] = round(b / a, 2)
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
