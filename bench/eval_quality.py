"""Retrieval quality on ../shared/eval-dev: file-level R@k / MRR@10 / nDCG@10 per mode and
per fusion variant, with per-category tables and query latency.

    .venv/bin/python bench/eval_quality.py [--home DIR] [--modes hybrid,semantic,keyword]
        [--variants all|NAME,...] [--legs-cache FILE] [--no-latency]
        [--store URL [--clone-from INDEX_DB]] [--corpus DIR --queries FILE] [--first-page N]

1. Indexes the eval corpus as one tree (paths relative to `corpus/`, as the scorer
   expects) with `ctxd index`, unless `--home` already holds an index. With `--store URL`
   the index is that PostgreSQL store (CTXD_STORE_URL for every step); an empty one is
   indexed, or, with `--clone-from`, filled with a copy of a SQLite index (its texts and
   the same vectors: `bench/pg_helpers.clone`), so both stores are scored on one index.
2. Runs every query once through each leg of hybrid search (semantic, keyword, and the
   lexical engine) in-process, `--depth` hits a leg, and keeps the candidate lists
   (`--legs-cache` saves / reuses them as JSON). Fusion variants are then replayed
   offline over those same lists with the production code (`ctxd.search.hybrid`), so
   trying a fusion or re-ranking variant costs milliseconds, not a re-index.
3. Runs each `--modes` mode end to end through `Service.search` (warm, in-process, the
   server's in-memory vector matrix) and reports latency p50/p95 (of the first page)
   next to its quality. A page cut short by the token budget is followed by its cursor
   until ten files are ranked; with `--first-page N`, only the files of the first page of
   N results are scored (what an agent that reads one page sees).

Scores come from the eval set's own `run_eval.py` (imported). Ranked files per mode go
to bench/results/eval-<mode>.jsonl.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import ensure_corpus, eval_dir
from ctxd.search.hybrid import FusionOptions, rank_hybrid
from ctxd.search.models import Hit, LineMatch, MatchSource

HERE = Path(__file__).resolve().parent
CTXD = [sys.executable, "-m", "ctxd.server.cli.main"]
METRICS = ("R@1", "R@5", "R@10", "MRR@10", "nDCG@10")
LEGS = ("semantic", "keyword", "lexical")


def ranked_files(results: list[Hit]) -> list[str]:
    """Checkpoint hits -> distinct files, first (best) occurrence kept, top 10."""
    files: list[str] = []
    for r in results:
        if r.path not in files:
            files.append(r.path)
        if len(files) == 10:
            break
    return files


def load_scorer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("run_eval", eval_dir() / "run_eval.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


# -- legs ----------------------------------------------------------------------------------


def hit_to_json(h: Hit) -> dict[str, Any]:
    return {"r": h.repository, "p": h.path, "l": h.language, "s": h.start_line,
            "e": h.end_line, "sc": h.score, "src": [s.value for s in h.sources],
            "sym": h.symbol, "t": h.snippet, "m": [[m.line, m.text] for m in h.matches]}


def hit_from_json(d: dict[str, Any]) -> Hit:
    return Hit(repository=d["r"], path=d["p"], language=d["l"], start_line=d["s"],
               end_line=d["e"], score=d["sc"], sources=tuple(MatchSource(s) for s in d["src"]),
               symbol=d["sym"], snippet=d["t"],
               matches=tuple(LineMatch(n, t) for n, t in d.get("m", ())))


def dump_legs(service: Any, queries: list[dict[str, Any]], depth: int) -> dict[str, Any]:
    """Every leg's candidates per query, and each leg's time per query (ms)."""
    out: dict[str, Any] = {}
    for q in queries:
        legs, times, _notes = service.hybrid_legs(q["query"], depth=depth)
        out[q["id"]] = {"legs": {k: [hit_to_json(h) for h in v] for k, v in legs.items()},
                        "ms": times}
    return out


# -- variants ------------------------------------------------------------------------------


def variants() -> dict[str, FusionOptions]:
    """Fusion / re-ranking variants replayed over the same candidate lists: each lever
    added to the one before (the last is the shipped default), then side experiments."""
    d = FusionOptions()
    off = replace(d, query_aware=False, file_evidence=0.0, rerank=False, demote_tests=1.0,
                  demote_changelogs=1.0, demote_prose_for_where=1.0, lexical_weight=0.0,
                  promote_prose_for_how_to=1.0, summary_weight=0.0, code_first=False)
    qa = replace(off, query_aware=True)
    tests = replace(qa, demote_tests=d.demote_tests)
    logs = replace(tests, demote_changelogs=d.demote_changelogs)
    prose = replace(logs, demote_prose_for_where=d.demote_prose_for_where)
    steps = {
        "old default: RRF k=10, keyword 0.6": replace(off, method="rrf", rrf_k=10),
        "score fusion (s / leg's best)": off,
        "+ query-aware weights": qa,
        "+ tests/stubs demoted": tests,
        "+ changelogs demoted": logs,
        "+ prose demoted for 'where' questions": prose,
        "+ file evidence": replace(prose, file_evidence=d.file_evidence),
        "+ lexical leg (embedded engine)": replace(d, promote_prose_for_how_to=1.0,
                                                   summary_weight=0.0, code_first=False),
        "+ prose promoted for how-to questions": replace(d, summary_weight=0.0,
                                                         code_first=False),
        "+ file summaries": replace(d, code_first=False),
        "+ code over prose = default": d,
    }
    side = {
        "semantic leg alone": replace(off, method="rrf", keyword_weight=0.0),
        "keyword leg alone": replace(off, method="rrf", semantic_weight=0.0, keyword_weight=1.0),
        "default, query-aware off": replace(d, query_aware=False),
        "default + re-rank (symbol 0.15, path 0.1, agreement 0.05)": replace(
            d, rerank=True, symbol_bonus=0.15, path_bonus=0.1, agreement_bonus=0.05),
        "default + re-rank (path 0.05 only)": replace(
            d, rerank=True, symbol_bonus=0.0, path_bonus=0.05, agreement_bonus=0.0),
        "default + re-rank (agreement 0.05 only)": replace(
            d, rerank=True, symbol_bonus=0.0, path_bonus=0.0, agreement_bonus=0.05),
        "default, lexical weight 0.3": replace(d, lexical_weight=0.3),
        "default, rank-only RRF": replace(d, method="rrf"),
        "default, examples not demoted": replace(d, demote_examples=1.0),
        "default, how-to prose x1.2": replace(d, promote_prose_for_how_to=1.2),
        "default, how-to prose x2.0": replace(d, promote_prose_for_how_to=2.0),
        "default, summary weight 0.05": replace(d, summary_weight=0.05),
        "default, summary weight 0.2": replace(d, summary_weight=0.2),
        "default, code first: prose x1.0": replace(d, prose_factor=1.0),
        "default, code first: prose x0.7": replace(d, prose_factor=0.7),
        "default, code first: 2 prose in top 10": replace(d, max_prose_top=2),
        "default, code first: 5 prose in top 10": replace(d, max_prose_top=5),
        "default, code first: no prose bound": replace(d, max_prose_top=10),
    }
    return {**steps, **side}


def score_variant(
    scorer: ModuleType, queries: list[dict[str, Any]], legs: dict[str, Any],
    rank: Callable[[str, dict[str, list[Hit]]], list[Hit]],
) -> tuple[dict[str, Any], list[float]]:
    results: dict[str, list[str]] = {}
    times: list[float] = []
    for q in queries:
        entry = legs[q["id"]]
        hits = {k: [hit_from_json(h) for h in v] for k, v in entry["legs"].items()}
        t0 = time.perf_counter()
        ranked = rank(q["query"], hits)
        times.append((time.perf_counter() - t0) * 1000)
        results[q["id"]] = ranked_files(ranked)
    _rows, summary = scorer.aggregate(queries, results)
    return summary, times


def table(rows: dict[str, dict[str, Any]], extra: dict[str, str] | None = None) -> str:
    extra = extra or {}
    cats = [g for g in next(iter(rows.values())) if g != "all"]
    head = "| variant | " + " | ".join(METRICS) + " | conceptual MRR@10 | " + " | ".join(
        f"{c} MRR" for c in cats if c != "conceptual") + (" | latency |" if extra else " |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for name, s in rows.items():
        a = s["all"]
        cells = [f"{a[m]:.3f}" for m in METRICS]
        cells.append(f"{s['conceptual']['MRR@10']:.3f}")
        cells += [f"{s[c]['MRR@10']:.3f}" for c in cats if c != "conceptual"]
        if extra:
            cells.append(extra.get(name, ""))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def category_table(rows: dict[str, dict[str, Any]]) -> str:
    head = "| variant | category | n | " + " | ".join(METRICS) + " |"
    lines = [head, "|" + "---|" * (3 + len(METRICS))]
    for name, s in rows.items():
        for g, v in s.items():
            lines.append(f"| {name} | {g} | {v['n']} | "
                         + " | ".join(f"{v[m]:.3f}" for m in METRICS) + " |")
    return "\n".join(lines)


def store_has_repos(url: str) -> bool:
    """Whether the PostgreSQL store at `url` holds a repository."""
    from ctxd.indexer.store.location import StoreOptions
    from ctxd.indexer.store.open import open_store

    with open_store(Path("/nonexistent"), StoreOptions(url=url)) as store:
        return bool(store.repos())


def main() -> None:  # noqa: C901 - a linear script
    ap = argparse.ArgumentParser()
    ap.add_argument("--modes", default="hybrid,semantic,keyword")
    ap.add_argument("--home", type=Path, help="index folder (reused if it holds an index)")
    ap.add_argument("--depth", type=int, default=100, help="candidates per leg")
    ap.add_argument("--variants", default="all", help="'all', 'none' or names, comma-separated")
    ap.add_argument("--legs-cache", type=Path, help="save/reuse the legs' candidates here")
    ap.add_argument("--no-latency", action="store_true", help="skip the end-to-end mode runs")
    ap.add_argument("--categories", action="store_true", help="print per-category tables")
    ap.add_argument("--first-page", type=int, metavar="N",
                    help="score only the files of each query's first page of N results "
                         "(what an agent reading one page sees), not 40 paged on")
    ap.add_argument("--store", help="a PostgreSQL store URL to evaluate instead of SQLite")
    ap.add_argument("--clone-from", type=Path,
                    help="with --store: fill an empty store with a copy of this SQLite index")
    ap.add_argument("--corpus", type=Path,
                    help="index this folder instead of eval-dev's corpus (with --queries)")
    ap.add_argument("--queries", type=Path,
                    help="score these queries instead of eval-dev's (e.g. bench/docs_dev)")
    args = ap.parse_args()
    corpus = args.corpus or ensure_corpus()
    evald = eval_dir()
    scorer = load_scorer()
    home = args.home or Path(tempfile.mkdtemp(prefix="ctxd-eval-"))
    os.environ["CTXD_HOME"] = str(home)
    if args.store:
        os.environ["CTXD_STORE_URL"] = args.store
        indexed = store_has_repos(args.store)
        if not indexed and args.clone_from:
            from bench.pg_helpers import clone
            from ctxd.indexer.store.location import StoreOptions
            from ctxd.indexer.store.open import open_store

            src = open_store(args.clone_from, StoreOptions())
            dst = open_store(home / "index.db", StoreOptions(url=args.store))
            print(f"cloned: {clone(src, dst)}", file=sys.stderr)
            src.close()
            dst.close()
            indexed = True
    else:
        indexed = (home / "index.db").is_file()
    if not indexed:
        t0 = time.perf_counter()
        subprocess.run([*CTXD, "index", str(corpus)], check=True, cwd=str(HERE.parent))
        print(f"indexed in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    from ctxd.server.config import load_settings
    from ctxd.server.service import Service

    service = Service(load_settings(), long_lived=True)
    queries = scorer.load_queries(str(args.queries or evald / "queries.jsonl"))
    if args.legs_cache and args.legs_cache.is_file():
        legs = json.loads(args.legs_cache.read_text(encoding="utf-8"))
    else:
        service.search("warm up", mode="hybrid")
        legs = dump_legs(service, queries, args.depth)
        if args.legs_cache:
            args.legs_cache.write_text(json.dumps(legs), encoding="utf-8")

    rows: dict[str, dict[str, Any]] = {}
    lat: dict[str, str] = {}
    chosen = variants()
    if args.variants not in ("all", "none"):
        chosen = {k: v for k, v in chosen.items() if k in args.variants.split(",")}
    if args.variants != "none":
        for name, opts in chosen.items():
            def rank(query: str, hits: dict[str, list[Hit]], o: FusionOptions = opts) -> list[Hit]:
                return rank_hybrid(query, hits, o)
            summary, times = score_variant(scorer, queries, legs, rank)
            rows[name] = summary
            lat[name] = f"fusion p50 {pct(times, .5):.2f} ms"
        print("## Fusion variants over one set of candidates "
              f"({args.depth} a leg; legs p50: " + ", ".join(
                  f"{leg} {pct([v['ms'][leg] for v in legs.values() if leg in v['ms']], .5):.1f} ms"
                  for leg in LEGS) + "; the lexical leg runs only for identifier-like queries, "
              "in parallel with the others)\n")
        print(table(rows, lat))
        if args.categories:
            print()
            print(category_table(rows))

    if args.no_latency:
        return
    out_dir = HERE / "results"
    out_dir.mkdir(exist_ok=True)
    mode_rows: dict[str, dict[str, Any]] = {}
    mode_lat: dict[str, str] = {}
    hybrid_times: list[float] = []
    prefix = "eval" if args.queries is None else args.queries.parent.name
    if args.first_page:
        prefix += f"-page{args.first_page}"
    for mode in args.modes.split(","):
        service.search("warm up", mode=mode)
        results: dict[str, list[str]] = {}
        times: list[float] = []
        for q in queries:
            t0 = time.perf_counter()
            page = service.search(q["query"], mode=mode, limit=args.first_page or 40)
            times.append((time.perf_counter() - t0) * 1000)
            hits = list(page.results)
            # A page may stop short of `limit` at the token budget: page on (untimed)
            # until the scorer's ten files are there, as an agent would.
            while not args.first_page and page.next_cursor and len(ranked_files(hits)) < 10:
                page = service.search(q["query"], mode=mode, limit=40, cursor=page.next_cursor)
                hits += page.results
            results[q["id"]] = ranked_files(hits)
        with (out_dir / f"{prefix}-{mode}.jsonl").open("w", encoding="utf-8") as f:
            for qid, files in results.items():
                f.write(json.dumps({"id": qid, "ranked_files": files}) + "\n")
        _rows, mode_rows[mode] = scorer.aggregate(queries, results)
        mode_lat[mode] = f"p50 {pct(times, .5):.1f} / p95 {pct(times, .95):.1f} ms"
        if mode == "hybrid":
            hybrid_times = times
    print("\n## Modes end to end (Service.search, warm, in-process)\n")
    print(table(mode_rows, mode_lat))
    print()
    print(category_table(mode_rows))
    embed: list[float] = []
    for q in queries:
        t0 = time.perf_counter()
        service.embedder.embed([q["query"]])
        embed.append((time.perf_counter() - t0) * 1000)
    print(f"\nLatency over {len(queries)} queries, limit {args.first_page or 40}, warm. "
          f"The query's embedding alone: p50 {pct(embed, .5):.1f} / "
          f"p95 {pct(embed, .95):.1f} ms (same run); "
          f"mean hybrid {statistics.mean(hybrid_times):.1f} ms." if hybrid_times else "")


if __name__ == "__main__":
    main()
