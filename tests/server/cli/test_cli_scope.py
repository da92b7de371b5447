"""The CLI searches the repository it runs in, and names paths one way (issue 24 items 7
and 8): from inside an indexed repository `search`, `symbols`, `refs` and `files` answer
from it alone, say so once on stderr with the flag that widens them (`-a`/`--all-repos`),
and print its paths relative to the current folder (other repositories' as REPO/PATH);
`--repo` wins, a lexical query naming `repo:` is not narrowed, and outside every
repository nothing changes.

Two repositories indexed by the service (fake embedder, real SQLite file); the CLI runs
through `CliRunner` with the current folder set explicitly (the tests' own folder is the
ctxd checkout)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.cli.test_cli_hardening import run

NOTE = "note: searching repository `alpha` only (the current folder is in it); " \
       "-a (--all-repos) searches all 2 indexed repositories"


@pytest.fixture
def two(isolated_env: Path, tmp_path: Path) -> tuple[RepoBuilder, RepoBuilder]:
    alpha, beta = RepoBuilder(tmp_path / "alpha"), RepoBuilder(tmp_path / "beta")
    alpha.write("pkg/tools.py", "def shared_helper(x):\n    return x + 1\n\n\n"
                                "def use_it():\n    return shared_helper(2)\n")
    beta.write("lib/other.py", "def shared_helper(y):\n    return y * 2\n")
    service = Service(load_settings({}), embedder=FakeEmbedder())
    for r in (alpha, beta):
        service.index(r.root)
    service.close()
    return alpha, beta


def test_search_inside_a_repository_stays_in_it(two, monkeypatch: pytest.MonkeyPatch):
    alpha, _beta = two
    monkeypatch.chdir(alpha.root / "pkg")
    for mode in ("lexical", "keyword"):
        r = run("search", "shared_helper", "--mode", mode, "-l")
        assert r.exit_code == 0, r.output
        assert r.stdout.splitlines() == ["tools.py"]  # relative to the current folder
        assert r.stderr.count(NOTE) == 1, r.stderr
    wide = run("search", "shared_helper", "--mode", "lexical", "-l", "--all-repos")
    assert sorted(wide.stdout.splitlines()) == ["beta/lib/other.py", "tools.py"]
    assert "note:" not in wide.stderr
    assert sorted(run("search", "shared_helper", "--mode", "lexical", "-l", "-a")
                  .stdout.splitlines()) == ["beta/lib/other.py", "tools.py"]
    chosen = run("search", "shared_helper", "--mode", "lexical", "-l", "--repo", "beta")
    assert chosen.stdout.splitlines() == ["beta/lib/other.py"] and "note:" not in chosen.stderr
    # a lexical query that names its repository is not narrowed to the current one
    named = run("search", "repo:beta shared_helper", "--mode", "lexical", "-l")
    assert named.stdout.splitlines() == ["beta/lib/other.py"]
    data = json.loads(run("search", "shared_helper", "--mode", "lexical", "--json").stdout)
    assert {(h["repository"], h["path"]) for h in data["results"]} == {("alpha", "pkg/tools.py")}


def test_symbols_refs_and_files_stay_in_it_and_print_the_same_paths(
        two, monkeypatch: pytest.MonkeyPatch):
    alpha, _beta = two
    monkeypatch.chdir(alpha.root / "pkg")
    sym = run("symbols", "shared_helper")
    assert sym.exit_code == 0
    assert sym.stdout.splitlines()[0].split() == ["function", "shared_helper", "tools.py:1"]
    assert "beta" not in sym.stdout and sym.stderr.count(NOTE) == 1
    refs = run("refs", "shared_helper")
    assert refs.stdout.splitlines() == [
        "shared_helper (function) at tools.py:1: 1 references", "", "tools.py",
        "  6:12  call      return shared_helper(2)  in use_it"]
    assert refs.stderr.count(NOTE) == 1
    files = run("files", "**/*.py")
    assert files.stdout.splitlines() == ["tools.py"] and files.stderr.count(NOTE) == 1
    # widened: the other repository's paths are REPO/PATH, this one's stay relative
    every = run("symbols", "shared_helper", "-a").stdout
    assert {ln.split()[-1] for ln in every.splitlines()[:2]} == {"tools.py:1",
                                                                 "beta/lib/other.py:1"}
    assert "use   tools.py:6:12" in run("refs", "shared_helper", "--all-repos",
                                      "--by-name").stdout
    assert sorted(run("files", "**/*.py", "-a").stdout.splitlines()) == [
        "beta/lib/other.py", "tools.py"]


def test_outside_every_repository_all_answer_as_repo_path(two, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    r = run("search", "shared_helper", "--mode", "lexical", "-l")
    assert sorted(r.stdout.splitlines()) == ["alpha/pkg/tools.py", "beta/lib/other.py"]
    assert "note:" not in r.stderr
    assert sorted(run("files", "**/*.py").stdout.splitlines()) == [
        "alpha/pkg/tools.py", "beta/lib/other.py"]
    sym = run("symbols", "shared_helper").stdout.splitlines()
    assert {ln.split()[-1] for ln in sym[:2]} == {"alpha/pkg/tools.py:1", "beta/lib/other.py:1"}


def test_one_repository_indexed_needs_no_note(isolated_env: Path, repo: RepoBuilder,
                                              monkeypatch: pytest.MonkeyPatch):
    repo.write("a.py", "def lonely():\n    return 1\n")
    service = Service(load_settings({}), embedder=FakeEmbedder())
    service.index(repo.root)
    service.close()
    monkeypatch.chdir(repo.root)
    r = run("search", "lonely", "--mode", "lexical", "-l")
    assert r.stdout.splitlines() == ["a.py"] and r.stderr == ""
