"""Everything but embedding: chunking throughput and phase 1 of indexing.

    .venv/bin/python bench/bench_chunk.py [--stdlib DIR] [--json out.json]
    .venv/bin/python bench/bench_chunk.py --languages DIR [DIR ...] [--runs N]

1. The chunker alone (tree-sitter + real word-piece counting) over the Python standard
   library of this interpreter: files/s, chunks/s, chunk sizes in word pieces.
2. Phase 1 of indexing the eval-dev corpus (walk, read, hash, chunk, full text, symbols,
   checkpoints committed; no embedding): the part of an index run that is not the model,
   and the moment lexical and symbol search start working.

`--languages` runs only the chunker, per language with a syntax table, over given trees.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import ensure_corpus
from bench.stats import emit, percentile
from ctxd.indexer.chunk.chunker import ChunkOptions, chunk_file
from ctxd.indexer.chunk.grammars import SYNTAX
from ctxd.indexer.chunk.languages import detect_language
from ctxd.indexer.chunk.tokens import load_token_counter
from ctxd.indexer.embedder import EmbedOptions, SentenceTransformerEmbedder
from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.sqlite.store import Store
from ctxd.indexer.walk.walker import WalkOptions


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


def bench_languages(roots: list[Path], emb: SentenceTransformerEmbedder,
                    runs: int) -> dict[str, dict[str, object]]:
    """The chunker per language over real trees (`--languages DIR ...`): files, KB, ms and
    KB/s (median of `runs`), symbols, checkpoints, and files without any symbol (no
    definitions, or cut into line windows: a parse mostly errors, or over its budget)."""
    by_lang: dict[str, list[tuple[str, str]]] = {}
    for root in roots:
        for p in sorted(root.rglob("*")):
            if not p.is_file() or ".git" in p.parts or p.stat().st_size > 1 << 20:
                continue
            lang = detect_language(p.name)
            if lang in SYNTAX:
                text = p.read_text(encoding="utf-8", errors="replace")
                by_lang.setdefault(lang, []).append((str(p.relative_to(root)), text))
    opts = ChunkOptions()
    out: dict[str, dict[str, object]] = {}
    for lang, texts in sorted(by_lang.items()):
        secs: list[float] = []
        for _ in range(max(runs, 1)):
            t = time.perf_counter()
            results = [chunk_file(path, text, opts, emb.count_tokens) for path, text in texts]
            secs.append(time.perf_counter() - t)
        kb = sum(len(text.encode()) for _, text in texts) / 1024
        sec = statistics.median(secs)
        out[lang] = {"files": len(texts), "kb": round(kb), "ms": round(sec * 1000),
                     "kb_per_s": round(kb / sec), "symbols": sum(len(r.symbols) for r in results),
                     "checkpoints": sum(len(r.chunks) for r in results),
                     "files_without_symbols": sum(1 for r in results if not r.symbols)}
    return out


def bench_phase1(emb: SentenceTransformerEmbedder) -> dict[str, object]:
    corpus = ensure_corpus()
    with tempfile.TemporaryDirectory() as tmp, Store.open(Path(tmp) / "index.db") as store:
        t = time.perf_counter()
        stats = Indexer(store, emb).index(corpus, WalkOptions(), embed=False)
        seconds = time.perf_counter() - t
    return {"files": stats.files_indexed, "checkpoints": stats.checkpoints,
            "seconds": round(seconds, 2)}


def bench_tree(root: Path, emb: SentenceTransformerEmbedder, runs: int) -> dict[str, object]:
    """Phase 1 (written, no embedding) and `--dry-run` over a large real tree, counting
    word pieces with the tokenizer (`encode_batch`, before issue 18) and with the fast
    counter, in turn; files/s of each, medians of `runs`."""
    counters = {"tokenizer": load_token_counter(emb._dir, fast=False),
                "fast": load_token_counter(emb._dir)}
    times: dict[str, list[float]] = {}
    files = 0
    for _ in range(runs):
        for name, counter in counters.items():
            emb._counter = counter  # the embedder's lazily loaded counter, swapped
            for dry in (True, False):
                with tempfile.TemporaryDirectory() as tmp, \
                        Store.open(Path(tmp) / "index.db") as store:
                    t = time.perf_counter()
                    stats = Indexer(store, emb).index(root, WalkOptions(), embed=False,
                                                      dry_run=dry)
                    key = f"{'dry_run' if dry else 'phase1'}_{name}"
                    times.setdefault(key, []).append(time.perf_counter() - t)
                    files = stats.files_indexed
    out: dict[str, object] = {"tree": str(root), "files": files}
    for key, secs in times.items():
        out[f"{key}_s"] = round(statistics.median(secs), 1)
        out[f"{key}_files_per_s"] = round(files / statistics.median(secs), 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--stdlib", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    ap.add_argument("--json", type=Path)
    ap.add_argument("--tree", type=Path, help="a large real tree: phase 1 and dry run, "
                    "tokenizer vs fast counter")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--languages", type=Path, nargs="+", metavar="DIR",
                    help="only the chunker, per language, over these trees")
    args = ap.parse_args()
    emb = SentenceTransformerEmbedder(EmbedOptions())  # counts tokens; never loads torch here
    if args.languages:
        emit({"date": time.strftime("%Y-%m-%d"),
              "chunker_by_language": bench_languages(args.languages, emb, args.runs)}, args.json)
        return
    out = {"date": time.strftime("%Y-%m-%d"), "chunker_stdlib": bench_chunker(args.stdlib, emb),
           "phase1_eval_corpus": bench_phase1(emb)}
    if args.tree:
        out["tree"] = bench_tree(args.tree, emb, args.runs)
    emit(out, args.json)


if __name__ == "__main__":
    main()
