"""CLI start-up, the daemon's latency, and memory with several MCP clients (issue 11).

    .venv/bin/python bench/bench_cli.py [--runs 9] [--before 3e24538] [--json out.json]

`--before REF` is the commit to compare with: its `indexer/ search/ server/` are
extracted (`git archive`) to a temporary folder and imported as `ctxd.*` through
PYTHONPATH, so both sides run on this interpreter and this machine, in the same run.
Every command is a whole process (`python -c "from ctxd.server.cli.main import main;
main()" ARGS`, the console script's own code), timed start to exit.

1. Start-up p50 without a daemon: `--help`, `status`, `search --mode lexical`,
   `symbols`; before and after; plus the `python -X importtime` top entries of `--help`.
2. The index: a synthetic store of N checkpoints (default 10,000; random unit vectors
   under the real model's name, text from a fixed vocabulary), as bench_search builds.
3. Hybrid `ctxd search "<question>"`: before (in-process: loads torch and the model
   every time), the cold first query that autostarts the daemon, then warm p50.
4. Server side: one hybrid request over the socket (query embedding with the real
   model + in-memory KNN + BM25 + fusion + ~0.2 ms of IPC), p50/p95 over distinct questions.
5. Three `ctxd serve` stdio clients at once, each after one `semantic_search`: total RSS
   and PSS of every ctxd process of the index home; before (each loads its own model)
   and after (they share the autostarted daemon).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_search import VOCAB, WORDS, ZIPF
from bench.stats import summary
from ctxd.indexer.models import Chunk, Symbol
from ctxd.indexer.store.sqlite.store import FileRecord, Store, serialize_vector

ROOT = Path(__file__).resolve().parents[1]
MAIN = "from ctxd.server.cli.main import main; main()"
QUESTIONS = [
    "where are retries with exponential backoff configured",
    "how is the session cookie parsed from the header",
    "render a template with a token stream",
    "which function decodes a chunked response",
    "connection pool timeout handling",
    "how are redirects followed by the proxy adapter",
    "cache the console style for a table column",
    "raise an error when the buffer is full",
    "encode the request body before sending",
    "yield each row of the table with its width",
]


# -- set-up ---------------------------------------------------------------------------------


def synthetic_index(db: Path, n: int, model: str = "all-MiniLM-L6-v2", dim: int = 384) -> None:
    """N checkpoints with random vectors under `model` (bench_search's corpus shape)."""
    store = Store.open(db)
    store.ensure_model(model, dim)
    rng = random.Random(n)
    vecs = np.random.default_rng(n).standard_normal((n, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    repo = store.upsert_repo(str(db.parent / "synthetic"), {}, "2026-01-01T00:00:00Z")
    for f in range(n // 10):
        chunks = [(Chunk(c * 10 + 1, c * 10 + 10, " ".join(rng.choices(VOCAB, weights=ZIPF,
                                                                       k=60)),
                         symbol=f"fn_{f}_{c}"), f"h{f}-{c}") for c in range(10)]
        syms = [Symbol(f"{rng.choice(WORDS)}_{rng.choice(WORDS)}_{f}_{c}", "function",
                       c * 10 + 1, c * 10 + 10) for c in range(10)]
        content = "\n".join(c.text for c, _h in chunks)  # lexical search has text to find
        store.replace_file(repo.id, FileRecord(f"pkg{f % 100}/mod{f}.py", 1, 1, str(f),
                                               "python", len(content)), content, chunks, syms,
                           "2026-01-01T00:00:00Z")
    hashes = [r[0] for r in store.query("SELECT hash FROM checkpoints ORDER BY id")]
    for start in range(0, len(hashes), 5000):
        store.add_embeddings([(h, serialize_vector(vecs[i].tolist()))
                              for i, h in enumerate(hashes[start:start + 5000], start)])
    store.close()


def extract_before(ref: str, into: Path) -> Path:
    """`indexer/ search/ server/` of commit `ref` as an importable `ctxd` package."""
    src, pkg = into / "src", into / "pkg" / "ctxd"
    src.mkdir(parents=True)
    pkg.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True,
                             capture_output=True).stdout
    tar_path = into / "src.tar"
    tar_path.write_bytes(archive)
    with tarfile.open(tar_path) as tar:
        tar.extractall(src, filter="data")
    for name in ("indexer", "search", "server"):
        (pkg / name).symlink_to(src / name)
    return into / "pkg"


# -- measuring ------------------------------------------------------------------------------


def run_ctxd(
    args: list[str], env: dict[str, str]
) -> tuple[float, subprocess.CompletedProcess[str]]:
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", MAIN, *args], capture_output=True, text=True,
                       env=env, check=False, timeout=600)
    return time.perf_counter() - t, r


def p50_of(args: list[str], env: dict[str, str], runs: int) -> dict[str, Any]:
    times = []
    for _ in range(runs):
        dt, r = run_ctxd(args, env)
        if r.returncode not in (0, 1):
            raise SystemExit(f"ctxd {' '.join(args)} failed ({r.returncode}): {r.stderr}")
        times.append(dt)
    return {"p50_s": round(statistics.median(times), 3), "min_s": round(min(times), 3),
            "runs": runs}


def importtime_top(env: dict[str, str], n: int = 8) -> list[tuple[str, int]]:
    """The `n` imports with the largest cumulative time (µs) for `ctxd --help`."""
    r = subprocess.run([sys.executable, "-X", "importtime", "-c",
                        "from ctxd.server.cli.main import main"], capture_output=True,
                       text=True, env=env, check=True)
    rows = []
    for line in r.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if m and len(m.group(3)) <= 3:  # top-level and first-level imports
            rows.append((m.group(4), int(m.group(2))))
    return sorted(rows, key=lambda x: -x[1])[:n]


def ctxd_processes(home: Path) -> list[int]:
    """Pids of the processes whose CTXD_HOME is `home` (serve processes and the daemon)."""
    out = []
    needle = f"CTXD_HOME={home}".encode()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            env = (d / "environ").read_bytes().split(b"\0")
            cmd = (d / "cmdline").read_bytes()
        except OSError:
            continue
        if needle in env and b"ctxd" in cmd:
            out.append(int(d.name))
    return out


def memory(pids: list[int]) -> dict[str, Any]:
    rss = pss = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Rss:"):
                    rss += int(line.split()[1]) * 1024
                elif line.startswith("Pss:"):
                    pss += int(line.split()[1]) * 1024
        except OSError:
            continue
    return {"processes": len(pids), "rss_mb": round(rss / 1e6), "pss_mb": round(pss / 1e6)}


def three_serve_clients(env: dict[str, str], home: Path) -> dict[str, Any]:
    """Open three stdio clients at once, one semantic_search each, then measure memory."""
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-c", MAIN, "serve"],
                                   env=env, cwd=str(home.parent))
    result: dict[str, Any] = {}

    async def client(i: int, opened: anyio.Event, done: anyio.Event) -> None:
        with open(os.devnull, "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog),
                              read_timeout_seconds=600) as c:
                r = await c.call_tool("semantic_search", {"query": QUESTIONS[i]})
                assert not r.is_error, r
                opened.set()
                await done.wait()

    async def main() -> None:
        events = [anyio.Event() for _ in range(3)]
        done = anyio.Event()
        t = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for i in range(3):
                tg.start_soon(client, i, events[i], done)
            for e in events:
                await e.wait()
            result["all_answered_s"] = round(time.perf_counter() - t, 2)
            result.update(memory(ctxd_processes(home)))
            done.set()

    anyio.run(main)
    return result


def stop_daemon(env: dict[str, str]) -> None:
    run_ctxd(["daemon", "stop"], env)


# -- main -------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--checkpoints", type=int, default=10_000)
    ap.add_argument("--before", default="3e24538")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="ctxd-bench-cli-"))
    home = tmp / "home"
    home.mkdir()
    synthetic_index(home / "index.db", args.checkpoints)
    base = {k: v for k, v in os.environ.items() if not k.startswith("CTXD_")}
    base.update({"CTXD_HOME": str(home), "HF_HUB_OFFLINE": "1",
                 "TOKENIZERS_PARALLELISM": "false"})
    after = {**base, "CTXD_DAEMON_AUTOSTART": "false"}
    before = {**base, "PYTHONPATH": str(extract_before(args.before, tmp / "before"))}
    out: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                           "python": sys.version.split()[0], "checkpoints": args.checkpoints,
                           "before": args.before, "runs": args.runs}

    startup = {"--help": ["--help"], "status": ["status"],
               "search --mode lexical": ["search", "--mode", "lexical", "retrysession"],
               "symbols": ["symbols", "retry"]}
    out["startup"] = {name: {"before": p50_of(a, before, args.runs),
                             "after": p50_of(a, after, args.runs)}
                      for name, a in startup.items()}
    out["importtime_help"] = {"before": importtime_top(before), "after": importtime_top(after)}
    print(json.dumps(out["startup"], indent=1), flush=True)

    q = QUESTIONS[0]
    out["hybrid_before_in_process"] = p50_of(["search", q], before, 3)
    auto = {**base, "CTXD_DAEMON_AUTOSTART": "true"}
    cold = []
    for _ in range(3):
        stop_daemon(auto)
        dt, r = run_ctxd(["search", q], auto)
        assert r.returncode == 0, r.stderr
        cold.append(dt)
    out["hybrid_cold_autostart"] = {"p50_s": round(statistics.median(cold), 3),
                                    "runs": [round(c, 2) for c in cold]}
    out["hybrid_warm_daemon"] = p50_of(["search", q], auto, args.runs * 2)
    out["status_via_daemon"] = p50_of(["status"], auto, args.runs)
    out["lexical_via_daemon"] = p50_of(["search", "--mode", "lexical", "retrysession"], auto,
                                       args.runs)
    print(json.dumps({k: out[k] for k in ("hybrid_before_in_process", "hybrid_cold_autostart",
                                          "hybrid_warm_daemon")}, indent=1), flush=True)

    from ctxd.server.daemon.client import exchange
    from ctxd.server.daemon.paths import DaemonPaths

    paths = DaemonPaths.for_home(home)
    server_ms: dict[str, list[float]] = {"hybrid": [], "semantic": [], "keyword": []}
    for _ in range(3):
        for question in QUESTIONS:
            for mode in server_ms:
                t = time.perf_counter()
                exchange(paths, "search", {"query": question, "mode": mode})
                server_ms[mode].append((time.perf_counter() - t) * 1000)
    out["server_side_ms"] = {mode: summary(ms) for mode, ms in server_ms.items()}
    print(json.dumps(out["server_side_ms"]), flush=True)

    stop_daemon(auto)
    out["three_serve_before"] = three_serve_clients(before, home)
    out["three_serve_after"] = three_serve_clients(auto, home)
    stop_daemon(auto)
    print(json.dumps({k: out[k] for k in ("three_serve_before", "three_serve_after")}),
          flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
