"""Identical copies answer once (issue 24 item 2), end to end: a module and its verbatim
copies (`docs/snippets/`, a test fixture) indexed for real; every ranked mode
(hybrid, semantic with the real model, keyword) names the source once with the copies in
`also_in`, the CLI prints `also in:` and lists them in `--json`, MCP gives the list; lexical
search stays grep: every file that matches."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.cli.test_cli_hardening import run
from tests.server.conftest import Env, text

RETRY = '''"""Retrying failed calls."""
import time


def backoff_delays(attempts, base=0.5, cap=30.0):
    """Exponential backoff: wait longer after every failed attempt, up to a cap."""
    return [min(cap, base * 2 ** n) for n in range(attempts)]


def retry(call, attempts=5):
    """Call `call` until it succeeds, sleeping between attempts."""
    for delay in backoff_delays(attempts):
        try:
            return call()
        except ConnectionError:
            time.sleep(delay)
    raise RuntimeError("gave up")
'''

SHAPES = '''def area_of_circle(radius):
    """The area of a circle."""
    return 3.14159 * radius ** 2
'''

COPIES = ("docs/snippets/retry.py", "tests/fixtures/retry.py")


def write_tree(repo: RepoBuilder) -> RepoBuilder:
    repo.write("pkg/net/retry.py", RETRY)
    for rel in COPIES:
        repo.write(rel, RETRY)
    repo.write("pkg/shapes.py", SHAPES)
    return repo


def holding(results, needle: str) -> list:
    return [h for h in results if needle in h.snippet]


@pytest.fixture
def real_service(repo: RepoBuilder, real_embedder) -> Iterator[Service]:
    service = Service(load_settings({}), embedder=real_embedder)
    service.index(write_tree(repo).root)
    yield service
    service.close()


@pytest.mark.model
@pytest.mark.parametrize("mode", ["hybrid", "semantic", "keyword"])
def test_each_text_answers_once_at_its_source(real_service: Service, mode: str):
    page = real_service.search("wait longer after every failed attempt with exponential "
                               "backoff", mode=mode, limit=10)
    found = holding(page.results, "def backoff_delays")
    assert len(found) == 1, [(h.path, h.start_line) for h in page.results]
    (one,) = found
    assert one.path == "pkg/net/retry.py"
    assert {c.path for c in one.also_in} == set(COPIES)
    assert all(c.start_line == one.start_line for c in one.also_in)
    texts = [h.snippet for h in page.results]
    assert len(texts) == len(set(texts))  # no text twice on the page


def test_lexical_search_still_lists_every_file(real_service: Service):
    page = real_service.search("backoff_delays", mode="lexical", limit=10)
    assert {h.path for h in page.results} == {"pkg/net/retry.py", *COPIES}


@pytest.fixture
def fake_index(isolated_env: Path, repo: RepoBuilder, tmp_path: Path,
               monkeypatch: pytest.MonkeyPatch) -> RepoBuilder:
    service = Service(load_settings({}), embedder=FakeEmbedder())
    service.index(write_tree(repo).root)
    service.close()
    monkeypatch.chdir(tmp_path)  # outside the repository: paths are REPO/PATH
    return repo


def test_cli_names_the_other_places(fake_index: RepoBuilder):
    out = run("search", "backoff_delays attempts cap", "--mode", "keyword").stdout
    assert out.count("def backoff_delays") == 1, out
    # each copy named at the line of the result's own `path:LINE`
    assert "repo/pkg/net/retry.py:5  (+1 more matching lines)" in out.splitlines()
    assert ("also in: repo/docs/snippets/retry.py:5, repo/tests/fixtures/retry.py:5"
            in out.splitlines())
    data = json.loads(run("search", "backoff_delays attempts cap", "--mode", "keyword",
                          "--json").stdout)
    (one,) = [r for r in data["results"] if "def backoff_delays" in r["snippet"]]
    assert one["path"] == "pkg/net/retry.py"
    assert [(c["repository"], c["path"], c["start_line"]) for c in one["also_in"]] == [
        ("repo", "docs/snippets/retry.py", one["start_line"]),
        ("repo", "tests/fixtures/retry.py", one["start_line"])]
    assert all(r["also_in"] == [] for r in data["results"] if r is not one)


def test_mcp_gives_the_list(env_factory, repo: RepoBuilder):
    env: Env = env_factory(**{"server.allowed_roots": [str(repo.root.parent)]})
    env.index(write_tree(repo).root)
    result = env.call("semantic_search", {"query": "backoff_delays attempts cap",
                                          "mode": "keyword"})
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    rows = [r for r in result.structured_content["results"]
            if "def backoff_delays" in r["snippet"]]
    assert len(rows) == 1 and rows[0]["path"] == "pkg/net/retry.py"
    assert {c["path"] for c in rows[0]["also_in"]} == set(COPIES)
    a, b = rows[0]["start_line"], rows[0]["end_line"]
    assert (f"Also in (identical text): repo - docs/snippets/retry.py:{a}-{b}, "
            f"repo - tests/fixtures/retry.py:{a}-{b}") in text(result)
