"""Indexing benchmark: full index, bare-encode baseline, no-op re-index, query latency, RSS.

    .venv/bin/python bench/bench_index.py [--noop-files 5000] [--json out.json]

Measures, in one run on one machine:
1. a full index of the eval-dev corpus (files/s, checkpoints/s, embedded chunks/s);
2. the same distinct embedding inputs through bare `SentenceTransformer.encode`
   (same model, precision and batch size) — the floor; the ratio pipeline/bare is the
   pipeline's efficiency (target >= 0.8);
3. no-op re-index wall time of the corpus and of a synthetic N-file repository
   (target < 1 s for 5,000 files);
4. semantic query latency p50/p95 over the 108 eval queries (model warm);
5. peak RSS of the process.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import ensure_corpus, eval_dir
from bench.stats import emit, percentile
from ctxd.indexer.checkpoints import embedding_input
from ctxd.indexer.models import Chunk
from ctxd.server.config import load_settings
from ctxd.server.service import Service


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--noop-files", type=int, default=5000)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    corpus = ensure_corpus()
    out: dict[str, object] = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": f"{platform.platform()}, {__import__('os').cpu_count()} CPUs",
        "python": platform.python_version(),
    }
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings({"home": tmp})
        service = Service(settings)
        emb = service.embedder
        emb.embed(["warm up"])  # load the model outside the timings
        inner = emb.inner
        device = getattr(getattr(inner, "torch", inner), "device", "cpu")
        out["model"] = f"{settings.embedding.model} ({inner.precision} on {device})"

        t = time.perf_counter()
        stats = service.index(corpus)
        full = time.perf_counter() - t
        out["full_index"] = {
            "files": stats.files_indexed,
            "checkpoints": stats.checkpoints,
            "embedded": stats.chunks_embedded,
            "seconds": round(full, 2),
            "files_per_s": round(stats.files_indexed / full, 1),
            "checkpoints_per_s": round(stats.checkpoints / full, 1),
        }
        store = service.store()
        rows = store.query(
            "SELECT c.path, c.symbol, c.text FROM checkpoints c GROUP BY c.hash"
        )
        inputs = [embedding_input(r[0], Chunk(0, 0, r[2], symbol=r[1])) for r in rows]
        model = getattr(inner, "torch", inner)._load()  # the model behind the pipeline's
        t = time.perf_counter()
        model.encode(inputs, batch_size=settings.embedding.batch_size,
                     normalize_embeddings=True, convert_to_numpy=True)
        bare = time.perf_counter() - t
        out["bare_encode"] = {
            "texts": len(inputs),
            "seconds": round(bare, 2),
            "per_s": round(len(inputs) / bare, 1),
        }
        out["pipeline_vs_bare"] = round(bare / full, 3)

        t = time.perf_counter()
        again = service.index(corpus)
        out["noop_reindex_corpus_s"] = round(time.perf_counter() - t, 3)
        assert again.files_updated == 0

        queries = [json.loads(x) for x in (eval_dir() / "queries.jsonl").read_text(
            encoding="utf-8").splitlines() if x.strip()]
        lat = []
        for q in queries:
            t = time.perf_counter()
            service.search(q["query"], mode="semantic", limit=10)
            lat.append((time.perf_counter() - t) * 1000)
        out["semantic_query_ms"] = {"p50": round(statistics.median(lat), 1),
                                    "p95": round(percentile(lat, 0.95), 1), "n": len(lat)}

        big = Path(tmp) / f"repo{args.noop_files}"
        for i in range(args.noop_files):
            p = big / f"d{i % 50}" / f"f{i}.py"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f"def f{i}(x):\n    return x * {i}\n", encoding="utf-8")
        t = time.perf_counter()
        service.index(big)
        out["synthetic_first_index_s"] = round(time.perf_counter() - t, 2)
        noop = []
        for _ in range(5):
            t = time.perf_counter()
            s2 = service.index(big)
            noop.append(time.perf_counter() - t)
            assert s2.files_updated == 0 and s2.files_unchanged == args.noop_files
        out[f"noop_reindex_{args.noop_files}_files_s"] = round(statistics.median(noop), 3)
        out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        service.close()
    emit(out, args.json)


if __name__ == "__main__":
    main()
