"""The secret scan's cost per MiB (issue 39): this checkout's `find_secrets` against a
baseline `secrets.py`, interleaved in one process over the same texts.

    git show 81dc531:indexer/walk/secrets.py > /tmp/base_secrets.py
    .venv/bin/python bench/bench_secrets.py --baseline /tmp/base_secrets.py [--mib 16]
        [--runs 7] [--corpus packages|checkout] [--json out.json]

The corpus (`--corpus`): `packages`, the text files (`.py`, `.pyi`, `.js`, `.json`, `.md`,
`.rst`, `.txt`, `.yaml`, `.toml`, `.c`, `.h`, ...) of the installed packages in sorted
order, up to `--mib` MiB (ordinary code: few files hold anything like a secret); or
`checkout`, this checkout's own tracked text files (dense with test secrets, docs about
them and the rules themselves: the slow path's worst case), read once; every run scans
all of it with each side, in alternating order, timed in CPU time of this process
(`time.process_time`: other processes on a shared machine slow it less than wall time).
Reported: the median ms per MiB of each side, their
ratio, and the files each side finds a secret in (the scan must find what it did, and may
find more).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.stats import emit

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = {".py", ".pyi", ".js", ".json", ".md", ".rst", ".txt", ".yaml", ".yml", ".toml",
            ".c", ".h", ".cfg", ".ini"}


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def corpus(limit: int, which: str = "packages") -> list[tuple[str, str]]:
    """(name, text) of up to `limit` bytes of UTF-8 text files."""
    if which == "checkout":
        tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True,
                                 text=True, check=True).stdout.split("\n")
        paths = [ROOT / p for p in tracked if p]
    else:
        site = Path(sysconfig.get_paths()["purelib"])
        paths = sorted(p for p in site.rglob("*") if p.suffix in SUFFIXES)
    out: list[tuple[str, str]] = []
    total = 0
    for path in paths:
        if total >= limit or not path.is_file() or path.suffix not in SUFFIXES:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        out.append((str(path), text))
        total += len(text.encode("utf-8"))
    return out


def scan(find: Callable[[str], object], texts: list[tuple[str, str]]) -> tuple[float, set[str]]:
    found: set[str] = set()
    start = time.process_time()
    for name, text in texts:
        if find(text) is not None:
            found.add(name)
    return time.process_time() - start, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True,
                        help="a secrets.py to compare with (e.g. from git show)")
    parser.add_argument("--mib", type=float, default=16)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--corpus", choices=("packages", "checkout"), default="packages")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sides = {"this": _load(ROOT / "indexer/walk/secrets.py", "secrets_this"),
             "baseline": _load(args.baseline, "secrets_baseline")}
    texts = corpus(int(args.mib * (1 << 20)), args.corpus)
    mib = sum(len(t.encode("utf-8")) for _, t in texts) / (1 << 20)
    times: dict[str, list[float]] = {name: [] for name in sides}
    found: dict[str, set[str]] = {}
    for run in range(args.runs):
        order = list(sides) if run % 2 == 0 else list(reversed(sides))
        for name in order:
            took, hits = scan(sides[name].find_secrets, texts)
            times[name].append(took * 1000 / mib)
            found[name] = hits
    this, base = (statistics.median(times[n]) for n in ("this", "baseline"))
    emit({
        "corpus": args.corpus, "files": len(texts), "mib": round(mib, 2), "runs": args.runs,
        "ms_per_mib": {n: round(statistics.median(v), 2) for n, v in times.items()},
        "all_ms_per_mib": {n: [round(x, 2) for x in v] for n, v in times.items()},
        "ratio_this_to_baseline": round(this / base, 3),
        "files_with_a_secret": {n: len(v) for n, v in found.items()},
        "only_this": sorted(found["this"] - found["baseline"])[:20],
        "only_baseline": sorted(found["baseline"] - found["this"])[:20],
    }, args.json)


if __name__ == "__main__":
    main()
