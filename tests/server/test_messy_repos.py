"""A messy real-world tree (lockfiles, a one-line SVG, a minified bundle, certificates,
a base64 blob, vendored and generated code, a PNG) through the service, the CLI and MCP:
junk never reaches a semantic, keyword or hybrid answer, lockfiles stay greppable, the
index reports name what was left out, and no hit's score runs away (issue 15)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxd.server.cli.main import main
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.indexer.walk.test_textclass import EXPECTED, messy
from tests.server.conftest import text

JUNK = {rel for rel, role in EXPECTED.items() if role.lexical_only}
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64)


@pytest.fixture
def tree(repo: RepoBuilder) -> RepoBuilder:
    messy(repo)
    repo.write_bytes("static/logo.png", PNG)
    return repo


def service_for(tmp_path: Path, **flags: object) -> Service:
    return Service(load_settings({"home": str(tmp_path / "home"), **flags}),
                   embedder=FakeEmbedder())


@pytest.fixture
def service(tmp_path: Path, tree: RepoBuilder) -> Iterator[Service]:
    svc = service_for(tmp_path)
    svc.index(tree.root)
    yield svc
    svc.close()


QUERIES = ["checksum of a herd of zebras", "left-pad 1.3.0 integrity", "zebras",
           "BEGIN CERTIFICATE", "errors New returns an error", "function return window"]


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "keyword"])
def test_no_junk_in_any_ranked_mode(service: Service, mode: str) -> None:
    for q in QUERIES:
        paths = {h.path for h in service.search(q, mode=mode, limit=50).results}
        assert not paths & JUNK, f"{mode} {q!r}: {sorted(paths & JUNK)}"
    top = service.search("checksum of a herd of zebras", mode=mode).results[0]
    assert top.path == "src/checksum.py"


def test_lockfiles_stay_greppable(service: Service) -> None:
    hits = service.search('"left-pad"', mode="lexical").results
    assert {"package-lock.json", "web/yarn.lock"} <= {h.path for h in hits}
    go = service.search("github.com/pkg/errors", mode="lexical").results
    assert "go.sum" in {h.path for h in go}


def test_coverage_is_complete_after_indexing(service: Service) -> None:
    page = service.search("zebras", mode="hybrid")
    assert not any("embedded" in n and "%" in n for n in page.notes), page.notes
    repo = next(r for r in service.repos() if r["name"] == "repo")
    assert repo["coverage"] in (1.0, 100, 100.0) or repo["coverage"] == pytest.approx(1.0)


def test_one_line_giants_cannot_outscore_a_real_match(tmp_path: Path, tree: RepoBuilder) -> None:
    """With the rules off, the SVG is ~hundreds of checkpoints that all span line 1: each
    is its own checkpoint in fusion, so none collects the others' scores."""
    svc = service_for(tmp_path, **{"walk.lexical_only_rules": False})
    try:
        stats = svc.index(tree.root)
        assert stats.checkpoints > 100
        for mode in ("hybrid", "semantic", "keyword"):
            hits = svc.search("checksum of a herd of zebras", mode=mode, limit=20).results
            assert hits[0].path == "src/checksum.py", (mode, [(h.path, h.score) for h in hits])
            if mode != "keyword":  # BM25 scores are not normalised
                assert max(h.score for h in hits) <= 3.0, mode
            svg = [h for h in hits if h.path == "static/logo.svg"]
            assert all(h.score < hits[0].score for h in svg), mode
    finally:
        svc.close()


def run_cli(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return r.exit_code, r.output


def test_cli_index_names_what_was_skipped_and_not_embedded(tree: RepoBuilder) -> None:
    code, out = run_cli("index", str(tree.root), "--json")
    assert code == 0, out
    stats = json.loads(out)
    assert {"path": "static/logo.png", "reason": "binary"}.items() <= next(
        s for s in stats["skipped_files"] if s["path"] == "static/logo.png").items()
    assert stats["not_embedded"]["lockfile"] == 3
    assert {f["path"] for f in stats["not_embedded_files"]} == JUNK
    code, out = run_cli("index", str(tree.root), "--dry-run")
    assert code == 0
    code, out = run_cli("index", str(tree.root))
    assert "Not embedded (kept for lexical search): 10" in out
    assert "data/blob.b64" in out and "walk.embed_allow" in out
    assert "static/logo.png (binary)" in out


def test_mcp_index_repository_names_them(env_factory, tree: RepoBuilder) -> None:  # type: ignore[no-untyped-def]
    env = env_factory(**{"server.allowed_roots": [str(tree.root.parent)]})
    env.embedder.release()
    result = env.index(tree.root)
    body = result.structured_content or {}
    assert body["not_embedded"]["minified"] == 2
    assert any(s["file"] == "static/logo.png" for s in body["skipped"])
    assert "Not embedded (kept for lexical search)" in text(result)
    answer = env.call("semantic_search", {"query": "checksum of a herd of zebras"})
    paths = {h["path"] for h in (answer.structured_content or {})["results"]}
    assert paths and not paths & JUNK
