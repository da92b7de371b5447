"""Every filter (`repositories`, `path_glob`, `language`) in every mode and engine.

Issue 15: `--repo` with `--mode lexical` matched nothing (the scope `(repo:"^x$")` was read
as one regex atom), and the hybrid mode's lexical leg lost every repository-scoped query
the same way. Two real repositories on disk, a real SQLite index, the deterministic
`FakeEmbedder` for the vector legs (what is checked here is the scoping, not ranking); the
Zoekt engine is the recorded real server (`FixtureServer`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxd.search.models import MatchSource
from ctxd.server.cli.main import main
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.search.zoekt.test_zoekt_client import ALIASES, FIXTURES
from tests.search.zoekt.zoekt_fixture_server import FixtureServer, load_exchanges
from tests.server.conftest import text

MODES = ("hybrid", "semantic", "keyword", "lexical")

SESSION_PY = '''"""Sessions."""


def open_session(user):
    """Open a session for the user and remember its token."""
    return {"user": user, "session_token": make_token()}
'''

SESSION_MD = "# Sessions\n\nA session keeps the user's token between requests.\n"


@pytest.fixture
def two_repos(tmp_path: Path) -> tuple[Path, Path]:
    roots = []
    for name in ("alpha", "beta"):
        r = RepoBuilder(tmp_path / name)
        r.write("src/session.py", SESSION_PY)
        r.write("docs/session.md", SESSION_MD)
        roots.append(r.root)
    return roots[0], roots[1]


@pytest.fixture
def service(tmp_path: Path, two_repos: tuple[Path, Path]) -> Iterator[Service]:
    svc = Service(load_settings({"home": str(tmp_path / "home")}), embedder=FakeEmbedder())
    for root in two_repos:
        svc.index(root)
    yield svc
    svc.close()


@pytest.mark.parametrize("mode", MODES)
def test_every_filter_scopes_every_mode(service: Service, mode: str) -> None:
    unscoped = service.search("session", mode=mode, limit=20).results
    # the repositories hold the same files: a text answers once, naming its copies (issue 24)
    assert {h.repository for h in unscoped} | {
        c.repository for h in unscoped for c in h.also_in} == {"alpha", "beta"}

    for kwargs, ok in [
        ({"repositories": ["alpha"]}, lambda h: h.repository == "alpha"),
        ({"repositories": ["alpha", "beta"]}, lambda h: True),
        ({"path_glob": "docs/**"}, lambda h: h.path == "docs/session.md"),
        ({"language": "markdown"}, lambda h: h.language == "markdown"),
        ({"repositories": ["beta"], "language": "python"},
         lambda h: h.repository == "beta" and h.path == "src/session.py"),
    ]:
        hits = service.search("session", mode=mode, limit=20, **kwargs).results  # type: ignore[arg-type]
        assert hits, f"{mode} {kwargs}: no results"
        found = [(h.repository, h.path) for h in hits]
        assert all(ok(h) for h in hits), f"{mode} {kwargs}: {found}"


def test_hybrid_keeps_its_lexical_leg_when_scoped(service: Service) -> None:
    hits = service.search("open_session", mode="hybrid", repositories=["beta"]).results
    assert hits and hits[0].path == "src/session.py" and hits[0].repository == "beta"
    assert MatchSource.LEXICAL in hits[0].sources


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def test_cli_repo_path_lang_filters_in_lexical_mode(two_repos: tuple[Path, Path]) -> None:
    for root in two_repos:
        code, out = run_cli("index", str(root), "--json")
        assert code == 0, out
    code, out = run_cli("search", "session", "--repo", "alpha", "--mode", "lexical", "--json")
    assert code == 0, out
    results = json.loads(out)["results"]
    assert results and {h["repository"] for h in results} == {"alpha"}
    code, out = run_cli("search", "token", "--repo", "beta", "--lang", "markdown",
                        "--mode", "lexical", "--json")
    assert code == 0, out
    assert [(h["repository"], h["path"]) for h in json.loads(out)["results"]] == [
        ("beta", "docs/session.md")]
    code, out = run_cli("search", "token", "--path", "src/**", "--mode", "lexical", "--json")
    assert {h["path"] for h in json.loads(out)["results"]} == {"src/session.py"}


def test_mcp_semantic_search_lexical_mode_with_a_repository(
    env_factory, two_repos: tuple[Path, Path]  # type: ignore[no-untyped-def]
) -> None:
    env = env_factory(**{"server.allowed_roots": [str(two_repos[0].parent)]})
    env.embedder.release()
    for root in two_repos:
        env.index(root)
    result = env.call("semantic_search", {"query": "session", "mode": "lexical",
                                          "repository": "alpha"})
    assert not result.is_error, text(result)
    body = result.structured_content or {}
    assert body["results"] and {h["repository"] for h in body["results"]} == {"alpha"}
    result = env.call("search", {"query": "session repo:beta"})
    assert "beta" in text(result) and "alpha/" not in text(result)


# -- Zoekt ---------------------------------------------------------------------------------


def test_zoekt_receives_a_repository_scope_it_can_answer(tmp_path: Path) -> None:
    if not (FIXTURES / "responses").is_dir():
        pytest.skip(f"Zoekt fixtures not found at {FIXTURES}")
    server = FixtureServer(load_exchanges(FIXTURES / "responses"), aliases=ALIASES)
    with server:
        settings = load_settings({"home": str(tmp_path / "home"),
                                  "search.zoekt_url": server.url, "search.context_lines": 0})
        svc = Service(settings, embedder=FakeEmbedder())
        try:
            hits = svc.search("cart", mode="lexical", repositories=["notes"]).results
        finally:
            svc.close()
    assert not server.problems, server.problems
    assert hits and {h.repository for h in hits} == {"notes"}
