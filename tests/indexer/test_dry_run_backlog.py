"""A dry run counts the embeddings a real run would make, the backlog included (found on a
messy tree: after a run that left 12,753 checkpoints over `embedding.run_budget` and said
"the largest files are listed by --dry-run", `ctxd index --dry-run` said "would embed 0
checkpoints"; so too after an interrupted run).

A real temp repository, a real SQLite index, the fake embedder.
"""

from __future__ import annotations

from pathlib import Path

from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder


def test_a_dry_run_counts_the_backlog_a_real_run_would_embed(
    tmp_path: Path, repo: RepoBuilder
) -> None:
    for i in range(12):
        repo.write(f"m{i:02d}.py", f"def work_{i}(x):\n    return x + {i}\n")
    service = Service(load_settings({"home": str(tmp_path / "home")}), embedder=FakeEmbedder())
    try:
        service.index(repo.root, embed=False)  # text written, embeddings left to do
        store = service.store()
        pending = store.count_pending(next(r.id for r in store.repos()))
        assert pending >= 12
        plan = service.index(repo.root, dry_run=True)
        assert plan.files_updated == 0  # nothing changed on disk ...
        assert plan.chunks_to_embed == pending  # ... but the backlog is still to embed
        assert plan.tokens_to_embed > 0
        done = service.index(repo.root)
        assert done.chunks_embedded > 0 and store.count_pending(None) == 0
        assert service.index(repo.root, dry_run=True).chunks_to_embed == 0
    finally:
        service.close()
