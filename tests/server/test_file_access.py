"""`file_content` / `ctxd cat` serve only what the walker would index (issue 9, item 1).

Real temp repositories, a real SQLite index (fake embedder), the MCP tool through the
SDK's in-memory client and the CLI through `CliRunner`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxd.indexer.errors import FileNotFound, FileRefused
from ctxd.server.cli.main import main
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.conftest import Env, text

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 8
SECRET = "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG\n"
KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"


def hostile(repo: RepoBuilder) -> RepoBuilder:
    """A repository holding, next to its source, everything the walker keeps out."""
    repo.write("app.py", "print('hello')\n")
    repo.write(".env", SECRET)
    repo.write(".ssh/id_rsa", KEY)
    repo.write("config/credentials.json", '{"token": "t0p"}\n')
    repo.write_bytes("logo.png", PNG)
    repo.write(".gitignore", "*.log\n")
    repo.write("debug.log", "ignored by .gitignore\n")
    repo.write("vendor/lib.py", "x = 1\n")
    repo.write_size("big.txt", 5000)
    repo.write("node_modules/pkg/index.js", "module.exports = 1\n")
    return repo


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    svc = Service(load_settings({"home": str(tmp_path / "ctxd-home")}), embedder=FakeEmbedder())
    yield svc
    svc.close()


@pytest.fixture
def indexed_repo(service: Service, repo: RepoBuilder) -> RepoBuilder:
    hostile(repo)
    stats = service.index(repo.root, exclude_patterns=["vendor/**"], max_file_size=4096)
    assert stats.files_indexed == 2  # app.py and .gitignore: nothing else is indexed
    return repo


REFUSED = [
    (".env", "sensitive", "looks like a secret", "sensitive_allow"),
    (".ssh/id_rsa", "sensitive", "looks like a secret", 'sensitive_allow = [".ssh"]'),
    ("config/credentials.json", "sensitive", "looks like a secret", "sensitive_allow"),
    ("logo.png", "binary", "not a text file", "UTF-8 text"),
    ("debug.log", "ignored", "an ignore file excludes it", ".ctxdignore"),
    ("vendor/lib.py", "excluded", "exclude pattern", "exclude_patterns"),
    ("big.txt", "too_large", "larger than the repository's size limit", "--max-file-size"),
    ("node_modules/pkg/index.js", "ignored", "never indexes", "never indexed or served"),
]


@pytest.mark.parametrize(("path", "reason", "why", "how"), REFUSED)
def test_file_content_refuses_what_the_walker_keeps_out(
    service: Service, indexed_repo: RepoBuilder, path: str, reason: str, why: str, how: str
):
    with pytest.raises(FileRefused) as exc:
        service.file_content("repo", path)
    err = exc.value
    assert err.code == "validation_error"
    assert err.message.startswith(f"File not served: repo/{path}: ")
    assert why in err.message and "serves only files it would index" in err.message
    assert err.hint is not None and how in err.hint
    assert err.details["reason"] == reason and err.details["field"] == "path"
    assert SECRET not in err.message + err.hint and "BEGIN" not in err.message + err.hint


def test_file_content_still_serves_indexed_files_and_not_found_for_the_rest(
    service: Service, indexed_repo: RepoBuilder
):
    assert service.file_content("repo", "./app.py").content == "print('hello')\n"
    for path in ("nope.py", "../etc/passwd", "/etc/passwd", "config", "app.py/x"):
        with pytest.raises(FileNotFound, match=r"File not found: repo/"):
            service.file_content("repo", path)


def test_a_symlink_to_a_secret_outside_the_root_is_not_found(
    service: Service, repo: RepoBuilder, tmp_path: Path
):
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("outside the repository\n", encoding="utf-8")
    repo.write("app.py", "x = 1\n")
    repo.symlink("link.txt", outside)
    service.index(repo.root)
    with pytest.raises(FileNotFound):
        service.file_content("repo", "link.txt")


def test_sensitive_allow_in_the_config_lets_a_sensitive_file_through(
    tmp_path: Path, repo: RepoBuilder
):
    repo.write(".env.example", "API_URL=http://localhost\n")
    settings = load_settings({"home": str(tmp_path / "h"),
                              "walk.sensitive_allow": [".env.example"]})
    svc = Service(settings, embedder=FakeEmbedder())
    try:
        svc.index(repo.root)
        assert svc.file_content("repo", ".env.example").content == "API_URL=http://localhost\n"
    finally:
        svc.close()


def test_a_bigger_max_file_size_at_index_time_lets_a_large_file_through(
    service: Service, repo: RepoBuilder
):
    repo.write_size("big.txt", 5000)
    service.index(repo.root, max_file_size=4096)
    with pytest.raises(FileRefused, match="size limit"):
        service.file_content("repo", "big.txt")
    service.index(repo.root, max_file_size=8192)
    assert service.file_content("repo", "big.txt").total_lines == 63


def test_mcp_file_content_refuses_secrets_and_binaries(indexed: Env, sample_repo: RepoBuilder):
    sample_repo.write(".env", SECRET)
    sample_repo.write_bytes("logo.png", PNG)
    for path, why in ((".env", "it looks like a secret"), ("logo.png", "it is not a text file")):
        result = indexed.call("file_content", {"repository": "sample", "path": path})
        body = text(result)
        assert result.is_error, body
        assert f"validation_error: File not served: sample/{path}: {why}" in body
        assert "Hint: " in body and "wJalrXUtnFEMI" not in body and "PNG" not in body


def test_mcp_file_content_notes_a_file_changed_since_it_was_indexed(
        indexed: Env, sample_repo: RepoBuilder) -> None:
    plain = text(indexed.call("file_content", {"repository": "sample", "path": "main.py"}))
    assert "Changed on disk" not in plain and "Not in the index" not in plain
    sample_repo.write("main.py", "print('edited')\n")
    sample_repo.write("later.py", "x = 1\n")
    edited = text(indexed.call("file_content", {"repository": "sample", "path": "main.py"}))
    assert "print('edited')" in edited
    assert "> Changed on disk since it was indexed: these are the lines on disk" in edited
    new = text(indexed.call("file_content", {"repository": "sample", "path": "later.py"}))
    assert "> Not in the index yet" in new


def run_cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_ctxd_cat_refuses_a_secret_with_the_reason_and_the_way_to_allow_it(
    service: Service, indexed_repo: RepoBuilder
):
    r = run_cli("cat", "repo", ".env")
    assert r.exit_code == 2
    assert "error: validation_error: File not served: repo/.env: it looks like a secret" in (
        r.output)
    assert "hint: " in r.output and "sensitive_allow" in r.output
    assert "wJalrXUtnFEMI" not in r.output
    r = run_cli("cat", "repo", "logo.png", "--json")
    assert r.exit_code == 2
    out = json.loads(r.stdout)
    assert out["error"] == "validation_error" and out["details"]["reason"] == "binary"


def test_ctxd_cat_says_on_stderr_when_the_file_changed_since_it_was_indexed(
        service: Service, repo: RepoBuilder) -> None:
    repo.write("app.py", "x = 1\n")
    service.index(repo.root)
    same = run_cli("--no-daemon", "cat", "repo", "app.py")
    assert same.stdout == "x = 1\n" and same.stderr == ""
    repo.write("app.py", "x = 2\n")
    changed = run_cli("--no-daemon", "cat", "repo", "app.py")
    assert changed.stdout == "x = 2\n"  # the lines on disk, nothing else on stdout
    assert "note: repo/app.py changed on disk since it was indexed" in changed.stderr
    assert json.loads(run_cli("--no-daemon", "cat", "repo", "app.py", "--json").stdout)[
        "index_state"] == "changed"
    repo.write("new.py", "y = 1\n")
    assert "is not in the index yet" in run_cli("--no-daemon", "cat", "repo", "new.py").stderr


GITHUB_TOKEN = "gh" + "p_" + "Zq3T8rWbN1yXkLm4Vd7Pc2Hs9Jf6Ga0Ue5Ri"


def test_file_content_refuses_a_file_that_holds_a_secret_as_the_index_does(
    service: Service, repo: RepoBuilder
):
    repo.write("config/settings.yaml", f"debug: false\ngithub_token: '{GITHUB_TOKEN}'\n")
    repo.write("app/settings.py", f"DEBUG = False\nGITHUB_TOKEN = '{GITHUB_TOKEN}'\n")
    repo.write("credentials/credentials.go", "package credentials\n\ntype Store interface{}\n")
    stats = service.index(repo.root)
    assert stats.sensitive_files == ["config/settings.yaml"]
    with pytest.raises(FileRefused) as exc:
        service.file_content("repo", "config/settings.yaml")
    assert "it looks like a secret (holds a GitHub token (line 2))" in exc.value.message
    assert GITHUB_TOKEN not in exc.value.message + (exc.value.hint or "")
    assert "type Store interface" in service.file_content(
        "repo", "credentials/credentials.go").content
    # source code is served as indexed: the token masked, character for character
    masked = service.file_content("repo", "app/settings.py").content
    assert masked == "DEBUG = False\nGITHUB_TOKEN = '" + "*" * len(GITHUB_TOKEN) + "'\n"


def test_file_content_serves_a_large_lockfile_and_refuses_large_code(
    service: Service, repo: RepoBuilder
):
    lock = "".join(f"github.com/org{i}/mod v1.{i}.0 h1:{i:044d}=\n" for i in range(40_000))
    repo.write("go.sum", lock)
    repo.write("gen/huge.go", "package gen\n\nvar X = 1\n" * 100_000)
    assert len(lock) > 2_000_000
    service.index(repo.root)
    page = service.file_content("repo", "go.sum", start_line=39_999, end_line=40_000)
    assert "github.com/org39999/mod" in page.content
    with pytest.raises(FileRefused, match="larger than the repository's size limit"):
        service.file_content("repo", "gen/huge.go")


def test_file_content_says_whether_the_file_changed_since_it_was_indexed(
        service: Service, repo: RepoBuilder) -> None:
    """`index_state`: the text on disk against the index's copy (the UI's file view and any
    other edge read it from the one use case); a touched file is unchanged."""
    import os

    repo.write("app.py", "def main():\n    return 1\n")
    from tests.server.test_secrets_served import TOKEN

    repo.write("client.py", f'TOKEN = "{TOKEN}"\n')  # indexed and served masked
    assert service.index(repo.root).masked_files == ["client.py"]
    assert service.file_content("repo", "app.py").index_state == "indexed"
    assert service.file_content("repo", "client.py").index_state == "indexed"
    os.utime(repo.root / "app.py", (1, 1))
    assert service.file_content("repo", "app.py").index_state == "indexed"
    repo.write("app.py", "def main():\n    return 2\n")
    part = service.file_content("repo", "app.py", start_line=2, end_line=2)
    assert part.index_state == "changed" and part.content == "    return 2\n"
    repo.write("new.py", "x = 1\n")
    assert service.file_content("repo", "new.py").index_state == "not indexed"
    service.index(repo.root)
    assert {service.file_content("repo", p).index_state for p in ("app.py", "new.py")} == {
        "indexed"}
