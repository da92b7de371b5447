"""The `ctxd` CLI end to end: real temp repositories, a real SQLite file, the real model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from ctxd.server.cli.main import main
from tests.server.conftest import RETRY

ROOT = Path(__file__).resolve().parents[3]

COLORS = '''"""Terminal colours."""


def rgb_to_ansi256(r, g, b):
    """Pick the closest entry of the 256-colour palette for a 24-bit colour."""
    return 16 + 36 * (r // 51) + 6 * (g // 51) + (b // 51)
'''

TEMPLATE = '''"""HTML templates."""


def render_page(title, body):
    """Fill the page template with a title and body and escape HTML special characters."""
    return "<h1>%s</h1><p>%s</p>" % (title.replace("<", "&lt;"), body.replace("<", "&lt;"))
'''


def run(*args: str):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result


@pytest.fixture
def project(repo):
    repo.write("net/retry.py", RETRY)
    repo.write("ui/colors.py", COLORS)
    repo.write("web/templates.py", TEMPLATE)
    repo.write("docs/guide.md", "# Guide\n\n## Install\n\nUse pip to install the package.\n")
    return repo


@pytest.mark.model
def test_index_then_search_finds_the_file_for_a_question(project):
    r = run("index", str(project.root), "--json")
    assert r.exit_code == 0, r.output
    stats = json.loads(r.output)
    for key in ("path", "files_indexed", "files_unchanged", "files_removed", "files_skipped",
                "files_failed", "checkpoints", "include_patterns", "exclude_patterns",
                "max_file_size", "indexed_at", "duration_ms"):
        assert key in stats
    assert stats["files_indexed"] == 4
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", stats["indexed_at"])

    r = run("search", "wait longer between attempts after a connection fails", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    top = out["results"][0]
    assert top["path"] == "net/retry.py"
    assert set(top) >= {"repository", "path", "start_line", "end_line", "language", "symbol",
                        "score", "snippet", "sources"}
    assert top["repository"] == "repo" and top["language"] == "python"

    r = run("search", "closest palette colour for an RGB value", "--limit", "1")
    assert r.exit_code == 0
    assert "ui/colors.py" in r.output


@pytest.mark.model
def test_search_filters_and_paging(project):
    assert run("index", str(project.root)).exit_code == 0
    r = run("search", "install", "--lang", "markdown", "--json")
    assert {h["path"] for h in json.loads(r.output)["results"]} == {"docs/guide.md"}
    r = run("search", "function", "--path", "web/**", "--json")
    assert {h["path"] for h in json.loads(r.output)["results"]} == {"web/templates.py"}
    seen, cursor = [], None
    for _ in range(10):
        args = ["search", "code", "--limit", "1", "--json"]
        args += ["--cursor", cursor] if cursor else []
        page = json.loads(run(*args).output)
        seen += [(h["path"], h["start_line"]) for h in page["results"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert len(seen) == len(set(seen)) >= 4
    r = run("search", "other question", "--cursor", cursor or "bogus", "--json")
    assert r.exit_code == 2
    assert json.loads(r.output)["error"] == "INVALID_CURSOR"


def test_index_errors_name_the_field_and_exit_2(tmp_path):
    r = run("index", str(tmp_path / "missing"))
    assert r.exit_code == 2
    assert "error: validation_error: path does not exist" in r.output
    r = run("index", str(tmp_path), "--max-file-size", "20971520", "--json")
    assert r.exit_code == 2
    err = json.loads(r.output)
    assert err["error"] == "validation_error"
    assert err["details"] == {"field": "max_file_size", "max_allowed": 10485760,
                              "provided": 20971520}
    r = run("index", str(tmp_path), "--include", "[bad", "--json")
    assert json.loads(r.output)["details"]["field"] == "include_patterns"


def test_dry_run_reports_without_writing(project, fake_embedder):
    r = run("index", str(project.root), "--dry-run", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["dry_run"] is True and out["files_indexed"] == 4
    assert out["chunks_to_embed"] >= 4 and out["tokens_to_embed"] > 0
    r = run("repos", "--json")
    assert json.loads(r.output)["total"] == 0


@pytest.mark.model
def test_status_repos_remove(project):
    run("index", str(project.root))
    st = json.loads(run("status", "--json").output)
    assert st["model"] == "all-MiniLM-L6-v2" and st["dimension"] == 384
    (repo,) = st["repositories"]
    assert repo["name"] == "repo" and repo["files"] == 4 and repo["coverage"] == 1.0
    assert repo["indexed_at"]
    text = run("status").output
    assert "repo" in text and "100.0%" in text
    assert run("remove", "repo").exit_code == 0
    assert json.loads(run("repos", "--json").output)["total"] == 0
    r = run("remove", "repo")
    assert r.exit_code == 2 and "Repository not indexed: repo" in r.output


def test_search_on_an_empty_index_exits_1():
    r = run("search", "anything")
    assert r.exit_code == 1
    assert "No results" in r.output


def test_model_mismatch_on_search_is_a_clear_error(project, tmp_path):
    from ctxd.indexer.store.sqlite.store import Store
    from ctxd.server.config import load_settings

    s = load_settings()
    with Store.open(s.db_path) as store:
        store.ensure_model("some-other-model", 8)
    r = run("search", "anything")
    assert r.exit_code == 2
    assert "error: validation_error:" in r.output and "some-other-model" in r.output
    assert "hint:" in r.output


def test_every_command_has_help_with_an_example_and_is_in_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    names = main.list_commands(click.Context(main))  # includes the lazily loaded ones
    assert {"serve", "watch", "daemon"} <= set(names)
    for name in names:
        cmd = main.get_command(click.Context(main), name)
        r = run(name, "--help")
        assert r.exit_code == 0
        assert "Example" in r.output, name
        assert f"ctxd {name}" in readme, name
        assert isinstance(cmd, click.Command)


SHOP = '''class Cart:
    def total(self, prices):
        return sum(prices)


def checkout(cart):
    return cart.total([1, 2])
'''


@pytest.mark.model
def test_symbols_refs_files_cat_and_lexical_search(repo):
    repo.write("shop/cart.py", SHOP)
    repo.write("shop/api.py", "from shop.cart import Cart\n\ncart = Cart()\ncart.total([])\n")
    assert run("index", str(repo.root)).exit_code == 0

    out = json.loads(run("symbols", "tot", "--json").output)
    assert out["items"][0] == {"name": "total", "kind": "method", "path": "shop/cart.py",
                               "line": 2, "container": "Cart", "repository": "repo"}
    assert out["total"] >= 1 and out["has_more"] is False
    assert run("symbols", "zzzz").exit_code == 1

    out = json.loads(run("refs", "total", "--json").output)
    assert [(d["path"], d["line"]) for d in out["definitions"]] == [("shop/cart.py", 2)]
    # resolved: `cart = Cart()` then `cart.total`; `checkout(cart)`'s parameter has no type
    assert [(u["path"], u["line"], u["kind"]) for u in out["usages"]] == [
        ("shop/api.py", 4, "call")]
    assert out["unresolved"] == 1
    out = json.loads(run("refs", "total", "--by-name", "--json").output)
    assert {(u["path"], u["line"]) for u in out["usages"]} == {("shop/cart.py", 7),
                                                                ("shop/api.py", 4)}
    assert out["stats"]["language"] == "python"

    out = json.loads(run("files", "**/api.py", "--json").output)
    assert [r["path"] for r in out["results"]] == ["shop/api.py"]

    out = json.loads(run("cat", "repo", "shop/cart.py", "--lines", "2:3", "--json").output)
    assert out["content"] == "    def total(self, prices):\n        return sum(prices)"
    r = run("cat", "repo", "../etc/passwd")
    assert r.exit_code == 2 and "File not found: repo/../etc/passwd" in r.output

    out = json.loads(run("search", "case:yes Cart\\(\\)", "--mode", "lexical", "--json").output)
    (hit,) = out["results"]
    assert hit["path"] == "shop/api.py" and hit["sources"] == ["lexical"]
    assert hit["matches"] == [{"line": 3, "start_column": 8, "end_column": 14,
                               "text": "cart = Cart()"}]
    r = run("search", "foo(", "--mode", "lexical", "--json")
    assert r.exit_code == 2 and json.loads(r.output)["error"] == "QUERY_ERROR"


def test_explain_shows_the_plan_before_the_hits(repo):
    repo.write("a.py", "def follow_redirects():\n    pass\n")
    r = run("search", 'case:yes "def \\\\w+_redirects"', "--mode", "lexical", "--explain")
    assert r.exit_code == 0
    assert "trigrams:" in r.output and "file_text MATCH" in r.output
    r = run("search", "stop following redirects", "--explain")
    assert "keyword terms: stop, following, redirects" in r.output
    assert "fusion: score over 100 hits per leg; natural-language query" in r.output
    assert "file summaries: weight 0.1" in r.output and "how-to" not in r.output
    r = run("search", "how do I stop following redirects?", "--explain")
    assert "a how-to question: prose files x1.4" in r.output


def test_config_option_is_read_without_touching_the_environment(tmp_path, monkeypatch):
    import os

    monkeypatch.delenv("CTXD_HOME")
    cfg = tmp_path / "ctxd.toml"
    cfg.write_text(f'home = "{tmp_path / "from-config"}"\n', encoding="utf-8")
    out = json.loads(run("--config", str(cfg), "status", "--json").output)
    assert out["home"] == str(tmp_path / "from-config")
    assert "CTXD_CONFIG" not in os.environ
    r = run("--config", str(tmp_path / "missing.toml"), "status")
    assert r.exit_code == 2 and "cannot read config file" in r.output
