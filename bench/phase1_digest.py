"""Digests of everything phase 1 stores for a tree, to show that a speed change left the
index the same.

    PYTHONPATH=CODE .venv/bin/python bench/phase1_digest.py TREE > digest.json

Runs a dry run and phase 1 (no embedding) of TREE with whichever `ctxd` is importable
(CODE: a `git archive` copy as for `bench/bench_phase1.py --before`), and prints a JSON
object: the dry run's (files, texts, word pieces) to embed, and for the rows of `files`,
`file_text`, `checkpoints`, `symbols`, `summaries`, 12 `chunk_fts` BM25 rankings and 3
trigram phrase queries, their count and a SHA-256 prefix. Two codes, equal output.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

from ctxd.indexer.embedder import EmbedOptions, SentenceTransformerEmbedder
from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.sqlite.store import Store
from ctxd.indexer.walk.walker import WalkOptions

ROWS = {
    "files": "SELECT path, size, hash, language, lines, role FROM files ORDER BY path",
    "text": "SELECT f.path, t.content FROM files f JOIN file_text t ON t.rowid = f.id "
            "ORDER BY f.path",
    "checkpoints": "SELECT path, start_line, end_line, symbol, symbol_kind, container, text, "
                   "hash FROM checkpoints ORDER BY path, start_line, end_line, id",
    "symbols": "SELECT path, name, kind, container, line, end_line FROM symbols "
               "ORDER BY path, line, name, kind, end_line",
    "summaries": "SELECT path, text, hash FROM summaries ORDER BY path",
}
WORDS = ["config", "attention", "forward", "tokenizer", "parseHeader", "return", "dtype",
         "init", "Model", "sparse matrix", "get", "test"]
PHRASES = ["def forw", "import num", "self.conf"]


def main() -> None:
    tree = Path(sys.argv[1]).resolve()
    emb = SentenceTransformerEmbedder(EmbedOptions())
    queries = dict(ROWS)
    for word in WORDS:
        queries[f"fts:{word}"] = (
            "SELECT c.path, c.start_line, c.end_line, round(bm25(chunk_fts), 6) FROM chunk_fts "
            "JOIN checkpoints c ON c.id = chunk_fts.rowid WHERE chunk_fts MATCH ? "
            "ORDER BY bm25(chunk_fts), c.path, c.start_line LIMIT 200")
    for phrase in PHRASES:
        queries[f"trigram:{phrase}"] = (
            "SELECT f.path FROM file_text JOIN files f ON f.id = file_text.rowid "
            "WHERE file_text MATCH ? ORDER BY f.path")
    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        with Store.open(Path(tmp) / "dry.db") as store:
            dry = Indexer(store, emb).index(tree, WalkOptions(), dry_run=True)
            out["dry"] = [dry.files_indexed, dry.chunks_to_embed, dry.tokens_to_embed]
        with Store.open(Path(tmp) / "phase1.db") as store:
            Indexer(store, emb).index(tree, WalkOptions(), embed=False)
            for name, sql in queries.items():
                arg = name.split(":", 1)[1] if ":" in name else None
                rows = store.query(sql, () if arg is None else (f'"{arg}"',))
                digest = hashlib.sha256(repr([tuple(r) for r in rows]).encode()).hexdigest()
                out[name] = [len(rows), digest[:16]]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
