"""`bench_search.py`'s synthetic store built straight into PostgreSQL, in bulk.

    .venv/bin/python bench/pg_bulk.py --pg DIR --db NAME --n 1000000 [--check 3000]

The same store as `bench.bench_search.synthetic_store` (the same files drawn in the same
order, the same paths, texts, symbols, summaries, hashes and vectors; the same 30 query
vectors, saved beside as `--queries`), written without `PgStore.replace_file`'s per-file
statements (issue 25: 2,378 s of phase 1 at 1M, plus 958 s of HNSW): every table by `COPY`,
each checkpoint's `words` computed in the server from its path and symbol words and the
`tsvector` of its text (computed once per distinct text: the store's texts repeat),
`terms` / `freqs` by the schema's own functions, `keyword_stats` and `keyword_df` by one
aggregate each, the GIN, trigram and HNSW indexes built once after the load.

`--check N` builds a store of N checkpoints both ways (this and `replace_file`, through
`bench.pg_helpers.clone` of the SQLite store) and compares every table's rows that
matter to search: the two must be equal.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_search import RealFile, real_files
from bench.pg_helpers import database_url, local_server
from ctxd.indexer.store.location import StoreOptions
from ctxd.indexer.store.pg.files import WORDS_SQL, words_of
from ctxd.indexer.store.pg.vectors import HNSW_EF_CONSTRUCTION, HNSW_M
from ctxd.indexer.store.words import chunk_fts_row
from tests.vector_data import clustered_unit_vectors, queries_near

NOW = "2026-01-01T00:00:00Z"
DIM = 384


def drawn(n: int, files: list[RealFile]) -> Iterator[tuple[int, int, str]]:
    """(file number, index of the real file, path) in `synthetic_store`'s order."""
    rng = random.Random(n)
    index = {id(f): i for i, f in enumerate(files)}
    written, f = 0, 0
    while written < n:
        real = rng.choice(files)
        yield f, index[id(real)], f"pkg{f % 997}/v{f}/{real.path}"
        written += len(real.chunks)
        f += 1


def _esc(value: object) -> str:
    """One field of COPY's text format."""
    if value is None:
        return "\\N"
    return (str(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
            .replace("\r", "\\r"))


def _line(*values: object) -> str:
    return "\t".join(_esc(v) for v in values) + "\n"


def build(url: str, n: int, files: list[RealFile], log: Any = print) -> dict[str, Any]:
    """The store of ~n checkpoints in the (empty) database at `url`; timings."""
    import psycopg
    from pgvector.psycopg import register_vector

    from ctxd.indexer.store.open import open_store

    out: dict[str, Any] = {}
    store = open_store(Path("/nonexistent/unused.db"), StoreOptions(url=url))
    store.ensure_model("synthetic", DIM)
    repo = store.upsert_repo(f"/synthetic/{n}", {}, NOW)
    store.close()
    t0 = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        for ddl in ("DROP INDEX checkpoints_words", "DROP INDEX file_text_trgm",
                    "DROP INDEX embeddings_hnsw",
                    "CREATE UNLOGGED TABLE bulk_text(real int, chunk int, words tsvector, "
                    "PRIMARY KEY (real, chunk))",
                    "CREATE UNLOGGED TABLE bulk_cp(id bigint, file_id bigint, real int, "
                    "chunk int, path text, language text, start_line int, end_line int, "
                    "symbol text, text text, hash text, pw text, sw text, words_len int)"):
            conn.execute(ddl)
        # each distinct text's tsvector, once
        text_rows = io.StringIO()
        text_len: dict[tuple[int, int], int] = {}
        for r, real in enumerate(files):
            for c, (_a, _b, text, _sym) in enumerate(real.chunks):
                tw, tn = words_of(chunk_fts_row("", None, text)[2])
                text_len[(r, c)] = tn
                text_rows.write(_line(r, c, tw))
        conn.execute("CREATE UNLOGGED TABLE bulk_tw(real int, chunk int, tw text)")
        with conn.cursor().copy("COPY bulk_tw FROM STDIN") as cp:
            cp.write(text_rows.getvalue())
        conn.execute("INSERT INTO bulk_text SELECT real, chunk, "
                     "setweight(to_tsvector('ctxd_words', tw), 'D') FROM bulk_tw")
        log(f"texts: {time.perf_counter() - t0:.1f} s")
        n_files, hashes_written = _stage(conn, n, files, repo.id, text_len, log, t0)
        conn.execute("SELECT setval('files_id_seq', %s)", (n_files,))
        out["stage_s"] = round(time.perf_counter() - t0, 1)
        log(f"staged: {out['stage_s']} s")
        t1 = time.perf_counter()
        words = WORDS_SQL.replace("%s", "{}").format("b.pw", "b.sw", "x")
        assert words.endswith("setweight(to_tsvector('ctxd_words', x), 'D')")
        words = words.removesuffix("setweight(to_tsvector('ctxd_words', x), 'D')") + "t.words"
        step = 100_000
        for lo in range(0, hashes_written, step):
            conn.execute(
                "INSERT INTO checkpoints(id, file_id, repo_id, path, language, start_line, "
                "end_line, symbol, symbol_kind, container, text, hash, words, words_len, terms, "
                "freqs) SELECT v.*, ctxd_terms(v.words), ctxd_freqs(v.words) FROM (SELECT "
                "b.id, b.file_id, %s::bigint, b.path, b.language, b.start_line, b.end_line, "
                f"b.symbol, NULL::text, NULL::text, b.text, b.hash, {words} AS words, "
                "b.words_len FROM bulk_cp b JOIN bulk_text t ON t.real = b.real AND "
                "t.chunk = b.chunk WHERE b.id > %s AND b.id <= %s ORDER BY b.id) v",
                (repo.id, lo, lo + step))
            done = min(lo + step, hashes_written)
            log(f"checkpoints to {done}: {time.perf_counter() - t1:.1f} s")
        conn.execute("SELECT setval('checkpoint_ids', %s)", (hashes_written,))
        conn.execute("INSERT INTO keyword_stats(repo_id, rows, tokens) SELECT %s, count(*), "
                     "sum(words_len) FROM checkpoints", (repo.id,))
        conn.execute("INSERT INTO keyword_df(repo_id, lexeme, df) SELECT %s, lx, count(*) "
                     "FROM checkpoints c CROSS JOIN LATERAL unnest(tsvector_to_array(c.words)) "
                     "lx GROUP BY lx", (repo.id,))
        conn.execute("SELECT nextval('ctxd_text_generation')")
        for ddl in ("DROP TABLE bulk_cp", "DROP TABLE bulk_text", "DROP TABLE bulk_tw"):
            conn.execute(ddl)
        out["checkpoints_s"] = round(time.perf_counter() - t1, 1)
        log(f"checkpoints, statistics: {out['checkpoints_s']} s")
        # vectors: the same as synthetic_store's, by binary COPY
        t2 = time.perf_counter()
        queries = _vectors(conn, n, n_files, hashes_written)
        out["vectors_s"] = round(time.perf_counter() - t2, 1)
        log(f"vectors: {out['vectors_s']} s")
        t3 = time.perf_counter()
        conn.execute("SET maintenance_work_mem = '3GB'")
        conn.execute("CREATE INDEX checkpoints_words ON checkpoints USING gin (words)")
        out["gin_s"] = round(time.perf_counter() - t3, 1)
        log(f"GIN: {out['gin_s']} s")
        t4 = time.perf_counter()
        conn.execute("CREATE INDEX file_text_trgm ON file_text USING gin "
                     "(content gin_trgm_ops)")
        out["trgm_s"] = round(time.perf_counter() - t4, 1)
        log(f"trigram GIN: {out['trgm_s']} s")
        t5 = time.perf_counter()
        conn.execute(f"CREATE INDEX embeddings_hnsw ON embeddings USING hnsw "
                     f"(embedding vector_l2_ops) WITH (m = {HNSW_M}, "
                     f"ef_construction = {HNSW_EF_CONSTRUCTION})")
        out["hnsw_s"] = round(time.perf_counter() - t5, 1)
        log(f"HNSW: {out['hnsw_s']} s")
        conn.execute("VACUUM ANALYZE")
    out.update(files=n_files, checkpoints=hashes_written,
               total_s=round(time.perf_counter() - t0, 1))
    out["queries"] = queries
    return out


def _stage(conn: Any, n: int, files: list[RealFile], repo_id: int,
           text_len: dict[tuple[int, int], int], log: Any, t0: float) -> tuple[int, int]:
    """Files, texts, symbols and summaries by COPY, checkpoints into `bulk_cp`; (files,
    checkpoints)."""
    fid = cid = 0
    buf = {k: io.StringIO() for k in ("files", "file_text", "cp", "symbols", "summaries")}

    def flush() -> None:
        for table, copy_sql in (
                ("files", "COPY files(id, repo_id, path, size, mtime_ns, hash, language, "
                          "lines, indexed_at, role) FROM STDIN"),
                ("file_text", "COPY file_text(file_id, content) FROM STDIN"),
                ("cp", "COPY bulk_cp FROM STDIN"),
                ("symbols", "COPY symbols(file_id, repo_id, path, language, name, kind, "
                            "container, line, end_line) FROM STDIN"),
                ("summaries", "COPY summaries(file_id, repo_id, path, text, hash) "
                              "FROM STDIN")):
            data = buf[table].getvalue()
            if data:
                with conn.cursor().copy(copy_sql) as cp:
                    cp.write(data)
            buf[table] = io.StringIO()

    for f, r, fpath in drawn(n, files):
        real = files[r]
        fid = f + 1
        buf["files"].write(_line(fid, repo_id, fpath, len(real.content), 1, str(f),
                                 real.language, real.content.count("\n") + 1, NOW, ""))
        buf["file_text"].write(_line(fid, real.content))
        for c, (start, end, _text, sym) in enumerate(real.chunks):
            cid += 1
            pw, pn = words_of(chunk_fts_row(fpath, None, "")[0])
            sw, sn = words_of(chunk_fts_row("", sym, "")[1])
            buf["cp"].write(_line(cid, fid, r, c, fpath, real.language, start, end, sym,
                                  _text, f"h{f}-{c}", pw, sw, pn + sn + text_len[(r, c)]))
        for s in real.symbols:
            buf["symbols"].write(_line(fid, repo_id, fpath, real.language, s.name, s.kind,
                                       s.container, s.line, s.end_line))
        buf["summaries"].write(_line(
            fid, repo_id, fpath, f"file {fpath}\n" + "; ".join(s.name for s in real.symbols),
            f"s{f}"))
        if f % 2000 == 1999:
            flush()
            log(f"staged {fid} files, {cid} checkpoints: {time.perf_counter() - t0:.1f} s")
    flush()
    return fid, cid


def _vectors(conn: Any, n: int, n_files: int, n_chunks: int) -> npt.NDArray[np.float32]:
    """`synthetic_store`'s vectors (summaries, then checkpoints in id order, 65,536 at a
    time) by binary COPY; its 30 query vectors."""
    summaries = clustered_unit_vectors(n_files, DIM, seed=n + 1)
    conn.execute("CREATE UNLOGGED TABLE bulk_sv(hash text, vector bytea)")
    with conn.cursor().copy("COPY bulk_sv FROM STDIN") as cp:
        for i, v in enumerate(summaries):
            cp.write_row((f"s{i}", v.astype(np.float32).tobytes()))
    conn.execute("UPDATE summaries s SET vector = b.vector FROM bulk_sv b WHERE b.hash = s.hash")
    conn.execute("DROP TABLE bulk_sv")
    del summaries
    queries = np.empty((0, DIM), dtype=np.float32)
    hashes = _chunk_hashes(conn)
    assert len(hashes) == n_chunks
    for start in range(0, len(hashes), 65536):
        vecs = clustered_unit_vectors(min(65536, len(hashes) - start), DIM, seed=n + start)
        if start == 0:
            queries = queries_near(vecs, 30)
        with conn.cursor().copy("COPY embeddings(hash, embedding) FROM STDIN "
                                "WITH (FORMAT BINARY)") as cp:
            cp.set_types(["text", "vector"])
            for i, h in enumerate(hashes[start:start + 65536]):
                cp.write_row((h, vecs[i].astype(np.float32)))
    return queries


def _chunk_hashes(conn: Any) -> list[str]:
    return [str(r[0]) for r in conn.execute("SELECT hash FROM checkpoints ORDER BY id")]


COMPARED = {
    "files": "SELECT id, path, size, mtime_ns, hash, language, lines, role FROM files",
    "file_text": "SELECT file_id, md5(content) FROM file_text",
    "checkpoints": "SELECT id, file_id, path, language, start_line, end_line, symbol, text, "
                   "hash, words::text, words_len, terms, freqs FROM checkpoints",
    "symbols": "SELECT file_id, path, language, name, kind, container, line, end_line "
               "FROM symbols",
    "summaries": "SELECT file_id, path, text, hash, md5(vector) FROM summaries",
    "keyword_stats": "SELECT rows, tokens FROM keyword_stats",
    "keyword_df": "SELECT lexeme, df FROM keyword_df WHERE df > 0",
    "embeddings": "SELECT hash, embedding::text FROM embeddings",
}


def check(base: str, n: int, files: list[RealFile]) -> bool:
    """Build n checkpoints both ways (see the module docstring); are the tables equal?"""
    import psycopg

    from bench.bench_search import synthetic_store
    from bench.pg_helpers import clone
    from ctxd.indexer.store.open import open_store

    bulk_url = database_url(base, f"bulk_check_{n}", fresh=True)
    build(bulk_url, n, files, log=lambda _m: None)
    slow_url = database_url(base, f"slow_check_{n}", fresh=True)
    with tempfile.TemporaryDirectory() as d:
        src, _b, _q = synthetic_store(Path(d) / "s.db", n, files)
        dst = open_store(Path(d) / "unused.db", StoreOptions(url=slow_url))
        clone(src, dst)
        src.close()
        dst.close()
    same = True
    with psycopg.connect(bulk_url) as a, psycopg.connect(slow_url) as b:
        for table, sql in COMPARED.items():
            ra = sorted(map(repr, a.execute(sql).fetchall()))
            rb = sorted(map(repr, b.execute(sql).fetchall()))
            print(f"{table}: {len(ra)} rows, {'equal' if ra == rb else 'DIFFERENT'}")
            same &= ra == rb
    return same


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pg", type=Path, required=True, help="the local server's folder")
    ap.add_argument("--db", default="bulk")
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--queries", type=Path, help="save the 30 query vectors here (.npy)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--check", type=int, help="compare with replace_file at this size")
    args = ap.parse_args()
    base = local_server(args.pg)
    with tempfile.TemporaryDirectory() as d:
        files, _info = real_files(Path(d))
    if args.check:
        sys.exit(0 if check(base, args.check, files) else 1)
    url = database_url(base, args.db, fresh=True)
    result = build(url, args.n, files, log=lambda m: print(m, file=sys.stderr, flush=True))
    queries = result.pop("queries")
    if args.queries:
        np.save(args.queries, queries)
    result["url"] = url
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
