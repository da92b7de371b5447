"""Every MCP tool through the SDK's in-memory client: schemas, happy paths, each error code,
paging to the end with cursors, and the token budget.

The server runs over a real index with the fake embedder, each test on both stores (a
SQLite file in a temp folder, a fresh PostgreSQL schema); nothing of ours is mocked. Zoekt
errors come from local stand-in servers (a closed port, a server that never answers).
"""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path
from typing import Any

import pytest
from mcp_types import CallToolResult, ListRootsResult, Root

from ctxd.search.cursor import with_offset as rebase_cursor
from ctxd.server.mcp import markdown as md
from ctxd.server.version import package_version
from tests.conftest import RepoBuilder
from tests.search.zoekt.zoekt_fixture_server import closed_port
from tests.server.conftest import TOOLS_EXPECTED, Env, run_client, text


@pytest.fixture(autouse=True)
def each_store(store_url: str) -> str:
    """Every tool test runs on both stores: the SQLite file, and a PostgreSQL store (the
    `store_url` fixture sets CTXD_STORE_URL, which the servers' settings read)."""
    return store_url


def ok(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return result.structured_content


def err(result: CallToolResult, code: str) -> str:
    body = text(result)
    assert result.is_error, body
    assert f": {code}: " in body, body
    return body


def details(body: str) -> dict[str, Any]:
    line = next(ln for ln in body.splitlines() if ln.startswith("Details: "))
    return json.loads(line[len("Details: "):])


def many_files(repo: RepoBuilder, n: int, *, lines: int = 3, word: str = "needle") -> None:
    for i in range(n):
        body = "".join(f"value_{i}_{j} = '{word} {i} {j}'\n" for j in range(lines))
        repo.write(f"pkg/mod_{i:03d}.py", f'"""Module {i}."""\n\n' + body)


# -- schemas and server info ---------------------------------------------------------------


def test_server_lists_every_tool_with_described_schemas(env: Env):
    tools = run_client(env.server, lambda c: c.list_tools()).tools
    assert {t.name for t in tools} == TOOLS_EXPECTED
    for t in tools:
        assert t.description and len(t.description) > 30, t.name
        assert t.output_schema is not None and t.output_schema.get("type") == "object", t.name
        for name, prop in t.input_schema.get("properties", {}).items():
            assert prop.get("description"), f"{t.name}.{name} has no description"
        read_only = t.annotations is not None and t.annotations.read_only_hint
        assert read_only == (t.name != "index_repository"), t.name


def test_index_repository_input_schema_is_the_original_contract(env: Env):
    tools = {t.name: t for t in run_client(env.server, lambda c: c.list_tools()).tools}
    schema = tools["index_repository"].input_schema
    props = schema["properties"]
    # The contract's four, plus optional extensions: `force` (issue 9, item 24) lets a
    # client insist on indexing / or a home directory; `reset_options` (issue 15, item 5)
    # forgets the patterns given to earlier calls.
    assert set(props) == {"path", "include_patterns", "exclude_patterns", "max_file_size",
                          "force", "reset_options"}
    for flag in ("force", "reset_options"):
        assert props[flag]["type"] == "boolean" and props[flag]["default"] is False
    assert schema["required"] == ["path"]
    assert props["path"]["type"] == "string" and props["path"]["minLength"] == 1
    for name in ("include_patterns", "exclude_patterns"):
        assert props[name]["type"] == "array" and props[name]["items"] == {"type": "string"}
        assert props[name]["default"] == []
    size = props["max_file_size"]
    assert (size["type"], size["default"], size["minimum"], size["maximum"]) == (
        "integer", 1048576, 0, 10485760)
    out = tools["index_repository"].output_schema["properties"]
    for field in ("path", "files_indexed", "include_patterns", "exclude_patterns",
                  "max_file_size", "indexed_at", "files_unchanged", "files_removed",
                  "files_skipped", "files_failed", "checkpoints", "duration_ms"):
        assert field in out


def test_search_input_schema_has_the_contract_bounds_and_defaults(env: Env):
    tools = {t.name: t for t in run_client(env.server, lambda c: c.list_tools()).tools}
    props = tools["search"].input_schema["properties"]
    assert tools["search"].input_schema["required"] == ["query"]
    assert (props["limit"]["minimum"], props["limit"]["maximum"], props["limit"]["default"]) == (
        1, 100, 30)
    ctx = props["contextLines"]
    assert (ctx["minimum"], ctx["maximum"], ctx["default"]) == (0, 10, 3)
    assert "cursor" in props
    sem = tools["semantic_search"].input_schema["properties"]
    assert sem["mode"]["default"] == "hybrid"
    assert {"hybrid", "semantic", "lexical"} <= set(sem["mode"]["enum"])
    assert {"repository", "path", "language", "limit", "cursor"} <= set(sem)
    sym = tools["search_symbols"].input_schema["properties"]
    # the contract's arguments, plus the scope (a server runs in a project: issue 24)
    assert set(sym) == {"query", "kinds", "max_items", "start_index", "pagination_id",
                        "repository", "all_repos"}
    fc = tools["file_content"].input_schema
    assert fc["required"] == ["repository", "path"]
    assert fc["properties"]["branch"]["default"] == "HEAD"
    assert set(tools["list_repos"].input_schema["properties"]) == {"filter"}


def test_server_info_is_ctxd_with_the_package_version(env: Env):
    info = run_client(env.server, lambda c: _server_info(c), mode="legacy")
    assert info.name == "ctxd"
    assert info.version == package_version() != "0+unknown"


async def _server_info(client: Any) -> Any:
    return client.server_info


# -- index_repository / index_status -------------------------------------------------------


def test_index_repository_reports_the_contract_fields(env: Env, sample_repo: RepoBuilder):
    sample_repo.write("big.txt", "Plain words of prose.\n" * 230)  # embedded, so 4096 caps it
    sample_repo.write_bytes("logo.png", b"\x89PNG\x00\x01")
    data = ok(env.call("index_repository", {"path": str(sample_repo.root),
                                            "exclude_patterns": ["*.md"],
                                            "max_file_size": 4096}))
    assert data["path"] == str(sample_repo.root.resolve())
    assert data["files_indexed"] == 3
    assert data["exclude_patterns"] == ["*.md"] and data["include_patterns"] == []
    assert data["max_file_size"] == 4096
    assert data["files_skipped"]["too_large"] == 1 and data["files_skipped"]["excluded"] == 1
    assert data["files_failed"] == 0 and data["checkpoints"] >= 3
    assert data["indexed_at"].endswith("Z") and data["job_id"]
    again = ok(env.call("index_repository", {"path": str(sample_repo.root),
                                             "reset_options": True}))
    # Without the exclude and the size limit, README.md and big.txt come in; the rest is unchanged.
    assert (again["files_unchanged"], again["files_updated"], again["files_indexed"]) == (3, 2, 5)


def test_index_repository_sends_progress_notifications(env: Env, sample_repo: RepoBuilder):
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))
        env.embedder.release()  # the job waits at its first file until we hear from it

    env.embedder.arm(after=0)
    result = run_client(env.server, lambda c: c.call_tool(
        "index_repository", {"path": str(sample_repo.root)}, progress_callback=progress))
    assert ok(result)["files_indexed"] == 4
    assert seen, "no progress notification arrived"
    values = [v for v, _t, _m in seen]
    assert values == sorted(values)


def test_long_index_run_continues_as_a_background_job(
    env_factory: Any, sample_repo: RepoBuilder
):
    env = env_factory(**{"server.allowed_roots": [str(sample_repo.root.parent)],
                         "server.index_wait_seconds": 0})
    env.embedder.arm(after=0)
    # A job that goes on in the background is a normal answer, not an error.
    started = env.call("index_repository", {"path": str(sample_repo.root)})
    info, body = ok(started), text(started)
    assert info["job_id"] == "idx-1" and info["state"] in ("running", "queued")
    assert info["follow"] == 'index_status with job_id "idx-1"'
    assert "continues in the background as job `idx-1`" in body and "index_status" in body
    assert "error" not in body.lower()
    # Asking again while it runs joins the same job instead of starting another.
    assert ok(env.call("index_repository", {"path": str(sample_repo.root)}))["job_id"] == "idx-1"
    assert env.embedder.reached.wait(10)
    running = ok(env.call("index_status", {"job_id": "idx-1"}))
    assert running["jobs"][0]["state"] == "running" and running["jobs"][0]["result"] is None
    assert running["freshness"] == [{"repository": "sample", "indexed_at": None,
                                     "indexing": True}]
    assert "re-indexing now" in text(env.call("index_status", {}))
    env.embedder.release()
    done = ok(env.call("index_status", {"job_id": "idx-1", "wait_seconds": 60}))
    job = done["jobs"][0]
    assert job["state"] == "succeeded" and job["result"]["files_indexed"] == 4
    assert job["progress"] == job["total"]
    listing = ok(env.call("index_status", {}))
    assert [j["job_id"] for j in listing["jobs"]] == ["idx-1"]


def test_index_status_of_an_unknown_job_is_not_found(env: Env):
    body = err(env.call("index_status", {"job_id": "idx-99"}), "NOT_FOUND")
    assert "Job not found: idx-99" in body


def test_index_repository_refuses_paths_outside_the_allowed_roots(
    env: Env, sample_repo: RepoBuilder, tmp_path: Path
):
    outside = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    outside.mkdir()
    try:
        body = err(env.call("index_repository", {"path": str(outside)}), "validation_error")
        assert str(sample_repo.root.parent.resolve()) in body
        assert details(body)["allowed_roots"] == [str(sample_repo.root.parent.resolve())]
        # A symlink inside the root that leads out is judged by where it leads.
        link = sample_repo.root.parent / "link-out"
        link.symlink_to(outside, target_is_directory=True)
        assert details(err(env.call("index_repository", {"path": str(link)}),
                           "validation_error"))["resolved"] == str(outside.resolve())
        err(env.call("index_repository", {"path": "../.."}), "validation_error")
    finally:
        outside.rmdir()


def test_index_repository_validates_its_input(env: Env, sample_repo: RepoBuilder):
    missing = sample_repo.root / "nope"
    body = err(env.call("index_repository", {"path": str(missing)}), "validation_error")
    assert "path does not exist" in body and details(body)["field"] == "path"
    body = err(env.call("index_repository", {"path": str(sample_repo.root),
                                             "include_patterns": ["[oops"]}), "validation_error")
    assert details(body)["field"] == "include_patterns"
    body = err(env.call("index_repository", {"path": str(sample_repo.root),
                                             "max_file_size": 20971520}), "validation_error")
    field = details(body)["fields"][0]
    assert field["field"] == "max_file_size" and field["value"] == 20971520
    assert "10485760" in field["problem"]
    assert env.jobs.jobs() == []


def test_index_repository_uses_the_roots_the_client_declares(
    env_factory: Any, sample_repo: RepoBuilder, tmp_path: Path
):
    env = env_factory()  # no configured allowed_roots

    async def roots(_ctx: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=sample_repo.root.as_uri(), name="sample")])

    for mode in ("auto", "legacy"):
        ok(env.call("index_repository", {"path": str(sample_repo.root)},
                    list_roots_callback=roots, mode=mode))
    body = err(env.call("index_repository", {"path": str(tmp_path)}, list_roots_callback=roots),
               "validation_error")
    assert details(body)["allowed_roots"] == [str(sample_repo.root.resolve())]
    # A relative path is taken relative to the first root.
    assert ok(env.call("index_repository", {"path": "."},
                       list_roots_callback=roots))["path"] == str(sample_repo.root.resolve())


def test_index_repository_falls_back_to_the_working_directory(
    env_factory: Any, sample_repo: RepoBuilder, monkeypatch: pytest.MonkeyPatch
):
    env = env_factory()
    monkeypatch.chdir(sample_repo.root.parent)
    assert ok(env.call("index_repository", {"path": "sample"}))["files_indexed"] == 4
    body = err(env.call("index_repository", {"path": "/"}), "validation_error")
    assert str(sample_repo.root.parent.resolve()) in body


# -- search (Zoekt syntax) -----------------------------------------------------------------


def test_search_renders_the_contract_layout(indexed: Env):
    result = indexed.call("search", {"query": "backoff_delays", "contextLines": 1})
    data, body = ok(result), text(result)
    assert body.startswith("## Results for: `backoff_delays`")
    assert "### sample - net/retry.py\nLanguage: python | Branch: HEAD" in body
    assert "```python\n" in body
    assert " 5: def backoff_delays(" in body  # numbered match line
    assert "Line 5:" not in body  # each line once: the fence marks matches with `N:`
    assert f"Stats: {data['match_count']} matches in {data['file_count']} files (" in body
    assert "_Index freshness: `sample` indexed 20" in body
    assert data["file_count"] == 2 and {f["path"] for f in data["files"]} == {
        "net/retry.py", "main.py"}
    first = data["files"][0]
    assert first["matches"] and first["context"] and first["branches"] is not None
    assert data["freshness"][0]["repository"] == "sample" and not data["truncated"]


def test_search_pages_through_every_file_with_cursors(
    env: Env, sample_repo: RepoBuilder
):
    many_files(sample_repo, 23)
    env.index(sample_repo.root)
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        args: dict[str, Any] = {"query": "needle", "limit": 5}
        if cursor:
            args["cursor"] = cursor
        data = ok(env.call("search", args))
        seen.extend(f["path"] for f in data["files"])
        pages += 1
        cursor = data["next_cursor"]
        if cursor is None:
            break
        assert "More results available" in text(env.call("search", args))
    assert pages == 5 and len(seen) == 23 == len(set(seen))


def test_search_errors_are_readable(indexed: Env):
    body = err(indexed.call("search", {"query": "/(unclosed/"}), "QUERY_ERROR")
    assert "Query syntax error" in body and "Hint:" in body
    body = err(indexed.call("search", {"query": "needle", "cursor": "garbage"}), "INVALID_CURSOR")
    other = ok(indexed.call("search", {"query": "def", "limit": 1}))["next_cursor"]
    assert other
    err(indexed.call("search", {"query": "class", "cursor": other}), "INVALID_CURSOR")
    body = err(indexed.call("search", {"query": "x", "limit": 0}), "validation_error")
    assert details(body)["fields"][0]["field"] == "limit"
    body = err(indexed.call("search", {"limit": 5}), "validation_error")
    assert details(body)["fields"] == [{"field": "query", "problem": "is required"}]
    body = err(indexed.call("search", {"query": "x", "contextLines": "many"}), "validation_error")
    assert details(body)["fields"][0]["field"] == "contextLines"


def test_search_reports_an_unreachable_zoekt_as_unavailable(env_factory: Any):
    with closed_port() as port:
        url = f"http://127.0.0.1:{port}"
        env = env_factory(**{"search.zoekt_url": url})
        body = err(env.call("search", {"query": "foo"}), "UNAVAILABLE")
    assert f"Search backend unavailable at {url}. Ensure zoekt-webserver is running." in body


def test_search_reports_a_zoekt_timeout(env_factory: Any):
    # A listening socket that never accepts: connecting works, no answer ever comes.
    with socket.create_server(("127.0.0.1", 0)) as silent:
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        env = env_factory(**{"search.zoekt_url": url, "search.zoekt_timeout_ms": 300})
        body = err(env.call("search", {"query": "foo"}), "TIMEOUT")
    assert "Search timed out after 300ms. Try a more specific query." in body


# -- semantic_search ---------------------------------------------------------------------


def test_semantic_search_says_which_engines_found_each_hit(indexed: Env):
    result = indexed.call("semantic_search", {"query": "exponential backoff retry delays"})
    data, body = ok(result), text(result)
    assert data["mode"] == "hybrid" and data["results"]
    top = next(h for h in data["results"] if h["path"] == "net/retry.py")
    assert set(top["sources"]) <= {"semantic", "lexical", "symbol", "keyword"} and top["sources"]
    assert body.startswith("## Results for: `exponential backoff retry delays` (hybrid)")
    assert "### 1. sample - " in body and "sample - net/retry.py:1-" in body
    assert "Found by: " in body
    assert "_Index freshness: `sample` indexed" in body


def test_semantic_search_filters_and_modes(indexed: Env):
    py = ok(indexed.call("semantic_search", {"query": "shapes area", "language": "python",
                                             "mode": "semantic"}))
    assert py["mode"] == "semantic" and all(h["language"] == "python" for h in py["results"])
    md_only = ok(indexed.call("semantic_search", {"query": "usage", "path": "*.md"}))
    assert {h["path"] for h in md_only["results"]} == {"README.md"}
    repo = ok(indexed.call("semantic_search", {"query": "circle", "repository": "sample"}))
    assert repo["freshness"] == [{"repository": "sample", "indexed_at": repo["freshness"][0][
        "indexed_at"], "indexing": False}]
    body = err(indexed.call("semantic_search", {"query": "x", "repository": "nope"}), "NOT_FOUND")
    assert "Repository not indexed: nope" in body
    err(indexed.call("semantic_search", {"query": "x", "mode": "telepathic"}), "validation_error")


def test_semantic_search_pages_to_the_end(env: Env, sample_repo: RepoBuilder):
    many_files(sample_repo, 12, lines=2)
    env.index(sample_repo.root)
    seen, cursor = [], None
    for _ in range(20):
        args: dict[str, Any] = {"query": "needle module value", "limit": 4, "mode": "semantic"}
        if cursor:
            args["cursor"] = cursor
        data = ok(env.call("semantic_search", args))
        seen.extend((h["path"], h["start_line"]) for h in data["results"])
        cursor = data["next_cursor"]
        if not cursor:
            break
    assert cursor is None
    assert len(seen) == len(set(seen)) >= 16  # every checkpoint of the repository


# -- search_symbols / find_references ---------------------------------------------------


def test_search_symbols_renders_the_table_and_pages(indexed: Env):
    result = indexed.call("search_symbols", {"query": "area"})
    body = text(result)
    assert body.startswith("# Search: `area`\nFound 3 results: 2 exact, then 1 similar "
                           "(prefix, substring or fuzzy)\n")
    assert "| Name | Kind | Location |\n|------|------|----------|" in body
    assert "| `area` (in `Shape`) | method | shapes.py:7 |" in body
    assert "| `total_area` | function | shapes.py:19 |" in body
    first = indexed.call("search_symbols", {"query": "area", "max_items": 2})
    data = ok(first)
    assert "Found 3 results (showing 2): 2 exact, then 1 similar" in text(first)
    assert data["exact"] == 2
    assert "> More results available. Use `start_index=2` for next page." in text(first)
    assert data["has_more"] and data["next_start_index"] == 2 and data["pagination_id"]
    rest = ok(indexed.call("search_symbols", {"query": "area",
                                              "pagination_id": data["pagination_id"]}))
    assert len(rest["items"]) == 1 and not rest["has_more"]
    by_index = ok(indexed.call("search_symbols", {"query": "area", "start_index": 2}))
    assert by_index["items"] == rest["items"]
    classes = ok(indexed.call("search_symbols", {"query": "circle", "kinds": ["class"]}))
    assert [(i["name"], i["kind"]) for i in classes["items"]] == [("Circle", "class")]
    err(indexed.call("search_symbols", {"query": "area", "pagination_id": "zzz"}),
        "INVALID_CURSOR")


def test_find_references_resolves_and_by_name_lists_text_matches(indexed: Env):
    result = indexed.call("find_references", {"symbol": "backoff_delays"})
    data, body = ok(result), text(result)
    (d,) = data["definitions"]
    assert (d["qualified_name"], d["path"], d["line"]) == ("backoff_delays", "net/retry.py", 5)
    assert data["total"] == len(data["usages"]) >= 1
    assert all(u["resolved"] for u in data["usages"])
    assert "# References of `backoff_delays` (function) at sample/net/retry.py:5" in body
    text_matches = ok(indexed.call("find_references", {"symbol": "backoff_delays",
                                                       "by_name": True}))
    assert {u["kind"] for u in text_matches["usages"]} == {"text"}
    assert not any(u["resolved"] for u in text_matches["usages"])


# -- search_files / file_content / list_repos / get_health -------------------------------


def test_search_files_finds_paths_and_pages(env: Env, sample_repo: RepoBuilder):
    many_files(sample_repo, 7, lines=1)
    env.index(sample_repo.root)
    data = ok(env.call("search_files", {"pattern": "mod_*.py", "limit": 3}))
    seen = [f["path"] for f in data["files"]]
    while data["next_cursor"]:
        data = ok(env.call("search_files", {"pattern": "mod_*.py", "limit": 3,
                                            "cursor": data["next_cursor"]}))
        seen.extend(f["path"] for f in data["files"])
    assert sorted(seen) == [f"pkg/mod_{i:03d}.py" for i in range(7)]
    body = text(env.call("search_files", {"pattern": "retry"}))
    assert "## Files matching: `retry`" in body and "1. sample - net/retry.py (python)" in body


def test_file_content_reads_files_and_line_ranges(indexed: Env):
    result = indexed.call("file_content", {"repository": "sample", "path": "net/retry.py"})
    body, data = text(result), ok(result)
    assert body.startswith(
        "## sample/net/retry.py\n\nBranch: HEAD (working tree) | Lines 1-17 of 17")
    assert "```python\n\"\"\"Retrying failed requests" in body
    assert data["content"].splitlines()[4].startswith("def backoff_delays")
    part = ok(indexed.call("file_content", {"repository": "sample", "path": "shapes.py",
                                            "start_line": 11, "end_line": 13}))
    assert part["content"].splitlines()[0] == "class Circle(Shape):"
    assert (part["start_line"], part["end_line"], part["next_start_line"]) == (11, 13, 14)


def test_file_content_errors(indexed: Env):
    body = err(indexed.call("file_content", {"repository": "sample", "path": "nope.py"}),
               "NOT_FOUND")
    assert "File not found: sample/nope.py" in body
    err(indexed.call("file_content", {"repository": "sample", "path": "../sample/main.py"}),
        "NOT_FOUND")
    body = err(indexed.call("file_content", {"repository": "other", "path": "a.py"}), "NOT_FOUND")
    assert "Repository not indexed: other" in body
    err(indexed.call("file_content", {"repository": "sample", "path": "main.py",
                                      "start_line": 5, "end_line": 2}), "validation_error")


def test_list_repos_lists_filters_and_says_when_empty(env: Env, sample_repo: RepoBuilder):
    empty = env.call("list_repos", {})
    assert "No repositories are currently indexed." in text(empty)
    assert ok(empty)["repositories"] == []
    env.index(sample_repo.root)
    result = env.call("list_repos", {})
    data, body = ok(result), text(result)
    repo = data["repositories"][0]
    assert (repo["name"], repo["source"], repo["files"], repo["indexing"]) == (
        "sample", "local", 4, False)
    assert repo["root"] == str(sample_repo.root.resolve()) and repo["indexed_at"]
    assert "## Indexed Repositories\n\nFound 1 repository:\n\n1. **sample** (4 files," in body
    assert "Total: 1 repository," in body
    assert ok(env.call("list_repos", {"filter": "^sam"}))["total"] == 1
    none = env.call("list_repos", {"filter": "^zzz"})
    assert ok(none)["total"] == 0 and "No repositories match '^zzz'." in text(none)
    body = err(env.call("list_repos", {"filter": "(["}), "QUERY_ERROR")
    assert "Query syntax error" in body


def test_get_health_reports_the_index(indexed: Env):
    result = indexed.call("get_health", {})
    data = ok(result)
    assert data["ok"] is True
    assert "## ctxd health" in text(result) and "sample" in text(result)


@pytest.mark.parametrize("store_engine", ["sqlite"])  # breaks the SQLite file itself
def test_unexpected_failures_are_internal_errors_without_their_text(
    env: Env, caplog: pytest.LogCaptureFixture
):
    db = env.settings.db_path
    db.parent.mkdir(parents=True, exist_ok=True)
    db.write_bytes(b"this is not a database at all" * 100)
    with caplog.at_level(logging.ERROR):
        body = err(env.call("get_health", {}), "internal_error")
    assert "not a database" not in body and "Traceback" not in body
    assert "get_health failed with an unexpected error" in body
    assert any(r.exc_info and "get_health" in r.getMessage() for r in caplog.records)


# -- the token budget ---------------------------------------------------------------------


def test_a_full_page_stays_well_under_ten_thousand_tokens(env: Env, sample_repo: RepoBuilder):
    many_files(sample_repo, 120, lines=8)
    env.index(sample_repo.root)
    for tool, args in (("search", {"query": "needle", "limit": 100, "contextLines": 10}),
                       ("semantic_search", {"query": "needle value", "limit": 100}),
                       ("search_symbols", {"query": "mod"}),
                       ("search_files", {"pattern": "*.py", "limit": 500})):
        body = text(env.call(tool, args))
        assert md.estimate_tokens(body) <= env.settings.search.token_budget < 10_000, tool
    body = text(env.call("search", {"query": "needle", "limit": 100, "contextLines": 10}))
    assert "Output truncated to fit the token budget" in body


def test_truncated_pages_continue_with_a_cursor_and_lose_nothing(
    env_factory: Any, sample_repo: RepoBuilder
):
    env = env_factory(**{"server.allowed_roots": [str(sample_repo.root.parent)],
                         "search.token_budget": 600})
    many_files(sample_repo, 14, lines=6)
    env.index(sample_repo.root)
    seen: list[str] = []
    args: dict[str, Any] = {"query": "needle", "limit": 10, "contextLines": 2}
    truncated = 0
    for _ in range(30):
        result = env.call("search", args)
        data, body = ok(result), text(result)
        assert md.estimate_tokens(body) <= 600
        truncated += data["truncated"]
        seen.extend(f["path"] for f in data["files"])
        if not data["next_cursor"]:
            break
        args["cursor"] = data["next_cursor"]
    assert truncated and len(seen) == 14 == len(set(seen))


def test_a_single_page_cut_by_the_budget_still_gets_a_cursor(
    env_factory: Any, sample_repo: RepoBuilder
):
    env = env_factory(**{"server.allowed_roots": [str(sample_repo.root.parent)],
                         "search.token_budget": 300})
    many_files(sample_repo, 30, lines=6)
    env.index(sample_repo.root)
    for tool, args, key in (
        ("search", {"query": "needle", "limit": 30}, "files"),
        ("search_files", {"pattern": "*.py", "limit": 500}, "files"),
        ("semantic_search", {"query": "needle", "limit": 30, "mode": "semantic"}, "results"),
    ):
        data = ok(env.call(tool, args))  # everything fits one page: no next page of its own
        assert data["truncated"] and data["next_cursor"], tool
        seen = [json.dumps(x, sort_keys=True) for x in data[key]]
        for _ in range(40):
            if not data["next_cursor"]:
                break
            data = ok(env.call(tool, {**args, "cursor": data["next_cursor"]}))
            seen.extend(json.dumps(x, sort_keys=True) for x in data[key])
        assert data["next_cursor"] is None and len(seen) == len(set(seen)), tool
        expected = {"search": 30, "search_files": 33}.get(tool)
        assert expected is None or len(seen) == expected, tool


def test_every_tool_respects_a_small_budget(env_factory: Any, sample_repo: RepoBuilder):
    env = env_factory(**{"server.allowed_roots": [str(sample_repo.root.parent)],
                         "search.token_budget": 400})
    many_files(sample_repo, 30, lines=4)
    sample_repo.write("long.py", "".join(f"line_{i} = {i}\n" for i in range(400)))
    env.index(sample_repo.root)
    files = ok(env.call("search_files", {"pattern": "*.py", "limit": 500}))
    assert files["truncated"] and files["next_cursor"]
    rest = ok(env.call("search_files", {"pattern": "*.py", "limit": 500,
                                        "cursor": files["next_cursor"]}))
    assert not {f["path"] for f in files["files"]} & {f["path"] for f in rest["files"]}
    page = env.call("file_content", {"repository": "sample", "path": "long.py"})
    data = ok(page)
    assert data["truncated"] and data["next_start_line"] == data["end_line"] + 1
    assert f"`start_line: {data['next_start_line']}`" in text(page)
    assert md.estimate_tokens(text(page)) <= 400
    nxt = ok(env.call("file_content", {"repository": "sample", "path": "long.py",
                                       "start_line": data["next_start_line"]}))
    assert nxt["content"].startswith(f"line_{data['next_start_line'] - 1} = ")
    sem = env.call("semantic_search", {"query": "needle", "limit": 30})
    assert ok(sem)["truncated"] and md.estimate_tokens(text(sem)) <= 400


def test_symbol_pages_cut_by_the_budget_continue_with_start_index(
    env_factory: Any, sample_repo: RepoBuilder
):
    env = env_factory(**{"server.allowed_roots": [str(sample_repo.root.parent)],
                         "search.token_budget": 300})
    for i in range(40):
        sample_repo.write(f"fn_{i:02d}.py", f"def handler_{i:02d}():\n    return {i}\n")
    env.index(sample_repo.root)
    names: list[str] = []
    start = 0
    while True:
        data = ok(env.call("search_symbols", {"query": "handler", "start_index": start}))
        names.extend(i["name"] for i in data["items"])
        if data["next_start_index"] is None:
            break
        assert data["truncated"] and data["next_start_index"] > start
        start = data["next_start_index"]
    assert sorted(names) == [f"handler_{i:02d}" for i in range(40)]


# -- pure helpers ------------------------------------------------------------------------


def test_rebase_cursor_keeps_the_query_hash():
    from ctxd.search.cursor import decode_cursor, encode_cursor

    params = {"query": "q", "mode": "hybrid"}
    moved = rebase_cursor(encode_cursor(params, 10, 10), 13)
    assert decode_cursor(moved, params) == (13, 10)


def test_fit_and_clip_respect_the_budget():
    items = ["x" * 300] * 10
    assert md.fit("head", items, lambda n: "tail", 400) == 3
    assert md.fit("head", items, lambda n: "tail", 10_000) == 10
    clipped = md.clip("```py\n" + "a = 1\n" * 2000 + "```", 100)
    assert md.estimate_tokens(clipped) <= 100 and clipped.count("```") == 2


def test_fence_survives_backticks_in_content():
    assert md.fence("a\n```\nb", "md").startswith("````md\n")


def test_freshness_line_names_each_state():
    line = md.freshness_line([
        {"repository": "a", "indexed_at": "2026-01-01T00:00:00Z", "indexing": False},
        {"repository": "b", "indexed_at": "2026-01-02T00:00:00Z", "indexing": True},
        {"repository": "c", "indexed_at": None, "indexing": True},
    ])
    assert "`a` indexed 2026-01-01T00:00:00Z" in line
    assert "`b` re-indexing now (last completed 2026-01-02T00:00:00Z)" in line
    assert "`c` re-indexing now (first run)" in line


def test_format_duration_is_go_style():
    assert [md.format_duration(s) for s in (0, 45, 300, 3725)] == ["0s", "45s", "5m0s", "1h2m5s"]

