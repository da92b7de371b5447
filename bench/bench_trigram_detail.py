"""What the trigram table's `detail` costs: writes vs candidates, on a real tree.

    .venv/bin/python bench/bench_trigram_detail.py --tree DIR [--rounds 2] [--json out.json]

The lexical engine's trigram table (`file_text`, FTS5 `tokenize='trigram'`) is the largest
part of making a tree greppable (issue 30 item 2). This times writing every text file of
`--tree` (64 files a transaction, WAL, as phase 1 writes) into a fresh table with FTS5's
default `detail=full` (positions: a literal is one phrase MATCH, exact) and with
`detail=none` (rowids only: 1.6-2x cheaper to write, but a literal can only be asked as
the AND of its trigrams, a superset the engine must then verify), the two in turn each
round; then, for a few literals, how many candidate files each answers and how fast.
Nothing of ctxd is imported: the same SQLite (sqlean) the store uses.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import sqlean as sqlite3

LITERALS = ("self", "timeout", "max_retries", "_header(", "parse_retry_after",
            "import numpy as np", "raise valueerror")


def texts_of(tree: Path) -> list[str]:
    out = []
    for folder, _dirs, files in os.walk(tree):
        for name in sorted(files):
            try:
                out.append((Path(folder) / name).read_text(encoding="utf-8"))
            except (UnicodeDecodeError, OSError):
                continue
    return out


def build(path: Path, texts: list[str], detail: str) -> float:
    db = sqlite3.connect(str(path), isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    extra = "" if detail == "full" else f", detail={detail}"
    db.execute(f"CREATE VIRTUAL TABLE file_text USING fts5(content, tokenize='trigram'{extra})")
    t = time.perf_counter()
    for i in range(0, len(texts), 64):
        db.execute("BEGIN IMMEDIATE")
        db.executemany("INSERT INTO file_text(rowid, content) VALUES (?, ?)",
                       [(i + j + 1, x) for j, x in enumerate(texts[i : i + 64])])
        db.execute("COMMIT")
    took = time.perf_counter() - t
    db.close()
    return took


def quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def match_of(literal: str, detail: str) -> str:
    if detail == "full":
        return quote(literal)
    grams = list(dict.fromkeys(literal[i : i + 3] for i in range(len(literal) - 2)))
    return " AND ".join(quote(g) for g in grams)


def candidates(path: Path, detail: str) -> dict[str, dict[str, float]]:
    db = sqlite3.connect(str(path))
    out = {}
    for lit in LITERALS:
        best, n = 1e9, 0
        for _ in range(5):
            t = time.perf_counter()
            n = len(db.execute("SELECT rowid FROM file_text WHERE file_text MATCH ?",
                               (match_of(lit, detail),)).fetchall())
            best = min(best, time.perf_counter() - t)
        out[lit] = {"files": n, "ms": round(best * 1000, 2)}
    db.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    texts = texts_of(args.tree)
    times: dict[str, list[float]] = {"full": [], "none": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for detail in times:
                path = Path(tmp) / f"{detail}{r}.db"
                times[detail].append(build(path, texts, detail))
                print(f"round {r + 1} {detail}: {times[detail][-1]:.2f} s", file=sys.stderr)
        sizes = {d: sum(p.stat().st_size for p in Path(tmp).glob(f"{d}0.db*"))
                 for d in times}
        found = {d: candidates(Path(tmp) / f"{d}0.db", d) for d in times}
    out = {
        "date": time.strftime("%Y-%m-%d"), "tree": str(args.tree), "files": len(texts),
        "mb": round(sum(len(t.encode("utf-8", "surrogatepass")) for t in texts) / 1e6, 1),
        "rounds": args.rounds,
        "write_s": {d: round(statistics.median(v), 2) for d, v in times.items()},
        "files_per_s": {d: round(len(texts) / statistics.median(v), 1)
                        for d, v in times.items()},
        "bytes": sizes,
        "candidates": found,
    }
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
