"""The graph's MCP tools page past their `limit` (issue 38, trials on real trees):
`find_callers` / `find_callees` listed `limit` calls in all, with no cursor past them, and
sorted callers by path, so tests crowded out code; `trace_call_path` listed 5 chains and
said nothing of the others. Through the real MCP client, one index for the module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RepoBuilder
from tests.server.conftest import Env, make_env, text

CODE_CALLERS = [f"use_{n}" for n in range(6)]
TEST_CALLERS = [f"test_{n:02d}" for n in range(12)]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    root = tmp_path_factory.mktemp("pages")
    repo = RepoBuilder(root / "zlib")
    repo.write("zlib/core.py", "def target():\n    return 1\n")
    # Code in `zlib/`, tests in `tests/`: by path, every test comes first.
    repo.write("zlib/use.py", "from zlib.core import target\n" + "".join(
        f"\n\ndef {name}():\n    return target()\n" for name in CODE_CALLERS))
    repo.write("tests/test_core.py", "from zlib.core import target\n" + "".join(
        f"\n\ndef {name}():\n    assert target()\n" for name in TEST_CALLERS))
    # Depth 2: each code caller is called by two others.
    repo.write("zlib/top.py", "from zlib import use\n" + "".join(
        f"\n\ndef top_{n}_{k}():\n    return use.{name}()\n"
        for n, name in enumerate(CODE_CALLERS) for k in range(2)))
    # Seven shortest chains from `main` to `target`.
    repo.write("zlib/main.py", "from zlib.core import target\n" + "".join(
        f"\n\ndef step_{n}():\n    return target()\n" for n in range(7))
        + "\n\ndef main():\n" + "".join(f"    step_{n}()\n" for n in range(7)))
    # `version` in Python and JavaScript, and 40 times in a lockfile.
    repo.write("zlib/meta.py", "def version():\n    return 1\n")
    repo.write("web/meta.js", "export function version() {\n  return 1;\n}\n")
    repo.write("package-lock.json", "{\n" + "".join(
        f'  "node_modules/v{n}": {{"version": "1.0.{n}"}},\n' for n in range(40))
        + '  "x": 1\n}\n')
    made = make_env(root)
    made.embedder.release()
    made.service.index(repo.root)
    yield made
    made.jobs.shutdown(wait=30)
    made.service.close()


def ok(env: Env, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = env.call(tool, args)
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return result.structured_content


def pages(env: Env, tool: str, args: dict[str, Any], key: str) -> list[list[Any]]:
    out: list[list[Any]] = []
    page = ok(env, tool, args)
    for _ in range(50):
        out.append(page[key])
        if not page["next_cursor"]:
            return out
        page = ok(env, tool, {**args, "cursor": page["next_cursor"]})
    raise AssertionError("the cursors never ended")


def names(edges: list[dict[str, Any]]) -> list[str]:
    return [e["definition"]["qualified_name"] for e in edges]


def test_callers_list_code_before_tests_and_a_cursor_pages_past_the_limit(env: Env):
    first = ok(env, "find_callers", {"symbol": "target", "limit": 4})
    assert names(first["edges"]) == ["step_0", "step_1", "step_2", "step_3"]
    assert first["truncated"] and first["next_cursor"]
    body = text(env.call("find_callers", {"symbol": "target", "limit": 4}))
    assert "25 direct, to depth 1" in body and "code before tests" in body
    assert ("4 calls listed so far; there are more: continue with `cursor`. 12 of the direct "
            "callers not listed yet are in tests.") in body
    every = pages(env, "find_callers", {"symbol": "target", "limit": 4}, "edges")
    listed = [n for page in every for n in names(page)]
    whole = names(ok(env, "find_callers", {"symbol": "target", "limit": 1000})["edges"])
    assert listed == whole and len(whole) == len(set(whole)) == 6 + 12 + 7
    assert listed.index(max((n for n in listed if not n.startswith("test_")),
                            key=listed.index)) < min(listed.index(n) for n in TEST_CALLERS)


def test_a_deeper_tree_pages_as_the_whole_tree_and_keeps_its_parents(env: Env):
    args = {"symbol": "target", "depth": 2, "limit": 7}
    every = pages(env, "find_callers", args, "edges")
    whole = ok(env, "find_callers", {**args, "limit": 1000})["edges"]
    listed = [e for page in every for e in page]
    assert [(e["index"], e["parent"], e["definition"]["qualified_name"]) for e in listed] == [
        (e["index"], e["parent"], e["definition"]["qualified_name"]) for e in whole]
    assert [e["index"] for e in listed] == list(range(len(whole)))
    late = ok(env, "find_callers", {**args, "cursor": ok(env, "find_callers", {
        **args, "limit": 25})["next_cursor"]})
    body = text(env.call("find_callers", {**args, "cursor": ok(env, "find_callers", {
        **args, "limit": 25})["next_cursor"]}))
    assert late["edges"][0]["depth"] == 2 and "(listed on an earlier page)" in body


def test_callees_and_call_paths_page_too(env: Env):
    every = pages(env, "find_callees", {"symbol": "main", "limit": 3}, "edges")
    assert [len(p) for p in every] == [3, 3, 1]
    assert [n for p in every for n in names(p)] == [f"step_{n}" for n in range(7)]
    chains = pages(env, "trace_call_path", {"source": "main", "target": "target",
                                            "limit": 3}, "paths")
    assert [len(p) for p in chains] == [3, 3, 1]
    assert [c[0]["name"] for p in chains for c in p] == [f"step_{n}" for n in range(7)]
    one = ok(env, "trace_call_path", {"source": "main", "target": "target", "limit": 3})
    assert one["truncated"] is True
    bad = env.call("find_callers", {"symbol": "target", "cursor": one["next_cursor"]})
    assert bad.is_error and "INVALID_CURSOR" in text(bad)


def test_by_name_searches_code_files_and_says_what_it_skipped(env: Env):
    """A name defined in two languages searched every file: lockfile lines first."""
    data = ok(env, "find_references", {"symbol": "version", "by_name": True})
    assert {u["path"] for u in data["usages"]} <= {"zlib/meta.py", "web/meta.js"}
    body = text(env.call("find_references", {"symbol": "version", "by_name": True}))
    assert ("> Note: searched javascript, python files only (the definitions' languages): "
            "lockfiles, data files, prose and other languages were skipped; `language` "
            "searches one language.") in body


def test_references_list_code_first_and_say_how_many_tests_wait(env: Env):
    data = ok(env, "find_references", {"symbol": "target", "limit": 3})
    assert [u["path"] for u in data["usages"]] == ["zlib/main.py"] * 3
    body = text(env.call("find_references", {"symbol": "target", "limit": 3}))
    assert "Code comes first: 13 of the references not listed yet are in tests." in body


def test_a_tree_past_the_most_one_answer_lists_says_so_without_a_cursor(
        tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "wide")
    repo.write("m.py", "def target():\n    return 1\n" + "".join(
        f"\n\ndef c{i}():\n    return target()\n" for i in range(2005)))
    wide = make_env(tmp_path, **{"search.token_budget": 200000})
    wide.embedder.release()
    try:
        wide.service.index(repo.root)
        first = ok(wide, "find_callers", {"symbol": "target", "limit": 1000})
        second = ok(wide, "find_callers", {"symbol": "target", "limit": 1000,
                                           "cursor": first["next_cursor"]})
        assert len(second["edges"]) == 1000 and second["truncated"]
        assert second["next_cursor"] is None
        assert "The tree stops at 2000 calls" in text(wide.call("find_callers", {
            "symbol": "target", "limit": 1000, "cursor": first["next_cursor"]}))
    finally:
        wide.jobs.shutdown(wait=30)
        wide.service.close()
