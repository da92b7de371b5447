"""What one result per distinct text costs (`search/copies.py`, issue 24 item 2).

    .venv/bin/python bench/bench_copies.py [--copies 0.2] [--runs 200] [--json out.json]

Collapsing identical copies runs on the candidates of one page only: hybrid ranks at most
`HYBRID_DEPTH` (100) hits per leg, semantic and keyword pages fetch `offset + 2 * limit`.
Its input therefore has the same size at a thousand checkpoints as at a million, and this
benchmark times it on exactly that input, built from real checkpoints: this checkout's
own Python files chunked by the production chunker, two legs of 100 hits (semantic,
keyword) drawn from them, a share `--copies` of them given a verbatim copy at another
path (a `docs/snippets/` copy). It reports, medians of `--runs`:

- `rank_hybrid` as shipped (collapse before and after merging) against the same call
  with the collapse replaced by the identity (the baseline, measured in the same run,
  interleaved), and their ratio;
- `collapse_copies` alone on the fused candidates (one hit per checkpoint);
- a semantic/keyword page (`merged_page`, 10 results from the top) with and without it.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.stats import emit
from ctxd.indexer.chunk.chunker import ChunkOptions, chunk_file
from ctxd.search import hybrid
from ctxd.search.copies import collapse_copies
from ctxd.search.models import Hit, MatchSource
from ctxd.server import search_cases
from tests.conftest import FakeEmbedder

ROOT = Path(__file__).resolve().parents[1]
QUERY = "where are retries with exponential backoff configured"


def real_chunks(limit: int = 2000) -> list[tuple[str, int, int, str | None, str]]:
    """(path, start, end, symbol, text) of this checkout's Python checkpoints."""
    counter = FakeEmbedder().count_tokens
    out = []
    for path in sorted(ROOT.glob("[isb]*/**/*.py")):
        rel = path.relative_to(ROOT).as_posix()
        fc = chunk_file(rel, path.read_text(encoding="utf-8"), ChunkOptions(), counter)
        out.extend((rel, c.start_line, c.end_line, c.symbol, c.text) for c in fc.chunks)
        if len(out) >= limit:
            break
    return out


def legs(chunks: list[Any], share: float, seed: int = 7) -> dict[str, list[Hit]]:
    """Two legs of 100 hits each over the chunks, `share` of the texts also at a copy."""
    rng = random.Random(seed)
    picked = rng.sample(chunks, 150)
    hits: list[Hit] = []
    for i, (path, a, b, sym, text) in enumerate(picked):
        hits.append(Hit("repo", path, "python", a, b, 1.0 - i / 300, (MatchSource.SEMANTIC,),
                        symbol=sym, snippet=text, checkpoint=2 * i))
        if rng.random() < share:
            hits.append(replace(hits[-1], path=f"docs/snippets/{path}", checkpoint=2 * i + 1,
                                score=hits[-1].score - 0.001))
    semantic = sorted(hits, key=lambda h: -h.score)[:100]
    keyword = [replace(h, sources=(MatchSource.KEYWORD,), score=h.score * rng.uniform(5, 15))
               for h in rng.sample(hits, 100)]
    return {"semantic": semantic, "keyword": sorted(keyword, key=lambda h: -h.score)}


def median_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def interleaved(fns: dict[str, Callable[[], object]], runs: int) -> dict[str, float]:
    """Medians (ms) of each function, the calls interleaved so load hits all alike."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(runs):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - t0) * 1000)
    return {k: round(statistics.median(v), 3) for k, v in times.items()}


def without_collapse(fn: Callable[[], object]) -> Callable[[], object]:
    """`fn` run with `collapse_copies` replaced by the identity where the callers use it."""
    def run() -> object:
        saved = hybrid.collapse_copies, search_cases.collapse_copies
        hybrid.collapse_copies = search_cases.collapse_copies = (  # type: ignore[assignment]
            lambda hits, demoted=(): list(hits))
        try:
            return fn()
        finally:
            hybrid.collapse_copies, search_cases.collapse_copies = saved
    return run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--copies", type=float, default=0.2, help="share of texts with a copy")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    chunks = real_chunks()
    candidates = legs(chunks, args.copies)
    opts = hybrid.FusionOptions()

    def ranked() -> object:
        return hybrid.rank_hybrid(QUERY, candidates, opts)

    # one hit per checkpoint, best first: what a page's engine (or hybrid's fusion) hands on
    best = {h.checkpoint: h for h in sorted([*candidates["semantic"], *candidates["keyword"]],
                                            key=lambda h: h.score)}
    raw = sorted(best.values(), key=lambda h: -h.score)

    def page() -> object:
        return search_cases.merged_page(lambda k: raw[:k], 0, 10)

    shipped = hybrid.rank_hybrid(QUERY, candidates, opts)
    base = without_collapse(ranked)()
    assert isinstance(base, list)
    hybrid_ms = interleaved({"with": ranked, "without": without_collapse(ranked)}, args.runs)
    page_ms = interleaved({"with": page, "without": without_collapse(page)}, args.runs)
    alone = median_ms(lambda: collapse_copies(raw), args.runs)
    result = {
        "command": " ".join(["bench/bench_copies.py", *sys.argv[1:]]),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "checkpoints_sampled": len(chunks),
        "candidates": {**{k: len(v) for k, v in candidates.items()}, "fused": len(raw)},
        "copies_share": args.copies,
        "results": {"with": len(shipped), "without": len(base)},
        "rank_hybrid_ms": {**hybrid_ms,
                           "ratio": round(hybrid_ms["with"] / hybrid_ms["without"], 3)},
        "merged_page_ms": {**page_ms,
                           "ratio": round(page_ms["with"] / page_ms["without"], 3)},
        "collapse_copies_alone_ms": round(alone, 3),
    }
    emit(result, args.json)


if __name__ == "__main__":
    main()
