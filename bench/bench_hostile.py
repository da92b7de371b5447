"""Hostile inputs of issue 23 (items 5, 6, 7), this checkout against a baseline checkout.

    .venv/bin/python bench/bench_hostile.py --baseline PKG_DIR [--cap 120] [--json out.json]

Each case runs in a child process (so a baseline that never ends is cut at `--cap`
seconds and reported as such), with `ctxd` imported from this checkout, then from
`--baseline` (a folder holding `ctxd/__init__.py` and `ctxd/{indexer,search,server}`, e.g.
made from `git archive main`):

- globs (item 7): a 2,000-level tree's folder paths `d`, `d/d`, ... each matched by
  `which_dir` against `**/**/d/d/zzz` and `**/d/**/d/**/zzz` (what a walk asks at every
  level), and `*a*a*a*a*b` against one 200-character name of `a`s;
- syntax (item 5): `parse_definitions` on a `.py` of 20,000 comment lines then one
  function, one of 20,000 comment lines then 20,000 functions, and a `.js` of 40,000
  comment lines above one function; one of 40,000 comment lines between two functions
  (issue 30, item 6: after a block, Python's grammar is quadratic in them), parsed, and
  chunked by `chunk_file` (the pipeline's path, with its 10 s parse budget);
- memory (item 6): `ctxd index --dry-run --max-file-size 0` over a small file and a
  2 GB sparse file: wall time and the child's peak RSS (`wait4`), address space capped at
  4 GiB.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.stats import emit

GLOB = """
import sys, time
from ctxd.indexer.walk.patterns import compile_globs
pattern, kind = sys.argv[1], sys.argv[2]
m = compile_globs([pattern], "exclude_patterns")
t = time.perf_counter()
if kind == "depth":
    path = ""
    for _ in range(2000):
        path = f"{path}/d" if path else "d"
        m.which_dir(path, "d")
else:
    m.match_file("a" * 200)
print(time.perf_counter() - t)
"""

SYNTAX = """
import sys, time
from ctxd.indexer.chunk.syntax import parse_definitions
case = sys.argv[1]
DEF_RUN = ("def f():\\n    return 1\\n\\n"
           + "\\n".join(f"# comment line {i}" for i in range(40000))
           + "\\ndef g():\\n    return 2\\n")
if case == "py-comments":
    text = "\\n".join(f"# comment line {i}" for i in range(20000)) + "\\ndef f():\\n    return 1\\n"
    lang = "python"
elif case == "py-def-comments-40k":
    text = DEF_RUN
    lang = "python"
elif case == "chunk-py-def-comments-40k":  # the pipeline's path: chunk_file, 10 s parse budget
    from ctxd.indexer.chunk.chunker import ChunkOptions, chunk_file
    from ctxd.indexer.chunk.tokens import approximate_counter
    text = DEF_RUN
    t = time.perf_counter()
    fc = chunk_file("gen.py", text, ChunkOptions(), approximate_counter)
    print("windows" if fc.windows_reason else "syntax", file=sys.stderr)
    print(time.perf_counter() - t)
    raise SystemExit
elif case == "py-comments-then-functions":
    head = "\\n".join(f"# comment line {i}" for i in range(20000))
    text = head + "\\n\\n" + "".join(f"def f{i}(x):\\n    return x\\n" for i in range(20000))
    lang = "python"
else:
    text = "\\n".join(f"// note {i}" for i in range(40000)) + "\\nfunction f() { return 1 }\\n"
    lang = "javascript"
t = time.perf_counter()
parse_definitions(lang, text)
print(time.perf_counter() - t)
"""


def _env(pkg: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pkg:
        env["PYTHONPATH"] = pkg
    return env


def _timed(pkg: str | None, code: str, args: list[str], cap: float) -> float | str:
    try:
        out = subprocess.run([sys.executable, "-c", code, *args], env=_env(pkg),
                             capture_output=True, text=True, timeout=cap, check=True)
    except subprocess.TimeoutExpired:
        return f"> {cap:.0f} s (cut)"
    return round(float(out.stdout.strip().splitlines()[-1]), 3)


def _memory(pkg: str | None, repo: Path, home: Path) -> dict[str, object]:
    def cap_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, resource.RLIM_INFINITY))

    cmd = [sys.executable, "-c", "import sys; from ctxd.server.cli.main import main; "
           "sys.argv[0] = 'ctxd'; main()", "index", str(repo), "--dry-run",
           "--max-file-size", "0", "--json"]
    env = _env(pkg) | {"CTXD_HOME": str(home), "CTXD_DAEMON_AUTOSTART": "false"}
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            preexec_fn=cap_memory)
    assert proc.stdout is not None
    out = proc.stdout.read()
    proc.stdout.close()
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    stats = json.loads(out) if proc.returncode == 0 else {}
    return {"seconds": round(time.perf_counter() - t, 2), "exit": proc.returncode,
            "peak_rss_mb": round(usage.ru_maxrss / 1024), "skipped": stats.get("files_skipped")}


def measure(pkg: str | None, cap: float, only_syntax: bool = False) -> dict[str, object]:
    out: dict[str, object] = {}
    for pattern in ("**/**/d/d/zzz", "**/d/**/d/**/zzz"):
        out[f"glob {pattern}, 2,000 depths"] = _timed(pkg, GLOB, [pattern, "depth"], cap)
    out["glob *a*a*a*a*b, one 200-char name"] = _timed(pkg, GLOB, ["*a*a*a*a*b", "name"], cap)
    for case in ("py-comments", "py-def-comments-40k", "py-comments-then-functions",
                 "js-comments", "chunk-py-def-comments-40k"):
        out[f"parse {case}"] = _timed(pkg, SYNTAX, [case], cap)
    if only_syntax:
        return out
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        (repo / "a.py").write_text("def f():\n    return 1\n", encoding="utf-8")
        with open(repo / "sparse2g.txt", "wb") as f:
            f.truncate(2 << 30)
        out["dry run, max-file-size 0, 2 GB sparse file"] = _memory(pkg, repo, Path(tmp) / "h")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", type=str)
    ap.add_argument("--cap", type=float, default=120.0)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--syntax-only", action="store_true",
                    help="the globs and the parses, not the memory case")
    args = ap.parse_args()
    result: dict[str, object] = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.platform()}, {os.cpu_count()} CPUs",
        "python": platform.python_version(),
        "this": measure(None, args.cap, args.syntax_only),
    }
    if args.baseline:
        result["baseline"] = measure(args.baseline, args.cap, args.syntax_only)
    emit(result, args.json)


if __name__ == "__main__":
    main()
