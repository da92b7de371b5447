"""The graph's MCP tools through the real client, for what a QA pass over real trees found
(tests/server/cli/test_graph_cli_qa.py has the CLI's side)."""

from __future__ import annotations

import json

from tests.server.conftest import Env, text
from tests.server.mcp.test_mcp_graph import graph_env  # noqa: F401  (the fixture)


def details(body: str) -> dict[str, object]:
    line = next(x for x in body.splitlines() if x.startswith("Details: "))
    out: dict[str, object] = json.loads(line.removeprefix("Details: "))
    return out


def test_a_language_without_by_name_is_refused(graph_env: Env) -> None:  # noqa: F811
    """`find_references` with `language` and no `by_name` answered as if it were not given."""
    r = graph_env.call("find_references", {"symbol": "Store.get", "language": "go"})
    assert r.is_error, text(r)
    assert "language 'go' goes with by_name: true only" in text(r)
    assert details(text(r)) == {"field": "language", "value": "go"}
    ok = graph_env.call("find_references", {"symbol": "Store.get", "language": "python",
                                            "by_name": True})
    assert not ok.is_error, text(ok)


def test_trace_call_path_says_which_name_is_wrong(graph_env: Env) -> None:  # noqa: F811
    r = graph_env.call("trace_call_path", {"source": "main", "target": "nope"})
    assert r.is_error and "NOT_FOUND: target: no definition named 'nope'" in text(r)
    assert details(text(r))["field"] == "target"
