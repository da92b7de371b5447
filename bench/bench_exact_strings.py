"""Ranks of exact strings and numbers on a real tree, without embedding (issue 29 item 3):
the tree is indexed with `embed=False` into a temporary SQLite index, then each lexical
query (Zoekt syntax, the embedded engine) and each keyword query gives the rank of the
file expected to answer it, with the top 3 and the number of files found, as JSON.

    .venv/bin/python bench/bench_exact_strings.py ROOT \\
        '{"LEXICAL QUERY": "expected/path", ...}' '{"KEYWORD QUERY": "expected/path", ...}'

Uses only APIs f7658fb has, so the baseline is the same command with another checkout.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def rank(files: list[str], want: str) -> dict[str, object]:
    return {"rank": files.index(want) + 1 if want in files else None, "top3": files[:3],
            "files": len(files)}


def main() -> None:
    from ctxd.indexer.embedder import EmbedOptions, SentenceTransformerEmbedder
    from ctxd.indexer.pipeline import Indexer
    from ctxd.indexer.store.location import StoreOptions
    from ctxd.indexer.store.open import open_store
    from ctxd.indexer.walk.walker import WalkOptions
    from ctxd.search.keyword import keyword_search
    from ctxd.search.lexical.engine import EmbeddedLexical

    root = Path(sys.argv[1]).resolve()
    lexical, keyword = json.loads(sys.argv[2]), json.loads(sys.argv[3])
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "index.db", StoreOptions())
        Indexer(store, SentenceTransformerEmbedder(EmbedOptions())).index(
            root, WalkOptions(), embed=False)
        out = {}
        for q, want in lexical.items():
            found = EmbeddedLexical(store).search(q, max_files=50, context_lines=0).files
            out[f"lexical {q}"] = rank([f.path for f in found], want)
        for q, want in keyword.items():
            hits = keyword_search(store, q, limit=50)
            out[f"keyword {q}"] = rank(list(dict.fromkeys(h.path for h in hits)), want)
        store.close()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
