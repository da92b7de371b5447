"""Issue 42's measures on one index: a dev set's file-level scores end to end, and how often
a query naming a definition exactly finds a defining file first.

    .venv/bin/python bench/ranking_guarantees.py --home HOME --queries QUERIES.jsonl
        --out RESULT.json [--identifiers 150] [--seed 42]
    .venv/bin/python bench/ranking_guarantees.py --compare BEFORE.json AFTER.json [...]

HOME holds an index (built once, e.g. by `bench/eval_quality.py --home HOME --corpus ...`);
nothing is re-indexed. Every query of QUERIES runs through `Service.search` (hybrid, warm,
in-process, limit 40, paged on until ten files are ranked, as `bench/eval_quality.py`'s
end-to-end run) and is scored with eval-dev's `run_eval.py`. The identifier set is drawn
from the index's own symbol table (seeded, so both sides of a comparison ask the same
questions): classes, functions, methods and constants of at least four characters whose
name is defined in at most two files, asked as `Name`, `Container.name` or
`Container method` (both words as written); a hit is a first-ranked file that defines the
name. The drawn names are written into RESULT so that the other side can reuse them
(`--names-from`): run the code before a change with PYTHONPATH set to its package's parent.
`--compare` prints a table of several results side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import eval_dir

METRICS = ("R@1", "R@5", "MRR@10", "nDCG@10")


def draw_identifiers(store: Any, n: int, seed: int) -> list[dict[str, Any]]:
    """`n` identifier queries drawn from the index's definitions (module docstring)."""
    rows = store.query(  # the index is one tree: a path names its repository
        "SELECT s.name, s.kind, r.name, s.path, s.container FROM symbols s "
        "JOIN repos r ON r.id = s.repo_id "
        "WHERE lower(s.kind) IN ('class', 'function', 'method', 'constant', 'struct', "
        "'interface', 'type') ORDER BY r.name, s.path, s.line")
    files: dict[str, set[str]] = {}
    for name, _k, _repo, path, _c in rows:
        files.setdefault(str(name), set()).add(str(path))  # one tree: paths name the repo
    pool = [(str(name), str(kind), str(container or ""))
            for name, kind, _r, _p, container in rows
            if len(str(name)) >= 4 and not str(name).startswith("__")
            and len(files[str(name)]) <= 2]
    pool = sorted(set(pool))
    rng = random.Random(seed)
    rng.shuffle(pool)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for name, kind, container in pool:
        if name in seen:
            continue
        seen.add(name)
        form = len(out) % 3
        owner = container.rsplit(".", 1)[-1] if container else ""
        if form == 1 and owner:
            query = f"{owner}.{name}"
        elif form == 2 and owner:
            query = f"{owner} {name}"
        else:
            query = name
        out.append({"query": query, "name": name, "kind": kind, "gold": sorted(files[name])})
        if len(out) >= n:
            break
    return out


def search_files(service: Any, query: str) -> list[str]:
    """The first ten distinct files of the hybrid answer (paged on as an agent would)."""
    page = service.search(query, mode="hybrid", limit=40)
    hits = list(page.results)
    files: list[str] = []

    def distinct() -> list[str]:
        out: list[str] = []
        for h in hits:
            if h.path not in out:
                out.append(h.path)
        return out[:10]

    files = distinct()
    while page.next_cursor and len(files) < 10:
        page = service.search(query, mode="hybrid", limit=40, cursor=page.next_cursor)
        hits += page.results
        files = distinct()
    return files


def run(args: argparse.Namespace) -> dict[str, Any]:
    os.environ["CTXD_HOME"] = str(args.home)
    os.environ.setdefault("CTXD_NO_DAEMON", "1")
    import importlib.util

    from ctxd.server.config import load_settings
    from ctxd.server.service import Service
    spec = importlib.util.spec_from_file_location("run_eval", eval_dir() / "run_eval.py")
    assert spec and spec.loader
    scorer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scorer)
    service = Service(load_settings(), long_lived=True)
    service.search("warm up", mode="hybrid")
    out: dict[str, Any] = {"home": str(args.home), "queries": str(args.queries)}
    if args.queries:
        queries = scorer.load_queries(str(args.queries))
        results: dict[str, list[str]] = {}
        ms: list[float] = []
        for q in queries:
            t0 = time.perf_counter()
            results[q["id"]] = search_files(service, q["query"])
            ms.append((time.perf_counter() - t0) * 1000)
        _rows, summary = scorer.aggregate(queries, results)
        out["summary"] = summary
        out["ranked"] = results
        out["p50_ms"] = statistics.median(ms)
    if args.names_from:
        idents = json.loads(Path(args.names_from).read_text(encoding="utf-8"))["identifiers"]
    else:
        idents = draw_identifiers(service.store(), args.identifiers, args.seed)
    first = 0
    misses: list[dict[str, Any]] = []
    for item in idents:
        files = search_files(service, item["query"])
        if files and files[0] in item["gold"]:
            first += 1
        else:
            misses.append({**item, "got": files[:3]})
    out["identifiers"] = idents
    out["identifier_first"] = first / max(1, len(idents))
    out["identifier_misses"] = misses
    service.close()
    return out


def compare(paths: list[str]) -> None:
    sides = [json.loads(Path(p).read_text(encoding="utf-8")) for p in paths]
    cats = [c for c in sides[0].get("summary", {"all": 0}) if c != "all"]
    print("| side | " + " | ".join(METRICS) + " | " + " | ".join(f"{c} MRR" for c in cats)
          + " | identifier first | p50 ms |")
    print("|" + "---|" * (3 + len(METRICS) + len(cats)))
    for path, s in zip(paths, sides, strict=True):
        summ = s.get("summary")
        cells = [f"{summ['all'][m]:.3f}" for m in METRICS] if summ else ["-"] * len(METRICS)
        cells += [f"{summ[c]['MRR@10']:.3f}" if summ and c in summ else "-" for c in cats]
        cells.append(f"{s['identifier_first']:.3f} ({len(s['identifiers'])})")
        cells.append(f"{s.get('p50_ms', 0):.0f}")
        print(f"| {Path(path).stem} | " + " | ".join(cells) + " |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", type=Path)
    ap.add_argument("--queries", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--identifiers", type=int, default=150)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--names-from", type=Path, help="reuse the identifier set of a result")
    ap.add_argument("--compare", nargs="+")
    args = ap.parse_args()
    if args.compare:
        compare(args.compare)
        return
    result = run(args)
    text = json.dumps(result, indent=1)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    summ = result.get("summary", {}).get("all", {})
    print(json.dumps({k: round(v, 4) for k, v in summ.items() if k in METRICS}),
          f"identifier first {result['identifier_first']:.3f}",
          f"misses {len(result['identifier_misses'])}")


if __name__ == "__main__":
    main()
