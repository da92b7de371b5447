"""Score `ctxd refs` and `ctxd callers` against the analysers' gold references.

    .venv/bin/python -m bench.graph_eval.score [--work DIR] [--home DIR] [--out FILE]
        [--lang python|typescript|go|rust|c|csharp|php|kotlin|swift|scala|lua|elixir]...
        [--repo NAME]... [--side baseline|graph]...

Each corpus repository (bench/graph_eval/corpus.py, the pinned archives the gold was made
from) is indexed into one temporary home without embedding (phase 1: text, symbols and
whatever else the indexer writes then), in this process; then every definition of the
gold is asked through the real CLI, `ctxd --no-daemon --home HOME ...`:

- baseline: today's word-boundary search, `ctxd refs NAME --json --limit 2000` (with
  `--by-name` once the command has it); its callers are the matches followed by `(`.
- graph (once `ctxd callers` exists): `ctxd refs PATH:LINE --json` (the definition's
  site, relative to the repository root) with the resolved usages only, and
  `ctxd callers PATH:LINE --json` (each caller's call `site`).

Rows: each language over all repositories (`all`), over the `dev` ones (whose misses
are written up for the graph's authors) and over the `heldout` ones (jinja2,
@tanstack/query-core: totals only, code nobody tuned the resolution on). Go (gin,
cobra), Rust (axum, ripgrep) and C (jq) have a dev set only, its gold written by hand
(hand_gold.py; their trees come from local git mirrors, corpus.py); so have C# (serilog),
PHP (guzzle), Kotlin (clikt), Swift (Alamofire), Scala (scopt), Lua (lazy.nvim) and Elixir
(plug) (hand_gold_more.py).

A site is (path, line). Per definition, precision = |answer ∩ gold| / |answer| and
recall = |answer ∩ gold| / |gold|; the tables are macro averages over definitions, by
language and category (distinctive / common). A definition without gold references is
not scored; an empty answer has no precision (counted as `empty`) and recall 0. An
error answer (JSON `error`: unknown symbol, ...) is an empty answer; a command that
prints no JSON at all (a crash) leaves its definition out of the tables, with a warning.
Definitions and overriding declarations (`kind` definition/override) are not usages.
Callers are scored on the definitions with at least one gold call site.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.graph_eval.corpus import fetch_all

HERE = Path(__file__).resolve().parent
GOLD_DIR = HERE / "gold"
DEFAULT_WORK = Path("/tmp/ctxd-graph-eval")
CTXD = [str(Path(sys.executable).with_name("ctxd"))]
NOT_USAGES = {"definition", "override"}
LANGUAGES = ("python", "typescript", "go", "rust", "c", "csharp", "php", "kotlin", "swift",
             "scala", "lua", "elixir")  # gold/<language>.jsonl (the last 7: hand_gold_more)

Site = tuple[str, int]


# -- metrics -----------------------------------------------------------------------------

@dataclass
class Score:
    precision: float | None  # None: an empty answer
    recall: float
    tp: int
    answered: int
    gold: int


def score(answer: set[Site], gold: set[Site]) -> Score:
    """Precision and recall of one answer; `gold` must not be empty."""
    tp = len(answer & gold)
    return Score(tp / len(answer) if answer else None, tp / len(gold), tp, len(answer),
                 len(gold))


@dataclass
class Macro:
    n: int = 0
    empty: int = 0
    precision: float | None = None
    recall: float | None = None


def macro(scores: Iterable[Score]) -> Macro:
    """Macro averages: precision over the non-empty answers, recall over all."""
    rows = list(scores)
    ps = [s.precision for s in rows if s.precision is not None]
    return Macro(
        n=len(rows), empty=len(rows) - len(ps),
        precision=sum(ps) / len(ps) if ps else None,
        recall=sum(s.recall for s in rows) / len(rows) if rows else None,
    )


# -- running the CLI ---------------------------------------------------------------------

@dataclass
class Cli:
    home: Path
    env: dict[str, str] = field(default_factory=dict)

    def run(self, *args: str) -> tuple[int, Any, str]:
        """(exit status, the JSON answer or None, the end of stderr). A command that printed
        no JSON (a crash: in a shared working tree, a file caught mid-edit) is tried
        again once, 10 s later."""
        for attempt in range(2):
            proc = subprocess.run([*CTXD, "--no-daemon", "--home", str(self.home), *args],
                                  capture_output=True, text=True, env=self.env, check=False)
            try:
                data = json.loads(proc.stdout) if proc.stdout.strip() else None
            except json.JSONDecodeError:
                data = None
            if data is not None or proc.returncode in (0, 1) or attempt:
                break
            time.sleep(10)
        return proc.returncode, data, proc.stderr.strip()[-300:]

    def help_of(self, command: str) -> str | None:
        proc = subprocess.run([*CTXD, command, "--help"], capture_output=True, text=True,
                              env=self.env, check=False)
        return proc.stdout if proc.returncode == 0 else None


def index_corpus(home: Path, roots: dict[str, Path]) -> dict[str, float]:
    """Index every root into `home` in this process, phase 1 only (no model)."""
    from ctxd.server.config import load_settings
    from ctxd.server.service import Service

    service = Service(load_settings({"home": str(home)}))
    seconds = {}
    try:
        for name, root in roots.items():
            started = time.perf_counter()
            service.index(root, embed=False)
            seconds[name] = round(time.perf_counter() - started, 1)
    finally:
        closer = getattr(service, "close", None)
        if callable(closer):
            closer()
    return seconds


def _sites(items: Iterable[dict[str, Any]], *, resolved_only: bool) -> set[Site]:
    out = set()
    for u in items:
        if u.get("kind") in NOT_USAGES:
            continue
        if resolved_only and u.get("resolved") is False:
            continue
        out.add((u["path"], int(u["line"])))
    return out


def _caller_sites(data: Any) -> set[Site]:
    out = set()
    for c in (data or {}).get("callers", []):
        site = c.get("site") or c.get("call") or {}
        if "path" in site and "line" in site:
            out.add((site["path"], int(site["line"])))
        elif "path" in c and "line" in c and "definition" in c:  # site flat, definition nested
            out.add((c["path"], int(c["line"])))
    return out


def _followed_by_paren(root: Path, path: str, line: int, column: int, name: str,
                       cache: dict[str, list[str]]) -> bool:
    if path not in cache:
        try:
            cache[path] = (root / path).read_text(encoding="utf-8",
                                                  errors="replace").splitlines()
        except OSError:
            cache[path] = []
    lines = cache[path]
    if not 0 < line <= len(lines):
        return False
    text = lines[line - 1]
    start = column - 1 if text[column - 1:column - 1 + len(name)] == name else text.find(name)
    while start >= 0:  # any occurrence of the name on the line that is called
        if text[start + len(name):].lstrip().startswith("("):
            return True
        start = text.find(name, start + 1)
    return False


# -- one definition ----------------------------------------------------------------------

@dataclass
class Sides:
    graph: bool  # `ctxd callers` exists
    by_name: bool  # `ctxd refs --by-name` exists
    refs_limit: bool  # `ctxd refs --limit`
    callers_limit: bool


def ask(cli: Cli, sides: Sides, want: set[str], d: dict[str, Any], root: Path
        ) -> dict[str, Any]:
    repo, name = d["repo"], d["name"]
    where = f"{d['definition']['path']}:{d['definition']['line']}"
    out: dict[str, Any] = {"errors": {}}
    if "baseline" in want:
        args = ["refs", name, "--repo", repo, "--limit", "2000", "--json"]
        _rc, data, err = cli.run(*(args + (["--by-name"] if sides.by_name else [])))
        usages = (data or {}).get("usages", [])
        if data is None or "error" in data:
            out["errors"]["baseline"] = (data or {}).get("message") or err
            out["crashed"] = out.get("crashed") or data is None
        out["baseline_refs"] = _sites(usages, resolved_only=False)
        cache: dict[str, list[str]] = {}
        out["baseline_callers"] = {
            (u["path"], int(u["line"])) for u in usages
            if _followed_by_paren(root, u["path"], int(u["line"]), int(u.get("column") or 1),
                                  name, cache)}
    if "graph" in want and sides.graph:
        args = ["refs", where, "--repo", repo, "--json"]
        _rc, data, err = cli.run(*(args + (["--limit", "2000"] if sides.refs_limit else [])))
        if data is None or "error" in data:
            out["errors"]["graph_refs"] = (data or {}).get("message") or err
            out["crashed"] = out.get("crashed") or data is None
        usages = (data or {}).get("usages", [])
        out["graph_refs"] = _sites(usages, resolved_only=True)
        out["graph_unresolved"] = sum(1 for u in usages if u.get("resolved") is False)
        args = ["callers", where, "--repo", repo, "--json"]
        _rc, data, err = cli.run(*(args + (["--limit", "2000"] if sides.callers_limit
                                          else [])))
        if data is None or "error" in data:
            out["errors"]["graph_callers"] = (data or {}).get("message") or err
            out["crashed"] = out.get("crashed") or data is None
        out["graph_callers"] = _caller_sites(data)
    return out


# -- the report --------------------------------------------------------------------------

def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def table(results: list[dict[str, Any]], metric: str, sides: list[str]) -> str:
    rows = ["| language | set | names | defs | " + " | ".join(
        f"{s} P | {s} R | {s} empty" for s in sides) + " |",
        "|---|---|---|---:|" + "---:|---:|---:|" * len(sides)]
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        if all(metric in r["scores"].get(s, {}) for s in sides):
            for subset in {"all", r.get("set", "dev")}:
                for cat in ("all", r["category"]):
                    groups[(r["language"], subset, cat)].append(r)
    for (lang, subset, cat), rs in sorted(groups.items()):
        cells = []
        for s in sides:
            m = macro(Score(**x["scores"][s][metric]) for x in rs if metric in x["scores"][s])
            cells.append(f"{_fmt(m.precision)} | {_fmt(m.recall)} | {m.empty}")
        rows.append(f"| {lang} | {subset} | {cat} | {len(rs)} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK)
    ap.add_argument("--home", type=Path, help="index here (kept); default: a temporary one")
    ap.add_argument("--reuse-home", action="store_true", help="do not index again")
    ap.add_argument("--lang", choices=list(LANGUAGES), action="append")
    ap.add_argument("--repo", action="append")
    ap.add_argument("--side", choices=["baseline", "graph"], action="append")
    ap.add_argument("--out", type=Path, help="per-definition results (JSON)")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()

    gold = [json.loads(line) for lang in args.lang or LANGUAGES
            for line in (GOLD_DIR / f"{lang}.jsonl").read_text().splitlines()]
    gold = [d for d in gold if d["references"] and (not args.repo or d["repo"] in args.repo)]
    roots = fetch_all(args.work, {d["repo"] for d in gold})
    with tempfile.TemporaryDirectory(prefix="ctxd-graph-eval-") as tmp:
        home = args.home or Path(tmp) / "home"
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("CTXD_") and k not in ("ZOEKT_URL",)}
        env |= {"CTXD_DAEMON_AUTOSTART": "false", "HF_HUB_OFFLINE": "1",
                "XDG_CONFIG_HOME": str(Path(tmp) / "xdg")}
        os.environ.update({"XDG_CONFIG_HOME": env["XDG_CONFIG_HOME"]})
        for k in [k for k in os.environ if k.startswith("CTXD_")]:
            del os.environ[k]
        index_s = {} if args.reuse_home else index_corpus(home, roots)
        cli = Cli(home, env)
        refs_help, callers_help = cli.help_of("refs") or "", cli.help_of("callers")
        sides = Sides(graph=callers_help is not None, by_name="--by-name" in refs_help,
                      refs_limit="--limit" in refs_help,
                      callers_limit="--limit" in (callers_help or ""))
        want = set(args.side or ["baseline", "graph"])
        started = time.perf_counter()
        with ThreadPoolExecutor(args.jobs) as pool:
            answers = list(pool.map(lambda d: ask(cli, sides, want, d, roots[d["repo"]]),
                                    gold))
        query_s = round(time.perf_counter() - started, 1)
    results = [evaluate(d, a) for d, a in zip(gold, answers, strict=True)]
    side_names = [s for s in ("baseline", "graph") if any(s in r["scores"] for r in results)]
    report = {"sides": side_names, "index_seconds": index_s, "query_seconds": query_s,
              "detected": sides.__dict__, "machine": f"{platform.machine()} "
              f"{os.cpu_count()} CPUs, {platform.python_version()}", "results": results}
    if args.out:
        args.out.write_text(json.dumps(report, indent=1, default=sorted) + "\n")
    print(f"commands found: {sides}; indexed in {index_s} s; queries {query_s} s")
    print("\nreferences (sites = path:line)\n" + table(results, "refs", side_names))
    print("\ncallers (call sites)\n" + table(results, "callers", side_names))
    errors = [(r["repo"], r["qualified_name"], r["errors"]) for r in results if r["errors"]]
    for e in errors[:20]:
        print("error:", *e)
    crashed = [r for r in results if r.get("crashed")]
    if crashed:
        print(f"WARNING: {len(crashed)} definitions left out of the tables: a command "
              "printed no JSON twice (see the errors above); the run is not comparable")


def evaluate(d: dict[str, Any], a: dict[str, Any]) -> dict[str, Any]:
    gold_refs = {(r["path"], r["line"]) for r in d["references"]}
    gold_calls = {(r["path"], r["line"]) for r in d["references"] if r["kind"] == "call"}
    out: dict[str, Any] = {
        "language": d["language"], "repo": d["repo"], "set": d.get("set", "dev"),
        "category": d["category"],
        "qualified_name": d["qualified_name"], "definition": d["definition"],
        "errors": a["errors"], "crashed": bool(a.get("crashed")), "scores": {},
        "misses": {},
    }
    if out["crashed"]:
        return out
    for side in ("baseline", "graph"):
        if f"{side}_refs" not in a:
            continue
        s: dict[str, Any] = {"refs": score(a[f"{side}_refs"], gold_refs).__dict__}
        if gold_calls:
            s["callers"] = score(a[f"{side}_callers"], gold_calls).__dict__
        out["scores"][side] = s
        out["misses"][side] = {
            "refs_missed": sorted(gold_refs - a[f"{side}_refs"]),
            "refs_extra": sorted(a[f"{side}_refs"] - gold_refs),
            "callers_missed": sorted(gold_calls - a[f"{side}_callers"]),
            "callers_extra": sorted(a[f"{side}_callers"] - gold_calls),
        }
    return out


if __name__ == "__main__":
    main()
