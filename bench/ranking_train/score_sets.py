"""Score every dev set's dumped pools with the code as it is now: per question, MRR@10 of
the hand ranking and of the shipped fitted model (`search/rank_model.json`), per set and
overall; `--before` a previous run's JSON: the per-set change and every question that
moved. A rule change (`search.questions`, `search.hybrid`, `search.prose`) is measured
with it without dumping the pools again (they hold the legs; every rule runs here).

    .venv/bin/python bench/ranking_train/score_sets.py --out /tmp/before.json
    ... change a rule ...
    .venv/bin/python bench/ranking_train/score_sets.py --before /tmp/before.json

`--model FILE`: score a model other than the shipped one (a weight tried by hand).
`--held-out NAME[,NAME]`: also score held-out pools in the cache (`dump_pools.py
--held-out`: ranking_dev5, its Chinese questions), listed apart and not in "all".
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.ranking_train.dump_pools import CACHE
from bench.ranking_train.sets import dev_sets
from bench.ranking_train.train import fitted_files, hand_files, load, mrr, prepare
from ctxd.search.rank_model import load_model


def table(per_q: dict[str, dict[str, Any]], names: list[str], held: Sequence[str] = ()
          ) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for side in ("hand", "fitted"):
        row = {}
        for s in [*names, *held]:
            vals = [q[side] for q in per_q.values() if q["set"] == s]
            if vals:
                row[s] = round(statistics.fmean(vals), 4)
        dev = [q[side] for q in per_q.values() if q["set"] not in held]
        row["all"] = round(statistics.fmean(dev), 4) if dev else 0.0
        out[side] = row
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", type=Path, default=CACHE)
    ap.add_argument("--sets", default="")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--before", type=Path)
    ap.add_argument("--model", type=Path, help="a model file other than the shipped one")
    ap.add_argument("--held-out", default="", help="held-out pools to score too, not in 'all'")
    args = ap.parse_args()
    names = [s.name for s in dev_sets() if not args.sets or s.name in args.sets.split(",")]
    held = [n for n in args.held_out.split(",") if n]
    records = load(args.cache, [*names, *held])
    prepare(records)
    model = load_model(args.model) if args.model else load_model()
    assert model is not None
    per_q: dict[str, dict[str, Any]] = {}
    for r in records:
        hf, ff = hand_files(r), fitted_files(r, model)
        per_q[r["set"] + "/" + r["id"]] = {
            "set": r["set"], "query": r["query"], "category": r["category"],
            "hand": mrr(r, hf), "fitted": mrr(r, ff), "top": ff[:3]}
    tab = table(per_q, names, held)
    before = json.loads(args.before.read_text()) if args.before else None
    print(f"{'set':12} {'n':>4} {'hand':>6} {'fitted':>6}"
          + ("   before: hand fitted" if before else ""))
    for s in [*names, "all", *held]:
        n = sum(1 for q in per_q.values()
                if s == q["set"] or (s == "all" and q["set"] not in held))
        line = f"{s:12} {n:>4} {tab['hand'][s]:6.3f} {tab['fitted'][s]:6.3f}"
        if before:
            line += (f"   {before['table']['hand'].get(s, 0):6.3f} "
                     f"{before['table']['fitted'].get(s, 0):6.3f}")
        print(line)
    if before:
        for k, q in per_q.items():
            b = before["questions"].get(k)
            if b and (abs(b["hand"] - q["hand"]) > 1e-9 or abs(b["fitted"] - q["fitted"]) > 1e-9):
                print(f"  {k} [{q['category']}] hand {b['hand']:.2f}->{q['hand']:.2f} "
                      f"fitted {b['fitted']:.2f}->{q['fitted']:.2f}  {q['query'][:70]}\n"
                      f"     now: {q['top']}")
    if args.out:
        args.out.write_text(json.dumps({"table": tab, "questions": per_q}, indent=1),
                            encoding="utf-8")


if __name__ == "__main__":
    main()
