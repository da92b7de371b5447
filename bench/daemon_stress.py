"""The client's give-up time on a stuck daemon, and the space `remove` + `compact` give
back (issue 16).

    .venv/bin/python bench/daemon_stress.py [--before REF] [--files 400] [--json out.json]

1. Give-up: a fake daemon holds the daemon lock and listens on the socket but never
   answers (a stuck daemon, or one whose workers are all taken). Timed: a whole
   `ctxd search QUERY` process (autostart on) in an empty home, start to exit; with
   `--before REF` the same on commit REF's code (`bench_cli.extract_before`).
2. Space: two synthetic repositories (`--files` files of 12 functions each; 1/5 and 4/5 of
   them) indexed in-process with random vectors under the real model's name (no model:
   the store is what is measured); then `ctxd remove` of the larger one and `ctxd
   compact`. Reports `index.db` and `-wal` sizes after each step.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_cli import extract_before
from ctxd.indexer.store.lock import FileLock
from ctxd.server.config import load_settings
from ctxd.server.daemon.paths import DaemonPaths
from ctxd.server.service import Service

CLI = [sys.executable, "-m", "ctxd.server.cli.main"]


def give_up(env: dict[str, str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ctxd-stuck-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir(mode=0o700)
        paths = DaemonPaths.for_home(home)
        lock = FileLock(paths.lock, mode=0o600)
        assert lock.try_acquire()
        stuck = socket.socket(socket.AF_UNIX)
        stuck.bind(str(paths.socket))
        stuck.listen(64)
        paths.write_record({"pid": os.getpid(), "socket": str(paths.socket)})
        try:
            full = {**os.environ, **env, "CTXD_HOME": str(home),
                    "CTXD_DAEMON_AUTOSTART": "true"}
            t0 = time.monotonic()
            done = subprocess.run([*CLI, "search", "retry with backoff", "--json"],
                                  capture_output=True, text=True, env=full, timeout=600,
                                  check=False)
            took = time.monotonic() - t0
        finally:
            stuck.close()
            lock.release()
        return {"seconds": round(took, 2), "exit": done.returncode,
                "stderr": done.stderr.strip().splitlines()[-3:]}


class RandomEmbedder:
    """Unit vectors from a seeded generator, under the real model's name (no model)."""

    name = "sentence-transformers/all-MiniLM-L6-v2"
    dimension = 384
    max_tokens = 256

    def __init__(self) -> None:
        import numpy as np

        self._np = np
        self._rng = np.random.default_rng(16)

    def embed(self, texts: list[str]) -> Any:
        v = self._rng.standard_normal((len(texts), self.dimension)).astype("float32")
        return v / self._np.linalg.norm(v, axis=1, keepdims=True)

    def count_tokens(self, texts: Any) -> list[int]:
        return [len(t) // 4 for t in texts]


def sizes(home: Path) -> dict[str, float]:
    db = home / "index.db"
    wal = Path(f"{db}-wal")
    return {"db_mb": round(db.stat().st_size / 1e6, 2),
            "wal_mb": round(wal.stat().st_size / 1e6, 2) if wal.exists() else 0.0}


def space(files: int) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="ctxd-space-") as tmp:
        home = Path(tmp) / "home"
        rows = []
        for name, n in (("keep", files // 5), ("drop", files - files // 5)):
            root = Path(tmp) / name
            root.mkdir()
            for i in range(n):
                (root / f"m{i}.py").write_text("\n".join(
                    f"def {name}_{i}_{k}(request):\n" + "".join(
                        f"    v{j} = request.get('{name}_{i}_{k}_{j}', {i * k * j})\n"
                        for j in range(12)) + f"    return v{k % 12}\n" for k in range(12)))
        service = Service(load_settings({"home": str(home)}), embedder=RandomEmbedder())
        try:
            service.index(Path(tmp) / "keep")
            service.index(Path(tmp) / "drop")
        finally:
            service.close()
        rows.append({"step": f"indexed keep ({files // 5} files) + drop", **sizes(home)})
        env = {**os.environ, "CTXD_HOME": str(home)}
        for step in (["remove", "drop"], ["compact"]):
            done = subprocess.run([*CLI, "--no-daemon", *step], capture_output=True,
                                  text=True, env=env, check=True)
            rows.append({"step": " ".join(step), **sizes(home),
                         "says": done.stdout.strip().splitlines()[-1]})
        return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before")
    ap.add_argument("--files", type=int, default=400)
    ap.add_argument("--json")
    args = ap.parse_args()
    out: dict[str, Any] = {}
    if args.before:
        with tempfile.TemporaryDirectory(prefix="ctxd-before-") as tmp:
            pkg = extract_before(args.before, Path(tmp))
            out["give_up_before"] = give_up({"PYTHONPATH": str(pkg)})
            print(json.dumps({"give_up_before": out["give_up_before"]}), flush=True)
    out["give_up_after"] = give_up({})
    print(json.dumps({"give_up_after": out["give_up_after"]}), flush=True)
    out["space"] = space(args.files)
    for row in out["space"]:
        print(json.dumps(row), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
