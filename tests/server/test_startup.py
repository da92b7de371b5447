"""Start-up cost: commands that need no model and no MCP import neither.

Each command runs in a fresh interpreter (a small runner calls the click group, then
prints which heavy modules got imported), the way `ctxd` starts from a shell.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import RepoBuilder

HEAVY = ("torch", "sentence_transformers", "transformers", "mcp", "uvicorn", "starlette",
         "rich")
"""`rich` colours a terminal's search results only (issue 17): `--help` and piped output
do without it."""

RUNNER = """
import json, sys
from ctxd.server.cli.main import main
try:
    main(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
heavy = HEAVY_NAMES
print("\\nIMPORTED=" + json.dumps(sorted(m for m in heavy if m in sys.modules)))
""".replace("HEAVY_NAMES", repr(HEAVY))


def imported_by(*args: str) -> list[str]:
    env = {**os.environ, "CTXD_DAEMON_AUTOSTART": "false"}
    r = subprocess.run([sys.executable, "-c", RUNNER, *args], capture_output=True, text=True,
                       env=env, timeout=120, check=False)
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("IMPORTED=")]
    assert line and "Traceback" not in r.stderr, r.stdout + r.stderr
    return list(json.loads(line[-1].removeprefix("IMPORTED=")))


@pytest.fixture
def indexed(repo: RepoBuilder, real_embedder) -> RepoBuilder:
    """A real index (text, symbols, vectors) for the commands to read."""
    repo.write("shop/cart.py", "class Cart:\n    def total(self, prices):\n"
                               "        return sum(prices)\n")
    service = Service(load_settings(), embedder=real_embedder)
    assert service.index(repo.root).files_indexed == 1
    service.close()
    return repo


@pytest.mark.parametrize("args", [
    ("--help",),
    ("status",),
    ("status", "--json"),
    ("search", "--mode", "lexical", "total"),
    ("search", "--mode", "keyword", "total"),
    ("symbols", "total"),
    ("files", "**/*.py"),
    ("daemon", "status"),
    ("serve", "--help"),
])
@pytest.mark.model
def test_commands_without_a_model_import_no_torch_and_no_mcp(args, indexed):
    heavy = imported_by(*args)
    if args[0] == "serve":  # its help needs no server; the command itself imports mcp
        heavy = [m for m in heavy if m not in ("mcp", "starlette", "uvicorn", "rich")]
    assert heavy == [], args


def test_help_and_settings_do_not_even_import_numpy():
    """Reading the settings (every command) stays light: the embedding options live apart
    from the embedder (indexer/embed_options.py)."""
    code = ("import sys; from ctxd.server.cli.main import main; import ctxd.server.config; "
            "print('numpy' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "False"


def test_the_runner_does_see_heavy_imports():
    """The check above can fail: `serve`'s module itself pulls in the MCP SDK."""
    code = "import ctxd.server.mcp.serve, sys; print('mcp' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "True"


WALK_AND_CHUNK = ("ctxd.indexer.walk.walker", "ctxd.indexer.walk.ignore", "pathspec",
                  "ctxd.indexer.chunk.chunker", "ctxd.indexer.chunk.syntax", "tree_sitter")
"""The walker (its ignore files and glob engines) and the chunker (tree-sitter): 77 and
37 ms of `ctxd --help` once (issue 30). The settings need only their option records
(`indexer/walk/options.py`, `indexer/chunk/options.py`)."""


@pytest.mark.parametrize("args", [("--help",), ("search", "--help"), ("index", "--help")])
def test_help_imports_neither_the_walker_nor_the_chunker(args):
    code = ("import json, sys\nfrom ctxd.server.cli.main import main\ntry:\n"
            f"    main({list(args)!r}, standalone_mode=False)\nexcept SystemExit:\n    pass\n"
            f"print('\\nIMPORTED=' + json.dumps([m for m in {WALK_AND_CHUNK!r} "
            "if m in sys.modules]))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "CTXD_DAEMON_AUTOSTART": "false"}, timeout=120,
                       check=False)
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("IMPORTED=")]
    assert line and "Traceback" not in r.stderr, r.stdout + r.stderr
    assert json.loads(line[-1].removeprefix("IMPORTED=")) == [], args
