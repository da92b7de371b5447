"""What the fitted ranking costs against the hand ranking, on the dumped pools (issue 42:
ranking time p50 within 5%).

    .venv/bin/python bench/ranking_train/latency.py [--rounds 3] [--sets evaldev,poly]
    .venv/bin/python bench/ranking_train/latency.py --home HOME --queries Q.jsonl

Pools: the ranking step alone (`search.hybrid.rank_hybrid` against
`search.rank_model.rank_fitted` with the shipped model), on the same legs, interleaved
per question, `--rounds` times; p50 and p90 per side in ms. `--home`: the whole search
(`Service.search`, hybrid, limit 10, warm, in process) with `[search] fusion` `score`
against `fitted`, interleaved per question (each side first in turn), for the share of
a search the step is.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.ranking_train.sets import dev_sets, load_questions


def pct(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


def pools(args: argparse.Namespace) -> None:
    from bench.ranking_train.train import CACHE, load
    from ctxd.search.hybrid import FusionOptions, rank_hybrid
    from ctxd.search.rank_model import load_model, rank_fitted

    model = load_model(args.model) if args.model else load_model()
    assert model is not None
    names = [s for s in args.sets.split(",") if s] or [s.name for s in dev_sets()]
    records = load(CACHE, names)
    hand: list[float] = []
    fitted: list[float] = []
    for _round in range(args.rounds):
        for r in records:
            t0 = time.perf_counter()
            rank_hybrid(r["query"], r["legs"], FusionOptions(), unembedded=r["unembedded"],
                        generated=r["generated"])
            t1 = time.perf_counter()
            rank_fitted(r["query"], r["legs"], model, unembedded=r["unembedded"],
                        generated=r["generated"])
            t2 = time.perf_counter()
            hand.append((t1 - t0) * 1000)
            fitted.append((t2 - t1) * 1000)
    print(f"ranking step, {len(records)} questions x {args.rounds}: hand p50 "
          f"{statistics.median(hand):.2f} ms p90 {pct(hand, 0.9):.2f}; fitted p50 "
          f"{statistics.median(fitted):.2f} ms p90 {pct(fitted, 0.9):.2f}")


def searches(args: argparse.Namespace) -> None:
    os.environ["CTXD_HOME"] = str(args.home)
    os.environ["CTXD_NO_DAEMON"] = "1"
    from ctxd.server.config import load_settings
    from ctxd.server.service import Service

    sides: dict[str, Any] = {}
    for fusion in ("score", "fitted"):
        sides[fusion] = Service(load_settings({"search.fusion": fusion}), long_lived=True)
        sides[fusion].search("warm up", mode="hybrid")
    ms: dict[str, list[float]] = {k: [] for k in sides}
    questions = load_questions(args.queries)
    order = list(sides.items())
    for _round in range(args.rounds):
        for i, q in enumerate(questions):
            # alternate which side runs first: the second search of a question finds
            # warmer caches (its query's embedding, pages of the index)
            for fusion, svc in (order if (i + _round) % 2 == 0 else order[::-1]):
                t0 = time.perf_counter()
                svc.search(q["query"], mode="hybrid", limit=10)
                ms[fusion].append((time.perf_counter() - t0) * 1000)
    for fusion, values in ms.items():
        print(f"search ({fusion}), {len(questions)} questions x {args.rounds}: p50 "
              f"{statistics.median(values):.1f} ms p90 {pct(values, 0.9):.1f}")
    for svc in sides.values():
        svc.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sets", default="")
    ap.add_argument("--model", type=Path, help="pools: a model file other than the shipped one")
    ap.add_argument("--home", type=Path)
    ap.add_argument("--queries", type=Path)
    args = ap.parse_args()
    if args.home:
        searches(args)
    else:
        pools(args)


if __name__ == "__main__":
    main()
