"""The project `ctxd serve` runs in (issue 24 item 9), in process: which folder is a
project (`server.project.find_project`), when a server may index it by itself
(`auto_index_refusal`, `open_project`), and how the tools answer from it by default
(`build_server(..., project=...)`), widened by `all_repos` or a `repository`.

Real SQLite files and index jobs with the fake embedder; the MCP tools through the SDK's
in-memory client. The stdio end-to-end run with the real model is test_mcp_project.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxd.server.config import ServerOptions, load_settings
from ctxd.server.jobs import JobManager, JobState
from ctxd.server.mcp.serve import open_project
from ctxd.server.mcp.tools import build_server
from ctxd.server.project import ProjectScope, auto_index_refusal, find_project
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.conftest import run_client, text

# -- which folder is a project --------------------------------------------------------------


def test_the_top_of_a_work_tree_wins_over_a_nearer_manifest(tmp_path: Path):
    home = tmp_path / "home"
    mono = RepoBuilder(home / "src" / "mono")
    (mono.root / ".git").mkdir()
    mono.write("packages/web/package.json", "{}")
    assert find_project(mono.root / "packages" / "web", home) == mono.root
    assert find_project(mono.root, home) == mono.root
    worktree = RepoBuilder(home / "src" / "wt")  # a git worktree: `.git` is a file
    worktree.write(".git", "gitdir: /elsewhere\n")
    worktree.write("deep/er/x.py", "")
    assert find_project(worktree.root / "deep" / "er", home) == worktree.root


@pytest.mark.parametrize("manifest", ["pyproject.toml", "package.json", "go.mod", "Cargo.toml",
                                      "app.csproj", "pom.xml"])
def test_a_folder_with_a_manifest_is_a_project(tmp_path: Path, manifest: str):
    home = tmp_path / "home"
    proj = RepoBuilder(home / "code" / "proj")
    proj.write(manifest, "")
    proj.write("src/inner/x.txt", "")
    assert find_project(proj.root / "src" / "inner", home) == proj.root


def test_home_root_and_plain_folders_are_no_project(tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".git").mkdir()  # a dotfiles repository in the home directory
    (home / "package.json").write_text("{}", encoding="utf-8")
    notes = RepoBuilder(home / "notes")
    notes.write("todo.txt", "")
    assert find_project(home, home) is None
    assert find_project(notes.root, home) is None  # never the home directory above it
    assert find_project("/", home) is None


def test_over_http_only_a_project_inside_the_configured_roots_is_taken(tmp_path: Path):
    proj = tmp_path / "src" / "proj"
    assert auto_index_refusal(proj, "stdio", ()) is None
    assert auto_index_refusal(proj, "http", (str(tmp_path / "src"),)) is None
    assert "not inside the configured server.allowed_roots" in str(
        auto_index_refusal(proj, "http", (str(tmp_path / "other"),)))
    assert "none set" in str(auto_index_refusal(proj, "http", ()))


# -- open_project: index at once, or not -------------------------------------------------------


@pytest.fixture
def service(isolated_env: Path):
    svc = Service(load_settings({}), embedder=FakeEmbedder())
    jobs = JobManager(svc)
    yield svc, jobs
    jobs.shutdown(wait=30)
    svc.close()


def project_tree(root: Path) -> RepoBuilder:
    proj = RepoBuilder(root)
    proj.write("pyproject.toml", "[project]\nname = 'proj'\n")
    proj.write("proj/retry.py", "def backoff_delays(attempts):\n    return [2 ** n for n in "
                                "range(attempts)]\n")
    return proj


def test_an_unindexed_project_is_indexed_in_the_background(service, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch):
    svc, jobs = service
    monkeypatch.setenv("HOME", str(tmp_path))
    proj = project_tree(tmp_path / "proj")
    scope = open_project(svc, jobs, ServerOptions(), proj.root / "proj")
    assert scope is not None and scope.root == proj.root.resolve()
    assert scope.job is not None
    assert scope.job.wait(60).state is JobState.SUCCEEDED
    assert scope.repository() == "proj" and scope.scope(None, False) == ["proj"]
    assert scope.info()["state"] == "indexed" and scope.info()["job"]["state"] == "succeeded"
    # started again inside it: already indexed, no second job
    again = open_project(svc, jobs, ServerOptions(), proj.root / "proj")
    assert again is not None and again.job is None and again.repository() == "proj"


def test_nothing_is_indexed_outside_a_project_or_outside_the_http_roots(
        service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    svc, jobs = service
    monkeypatch.setenv("HOME", str(tmp_path))
    proj = project_tree(tmp_path / "proj")
    assert open_project(svc, jobs, ServerOptions(), tmp_path) is None  # $HOME
    http = ServerOptions(transport="http", allowed_roots=(str(tmp_path / "elsewhere"),))
    assert open_project(svc, jobs, http, proj.root) is None
    assert jobs.jobs() == [] and svc.repo_roots() == {}
    inside = ServerOptions(transport="http", allowed_roots=(str(tmp_path),))
    taken = open_project(svc, jobs, inside, proj.root)
    assert taken is not None and taken.job is not None


# -- the tools answer from the project ----------------------------------------------------------


@pytest.fixture
def scoped(service, tmp_path: Path):
    """A server whose project is `proj`, with another repository `other` indexed too."""
    svc, jobs = service
    proj = project_tree(tmp_path / "proj")
    other = RepoBuilder(tmp_path / "other")
    other.write("other/retry.py", "def backoff_delays(n):\n    return [1] * n\n")
    for r in (proj, other):
        svc.index(r.root)
    scope = ProjectScope(proj.root.resolve(), svc.repo_roots, watched_by="this server")
    server = build_server(svc, jobs, project=scope)
    return lambda tool, args: run_client(server, lambda c: c.call_tool(tool, args))


def repos_of(result, key: str = "results") -> set[str]:
    assert not result.is_error, text(result)
    return {r["repository"] for r in result.structured_content[key]}


def test_tools_answer_from_the_project_unless_widened(scoped):
    call = scoped
    q = {"query": "backoff_delays", "mode": "keyword"}
    found = call("semantic_search", q)
    assert repos_of(found) == {"proj"}
    assert "Searched the project `proj` only" in text(found)
    assert repos_of(call("semantic_search", {**q, "all_repos": True})) == {"proj", "other"}
    assert repos_of(call("semantic_search", {**q, "repository": "other"})) == {"other"}
    assert repos_of(call("search", {"query": "backoff_delays"}), "files") == {"proj"}
    assert repos_of(call("search", {"query": "backoff_delays", "all_repos": True}),
                    "files") == {"proj", "other"}
    assert repos_of(call("search", {"query": "backoff_delays", "repository": "other"}),
                    "files") == {"other"}
    unknown = call("search", {"query": "backoff_delays", "repository": "nope"})
    assert unknown.is_error and "Repository not indexed: nope" in text(unknown)
    # a query that names its repositories is not narrowed
    assert repos_of(call("search", {"query": "repo:other backoff_delays"}), "files") == {"other"}
    assert repos_of(call("semantic_search", {"query": "repo:other backoff_delays",
                                             "mode": "lexical"})) == {"other"}
    assert repos_of(call("search_symbols", {"query": "backoff_delays"}), "items") == {"proj"}
    assert repos_of(call("search_symbols", {"query": "backoff_delays", "all_repos": True}),
                    "items") == {"proj", "other"}
    refs = call("find_references", {"symbol": "backoff_delays"})
    assert {d["repository"] for d in refs.structured_content["definitions"]} == {"proj"}
    assert repos_of(call("search_files", {"pattern": "retry.py"}), "files") == {"proj"}
    assert repos_of(call("search_files", {"pattern": "retry.py", "all_repos": True}),
                    "files") == {"proj", "other"}
    health = call("get_health", {}).structured_content
    assert health["project"]["repository"] == "proj"
    assert health["project"]["watched_by"] == "this server"


def test_a_project_not_in_the_index_says_so_and_how_to_widen(service, tmp_path: Path):
    svc, jobs = service
    proj = project_tree(tmp_path / "proj")
    scope = ProjectScope(proj.root.resolve(), svc.repo_roots)
    server = build_server(svc, jobs, project=scope)
    result = run_client(server, lambda c: c.call_tool("search", {"query": "backoff"}))
    assert result.is_error
    assert f"The project {proj.root.resolve()} is not indexed" in text(result)
    assert "all_repos: true" in text(result) and "index_repository" in text(result)
    health = run_client(server, lambda c: c.call_tool("get_health", {})).structured_content
    assert health["project"]["state"] == "not indexed"


def test_a_folder_indexed_through_the_server_is_searched_beside_its_project(
        isolated_env: Path, tmp_path: Path):
    """A server launched in one checkout (a harness's, an editor's) and asked to index
    another folder answered from the first alone: the folder the agent asked for was
    never searched unless it also passed `all_repos`. Folders indexed through the server
    join the default scope; others indexed elsewhere stay out."""
    svc = Service(load_settings({"server.allowed_roots": [str(tmp_path)]}),
                  embedder=FakeEmbedder())
    jobs = JobManager(svc)
    try:
        proj = project_tree(tmp_path / "proj")
        asked = RepoBuilder(tmp_path / "asked")
        asked.write("lib/retry.py", "def backoff_delays(n):\n    return [3] * n\n")
        elsewhere = RepoBuilder(tmp_path / "elsewhere")
        elsewhere.write("e/retry.py", "def backoff_delays(n):\n    return [4] * n\n")
        svc.index(elsewhere.root)
        scope = ProjectScope(proj.root.resolve(), svc.repo_roots)
        server = build_server(svc, jobs, project=scope)

        async def session(c):
            # the project itself is not indexed yet: the asked-for folder answers alone
            done = await c.call_tool("index_repository", {"path": str(asked.root)})
            assert not done.is_error, text(done)
            only = await c.call_tool("search", {"query": "backoff_delays"})
            svc.index(proj.root)
            both = await c.call_tool("semantic_search",
                                     {"query": "backoff_delays", "mode": "keyword"})
            return only, both

        only, both = run_client(server, session)
        assert repos_of(only, "files") == {"asked"}
        assert repos_of(both) == {"proj", "asked"}
        assert "Searched `proj`, `asked` only" in text(both)
    finally:
        jobs.shutdown(wait=30)
        svc.close()
