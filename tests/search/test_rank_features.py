"""The candidates' feature records and the fitted ranking over them (issue 42, items 1-2),
on hand-made candidates: pure, no index, no model."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ctxd.search.explain_rank import explain_fitted, explain_text
from ctxd.search.models import Hit, LineMatch, MatchSource
from ctxd.search.questions import asks_task
from ctxd.search.rank_features import FEATURES, QueryForm, candidates
from ctxd.search.rank_model import MODEL_PATH, RankModel, load_model, rank_fitted

S, K, L = MatchSource.SEMANTIC, MatchSource.KEYWORD, MatchSource.LEXICAL


def hit(path: str, score: float, source: MatchSource, checkpoint: int | None = 1,
        start: int = 1, end: int = 10, symbol: str | None = None,
        matches: tuple[LineMatch, ...] = ()) -> Hit:
    return Hit(repository="r", path=path, language="python", start_line=start,
               end_line=end, score=score, sources=(source,), symbol=symbol,
               snippet=f"text of {path} {start}", matches=matches, checkpoint=checkpoint)


def weights(**named: float) -> tuple[float, ...]:
    return tuple(named.get(f, 0.0) for f in FEATURES)


def by_path(cands: list, path: str) -> dict[str, float]:
    return next(c.record() for c in cands if c.hit.path == path)


def test_one_candidate_per_checkpoint_with_each_legs_evidence() -> None:
    legs = {
        "semantic": [hit("a.py", 0.8, S), hit("b.py", 0.4, S, checkpoint=2)],
        "keyword": [hit("b.py", 10.0, K, checkpoint=2), hit("a.py", 5.0, K)],
        "lexical": [hit("c.py", 3.0, L, checkpoint=None,
                        matches=(LineMatch(4, "x"),))],
        "summary": [hit("b.py", 0.9, S, checkpoint=None), hit("a.py", 0.3, S, checkpoint=None)],
    }
    cands = candidates("where is the retry decided", legs)
    assert [c.hit.path for c in cands] == ["a.py", "b.py", "c.py"]
    a, b, c = (by_path(cands, p) for p in ("a.py", "b.py", "c.py"))
    assert (a["semantic"], a["semantic_rr"], a["keyword"], a["keyword_rr"]) == (1.0, 1.0, 0.5,
                                                                                0.5)
    assert b["semantic"] == 0.5 and b["keyword"] == 1.0 and b["agreement"] == 1.0
    assert b["summary"] == 1.0 and a["summary"] == pytest.approx(1 / 3)
    assert c["lexical_only"] == 1.0 and c["lexical"] == 1.0 and c["lexical_line"] == 1.0
    assert c["semantic"] == 0.0 and a["lexical_only"] == 0.0
    assert len(cands[0].vector) == len(FEATURES)
    for cand in cands:  # both legs' sources are united, as fusion does
        if cand.hit.path == "a.py":
            assert set(cand.hit.sources) == {S, K}


def test_kinds_and_their_interactions_with_the_question() -> None:
    legs = {"semantic": [hit("tests/test_retry.py", 0.9, S), hit("docs/retry.md", 0.8, S, 2),
                         hit("CHANGELOG.md", 0.5, S, 3), hit("src/retry.py", 0.7, S, 4)]}
    plain = candidates("where is the retry decided", legs)
    assert by_path(plain, "tests/test_retry.py")["test"] == 1.0
    assert by_path(plain, "tests/test_retry.py")["test_x_asks_tests"] == 0.0
    assert by_path(plain, "docs/retry.md")["prose_x_where"] == 1.0
    assert by_path(plain, "CHANGELOG.md")["changelog"] == 1.0
    assert by_path(plain, "src/retry.py")["test"] == 0.0
    tests = candidates("which tests cover the retry", legs)
    assert by_path(tests, "tests/test_retry.py")["test_x_asks_tests"] == 1.0
    how = candidates("how do I turn off retries", legs)
    assert by_path(how, "docs/retry.md")["prose_x_how_to"] == 1.0
    ident = candidates("Retry.increment", legs)
    assert by_path(ident, "src/retry.py")["semantic_x_identifier"] > 0
    assert QueryForm.of("Retry.increment").identifier


def test_a_checkpoint_without_a_vector_takes_its_keyword_evidence() -> None:
    legs = {"semantic": [hit("a.py", 0.8, S)],
            "keyword": [hit("new.py", 9.0, K, checkpoint=7), hit("a.py", 3.0, K)]}
    cands = candidates("retry backoff", legs, unembedded={("r", "new.py", 1, 10)})
    assert by_path(cands, "new.py")["semantic"] == 1.0


def test_the_model_is_the_exp_of_its_weighted_sum() -> None:
    model = RankModel(weights=weights(semantic=2.0, test=-1.5), bias=-0.5)
    vec = tuple(1.0 if f in ("semantic", "test") else 0.0 for f in FEATURES)
    assert model.logit(vec) == pytest.approx(0.0)
    assert model.score(vec) == pytest.approx(1.0)
    parts = model.contributions(vec)
    assert parts[0] == ("semantic", 1.0, 2.0) and parts[1] == ("test", 1.0, -1.5)
    assert sum(p for _f, _v, p in parts) + model.bias == pytest.approx(model.logit(vec))
    again = RankModel.from_json(json.loads(json.dumps(model.to_json())))
    assert again.weights == model.weights and again.bias == model.bias
    with pytest.raises(ValueError, match="rebuild it"):
        RankModel.from_json({**model.to_json(), "features": ["semantic"]})
    with pytest.raises(ValueError, match="weights"):
        RankModel(weights=(1.0,))


def test_the_fitted_ranking_follows_its_weights_and_explain_shows_them() -> None:
    legs = {"semantic": [hit("tests/test_retry.py", 0.9, S), hit("src/retry.py", 0.8, S, 2),
                         hit("src/retry.py", 0.5, S, 3, start=11, end=20)]}
    query = "where is the retry decided"
    keep = rank_fitted(query, legs, RankModel(weights=weights(semantic=4.0)))
    assert [h.path for h in keep][:2] == ["tests/test_retry.py", "src/retry.py"]
    model = RankModel(weights=weights(semantic=4.0, test=-3.0))
    ranked = rank_fitted(query, legs, model)
    assert ranked[0].path == "src/retry.py"
    assert ranked[0].start_line == 1 and ranked[0].end_line == 20  # touching parts merged
    assert ranked[0].score == pytest.approx(math.exp(4 * 0.8 / 0.9))
    parts = explain_fitted(query, legs, ranked[-1], model, rules=["exact phrase"])
    assert [p.feature for p in parts] == ["semantic 1", "test 1", "bias", "exact phrase"]
    assert [p.value for p in parts[:2]] == [4.0, -3.0]
    text = explain_text(parts)
    assert text.startswith("exp(semantic 1: +4.000, test 1: -3.000")
    assert text.endswith("; rule: exact phrase")


def test_the_shipped_model_loads_and_names_every_feature() -> None:
    assert MODEL_PATH.is_file(), "search/rank_model.json ships with the package"
    model = load_model()
    assert model is not None and len(model.weights) == len(FEATURES)
    data = json.loads(Path(MODEL_PATH).read_text(encoding="utf-8"))
    assert data["features"] == list(FEATURES)
    assert "loro" in json.dumps(data["meta"]).lower()


# -- the learner (bench/ranking_train/train.py) on hand-made pools -------------------------


def pool(n: int, gold_is_test: bool) -> dict[str, object]:
    """A question where the hand ranking puts src/x.py before a test (halved); the gold
    file is the test when `gold_is_test`, else src/x.py."""
    legs = {"semantic": [hit("tests/test_x.py", 0.9, S, checkpoint=1),
                         hit("src/x.py", 0.8, S, checkpoint=2),
                         hit("src/other.py", 0.3, S, checkpoint=3)]}
    query = f"where is thing number {n} decided"
    gold = "tests/test_x.py" if gold_is_test else "src/x.py"
    cands = candidates(query, legs)
    return {"id": str(n), "set": "s", "repository": f"repo{n % 3}", "query": query,
            "gold": [gold], "legs": legs, "cands": cands, "definitions": [], "phrase": [],
            "labels": [int(c.hit.path == gold) for c in cands]}


def test_the_learner_corrects_the_hand_ranking_where_the_questions_disagree() -> None:
    pytest.importorskip("numpy")
    import numpy as np

    from bench.ranking_train.train import LOG_HAND, fast_mrr, fast_pools, fit_ascent

    records = [pool(n, gold_is_test=n % 5 != 0) for n in range(10)]
    hand = np.zeros(len(FEATURES))
    hand[LOG_HAND] = 1.0
    before = fast_mrr(fast_pools(records), hand)
    model = fit_ascent(records)
    after = fast_mrr(fast_pools(records), np.array(model.weights))
    assert after > before
    assert model.weights[FEATURES.index("test")] > 0  # the hand ranking halves tests
    assert model.weights[LOG_HAND] == 1.0
    assert fit_ascent(records).weights == model.weights  # deterministic


# -- trees: the plain-Python evaluator of LambdaMART's corrections --------------------------


def vec(**named: float) -> tuple[float, ...]:
    return tuple(named.get(f, 0.0) for f in FEATURES)


def test_trees_add_to_the_logit_and_explain_by_their_paths() -> None:
    t, s = FEATURES.index("test"), FEATURES.index("semantic")
    stump = (t, 0.5, 0.1, -0.4, 0.0)  # a test file: -0.4, else +0.1; root value 0
    deep = (s, 0.7, -0.2, (t, 0.5, 0.3, -0.1, 0.2), 0.05)
    model = RankModel(weights=weights(log_hand=1.0), bias=0.0, trees=(stump, deep))
    code, test = vec(log_hand=0.5, semantic=0.9), vec(log_hand=0.5, semantic=0.9, test=1.0)
    assert model.logit(code) == pytest.approx(0.5 + 0.1 + 0.3)
    assert model.logit(test) == pytest.approx(0.5 - 0.4 - 0.1)
    assert model.logit(vec(semantic=0.2)) == pytest.approx(0.1 - 0.2)  # left of 0.7
    for v in (code, test, vec(semantic=0.2, test=1.0)):
        parts = model.contributions(v)
        assert model.base + sum(p for _f, _x, p in parts) == pytest.approx(model.logit(v))
    parts = {f: p for f, _x, p in model.contributions(test)}
    assert parts["test"] == pytest.approx(-0.4 + (-0.1 - 0.2))
    assert parts["semantic"] == pytest.approx(0.2 - 0.05)
    assert model.base == pytest.approx(0.05)
    again = RankModel.from_json(json.loads(json.dumps(model.to_json())))
    assert again.trees == model.trees and again.logit(test) == pytest.approx(model.logit(test))
    bad = model.to_json()
    bad["trees"][0]["feature"] = "no_such_feature"
    with pytest.raises(ValueError, match="no_such_feature"):
        RankModel.from_json(bad)


def test_the_tree_evaluator_matches_lightgbm() -> None:
    try:
        import lightgbm
    except (ImportError, OSError) as e:  # not installed, or its OpenMP runtime missing
        pytest.skip(f"lightgbm (the dev extra) cannot load: {e}")
    import numpy as np

    from bench.ranking_train.train import booster_trees, lambdamart

    rng = np.random.default_rng(7)
    x = rng.random((400, len(FEATURES)))
    y = (x[:, 0] + 0.3 * x[:, 5] > 0.8).astype(int)
    init = x[:, FEATURES.index("log_hand")].copy()
    booster = lambdamart(x, y, init, [20] * 20, 8, 4, 0.3, 10)
    assert isinstance(booster, lightgbm.Booster)
    model = RankModel(weights=weights(log_hand=1.0), trees=booster_trees(booster, 8))
    want = init + booster.predict(x, raw_score=True)
    got = [model.logit(tuple(row)) for row in x]
    assert np.allclose(got, want, atol=1e-6)


def test_folders_the_query_names_and_plain_text_that_is_not_prose() -> None:
    from dataclasses import replace

    from ctxd.search.hybrid import FusionOptions

    legs = {"semantic": [hit("src/retry/policy.py", 0.8, S),
                         replace(hit("man/tool.1.prebuilt", 0.9, S, 2), language="text"),
                         replace(hit("NOTES.md", 0.7, S, 3), language="text")]}
    cands = candidates("how does the retry policy back off", legs)
    code, built, notes = (by_path(cands, p) for p in ("src/retry/policy.py",
                                                       "man/tool.1.prebuilt", "NOTES.md"))
    assert code["dir_words"] > 0 and code["path_words"] > 0 and code["plain_text"] == 0.0
    assert built["plain_text"] == 1.0 and built["dir_words"] == 0.0
    assert notes["prose"] == 1.0 and notes["plain_text"] == 0.0  # a page of prose
    # the hand ranking's weights that log_hand reads follow the [search] options
    legs["keyword"] = [hit("src/other.py", 5.0, K, 4)]
    low = candidates("retry policy", legs, options=FusionOptions(keyword_weight=0.01))
    usual = candidates("retry policy", legs)
    assert by_path(low, "src/other.py")["log_hand"] < by_path(usual, "src/other.py")["log_hand"]


def test_explain_of_a_model_on_the_hand_ranking_shows_what_log_hand_is_made_of() -> None:
    legs = {"semantic": [hit("tests/test_retry.py", 0.9, S), hit("src/retry.py", 0.8, S, 2)]}
    query = "where is the retry decided"
    model = RankModel(weights=weights(log_hand=1.0, dir_words=0.1))
    ranked = rank_fitted(query, legs, model)
    parts = explain_fitted(query, legs, ranked[0], model, rules=["exact phrase"])
    kinds = [p.kind for p in parts]
    assert kinds[0] == "add" and "weight" in kinds and kinds[-1] == "rule"
    assert parts[0].feature == "semantic"  # the hand ranking's parts first
    assert next(p for p in parts if p.kind == "weight").feature.startswith("log_hand")
    text = explain_text(parts)
    assert "; log_hand = log(semantic " in text and text.endswith("; rule: exact phrase")
    assert text.count("rule:") == 1


def test_a_model_without_leg_features_ranks_the_same_from_file_level_vectors() -> None:
    from ctxd.search.rank_model import finish, score_candidates

    legs = {"semantic": [hit("src/retry/policy.py", 0.8, S), hit("tests/test_retry.py", 0.9, S, 2),
                         hit("src/retry/policy.py", 0.7, S, 3, start=30, end=40,
                             symbol="test_backoff")],
            "keyword": [hit("src/retry/policy.py", 4.0, K, 3, start=30, end=40),
                        hit("docs/retry.md", 3.0, K, 5)],
            "lexical": [hit("src/other.py", 2.0, L, checkpoint=None,
                            matches=(LineMatch(3, "retry"),))]}
    query = "how does the retry policy back off"
    model = RankModel(weights=weights(log_hand=1.0, dir_words=0.1, plain_text=-0.2, test=-0.3))
    assert model.needed == {"log_hand", "dir_words", "plain_text", "test"}
    light = candidates(query, legs, needed=model.needed)
    full = candidates(query, legs)
    assert [c.hit for c in light] == [c.hit for c in full]
    for a, b in zip(light, full, strict=True):
        assert model.logit(a.vector) == pytest.approx(model.logit(b.vector))
    ranked = rank_fitted(query, legs, model)
    assert ranked == finish(query, score_candidates(model, full), legs, model)


def test_the_shipped_models_features_alone_rank_as_the_full_vectors_do() -> None:
    """A model that reads only log_hand, dir_words, plain_text, prose_x_task and
    prose_x_wants_prose (the shipped one) is scored from those values (`light_values`),
    with the same order and scores as from every candidate's whole vector, for a question
    and for a task."""
    from ctxd.search.rank_model import finish, score_candidates

    legs = {"semantic": [hit("src/retry/policy.py", 0.8, S), hit("man/retry.1.prebuilt", 0.9,
                                                                 S, 2),
                         hit("src/retry/policy.py", 0.7, S, 3, start=30, end=40)],
            "keyword": [hit("src/retry/policy.py", 4.0, K, 3, start=30, end=40),
                        hit("docs/retry.md", 3.0, K, 5)]}
    query = "retry policy back off"
    model = RankModel(weights=weights(log_hand=1.0, dir_words=0.1, plain_text=-0.2,
                                      prose_x_task=0.1, prose_x_wants_prose=0.05))
    ranked = rank_fitted(query, legs, model)
    assert ranked == finish(query, score_candidates(model, candidates(query, legs)), legs,
                            model)
    assert ranked[0].path == "src/retry/policy.py"
    task = "retry a request after a timeout"
    assert asks_task(task)
    full = candidates(task, legs)
    assert any(c.record()["prose_x_task"] == 1.0 for c in full)
    assert any(c.record()["prose_x_wants_prose"] == 1.0 for c in full)
    assert rank_fitted(task, legs, model) == finish(task, score_candidates(model, full),
                                                    legs, model)
