"""The fitted ranking (issue 42, item 2): a linear model over each candidate's feature
record (`search.rank_features`), learnt from every dev set by
`bench/ranking_train/train.py`, shipped as `rank_model.json` beside this module.

Evaluating it is plain Python (no scikit-learn, LightGBM or numpy on the search path):
a candidate's score is `exp(bias + sum(weight_i * feature_i) + sum(tree_j(features)))`,
a feature's weight being a factor on it. The trees (optional, from LightGBM's LambdaMART,
`train.py --learner trees`) are small regression trees whose leaves add to the logit:
corrections learnt on top of the linear part; each is evaluated here by walking its
nodes (`feature <= threshold` goes left, as LightGBM decides). With `log_hand` weighing
1, the score is the hand ranking's (`search.hybrid`) times the learnt corrections.
`rank_fitted` then runs the steps of `search.hybrid` that are not weights: identical
copies answer once, overlapping hits of a file merge, translated pages in the question's
language join, `search.prose.code_first` when the model says so, and at most
`per_file_top` hits of one file stay in the first ten. The hard rules
(`search.definitions`, `search.exact_phrase`) run after it, as after the hand ranking.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeAlias

from ctxd.search.hybrid import FusionOptions, settle
from ctxd.search.merge import PER_FILE_TOP
from ctxd.search.models import Hit
from ctxd.search.prose import MAX_PROSE_TOP, PROSE_FACTOR
from ctxd.search.rank_features import (
    FEATURES,
    LIGHT_FEATURES,
    LIGHT_FILE_FEATURES,
    Candidate,
    candidates,
    light_values,
)

__all__ = ["MODEL_PATH", "RankModel", "load_model", "rank_fitted"]

MODEL_PATH = Path(__file__).with_name("rank_model.json")

Node: TypeAlias = "float | tuple[int, float, Node, Node, float]"
"""A tree: a leaf's value, or (feature index, threshold, left, right, the node's value:
its training examples' mean output, for `path_contributions`)."""


def tree_value(node: Node, vector: Sequence[float]) -> float:
    """The leaf `vector` reaches: left while `vector[feature] <= threshold`."""
    while isinstance(node, tuple):
        node = node[2] if vector[node[0]] <= node[1] else node[3]
    return node


def node_value(node: Node) -> float:
    return node if not isinstance(node, tuple) else node[4]


def path_contributions(node: Node, vector: Sequence[float], out: dict[int, float]) -> None:
    """Add to `out[feature]` each split's change of value along `vector`'s path (the
    path attribution of a tree: the root's value plus these changes is the leaf's)."""
    while isinstance(node, tuple):
        child = node[2] if vector[node[0]] <= node[1] else node[3]
        out[node[0]] = out.get(node[0], 0.0) + node_value(child) - node[4]
        node = child


def tree_to_json(node: Node) -> dict[str, Any]:
    if not isinstance(node, tuple):
        return {"value": round(node, 6)}
    feature, threshold, left, right, value = node
    return {"feature": FEATURES[feature], "threshold": threshold, "value": round(value, 6),
            "left": tree_to_json(left), "right": tree_to_json(right)}


def tree_from_json(data: Mapping[str, Any]) -> Node:
    if "feature" not in data:
        return float(data["value"])
    name = data["feature"]
    if name not in FEATURES:
        raise ValueError(f"a tree of the ranking model splits on {name!r}, which is not in "
                         f"search.rank_features.FEATURES; rebuild it with "
                         f"bench/ranking_train/train.py")
    return (FEATURES.index(name), float(data["threshold"]), tree_from_json(data["left"]),
            tree_from_json(data["right"]), float(data["value"]))


@dataclass(frozen=True, slots=True)
class RankModel:
    """A linear model over `FEATURES` (logistic: the score is the odds, exp of the sum)."""

    weights: tuple[float, ...]
    bias: float = 0.0
    code_first: bool = False
    """Run `search.prose.code_first` after scoring (as the hand ranking does)."""
    prose_factor: float = PROSE_FACTOR
    max_prose_top: int = MAX_PROSE_TOP
    meta: Mapping[str, Any] = field(default_factory=dict)
    """How it was trained (sets, command, cross-validation); not used to rank."""
    trees: tuple[Node, ...] = ()
    """Regression trees whose values add to the logit (`tree_value`)."""
    _terms: tuple[tuple[int, float], ...] = field(init=False, repr=False, compare=False)
    """(feature index, weight) of the non-zero weights: what `logit` sums."""
    _needed: frozenset[str] = field(init=False, repr=False, compare=False)
    """`needed`, worked out once (every search asks)."""

    def __post_init__(self) -> None:
        if len(self.weights) != len(FEATURES):
            raise ValueError(f"a ranking model needs {len(FEATURES)} weights (one per "
                             f"feature of search.rank_features.FEATURES), not "
                             f"{len(self.weights)}; rebuild it with "
                             f"bench/ranking_train/train.py")
        object.__setattr__(self, "_terms",
                           tuple((j, w) for j, w in enumerate(self.weights) if w))
        out = {FEATURES[j] for j, _w in self._terms}
        stack = list(self.trees)
        while stack:
            node = stack.pop()
            if isinstance(node, tuple):
                out.add(FEATURES[node[0]])
                stack += [node[2], node[3]]
        object.__setattr__(self, "_needed", frozenset(out))

    @property
    def needed(self) -> frozenset[str]:
        """The features the model reads: a non-zero weight's, a tree split's."""
        return self._needed

    def logit(self, vector: Sequence[float]) -> float:
        linear = self.bias
        for j, w in self._terms:
            linear += w * vector[j]
        for t in self.trees:
            linear += tree_value(t, vector)
        return linear

    @property
    def base(self) -> float:
        """The logit before any feature: the bias plus each tree's root value (what
        `contributions` are added to)."""
        return self.bias + sum(node_value(t) for t in self.trees)

    def score(self, vector: Sequence[float]) -> float:
        """`exp(logit)`: the odds, so that the kinds' weights act as factors (as the hand
        ranking's demotions do) on a score of the hand ranking's scale when `log_hand`
        weighs 1; `code_first`'s factors then mean what they mean there."""
        return math.exp(max(-50.0, min(50.0, self.logit(vector))))

    def contributions(self, vector: Sequence[float]) -> list[tuple[str, float, float]]:
        """(feature, value, contribution) for each feature that moves the logit: its
        weight x value, plus its splits' changes along the trees' paths
        (`path_contributions`); largest first. `base` plus them is the logit."""
        by_tree: dict[int, float] = {}
        for t in self.trees:
            path_contributions(t, vector, by_tree)
        parts = []
        for j, (name, w, x) in enumerate(zip(FEATURES, self.weights, vector, strict=True)):
            part = w * x + by_tree.get(j, 0.0)
            if part or (x and w):
                parts.append((name, x, part))
        return sorted(parts, key=lambda p: -abs(p[2]))

    def to_json(self) -> dict[str, Any]:
        return {"features": list(FEATURES),
                "weights": [round(w, 6) for w in self.weights], "bias": round(self.bias, 6),
                "code_first": self.code_first, "prose_factor": self.prose_factor,
                "max_prose_top": self.max_prose_top, "meta": dict(self.meta),
                "trees": [tree_to_json(t) for t in self.trees]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RankModel:
        names = list(data.get("features", []))
        if names != list(FEATURES):
            raise ValueError("the ranking model's features differ from "
                             "search.rank_features.FEATURES; rebuild it with "
                             "bench/ranking_train/train.py")
        return cls(weights=tuple(float(w) for w in data["weights"]),
                   bias=float(data.get("bias", 0.0)),
                   code_first=bool(data.get("code_first", False)),
                   prose_factor=float(data.get("prose_factor", PROSE_FACTOR)),
                   max_prose_top=int(data.get("max_prose_top", MAX_PROSE_TOP)),
                   meta=dict(data.get("meta", {})),
                   trees=tuple(tree_from_json(t) for t in data.get("trees", [])))


@functools.cache
def load_model(path: Path = MODEL_PATH) -> RankModel | None:
    """The shipped model (read once per process), or None when there is none."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    return RankModel.from_json(data)


_HIT_FIELDS = tuple(f.name for f in fields(Hit))
_SCORE = _HIT_FIELDS.index("score")


def score_candidates(model: RankModel, cands: Sequence[Candidate]) -> list[Hit]:
    """Each candidate's hit with the model's score (`dataclasses.replace`, made cheaper:
    it is called for every candidate of every search)."""
    return [_with_score(c.hit, model.score(c.vector)) for c in cands]


def _with_score(hit: Hit, score: float) -> Hit:
    values = [getattr(hit, name) for name in _HIT_FIELDS]
    values[_SCORE] = score
    return Hit(*values)


def rank_fitted(
    query: str, legs: Mapping[str, Sequence[Hit]], model: RankModel, *,
    unembedded: Collection[tuple[str, str, int, int]] = (),
    generated: Collection[tuple[str, str]] = (), per_file_top: int = PER_FILE_TOP,
    options: FusionOptions | None = None,
) -> list[Hit]:
    """The fitted ranking of `legs` for `query` (module docstring), best first; `options`:
    the hand ranking's weights that `log_hand` reads (`search.rank_features.candidates`)."""
    if not model.trees and model.needed <= LIGHT_FEATURES:  # the shipped model
        w = dict(zip(FEATURES, model.weights, strict=True))
        scored = []
        # (weight, slot) in `logit`'s order (by feature), so the sums are the same floats:
        # slot 0 is log_hand, slot i the i-th of LIGHT_FILE_FEATURES
        slots = {"log_hand": 0, **{n: i for i, n in enumerate(LIGHT_FILE_FEATURES, 1)}}
        terms = [(w[name], slots[name]) for name in FEATURES if w[name]]
        for hit, own, values in light_values(query, legs, unembedded=unembedded,
                                             generated=generated, options=options):
            row = (own, *values)
            logit = model.bias
            for weight, slot in terms:
                logit += weight * row[slot]
            scored.append(_with_score(hit, math.exp(max(-50.0, min(50.0, logit)))))
        return finish(query, scored, legs, model, generated=generated,
                      per_file_top=per_file_top)
    cands = candidates(query, legs, unembedded=unembedded, generated=generated,
                       options=options, needed=model.needed)
    return finish(query, score_candidates(model, cands), legs, model, generated=generated,
                  per_file_top=per_file_top)


def finish(query: str, scored: Sequence[Hit], legs: Mapping[str, Sequence[Hit]],
           model: RankModel, *, generated: Collection[tuple[str, str]] = (),
           per_file_top: int = PER_FILE_TOP) -> list[Hit]:
    """Copies, merges, translated pages, prose bound and spreading (module docstring):
    `search.hybrid.settle`, without file summaries (a feature of the model's)."""
    options = FusionOptions(summary_weight=0.0, code_first=model.code_first,
                            prose_factor=model.prose_factor,
                            max_prose_top=model.max_prose_top, per_file_top=per_file_top)
    return settle(query, scored, legs, options, generated)
