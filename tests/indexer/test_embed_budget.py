"""Issue 39, item 10: a per-run budget of checkpoints to embed. Many files just under the
data threshold made thousands of checkpoints with no warning; a run now embeds at most
`embedding.run_budget` checkpoints, leaves the rest waiting (greppable meanwhile, embedded
by the next runs) and says so, as does `--dry-run` before anything is paid. A real pipeline
into a real SQLite index (fake embedder), the service with the setting, the CLI's text."""

from __future__ import annotations

from pathlib import Path

from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.sqlite.store import Store
from ctxd.indexer.walk.walker import WalkOptions
from ctxd.server.cli.render import index_stats_text
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder


def many_configs(repo: RepoBuilder, files: int = 12) -> None:
    for i in range(files):
        repo.write(f"deploy/service{i}.yaml", "".join(
            f"step{j}:\n  name: service {i} step {j}\n  run: make target-{i}-{j} --flag {j}\n"
            for j in range(120)))


def test_a_run_embeds_at_most_its_budget_and_says_the_rest(
        repo: RepoBuilder, tmp_path: Path) -> None:
    many_configs(repo)
    store = Store.open(tmp_path / "index.db")
    plan = Indexer(store, FakeEmbedder(), embed_budget=20).index(
        repo.root, WalkOptions(), dry_run=True)
    total = plan.chunks_to_embed
    assert total > 40
    assert plan.embed_budget == 20 and plan.over_budget == total - 20
    assert f"{total - 20} checkpoints over the per-run budget of 20" in index_stats_text(plan)

    stats = Indexer(store, FakeEmbedder(), embed_budget=20).index(repo.root, WalkOptions())
    assert stats.chunks_embedded == 20 and stats.over_budget == total - 20
    assert f"{total - 20} checkpoints over the per-run budget of 20" in index_stats_text(stats)
    assert store.query("SELECT count(*) FROM file_text")[0][0] == 12  # all greppable

    again = Indexer(store, FakeEmbedder(), embed_budget=20).index(repo.root, WalkOptions())
    assert again.chunks_embedded == 20 and again.over_budget == total - 40
    rest = Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions())
    assert rest.chunks_embedded == total - 40 and rest.over_budget == 0
    assert "per-run budget" not in index_stats_text(rest)


def test_the_budget_is_a_setting(repo: RepoBuilder, tmp_path: Path) -> None:
    many_configs(repo, files=4)
    settings = load_settings({"home": str(tmp_path / "home"), "embedding.run_budget": 7})
    assert settings.embedding.run_budget == 7
    service = Service(settings, embedder=FakeEmbedder())
    try:
        plan = service.index(repo.root, dry_run=True)
        assert plan.embed_budget == 7 and plan.over_budget == plan.chunks_to_embed - 7
        stats = service.index(repo.root)
        assert stats.chunks_embedded == 7
    finally:
        service.close()
    assert load_settings({"home": str(tmp_path / "home")}).embedding.run_budget == 50_000
