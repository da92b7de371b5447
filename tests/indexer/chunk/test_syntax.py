"""indexer.chunk.syntax on hostile shapes: linear time under long comment runs, the parse
budget and its fallback to line windows (issue 23, item 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxd.indexer.chunk.chunker import ChunkOptions, chunk_file
from ctxd.indexer.chunk.syntax import ParseBudgetExceeded, parse_definitions
from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.sqlite.store import Store
from ctxd.indexer.walk.walker import WalkOptions
from ctxd.server.cli.main import main
from tests.conftest import FakeEmbedder
from tests.conftest import RepoBuilder as Repo


def comments_then_functions(comments: int, functions: int) -> str:
    head = "\n".join(f"# comment line {i} with a few words" for i in range(comments))
    body = "".join(f"def f{i}(x):\n    return x + {i}\n" for i in range(functions))
    return f"{head}\n\n{body}"


def count(texts: list[str]) -> list[int]:
    return [len(t.split()) for t in texts]


@pytest.mark.timeout(30)
def test_long_comment_run_parses_in_linear_time() -> None:
    """40,000 comment lines then 30,000 functions. Every definition asked tree-sitter for its
    parent and previous sibling, which walk the parent's children from the first one: over
    a flat run of comments that made the file quadratic (33 s for 20,000 comment lines and
    20,000 functions here, about a minute for this file); one cursor walk makes it about
    five seconds."""
    text = comments_then_functions(40_000, 30_000)
    defs = parse_definitions("python", text)
    assert defs is not None and len(defs) == 30_000
    assert defs[0].name == "f0" and defs[0].start_line == 40_002
    assert defs[-1].name == "f29999" and defs[-1].end_line == text.count("\n")


@pytest.mark.timeout(30)
def test_comment_run_above_one_definition_is_attached_in_linear_time() -> None:
    """80,000 comment lines directly above one function: 20 s for 40,000 before (each step
    up the run was a walk over the run), about a second now."""
    text = "\n".join(f"// note {i}" for i in range(80_000)) + "\nfunction f() { return 1 }\n"
    (defn,) = parse_definitions("javascript", text) or []
    assert defn.name == "f"
    assert defn.start_line == 1  # the comments directly above are attached, as before
    assert defn.line == 80_001


def test_parse_over_budget_raises_and_the_next_parse_starts_afresh() -> None:
    big = comments_then_functions(2_000, 5_000)
    with pytest.raises(ParseBudgetExceeded):
        parse_definitions("python", big, budget_s=0.0)
    # The cancelled parse left nothing behind in the thread's parser.
    small = "def g():\n    return 2\n"
    defs = parse_definitions("python", small, budget_s=30.0)
    assert defs is not None and [d.name for d in defs] == ["g"]


def test_budget_fallback_cuts_line_windows_and_says_why() -> None:
    big = comments_then_functions(2_000, 5_000)
    fc = chunk_file("big.py", big, ChunkOptions(parse_budget_ms=1), count)
    assert fc.windows_reason is not None and "1 ms budget" in fc.windows_reason
    assert fc.symbols == [] and fc.chunks
    assert all(c.symbol is None for c in fc.chunks)
    normal = chunk_file("big.py", big, ChunkOptions(), count)
    assert normal.windows_reason is None and len(normal.symbols) == 5_000


def test_index_report_names_files_that_took_the_fallback(repo: Repo, tmp_path: Path) -> None:
    repo.write("big.py", comments_then_functions(2_000, 5_000))
    repo.write("small.md", "# Title\n\nSome prose.\n")
    store = Store.open(tmp_path / "index.db")
    try:
        stats = Indexer(store, FakeEmbedder(), ChunkOptions(parse_budget_ms=1)).index(
            repo.root, WalkOptions(), embed=False)
    finally:
        store.close()
    assert [(f.path, "budget" in f.reason) for f in stats.windowed_files] == [("big.py", True)]
    assert stats.files_indexed == 2


def test_cli_json_and_text_name_windowed_files(repo: Repo, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    repo.write("big.py", comments_then_functions(2_000, 5_000))
    config = tmp_path / "config.toml"
    config.write_text("[chunk]\nparse_budget_ms = 1\n", encoding="utf-8")
    monkeypatch.setenv("CTXD_CONFIG", str(config))
    r = CliRunner().invoke(main, ["index", str(repo.root), "--dry-run", "--json"],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    windowed = json.loads(r.output)["windowed_files"]
    assert [w["path"] for w in windowed] == ["big.py"]
    assert "chunk.parse_budget_ms" in windowed[0]["reason"]
    r = CliRunner().invoke(main, ["index", str(repo.root), "--dry-run"], catch_exceptions=False)
    assert "line windows: big.py: syntax parse over its 1 ms budget" in r.output
