"""Experiments (none shipped): further retrieval levers, and how well the defaults travel.

    .venv/bin/python bench/eval_quality.py --home H --legs-cache L --no-latency   # once
    .venv/bin/python bench/exp_levers.py --home H --legs L robustness   # sweep, per repo, LORO
    .venv/bin/python bench/exp_levers.py --home H --legs L replay       # file BM25, size prior
    .venv/bin/python bench/exp_levers.py --home H --legs L vectors      # needs the model
    .venv/bin/python bench/exp_levers.py --home H --legs L text nl|camel DST

Every variant is scored over the same candidate lists as `bench/eval_quality.py`
(the legs cache) with the production fusion (`rank_hybrid`, default options); a
variant changes one thing:

- `robustness`: each default knob moved one step either way; each repository of
  eval-dev on its own; leave-one-repository-out tuning (a small grid is tuned on three
  repositories and scored on the fourth), the closest thing to the held-out set here.
- `replay`: whole-file BM25 added as file-level evidence; a prior on file size
  (log of its checkpoint count), either sign; other keyword column weights.
- `vectors`: a file-summary vector (path, module docstring, class names and docstrings,
  function names); 40-line windows as a second semantic view; a docstring vector per
  definition inside the semantic leg, or the best docstring / symbol-name vector per
  file as file-level evidence; pseudo-relevance feedback (Rocchio) on the
  query; the query's clauses, or the query without stop words, embedded beside it.
- `text`: the index at --home copied to DST and re-embedded with every checkpoint's
  text rewritten (`nl`: identifiers split into lowercase words, punctuation dropped;
  `camel`: camelCase split, the rest kept); then run `eval_quality.py --home DST`.

Results: docs/BENCHMARKS.md ("How well the defaults travel", "Further levers tried");
the replay and vectors tables there were measured with `--morning`.
"""

from __future__ import annotations

import argparse
import ast
import itertools
import json
import math
import os
import re
import shutil
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import ensure_corpus, eval_dir
from bench.eval_quality import hit_from_json, load_scorer, ranked_files
from ctxd.indexer.store.words import split_identifiers
from ctxd.search.hybrid import FusionOptions, _stem, rank_hybrid
from ctxd.search.keyword import STOPWORDS, keyword_terms
from ctxd.search.models import Hit, MatchSource

Legs = dict[str, list[Hit]]
Ranker = Callable[[int, dict[str, Any], Legs], list[Hit]]
REPOS = ("rich", "requests", "urllib3", "jinja2")
DEFAULT = FusionOptions()


class Bench:
    """The queries, their cached legs and the scorer."""

    def __init__(self, legs_file: Path) -> None:
        self.scorer = load_scorer()
        self.queries = self.scorer.load_queries(str(eval_dir() / "queries.jsonl"))
        raw = json.loads(legs_file.read_text(encoding="utf-8"))
        self.legs: list[Legs] = [
            {k: [hit_from_json(h) for h in v] for k, v in raw[q["id"]]["legs"].items()}
            for q in self.queries]
        self.corpus = ensure_corpus()
        self.paths = sorted({h.path for legs in self.legs for v in legs.values() for h in v})

    def files(self, rank: Ranker) -> dict[str, list[str]]:
        return {q["id"]: ranked_files(rank(i, q, self.legs[i]))
                for i, q in enumerate(self.queries)}

    def summary(self, results: dict[str, list[str]], subset: Iterable[dict[str, Any]] | None = None
                ) -> dict[str, Any]:
        qs = list(subset) if subset is not None else self.queries
        _rows, s = self.scorer.aggregate(qs, {q["id"]: results[q["id"]] for q in qs})
        return dict(s)

    def row(self, name: str, rank: Ranker) -> str:
        s = self.summary(self.files(rank))
        a = s["all"]
        return (f"| {name} | {a['R@1']:.3f} | {a['R@5']:.3f} | {a['MRR@10']:.3f} | "
                + " | ".join(f"{s[c]['MRR@10']:.3f}" for c in
                             ("conceptual", "lexical", "docs", "cross")) + " |")


HEAD = ("| variant | R@1 | R@5 | MRR@10 | conceptual MRR | lexical MRR | docs MRR | cross MRR |\n"
        "|---|---|---|---|---|---|---|---|")


def default_rank(_i: int, q: dict[str, Any], legs: Legs) -> list[Hit]:
    return rank_hybrid(q["query"], legs, DEFAULT)


def with_options(o: FusionOptions) -> Ranker:
    return lambda _i, q, legs: rank_hybrid(q["query"], legs, o)


def file_boost(scores: Callable[[int, dict[str, Any]], dict[str, float]], weight: float) -> Ranker:
    """The default ranking, each hit raised by `weight` x its file's score relative to the
    best file's; a file missing from the fused list enters at its boost."""
    def rank(i: int, q: dict[str, Any], legs: Legs) -> list[Hit]:
        fs = scores(i, q)
        best = max(fs.values(), default=0.0) or 1.0
        fused = rank_hybrid(q["query"], legs, DEFAULT)
        out = [replace(h, score=h.score + weight * fs.get(h.path, 0.0) / best) for h in fused]
        seen = {h.path for h in fused}
        out += [Hit(repository="corpus", path=p, language=None, start_line=1, end_line=1,
                    score=weight * s / best, sources=(), symbol=None, snippet="")
                for p, s in fs.items() if p not in seen and s > 0]
        return sorted(out, key=lambda h: -h.score)
    return rank


# -- robustness ----------------------------------------------------------------------------


def robustness(b: Bench) -> None:
    print("### Each default knob one step either way\n")
    print(HEAD)
    print(b.row("shipped default", default_rank))
    for knob, values in (("keyword_weight", (0.4, 0.8)), ("question_factor", (0.5, 0.9)),
                         ("file_evidence", (0.0, 0.2)), ("lexical_weight", (0.0, 0.3)),
                         ("demote_tests", (1.0, 0.3)),
                         ("promote_prose_for_how_to", (1.0, 2.0)),
                         ("summary_weight", (0.0, 0.05, 0.15, 0.2))):
        for v in values:
            b_row = b.row(f"{knob} {getattr(DEFAULT, knob)} -> {v}",
                          with_options(replace(DEFAULT, **{knob: v})))
            print(b_row)
    repo_of = {q["id"]: q["gold_files"][0].split("/")[0] for q in b.queries}
    named = {"semantic leg alone": replace(DEFAULT, method="rrf", keyword_weight=0.0,
                                           lexical_weight=0.0, file_evidence=0.0,
                                           demote_tests=1.0, demote_changelogs=1.0,
                                           demote_prose_for_where=1.0, query_aware=False,
                                           promote_prose_for_how_to=1.0, summary_weight=0.0),
             "shipped default": DEFAULT}
    print("\n### Per repository (MRR@10 / R@1)\n")
    print("| variant | " + " | ".join(REPOS) + " |\n|---|" + "---|" * len(REPOS))
    for name, o in named.items():
        res = b.files(with_options(o))
        cells = []
        for r in REPOS:
            a = b.summary(res, [q for q in b.queries if repo_of[q["id"]] == r])["all"]
            cells.append(f"{a['MRR@10']:.3f} / {a['R@1']:.3f}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    grid = list(itertools.product((0.4, 0.6, 0.8), (0.5, 0.7, 1.0), (0.0, 0.1, 0.2),
                                  (0.0, 0.1, 0.2), (1.0, 1.4)))
    runs = {g: b.files(with_options(replace(
        DEFAULT, keyword_weight=g[0], question_factor=g[1], file_evidence=g[2],
        summary_weight=g[3], promote_prose_for_how_to=g[4]))) for g in grid}
    print(f"\n### Leave one repository out ({len(grid)} settings of keyword weight, question "
          "factor, file evidence, summary weight, how-to prose factor)\n")
    print("| held out | chosen on the other three | its MRR@10 / R@1 | shipped default |\n"
          "|---|---|---|---|")
    total = np.zeros(4)
    for r in REPOS:
        train = [q for q in b.queries if repo_of[q["id"]] != r]
        test = [q for q in b.queries if repo_of[q["id"]] == r]
        best = max(grid, key=lambda g: b.summary(runs[g], train)["all"]["MRR@10"])
        got = b.summary(runs[best], test)["all"]
        ship = b.summary(b.files(default_rank), test)["all"]
        total += len(test) * np.array([got["MRR@10"], got["R@1"], ship["MRR@10"], ship["R@1"]])
        print(f"| {r} | {best} | {got['MRR@10']:.3f} / {got['R@1']:.3f} | "
              f"{ship['MRR@10']:.3f} / {ship['R@1']:.3f} |")
    t = total / len(b.queries)
    print(f"| all | | **{t[0]:.3f} / {t[1]:.3f}** | {t[2]:.3f} / {t[3]:.3f} |")


# -- replay: file BM25, size prior ------------------------------------------------------------

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _terms(text: str) -> list[str]:
    out: list[str] = []
    for w in _IDENT.findall(text):
        out.extend(_stem(p.lower()) for p in {w, *w.split("_"), *split_identifiers(w).split()}
                   if len(p) >= 2)
    return out


def replay(b: Bench, home: Path) -> None:
    docs = {p: Counter(_terms(p + " " + (b.corpus / p).read_text("utf-8", "replace")))
            for p in b.paths if (b.corpus / p).is_file()}
    n, lengths = len(docs), {p: sum(c.values()) for p, c in docs.items()}
    avg = sum(lengths.values()) / n
    df = Counter(t for c in docs.values() for t in c)

    def bm25(_i: int, q: dict[str, Any]) -> dict[str, float]:
        terms = {_stem(t) for t in keyword_terms(q["query"])}
        out = {}
        for p, c in docs.items():
            s = sum(math.log(1 + (n - df[t] + .5) / (df[t] + .5)) * c[t] * 2.2
                    / (c[t] + 1.2 * (.25 + .75 * lengths[p] / avg)) for t in terms if c[t])
            if s:
                out[p] = s
        return out

    print(HEAD)
    print(b.row("shipped default", default_rank))
    for w in (0.1, 0.2, 0.3):
        print(b.row(f"+ whole-file BM25 x {w}", file_boost(bm25, w)))
    from ctxd.indexer.store.sqlite.store import Store

    store = Store.open(home / "index.db")
    sizes = {str(p): int(c) for p, c in store.query(
        "SELECT path, count(*) FROM checkpoints GROUP BY path")}
    for beta in (0.02, 0.05, -0.01, -0.03):
        def prior(i: int, q: dict[str, Any], legs: Legs, beta: float = beta) -> list[Hit]:
            return sorted((replace(h, score=h.score - beta * math.log(sizes.get(h.path, 1)))
                           for h in default_rank(i, q, legs)), key=lambda h: -h.score)
        print(b.row(f"file score {-beta:+} x log(its checkpoints)", prior))
    import ctxd.search.keyword as keyword

    shipped = keyword.COLUMN_WEIGHTS
    for weights in ((1.0, 1.0, 1.0), (2.0, 2.0, 1.0), (5.0, 5.0, 1.0), (3.0, 8.0, 1.0),
                    (6.0, 4.0, 1.0), (0.5, 4.0, 1.0), (3.0, 1.0, 1.0)):
        keyword.COLUMN_WEIGHTS = weights
        legs = [keyword.keyword_search(store, q["query"], limit=100, with_matches=False)
                for q in b.queries]
        print(b.row(f"keyword columns (path, symbol, text) {weights}",
                    lambda i, q, old, legs=legs: rank_hybrid(
                        q["query"], {**old, "keyword": legs[i]}, DEFAULT)))
    keyword.COLUMN_WEIGHTS = shipped


# -- vectors: summaries, windows, docstrings, query variants -----------------------------------


def _first_para(doc: str | None, chars: int) -> str:
    return " ".join((doc or "").strip().split("\n\n")[0].split())[:chars]


def file_summary(path: str, text: str) -> str | None:
    """Path, module docstring, classes with their docstrings' first paragraph, and the
    names of functions and methods: the `ast` prototype of the shipped
    `ctxd.indexer.chunk.summary.file_summary` (which works from any language's symbols), kept
    as measured."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    parts = [f"file {path}", _first_para(ast.get_docstring(tree), 400)]
    names = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            parts.append(f"class {node.name}: {_first_para(ast.get_docstring(node), 150)}")
            names += [f"{node.name}.{s.name}" for s in node.body
                      if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
                      and not s.name.startswith("__")]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.append(f"def {node.name}")
    return "\n".join([*parts, "; ".join(names)])


def docstring_rows(path: str, text: str) -> list[tuple[str, int, int, str]]:
    """(path, first line, last line, text) per module, class and function docstring."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    rows = []
    if doc := ast.get_docstring(tree):
        rows.append((path, 1, 1, f"{path}\n{doc}"))
    def visit(node: ast.AST, prefix: str) -> None:
        for n in ast.iter_child_nodes(node):
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = prefix + n.name
                if doc := ast.get_docstring(n):
                    sig = (f"class {name}" if isinstance(n, ast.ClassDef)
                           else f"def {name}({ast.unparse(n.args)[:120]})")
                    rows.append((path, n.lineno, n.end_lineno or n.lineno,
                                 f"{path} {sig}\n{doc}"))
                if isinstance(n, ast.ClassDef):
                    visit(n, name + ".")
    visit(tree, "")
    return rows


def _definitions(text: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    return [n for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]


def vectors(b: Bench, home: Path) -> None:
    os.environ["CTXD_HOME"] = str(home)
    from ctxd.search.filters import SearchFilters
    from ctxd.search.semantic import _checkpoints_for
    from ctxd.server.config import load_settings
    from ctxd.server.service import Service

    svc = Service(load_settings(), long_lived=True)
    store, emb = svc.store(), svc.embedder
    svc.matrix.refresh(store)
    ids = svc.matrix._ids
    rows = svc.matrix._rows / np.linalg.norm(svc.matrix._rows, axis=1, keepdims=True)
    meta = _checkpoints_for(store, [int(i) for i in ids], SearchFilters())
    texts = {p: (b.corpus / p).read_text("utf-8", "replace") for p in b.paths
             if (b.corpus / p).is_file()}
    qv = emb.embed([q["query"] for q in b.queries])

    def leg(scores: np.ndarray) -> list[Hit]:
        out = []
        for j in np.argsort(-scores)[:100]:
            for repo, path, lang, s, e, sym, _t in meta.get(int(ids[j]), []):
                out.append(Hit(repository=str(repo), path=str(path), language=str(lang),
                               start_line=int(s), end_line=int(e), score=float(scores[j]),
                               sources=(MatchSource.SEMANTIC,), symbol=sym, snippet=""))
        return out[:100]

    print(HEAD)
    print(b.row("shipped default", default_rank))
    file_views(b, emb, texts, qv)
    definition_vectors(b, emb, texts, qv)
    query_variants(b, emb, qv, rows, leg)


def with_semantic(legs_of: Callable[[int], list[Hit]]) -> Ranker:
    """The default ranking with another semantic leg."""
    return lambda i, q, legs: rank_hybrid(q["query"], {**legs, "semantic": legs_of(i)}, DEFAULT)


def file_views(b: Bench, emb: Any, texts: dict[str, str], qv: np.ndarray) -> None:
    """File summaries, 40-line windows and docstrings as extra vectors."""
    summaries = {p: s for p, t in texts.items() if p.endswith(".py")
                 if (s := file_summary(p, t))}
    names = list(summaries)
    ssims = qv @ emb.embed([summaries[p] for p in names]).T
    for w in (0.1, 0.2):
        print(b.row(f"+ file-summary vector x {w}", file_boost(
            lambda i, _q: dict(zip(names, np.maximum(ssims[i], 0).tolist(), strict=True)), w)))
    windows = []
    for p, t in texts.items():
        lines = t.splitlines()
        for s in range(0, max(1, len(lines)), 30):
            windows.append((p, p + "\n" + "\n".join(lines[s:s + 40])))
            if s + 40 >= len(lines):
                break
    wsims = qv @ emb.embed([w for _p, w in windows]).T

    def window_files(i: int, _q: dict[str, Any]) -> dict[str, float]:
        out: dict[str, float] = {}
        for j in np.argsort(-wsims[i])[:100]:
            out.setdefault(windows[j][0], max(0.0, float(wsims[i][j])))
        return out
    for w in (0.1, 0.3):
        print(b.row(f"+ 40-line windows as a second view x {w}", file_boost(window_files, w)))


def definition_vectors(b: Bench, emb: Any, texts: dict[str, str], qv: np.ndarray) -> None:
    """Docstrings inside the semantic leg; docstring or symbol-name vectors per file."""
    drows = [r for p, t in texts.items() if p.endswith(".py") for r in docstring_rows(p, t)]
    dsims = qv @ emb.embed([r[3] for r in drows]).T

    def with_docstrings(i: int) -> list[Hit]:
        extra = [Hit(repository="corpus", path=drows[j][0], language="python",
                     start_line=drows[j][1], end_line=drows[j][2], score=float(dsims[i][j]),
                     sources=(MatchSource.SEMANTIC,), symbol=None, snippet="")
                 for j in np.argsort(-dsims[i])[:50]]
        return sorted(b.legs[i]["semantic"] + extra, key=lambda h: -h.score)[:100]
    print(b.row(f"+ {len(drows)} docstring vectors in the semantic leg",
                with_semantic(with_docstrings)))
    names_of = [(p, as_words(s.name)) for p, t in texts.items() if p.endswith(".py")
                for s in _definitions(t)]
    nsims = qv @ emb.embed([n for _p, n in names_of]).T
    for label, rows_, sims in (("docstring", drows, dsims), ("symbol-name", names_of, nsims)):
        def best_per_file(i: int, _q: dict[str, Any], rows_: Any = rows_, sims: Any = sims
                          ) -> dict[str, float]:
            out: dict[str, float] = {}
            for j in np.argsort(-sims[i])[:200]:
                out.setdefault(rows_[j][0], max(0.0, float(sims[i][j])))
            return out
        for w in (0.05, 0.1):
            print(b.row(f"+ best {label} vector per file x {w}", file_boost(best_per_file, w)))


def query_variants(b: Bench, emb: Any, qv: np.ndarray, rows: np.ndarray,
                   leg: Callable[[np.ndarray], list[Hit]]) -> None:
    """Pseudo-relevance feedback, stop words dropped, the query's clauses."""
    for k, alpha in ((3, 0.3), (10, 0.3)):
        def prf(i: int, k: int = k, alpha: float = alpha) -> list[Hit]:
            top = np.argsort(-(rows @ qv[i]))[:k]
            v = qv[i] + alpha * rows[top].mean(0)
            return leg(rows @ (v / np.linalg.norm(v)))
        print(b.row(f"pseudo-relevance feedback, top {k}, alpha {alpha}", with_semantic(prf)))
    stripped = emb.embed([" ".join(w for w in re.findall(r"[\w'.-]+", q["query"])
                                   if w.lower() not in STOPWORDS) for q in b.queries])
    print(b.row("query + query without stop words (0.3)",
                with_semantic(lambda i: leg(rows @ qv[i] + 0.3 * (rows @ stripped[i])))))
    clause_vecs = []
    for q in b.queries:
        parts = [p for p in re.split(r"[,;:?]|\band\b|\bor\b|\bwhere\b|\bwhen\b", q["query"])
                 if len(p.split()) >= 3]
        clause_vecs.append(emb.embed(parts) if len(parts) > 1 else None)

    def clauses(i: int) -> list[Hit]:
        c = clause_vecs[i]
        base = rows @ qv[i]
        return leg(base * 1.35 if c is None else base + 0.35 * (rows @ c.T).mean(1))
    print(b.row("query + mean of its clauses (0.35)", with_semantic(clauses)))


# -- text: re-embed with rewritten checkpoint text ---------------------------------------------

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def as_words(text: str) -> str:
    """Identifiers split into lowercase words (snake_case and camelCase), numbers kept,
    punctuation dropped."""
    out: list[str] = []
    for tok in re.findall(r"[A-Za-z_][A-Za-z0-9_]*|\d+", text):
        for part in tok.split("_"):
            out += [w.lower() for w in _CAMEL.split(part) if w]
    return " ".join(out)


def camel_split(text: str) -> str:
    return re.sub(r"[A-Za-z][A-Za-z0-9]*", lambda m: " ".join(_CAMEL.split(m.group(0))), text)


def text(home: Path, mode: str, dst: Path) -> None:
    from ctxd.indexer.embedder import SentenceTransformerEmbedder
    from ctxd.indexer.store.sqlite.store import Store, serialize_vector
    from ctxd.server.config import load_settings

    rewrite = {"nl": as_words, "camel": camel_split}[mode]
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy(home / "index.db", dst / "index.db")
    store = Store.open(dst / "index.db")
    inputs: dict[str, str] = {}
    for path, symbol, body, digest in store.query(
            "SELECT path, symbol, text, hash FROM checkpoints"):
        head = f"{path} {symbol}" if symbol else str(path)
        inputs.setdefault(str(digest), rewrite(head) + "\n" + rewrite(str(body)))
    embedder = SentenceTransformerEmbedder(load_settings().embedding)
    ids = dict(store.query("SELECT hash, id FROM embeddings"))
    order = sorted(inputs, key=lambda h: len(inputs[h]), reverse=True)
    vecs = embedder.embed([inputs[h] for h in order])
    with store.transaction():
        for digest, vec in zip(order, vecs, strict=True):
            store.db.execute("DELETE FROM vec_embeddings WHERE rowid = ?", (ids[digest],))
            store.db.execute("INSERT INTO vec_embeddings(rowid, embedding) VALUES (?, ?)",
                             (ids[digest], serialize_vector(vec.tolist())))
    print(f"re-embedded {len(order)} checkpoints into {dst}; now run "
          f"bench/eval_quality.py --home {dst}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", type=Path, required=True, help="an eval_quality.py index home")
    ap.add_argument("--legs", type=Path, required=True, help="an eval_quality.py legs cache")
    ap.add_argument("--morning", action="store_true",
                    help="compare against the default before how-to questions and file "
                         "summaries (how the replay and vectors tables were measured)")
    ap.add_argument("what", choices=("robustness", "replay", "vectors", "text"))
    ap.add_argument("rest", nargs="*", help="for text: MODE (nl|camel) and DST")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.morning:
        global DEFAULT
        DEFAULT = replace(DEFAULT, promote_prose_for_how_to=1.0, summary_weight=0.0)
    if args.what == "text":
        mode, dst = args.rest
        text(args.home, mode, Path(dst))
        return
    b = Bench(args.legs)
    {"robustness": lambda: robustness(b), "replay": lambda: replay(b, args.home),
     "vectors": lambda: vectors(b, args.home)}[args.what]()


if __name__ == "__main__":
    main()
