"""Cold start (issue 41): whole processes, timed from launch to exit (or to the answer).

    .venv/bin/python bench/bench_cold.py [--runs 5] [--torch-runs 2] [--n 10000]
                                         [--json out.json]

Every figure is the median of `--runs` whole processes, interleaved with as many runs of
`python -c "import numpy"` (the baseline, measured in the same run: on a busy machine the
ratio says more than the seconds). "torch" is today's path for comparison: the same
commands with the ONNX export marked unusable (a failed record in a cache folder of its
own), so the query encoder is sentence-transformers as before issue 41.

1. `ctxd --help`, `status`, lexical search (no model).
2. Cold `ctxd --no-daemon search "<question>"` (hybrid) on a synthetic index of `--n`
   checkpoints (bench_cli's: random unit vectors under the real model's name).
3. The first search through a daemon it starts (`ctxd search`, autostart), and the
   daemon's resident memory after it.
4. `ctxd serve` over stdio: launch to the first `search` answer (the real MCP client).
5. `ctxd --no-daemon index` of a one-file tree in a fresh home: with the export made,
   and once with an empty export cache (the very first run: loads torch, embeds, exports).
6. In this process: query encoding p50 (one query, one thread), ONNX fp32 against torch
   bf16; and ms per text at batch sizes 1-64 on checkpoint-sized texts of this checkout.
7. `--cosines-only`: the lowest cosine of the ONNX query vectors to the model's, fp32 and
   the indexing precision, over every question of each dev set.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_cli import QUESTIONS, memory, run_ctxd, synthetic_index

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "where is the write lock taken before indexing"


def numpy_s() -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import numpy"], check=True)
    return time.perf_counter() - t


def timed(args: list[str], env: dict[str, str]) -> float:
    dt, r = run_ctxd(args, env)
    if r.returncode not in (0, 1):
        raise SystemExit(f"ctxd {' '.join(args)} failed ({r.returncode}): {r.stderr[-2000:]}")
    return dt


def interleaved(runs: int, cases: dict[str, Callable[[], float]]) -> dict[str, Any]:
    """Each case and the numpy baseline, `runs` rounds, in turn; medians and ratios."""
    times: dict[str, list[float]] = {"numpy": [], **{k: [] for k in cases}}
    for _ in range(runs):
        times["numpy"].append(numpy_s())
        for name, fn in cases.items():
            times[name].append(fn())
    base = statistics.median(times["numpy"])
    return {k: {"p50_s": round(statistics.median(v), 3), "min_s": round(min(v), 3),
                "x_numpy": round(statistics.median(v) / base, 1), "runs": len(v)}
            for k, v in times.items()}


def stop_daemon(env: dict[str, str]) -> None:
    run_ctxd(["daemon", "stop"], env)


def daemon_first_search(env: dict[str, str], home: Path, rss: list[float]) -> float:
    stop_daemon(env)
    dt = timed(["search", QUESTION], env)
    pids = [int(json.loads((home / "daemon.json").read_text())["pid"])]
    rss.append(memory(pids)["rss_mb"])
    stop_daemon(env)
    return dt


def serve_first_search(env: dict[str, str], home: Path) -> float:
    """Launch `ctxd serve` (stdio) and time to its first `search` answer."""
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    stop_daemon(env)
    params = StdioServerParameters(command=sys.executable, args=["-m", "ctxd.server.cli.main",
                                   "serve"], env=env, cwd=str(home.parent))
    out: dict[str, float] = {}

    async def go() -> None:
        t = time.perf_counter()
        with open(os.devnull, "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog),
                              read_timeout_seconds=600) as c:
                r = await c.call_tool("search", {"query": QUESTION})
                out["s"] = time.perf_counter() - t
                assert not r.is_error, r

    anyio.run(go)
    stop_daemon(env)
    return out["s"]


def one_file_index(env: dict[str, str], scratch: Path) -> float:
    """`ctxd --no-daemon index` of a one-file tree into a fresh home."""
    work = Path(tempfile.mkdtemp(dir=scratch))
    (work / "tree").mkdir()
    (work / "tree" / "cart.py").write_text(
        "class Cart:\n    def total(self, prices):\n        return sum(prices)\n")
    dt = timed(["--no-daemon", "index", str(work / "tree")],
               {**env, "CTXD_HOME": str(work / "home")})
    shutil.rmtree(work, ignore_errors=True)
    return dt


def torch_cache(scratch: Path) -> Path:
    """An encoder cache whose record for the default model says "cannot export": the
    commands then encode with torch, as before issue 41."""
    from ctxd.indexer.embedder import resolve_model_dir
    from ctxd.indexer.onnx_encoder import EXPORT_FORMAT, content_hash, source_key

    model_dir = resolve_model_dir("all-MiniLM-L6-v2")
    assert model_dir is not None
    folder = scratch / "torch-cache" / content_hash(model_dir)
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps({
        "format": EXPORT_FORMAT, "sources": [source_key(model_dir)], "ok": False,
        "reason": "benchmark: the torch path"}))
    return folder.parent


def in_process(batch_sizes: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)) -> dict[str, Any]:
    """Query encoding p50 (one thread) and ms per text by batch size, ONNX vs torch bf16."""
    import numpy as np
    import torch

    from ctxd.indexer.embedder import EmbedOptions, SentenceTransformerEmbedder
    from ctxd.indexer.model_embedder import ModelEmbedder

    torch.set_num_threads(1)
    onnx = ModelEmbedder(EmbedOptions(threads=1)).onnx()
    assert onnx is not None, "no ONNX export: run `ctxd index` on any tree first"
    bf16 = SentenceTransformerEmbedder(EmbedOptions(threads=1))
    questions = [*QUESTIONS, QUESTION] * 10
    out: dict[str, Any] = {}
    for name, enc in (("onnx_fp32", onnx), ("torch_" + "bf16", bf16)):
        enc.embed(["warm up"])
        ms = []
        for q in questions:
            t = time.perf_counter()
            enc.embed([q])
            ms.append((time.perf_counter() - t) * 1000)
        out[f"query_{name}_1thread"] = {"p50_ms": round(statistics.median(ms), 2),
                                         "min_ms": round(min(ms), 2), "n": len(ms)}
    out["query_torch_precision"] = bf16.precision
    a = onnx.embed(questions[:len(QUESTIONS)])
    b = bf16.embed(questions[:len(QUESTIONS)])
    out["min_cosine_onnx_vs_indexing_encoder"] = round(float((a * b).sum(axis=1).min()), 6)
    texts = checkpoint_texts()
    threads = os.cpu_count() or 1
    torch.set_num_threads(threads)
    onnx_all = ModelEmbedder(EmbedOptions(threads=threads)).onnx()
    assert onnx_all is not None
    rows = {}
    for bs in batch_sizes:
        per: dict[str, list[float]] = {"onnx_fp32": [], "torch_bf16": []}
        for rep in range(max(2, min(6, 64 // bs))):
            batch = sorted(texts[rep * bs:(rep + 1) * bs], key=len, reverse=True)
            for name, enc in (("onnx_fp32", onnx_all), ("torch_bf16", bf16)):
                t = time.perf_counter()
                enc.embed(batch)
                per[name].append((time.perf_counter() - t) * 1000 / bs)
        rows[bs] = {k: round(statistics.median(v), 1) for k, v in per.items()}
    out[f"ms_per_text_by_batch_{threads}threads"] = rows
    out["checkpoint_tokens_mean"] = round(float(np.mean(bf16.count_tokens(texts[:256]))), 1)
    return out


DEV_SETS = {"eval-dev": ROOT.parent / "shared" / "eval-dev" / "queries.jsonl",
            "docs_dev": ROOT / "bench" / "docs_dev" / "queries.jsonl",
            "polyglot_dev": ROOT / "bench" / "polyglot_dev" / "queries.jsonl",
            "polyglot_dev2": ROOT / "bench" / "polyglot_dev2" / "queries.jsonl"}


def dev_set_cosines() -> dict[str, Any]:
    """Per dev set: the lowest cosine of the ONNX query vectors (one query at a time, as
    a search encodes them) to the fp32 model's and to the indexing encoder's (bf16 where
    the CPU has it), over every question of the set."""
    import numpy as np

    from ctxd.indexer.embedder import EmbedOptions, SentenceTransformerEmbedder
    from ctxd.indexer.model_embedder import ModelEmbedder

    onnx = ModelEmbedder(EmbedOptions()).onnx()
    assert onnx is not None, "no ONNX export: run `ctxd index` on any tree first"
    indexing = SentenceTransformerEmbedder(EmbedOptions())
    fp32 = SentenceTransformerEmbedder(EmbedOptions(precision="fp32"))
    out: dict[str, Any] = {}
    for name, path in DEV_SETS.items():
        if not path.is_file():
            continue
        qs = [json.loads(line)["query"] for line in path.read_text("utf-8").splitlines()
              if line.strip()]
        ours = np.concatenate([onnx.embed([q]) for q in qs])
        theirs = indexing.embed(qs)  # loads the model: its precision is known after
        out[name] = {"questions": len(qs),
                     "min_cosine_fp32": round(float((ours * fp32.embed(qs)).sum(1).min()), 7),
                     f"min_cosine_indexing_{indexing.precision}": round(float(
                         (ours * theirs).sum(1).min()), 6)}
    return out


def checkpoint_texts() -> list[str]:
    """30-line pieces of this checkout's Python files (about checkpoint-sized)."""
    import random

    texts = []
    for p in sorted((ROOT / "indexer").rglob("*.py")):
        lines = p.read_text(encoding="utf-8").splitlines()
        texts += ["\n".join(lines[i:i + 30]) for i in range(0, len(lines), 30)]
    random.Random(41).shuffle(texts)
    return texts


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--torch-runs", type=int, default=2)
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--skip-first-run", action="store_true",
                    help="skip the very first index run (no export: ~30-60 s)")
    ap.add_argument("--cosines-only", action="store_true",
                    help="only the dev sets' query cosines (ONNX vs the model)")
    args = ap.parse_args()
    if args.cosines_only:
        print(json.dumps(dev_set_cosines(), indent=1))
        return

    from ctxd.indexer.embedder import resolve_model_dir
    from ctxd.indexer.onnx_export import export

    model_dir = resolve_model_dir("all-MiniLM-L6-v2")
    assert model_dir is not None
    state = export(model_dir)  # the user's cache; made once
    assert state.ok, state.reason
    scratch = Path(tempfile.mkdtemp(prefix="ctxd-cold-"))
    home = scratch / "home"
    home.mkdir(mode=0o700)
    synthetic_index(home / "index.db", args.n)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXD_")}
    env.update(CTXD_HOME=str(home), HF_HUB_OFFLINE="1", CTXD_SERVER_AUTO_PROJECT="false")
    local = {**env, "CTXD_DAEMON_AUTOSTART": "false"}
    torch_env = {**env, "CTXD_ENCODER_CACHE": str(torch_cache(scratch))}
    result: dict[str, Any] = {"checkpoints": args.n, "python": sys.version.split()[0],
                              "cpus": os.cpu_count(), "load_before": os.getloadavg()}
    try:
        rss: dict[str, list[float]] = {"onnx": [], "torch": []}
        result["onnx"] = interleaved(args.runs, {
            "help": lambda: timed(["--help"], local),
            "status": lambda: timed(["status"], local),
            "lexical_search": lambda: timed(["--no-daemon", "search", "--mode", "lexical",
                                             "write lock"], local),
            "no_daemon_search": lambda: timed(["--no-daemon", "search", QUESTION], local),
            "daemon_first_search": lambda: daemon_first_search(env, home, rss["onnx"]),
            "serve_first_search": lambda: serve_first_search(env, home),
            "index_one_file_fresh_home": lambda: one_file_index(local, scratch),
        })
        result["onnx"]["daemon_rss_mb"] = rss["onnx"]
        if args.torch_runs:
            t_home = home
            result["torch"] = interleaved(args.torch_runs, {
                "no_daemon_search": lambda: timed(["--no-daemon", "search", QUESTION],
                                                  {**torch_env, "CTXD_DAEMON_AUTOSTART":
                                                   "false"}),
                "daemon_first_search": lambda: daemon_first_search(torch_env, t_home,
                                                                   rss["torch"]),
            })
            result["torch"]["daemon_rss_mb"] = rss["torch"]
        if not args.skip_first_run:
            empty = {**local, "CTXD_ENCODER_CACHE": str(scratch / "empty-cache")}
            result["very_first_index_one_file"] = {"s": round(one_file_index(empty, scratch),
                                                              1)}
        result["in_process"] = in_process()
    finally:
        stop_daemon(env)
        shutil.rmtree(scratch, ignore_errors=True)
    result["load_after"] = os.getloadavg()
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
