"""File-watch benchmark: edit-to-searchable latency, burst absorption, idle CPU.

    .venv/bin/python bench/bench_watch.py [--files 1000] [--edits 100] [--burst 2000]
        [--idle-files 5000] [--idle-seconds 60] [--json out.json]

Measures, with the real embedding model and the default watch settings (debounce 300 ms):
1. edit-to-searchable latency over N edits of a watched repository of `--files` files:
   from writing a file to the moment its new text is found by a full-text query
   (`file_text MATCH`) AND its new checkpoints have embeddings; p50 / p95 / max
   (targets: p50 < 1 s, p95 < 2 s);
2. bursts of `--burst` files, each timed from the first write until the index matches:
   new files (until all are full-text searchable, and until all are embedded), the same
   files rewritten with identical content (nothing to embed), a mass rename of their
   folder, and a build writing into a `.gitignore`d folder (no index work at all);
3. idle CPU of the watcher over `--idle-seconds` while it watches a `--idle-files`-file
   repository (process CPU time / wall time; target: near zero), and the cost of one
   periodic stat rescan of it. This part indexes with a hashing embedder (the model is
   not involved in watching; it keeps the set-up short).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import xxhash

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.stats import emit, percentile
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from ctxd.server.watch.watcher import Watcher

CODE = '''"""Module {n}: request handling helpers."""


def handle_{n}(request, retries=3):
    """Handle one request of kind {n}, retrying on transient errors."""
    for attempt in range(retries):
        result = request.send(timeout=2 ** attempt)
        if result.ok:
            return result.body
    raise RuntimeError("request {n} failed: {token}")
'''



def poll(pred: Callable[[], bool], timeout: float, interval: float = 0.05) -> float:
    """Seconds until `pred()` holds (a reader polling the index), or raise."""
    t0 = time.perf_counter()
    while not pred():
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError("condition not reached")
        time.sleep(interval)
    return time.perf_counter() - t0


class HashEmbedder:
    """A model-free embedder for the idle-CPU repository (watching never embeds)."""

    name = "bench-hash-32"
    dimension = 32
    max_tokens = 256

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, xxhash.xxh32_intdigest(t.encode()) % self.dimension] = 1.0
        return out

    def count_tokens(self, texts: list[str]) -> list[int]:
        return [len(t.split()) for t in texts]


class Probe:
    """Read-side checks on the index, through the service's own connection."""

    def __init__(self, service: Service) -> None:
        self.service = service

    def q(self, sql: str, params: list[object] | tuple[object, ...] = ()) -> list[tuple]:
        return self.service.store().query(sql, params)

    def searchable(self, path: str, token: str) -> bool:
        hit = self.q(
            "SELECT 1 FROM file_text JOIN files f ON f.id = file_text.rowid "
            "WHERE file_text MATCH ? AND f.path = ?",
            [f'"{token}"', path],
        )
        if not hit:
            return False
        n, done = self.q(
            "SELECT count(*), coalesce(sum(EXISTS (SELECT 1 FROM embeddings e "
            "WHERE e.hash = c.hash)), 0) FROM checkpoints c WHERE c.path = ?",
            [path],
        )[0]
        return bool(n) and n == done

    def files_under(self, prefix: str) -> int:
        return int(self.q("SELECT count(*) FROM files WHERE path LIKE ?", [prefix + "%"])[0][0])

    def pending(self) -> int:
        return self.service.store().count_pending()


def write_repo(root: Path, n: int, prefix: str = "src", token: str = "base") -> None:
    for i in range(n):
        p = root / prefix / f"pkg{i % 25}" / f"mod{i}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(CODE.format(n=i, token=f"{token}{i}"), encoding="utf-8")


def bench_latency(service: Service, watcher: Watcher, root: Path, files: int,
                  edits: int) -> dict[str, object]:
    probe = Probe(service)
    lat = []
    for k in range(edits):
        i = (k * 37) % files
        rel = f"src/pkg{i % 25}/mod{i}.py"
        token = f"zq{k:05d}edit"
        t0 = time.perf_counter()
        (root / rel).write_text(CODE.format(n=i, token=token), encoding="utf-8")
        if not watcher.wait_for(lambda rel=rel, token=token: probe.searchable(rel, token), 60):
            raise TimeoutError(f"edit {k} not searchable")
        lat.append(time.perf_counter() - t0)
        watcher.wait_idle(60)
    ms = [x * 1000 for x in lat]
    return {"n": len(ms), "p50_ms": round(statistics.median(ms)),
            "p95_ms": round(percentile(ms, 0.95)), "max_ms": round(max(ms)),
            "mean_ms": round(statistics.fmean(ms))}


def _batches_since(watcher: Watcher, before: int) -> list[dict[str, object]]:
    new = list(watcher.results)[len(watcher.results) - (watcher.batches - before):]
    return [{"trigger": r.trigger, "changed": r.changed, "deleted": r.deleted,
             "embedded": r.chunks_embedded, "ms": r.duration_ms} for r in new]


def bench_bursts(service: Service, watcher: Watcher, root: Path, n: int) -> dict[str, object]:
    probe = Probe(service)
    out: dict[str, object] = {}

    # a) n new files (a checkout adding a folder)
    before = watcher.batches
    t0 = time.perf_counter()
    write_repo(root, n, prefix="burst", token="burst")
    written = time.perf_counter() - t0
    poll(lambda: probe.files_under("burst/") == n, 600)
    lexical = time.perf_counter() - t0
    poll(lambda: watcher.idle and probe.pending() == 0, 1200)
    total = time.perf_counter() - t0
    out["new_files"] = {"files": n, "write_s": round(written, 2),
                        "fulltext_searchable_s": round(lexical, 2),
                        "embedded_s": round(total, 2),
                        "batches": _batches_since(watcher, before)}

    # b) the same files rewritten with identical content (mtime changes only)
    before = watcher.batches
    t0 = time.perf_counter()
    for p in sorted((root / "burst").rglob("*.py")):
        p.write_text(p.read_text(encoding="utf-8"), encoding="utf-8")
    poll(lambda: watcher.batches > before and watcher.idle, 600)
    out["rewrite_same_content"] = {"files": n, "absorbed_s": round(time.perf_counter() - t0, 2),
                                   "batches": _batches_since(watcher, before)}

    # c) a build writing n files into a .gitignore'd folder
    (root / ".gitignore").write_text("build/\n", encoding="utf-8")
    poll(lambda: probe.files_under(".gitignore") == 1 and watcher.idle, 60)
    before, examined = watcher.batches, watcher.batches_examined
    t0 = time.perf_counter()
    write_repo(root, n, prefix="build", token="gen")
    poll(lambda: watcher.batches_examined > examined and watcher.idle, 600, 0.01)
    out["ignored_build_output"] = {
        "files": n, "absorbed_s": round(time.perf_counter() - t0, 2),
        "index_batches": watcher.batches - before,
        "indexed": probe.files_under("build/"),
    }

    # d) mass rename of the folder (paths are part of the embedded text: re-embeds)
    before = watcher.batches
    t0 = time.perf_counter()
    (root / "burst").rename(root / "moved")
    poll(lambda: probe.files_under("moved/") == n and probe.files_under("burst/") == 0, 600)
    lexical = time.perf_counter() - t0
    poll(lambda: watcher.idle and probe.pending() == 0, 1200)
    out["rename_folder"] = {"files": n, "fulltext_moved_s": round(lexical, 2),
                            "embedded_s": round(time.perf_counter() - t0, 2),
                            "batches": _batches_since(watcher, before)}
    return out


def bench_idle(tmp: Path, files: int, seconds: float) -> dict[str, object]:
    settings = load_settings({"home": str(tmp / "idle-home")})
    service = Service(settings, embedder=HashEmbedder())
    root = tmp / "idle-repo"
    write_repo(root, files)
    (root / ".git" / "objects").mkdir(parents=True)
    t = time.perf_counter()
    service.index(root)
    index_s = time.perf_counter() - t
    watcher = Watcher(service).start()
    watcher.wait_ready(120)
    watcher.wait_idle(120)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    time.sleep(seconds)
    cpu = time.process_time() - cpu0
    wall = time.perf_counter() - wall0
    t = time.perf_counter()
    watcher.request_rescan()
    watcher.wait_idle(120)
    rescan_ms = (time.perf_counter() - t) * 1000
    health = watcher.repos_health()[0]
    watcher.stop()
    service.close()
    return {"files": files, "index_s": round(index_s, 2), "seconds": round(wall, 1),
            "cpu_s": round(cpu, 3), "cpu_percent": round(100 * cpu / wall, 3),
            "rescan_ms": round(rescan_ms), "mode": health.mode}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--edits", type=int, default=100)
    ap.add_argument("--burst", type=int, default=2000)
    ap.add_argument("--idle-files", type=int, default=5000)
    ap.add_argument("--idle-seconds", type=float, default=60)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    out: dict[str, object] = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.platform()}, {os.cpu_count()} CPUs",
        "python": platform.python_version(),
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
    }
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        settings = load_settings({"home": str(tmp / "home")})
        service = Service(settings)
        emb = service.embedder
        emb.embed(["warm up"])  # load the model outside the timings
        inner = emb.inner
        out["model"] = (f"{settings.embedding.model} ({getattr(inner, 'precision', '?')} on "
                        f"{getattr(inner, 'device', '?')})")
        out["watch"] = {"debounce_ms": settings.watch.debounce_ms,
                        "rescan_seconds": settings.watch.rescan_seconds}
        root = tmp / "repo"
        write_repo(root, args.files)
        t = time.perf_counter()
        stats = service.index(root)
        out["initial_index"] = {"files": stats.files_indexed, "checkpoints": stats.checkpoints,
                                "seconds": round(time.perf_counter() - t, 2)}
        watcher = Watcher(service, replace(settings.watch)).start()
        watcher.wait_ready(120)
        watcher.wait_idle(120)
        out["edit_to_searchable"] = bench_latency(service, watcher, root, args.files,
                                                  args.edits)
        print(json.dumps(out["edit_to_searchable"]), file=sys.stderr)
        if args.burst:
            out["burst"] = bench_bursts(service, watcher, root, args.burst)
            print(json.dumps(out["burst"]), file=sys.stderr)
        watcher.stop()
        service.close()
        if args.idle_files:
            out["idle"] = bench_idle(tmp, args.idle_files, args.idle_seconds)
        shutil.rmtree(tmp / "repo", ignore_errors=True)
    emit(out, args.json)


if __name__ == "__main__":
    main()
