"""Cold start (issue 41): the commands that need no model import no model library, and
`ctxd serve` answers `initialize` and `list_tools` before anything heavy loads.

Each command runs in a fresh interpreter (`tests.server.test_startup.imported_by`), the
way `ctxd` starts from a shell; `serve` runs as a real subprocess driven by the MCP
client, and its memory map shows what it loaded. The search path with an ONNX export is
`tests/indexer/test_onnx_encoder.py`'s.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from ctxd.indexer.embedder import resolve_model_dir
from ctxd.indexer.onnx_encoder import CACHE_ENV, EXPORT_FORMAT, content_hash, source_key
from ctxd.server.config import load_settings
from ctxd.server.daemon import lifecycle
from ctxd.server.daemon.client import DaemonClient
from ctxd.server.daemon.paths import DaemonPaths
from ctxd.server.service import Service
from tests.conftest import RepoBuilder
from tests.server.conftest import TOOLS_EXPECTED
from tests.server.serving import serve_command, server_env
from tests.server.test_startup import imported_by

pytestmark = pytest.mark.model

MODEL_LIBRARIES = ("libtorch", "/torch/", "onnxruntime", "/tokenizers/")
"""What a process that loaded a model library maps (shared objects)."""


@pytest.fixture
def indexed(repo: RepoBuilder, real_embedder) -> RepoBuilder:
    repo.write("shop/cart.py", "class Cart:\n    def total(self, prices):\n"
                               "        return sum(prices)\n\n\n"
                               "def checkout(cart):\n    return cart.total([1, 2])\n")
    service = Service(load_settings(), embedder=real_embedder)
    assert service.index(repo.root).files_indexed == 1
    service.close()
    return repo


@pytest.mark.parametrize("args", [
    ("repos",),
    ("cat", "repo", "shop/cart.py"),
    ("refs", "total"),
    ("search", "--mode", "lexical", "--no-daemon", "sum(prices)"),
    ("status",),
])
def test_light_commands_import_no_model_library(args, indexed):
    assert [m for m in imported_by(*args) if m != "rich"] == [], args


def children_of(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d.name))
    return out


def test_serve_answers_initialize_and_list_tools_before_loading_a_model(tmp_path: Path):
    params = StdioServerParameters(command=serve_command()[0],
                                   args=[*serve_command()[1:], "--transport", "stdio"],
                                   env=server_env(tmp_path), cwd=str(tmp_path))
    mapped: list[str] = []
    seen: list[int] = []

    async def main() -> None:
        with (tmp_path / "stderr.log").open("w", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog),
                              read_timeout_seconds=120) as client:
                tools = await client.list_tools()
                assert {t.name for t in tools.tools} == TOOLS_EXPECTED
                for pid in children_of(os.getpid()):
                    try:
                        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                        if b"serve" not in argv:  # `ctxd serve`, not another child
                            continue  # (a graph helper from an earlier index: -c ...serve())
                        maps = Path(f"/proc/{pid}/maps").read_text()
                    except OSError:
                        continue
                    seen.append(pid)
                    mapped.extend(lib for lib in MODEL_LIBRARIES if lib in maps)

    anyio.run(main)
    assert len(seen) == 1 and mapped == []


def test_the_daemon_answers_lexical_symbol_and_file_requests_while_its_model_loads(
        indexed, tmp_path, monkeypatch):
    """With no usable ONNX export the daemon's warm-up loads torch (seconds); lexical,
    symbol and file requests are answered meanwhile, before the model is loaded."""
    model_dir = resolve_model_dir("all-MiniLM-L6-v2")
    assert model_dir is not None
    record = tmp_path / "encoders" / content_hash(model_dir)
    record.mkdir(parents=True)
    (record / "meta.json").write_text(json.dumps({
        "format": EXPORT_FORMAT, "sources": [source_key(model_dir)], "ok": False,
        "reason": "this test: the torch path"}))
    monkeypatch.setenv(CACHE_ENV, str(record.parent))
    settings = load_settings()
    paths = DaemonPaths.for_home(settings.home)
    try:
        lifecycle.start(settings, paths)
        client = lifecycle.connect(settings, autostart=False, local=lambda: Service(settings))
        assert isinstance(client, DaemonClient)
        lexical = client.search("return sum", mode="lexical")
        symbols = client.symbols("total")
        files = client.files("**/*.py")
        log = paths.log.read_text(encoding="utf-8")
        assert "loaded model" not in log, "the model was ready first: nothing was shown"
        assert [h.path for h in lexical.results] == ["shop/cart.py"]
        assert symbols.items and [f.path for f in files.result.files] == ["shop/cart.py"]
        client.close()
    finally:
        lifecycle.stop(paths, timeout=30)
