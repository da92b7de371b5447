"""The embedded lexical engine over 50 queries: per-query ms (answer cache off), vs ripgrep.

    .venv/bin/python bench/bench_lexical.py [--runs 7] [--baseline REV] [--profile OUT]
        [--json FILE]

The eval-dev corpus (`bench/corpus.py`) is indexed once (phase 1 only, no vectors), then
50 distinct queries (`CASES`: common and rare identifiers, `case:yes`, regexes, `file:` and
`lang:` filters, multi-term ANDs, three-letter strings, a few with many matches) run:

- engine: `EmbeddedLexical.search` with the answer cache OFF: the process-wide cache
  (`engine._ANSWERS`) is emptied before every call, so every call plans, reads, verifies
  and ranks. Two shapes: "page" (the `search` tool's defaults: 30 files, 3 context lines)
  and "all" (every matching file, no context: what `rg -n` prints);
- rg: `rg -n --no-heading` over the same indexed files, passed as paths (for `file:` and
  `lang:` queries only the files the filter selects, chosen outside the timing). rg's time
  includes its process start; `rg -F x /dev/null`, run in turn with every rg call, gives
  that floor, and "rg - floor" (the medians' difference) is reported too;
- lines: matching lines from both. They should agree where the semantics agree (`agree`):
  a Zoekt AND is per file (both terms somewhere in it), which rg cannot express, so those
  run as `rg -e a -e b` (any line) and are not compared.

`--baseline REV`: the same timings for the engine at git revision REV (its `indexer`,
`search` and `server` folders, extracted to a temporary `ctxd` package and run in a
subprocess over the same index file), in alternating blocks with this checkout's engine
(and rg), so all are measured in one run under the same load; each query's full answer
must be identical in both.
`--profile OUT`: where to keep cProfile's stats (default: a temporary file). Every run
profiles one pass over the 50 queries per shape, this checkout's engine and the baseline's,
and splits the time into SQLite reads / planning / regex verification / ranking / result
building (`PARTS`; the split goes into the JSON).
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import re2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ctxd.indexer.store.sqlite.store import Store
from ctxd.search.lexical import engine as engine_module
from ctxd.search.lexical.engine import EmbeddedLexical


@dataclass(frozen=True)
class Case:
    query: str
    rg: tuple[str, ...]
    """rg's pattern arguments."""
    agree: bool = True
    """Whether rg's lines should equal the engine's."""
    path: str | None = None
    """Only indexed files whose path matches this regex go to rg (`file:` queries)."""
    lang: str | None = None
    """Only indexed files of this language go to rg (`lang:` queries)."""


def _and(*terms: str) -> tuple[str, ...]:
    return tuple(a for t in terms for a in ("-e", t))


CASES: tuple[Case, ...] = (
    # identifiers and literals, common
    Case("max_retries", ("-S", "max_retries")),
    Case("timeout", ("-S", "timeout")),
    Case("encoding", ("-S", "encoding")),
    Case("render", ("-S", "render")),
    Case("Style", ("-S", "Style")),
    Case("Console", ("-S", "Console")),
    Case('"return None"', ("-S", "return None")),
    Case('"def __init__"', ("-S", "def __init__")),
    Case("HTTPConnectionPool", ("-S", "HTTPConnectionPool")),
    Case("escape", ("-S", "escape")),
    # identifiers, rare
    Case("parse_retry_after", ("-S", "parse_retry_after")),
    Case("_encode_invalid_chars", ("-S", "_encode_invalid_chars")),
    Case("DEFAULT_POOLBLOCK", ("-S", "DEFAULT_POOLBLOCK")),
    Case("get_netrc_auth", ("-S", "get_netrc_auth")),
    Case("make_logging_undefined", ("-S", "make_logging_undefined")),
    Case("quokka_not_here", ("-S", "quokka_not_here")),
    # case:yes
    Case("case:yes Response", ("-s", "Response")),
    Case("case:yes TODO", ("-s", "TODO")),
    Case("case:yes Segment", ("-s", "Segment")),
    Case("case:yes session", ("-s", "session")),
    # regexes
    Case(r'"def \\w+_header\\("', ("-s", r"def \w+_header\(")),
    Case(r'"class \\w+Error\\("', ("-s", r"class \w+Error\(")),
    Case(r'"raise \\w+Error"', ("-s", r"raise \w+Error")),
    Case('"^import (os|sys)$"', ("-S", r"^import (os|sys)$")),
    Case(r'"self\\.\\w+ = None"', ("-s", r"self\.\w+ = None")),
    Case(r'"for \\w+ in range\\("', ("-s", r"for \w+ in range\(")),
    Case(r"\d{4}-\d{2}-\d{2}", ("-S", r"\d{4}-\d{2}-\d{2}")),
    Case(r"@property", ("-S", r"@property")),
    # file: and lang: filters
    Case(r"file:\.py$ timeout", ("-S", "timeout"), path=r"\.py$"),
    Case(r"file:test_ assert", ("-S", "assert"), path="test_"),
    Case(r"file:\.md$ install", ("-S", "install"), path=r"\.md$"),
    Case(r"file:console\.py Segment", ("-s", "Segment"), path=r"console\.py"),
    Case("lang:python yield", ("-S", "yield"), lang="python"),
    Case("lang:markdown pip", ("-S", "pip"), lang="markdown"),
    Case("lang:python content:lambda", ("-S", "lambda"), lang="python"),
    # multi-term AND (per file: rg cannot say it, lines not compared)
    Case("retry backoff", _and("retry", "backoff"), agree=False),
    Case("cookie jar", _and("cookie", "jar"), agree=False),
    Case("template loader", _and("template", "loader"), agree=False),
    Case("socket timeout", _and("socket", "timeout"), agree=False),
    Case("lang:python async def", _and("async", "def"), agree=False, lang="python"),
    Case("proxy -file:test", _and("proxy"), agree=False),
    # three letters
    Case("EOF", ("-S", "EOF")),
    Case("url", ("-S", "url")),
    Case("pop", ("-S", "pop")),
    Case("len", ("-S", "len")),
    # many matches
    Case("the", ("-S", "the")),
    Case("def", ("-S", "def")),
    Case("content:return", ("-S", "return")),
    Case("import", ("-S", "import")),
    Case("self", ("-S", "self")),
)
assert len({c.query for c in CASES}) == 50

PAGE = {"max_files": 30, "context_lines": 3}
ALL = {"max_files": 1_000_000, "context_lines": 0}


def search_uncached(engine: EmbeddedLexical, query: str, shape: dict[str, int]) -> Any:
    """One search with the answer cache off (emptied first)."""
    with engine_module._ANSWERS_LOCK:
        engine_module._ANSWERS.clear()
    return engine.search(query, **shape)


def digest(result: Any) -> str:
    """A hash of everything a search returns but its duration."""
    body = repr((result.files, result.match_count, result.file_count, result.partial, result.notes))
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def time_engine(store_path: Path, runs: int) -> dict[str, dict[str, Any]]:
    """Each query's times (ms) in both shapes, its line count and answer digest."""
    store = Store.open(store_path)
    engine = EmbeddedLexical(store)
    out: dict[str, dict[str, Any]] = {}
    for case in CASES:  # warm: compiled code paths, SQLite page cache
        search_uncached(engine, case.query, ALL)
    for case in CASES:
        page, every = [], []
        for _ in range(runs):
            t = time.perf_counter()
            search_uncached(engine, case.query, PAGE)
            page.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            res = search_uncached(engine, case.query, ALL)
            every.append((time.perf_counter() - t) * 1000)
        out[case.query] = {
            "page": page,
            "all": every,
            "digest": digest(res),
            "lines": sum(len(f.matches) for f in res.files),
            "files": res.file_count,
        }
    store.close()
    return out


def baseline_tree(rev: str, into: Path) -> Path:
    """`rev`'s indexer/search/server as a `ctxd` package under `into` (for PYTHONPATH)."""
    pkg = into / "ctxd"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    root = Path(__file__).resolve().parents[1]
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", rev, "indexer", "search", "server"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(pkg)], input=archive, check=True)
    return into


def time_baseline(
    tree: Path, store_path: Path, runs: int, profile_to: Path | None = None
) -> dict[str, Any]:
    """The baseline's times (or, with `profile_to`, its profile splits), in a subprocess."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    extra = ["--profile", str(profile_to)] if profile_to else []
    out = subprocess.run(
        [sys.executable, __file__, "--engine-only", str(store_path), "--runs", str(runs), *extra],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    data: dict[str, Any] = json.loads(out)
    if not data.pop("_module").startswith(str(tree)):
        sys.exit("baseline subprocess imported this checkout's engine, not the baseline's")
    return data["times"]  # type: ignore[no-any-return]


def indexed_files(store: Store) -> list[tuple[Path, str, str]]:
    """(absolute path, repo-relative path, language) of every indexed file."""
    rows = store.query(
        "SELECT r.root, f.path, f.language FROM files f "
        "JOIN repos r ON r.id = f.repo_id ORDER BY r.name, f.path"
    )
    return [(Path(root) / str(path), str(path), str(lang)) for root, path, lang in rows]


def rg_files(case: Case, files: list[tuple[Path, str, str]]) -> list[str]:
    """The files rg searches for a case: all indexed ones, or those its filter selects."""
    rx = re2.compile(case.path) if case.path else None
    return [
        str(p)
        for p, rel, lang in files
        if (rx is None or rx.search(rel)) and (case.lang is None or lang == case.lang)
    ]


FLOOR = ["-F", "x", "/dev/null"]
"""rg's trivial query: its time is the process start (the floor)."""


def time_rg(rg: str, args: list[str], runs: int) -> dict[str, Any]:
    """rg's times for `args` and for the floor, run in turn; the lines it printed."""
    times: dict[str, Any] = {"rg": [], "floor": []}
    for _ in range(runs):
        for name, argv in (("floor", FLOOR), ("rg", args)):
            t = time.perf_counter()
            proc = subprocess.run([rg, *argv], capture_output=True)
            times[name].append((time.perf_counter() - t) * 1000)
    times["lines"] = proc.stdout.count(b"\n")
    return times


def time_rg_all(rg: str, files: list[tuple[Path, str, str]], runs: int) -> dict[str, Any]:
    """`time_rg` for every case, by query."""
    return {
        case.query: time_rg(
            rg,
            ["-n", "--no-heading", "--no-config", *case.rg, "--", *rg_files(case, files)],
            runs,
        )
        for case in CASES
    }


# -- profile ---------------------------------------------------------------------------------

Func = tuple[str, str]
"""(file name, function name) in a profile."""

PARTS: dict[str, tuple[tuple[Func, Func | None], ...]] = {
    # (function, only its calls from this caller) whose cumulative times make up each part
    "SQLite: candidate select": ((("connection.py", "query"), ("engine.py", "_run")),),
    "SQLite: text reads": ((("engine.py", "_texts"), None), (("eval.py", "load_text"), None)),
    "SQLite: definitions (sym:, scoring)": (
        (("eval.py", "prefetch_symbols"), None),
        (("eval.py", "symbols_of"), None),
        (("eval.py", "_find_symbols"), None),
    ),
    "SQLite: other (generation, notes, repos)": (
        (("connection.py", "text_generation"), None),
        (("engine.py", "_notes"), None),
        (("connection.py", "query"), ("eval.py", "__init__")),
    ),
    "planning (parse, trigram conditions)": (
        (("query.py", "parse"), None),
        (("eval.py", "cond"), ("engine.py", "_run")),
        (("sql.py", "render_cond"), ("engine.py", "_run")),
    ),
    "regex verification (first pass, every candidate)": (
        (("eval.py", "eval"), ("engine.py", "_run")),
    ),
    "ranking (shape, score, sort)": (
        (("engine.py", "_hit"), None),
        (("engine.py", "<lambda>"), None),
        (("engine.py", "_score"), None),
        (("engine.py", "_rank_key"), None),
        (("engine.py", "shape"), ("engine.py", "_run")),
        (("eval.py", "collect"), ("engine.py", "_run")),
    ),
    "result building (re-verify shown files)": (
        (("eval.py", "eval"), ("engine.py", "_file_match")),
    ),
    "result building (lines, columns, context)": ((("engine.py", "_file_match"), None),),
}
"""The profile's split. The last part is `_file_match` less its re-verification (the part
before it) and text reads, ranking is less the definitions' reads; "planning" includes
`Plan`'s own reads of repositories; "rest" is what no part names (`search` itself, notes)."""


def _cum(stats: dict[Any, Any], func: Func, caller: Func | None) -> float:
    total = 0.0
    for (file, _, name), (_, _, _, ct, callers) in stats.items():
        if not (file.endswith(func[0]) and name == func[1]):
            continue
        if caller is None:
            total += ct
        else:
            total += sum(
                v[3] for (f, _, n), v in callers.items() if f.endswith(caller[0]) and n == caller[1]
            )
    return total


def profile(store_path: Path, out: Path, shape: str) -> dict[str, Any]:
    """The split of one pass over the 50 queries in one shape ("page" or "all")."""
    store = Store.open(store_path)
    engine = EmbeddedLexical(store)
    for case in CASES:
        search_uncached(engine, case.query, ALL)
    prof = cProfile.Profile()
    prof.enable()
    for case in CASES:
        search_uncached(engine, case.query, PAGE if shape == "page" else ALL)
    prof.disable()
    store.close()
    prof.dump_stats(str(out))
    stats = pstats.Stats(str(out)).stats  # type: ignore[attr-defined]
    total = _cum(stats, ("engine.py", "search"), None)
    ms = {part: sum(_cum(stats, f, c) for f, c in funcs) for part, funcs in PARTS.items()}
    shown = "result building (lines, columns, context)"
    ms[shown] -= ms["result building (re-verify shown files)"] + _cum(
        stats, ("eval.py", "load_text"), ("engine.py", "_file_match")
    )
    ms["ranking (shape, score, sort)"] -= _cum(  # counted with the definitions' reads
        stats, ("eval.py", "prefetch_symbols"), ("engine.py", "_score")
    )
    split = {k: round(100 * v / total, 1) for k, v in ms.items()}
    split["rest"] = round(100 - sum(split.values()), 1)
    return {"search_ms_per_query": round(1000 * total / len(CASES), 2), "percent": split}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=7, help="timed runs per query and shape")
    ap.add_argument("--baseline", help="git revision to time alongside (e.g. main)")
    ap.add_argument("--profile", type=Path, help="write cProfile stats here")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--engine-only", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.engine_only:  # the baseline's subprocess
        if args.profile:
            times = {s: profile(args.engine_only, args.profile, s) for s in ("page", "all")}
        else:
            times = time_engine(args.engine_only, args.runs)
        print(json.dumps({"_module": engine_module.__file__, "times": times}))
        return

    from bench.corpus import ensure_corpus
    from ctxd.indexer.pipeline import Indexer
    from ctxd.indexer.walk.walker import WalkOptions
    from tests.conftest import FakeEmbedder

    corpus = ensure_corpus()
    rg = shutil.which("rg") or str(Path(sys.executable).parent / "rg")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        store_path = tmp / "lex.db"
        store = Store.open(store_path)
        Indexer(store, FakeEmbedder()).index(corpus, WalkOptions(), embed=False)
        files = indexed_files(store)
        store.close()
        tree = baseline_tree(args.baseline, tmp / "baseline") if args.baseline else None

        # Two blocks each, alternating, so the shared machine's load drifts over both alike.
        half = max(1, args.runs // 2)
        now: dict[str, dict[str, Any]] = {}
        before: dict[str, dict[str, Any]] = {}
        grep: dict[str, dict[str, Any]] = {}
        for block in range(2):
            runs = half if block == 0 else args.runs - half
            if tree is not None:
                merge_times(before, time_baseline(tree, store_path, runs))
            merge_times(now, time_engine(store_path, runs))
            merge_times(grep, time_rg_all(rg, files, runs))

        rows = []
        for case in CASES:
            times, rg_lines = grep[case.query]["rg"], grep[case.query]["lines"]
            floor = med(grep[case.query]["floor"])
            e = now[case.query]
            row: dict[str, Any] = {
                "query": case.query,
                "agree_expected": case.agree,
                "engine_page_ms": med(e["page"]),
                "engine_all_ms": med(e["all"]),
                "rg_ms": med(times),
                "rg_floor_ms": floor,
                "rg_minus_floor_ms": round(med(times) - floor, 2),
                "engine_lines": e["lines"],
                "rg_lines": rg_lines,
                "files": e["files"],
            }
            if tree is not None:
                b = before[case.query]
                row |= {
                    "before_page_ms": med(b["page"]),
                    "before_all_ms": med(b["all"]),
                    "same_answer": b["digest"] == e["digest"],
                }
            rows.append(row)
        prof = {
            "after": {
                s: profile(store_path, args.profile or tmp / "now.prof", s) for s in ("page", "all")
            }
        }
        if tree is not None:
            prof["before"] = time_baseline(tree, store_path, 1, tmp / "before.prof")

    def col(name: str) -> float:
        return round(statistics.median(r[name] for r in rows), 2)

    summary: dict[str, Any] = {
        "queries": len(rows),
        "indexed_files": len(files),
        "median_rg_floor_ms": col("rg_floor_ms"),
        "median_engine_page_ms": col("engine_page_ms"),
        "median_engine_all_ms": col("engine_all_ms"),
        "median_rg_ms": col("rg_ms"),
        "median_rg_minus_floor_ms": col("rg_minus_floor_ms"),
        "median_ratio_engine_all_over_rg_minus_floor": round(
            statistics.median(r["engine_all_ms"] / max(r["rg_minus_floor_ms"], 0.01) for r in rows),
            2,
        ),
        "lines_agree": sum(r["engine_lines"] == r["rg_lines"] for r in rows if r["agree_expected"]),
        "lines_compared": sum(r["agree_expected"] for r in rows),
    }
    if tree is not None:
        summary |= {
            "baseline": args.baseline,
            "median_before_page_ms": col("before_page_ms"),
            "median_before_all_ms": col("before_all_ms"),
            "median_speedup_page": round(
                statistics.median(r["before_page_ms"] / r["engine_page_ms"] for r in rows), 2
            ),
            "median_speedup_all": round(
                statistics.median(r["before_all_ms"] / r["engine_all_ms"] for r in rows), 2
            ),
            "same_answers": sum(r["same_answer"] for r in rows),
        }
    report = {"command": " ".join(sys.argv), "summary": summary, "profile": prof, "queries": rows}
    print_table(rows, summary, prof)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def merge_times(into: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]]) -> None:
    """Add a block's times (the lists) to the earlier blocks'."""
    for q, v in new.items():
        if q in into:
            for k, times in v.items():
                if isinstance(times, list):
                    into[q][k] += times
        else:
            into[q] = v


def med(values: list[float]) -> float:
    return round(statistics.median(values), 2)


def print_table(rows: list[dict[str, Any]], summary: dict[str, Any], prof: dict[str, Any]) -> None:
    before = "before_page_ms" in rows[0]
    head = "| query | engine page | engine all | rg | rg - floor | lines engine / rg |"
    if before:
        head += " before page | before all | same |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in rows:
        lines = f"{r['engine_lines']} / {r['rg_lines']}" + ("" if r["agree_expected"] else " (AND)")
        line = (
            f"| `{r['query']}` | {r['engine_page_ms']} | {r['engine_all_ms']} | "
            f"{r['rg_ms']} | {r['rg_minus_floor_ms']} | {lines} |"
        )
        if before:
            line += f" {r['before_page_ms']} | {r['before_all_ms']} | {r['same_answer']} |"
        print(line)
    print(json.dumps({"summary": summary, "profile": prof}, indent=2))


if __name__ == "__main__":
    main()
