"""C# end to end: `ctxd symbols` finds a class, `ctxd refs` on it names its use in another
file of the namespace's importers (`using Serilog;`), `ctxd callers` the call through a
constructed receiver, and an index made before ctxd parsed C# gets its C# files chunked
again by the next full run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ctxd.indexer.chunk import conditionals, grammars, syntax
from ctxd.indexer.chunk.grammars import SYNTAX
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.cli.test_cli_hardening import run

LOGGER_CONFIGURATION = """\
namespace Serilog;

/// <summary>
/// Configuration object for creating <see cref="ILogger"/> instances.
/// </summary>
public class LoggerConfiguration
{
    readonly List<ILogEventSink> _logEventSinks = new();

    public LoggerSinkConfiguration WriteTo { get; internal set; }

    public Logger CreateLogger()
    {
        return new Logger(_logEventSinks);
    }
}
"""

PROGRAM = """\
using Serilog;

var log = new LoggerConfiguration().CreateLogger();
"""


def index(root: Path, should_stop: Callable[[], bool] | None = None) -> dict[str, int]:
    service = Service(load_settings({}), embedder=FakeEmbedder())
    try:
        stats = service.index(root, should_stop=should_stop)
    finally:
        service.close()
    return {"files_updated": stats.files_updated, "stopped": stats.stopped}


@pytest.fixture
def serilog(isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RepoBuilder:
    repo = RepoBuilder(tmp_path / "serilog")
    repo.write("src/Serilog/LoggerConfiguration.cs", LOGGER_CONFIGURATION)
    repo.write("samples/Program.cs", PROGRAM)
    repo.write("README.md", "# Serilog\n\nStructured logging.\n")
    monkeypatch.chdir(repo.root)
    return repo


def test_symbols_finds_a_csharp_class_and_refs_and_callers_resolve_its_uses(
    serilog: RepoBuilder,
) -> None:
    index(serilog.root)
    out = json.loads(run("symbols", "LoggerConfiguration", "--json").stdout)
    assert out["items"][0] == {"name": "LoggerConfiguration", "kind": "class",
                               "path": "src/Serilog/LoggerConfiguration.cs", "line": 6,
                               "container": None, "repository": "serilog"}
    out = json.loads(run("symbols", "CreateLogger", "--json").stdout)
    assert [(i["kind"], i["container"], i["line"]) for i in out["items"]] == [
        ("method", "LoggerConfiguration", 12)]

    r = run("refs", "LoggerConfiguration")
    assert r.exit_code == 0, r.output
    assert "does not read" not in r.stdout and "samples/Program.cs" in r.stdout
    out = json.loads(run("refs", "LoggerConfiguration", "--json").stdout)
    assert {(u["path"], u["line"], u["resolved"]) for u in out["usages"]} == {
        ("samples/Program.cs", 3, True)}  # not the doc comment's <see cref="ILogger"/>
    out = json.loads(run("refs", "LoggerConfiguration", "--by-name", "--json").stdout)
    assert ("samples/Program.cs", 3) in {(u["path"], u["line"]) for u in out["usages"]}
    out = json.loads(run("callers", "CreateLogger", "--json").stdout)
    assert [(e["site"]["path"], e["site"]["line"]) for e in out["callers"]] == [
        ("samples/Program.cs", 3)]


def test_an_index_made_before_csharp_was_parsed_chunks_csharp_again(
    serilog: RepoBuilder, monkeypatch: pytest.MonkeyPatch,
) -> None:
    with monkeypatch.context() as older:  # a ctxd without the C# grammar
        older.delitem(SYNTAX, "csharp")
        older.setattr(grammars, "_grammars", {})
        assert index(serilog.root)["files_updated"] == 3
        assert run("symbols", "LoggerConfiguration").exit_code == 1
    assert index(serilog.root)["files_updated"] == 2  # the two .cs files, not README.md
    out = json.loads(run("symbols", "LoggerConfiguration", "--json").stdout)
    assert out["items"][0]["path"] == "src/Serilog/LoggerConfiguration.cs"
    assert index(serilog.root)["files_updated"] == 0  # recorded: not chunked a third time


MAIN_C = """\
#include <stdio.h>

#ifdef WIN32
int umain(int argc, char* argv[]) {
#else
int main(int argc, char* argv[]) {
#endif
  return 0;
}
"""


def test_an_index_made_before_c_ifdefs_were_read_chunks_c_again(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """jq's main.c: `#ifdef WIN32` around a function's head broke the parse (no symbols);
    the next full run of a newer ctxd chunks the C files again, once."""
    repo = RepoBuilder(tmp_path / "jq")
    repo.write("src/main.c", MAIN_C)
    repo.write("src/util.c", "static int twice(int x) { return 2 * x; }\n")
    repo.write("README.md", "# jq\n")
    monkeypatch.chdir(repo.root)
    with monkeypatch.context() as older:  # a ctxd that read C as written
        older.setattr(grammars, "PARSE_REVISIONS", {})
        older.setattr(conditionals, "PREPROCESSED", frozenset({"csharp"}))
        older.setattr(syntax, "PREPROCESSED", frozenset({"csharp"}))
        assert index(repo.root)["files_updated"] == 3
        assert run("symbols", "umain").exit_code == 1
    assert index(repo.root)["files_updated"] == 2  # the two .c files, not README.md
    out = json.loads(run("symbols", "umain", "--json").stdout)
    assert out["items"][0]["path"] == "src/main.c"
    assert index(repo.root)["files_updated"] == 0  # recorded: not chunked a third time


def test_a_run_stopped_part_way_leaves_the_rest_to_chunk_again(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A full run that stops (or is killed) before it has been through every file records
    nothing of what it would re-decide: the next full run still chunks the C files it did
    not reach (pipeline.REDECIDE_KEYS)."""
    repo = RepoBuilder(tmp_path / "jq")
    for name in ("a", "b", "c"):
        repo.write(f"src/{name}.c", MAIN_C.replace("umain(", f"umain_{name}("))
    monkeypatch.chdir(repo.root)
    with monkeypatch.context() as older:  # a ctxd that read C as written
        older.setattr(grammars, "PARSE_REVISIONS", {})
        older.setattr(conditionals, "PREPROCESSED", frozenset({"csharp"}))
        older.setattr(syntax, "PREPROCESSED", frozenset({"csharp"}))
        assert index(repo.root)["files_updated"] == 3
    polls = iter(range(100))
    assert index(repo.root, should_stop=lambda: next(polls) >= 1)["stopped"]
    assert index(repo.root)["files_updated"] >= 2  # the files the stopped run left
    for name in ("a", "b", "c"):
        out = json.loads(run("symbols", f"umain_{name}", "--json").stdout)
        assert out["items"][0]["path"] == f"src/{name}.c"
    assert index(repo.root)["files_updated"] == 0
