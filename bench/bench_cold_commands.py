"""Every CLI command, cold and through a warm daemon: whole processes, wall and CPU.

    .venv/bin/python bench/bench_cold_commands.py --home HOME --cwd REPO_ROOT \
        [--runs 5] [--only NAME,...] [--json out.json]

Cold: a new process, no daemon (`CTXD_DAEMON_AUTOSTART=false`, `--no-daemon`), the index
on disk (the OS page cache may be warm). Daemon: the same commands with `ctxd daemon
start` done and one search answered first (the model warm). Each figure is the median of
`--runs` processes, the cases interleaved round by round (`wall_first_s`: the first
round's, which through the daemon is the daemon's first answer to that query); CPU is the
process's user + system time (`wait4`), which a busy machine inflates far less than the
wall clock. Through the daemon only the client's CPU is counted (the daemon is not its
child).

`ui`: launch to the first page served (the login address, cookie followed, HTTP 200).
`serve`: `ctxd serve` (stdio) launch to the first tool answer, through the real MCP client
(CPU: the server process only).

The cases name symbols of the fastapi checkout this was first run on (`--cwd` a checkout
of fastapi at its HEAD); `--case NAME=ARGS` adds or replaces one for another repository.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

CTXD = [str(Path(sys.executable).parent / "ctxd")]
"""The console script, as a shell runs it."""

CASES: dict[str, str] = {
    "help": "--help",
    "status": "status",
    "status --json": "status --json",
    "search": "search 'how are dependencies with yield cleaned up'",
    "search --json": "search --json 'how are dependencies with yield cleaned up'",
    "search filters": "search --lang python --path 'fastapi/**' 'validate the request body'",
    "search lexical": "search --mode lexical 'def solve_dependencies'",
    "search keyword": "search --mode keyword 'jsonable encoder'",
    "symbols": "symbols APIRouter",
    "files": "files 'fastapi/**/*.py'",
    "refs distinctive": "refs solve_dependencies",
    "refs common": "refs FastAPI",
    "callers distinctive": "callers solve_dependencies --depth 2",
    "callers common": "callers fastapi/param_functions.py:2283 --depth 2",
    "callees": "callees get_request_handler",
    "path": "path get_request_handler.app solve_dependencies",
    "impact distinctive": "impact jsonable_encoder --depth 2",
    "impact file": "impact fastapi/routing.py",
    "cat": "cat fastapi fastapi/routing.py --lines 1:40",
    "repos": "repos",
}
def timed(args: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one whole process (reaped, so `os.times` counts it)."""
    before = os.times()
    t = time.perf_counter()
    p = subprocess.run(args, capture_output=True, env=env, cwd=cwd, timeout=600, check=False)
    wall = time.perf_counter() - t
    rc, tail = p.returncode, (p.stdout + p.stderr).decode(errors="replace")[-400:]
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system
                                                         - before.children_system)
    if rc not in (0, 1, 2):  # 2: a usage error or an ambiguous name, still an answer
        raise SystemExit(f"{shlex.join(args)} failed ({rc}): {tail}")
    return wall, cpu


def command(spec: str, daemon: bool) -> list[str]:
    words = shlex.split(spec)
    if daemon or words[0] == "--help":
        return [*CTXD, *words]
    return [*CTXD, "--no-daemon", *words]


def ui_first_page(env: dict[str, str], cwd: Path, daemon: bool) -> tuple[float, float]:
    before = os.times()
    t = time.perf_counter()
    args = [*CTXD, "ui", "--no-open"] + ([] if daemon else ["--no-daemon"])
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                         cwd=cwd, text=True)
    try:
        assert p.stdout is not None
        url = p.stdout.readline().strip()
        opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        with opener.open(url, timeout=120) as r:
            body = r.read()
            assert r.status == 200 and body, (r.status, len(body))
        wall = time.perf_counter() - t
    finally:
        p.terminate()
        p.wait(timeout=60)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system
                                                         - before.children_system)
    return wall, cpu


def serve_first_answer(env: dict[str, str], cwd: Path, daemon: bool, tool: str,
                       arguments: dict[str, Any]) -> tuple[float, float]:
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    args = ([] if daemon else ["--no-daemon"]) + ["serve"]
    params = StdioServerParameters(command=CTXD[0], args=[*CTXD[1:], *args], env=env,
                                   cwd=str(cwd))
    out: dict[str, float] = {}
    before = os.times()

    async def go() -> None:
        t = time.perf_counter()
        with open(os.devnull, "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog),
                              read_timeout_seconds=600) as c:
                r = await c.call_tool(tool, arguments)
                out["wall"] = time.perf_counter() - t
                assert not r.is_error, r

    anyio.run(go)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system
                                                         - before.children_system)
    return out["wall"], cpu


def rounds(runs: int, cases: dict[str, Any]) -> dict[str, dict[str, float]]:
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in cases}
    for _ in range(runs):
        for name, fn in cases.items():
            times[name].append(fn())
    return {k: {"wall_p50_s": round(statistics.median(w for w, _ in v), 3),
                "wall_min_s": round(min(w for w, _ in v), 3),
                "wall_first_s": round(v[0][0], 3),
                "cpu_p50_s": round(statistics.median(c for _, c in v), 3),
                "runs": len(v)} for k, v in times.items()}


def suite(specs: dict[str, str], env: dict[str, str], cwd: Path, daemon: bool,
          only: set[str] | None) -> dict[str, Any]:
    cases: dict[str, Any] = {}
    for name, spec in specs.items():
        cases[name] = (lambda s=spec: timed(command(s, daemon), env, cwd))
    cases["ui"] = lambda: ui_first_page(env, cwd, daemon)
    cases["serve search"] = lambda: serve_first_answer(
        env, cwd, daemon, "search", {"query": "how are dependencies with yield cleaned up"})
    cases["serve find_references"] = lambda: serve_first_answer(
        env, cwd, daemon, "find_references", {"symbol": "solve_dependencies"})
    if not daemon:
        cases["search, starting the daemon"] = lambda: first_search_starting_daemon(env, cwd)
    if only:
        cases = {k: v for k, v in cases.items() if k in only}
    return cases


def first_search_starting_daemon(env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """A plain `ctxd search` with no daemon running: it starts one and waits for its answer
    (CPU: the client process only; the daemon is not its child). The daemon is stopped."""
    auto = {k: v for k, v in env.items() if k != "CTXD_DAEMON_AUTOSTART"}
    try:
        return timed([*CTXD, "search", "how are dependencies with yield cleaned up"], auto,
                     cwd)
    finally:
        subprocess.run([*CTXD, "daemon", "stop"], env=auto, cwd=cwd, capture_output=True,
                       check=False)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--cwd", type=Path, required=True, help="the indexed checkout")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--case", action="append", default=[], help="NAME=ARGS")
    ap.add_argument("--no-daemon-side", action="store_true", help="cold side only")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    specs = dict(CASES)
    for c in a.case:
        name, _, spec = c.partition("=")
        specs[name] = spec
    only = {s for s in a.only.split(",") if s} or None
    base = {**os.environ, "CTXD_HOME": str(a.home.resolve())}
    cold_env = {**base, "CTXD_DAEMON_AUTOSTART": "false"}
    t = time.perf_counter()
    numpy = rounds(a.runs, {"python -c 'import numpy'": lambda: timed(
        [sys.executable, "-c", "import numpy"], base, a.cwd)})
    result: dict[str, Any] = {"numpy": numpy, "load_before": os.getloadavg()}
    result["cold"] = rounds(a.runs, suite(specs, cold_env, a.cwd, False, only))
    print(json.dumps(result["cold"], indent=1), flush=True)
    if not a.no_daemon_side:
        warm_env = {**base}
        subprocess.run([*CTXD, "daemon", "start"], env=warm_env, cwd=a.cwd, check=True,
                       capture_output=True)
        try:
            timed([*CTXD, "search", "warm the daemon up"], warm_env, a.cwd)
            result["daemon"] = rounds(a.runs, suite(specs, warm_env, a.cwd, True, only))
        finally:
            subprocess.run([*CTXD, "daemon", "stop"], env=warm_env, cwd=a.cwd,
                           capture_output=True, check=False)
        print(json.dumps(result["daemon"], indent=1), flush=True)
    result["load_after"] = os.getloadavg()
    result["seconds"] = round(time.perf_counter() - t, 1)
    if a.json:
        a.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
