"""`ctxd search` text for people (issue 17): ripgrep-style layout, colour only on a
terminal, `-C`/`-l`/`--vimgrep`/`-v`, one result per definition, hints and messages.

The index is built by the service with the fake embedder (a real SQLite file under
`CTXD_HOME`). Text output is checked through `CliRunner` (a pipe), through a real
subprocess with a pipe, and through a real pseudo-terminal (`pty`); the golden file
holds one lexical search's exact output (no model in its ranking).
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxd.search.keyword import keyword_search
from ctxd.server import first_search
from ctxd.server.cli.render import eta_text
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.cli.test_cli_hardening import run

GOLDEN = Path(__file__).parents[1] / "golden"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

APP = '''"""A tiny app."""


class Greeter:
    """Says hello."""

    def greet(self, name):
        if not name:
            raise ValueError("name must not be empty")
        return f"hello {name}"


def handle_request(request):
    greeter = Greeter()
    return greeter.greet(request.user)
'''

UTIL = '''def error_handler(exc):
    # log and swallow
    return None
'''


def long_function() -> str:
    """One function long enough for the chunker to cut it in two parts."""
    first = [f"    step_{i} = request.value + {i} * offset_marker" for i in range(30)]
    second = [f"    final_{i} = step_{i} - {i} * offset_marker" for i in range(30)]
    return "\n".join(["def long_handler(request, offset_marker):", *first, "",
                      *second, "    return final_0", ""])


@pytest.fixture
def service(isolated_env: Path) -> Iterator[Service]:
    svc = Service(load_settings({}), embedder=FakeEmbedder())
    yield svc
    svc.close()


@pytest.fixture
def demo(service: Service, repo: RepoBuilder, monkeypatch: pytest.MonkeyPatch) -> RepoBuilder:
    """The demo repository, indexed; the current folder is its parent (paths `repo/...`)."""
    repo.write("pkg/app.py", APP)
    repo.write("pkg/util.py", UTIL)
    service.index(repo.root)
    monkeypatch.chdir(repo.root.parent)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return repo


def ctxd_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "ctxd.server.cli.main", *args]


def through_pty(*args: str, **env: str) -> str:
    """`ctxd ARGS` with its stdout on a pseudo-terminal; everything it wrote."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(ctxd_argv(*args), stdout=slave, stderr=subprocess.DEVNULL,
                            env={**os.environ, **env})
    os.close(slave)
    out = read_terminal(master)
    assert proc.wait(timeout=60) == 0
    return out


def read_terminal(master: int) -> str:
    """Everything written to a pseudo-terminal until its child closes it."""
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return b"".join(chunks).decode().replace("\r\n", "\n")


# -- layout -------------------------------------------------------------------------------


def test_golden_lexical_search_text(demo: RepoBuilder):
    r = run("search", "greet or error_handler", "--mode", "lexical")
    assert r.exit_code == 0, r.output
    assert r.stdout == (GOLDEN / "search_lexical.txt").read_text(encoding="utf-8")


def test_text_keeps_indentation_groups_by_file_and_hides_scores(demo: RepoBuilder):
    out = run("search", "greet or error_handler", "--mode", "lexical").stdout
    lines = out.splitlines()
    assert "7:    def greet(self, name):" in lines  # indentation kept
    assert "repo/pkg/app.py" in lines and "repo/pkg/util.py" in lines  # file headings
    assert "repo/pkg/util.py:1  error_handler" in lines  # path:line and symbol on each hit
    assert "score" not in out and "lexical" not in out
    verbose = run("search", "greet", "--mode", "lexical", "-v").stdout
    assert re.search(r"repo/pkg/app\.py:4  Greeter  \[lines \d+-\d+, score [\d.]+, lexical\]",
                     verbose)


def test_context_flags_are_honoured(demo: RepoBuilder):
    none = run("search", "ValueError", "--mode", "lexical", "-C", "0").stdout.splitlines()
    assert none == ["repo/pkg/app.py", "repo/pkg/app.py:9  Greeter.greet",
                    '9:            raise ValueError("name must not be empty")']
    one = run("search", "ValueError", "--mode", "lexical", "-C", "1").stdout.splitlines()
    assert one[2:] == ["8-        if not name:",
                       '9:            raise ValueError("name must not be empty")',
                       '10-        return f"hello {name}"']
    after = run("search", "ValueError", "--mode", "lexical", "-B", "0", "-A", "1").stdout
    assert after.splitlines()[2:] == [one[3], one[4]]
    # more than the engine's default context (search.context_lines = 3) is asked of it
    wide = run("search", "ValueError", "--mode", "lexical", "-C", "5").stdout.splitlines()
    assert [ln.split(":")[0].split("-")[0] for ln in wide[2:]] == [str(n) for n in range(4, 15)]


def test_vimgrep_lines_parse_and_point_at_the_match(demo: RepoBuilder):
    out = run("search", "greet", "--mode", "lexical", "--vimgrep").stdout
    rows = [re.fullmatch(r"(.+?):(\d+):(\d+):(.*)", ln) for ln in out.splitlines()]
    assert rows and all(rows)
    text = {i + 1: t for i, t in enumerate(APP.split("\n"))}
    for m in rows:
        assert m is not None and m.group(1) == "repo/pkg/app.py"
        line, col = int(m.group(2)), int(m.group(3))
        assert m.group(4) == text[line]
        assert text[line][col - 1:].lower().startswith("greet")
    assert len(rows) == 6  # Greeter, greet, Greeter(), greeter, greeter.greet (2 on 15)


def test_files_with_matches(demo: RepoBuilder):
    out = run("search", "greet or error_handler", "--mode", "lexical", "-l").stdout
    assert sorted(out.splitlines()) == ["repo/pkg/app.py", "repo/pkg/util.py"]


def test_paths_are_relative_inside_the_repository(demo: RepoBuilder,
                                                  monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(demo.root / "pkg")
    out = run("search", "error_handler", "--mode", "lexical", "-l").stdout
    assert out.splitlines() == ["util.py"]


# -- colour: only on a terminal --------------------------------------------------------------


def test_colour_on_a_terminal_only(demo: RepoBuilder):
    query = ("search", "greet or error_handler", "--mode", "lexical")
    piped = subprocess.run(ctxd_argv(*query), capture_output=True, text=True, check=True)
    assert "\x1b[" not in piped.stdout
    golden = (GOLDEN / "search_lexical.txt").read_text(encoding="utf-8")
    assert piped.stdout == golden

    tty = through_pty(*query)
    assert "\x1b[" in tty
    assert "\x1b[1;31mgreet\x1b[0m" in tty  # the matched word highlighted
    assert ANSI.sub("", tty) == golden  # the same text under the colour

    assert "\x1b[" not in through_pty("search", "greet", "--mode", "lexical", NO_COLOR="1")
    assert "\x1b[" not in through_pty("search", "greet", "--mode", "lexical", "--color",
                                      "never")
    forced = subprocess.run(ctxd_argv("search", "greet", "--mode", "lexical", "--color",
                                      "always"), capture_output=True, text=True, check=True)
    assert "\x1b[" in forced.stdout


# -- one result per definition -------------------------------------------------------------


@pytest.mark.parametrize("mode", ["keyword", "semantic"])
def test_parts_of_one_function_are_one_result(service: Service, repo: RepoBuilder,
                                              mode: str):
    repo.write("long.py", long_function())
    service.index(repo.root)
    query = "offset_marker step request value"
    raw = keyword_search(service.store(), query, limit=20)
    assert len([h for h in raw if h.path == "long.py"]) >= 2  # the chunker cut it in parts
    page = service.search(query, mode=mode)
    hits = [h for h in page.results if h.path == "long.py"]
    assert len(hits) == 1, [(h.start_line, h.end_line) for h in hits]
    (hit,) = hits
    assert hit.symbol == "long_handler" and (hit.start_line, hit.end_line) == (1, 63)
    assert hit.snippet.split("\n") == long_function().split("\n")[:63]


# -- messages ------------------------------------------------------------------------------


def test_quoted_regex_escape_gets_a_hint_and_the_query_as_typed(demo: RepoBuilder,
                                                               service: Service):
    r = run("search", '"def \\w+_handler"', "--mode", "lexical")
    assert r.exit_code == 1
    assert r.stdout == 'No results for `"def \\w+_handler"`.\n'
    assert 'inside quotes `\\w` stands for `w`' in r.stderr
    assert '`"def \\\\w+_handler"`' in r.stderr
    fixed = run("search", '"def \\\\w+_handler"', "--mode", "lexical", "-l")
    assert fixed.stdout == "repo/pkg/util.py\n" and "inside quotes" not in fixed.stderr
    page = service.lexical('"def \\w+_handler"')  # the MCP `search` tool's use case
    assert any("inside quotes" in n for n in page.result.notes)


def test_an_empty_index_says_so(isolated_env: Path):
    r = run("search", "anything", "--mode", "keyword")
    assert r.exit_code == 1
    assert "nothing is indexed yet: run `ctxd index PATH` first." in r.stderr


def test_cat_lines_forms_and_past_the_end(demo: RepoBuilder):
    assert run("cat", "repo", "pkg/util.py", "--lines", "2").stdout == "    # log and swallow\n"
    assert run("cat", "repo", "pkg/util.py", "--lines", "2:").stdout.count("\n") == 2
    assert run("cat", "repo", "pkg/util.py", "--lines", ":1").stdout == "def error_handler(exc):\n"
    r = run("cat", "repo", "pkg/util.py", "--lines", "99999:100000")
    assert r.exit_code == 2
    assert "starts past the end of pkg/util.py, which has 3 lines" in r.stderr
    err = json.loads(run("cat", "repo", "pkg/util.py", "--lines", "7", "--json").stdout)
    assert err["details"]["total_lines"] == 3
    assert run("cat", "repo", "pkg/util.py", "--lines", "x").exit_code == 2


def test_hints_name_cli_commands(demo: RepoBuilder):
    r = run("cat", "repo", "pkg/missing.py")
    assert r.exit_code == 2
    assert "`ctxd files`" in r.stderr and "search_files" not in r.stderr
    r = run("search", "x", "--repo", "nope", "--mode", "keyword", "--json")
    assert "`ctxd repos`" in json.loads(r.stdout)["hint"]


def test_eta_text():
    assert eta_text(0, 5.0) == "" and eta_text(10, 0.0) == ""
    assert eta_text(10, 5.0) == ", ETA 2s" and eta_text(650, 5.0) == ", ETA 2m10s"


def test_an_in_process_semantic_search_says_it_loads_the_model_on_a_terminal(
        isolated_env: Path):
    args = ("--no-daemon", "search", "anything", "--mode", "semantic")
    master, slave = pty.openpty()
    proc = subprocess.Popen(ctxd_argv(*args), stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    said = read_terminal(master)
    assert proc.wait(timeout=60) == 1
    assert (f"loading the model: {first_search.UNMEASURED}; `ctxd daemon start` keeps it "
            "warm...") in said
    piped = subprocess.run(ctxd_argv(*args), capture_output=True, text=True, check=False)
    assert "loading the model" not in piped.stderr  # a script's stderr stays quiet


def test_search_context_lines_is_validated(service: Service):
    from ctxd.indexer.errors import ValidationError

    with pytest.raises(ValidationError) as err:
        service.search("x", mode="lexical", context_lines=11)
    assert err.value.details["field"] == "context_lines"


def test_a_closed_pipe_ends_quietly(demo: RepoBuilder):
    """`ctxd search ... | head -1`: the reader leaves; no error, no traceback (as rg)."""
    proc = subprocess.Popen(ctxd_argv("search", "greet", "--mode", "lexical"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before it writes: its first write meets a closed pipe
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 0, err
    assert err == ""
