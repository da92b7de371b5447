"""CLI output that stays exact and parseable (issue 9): `ctxd cat --json` equals the file,
bare-CR files and odd file names, notes in `ctxd search`, JSON usage errors.

The index is built by the service with the fake embedder (a real SQLite file under
`CTXD_HOME`); the CLI runs through `CliRunner` against the same folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxd.server.cli import render
from ctxd.server.cli.main import main
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.indexer.walk.test_walker_names import bad_names


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def service(isolated_env: Path) -> Iterator[Service]:
    svc = Service(load_settings({}), embedder=FakeEmbedder())
    yield svc
    svc.close()


# -- item 6: cat --json keeps the final newline -----------------------------------------------


def test_cat_json_content_is_the_file(service: Service, repo: RepoBuilder):
    text = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"
    repo.write("m.py", text)
    repo.write("no_eol.py", "x = 1\ny = 2")
    service.index(repo.root)
    out = json.loads(run("cat", "repo", "m.py", "--json").stdout)
    assert out["content"] == text and out["total_lines"] == 6
    assert json.loads(run("cat", "repo", "no_eol.py", "--json").stdout)["content"] == "x = 1\ny = 2"
    tail = json.loads(run("cat", "repo", "m.py", "--lines", "5:", "--json").stdout)
    assert tail["content"] == "def b():\n    return 2\n"
    middle = json.loads(run("cat", "repo", "m.py", "--lines", "1:2", "--json").stdout)
    assert middle["content"] == "def a():\n    return 1"
    assert run("cat", "repo", "m.py").stdout == text


# -- item 26: bare CR line ends, control characters in file names ----------------------------


def test_bare_cr_line_ends_are_lines(service: Service, repo: RepoBuilder):
    repo.write_bytes("old_mac.txt", b"first line\rsecond needle_cr\rthird line\r")
    service.index(repo.root)
    out = json.loads(run("search", "needle_cr", "--mode", "lexical", "--json").stdout)
    (hit,) = out["results"]
    assert hit["matches"][0]["line"] == 2 and hit["start_line"] == 1
    assert hit["snippet"].split("\n") == ["first line", "second needle_cr", "third line"]
    assert hit["matches"][0]["text"] == "second needle_cr"
    r = run("cat", "repo", "old_mac.txt", "--lines", "2:2", "--json")
    assert json.loads(r.stdout)["content"] == "second needle_cr"
    r = run("cat", "repo", "old_mac.txt")
    assert "\r" not in r.stdout and r.stdout.splitlines()[1] == "second needle_cr"


def test_a_newline_in_a_file_name_stays_on_one_output_line(service: Service, repo: RepoBuilder):
    repo.write("two\nlines_name.py", "marker_nl = 1\n")
    service.index(repo.root)
    r = run("files", "lines_name")
    assert r.exit_code == 0
    assert r.stdout.splitlines() == ["repo/two\\nlines_name.py"]
    r = run("search", "marker_nl", "--mode", "lexical")
    assert r.stdout.splitlines() == ["repo/two\\nlines_name.py",
                                     "repo/two\\nlines_name.py:1  marker_nl", "1:marker_nl = 1"]
    out = json.loads(run("files", "lines_name", "--json").stdout)
    assert out["results"][0]["path"] == "two\nlines_name.py"


# -- item 23: file names that are not valid UTF-8 ---------------------------------------------


def test_indexing_skips_them_and_every_json_output_is_valid_utf8(
    service: Service, repo: RepoBuilder
):
    bad_names(repo)
    stats = service.index(repo.root)
    assert stats.files_indexed == 1 and stats.files_failed == []
    assert stats.files_skipped == {"bad_name": 2}
    out = render.dumps({"file": os.fsdecode(b"caf\xe9.py")}).encode("utf-8")
    assert json.loads(out.decode("utf-8")) == {"file": "caf\udce9.py"}


@pytest.mark.model
def test_ctxd_index_json_with_a_non_utf8_file_name(repo: RepoBuilder):
    bad_names(repo)
    r = CliRunner().invoke(main, ["index", str(repo.root), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout_bytes.decode("utf-8"))
    assert out["files_skipped"] == {"bad_name": 2} and out["files_failed"] == []
    assert "Traceback" not in r.stderr


# -- item 25: usage errors with --json print the documented error object ----------------------


@pytest.mark.parametrize(("args", "message", "field"), [
    (["search", "--limit", "0", "--json", "q"],
     "Invalid value for '--limit': 0 is not in the range 1<=x<=100.", "limit"),
    (["search", "--bogus", "--json", "q"], "No such option '--bogus'.", None),
    (["serch", "--json", "q"], "No such command 'serch'.", None),
    (["cat", "--json"], "Missing argument 'REPO'.", "repo"),
    (["search", "--json"], "QUERY is required (or --batch FILE)", None),
])
def test_usage_errors_with_json_print_the_error_object(
    args: list[str], message: str, field: str | None
):
    r = CliRunner().invoke(main, args, prog_name="ctxd")
    assert r.exit_code == 2
    out = json.loads(r.stdout)
    assert out["error"] == "validation_error" and out["message"].startswith(message)
    assert out["hint"].startswith("Run `ctxd") and out["details"]["usage"].startswith("Usage: ")
    assert out["details"].get("field") == field
    assert r.stderr == ""


def test_usage_errors_without_json_stay_clicks_text():
    r = CliRunner().invoke(main, ["search", "--limit", "0", "q"])
    assert r.exit_code == 2 and r.stdout == ""
    assert "Error: Invalid value for '--limit'" in r.stderr


# -- item 4: ctxd search shows the engine's notes (stderr in text mode, "notes" in JSON) ------


@pytest.mark.parametrize(("query", "note"), [
    ("re", "note: bounded scan: the query has no literal of 3+ characters"),
    ("lang:cobol retry", "note: lang:cobol matches no indexed file"),
])
def test_search_shows_the_engines_notes(service: Service, repo: RepoBuilder, query: str,
                                        note: str):
    repo.write("net/retry.py", "def retry():\n    return 're'\n")
    service.index(repo.root)
    r = run("search", query, "--mode", "lexical")
    assert note in r.stderr and "note:" not in r.stdout
    out = json.loads(run("search", query, "--mode", "lexical", "--json").stdout)
    assert any(n.startswith(note.removeprefix("note: ")) for n in out["notes"]), out["notes"]


# -- issue 31, item 9: a repository's name never reaches the terminal raw --------------------


def test_a_repository_name_with_terminal_escapes_is_shown_escaped(service: Service,
                                                                   tmp_path: Path):
    """A folder named with escape sequences (clear the screen, set the title, a fake
    prompt after a newline) is indexed under that name; in a team store every reader's
    `ctxd status`, `repos` and `index` would print it. Text output shows it escaped."""
    name = "proj\x1b[2J\x1b]0;owned\x07\nfake$ "
    repo = RepoBuilder(tmp_path / name)
    repo.write("main.py", "marker_esc = 1\n")
    stats = service.index(repo.root)
    shown = "proj\\x1b[2J\\x1b]0;owned\\x07\\nfake$ "
    outputs = {"index": render.index_stats_text(stats)}  # what `ctxd index` prints
    for command in ("status", "repos"):
        r = run(command)
        assert r.exit_code == 0, (command, r.output)
        outputs[command] = r.output
    for command, out in outputs.items():
        assert "\x1b" not in out and "\x07" not in out, command
        assert shown in out, (command, out)
    listing = json.loads(run("repos", "--json").stdout)
    assert [r["name"] for r in listing["repositories"]] == [name]


def test_ctxd_index_names_the_files_it_indexed_with_a_secret_masked(tmp_path: Path) -> None:
    """Issue 31, item 13: code that holds a key is indexed with the key masked, and the run
    says which files (text and `--json`), as it names the files it left out."""
    repo = tmp_path / "svc"
    (repo / "tlsutil").mkdir(parents=True)
    key = "\n".join(["-----BEGIN RSA PRIVATE KEY-----",
                     *["MIIEowIBAAKCAQEA7bq0k9Rr2v8yQ2mE1sX4kq8yP7GJ0c1b2fWdZ3hX9aQ1Lx5t"] * 6,
                     "-----END RSA PRIVATE KEY-----"])
    (repo / "tlsutil" / "key_test.go").write_text(
        'package tlsutil\n\nconst testKey = `' + key + '`\n\nfunc TestParseKey() {}\n',
        encoding="utf-8")
    run = [sys.executable, "-m", "ctxd.server.cli.main", "--no-daemon", "index"]
    text = subprocess.run([*run, "--dry-run", str(repo)], capture_output=True, text=True,
                          check=True).stdout
    assert "Likely secrets masked" in text and "tlsutil/key_test.go" in text, text
    out = subprocess.run([*run, "--json", str(repo)], capture_output=True, text=True, check=True)
    stats = json.loads(out.stdout)
    assert stats["files_masked"] == 1 and stats["masked_files"] == ["tlsutil/key_test.go"]
