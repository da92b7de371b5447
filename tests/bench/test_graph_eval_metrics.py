"""bench/graph_eval's metrics on hand-made answers (no corpus, no index)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.graph_eval.score import Score, _caller_sites, _followed_by_paren, macro, score


def test_precision_and_recall_of_one_answer() -> None:
    gold = {("a.py", 1), ("a.py", 5), ("b.py", 2), ("c.py", 9)}
    s = score({("a.py", 1), ("b.py", 2), ("b.py", 3)}, gold)
    assert (s.tp, s.answered, s.gold) == (2, 3, 4)
    assert s.precision == pytest.approx(2 / 3)
    assert s.recall == pytest.approx(0.5)


def test_an_empty_answer_has_no_precision_and_no_recall() -> None:
    s = score(set(), {("a.py", 1)})
    assert s.precision is None
    assert s.recall == 0.0


def test_macro_averages_precision_over_answers_and_recall_over_all() -> None:
    rows = [Score(1.0, 0.5, 1, 1, 2), Score(0.5, 1.0, 2, 4, 2), Score(None, 0.0, 0, 0, 3)]
    m = macro(rows)
    assert (m.n, m.empty) == (3, 1)
    assert m.precision == pytest.approx(0.75)
    assert m.recall == pytest.approx(0.5)
    assert macro([]).precision is None


def test_callers_read_the_site_or_a_flat_site_with_the_definition_nested() -> None:
    data = {"callers": [
        {"site": {"path": "a.py", "line": 3}, "name": "f", "path": "a.py", "line": 1},
        {"path": "b.py", "line": 7, "definition": {"name": "g", "path": "b.py", "line": 2}},
    ]}
    assert _caller_sites(data) == {("a.py", 3), ("b.py", 7)}
    assert _caller_sites(None) == set()


def test_a_text_match_is_a_call_when_a_parenthesis_follows_the_name(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x = s.get\ny = s.get (1)\nget = 2; get(3)\n")
    cache: dict[str, list[str]] = {}
    assert not _followed_by_paren(tmp_path, "m.py", 1, 7, "get", cache)
    assert _followed_by_paren(tmp_path, "m.py", 2, 7, "get", cache)
    assert _followed_by_paren(tmp_path, "m.py", 3, 1, "get", cache)
