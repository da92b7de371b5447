"""The MCP search tools refuse over-long queries and over-large lexical queries with a
validation error naming the field and the limit (issue 9, item 21), through the SDK's
in-memory client over a real index."""

from __future__ import annotations

from typing import Any

import pytest

from ctxd.search.lexical.limits import MAX_QUERY_CHARS, MAX_QUERY_TERMS
from tests.server.conftest import Env, text


@pytest.mark.parametrize(("tool", "field", "extra"), [
    ("search", "query", {}),
    ("semantic_search", "query", {"mode": "keyword"}),
    ("semantic_search", "query", {"mode": "hybrid"}),
    ("search_symbols", "query", {}),
    ("find_references", "symbol", {}),
    ("search_files", "pattern", {}),
])
def test_every_mcp_search_tool_refuses_an_over_long_query(
    indexed: Env, tool: str, field: str, extra: dict[str, Any]
):
    result = indexed.call(tool, {field: "x" * 1_000_000, **extra})
    body = text(result)
    assert result.is_error, body
    assert ": validation_error: " in body
    assert f"{field} is too long: 1000000 characters, at most {MAX_QUERY_CHARS}" in body
    assert len(body) < 2_000  # the value is not echoed back


def test_lexical_search_refuses_too_many_terms_instead_of_failing_in_sqlite(indexed: Env):
    words = " ".join(f"w{i:03d}" for i in range(MAX_QUERY_TERMS + 44))  # 300 distinct words
    result = indexed.call("search", {"query": words})
    body = text(result)
    assert result.is_error and ": QUERY_ERROR: " in body, body
    assert f"the query has 300 terms, at most {MAX_QUERY_TERMS}" in body
    fine = indexed.call("search", {"query": " ".join(["backoff"] * 50)})
    assert not fine.is_error, text(fine)
