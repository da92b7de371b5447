"""Retrieval quality on ../shared/eval-dev: file-level R@k / MRR@10 per search mode.

    .venv/bin/python bench/eval_quality.py [--modes hybrid,semantic,keyword] [--home DIR]

Indexes the eval corpus as one tree (paths relative to `corpus/`, as the scorer
expects) with `ctxd index`, runs the 108 queries through `ctxd search --batch` once per
mode (the model loads once per mode), turns ranked checkpoints into ranked files (first
occurrence, top 10) and scores them with the eval set's own `run_eval.py`. Results go to
bench/results/eval-<mode>.jsonl and the table to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import ensure_corpus, eval_dir

HERE = Path(__file__).resolve().parent
CTXD = [sys.executable, "-m", "ctxd.server.cli.main"]


def ranked_files(results: list[dict[str, object]]) -> list[str]:
    """Checkpoint hits -> distinct files, first (best) occurrence kept, top 10."""
    files: list[str] = []
    for r in results:
        path = str(r["path"])
        if path not in files:
            files.append(path)
        if len(files) == 10:
            break
    return files


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--modes", default="hybrid,semantic,keyword")
    ap.add_argument("--home", type=Path, help="reuse an index folder (default: a temp dir)")
    ap.add_argument("--limit", type=int, default=40, help="checkpoints fetched per query")
    args = ap.parse_args()
    corpus = ensure_corpus()
    evald = eval_dir()
    home = args.home or Path(tempfile.mkdtemp(prefix="ctxd-eval-"))
    env = dict(os.environ, CTXD_HOME=str(home))
    root = str(HERE.parent)
    subprocess.run([*CTXD, "index", str(corpus)], check=True, env=env, cwd=root)
    queries = [json.loads(x) for x in (evald / "queries.jsonl").read_text(encoding="utf-8")
               .splitlines() if x.strip()]
    batch = "\n".join(json.dumps({"id": q["id"], "query": q["query"]}) for q in queries)
    out_dir = HERE / "results"
    out_dir.mkdir(exist_ok=True)
    for mode in args.modes.split(","):
        proc = subprocess.run(
            [*CTXD, "search", "--batch", "-", "--mode", mode, "--limit", str(args.limit)],
            input=batch, capture_output=True, text=True, env=env, cwd=root, check=True,
        )
        results_path = out_dir / f"eval-{mode}.jsonl"
        with results_path.open("w", encoding="utf-8") as f:
            for line in proc.stdout.splitlines():
                obj = json.loads(line)
                files = ranked_files(obj.get("results", []))
                f.write(json.dumps({"id": obj["id"], "ranked_files": files}) + "\n")
        subprocess.run(
            [sys.executable, str(evald / "run_eval.py"), "--queries", str(evald / "queries.jsonl"),
             "--results", str(results_path), "--name", f"ctxd-{mode}"],
            check=True,
        )


if __name__ == "__main__":
    main()
