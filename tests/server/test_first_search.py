"""The first search says what loading the model costs on this machine (issue 30): the last
measure recorded in the home, or, before any, the general figure (never "~4 s" from a
quiet machine)."""

from __future__ import annotations

import stat
from pathlib import Path

from ctxd.server import first_search


def test_the_last_measure_is_said(tmp_path: Path) -> None:
    assert first_search.loading_text(tmp_path) == (
        f"loading the model: {first_search.UNMEASURED}")
    first_search.remember(tmp_path, 15.94)
    assert first_search.loading_text(tmp_path) == (
        "loading the model: 15.9 s the last time here")
    assert stat.S_IMODE((tmp_path / first_search.FILE).stat().st_mode) == 0o600
    first_search.remember(tmp_path, 3.2)  # the latest measure replaces the former
    assert first_search.last(tmp_path) == 3.2


def test_a_damaged_record_is_no_measure(tmp_path: Path) -> None:
    for text in ("{", "[]", '{"seconds": "x"}', '{"seconds": -1}'):
        (tmp_path / first_search.FILE).write_text(text)
        assert first_search.last(tmp_path) is None, text
        assert first_search.UNMEASURED in first_search.loading_text(tmp_path)


def test_an_unwritable_home_only_loses_the_figure(tmp_path: Path) -> None:
    first_search.remember(tmp_path / "missing" / "deeper" / "file-not-dir", 1.0)
    (tmp_path / "f").write_text("")
    first_search.remember(tmp_path / "f", 1.0)  # a file where the home should be
    assert first_search.last(tmp_path / "f") is None
