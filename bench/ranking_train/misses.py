"""List the dev questions the shipped ranking misses (its gold file not first), from the
dumped pools: each with its set, category, MRR@10, the question's form flags
(`search.rank_features.QueryForm`), the first files and where the gold file is.

    .venv/bin/python bench/ranking_train/misses.py [--sets dev4] [--category docs] \
        [--hand] [--top 5] [--json out.json]

`--hand`: the hand ranking (`[search] fusion = "score"`) instead of the fitted one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.ranking_train.dump_pools import CACHE
from bench.ranking_train.sets import dev_sets
from bench.ranking_train.train import fitted_files, hand_files, load, mrr, norm_path, prepare
from ctxd.search.rank_features import QueryForm
from ctxd.search.rank_model import load_model


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", type=Path, default=CACHE)
    ap.add_argument("--sets", default="")
    ap.add_argument("--category", default="")
    ap.add_argument("--hand", action="store_true")
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    names = [s.name for s in dev_sets()
             if not args.sets or s.name in args.sets.split(",")]
    records = [r for r in load(args.cache, names)
               if not args.category or r["category"] == args.category]
    prepare(records)
    model = load_model()
    assert model is not None
    out = []
    for r in records:
        files = hand_files(r) if args.hand else fitted_files(r, model)
        score = mrr(r, files)
        if score >= 1.0:
            continue
        gold = {norm_path(g) for g in r["gold"]}
        rank = next((i for i, f in enumerate(files, 1) if norm_path(f) in gold), None)
        flags = [k for k, v in QueryForm.of(r["query"]).flags().items() if v]
        out.append({"set": r["set"], "id": r["id"], "category": r["category"],
                    "query": r["query"], "mrr": round(score, 3), "gold_rank": rank,
                    "gold": r["gold"], "top": files[:args.top], "flags": flags})
        print(f"{r['set']}/{r['id']} [{r['category']}] MRR {score:.2f} gold@{rank} "
              f"{flags}\n  Q: {r['query']}\n  gold: {r['gold']}")
        for i, f in enumerate(files[:args.top], 1):
            print(f"   {i}. {f}{'  <- gold' if norm_path(f) in gold else ''}")
    print(f"{len(out)} of {len(records)} questions miss first place")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
