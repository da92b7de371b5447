"""Does the code graph help the ranking? (issue 38: "hybrid search may use the graph, if it
measurably helps"). Tries graph features from `graph_stats.py` on the dumped pools as a
factor on the shipped fitted ranking, `exp(w * feature)`, each `w` of a grid scored exactly
(production's ranking steps, the rules, MRR@10, as `train.py`), and reports
leave-one-repository-out: `w` chosen on the other repositories' questions (less `--cost`
per unit of weight), applied to the held-out one.

    .venv/bin/python bench/ranking_train/graph_stats.py --homes /work/coord/ranking-homes
    .venv/bin/python bench/ranking_train/graph_eval.py [--features callers,importers]

Features (per candidate; 0 for a file without a graph):

- `callers`: log(1 + other files naming the definition that holds the candidate's lines);
- `file_callers`: log(1 + the most other files naming any of the file's definitions);
- `importers`: log(1 + other files importing the file by its module name);
- each with `_rel`: divided by log(1 + the repository's files with a graph) (a share,
  comparable across repository sizes);
- or any feature of `search.rank_features.FEATURES` (a correction the shipped model
  does not weigh yet, tried the same way).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.ranking_train.dump_pools import CACHE
from bench.ranking_train.sets import dev_sets
from bench.ranking_train.train import load, mrr, per_set, prepare, top_files
from ctxd.search.rank_features import FEATURES, Candidate
from ctxd.search.rank_model import _with_score, finish, load_model

GRID = (-0.3, -0.2, -0.1, -0.05, 0.0, 0.05, 0.1, 0.2, 0.3)
BASES = ("callers", "file_callers", "importers")


def feature_fn(stats: dict[str, Any], name: str) -> Any:
    if name in FEATURES:  # a feature of the record (not weighed by the shipped model)
        j = FEATURES.index(name)
        return lambda c: c.vector[j]
    rel = name.endswith("_rel")
    base = name.removesuffix("_rel")
    sizes: dict[str, int] = {}
    for path in stats:
        repo = path.split("/", 1)[0]
        sizes[repo] = sizes.get(repo, 0) + 1

    def value(c: Candidate) -> float:
        h = c.hit
        st = stats.get(h.path)
        if st is None:
            return 0.0
        if base == "importers":
            raw = int(st["importers"])
        elif base == "file_callers":
            raw = max((d[3] for d in st["defs"]), default=0)
        else:  # the innermost definition holding the candidate's first line
            holding = [d for d in st["defs"] if d[0] <= h.start_line <= d[1]
                       or h.start_line <= d[0] <= h.end_line]
            raw = max((d[3] for d in holding), default=0)
        v = math.log1p(raw)
        if rel:
            v /= math.log1p(sizes.get(h.path.split("/", 1)[0], 1))
        return v

    return value


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", type=Path, default=CACHE)
    ap.add_argument("--features", default=",".join(
        [*BASES, *(b + "_rel" for b in BASES)]))
    ap.add_argument("--cost", type=float, default=0.003)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    names = [s.name for s in dev_sets()]
    records = load(args.cache, names)
    prepare(records)
    stats = {}
    for s in names:
        with gzip.open(args.cache / f"{s}.graph.json.gz", "rt", encoding="utf-8") as f:
            stats[s] = json.load(f)
    model = load_model()
    assert model is not None
    base_scores = {id(r): [model.logit(c.vector) for c in r["cands"]] for r in records}
    report: dict[str, Any] = {}
    for feat in [f for f in args.features.split(",") if f]:
        fns = {s: feature_fn(stats[s], feat) for s in names}
        scores: dict[float, dict[str, float]] = {}
        for w in GRID:
            got: dict[str, float] = {}
            for r in records:
                fn = fns[r["set"]]
                scored = [_with_score(c.hit, math.exp(max(-50.0, min(50.0, z + w * fn(c)))))
                          for c, z in zip(r["cands"], base_scores[id(r)], strict=True)]
                ranked = finish(r["query"], scored, r["legs"], model, generated=r["generated"])
                got[r["set"] + "/" + r["id"]] = mrr(r, top_files(r, ranked))
            scores[w] = got
        fitted = per_set(records, scores[0.0])
        cv: dict[str, float] = {}
        chosen: dict[str, float] = {}
        for repo in sorted({r["repository"] for r in records}):
            train = [r["set"] + "/" + r["id"] for r in records if r["repository"] != repo]
            best = max(GRID, key=lambda w: (statistics.fmean(scores[w][k] for k in train)
                                            - args.cost * abs(w), -abs(w)))
            chosen[repo] = best
            for r in records:
                if r["repository"] == repo:
                    k = r["set"] + "/" + r["id"]
                    cv[k] = scores[best][k]
        loro = per_set(records, cv)
        in_sample = {str(w): round(per_set(records, scores[w])["all"], 4) for w in GRID}
        report[feat] = {"fitted": fitted, "loro": loro, "weights": chosen,
                        "in_sample_all": in_sample}
        print(f"\n{feat}: in-sample all by w {in_sample}")
        print(f"  LORO weights: {sorted(chosen.values())}")
        print(f"  {'set':12} {'fitted':>7} {'+graph LORO':>11}")
        for s in [*names, "all"]:
            print(f"  {s:12} {fitted[s]:7.3f} {loro[s]:11.3f}")
    if args.out:
        args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
