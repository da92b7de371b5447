"""Everything but embedding: chunking throughput and phase 1 of indexing.

    .venv/bin/python bench/bench_chunk.py [--stdlib DIR] [--json out.json]

1. The chunker alone (tree-sitter + real word-piece counting) over the Python standard
   library of this interpreter: files/s, chunks/s, chunk sizes in word pieces.
2. Phase 1 of indexing the eval-dev corpus (walk, read, hash, chunk, full text, symbols,
   checkpoints committed; no embedding): the part of an index run that is not the model,
   and the moment lexical and symbol search start working.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import ensure_corpus
from bench.stats import percentile
from ctxd.indexer.chunker import ChunkOptions, chunk_file
from ctxd.indexer.embedder import EmbedOptions, SentenceTransformerEmbedder
from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store import Store
from ctxd.indexer.walker import WalkOptions


def bench_chunker(root: Path, emb: SentenceTransformerEmbedder) -> dict[str, object]:
    files = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts)
    texts = [(str(p.relative_to(root)), p.read_text(encoding="utf-8", errors="replace"))
             for p in files]
    opts = ChunkOptions()
    t = time.perf_counter()
    chunks = [c for path, text in texts for c in chunk_file(path, text, opts,
                                                             emb.count_tokens).chunks]
    seconds = time.perf_counter() - t
    sizes = emb.count_tokens([c.text for c in chunks])
    return {"files": len(texts), "chunks": len(chunks), "seconds": round(seconds, 2),
            "files_per_s": round(len(texts) / seconds),
            "chunks_per_s": round(len(chunks) / seconds),
            "tokens_p50": statistics.median(sizes), "tokens_p95": percentile(sizes, 0.95),
            "tokens_max": max(sizes)}


def bench_phase1(emb: SentenceTransformerEmbedder) -> dict[str, object]:
    corpus = ensure_corpus()
    with tempfile.TemporaryDirectory() as tmp, Store.open(Path(tmp) / "index.db") as store:
        t = time.perf_counter()
        stats = Indexer(store, emb).index(corpus, WalkOptions(), embed=False)
        seconds = time.perf_counter() - t
    return {"files": stats.files_indexed, "checkpoints": stats.checkpoints,
            "seconds": round(seconds, 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--stdlib", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    emb = SentenceTransformerEmbedder(EmbedOptions())  # counts tokens; never loads torch here
    out = {"date": time.strftime("%Y-%m-%d"), "chunker_stdlib": bench_chunker(args.stdlib, emb),
           "phase1_eval_corpus": bench_phase1(emb)}
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
