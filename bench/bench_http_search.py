"""Concurrent lexical `search` over the real MCP streamable-HTTP transport.

    .venv/bin/python bench/bench_http_search.py [--clients 20] [--requests 30]
        [--corpus DIR] [--json out.json] [--profile out.txt]

Indexes a corpus once (phase 1 only: text, symbols; lexical search needs no vectors),
starts `ctxd serve --transport http` as a subprocess on a free loopback port (the real
server: uvicorn, the SDK's streamable-HTTP session manager, the tools), then runs
`--clients` concurrent MCP clients (the `mcp` package's own `Client` over
`streamable_http_client`, one session each, all in this process's event loop), each
calling the `search` tool `--requests` times with queries from a fixed list. Reports
latency p50/p95 per call and requests/s over the whole run, after one warm-up call per
client. `ctxd serve` answers in its own process (`CTXD_DAEMON_AUTOSTART=false`);
with `--daemon` it starts the home's daemon and hands it the searches, as it does by
default, but the daemon's watcher then embeds the (phase-1-only) index in the background
of the run; the daemon is stopped afterwards. `--profile FILE` samples the server (and
the daemon) with py-spy (if installed) while the clients run and writes its top
functions.

Default corpus: the Python standard library of the running interpreter (`*.py` only,
without site-packages and the library's own tests), because it needs no download;
`--corpus` takes any folder (e.g. bench/.corpus/corpus).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.stats import summary
from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.sqlite.store import Store
from ctxd.indexer.walk.walker import WalkOptions
from ctxd.server.daemon import lifecycle
from ctxd.server.daemon.paths import DaemonPaths
from tests.conftest import FakeEmbedder

QUERIES = [
    "def __init__", "import os", r"class \w+Error", "return None", "lang:python socket",
    "raise ValueError", "async def", "self.assertEqual", "file:json decode", "sym:Thread",
    "encoding=", "logging.getLogger", r"except \w+Error as", "TODO", "def parse",
]


EXCLUDE = ("site-packages/**", "test/**", "tests/**", "idlelib/**", "lib2to3/**")
"""Left out of the default corpus: installed packages and the standard library's tests."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def build_index(corpus: Path, home: Path) -> dict[str, Any]:
    """Phase 1 of the corpus into `home` (the fake embedder only counts tokens)."""
    home.mkdir(parents=True, exist_ok=True)
    store = Store.open(home / "index.db")
    started = time.perf_counter()
    try:
        stats = Indexer(store, FakeEmbedder()).index(
            corpus, WalkOptions(include_patterns=("*.py",), exclude_patterns=EXCLUDE),
            embed=False)
    finally:
        store.close()
    return {"files": stats.files_indexed, "checkpoints": stats.checkpoints,
            "seconds": round(time.perf_counter() - started, 1)}


def start_server(home: Path, port: int, workdir: Path, *, daemon: bool
                 ) -> tuple[subprocess.Popen[str], Any]:
    ctxd = Path(sys.executable).parent / "ctxd"
    env = {**os.environ, "CTXD_HOME": str(home), "HF_HUB_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false",
           "CTXD_DAEMON_AUTOSTART": "true" if daemon else "false"}
    proc = subprocess.Popen(
        [str(ctxd), "serve", "--transport", "http", "--port", str(port), "--log-level",
         "warning"], env=env, cwd=str(workdir), stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stderr is not None
        for line in iter(proc.stderr.readline, ""):
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc, lines
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.1)
    proc.kill()
    sys.exit("the server did not start:\n" + "".join(iter(lambda: lines.get() or "", "")))


async def run_clients(url: str, clients: int, requests: int) -> tuple[list[float], float]:
    latencies: list[float] = []
    errors: list[str] = []
    ready = anyio.Event()
    started_count = 0

    async def one(i: int) -> None:
        nonlocal started_count
        async with Client(streamable_http_client(url), read_timeout_seconds=120) as client:
            await client.call_tool("search", {"query": QUERIES[i % len(QUERIES)]})  # warm-up
            started_count += 1
            if started_count == clients:
                ready.set()
            await ready.wait()
            for n in range(requests):
                q = QUERIES[(i + n) % len(QUERIES)]
                t = time.perf_counter()
                result = await client.call_tool("search", {"query": q, "limit": 10})
                latencies.append((time.perf_counter() - t) * 1000)
                if result.is_error:
                    errors.append(str(result.content[0])[:200])

    t0 = 0.0

    async def clock() -> None:
        nonlocal t0
        await ready.wait()
        t0 = time.perf_counter()

    async with anyio.create_task_group() as tg:
        tg.start_soon(clock)
        for i in range(clients):
            tg.start_soon(one, i)
    wall = time.perf_counter() - t0
    if errors:
        sys.exit(f"{len(errors)} tool errors, e.g. {errors[0]}")
    return latencies, wall


def profile_server(pid: int, out: Path, seconds: float) -> subprocess.Popen[bytes] | None:
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(spy).exists():
        print("py-spy not found: no profile", file=sys.stderr)
        return None
    return subprocess.Popen(
        [spy, "record", "--pid", str(pid), "--duration", str(int(seconds)), "--format",
         "raw", "--output", str(out), "--rate", "200", "--nonblocking", "--subprocesses"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def top_functions(raw: Path, n: int = 25) -> list[tuple[str, float]]:
    """Inclusive share of samples per function from py-spy's collapsed stacks."""
    total = 0
    inclusive: dict[str, int] = {}
    for line in raw.read_text(encoding="utf-8").splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        k = int(count)
        total += k
        for frame in set(stack.split(";")):
            inclusive[frame] = inclusive.get(frame, 0) + k
    ranked = sorted(inclusive.items(), key=lambda kv: -kv[1])[:n]
    return [(name, round(100 * c / max(total, 1), 1)) for name, c in ranked]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--requests", type=int, default=30)
    ap.add_argument("--corpus", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    ap.add_argument("--json", type=Path)
    ap.add_argument("--profile", type=Path)
    ap.add_argument("--daemon", action="store_true",
                    help="let `ctxd serve` start the home's daemon and hand it the searches "
                         "(its watcher then embeds the phase-1-only index meanwhile)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ctxd-bench-http-") as tmp:
        home = Path(tmp) / "home"
        index = build_index(args.corpus, home)
        print(f"indexed {index['files']} files, {index['checkpoints']} checkpoints "
              f"in {index['seconds']} s", file=sys.stderr)
        port = free_port()
        proc, _lines = start_server(home, port, Path(tmp), daemon=args.daemon)
        spy = None
        try:
            url = f"http://127.0.0.1:{port}/mcp"
            if args.profile:
                spy = profile_server(proc.pid, args.profile.with_suffix(".raw"), 600)
            latencies, wall = anyio.run(run_clients, url, args.clients, args.requests)
            daemon = DaemonPaths.for_home(home).read_record()
        finally:
            if spy is not None:
                spy.send_signal(2)  # SIGINT: py-spy writes what it has
                spy.wait(timeout=60)
            proc.terminate()
            proc.wait(timeout=30)
            # `ctxd serve` shares (and autostarts) the per-home daemon: stop it, or it
            # outlives the run (loading the model in the background of the next one).
            lifecycle.stop(DaemonPaths.for_home(home), timeout=30)
    out = {
        "date": time.strftime("%Y-%m-%d"),
        "corpus": str(args.corpus),
        "index": index,
        "clients": args.clients,
        "requests_per_client": args.requests,
        "requests": len(latencies),
        "latency_ms": summary(latencies),
        "requests_per_s": round(len(latencies) / wall, 1),
        "served_by": f"daemon (pid {daemon['pid']})" if daemon else "ctxd serve, in-process",
        "wall_s": round(wall, 2),
    }
    if args.profile and args.profile.with_suffix(".raw").exists():
        top = top_functions(args.profile.with_suffix(".raw"))
        args.profile.write_text("\n".join(f"{pct:5.1f}%  {name}" for name, pct in top) + "\n",
                                encoding="utf-8")
        out["profile"] = str(args.profile)
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
