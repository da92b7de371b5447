"""The tools' published contract: `tools/list` (names, titles, descriptions, input and
output JSON schemas, annotations) is exactly the one recorded in
`golden/mcp_tools.json` (dumped on f7658fb, before the tools became top-level functions
and their output types were derived from the records, issue 28). A deliberate change is
recorded by deleting the file and running this test once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxd.server.config import load_settings
from ctxd.server.mcp.tools import build_server
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder
from tests.server.conftest import run_client

GOLDEN = Path(__file__).parents[1] / "golden" / "mcp_tools.json"


def published(tmp_path: Path) -> list[dict[str, Any]]:
    service = Service(load_settings({"home": str(tmp_path / "home")}), embedder=FakeEmbedder())
    try:
        tools = run_client(build_server(service), lambda c: c.list_tools())
    finally:
        service.close()
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools.tools]


def test_the_published_tool_schemas_did_not_change(tmp_path: Path) -> None:
    now = json.dumps(published(tmp_path), indent=1, sort_keys=True) + "\n"
    if not GOLDEN.exists():
        GOLDEN.write_text(now, encoding="utf-8")
    assert now == GOLDEN.read_text(encoding="utf-8")


def test_semantic_search_publishes_the_servers_default_limit(tmp_path: Path) -> None:
    """The one default that comes from the settings (`search.default_limit`)."""
    service = Service(load_settings({"home": str(tmp_path / "home"),
                                     "search.default_limit": 7}), embedder=FakeEmbedder())
    try:
        tools = run_client(build_server(service), lambda c: c.list_tools())
    finally:
        service.close()
    (semantic,) = [t for t in tools.tools if t.name == "semantic_search"]
    assert semantic.input_schema["properties"]["limit"]["default"] == 7


def _keys(out: Any, renamed: dict[str, str]) -> list[str]:
    return [renamed.get(k, k) for k in out.__annotations__]


def test_the_output_types_follow_the_records() -> None:
    """`HitOut` and `JobOut` are `Hit` and `JobSnapshot` as JSON: every field in the
    record's order, under the record's name (or the one renamed here), except the fields
    the tools leave out on purpose; a field added to a record fails here until the
    output type (and so the published schema) says what becomes of it."""
    from dataclasses import fields

    from ctxd.search.models import Hit
    from ctxd.server.jobs import JobSnapshot
    from ctxd.server.mcp.schemas import HitOut, JobOut

    hit_left_out = {"matches", "checkpoint"}  # lines are in the Markdown; an internal id
    hit = [f.name for f in fields(Hit) if f.name not in hit_left_out]
    assert sorted(_keys(HitOut, {"context": "blocks"})) == sorted(hit)
    job_left_out = {"version", "include_patterns", "exclude_patterns", "max_file_size",
                    "after", "reset_options"}  # the job's arguments are its request's
    job = [f.name for f in fields(JobSnapshot) if f.name not in job_left_out]
    assert _keys(JobOut, {"result": "stats"}) == job
