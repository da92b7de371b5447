"""A command the daemon answers stays a thin client: it imports no search engine, no
store, no numpy and no parser (the daemon holds those), so `ctxd refs`/`search`/`status`
cost the client process little more than `ctxd --help`.

A fresh interpreter runs each command (`tests.server.test_startup.imported_by`) against a
real daemon of a small index. Before 2382d37 the CLI's renderer imported
`search.references` (for one note), which pulled the symbol search, numpy, tree-sitter and
the graph extractors into every command and into `--help`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from ctxd.server.config import load_settings
from ctxd.server.daemon import lifecycle
from ctxd.server.daemon.paths import DaemonPaths
from ctxd.server.service import Service
from tests.conftest import RepoBuilder

pytestmark = pytest.mark.model

SERVER_SIDE = ("numpy", "tree_sitter", "sqlite3", "onnxruntime", "ctxd.server.service",
               "ctxd.search.references", "ctxd.search.symbols", "ctxd.indexer.graph",
               "ctxd.indexer.chunk.syntax", "ctxd.indexer.walk.walker", "ctxd.search.hybrid",
               "ctxd.search.explain_rank")
"""What the daemon holds and a client it answers never needs."""

RUNNER = """
import json, sys
from ctxd.server.cli.main import main
try:
    main(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
print("\\nIMPORTED=" + json.dumps([m for m in NAMES if m in sys.modules]))
""".replace("NAMES", repr(SERVER_SIDE))


@pytest.fixture
def daemon_of_a_small_index(repo: RepoBuilder, real_embedder) -> Iterator[None]:
    repo.write("shop/cart.py", "class Cart:\n    def total(self, prices):\n"
                               "        return sum(prices)\n\n\n"
                               "def checkout(cart):\n    return cart.total([1, 2])\n")
    settings = load_settings()
    service = Service(settings, embedder=real_embedder)
    assert service.index(repo.root).files_indexed == 1
    service.close()
    paths = DaemonPaths.for_home(settings.home)
    lifecycle.start(settings, paths)
    try:
        yield
    finally:
        lifecycle.stop(paths, timeout=20)


def imported(*args: str) -> list[str]:
    """Which of SERVER_SIDE `ctxd ARGS` imported (a fresh interpreter)."""
    r = subprocess.run([sys.executable, "-c", RUNNER, *args], capture_output=True,
                       text=True, env=dict(os.environ), timeout=120, check=False)
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("IMPORTED=")]
    assert line and "Traceback" not in r.stderr, r.stdout + r.stderr
    return list(json.loads(line[-1].removeprefix("IMPORTED=")))


def test_help_imports_nothing_of_the_server():
    """Nor does `--help` (the ranking behind `search --explain` loads only for it)."""
    assert imported("--help") == []
    assert imported("search", "--help") == []


def test_commands_the_daemon_answers_import_nothing_of_the_server(daemon_of_a_small_index):
    for args in (("refs", "Cart.total"), ("callers", "Cart.total"),
                 ("search", "--mode", "lexical", "return sum"), ("symbols", "total"),
                 ("status",), ("daemon", "status")):
        r = subprocess.run([sys.executable, "-c", RUNNER, *args], capture_output=True,
                           text=True, env=dict(os.environ), timeout=120, check=False)
        line = [ln for ln in r.stdout.splitlines() if ln.startswith("IMPORTED=")]
        assert line and "Traceback" not in r.stderr, r.stdout + r.stderr
        answered = "total" in r.stdout or "sum" in r.stdout or args[0] in ("status", "daemon")
        assert answered, (args, r.stdout)
        assert json.loads(line[-1].removeprefix("IMPORTED=")) == [], args


def test_the_built_in_walk_options_are_valid():
    """Reading the settings skips the walker's check of the built-in walk options (every
    command would load the walker for it); they must stay valid."""
    from ctxd.indexer.walk.options import WalkOptions
    from ctxd.indexer.walk.walker import validate_walk_options

    validate_walk_options(WalkOptions())
