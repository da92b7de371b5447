"""What ranking a small scope exactly costs on PostgreSQL, and what other layouts would cost
(issue 30 item 1: the first search of a scope in a fresh process).

    .venv/bin/python bench/bench_scoped_pg_layouts.py URL QUERIES.npy --repo one [--runs 30]
        [--json out.json]

On a store built by `bench/bench_scoped.py --pg-bulk` (repositories `big`, `five`, `one`),
in SQL on one connection (`hnsw.ef_search` 100, strict order, as the store's pool), each
statement first in turn query by query, k 10, p50 and the ratio to the unscoped HNSW
search, and recall@10 against the exact plan:
- the store's plans: unscoped; the scope ranked exactly (`nearest_in`'s exact plan: the
  checkpoints by repository, their vectors by text hash); its parts (the checkpoints'
  hashes alone; the vectors' ids without a distance); the hashes as one sorted array
  (`= ANY`); the HNSW walk with the filter;
- layouts ctxd does not have, as a writer-maintained table clustered by repository would
  hold them (built here in a scratch schema `pgs_probe` from the two small repositories'
  rows, dropped at the end): float32 copies ranked exactly; half-precision copies, the
  nearest 20 or 40 re-ranked by the real vectors; binary-quantised copies (pgvector's
  `binary_quantize`, Hamming distance), the nearest 100 or 400 re-ranked.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any


def main() -> None:
    import numpy as np
    import psycopg
    from pgvector import Vector
    from pgvector.psycopg import register_vector

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("url")
    ap.add_argument("queries", type=Path)
    ap.add_argument("--repo", default="one")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    queries = np.load(args.queries)
    conn = psycopg.connect(args.url, autocommit=True)
    register_vector(conn)
    conn.execute("SET hnsw.ef_search = 100")
    conn.execute("SET hnsw.iterative_scan = strict_order")
    rid = dict(conn.execute("SELECT name, id FROM repos").fetchall())[args.repo]
    t = time.perf_counter()
    conn.execute("DROP SCHEMA IF EXISTS pgs_probe CASCADE")
    conn.execute("CREATE SCHEMA pgs_probe")
    conn.execute(
        "CREATE TABLE pgs_probe.scope AS SELECT c.repo_id, e.id, "
        "binary_quantize(e.embedding)::bit(384) AS qb, e.embedding::halfvec(384) AS hv, "
        "e.embedding AS v FROM checkpoints c JOIN embeddings e ON e.hash = c.hash "
        "WHERE c.repo_id IN (SELECT id FROM repos WHERE name IN ('one', 'five')) "
        "ORDER BY c.repo_id, e.id")
    conn.execute("CREATE INDEX ON pgs_probe.scope(repo_id)")
    conn.execute("ANALYZE pgs_probe.scope")
    built = time.perf_counter() - t
    sub = ("SELECT c.hash FROM checkpoints c JOIN repos r ON r.id = c.repo_id "
           "WHERE TRUE AND c.repo_id IN (%s)")
    rerank = ("SELECT e.id FROM embeddings e WHERE e.id IN (SELECT id FROM pgs_probe.scope "
              "WHERE repo_id = %s ORDER BY {order} LIMIT {n}) "
              "ORDER BY e.embedding <-> %s, e.id LIMIT 10")
    cases: dict[str, tuple[str, Any]] = {
        "unscoped": ("SELECT id FROM embeddings ORDER BY embedding <-> %s LIMIT 10",
                     lambda v: (v,)),
        "exact (the store's plan)": (
            "SELECT id FROM (SELECT e.id, e.embedding <-> %s AS d FROM embeddings e "
            f"WHERE e.hash IN ({sub}) OFFSET 0) s ORDER BY d, id LIMIT 10", lambda v: (v, rid)),
        "its part: the checkpoints' hashes": (sub, lambda v: (rid,)),
        "its part: the vectors' ids, no distance": (
            f"SELECT e.id FROM embeddings e WHERE e.hash IN ({sub})", lambda v: (rid,)),
        "exact, hashes as one sorted array": (
            "SELECT id FROM (SELECT e.id, e.embedding <-> %s AS d FROM embeddings e "
            f"WHERE e.hash = ANY(ARRAY({sub} ORDER BY c.hash)) OFFSET 0) s "
            "ORDER BY d, id LIMIT 10", lambda v: (v, rid)),
        "HNSW walk with the filter": (
            "SELECT e.id FROM embeddings e WHERE EXISTS (SELECT 1 FROM checkpoints c "
            "WHERE c.hash = e.hash AND c.repo_id IN (%s) OFFSET 0) "
            "ORDER BY e.embedding <-> %s LIMIT 10", lambda v: (rid, v)),
        "by repository: float32, exact": (
            "SELECT id FROM pgs_probe.scope WHERE repo_id = %s ORDER BY v <-> %s, id LIMIT 10",
            lambda v: (rid, v)),
        **{f"by repository: halfvec, {n} re-ranked": (
            rerank.format(order="hv <-> %s::halfvec(384)", n=n), lambda v: (rid, v, v))
           for n in (20, 40)},
        **{f"by repository: bits, {n} re-ranked": (
            rerank.format(order="qb <~> binary_quantize(%s)::bit(384)", n=n),
            lambda v: (rid, v, v)) for n in (100, 400)},
    }
    names = list(cases)
    times: dict[str, list[float]] = {n: [] for n in names}
    found: dict[str, list[set[Any]]] = {n: [] for n in names}
    try:
        for q in range(args.runs):
            v = Vector(queries[q % len(queries)])
            for j in range(len(names)):
                n = names[(q + j) % len(names)]
                sql, params = cases[n]
                t = time.perf_counter()
                rows = conn.execute(sql, params(v), binary=True).fetchall()
                times[n].append((time.perf_counter() - t) * 1000)
                found[n].append({r[0] for r in rows[:10]})
    finally:
        conn.execute("DROP SCHEMA IF EXISTS pgs_probe CASCADE")
    base = statistics.median(times["unscoped"])
    exact = found["exact (the store's plan)"]
    report: dict[str, Any] = {"repo": args.repo, "runs": args.runs,
                              "scratch_table_s": round(built, 1), "results": {}}
    for n in names:
        p50 = statistics.median(times[n])
        ranks = "hash" not in n and "ids" not in n and n != "unscoped"
        recall = (statistics.mean(len(a & b) / 10 for a, b in zip(found[n], exact, strict=True))
                  if ranks else None)
        report["results"][n] = {"p50_ms": round(p50, 2), "x_unscoped": round(p50 / base, 2),
                                "recall_at_10": None if recall is None else round(recall, 2)}
        print(f"{args.repo:5} {n:42} p50 {p50:8.2f} ms  x{p50 / base:6.2f}"
              + ("" if recall is None else f"  recall@10 {recall:.2f}"), flush=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
