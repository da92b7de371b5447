"""Walk benchmark: the stat walk and the no-op re-index, against a baseline checkout.

    .venv/bin/python bench/bench_walk.py [--tree DIR] [--files 40000] [--runs 7]
        [--baseline PKG_DIR] [--json out.json]

Measures, on one tree (by default a synthetic copy of this virtualenv's site-packages
layout: real package names and nesting, `__pycache__` folders, one small file per path):
1. `walk()` over the tree, admitted and refused entries counted (median of `--runs`);
2. the same walk with a user exclude glob that RE2 runs (`**/tests/**/*fixture*`);
3. a no-op re-index (phase 1 only, nothing changed: the stat walk plus the stored-file
   lookup) after a first `index`, median of `--runs`;
4. for a tree that is a git working tree: reading what git tracks from `.git/index`
   (`indexer.walk.gitindex`, cache cleared each time) against `git ls-files -z` run as a
   subprocess and turned into the same set, median of 9.
Each is reported as wall time and as the process's CPU time (`*_cpu_s`): on a VM shared
with other work the CPU time is the steadier of the two.

`--baseline PKG_DIR` runs the same measurements in a child process whose `ctxd` package
comes from PKG_DIR (a folder holding `ctxd/__init__.py` and `ctxd/{indexer,search,server}`,
e.g. made from `git archive main`), alternating with this checkout run by run, so both
see the same machine load. Embedding is never run: a word-count stand-in counts tokens.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.stats import emit


class _Counter:
    """The embedder seam without a model: only `count_tokens` is called in phase 1."""

    name = "bench-no-model"
    dimension = 8
    max_tokens = 256

    def embed(self, texts: list[str]) -> object:  # pragma: no cover - never called
        raise RuntimeError("phase 1 only")

    def count_tokens(self, texts: list[str]) -> list[int]:
        return [len(re.findall(r"\w+|[^\w\s]", t)) for t in texts]


def build_tree(dest: Path, files: int) -> Path:
    """A tree with the layout of site-packages: up to `files` paths, a line in each."""
    site = Path(next(p for p in sys.path if p.endswith("site-packages")))
    n = 0
    for dirpath, dirnames, filenames in os.walk(site):
        dirnames.sort()
        for name in sorted(filenames):
            rel = os.path.relpath(os.path.join(dirpath, name), site)
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f"# {rel}\n", encoding="utf-8")
            n += 1
            if n >= files:
                return dest
    return dest


def measure(tree: Path, runs: int) -> dict[str, object]:
    """One round of the three measurements with whichever `ctxd` is importable."""
    from ctxd.indexer.models import FileEntry
    from ctxd.indexer.pipeline import Indexer
    from ctxd.indexer.store.sqlite.store import Store
    from ctxd.indexer.walk.walker import WalkOptions, walk

    def timed_walk(opts: WalkOptions) -> tuple[float, float, int, int]:
        t, c = time.perf_counter(), _cpu()
        admitted = refused = 0
        for item in walk(tree, opts):
            if isinstance(item, FileEntry):
                admitted += 1
            else:
                refused += 1
        return time.perf_counter() - t, _cpu() - c, admitted, refused

    plain = [timed_walk(WalkOptions()) for _ in range(runs)]
    excl = [timed_walk(WalkOptions(exclude_patterns=("**/tests/**/*fixture*",)))
            for _ in range(runs)]
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "index.db")
        indexer = Indexer(store, _Counter())  # type: ignore[arg-type]
        indexer.index(tree, WalkOptions(), embed=False)
        noop = []
        for _ in range(runs):
            t, c = time.perf_counter(), _cpu()
            stats = indexer.index(tree, WalkOptions(), embed=False)
            noop.append((time.perf_counter() - t, _cpu() - c))
            assert stats.files_updated == 0, stats
        store.close()
    out: dict[str, object] = {
        "walk_s": round(statistics.median(r[0] for r in plain), 4),
        "walk_cpu_s": round(statistics.median(r[1] for r in plain), 4),
        "walk_admitted": plain[0][2],
        "walk_refused": plain[0][3],
        "walk_re2_exclude_s": round(statistics.median(r[0] for r in excl), 4),
        "walk_re2_exclude_cpu_s": round(statistics.median(r[1] for r in excl), 4),
        "noop_reindex_s": round(statistics.median(r[0] for r in noop), 4),
        "noop_reindex_cpu_s": round(statistics.median(r[1] for r in noop), 4),
    }
    if (tree / ".git").exists():
        out.update(_git_index(tree))
    return out


def _git_index(tree: Path) -> dict[str, object]:
    try:
        from ctxd.indexer.walk import gitindex
        from ctxd.indexer.walk.gitrefs import git_layout
    except ImportError:  # a baseline from before issue 23
        return {}
    layout = git_layout(tree)
    assert layout is not None

    def ours() -> int:
        gitindex._cache.clear()
        tracked = gitindex.tracked_paths(layout)
        assert tracked is not None
        return len(tracked.files)

    def git() -> int:
        out = subprocess.run(["git", "-C", str(tree), "ls-files", "-z"], capture_output=True,
                             check=True).stdout
        return len(frozenset(out.decode("utf-8", "surrogateescape").split("\0")[:-1]))

    result: dict[str, object] = {}
    for name, fn in (("index_parse", ours), ("git_ls_files", git)):
        wall, cpu = [], []
        for _ in range(9):
            t, c = time.perf_counter(), _cpu_with_children()
            result[f"{name}_paths"] = fn()
            wall.append(time.perf_counter() - t)
            cpu.append(_cpu_with_children() - c)
        result[f"{name}_s"] = round(statistics.median(wall), 4)
        result[f"{name}_cpu_s"] = round(statistics.median(cpu), 4)
    return result


def _cpu_with_children() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _cpu() -> float:
    """This process's CPU time (user + system): steadier than wall time on a shared VM."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _child(pkg: str | None, tree: Path, runs: int) -> dict[str, object]:
    env = dict(os.environ)
    if pkg:
        env["PYTHONPATH"] = pkg
    out = subprocess.run(
        [sys.executable, __file__, "--tree", str(tree), "--runs", str(runs), "--child"],
        env=env, capture_output=True, text=True, check=True,
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", type=Path)
    ap.add_argument("--files", type=int, default=40000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--baseline", type=str)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(measure(args.tree, args.runs)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        tree = args.tree or build_tree(Path(tmp) / "tree", args.files)
        rounds: dict[str, list[dict[str, object]]] = {"this": [], "baseline": []}
        for _ in range(args.rounds):
            rounds["this"].append(_child(None, tree, args.runs))
            if args.baseline:
                rounds["baseline"].append(_child(args.baseline, tree, args.runs))
    out: dict[str, object] = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.platform()}, {os.cpu_count()} CPUs",
        "python": platform.python_version(),
        "tree": str(args.tree or f"synthetic site-packages layout, {args.files} paths"),
    }
    for who, results in rounds.items():
        if not results:
            continue
        keys = [k for k, v in results[0].items() if isinstance(v, float)]
        summary: dict[str, object] = {
            k: round(statistics.median(float(str(r[k])) for r in results), 4) for k in keys}
        summary.update((k, v) for k, v in results[0].items() if isinstance(v, int))
        out[who] = summary
    if args.baseline:
        this, base = out["this"], out["baseline"]
        assert isinstance(this, dict) and isinstance(base, dict)
        out["ratio_this_over_baseline"] = {
            k: round(this[k] / base[k], 3) for k in this if k.endswith("_s") and base.get(k)}
    emit(out, args.json)


if __name__ == "__main__":
    main()
