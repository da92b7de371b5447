"""`symbols` says when nothing matched exactly (issue 24 item 6): before a list of fuzzy
matches only, the text says no name holds the query and the command exits 1; `--json` and
the MCP tool carry `best_match` (exact, prefix, substring, fuzzy)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.cli.test_cli_hardening import run
from tests.server.conftest import Env, text

STORE = '''package credentials

// Store keeps credentials for registries.
type KeychainStore struct{}

func (k KeychainStore) Erase(server string) error { return nil }

func KeepCache() {}

func Store() {}
'''


@pytest.fixture
def indexed(isolated_env: Path, repo: RepoBuilder, tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> RepoBuilder:
    repo.write("credentials/store.go", STORE)
    service = Service(load_settings({}), embedder=FakeEmbedder())
    service.index(repo.root)
    service.close()
    monkeypatch.chdir(tmp_path)
    return repo


def test_fuzzy_matches_only_are_announced_and_exit_1(indexed: RepoBuilder):
    r = run("symbols", "kcs")  # KeychainStore holds k, c, s in order: a fuzzy match only
    lines = r.stdout.splitlines()
    assert lines[0] == ("No symbol name matches `kcs` exactly, by prefix or as a substring; "
                        "closest fuzzy matches:")
    assert any("KeychainStore" in ln for ln in lines[1:])
    assert r.exit_code == 1
    data = json.loads(run("symbols", "kcs", "--json").stdout)
    assert data["best_match"] == "fuzzy" and data["items"]


@pytest.mark.parametrize(("query", "best"), [("KeychainStore", "exact"), ("Keychain", "prefix"),
                                             ("chainSto", "substring")])
def test_real_matches_say_how_they_match(indexed: RepoBuilder, query: str, best: str):
    r = run("symbols", query)
    assert r.exit_code == 0
    assert "No symbol name matches" not in r.stdout
    assert "KeychainStore" in r.stdout.splitlines()[0]
    assert json.loads(run("symbols", query, "--json").stdout)["best_match"] == best


def test_no_match_at_all_is_still_exit_1(indexed: RepoBuilder):
    r = run("symbols", "zzqqxx")
    assert r.exit_code == 1 and r.stdout.startswith("No symbols match")
    assert json.loads(run("symbols", "zzqqxx", "--json").stdout)["best_match"] is None


@pytest.fixture
def mcp_env(env_factory, repo: RepoBuilder) -> Env:
    """An MCP server over the repository holding `STORE`, indexed."""
    env: Env = env_factory(**{"server.allowed_roots": [str(repo.root.parent)]})
    repo.write("credentials/store.go", STORE)
    env.index(repo.root)
    return env


def test_mcp_says_so_too(mcp_env: Env):
    env = mcp_env
    fuzzy = env.call("search_symbols", {"query": "kcs"})
    assert fuzzy.structured_content is not None
    assert fuzzy.structured_content["best_match"] == "fuzzy"
    assert "No symbol name matches exactly, by prefix or as a substring" in text(fuzzy)
    exact = env.call("search_symbols", {"query": "KeychainStore"})
    assert exact.structured_content is not None
    assert exact.structured_content["best_match"] == "exact"
    assert exact.structured_content["exact"] == 1
    assert "No symbol name matches" not in text(exact)
    assert "Found 1 results\n" in text(exact)  # nothing similar to count


def test_mcp_counts_exact_names_before_similar_ones(mcp_env: Env):
    page = mcp_env.call("search_symbols", {"query": "Store"})
    assert page.structured_content is not None
    assert page.structured_content["best_match"] == "exact"
    assert page.structured_content["exact"] == 1
    assert page.structured_content["total"] == 2  # Store, then KeychainStore (a substring)
    assert [i["name"] for i in page.structured_content["items"]] == ["Store", "KeychainStore"]
    assert "Found 2 results: 1 exact, then 1 similar (prefix, substring or fuzzy)" in text(page)
