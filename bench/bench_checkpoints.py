"""Where a tree's checkpoints come from: indexes it without embedding (the real model's
tokenizer cuts the chunks) into a temporary SQLite index and prints the checkpoints in
all, by language, for the data-like files (CSV/TSV, result summaries, JSON/YAML), and the
files that yield the most, as JSON.

    .venv/bin/python bench/bench_checkpoints.py ROOT [--top 10]

Runs on any checkout of ctxd (it uses only `Indexer.index(..., embed=False)`), so a
baseline is the same command with another checkout's interpreter and PYTHONPATH.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DATA_LIKE = re.compile(r"\.(csv|tsv|psv|jsonl|ndjson|json|ya?ml|xml)$|(^|/)summary$",
                       re.IGNORECASE)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", type=Path)
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()
    from ctxd.indexer.embedder import EmbedOptions, SentenceTransformerEmbedder
    from ctxd.indexer.pipeline import Indexer
    from ctxd.indexer.store.location import StoreOptions
    from ctxd.indexer.store.open import open_store
    from ctxd.indexer.walk.walker import WalkOptions

    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "index.db", StoreOptions())
        t0 = time.perf_counter()
        Indexer(store, SentenceTransformerEmbedder(EmbedOptions())).index(
            args.root.resolve(), WalkOptions(), embed=False)
        seconds = time.perf_counter() - t0
        rows = store.query("SELECT path, language, count(*) FROM checkpoints "
                           "GROUP BY path, language")
        roles = dict(store.query("SELECT role, count(*) FROM files GROUP BY role"))
        store.close()
    total = sum(int(n) for _p, _l, n in rows)
    by_language: dict[str, int] = {}
    for _p, lang, n in rows:
        by_language[str(lang)] = by_language.get(str(lang), 0) + int(n)
    data = sum(int(n) for p, _l, n in rows if DATA_LIKE.search(str(p)))
    top = sorted(((str(p), int(n)) for p, _l, n in rows), key=lambda x: -x[1])[: args.top]
    print(json.dumps({
        "root": str(args.root), "checkpoints": total,
        "data_like_checkpoints": data, "data_like_share": round(data / total, 3) if total else 0,
        "by_language": dict(sorted(by_language.items(), key=lambda kv: -kv[1])),
        "top_files": top, "files_by_role": roles, "seconds_without_embedding": round(seconds, 1),
    }, indent=2))


if __name__ == "__main__":
    main()
