"""FTS5 settings for writing a tree's texts into the trigram table, alone (no ctxd code).

    .venv/bin/python bench/bench_trigram_bulk.py --tree DIR '{"B": 64}' \
        '{"B": 64, "automerge": 0}' '{"B": 64, "automerge": 0, "optimize": 1}' ...

Each JSON argument is one configuration, timed on a fresh table shaped like `file_text`
(`fts5(content, tokenize='trigram')`, WAL, synchronous=normal): `B` texts a transaction
(or `MB` megabytes), FTS5's `automerge`, `crisismerge`, `pgsz`, `hashsize`, then
`optimize`. Prints wall and CPU seconds, the file size, the segments left and the CPU
milliseconds of 40 phrase queries (8 literals, 5 times): what `TextFirst.bulk_text` and
`compact_text` were chosen by (docs/BENCHMARKS.md, issue 30 item 2, continued).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import sqlean as sqlite3

QUERIES = ("max_retries", "_header(", "parse_retry_after", "self.assert", "raise ValueError",
           "def __init__(self", "import numpy as np", "tensor")


def texts_of(tree: Path) -> list[str]:
    return [(Path(folder) / name).read_bytes().decode("utf-8", "replace")
            for folder, _dirs, files in sorted(os.walk(tree)) for name in sorted(files)]


def run(texts: list[str], cfg: dict[str, Any], db: Path) -> dict[str, Any]:
    con = sqlite3.connect(str(db), isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA synchronous = NORMAL")
    con.execute("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='trigram')")
    for key in ("hashsize", "automerge", "crisismerge", "pgsz"):
        if key in cfg:
            con.execute("INSERT INTO t(t, rank) VALUES (?, ?)", (key, cfg[key]))
    per_commit, mb = cfg.get("B", 64), cfg.get("MB", 0) * 1e6
    wall, cpu = time.perf_counter(), time.process_time()
    con.execute("BEGIN")
    n = size = 0
    for i, text in enumerate(texts):
        con.execute("INSERT INTO t(rowid, content) VALUES (?, ?)", (i + 1, text))
        n, size = n + 1, size + len(text)
        if (mb and size >= mb) or (not mb and n >= per_commit):
            con.execute("COMMIT")
            con.execute("BEGIN")
            n = size = 0
    con.execute("COMMIT")
    inserted = time.perf_counter() - wall
    if cfg.get("optimize"):
        con.execute("INSERT INTO t(t) VALUES ('optimize')")
    out = {"cfg": cfg, "insert_s": round(inserted, 2),
           "total_s": round(time.perf_counter() - wall, 2),
           "cpu_s": round(time.process_time() - cpu, 2),
           "mb": round(db.stat().st_size / 1e6),
           "segments": con.execute("SELECT count(DISTINCT segid) FROM t_idx").fetchone()[0]}
    q = time.process_time()
    for _ in range(5):
        for literal in QUERIES:
            con.execute("SELECT count(*) FROM t WHERE t MATCH ?",
                        ('"' + literal.replace('"', '""') + '"',)).fetchone()
    out["queries_cpu_ms"] = round((time.process_time() - q) * 1000, 1)
    con.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", type=Path, required=True)
    ap.add_argument("configs", nargs="+", help="JSON objects, one configuration each")
    args = ap.parse_args()
    texts = texts_of(args.tree)
    for raw in args.configs:
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(run(texts, json.loads(raw), Path(tmp) / "t.db")), flush=True)


if __name__ == "__main__":
    main()
