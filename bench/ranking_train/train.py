"""Fit the ranking model (issue 42, item 2) on every dev set's candidate pools, report
leave-one-repository-out cross-validation against the hand ranking, and write the weights
(`search/rank_model.json`).

    .venv/bin/python bench/ranking_train/dump_pools.py --homes /work/coord/ranking-homes
    .venv/bin/python bench/ranking_train/train.py [--write] [--table] [--c 1.0]

Each question's pool (`dump_pools.py`) becomes one candidate per checkpoint with its
feature record (`search.rank_features`), labelled 1 when its file is a gold file. A
logistic regression (scikit-learn, the `dev` extra; fixed solver, no randomness) learns
the weights; every question weighs the same (each candidate's sample weight is
1 / its question's candidates of that label). Both rankings are scored the way production
ranks: the fitted one through `search.rank_model.finish` (copies, merges, translated pages,
spreading), the hand one through `search.hybrid.rank_hybrid` with the default options;
then, for both, the hard rules (`search.definitions.definitions_first`,
`search.exact_phrase.exact_first`), the first ten distinct files, and eval-dev's
`run_eval.py` scorer (MRR@10 per question).

Leave-one-repository-out: for each repository, train on the questions of every other
repository (in every set: eval-dev's and the messy copy's questions of one repository
leave together) and rank that repository's questions. `--write` fits on everything and
writes the model with the cross-validation numbers in its `meta`.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import importlib.util
import json
import math
import pickle
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.corpus import eval_dir
from bench.ranking_train.dump_pools import CACHE
from bench.ranking_train.sets import dev_sets
from ctxd.search.definitions import definitions_first, shaped_definitions
from ctxd.search.exact_phrase import exact_first
from ctxd.search.hybrid import FusionOptions, rank_hybrid
from ctxd.search.models import Hit
from ctxd.search.path_kinds import is_example, is_prose
from ctxd.search.prose import MAX_PROSE_TOP, PROSE_FACTOR
from ctxd.search.questions import asks_for_examples, asks_for_history, wants_prose
from ctxd.search.rank_features import FEATURES, candidates
from ctxd.search.rank_model import MODEL_PATH, Node, RankModel, finish, score_candidates

Record = dict[str, Any]


def norm_path(p: str) -> str:
    """A gold path as eval-dev's scorer compares it (`run_eval.norm_path`)."""
    p = p.replace("\\", "/")
    while p.startswith("./"):
        p = p[2:]
    return p.lstrip("/")


@functools.cache
def scorer() -> Any:
    """eval-dev's `run_eval.py` (its `norm_path` and `score_query`)."""
    spec = importlib.util.spec_from_file_location("run_eval", eval_dir() / "run_eval.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load(cache: Path, names: Sequence[str]) -> list[Record]:
    out: list[Record] = []
    for name in names:
        path = cache / f"{name}.pickle.gz"
        if not path.is_file():
            print(f"{name}: no pool at {path} (run dump_pools.py); skipped", file=sys.stderr)
            continue
        with gzip.open(path, "rb") as f:
            for r in pickle.load(f):
                r["set"] = name
                out.append(r)
    return out


def prepare(records: list[Record]) -> None:
    """Each record's candidates and their labels (gold file or not)."""
    for r in records:
        gold = {norm_path(g) for g in r["gold"]}
        cands = candidates(r["query"], r["legs"], unembedded=r["unembedded"],
                           generated=r["generated"])
        r["cands"] = cands
        r["labels"] = [int(norm_path(c.hit.path) in gold) for c in cands]


def top_files(r: Record, ranked: Sequence[Hit]) -> list[str]:
    defs = r["definitions"] or shaped_definitions(r["query"], r["legs"].get("lexical", []))
    ranked = definitions_first(ranked, defs)
    ranked = exact_first(ranked, r["phrase"])
    files: list[str] = []
    for h in ranked:
        if h.path not in files:
            files.append(h.path)
            if len(files) == 10:
                break
    return files


def mrr(r: Record, files: list[str]) -> float:
    return float(scorer().score_query(r["gold"], files)["MRR@10"])


def hand_files(r: Record) -> list[str]:
    ranked = rank_hybrid(r["query"], r["legs"], FusionOptions(), unembedded=r["unembedded"],
                         generated=r["generated"])
    return top_files(r, ranked)


def fitted_files(r: Record, model: RankModel) -> list[str]:
    scored = score_candidates(model, r["cands"])
    return top_files(r, finish(r["query"], scored, r["legs"], model,
                               generated=r["generated"]))


LOG_HAND = FEATURES.index("log_hand")
def fit(records: Sequence[Record], c: float, code_first: bool, pos_weight: float = 1.0,
        *, offset: bool = True) -> RankModel:
    """Logistic regression over the candidates, every question weighing the same (its gold
    candidates together weigh `pos_weight`, its others 1).

    `offset` (the default): `log_hand`'s weight is held at 1 and the other weights are
    corrections to the hand ranking, pulled towards 0 by the L2 penalty `1 / c` (with a
    strong penalty the model is the hand ranking); solved with scipy's L-BFGS, since
    scikit-learn's `LogisticRegression` takes no offset. Without it: scikit-learn's
    `LogisticRegression(C=c)` over every feature."""
    import numpy as np

    xs: list[Sequence[float]] = []
    ys: list[float] = []
    ws: list[float] = []
    for r in records:
        labels = r["labels"]
        n_pos = sum(labels)
        if n_pos == 0 or n_pos == len(labels):
            continue  # nothing to tell apart in this question
        for cd, y in zip(r["cands"], labels, strict=True):
            xs.append(cd.vector)
            ys.append(float(y))
            ws.append(pos_weight / n_pos if y else 1.0 / (len(labels) - n_pos))
    x, y, sw = np.array(xs), np.array(ys), np.array(ws)
    if not offset:
        from sklearn.linear_model import LogisticRegression

        lr = LogisticRegression(C=c, solver="lbfgs", max_iter=2000, tol=1e-6)
        lr.fit(x, y, sample_weight=sw)
        return RankModel(weights=tuple(float(w) for w in lr.coef_[0]),
                         bias=float(lr.intercept_[0]), code_first=code_first)
    from scipy.optimize import minimize

    base = x[:, LOG_HAND].copy()
    x[:, LOG_HAND] = 0.0
    sign = 2 * y - 1

    def loss(theta: Any) -> tuple[float, Any]:
        b, w = theta[0], theta[1:]
        z = sign * (b + base + x @ w)
        p = np.exp(-np.logaddexp(0, z))  # sigmoid(-z)
        value = float(np.sum(sw * np.logaddexp(0, -z)) + 0.5 / c * w @ w)
        g = -sw * sign * p
        return value, np.concatenate(([g.sum()], x.T @ g + w / c))

    theta = minimize(loss, np.zeros(x.shape[1] + 1), jac=True, method="L-BFGS-B",
                     options={"maxiter": 2000, "gtol": 1e-7}).x
    weights = [float(v) for v in theta[1:]]
    weights[LOG_HAND] = 1.0
    return RankModel(weights=tuple(weights), bias=float(theta[0]), code_first=code_first)


STEPS = (1.0, 0.3, 0.1)
"""Coordinate ascent's steps for one weight, largest first."""
L1 = 0.0005
"""Coordinate ascent's cost per unit of weight (a correction must earn its size)."""


def fast_pools(records: Sequence[Record]) -> list[tuple[Any, ...]]:
    """Per question: its vectors, each candidate's file number, which files are gold,
    which files the hard rules put first (definitions the query names, files holding its
    exact phrase: they take the first places whatever the weights), and, for a behaviour
    question (`search.prose.code_first` applies), which files are prose (x`PROSE_FACTOR`)
    and which count towards its bound of `MAX_PROSE_TOP` in the first ten."""
    import numpy as np

    out: list[tuple[Any, ...]] = []
    for r in records:
        files: dict[str, int] = {}
        ids = [files.setdefault(c.hit.path, len(files)) for c in r["cands"]]
        gold_paths = {norm_path(g) for g in r["gold"]}
        front = {d.path for d in r["definitions"]} | {f.path for f in r["phrase"]}
        gold = np.zeros(len(files), dtype=bool)
        pinned = np.zeros(len(files), dtype=bool)
        prose = np.zeros(len(files))
        bounded = np.zeros(len(files), dtype=bool)
        query = r["query"]
        behaviour = not wants_prose(query) and not asks_for_history(query)
        examples = asks_for_examples(query)
        for path, i in files.items():
            gold[i] = norm_path(path) in gold_paths
            pinned[i] = path in front
            if behaviour:
                prose[i] = math.log(PROSE_FACTOR) if is_prose(path) else 0.0
                bounded[i] = is_prose(path) or (not examples and is_example(path))
        gold_front = any(norm_path(p) in gold_paths for p in front)
        out.append((np.array([c.vector for c in r["cands"]]), np.array(ids), gold, pinned,
                    len(front), gold_front, prose, bounded if behaviour else None))
    return out


def fast_mrr(pools: Sequence[tuple[Any, ...]], w: Any) -> float:
    """Mean MRR@10 at the file level: a file ranks by its best candidate's sum, after
    the files the rules put first, with `code_first`'s prose factor and bound (not its
    anchoring of a page below the code it names, nor merging, copies or spreading)."""
    import numpy as np

    total = 0.0
    for x, ids, gold, pinned, n_front, gold_front, prose, bounded in pools:
        if gold_front:
            total += 1.0  # a rule puts a gold file first (approximately: its first place)
            continue
        if not gold.any():
            continue
        z = np.full(len(gold), -np.inf)
        np.maximum.at(z, ids, x @ w)
        z = z + prose
        z[pinned] = -np.inf
        if bounded is None:
            rank = n_front + 1 + int(np.sum(z > z[gold].max()))
        else:
            rank, held, place = 0, 0, n_front
            for i in np.argsort(-z, kind="stable"):
                if place >= 10 or z[i] == -np.inf:
                    break
                if bounded[i]:
                    held += 1
                    if held > MAX_PROSE_TOP:
                        continue
                place += 1
                if gold[i]:
                    rank = place
                    break
        total += 1.0 / rank if 0 < rank <= 10 else 0.0
    return total / max(1, len(pools))


def fit_ascent(records: Sequence[Record], code_first: bool = True, l1: float = L1,
               free: Sequence[str] = ()) -> RankModel:
    """The weights that maximise the questions' file-level MRR@10 (`fast_mrr`) less
    `L1` per unit of weight, by coordinate ascent from the hand ranking (`log_hand` 1,
    every other weight 0; `log_hand` stays 1): each weight in turn tries each of `STEPS`
    up and down and keeps a change that gains; three passes. Deterministic. `free`: the
    only features whose weights may move (default: all)."""
    import numpy as np

    pools = fast_pools(records)
    w = np.zeros(len(FEATURES))
    w[LOG_HAND] = 1.0

    def objective(v: Any) -> float:
        return fast_mrr(pools, v) - l1 * float(np.abs(np.delete(v, LOG_HAND)).sum())

    best = objective(w)
    for _pass in range(3):
        changed = False
        for j in range(len(FEATURES)):
            if j == LOG_HAND or (free and FEATURES[j] not in free):
                continue
            for step in STEPS:
                for sign in (1.0, -1.0):
                    trial = w.copy()
                    trial[j] += sign * step
                    value = objective(trial)
                    if value > best + 1e-9:
                        w, best, changed = trial, value, True
        if not changed:
            break
    return RankModel(weights=tuple(float(v) for v in w), code_first=code_first)


TREES = 40
"""The most trees the tree learner may keep (inner cross-validation picks how many)."""
TREE_CHOICES = (0, 5, 10, 20, 40)
"""The numbers of trees inner cross-validation compares (0: the hand ranking)."""


def tree_groups(records: Sequence[Record]) -> tuple[Any, Any, Any, list[int], list[str]]:
    """LambdaMART's training data: per question, each file's best candidate by the hand
    ranking (the metric ranks files), without the files a hard rule puts first (and
    without the questions whose gold file a rule puts first: the ranking cannot change
    them), labelled 1 for a gold file. The initial score is `log_hand` plus, for a
    behaviour question, `code_first`'s prose factor, so the trees learn corrections to
    what the hand ranking and its rules would rank. Returns features, labels, initial
    scores, group sizes and each group's repository."""
    import numpy as np

    xs: list[Sequence[float]] = []
    ys: list[int] = []
    init: list[float] = []
    groups: list[int] = []
    repos: list[str] = []
    for r in records:
        front = {d.path for d in r["definitions"]} | {f.path for f in r["phrase"]}
        gold = {norm_path(g) for g in r["gold"]}
        if any(norm_path(p) in gold for p in front):
            continue
        best: dict[str, tuple[Any, int]] = {}
        for cd, label in zip(r["cands"], r["labels"], strict=True):
            if cd.hit.path in front:
                continue
            seen = best.get(cd.hit.path)
            if seen is None or cd.vector[LOG_HAND] > seen[0].vector[LOG_HAND]:
                best[cd.hit.path] = (cd, label)
        labels = [label for _cd, label in best.values()]
        if not any(labels) or all(labels):
            continue
        query = r["query"]
        behaviour = not wants_prose(query) and not asks_for_history(query)
        for cd, label in best.values():
            prose = math.log(PROSE_FACTOR) if behaviour and is_prose(cd.hit.path) else 0.0
            xs.append(cd.vector)
            ys.append(label)
            init.append(cd.vector[LOG_HAND] + prose)
        groups.append(len(best))
        repos.append(r["repository"])
    return np.array(xs), np.array(ys), np.array(init), groups, repos


def group_mrr(scores: Any, labels: Any, groups: Sequence[int]) -> list[float]:
    """Each group's reciprocal rank of its best gold row in the first ten (0 below)."""
    import numpy as np

    out: list[float] = []
    start = 0
    for size in groups:
        s, y = scores[start:start + size], labels[start:start + size]
        start += size
        rank = 1 + int(np.sum(s > s[y == 1].max()))
        out.append(1.0 / rank if rank <= 10 else 0.0)
    return out


def lambdamart(x: Any, y: Any, init: Any, groups: Sequence[int], trees: int, leaves: int,
               rate: float, min_leaf: int) -> Any:
    """LightGBM's LambdaMART from the initial scores `init` (deterministic, one
    thread)."""
    import lightgbm

    params = {"objective": "lambdarank", "num_leaves": leaves, "learning_rate": rate,
              "min_data_in_leaf": min_leaf, "lambda_l2": 10.0, "max_bin": 63,
              "lambdarank_truncation_level": 10, "deterministic": True, "num_threads": 1,
              "seed": 1, "verbose": -1, "feature_pre_filter": False}
    data = lightgbm.Dataset(x, y, group=list(groups), init_score=init)
    return lightgbm.train(params, data, num_boost_round=trees)


def booster_trees(booster: Any, count: int) -> tuple[Node, ...]:
    """The first `count` trees of a LightGBM booster as `search.rank_model` nodes."""

    def node(n: dict[str, Any]) -> Node:
        if "leaf_value" in n:
            return float(n["leaf_value"])
        if n.get("decision_type", "<=") != "<=":
            raise ValueError(f"unsupported split {n.get('decision_type')!r}")
        return (int(n["split_feature"]), float(n["threshold"]), node(n["left_child"]),
                node(n["right_child"]), float(n["internal_value"]))

    info = booster.dump_model(num_iteration=count)["tree_info"]
    return tuple(node(t["tree_structure"]) for t in info[:count])


def fit_trees(records: Sequence[Record], *, trees: int = TREES, leaves: int = 2,
              rate: float = 0.2, min_leaf: int = 200, folds: int = 3,
              margin: float = 0.002) -> RankModel:
    """LambdaMART corrections to the hand ranking (`log_hand` weighs 1; the trees add
    to the logit). How many trees (`TREE_CHOICES` up to `trees`, 0 = none) is chosen by
    cross-validation over the training repositories only (`folds` groups of them, in
    turn held out; the held-out questions' file-level MRR@10, `group_mrr`); more trees
    must gain `margin` over fewer. Stumps (`leaves` 2) make each tree one feature's
    step."""
    import numpy as np

    x, y, init, groups, repos = tree_groups(records)
    names = sorted(set(repos))
    fold_of = {name: i % folds for i, name in enumerate(names)}
    choices = [k for k in TREE_CHOICES if k <= trees]
    gains = dict.fromkeys(choices, 0.0)
    starts = np.cumsum([0, *groups])
    for fold in range(folds):
        held = [fold_of[name] == fold for name in repos]
        rows_of = [np.arange(starts[g], starts[g + 1]) for g in range(len(groups))]
        train_rows = np.concatenate([rows_of[g] for g, h in enumerate(held) if not h])
        test_rows = np.concatenate([rows_of[g] for g, h in enumerate(held) if h])
        booster = lambdamart(x[train_rows], y[train_rows], init[train_rows],
                             [groups[g] for g, h in enumerate(held) if not h], max(choices),
                             leaves, rate, min_leaf)
        test_groups = [groups[g] for g, h in enumerate(held) if h]
        for k in choices:
            extra = booster.predict(x[test_rows], raw_score=True, num_iteration=k) if k \
                else 0.0
            gains[k] += sum(group_mrr(init[test_rows] + extra, y[test_rows], test_groups))
    chosen = 0
    for k in choices:
        if gains[k] > gains[chosen] + margin * len(groups):
            chosen = k
    weights = [0.0] * len(FEATURES)
    weights[LOG_HAND] = 1.0
    kept: tuple[Node, ...] = ()
    if chosen:
        booster = lambdamart(x, y, init, groups, chosen, leaves, rate, min_leaf)
        kept = booster_trees(booster, chosen)
    return RankModel(weights=tuple(weights), code_first=True, trees=kept,
                     meta={"inner_cv": {str(k): round(v / len(groups), 4)
                                        for k, v in gains.items()}, "trees": chosen})


def per_set(records: Sequence[Record], scores: dict[str, float]) -> dict[str, float]:
    sets: dict[str, list[float]] = {}
    for r in records:
        sets.setdefault(r["set"], []).append(scores[r["set"] + "/" + r["id"]])
    out = {k: statistics.fmean(v) for k, v in sets.items()}
    out["all"] = statistics.fmean(scores.values())
    return out


def loro(records: Sequence[Record], train: Callable[[Sequence[Record]], RankModel]
         ) -> dict[str, float]:
    """Each question's MRR@10 ranked by a model trained without its repository."""
    out: dict[str, float] = {}
    for repo in sorted({r["repository"] for r in records}):
        model = train([r for r in records if r["repository"] != repo])
        if model.meta:
            print(f"  without {repo}: {dict(model.meta)}", file=sys.stderr)
        for r in records:
            if r["repository"] == repo:
                out[r["set"] + "/" + r["id"]] = mrr(r, fitted_files(r, model))
    return out


GRID = (-0.3, -0.2, -0.1, -0.05, 0.0, 0.05, 0.1, 0.2, 0.3)
"""The grid learner's values for each free feature's weight."""


def grid_learner(free: Sequence[str], cost: float, start: RankModel | None = None
                 ) -> Callable[[Sequence[Record]], RankModel]:
    """Every combination of `GRID` values for the `free` features' weights on top of the
    hand ranking (`log_hand` 1; `start`: on top of that model's weights, those of the
    `free` features replaced), each scored exactly (production's ranking steps, the
    rules, `run_eval`'s MRR@10: `fitted_files`), the best mean over the training
    questions less `cost` per unit of weight kept (ties: the smaller weights). Each
    question's score per combination is computed once and shared by every fold."""
    import itertools

    if not free:
        raise ValueError("the grid learner needs --free (a few features)")
    combos = list(itertools.product(GRID, repeat=len(free)))
    memo: dict[tuple[str, tuple[float, ...]], float] = {}

    def model(values: tuple[float, ...]) -> RankModel:
        weights = [0.0] * len(FEATURES)
        weights[LOG_HAND] = 1.0
        if start is not None:
            weights = list(start.weights)
        for name, v in zip(free, values, strict=True):
            weights[FEATURES.index(name)] = v
        return RankModel(weights=tuple(weights), code_first=True)

    def score(r: Record, values: tuple[float, ...]) -> float:
        key = (r["set"] + "/" + r["id"], values)
        if key not in memo:
            memo[key] = mrr(r, fitted_files(r, model(values)))
        return memo[key]

    def train(records: Sequence[Record]) -> RankModel:
        def objective(values: tuple[float, ...]) -> tuple[float, float]:
            size = sum(abs(v) for v in values)
            return (statistics.fmean(score(r, values) for r in records) - cost * size,
                    -size)

        return model(max(combos, key=objective))

    return train


LEARNERS = ("ascent", "offset", "logistic", "trees", "grid")


def learner(name: str, c: float, free: Sequence[str] = (), start: RankModel | None = None
            ) -> Callable[[Sequence[Record]], RankModel]:
    """`ascent`: `fit_ascent` (over the `free` features only, when named); `offset`:
    logistic regression correcting the hand ranking (`fit`); `logistic`: scikit-learn's
    over every feature; `trees`: `fit_trees`; `grid`: `grid_learner` over `free` (on top
    of `start`'s other weights, when given)."""
    if name == "ascent":
        return lambda rs: fit_ascent(rs, l1=c, free=free)
    if name == "trees":
        return lambda rs: fit_trees(rs, margin=c)
    if name == "grid":
        return grid_learner(free, c, start)
    return lambda rs: fit(rs, c, True, offset=name == "offset")


def rounded(row: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 4) for k, v in row.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", type=Path, default=CACHE)
    ap.add_argument("--learner", choices=LEARNERS, default="ascent")
    ap.add_argument("--c", type=float, default=L1,
                    help="ascent: the cost per unit of weight; logistic learners: the "
                         "inverse L2 penalty; trees: the MRR@10 more trees must gain in "
                         "inner cross-validation")
    ap.add_argument("--free", default="",
                    help="ascent: comma-separated features whose weights may move (default: "
                         "all)")
    ap.add_argument("--from-shipped", action="store_true",
                    help="grid: keep the shipped model's other weights (only the --free "
                         "features' weights move)")
    ap.add_argument("--write", action="store_true", help=f"write {MODEL_PATH}")
    ap.add_argument("--out", type=Path, help="the per-set table as JSON")
    args = ap.parse_args()
    names = [s.name for s in dev_sets()]
    records = load(args.cache, names)
    prepare(records)
    print(f"{len(records)} questions, {len({r['repository'] for r in records})} repositories,"
          f" {sum(len(r['cands']) for r in records)} candidates, {len(FEATURES)} features")
    hand = per_set(records, {r["set"] + "/" + r["id"]: mrr(r, hand_files(r))
                             for r in records})
    free = [f for f in args.free.split(",") if f]
    unknown = [f for f in free if f not in FEATURES]
    if unknown:
        ap.error(f"--free names {', '.join(unknown)}, which are not features "
                 f"(search.rank_features.FEATURES)")
    start = None
    if args.from_shipped:
        start = RankModel.from_json(json.loads(MODEL_PATH.read_text(encoding="utf-8")))
    train = learner(args.learner, args.c, free, start)
    model = train(records)
    in_sample = per_set(records, {r["set"] + "/" + r["id"]: mrr(r, fitted_files(r, model))
                                  for r in records})
    cv = per_set(records, loro(records, train))
    table = {"hand": rounded(hand), "in_sample": rounded(in_sample), "loro": rounded(cv)}
    print(f"{'set':8} {'n':>4} {'hand':>6} {'in-sample':>9} {'LORO':>6}")
    for s in [*names, "all"]:
        if s in hand:
            n = sum(1 for r in records if s in ("all", r["set"]))
            print(f"{s:8} {n:>4} {hand[s]:6.3f} {in_sample[s]:9.3f} {cv[s]:6.3f}")
    if args.out:
        args.out.write_text(json.dumps(table, indent=1), encoding="utf-8")
    if args.write:
        command = (f"bench/ranking_train/train.py --learner {args.learner} --c {args.c:g}"
                   + (f" --free {','.join(free)}" if free else "")
                   + (" --from-shipped" if args.from_shipped else "") + " --write")
        meta = {"trained_by": command,
                "sets": {s: sum(1 for r in records if r["set"] == s) for s in names},
                "repositories": sorted({r["repository"] for r in records}),
                "mrr10": table}
        if start is not None:  # the weights it kept, and how they were chosen
            meta["started_from"] = start.meta.get("trained_by", "")
            if "started_from" in start.meta:
                meta["started_from"] += " <- " + str(start.meta["started_from"])
        model = RankModel(weights=model.weights, bias=model.bias, code_first=model.code_first,
                          meta={**model.meta, **meta}, trees=model.trees)
        MODEL_PATH.write_text(json.dumps(model.to_json(), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {MODEL_PATH}")


if __name__ == "__main__":
    main()
