"""The graph's MCP tools through the real client: `find_references` (resolved, by name,
cursors), `find_callers`, `find_callees`, `trace_call_path`, and their errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import RepoBuilder
from tests.server.cli.test_graph_cli import FILES
from tests.server.conftest import Env, make_env, text


@pytest.fixture
def graph_env(tmp_path: Path) -> Iterator[Env]:
    repo = RepoBuilder(tmp_path / "shop")
    for path, body in FILES.items():
        repo.write(path, body)
    env = make_env(tmp_path)
    env.embedder.release()
    env.service.index(repo.root)
    yield env
    env.jobs.shutdown(wait=30)
    env.service.close()


def ok(env: Env, tool: str, args: dict[str, object]) -> dict[str, object]:
    result = env.call(tool, args)
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return result.structured_content


def test_find_references_resolved_by_name_and_paged(graph_env: Env):
    data = ok(graph_env, "find_references", {"symbol": "Store"})
    assert [(u["path"], u["line"], u["kind"]) for u in data["usages"]] == [
        ("app/api.py", 1, "import"), ("app/api.py", 5, "call")]
    page = ok(graph_env, "find_references", {"symbol": "Store", "limit": 1})
    assert len(page["usages"]) == 1 and page["next_cursor"]
    rest = ok(graph_env, "find_references", {"symbol": "Store", "limit": 1,
                                             "cursor": page["next_cursor"]})
    assert [u["line"] for u in rest["usages"]] == [5]
    body = text(graph_env.call("find_references", {"symbol": "Store.get"}))
    assert "# References of `Store.get` (method) at shop/app/models.py:2" in body
    assert "- 6:18 call — `return store.get(key) # get, in a comment` (in `handler`)" in body


def test_callers_callees_and_call_paths(graph_env: Env):
    callers = ok(graph_env, "find_callers", {"symbol": "Store.load", "depth": 2})
    assert [(e["depth"], e["definition"]["qualified_name"]) for e in callers["edges"]] == [
        (1, "Store.get"), (2, "handler")]
    callees = ok(graph_env, "find_callees", {"symbol": "main"})
    assert [e["definition"]["qualified_name"] for e in callees["edges"]] == ["handler"]
    paths = ok(graph_env, "trace_call_path", {"source": "main", "target": "Store.load"})
    assert [[e["name"] for e in p] for p in paths["paths"]] == [["handler", "get", "load"]]


def test_graph_tool_errors_say_what_to_do(graph_env: Env):
    ambiguous = graph_env.call("find_callers", {"symbol": "get"})
    assert ambiguous.is_error and "validation_error: 'get' names 2 definitions" in text(
        ambiguous)
    unknown = graph_env.call("find_references", {"symbol": "nope"})
    assert unknown.is_error and "NOT_FOUND: no definition named 'nope'" in text(unknown)
    deep = graph_env.call("find_callees", {"symbol": "main", "depth": 7})
    assert deep.is_error and "depth" in text(deep)


def test_a_call_tree_cut_by_the_budget_continues_with_its_cursor(tmp_path: Path):
    repo = RepoBuilder(tmp_path / "wide")
    callers = "".join(f"\n\ndef caller_{i:02d}():\n    return target()\n" for i in range(40))
    repo.write("m.py", "def target():\n    return 1\n" + callers)
    env = make_env(tmp_path, **{"search.token_budget": 300})
    env.embedder.release()
    try:
        env.service.index(repo.root)
        seen: list[str] = []
        args: dict[str, object] = {"symbol": "target"}
        for _ in range(40):
            data = ok(env, "find_callers", args)
            seen += [e["definition"]["qualified_name"] for e in data["edges"]]
            if not data["next_cursor"]:
                break
            args = {"symbol": "target", "cursor": data["next_cursor"]}
        assert sorted(seen) == [f"caller_{i:02d}" for i in range(40)]
    finally:
        env.jobs.shutdown(wait=30)
        env.service.close()
