"""Per-file code-graph statistics of each dev set's home (issue 38: may hybrid search use
the graph?), for `graph_eval.py` to try as ranking features on the dumped pools.

    .venv/bin/python bench/ranking_train/graph_stats.py --homes /work/coord/ranking-homes \
        [--sets dev4] [--cache bench/ranking_train/.cache]

The homes' stored graphs are not used (most homes were indexed before the graph, and
none is written): each code file of a language with graph rules is parsed again from its
stored text (`indexer.checkpoints.graph_row`, as the graph backfill does). Per file:

- `importers`: how many other files import it (their `link_keys` hold the file's module
  name: what the store's `graph_links` answers for one key at query time);
- `defs`: each definition as (line, end line, name, how many other files name it in
  code: a call, a reference or a base, by name, not resolved).

Written as `<cache>/<set>.graph.json.gz` ({path: {"importers": n, "defs": [...]}}).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sqlite3
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.ranking_train.dump_pools import CACHE
from bench.ranking_train.sets import dev_sets
from ctxd.indexer.checkpoints import graph_row
from ctxd.indexer.graph import decode, module_tail
from ctxd.indexer.graph.links import SCOPE
from ctxd.indexer.graph.model import Role
from ctxd.indexer.graph.specs import SPECS

NAMING = (Role.CALL, Role.REF, Role.INHERIT)


def stats(db: Path) -> dict[str, dict[str, object]]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute("SELECT f.id, f.path, f.language, t.content FROM files f "
                       "JOIN file_text t ON t.rowid = f.id").fetchall()
    graphs = {}
    keys: dict[str, list[str]] = {}
    for _fid, path, language, text in rows:
        if language not in SPECS or text is None:
            continue
        row = graph_row(path, language, text, 2000)
        g = decode(row.data) if row.data else None
        if g is None:
            continue
        graphs[path] = g
        keys[path] = list(row.keys)
    by_key: dict[str, set[str]] = defaultdict(set)
    for path, ks in keys.items():
        for k in ks:  # (a relative import's key without its folder: `links.scoped`)
            by_key[k.rpartition(SCOPE)[2]].add(path)
    named_in: dict[str, set[str]] = defaultdict(set)
    for path, g in graphs.items():
        for s in g.sites:
            if s.role in NAMING:
                named_in[s.name].add(path)
    out: dict[str, dict[str, object]] = {}
    for path, g in graphs.items():
        tail = module_tail(path.rsplit("/", 1)[-1])
        importers = len(by_key.get(tail, set()) - {path})
        defs = [(d.line, d.end_line, d.name, len(named_in.get(d.name, set()) - {path}))
                for d in g.defs]
        out[path] = {"importers": importers, "defs": defs}
    con.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--homes", type=Path, required=True)
    ap.add_argument("--sets", default="")
    ap.add_argument("--cache", type=Path, default=CACHE)
    args = ap.parse_args()
    wanted = {s for s in args.sets.split(",") if s}
    done: dict[str, Path] = {}
    for ds in dev_sets():
        if wanted and ds.name not in wanted:
            continue
        target = args.cache / f"{ds.name}.graph.json.gz"
        if ds.home in done:  # sets asked of the same home share its statistics
            target.write_bytes(done[ds.home].read_bytes())
            continue
        t0 = time.perf_counter()
        got = stats(args.homes / ds.home / "index.db")
        with gzip.open(target, "wt", encoding="utf-8") as f:
            json.dump(got, f)
        done[ds.home] = target
        print(f"{ds.name}: {len(got)} files with a graph, {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
