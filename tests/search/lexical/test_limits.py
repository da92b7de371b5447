"""Bounds on search input (issue 9, item 21): linear identifier splitting, a query length
cap on every search entry point (CLI and MCP alike), and a term cap for the embedded
lexical engine. Real temp repositories, a real SQLite file, the real MCP client."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxd.indexer.store.words import split_identifiers
from ctxd.search.lexical.limits import MAX_QUERY_CHARS
from ctxd.server.cli.main import main
from tests.conftest import RepoBuilder
from tests.server.conftest import write_sample

_OLD_CAMEL = re.compile(r"[A-Za-z][a-z0-9]*[A-Z][A-Za-z0-9]*")
_HUMP = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")


def old_split(text: str) -> str:
    """The former (quadratic) splitter, as the reference for what the output must be."""
    parts: list[str] = []
    for ident in _OLD_CAMEL.findall(text):
        humps = _HUMP.findall(ident)
        if len(humps) > 1:
            parts.extend(humps)
    return " ".join(parts)


@pytest.mark.parametrize("sample", [
    "parseHeader HTTPServer getURLFor x", "AbcDef Abc aB_cD 12abC ab1Cd", "ABC abc", "",
    "foo.barBaz(quxQuux) __initVal__ x9Y", "Ab1 A1bC aAAAb",
])
def test_split_identifiers_gives_the_same_humps_as_before(sample: str):
    assert split_identifiers(sample) == old_split(sample)


def test_split_identifiers_is_linear_on_a_long_word():
    # The former regex retried every suffix of a long lowercase word: 100,000 letters took
    # ~40 s (and held the GIL throughout); a linear scan takes milliseconds.
    word = "x" * 100_000
    # This thread's CPU time, not the wall clock: a busy machine does not add to it.
    started = time.thread_time()
    assert split_identifiers(word) == ""
    assert split_identifiers(word + "Y") == f"{word} Y"
    assert split_identifiers("a" + word + "Bc") == f"a{word} Bc"
    assert time.thread_time() - started < 1.0


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize("mode", ["keyword", "lexical", "hybrid", "semantic"])
def test_cli_search_refuses_an_over_long_query_naming_the_field_and_limit(mode: str):
    r = run("search", "x" * 40_000, "--mode", mode, "--json")
    assert r.exit_code == 2, r.output
    err = json.loads(r.output)
    assert err["error"] == "validation_error"
    assert err["details"] == {"field": "query", "length": 40_000, "max": MAX_QUERY_CHARS}
    assert f"at most {MAX_QUERY_CHARS}" in err["message"]


def test_cli_search_accepts_a_query_at_the_limit(tmp_path: Path):
    repo = write_sample(RepoBuilder(tmp_path / "sample")).root
    assert run("index", str(repo), "--json").exit_code == 0
    r = run("search", ("backoff " * 600)[:MAX_QUERY_CHARS], "--mode", "keyword", "--json")
    assert r.exit_code == 0, r.output
    assert "net/retry.py" in {h["path"] for h in json.loads(r.output)["results"]}
