"""MCP answers that stay true under odd use (issue 9): line numbers of lexical hits, paging
after a token-budget cut, validation of kinds and mistyped arguments, each line shown once,
one NOT_FOUND for unknown repositories, NUL in queries, the health Markdown.

Every tool is called through the SDK's in-memory client over a real SQLite index (fake
embedder); nothing of ours is mocked.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
from typing import Any

import pytest

from ctxd.server.mcp import markdown_status as status_md
from ctxd.server.watch.status import RepoWatchHealth
from tests.conftest import RepoBuilder
from tests.indexer.walk.test_gitrefs import git
from tests.server.conftest import Env, text
from tests.server.mcp.test_mcp_tools import err, many_files, ok

NUMBERED = re.compile(r"^\s*(\d+)[:-] (.*)$")


def numbered_lines(body: str) -> list[tuple[int, str]]:
    """Every `N: text` / `N- text` line of the answer's code fences."""
    return [(int(m.group(1)), m.group(2)) for ln in body.splitlines()
            if (m := NUMBERED.match(ln))]


# -- item 5: lexical hits in semantic_search keep each block's own line numbers --------------


def test_semantic_search_lexical_mode_numbers_every_block_from_its_own_line(
    env: Env, sample_repo: RepoBuilder
):
    lines = [f"filler_{n} = {n}" for n in range(1, 81)]
    lines[9] = "first_unique_marker = 10"
    lines[59] = "second_unique_marker = 60"
    sample_repo.write("far.py", "\n".join(lines) + "\n")
    env.index(sample_repo.root)
    result = env.call("semantic_search", {"query": "unique_marker", "mode": "lexical"})
    body, data = text(result), ok(result)
    assert "far.py:7-13, 57-63" in body  # each block's own range, not one across the file
    shown = numbered_lines(body)
    assert shown, body
    for n, line_text in shown:
        assert line_text == lines[n - 1], (n, line_text)
    assert (10, "first_unique_marker = 10") in shown and (60, "second_unique_marker = 60") in shown
    (hit,) = data["results"]
    assert (hit["start_line"], hit["end_line"]) == (7, 63)
    assert hit["snippet"].split("\n") == lines[6:13]
    for block in hit["context"]:
        start = block["start_line"]
        assert block["lines"] == lines[start - 1 : start - 1 + len(block["lines"])]


# -- item 7: a token-budget cut keeps the page size the caller asked for ---------------------


def cursor_payload(cursor: str) -> dict[str, Any]:
    return json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))


@pytest.mark.parametrize(("tool", "args", "key"), [
    ("search", {"query": "needle", "limit": 100}, "files"),
    ("search_files", {"pattern": "*.py", "limit": 500}, "files"),
    ("semantic_search", {"query": "needle", "limit": 100, "mode": "keyword"}, "results"),
])
def test_pages_after_a_budget_cut_keep_the_requested_page_size(
    env_factory: Any, sample_repo: RepoBuilder, tool: str, args: dict[str, Any], key: str
):
    env = env_factory(**{"server.allowed_roots": [str(sample_repo.root.parent)],
                         "search.token_budget": 1000})
    many_files(sample_repo, 90, lines=6)  # one page holds all: no next page of its own
    env.index(sample_repo.root)
    data = ok(env.call(tool, args))
    first = len(data[key])
    assert data["truncated"] and 1 < first < args["limit"], first
    payload = cursor_payload(data["next_cursor"])
    assert (payload["o"], payload["l"]) == (first, args["limit"])
    second = ok(env.call(tool, {**args, "cursor": data["next_cursor"]}))
    assert len(second[key]) > 1
    if second["next_cursor"]:
        assert cursor_payload(second["next_cursor"])["l"] == args["limit"]


# -- item 18: search shows each matching line once ------------------------------------------


def test_search_shows_each_matching_line_once(indexed: Env):
    body = text(indexed.call("search", {"query": "backoff_delays", "contextLines": 1}))
    assert body.count("def backoff_delays(attempts, base=0.5, cap=30.0):") == 1
    assert " 5: def backoff_delays(" in body and "Line 5:" not in body


# -- item 19: one NOT_FOUND for unknown repositories and tools -------------------------------


@pytest.mark.parametrize(("tool", "args"), [
    ("semantic_search", {"query": "retry", "repository": "nope"}),
    ("search_files", {"pattern": "retry", "repository": "nope"}),
    ("find_references", {"symbol": "retry", "repository": "nope"}),
    ("file_content", {"repository": "nope", "path": "net/retry.py"}),
])
def test_an_unknown_repository_is_the_same_not_found_everywhere(
    indexed: Env, tool: str, args: dict[str, Any]
):
    body = err(indexed.call(tool, args), "NOT_FOUND")
    assert f"Error executing tool {tool}: NOT_FOUND: Repository not indexed: nope\n" in body
    assert "Hint: Indexed repositories: sample. Run `ctxd index PATH` first" in body
    assert 'Details: {"field": "repository", "value": "nope"}' in body


def test_an_unknown_tool_is_not_found_with_the_list_of_tools(env: Env):
    result = env.call("search_everything", {"query": "x"})
    body = text(result)
    assert result.is_error
    assert body.startswith("NOT_FOUND: Unknown tool: search_everything\nHint: This server's "
                           "tools: file_content, find_callees, find_callers, "
                           "find_references, get_health")


# -- item 10: unknown kinds and mistyped arguments are validation errors that say so ---------


def test_an_unknown_symbol_kind_is_a_validation_error_listing_the_valid_ones(indexed: Env):
    body = err(indexed.call("search_symbols", {"query": "Circle", "kinds": ["klass"]}),
               "validation_error")
    assert "unknown symbol kind 'klass' in kinds" in body
    assert "Hint: Use one or more of: class, constant, constructor," in body
    assert '"field": "kinds", "value": "klass"' in body
    data = ok(indexed.call("search_symbols", {"query": "Circle", "kinds": ["CLASS"]}))
    assert [i["name"] for i in data["items"]] == ["Circle"]
    data = ok(indexed.call("search_symbols", {"query": "total_area", "kinds": ["func"]}))
    assert [(i["name"], i["kind"]) for i in data["items"]] == [("total_area", "function")]


@pytest.mark.parametrize(("args", "sent"), [
    ({"query": "x", "limit": "ten"}, '"ten"'),
    ({"query": "x", "limit": None}, "null"),
])
def test_a_mistyped_argument_reports_the_value_sent_and_what_is_expected(
    indexed: Env, args: dict[str, Any], sent: str
):
    body = err(indexed.call("search", args), "validation_error")
    assert (f"invalid arguments for search: limit: got {sent}, expected an integer from 1 to "
            "100 (default 30; omit it for the default)") in body
    assert "None" not in body


# -- item 11: list_repos shows the checked-out branch; file_content serves only it ----------


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_list_repos_and_file_content_tell_the_checked_out_branch(
    env: Env, sample_repo: RepoBuilder
):
    root = sample_repo.root
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "sample")
    sha = git(root, "rev-parse", "HEAD")
    env.index(root)
    result = env.call("list_repos", {})
    body, data = text(result), ok(result)
    assert f"Branches: main@{sha[:7]} (working tree)" in body
    assert data["repositories"][0]["branches"] == [{"name": "main", "sha": sha}]
    for asked in ("HEAD", "main", sha[:7]):
        fc = env.call("file_content", {"repository": "sample", "path": "main.py",
                                       "branch": asked})
        assert ok(fc)["branch"] == "main"
        assert text(fc).startswith("## sample/main.py\n\nBranch: main (working tree) |")
    body = err(env.call("file_content", {"repository": "sample", "path": "main.py",
                                         "branch": "develop"}), "validation_error")
    assert (f"branch 'develop' is not served: sample is read from its working tree, which has "
            f"main@{sha[:7]} checked out") in body


def test_list_repos_outside_git_says_working_tree(indexed: Env):
    result = indexed.call("list_repos", {})
    assert "Branches: working tree (not git)" in text(result)
    assert ok(result)["repositories"][0]["branches"] == []


# -- item 22: a NUL character in a query is a query error, not an internal error -------------


@pytest.mark.parametrize(("tool", "args"), [
    ("search", {"query": "retry\x00x"}),
    ("search", {"query": "/re\x00try/"}),
    ("semantic_search", {"query": "retry\x00x", "mode": "lexical"}),
    ("semantic_search", {"query": "retry\x00x", "mode": "keyword"}),
])
def test_a_nul_character_in_a_query_is_a_query_error(
    indexed: Env, tool: str, args: dict[str, Any]
):
    body = err(indexed.call(tool, args), "QUERY_ERROR")
    assert "Query syntax error: the query contains a NUL character (\\x00) at position" in body
    assert "internal_error" not in body


# -- item 16: get_health renders the watch block like the other sections ---------------------


def test_health_markdown_renders_the_watch_block_without_raw_json_and_with_rfc3339_times():
    repo = RepoWatchHealth(name="shop", root="/src/shop", watching=True, mode="inotify",
                           pending=3, pending_since=1767225600.25, last_update=None, lag_ms=120)
    health = {"ok": True, "lexical_backend": "embedded",
              "watch": {"running": True, "pid": 42, "role": "active",
                        "started_at": "2026-01-01T00:00:00.000Z", "batches": 7,
                        "repos": {"shop": repo.to_dict()}}}
    body = status_md.render_health(health, budget=6000).markdown
    assert "{" not in body and "1767225600" not in body
    assert "- watch: running: yes, pid: 42, role: active, started_at: 2026-01-01T00:00:00.000Z" in (
        body)
    assert ("    - shop: name: shop, root: /src/shop, watching: yes, mode: inotify, pending: 3, "
            "pending_since: 2026-01-01T00:00:00.250Z, last_update: -, lag_ms: 120") in body


def test_get_health_has_no_raw_json(indexed: Env):
    body = text(indexed.call("get_health", {}))
    assert "{" not in body and "- watch: running: no" in body


# -- item 6: file_content's structured content is the file, final newline included -----------


def test_file_content_structured_content_is_the_whole_file(indexed: Env, sample_repo: RepoBuilder):
    data = ok(indexed.call("file_content", {"repository": "sample", "path": "net/retry.py"}))
    assert data["content"] == (sample_repo.root / "net" / "retry.py").read_text(encoding="utf-8")
    part = ok(indexed.call("file_content", {"repository": "sample", "path": "net/retry.py",
                                            "start_line": 16}))
    assert part["content"] == '            time.sleep(delay)\n    raise RuntimeError("gave up")\n'
