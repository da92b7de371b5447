"""Lexical search per query through the product path: `ctxd search --batch - --mode lexical`.

    .venv/bin/python bench/bench_lexical_batch.py [--before /tmp/q30/head] [--rounds 5]
        [--limit 10] [--warm 3] [--home DIR] [--json FILE]

The eval-dev corpus (`bench/corpus.py`) is indexed once (phase 1 only, no vectors) into a
temporary CTXD_HOME. Each round starts one `ctxd --no-daemon search --batch - --mode lexical
-a` process (the console script's own code, `python -c "from ctxd.server.cli.main import
main; main()"`) and writes to its stdin one warm-up query and then bench_lexical.py's 50
distinct queries (`CASES`), all at once; the output's JSON lines are read as they come and
time-stamped. A query's time is the gap between its line and the one before: everything the
product does for it (parse, FTS5 candidates, reading texts, verifying, ranking, context
lines, enclosing symbols, JSON, the print), nothing of the start-up (the warm-up query pays
the imports and the first reads). The engine's answer cache is on, as in the product, and
never hit (the queries are distinct within a process).

`--before DIR`: also run the package under DIR (e.g. /tmp/q30/head, a `ctxd` package of
main) through PYTHONPATH, in rounds alternating with this checkout's, so both see the
same load. Every round's output (each line's JSON but its `id`) is hashed per query: the
answers of both sides must be identical (`same_answers`), and so must every round's.

Reported: per side, the median over rounds of the per-query mean (the issue's "ms a
query": the 50 queries' time / 50) and of the per-query median, and after/before ratios
of the round medians. On a loaded machine wall time is mostly waiting for a core, so each
round also runs the same process with the warm-up query alone: the difference of the two
processes' CPU time (user + system), over 50, is `cpu_ms_per_query`, what a query costs
on a core of its own.

`--warm PASSES`: each round also runs, per side, one process that passes over the 50
queries PASSES times with the `--batch` loop's own code (`_search_batch`, output to a null
sink), the engine's answer cache emptied before each query: the CPU ms per query of the
passes after the first (`warm_cpu_ms_per_query`) is what a long-lived process (the daemon,
`ctxd serve`) spends once it has read the texts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_lexical import CASES

ROOT = Path(__file__).resolve().parents[1]
MAIN = "from ctxd.server.cli.main import main; main()"
WARMUP = "urllib3 warm-up"


def build_home(home: Path) -> None:
    """The eval-dev corpus, indexed in phase 1 only (text, symbols; no vectors)."""
    from bench.corpus import ensure_corpus
    from ctxd.indexer.pipeline import Indexer
    from ctxd.indexer.store.sqlite.store import Store
    from ctxd.indexer.walk.walker import WalkOptions
    from tests.conftest import FakeEmbedder

    home.mkdir(parents=True, exist_ok=True)
    store = Store.open(home / "index.db")
    Indexer(store, FakeEmbedder()).index(ensure_corpus(), WalkOptions(), embed=False)
    store.close()


def _cpu() -> float:
    """CPU seconds (user + system) of the waited-for child processes so far."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def one_round(env: dict[str, str], cwd: Path, limit: int | None,
              only_warmup: bool = False) -> dict[str, Any]:
    """One process over the warm-up and the 50 queries: per-query ms and answer digests,
    and the process's CPU seconds."""
    argv = [sys.executable, "-c", MAIN, "--no-daemon", "search", "--batch", "-",
            "--mode", "lexical", "-a"]
    if limit is not None:
        argv += ["--limit", str(limit)]
    queries = [WARMUP] if only_warmup else [WARMUP, *(c.query for c in CASES)]
    cpu = _cpu()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=str(cwd))
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(("\n".join(queries) + "\n").encode())
    proc.stdin.close()
    stamps, lines = [], []
    for raw in proc.stdout:
        stamps.append(time.perf_counter())
        lines.append(raw)
    err = proc.stderr.read() if proc.stderr else b""
    if proc.wait() != 0 or len(lines) != len(queries):
        sys.exit(f"ctxd search --batch failed ({proc.returncode}): {err.decode()[-2000:]}")
    cpu = _cpu() - cpu
    ms = [(b - a) * 1000 for a, b in pairwise(stamps)]
    digests = []
    for raw in lines[1:]:
        obj = json.loads(raw)
        obj.pop("id", None)
        digests.append(hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16])
    return {"ms": ms, "digests": digests, "cpu_s": cpu,
            "results": [len(json.loads(raw).get("results", [])) for raw in lines[1:]]}


def in_process(home: Path, passes: int, limit: int | None) -> dict[str, Any]:
    """`--warm`'s child: the `--batch` loop's own code (`_search_batch`) over the 50
    queries `passes` times in this process, the engine's answer cache emptied before each
    query, output to a null sink; CPU ms per query of each pass."""
    import contextlib
    import io

    from ctxd.search.lexical import engine
    from ctxd.server.cli.main import _search_batch
    from ctxd.server.config import load_settings
    from ctxd.server.service import Service

    os.environ["CTXD_HOME"] = str(home)
    service = Service(load_settings({}), long_lived=True)
    options = {"mode": "lexical", "limit": limit, "repositories": None, "path_glob": None,
               "language": None}
    with contextlib.redirect_stdout(io.StringIO()):
        _search_batch(service, io.StringIO(WARMUP + "\n"), options)
    out = []
    for _ in range(passes):
        cpu = time.process_time()
        for case in CASES:
            with engine._ANSWERS_LOCK:
                engine._ANSWERS.clear()
            with contextlib.redirect_stdout(io.StringIO()):
                _search_batch(service, io.StringIO(case.query + "\n"), options)
        out.append((time.process_time() - cpu) * 1000 / len(CASES))
    service.close()
    return {"_module": engine.__file__, "cpu_ms_per_query_each_pass": out}


def warm_round(env: dict[str, str], home: Path, passes: int, limit: int | None
               ) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--in-process", str(home), "--passes", str(passes)]
    if limit is not None:
        argv += ["--limit", str(limit)]
    out = subprocess.run(argv, check=True, capture_output=True, text=True, env=env).stdout
    data: dict[str, Any] = json.loads(out.splitlines()[-1])
    return data


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", type=Path, help="a ctxd package's parent folder (PYTHONPATH)")
    ap.add_argument("--rounds", type=int, default=5, help="processes per side")
    ap.add_argument("--limit", type=int, help="--limit (files per page; default: the product's)")
    ap.add_argument("--home", type=Path, help="reuse this CTXD_HOME (built when missing)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--warm", type=int, default=0, metavar="PASSES",
                    help="also time a long-lived process: PASSES passes over the queries")
    ap.add_argument("--in-process", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--passes", type=int, default=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.in_process:  # `--warm`'s child
        print(json.dumps(in_process(args.in_process, args.passes, args.limit)))
        return

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        home = args.home or tmp / "home"
        if not (home / "index.db").exists():
            build_home(home)
        base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CTXD_HOME")}
        base |= {"CTXD_HOME": str(home), "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"}
        sides = {"after": dict(base)}
        if args.before:
            sides = {"before": dict(base, PYTHONPATH=str(args.before.resolve())), **sides}
        rounds: dict[str, list[dict[str, Any]]] = {s: [] for s in sides}
        warm: dict[str, list[float]] = {s: [] for s in sides}
        for _ in range(args.rounds):
            for side, env in sides.items():
                full = one_round(env, tmp, args.limit)
                start = one_round(env, tmp, args.limit, only_warmup=True)["cpu_s"]
                full["cpu_ms_per_query"] = (full["cpu_s"] - start) * 1000 / len(CASES)
                rounds[side].append(full)
                if args.warm:
                    got = warm_round(env, home, args.warm, args.limit)
                    if side == "before" and not got["_module"].startswith(
                            str(args.before.resolve())):
                        sys.exit("the before side imported this checkout's engine")
                    warm[side] += got["cpu_ms_per_query_each_pass"][1:]

    summary, per_query = summarize(rounds, warm)
    summary |= {"rounds": args.rounds, "queries": len(CASES), "limit": args.limit,
                "load_avg_end": os.getloadavg()}
    report = {"command": " ".join(sys.argv), "summary": summary, "queries": per_query}
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def summarize(rounds: dict[str, list[dict[str, Any]]], warm: dict[str, list[float]]
              ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Each side's medians over the rounds, the ratios, and each query's medians."""
    summary: dict[str, Any] = {}
    for side, runs in rounds.items():
        means = [statistics.fmean(r["ms"]) for r in runs]
        medians = [statistics.median(r["ms"]) for r in runs]
        summary[side] = {
            "mean_ms_per_query_each_round": [round(m, 2) for m in means],
            "mean_ms_per_query": round(statistics.median(means), 2),
            "cpu_ms_per_query": round(statistics.median(r["cpu_ms_per_query"] for r in runs), 2),
            "cpu_ms_per_query_each_round": [round(r["cpu_ms_per_query"], 2) for r in runs],
            "median_ms_per_query": round(statistics.median(medians), 2),
            "p90_ms": round(statistics.median(
                statistics.quantiles(r["ms"], n=10)[-1] for r in runs), 2),
            "stable_answers": all(r["digests"] == runs[0]["digests"] for r in runs),
        }
        if warm[side]:
            summary[side]["warm_cpu_ms_per_query"] = round(statistics.median(warm[side]), 2)
            summary[side]["warm_cpu_ms_each_pass"] = [round(x, 2) for x in warm[side]]
    per_query = []
    for i, case in enumerate(CASES):
        row: dict[str, Any] = {"query": case.query}
        for side, runs in rounds.items():
            row[f"{side}_ms"] = round(statistics.median(r["ms"][i] for r in runs), 2)
            row[f"{side}_results"] = runs[0]["results"][i]
        per_query.append(row)
    if "before" in rounds:
        b, a = rounds["before"], rounds["after"]
        summary["same_answers"] = sum(
            x == y for x, y in zip(b[0]["digests"], a[0]["digests"], strict=True))
        summary["ratio_mean_before_over_after"] = round(
            summary["before"]["mean_ms_per_query"] / summary["after"]["mean_ms_per_query"], 2)
        summary["ratio_median_before_over_after"] = round(
            summary["before"]["median_ms_per_query"] / summary["after"]["median_ms_per_query"], 2)
        summary["ratio_cpu_before_over_after"] = round(
            summary["before"]["cpu_ms_per_query"] / summary["after"]["cpu_ms_per_query"], 2)
        if warm["before"]:
            summary["ratio_warm_cpu_before_over_after"] = round(
                summary["before"]["warm_cpu_ms_per_query"]
                / summary["after"]["warm_cpu_ms_per_query"], 2)
        summary["round_ratios_mean"] = [
            round(statistics.fmean(x["ms"]) / statistics.fmean(y["ms"]), 2)
            for x, y in zip(b, a, strict=True)]
    return summary, per_query


if __name__ == "__main__":
    main()
