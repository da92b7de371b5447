"""Score a ranking set end to end through the CLI: `ctxd search --batch --json`, the way a
user or an agent asks (hybrid, the fitted ranking, no daemon), at file level.

    .venv/bin/python bench/ranking_dev6/score_cli.py --home HOME \
        --queries bench/ranking_dev6/queries.jsonl [--out RESULT.json] [--limit 40]

Each question's results (one page of `--limit` hits) are cut to their first ten distinct
files; MRR@10 is 1/rank of the first gold file (0 past ten), recall@10 the share of the
gold files among the ten. Prints the figures per category and per repository (the first
folder of a gold path), then every question below MRR 1 with its first three files.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any


def files_of(results: list[dict[str, Any]], n: int = 10) -> list[str]:
    out: list[str] = []
    for r in results:
        if r["path"] not in out:
            out.append(r["path"])
        if len(out) == n:
            break
    return out


def score(files: list[str], gold: list[str]) -> tuple[float, float]:
    rr = next((1.0 / (i + 1) for i, f in enumerate(files) if f in gold), 0.0)
    return rr, sum(g in files for g in gold) / len(gold)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--out")
    ap.add_argument("--limit", type=int, default=40)
    ap.add_argument("--ctxd", default=str(Path(sys.executable).with_name("ctxd")))
    args = ap.parse_args()
    qs = [json.loads(line) for line in Path(args.queries).read_text().splitlines() if line]
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
        fh.write("".join(q["query"] + "\n" for q in qs))
    env = {**os.environ, "CTXD_NO_DAEMON": "1"}
    try:
        proc = subprocess.run([args.ctxd, "--home", args.home, "search", "--batch", fh.name,
                               "--json", "--limit", str(args.limit), "--no-daemon"],
                              capture_output=True, text=True, env=env, check=True)
    finally:
        os.unlink(fh.name)
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(answers) == len(qs), (len(answers), len(qs), proc.stderr[-2000:])
    rows = []
    groups: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for q, a in zip(qs, answers, strict=True):
        files = files_of(a["results"])
        rr, rec = score(files, q["gold_files"])
        rows.append({**q, "files": files, "mrr": rr, "recall": rec})
        for key in ("all", q["category"], "repo:" + q["gold_files"][0].split("/")[0]):
            groups[key].append((rr, rec))
    print(f"{'group':<16}{'n':>4}{'MRR@10':>9}{'R@10':>7}")
    for key, vals in sorted(groups.items(), key=lambda kv: (kv[0] != "all", kv[0])):
        n = len(vals)
        print(f"{key:<16}{n:>4}{sum(v[0] for v in vals) / n:>9.3f}"
              f"{sum(v[1] for v in vals) / n:>7.3f}")
    for r in rows:
        if r["mrr"] < 1:
            print(f"  {r['id']} [{r['category']}] {r['mrr']:.2f}  {r['query']}\n"
                  f"     gold {r['gold_files']}\n     got  {r['files'][:3]}")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
