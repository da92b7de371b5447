"""The fitted ranking (issue 42, items 1, 2 and 4) end to end with the real model: a
service whose `[search] fusion` is `fitted` ranks with the shipped weights
(`search/rank_model.json`), keeps the hard rules, and explains each hit as its features'
contributions (weight x value)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ctxd.indexer.embedder import SentenceTransformerEmbedder
from ctxd.search.rank_features import FEATURES
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import RepoBuilder
from tests.server.test_ranking_guarantees import tree


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory,
           real_embedder: SentenceTransformerEmbedder) -> Iterator[Service]:
    base = tmp_path_factory.mktemp("fitted")
    root = tree(RepoBuilder(base / "werk-project")).root
    svc = Service(load_settings({"home": str(base / "home"), "search.fusion": "fitted"}),
                  embedder=real_embedder)
    svc.index(root)
    yield svc
    svc.close()


def test_the_fitted_ranking_answers_and_keeps_the_hard_rules(fitted: Service) -> None:
    assert fitted.searches.fitted_model() is not None
    page = fitted.search("how are request objects built from a WSGI environment",
                         mode="hybrid", limit=10)
    assert page.results and all(h.score > 0 for h in page.results)
    assert "werk/wrappers.py" in [h.path for h in page.results[:3]]
    ident = fitted.search("CliRunner invoke catch_exceptions", mode="hybrid", limit=5)
    assert ident.results[0].path == "werk/testing.py"  # definitions first, a rule
    english = fitted.search("how do I test my application", mode="hybrid", limit=10)
    assert not any(h.path.startswith("docs/de/") for h in english.results)


def test_explain_shows_each_features_contribution(fitted: Service) -> None:
    page = fitted.search("how are request objects built from a WSGI environment",
                         mode="hybrid", limit=5, explain=True)
    rows = page.stats["explain"]
    assert len(rows) == len(page.results) > 1
    parts = rows[0]
    weights = [p for p in parts if p["kind"] == "weight"]
    assert weights[-1]["feature"] == "bias"
    named = {str(p["feature"]).rsplit(" ", 1)[0] for p in weights[:-1]}
    assert named and named <= set(FEATURES)
    assert "log_hand" in named  # the hand ranking's evidence, which the weights correct
    plain = fitted.search("how are request objects built from a WSGI environment",
                          mode="hybrid", limit=5)
    assert [h.path for h in plain.results] == [h.path for h in page.results]


def test_cli_explain_prints_the_fitted_contributions(fitted: Service) -> None:
    from ctxd.server.cli.explain_hits import explained_hits

    text = explained_hits(fitted, "EnvironBuilder get_environ", {"mode": "hybrid",
                                                                 "limit": 3})
    assert "exp(" in text and "bias" in text
    assert "rule: its file defines a name the query names" in text
