"""Dump each dev question's candidate pool: what the hybrid legs found, and what the hard
rules would move (issue 42). One search per question through the real pipeline on the
prebuilt homes; training and cross-validation then iterate on the cache without the model.

    .venv/bin/python bench/ranking_train/dump_pools.py --homes /work/coord/ranking-homes \
        [--sets evaldev,poly] [--cache bench/ranking_train/.cache]

Per set, `<cache>/<set>.pickle.gz` holds one record per question: its id, text, category,
gold files and repository, the legs (`search.legs.run_legs`, depth `HYBRID_DEPTH`, as
`SearchCases._ranked` runs them), the unembedded checkpoints, the generated files, the
files defining the names it names (`search.definitions`) and the files holding its exact
phrase (`search.exact_phrase`). The cache is local (pickled `Hit`s of this checkout) and
rebuilt by this script; nothing in a home is written.
"""

from __future__ import annotations

import argparse
import gzip
import os
import pickle
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.ranking_train.sets import HERE, dev_sets, load_questions, repository_of

CACHE = HERE / ".cache"


def dump_set(home: Path, questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    os.environ["CTXD_HOME"] = str(home)
    os.environ["CTXD_NO_DAEMON"] = "1"
    from ctxd.search import legs as hybrid_legs
    from ctxd.search.definitions import defining_files
    from ctxd.search.exact_phrase import exact_files
    from ctxd.search.filters import SearchFilters
    from ctxd.search.legs import HYBRID_DEPTH
    from ctxd.search.parsed import ParsedQuery
    from ctxd.server.config import load_settings
    from ctxd.server.service import Service

    service = Service(load_settings(), long_lived=True)
    cases = service.searches
    service.search("warm up", mode="hybrid")
    store = service.store()
    filters = SearchFilters()
    options = cases.resources.leg_options()
    lexical_ok = bool(cases.resources.settings.search.zoekt_url
                      or hybrid_legs.embedded_lexical_fits(store))
    out: list[dict[str, Any]] = []
    for q in questions:
        parsed = ParsedQuery.parse(q["query"])
        legs, _ms, _notes = cases.hybrid_legs(parsed, depth=HYBRID_DEPTH, filters=filters,
                                              store=store)
        phrase = []
        if lexical_ok:
            phrase = exact_files(parsed.text, filters, lambda s, k: cases._lexical_search(
                s, offset=0, max_files=k, context_lines=0), store.file_roles)
        out.append({
            "id": q["id"], "query": q["query"], "category": q.get("category", ""),
            "gold": list(q["gold_files"]), "repository": repository_of(q),
            "legs": {k: list(v) for k, v in legs.items()},
            "unembedded": hybrid_legs.unembedded(store, filters, legs.get("keyword", [])),
            "generated": hybrid_legs.generated_files(store, legs, options),
            "definitions": defining_files(store, parsed.text, filters),
            "phrase": phrase,
        })
    service.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--homes", type=Path)
    ap.add_argument("--sets", default="", help="comma-separated set names (default: all)")
    ap.add_argument("--cache", type=Path, default=CACHE)
    ap.add_argument("--held-out", nargs=3, metavar=("NAME", "HOME", "QUERIES"),
                    help="dump one held-out set instead (no dev set): its name in the cache, "
                         "its home and its questions; score_sets.py --held-out NAME scores it")
    args = ap.parse_args()
    wanted = {s for s in args.sets.split(",") if s}
    args.cache.mkdir(parents=True, exist_ok=True)
    if args.held_out:
        name, home, queries = args.held_out
        records = dump_set(Path(home), load_questions(Path(queries)))
        with gzip.open(args.cache / f"{name}.pickle.gz", "wb") as f:
            pickle.dump(records, f)
        print(f"{name}: {len(records)} questions")
        return
    if args.homes is None:
        ap.error("--homes is required (or --held-out NAME HOME QUERIES)")
    for ds in dev_sets():
        if wanted and ds.name not in wanted:
            continue
        home = args.homes / ds.home
        if not (home / "index.db").is_file():
            print(f"{ds.name}: no index at {home}; skipped", file=sys.stderr)
            continue
        t0 = time.perf_counter()
        records = dump_set(home, load_questions(ds.queries))
        with gzip.open(args.cache / f"{ds.name}.pickle.gz", "wb") as f:
            pickle.dump(records, f)
        print(f"{ds.name}: {len(records)} questions, {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
