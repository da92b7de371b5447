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

GOLDEN = Path(__file__).parent / "golden" / "mcp_tools.json"


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
