"""Skipped files by reason, kept in the index by the last run that walked the whole
repository (`server.inventory.remember_skipped`): `status()` (the CLI's `status --json`,
the UI's repositories page) shows them without a new walk. Real temp repository, real
SQLite index, the fake embedder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    svc = Service(load_settings({"home": str(tmp_path / "ctxd-home")}), embedder=FakeEmbedder())
    yield svc
    svc.close()


def kept(service: Service) -> Any:
    (row,) = service.status()["repositories"]
    return row["skipped"]


def test_a_whole_run_keeps_its_skipped_files_by_reason(
        service: Service, repo: RepoBuilder) -> None:
    repo.write("app.py", "def main():\n    return 1\n")
    repo.write(".env", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG\n")
    repo.write_bytes("logo.bin", bytes(range(256)) * 8)
    stats = service.index(repo.root)
    assert stats.files_skipped == {"binary": 1, "sensitive": 1}
    first = kept(service)
    assert first["counts"] == {"binary": 1, "sensitive": 1}
    assert first["at"] == service.status()["repositories"][0]["indexed_at"]
    service.index(repo.root, dry_run=True)  # a dry run writes nothing, these neither
    (repo.root / "logo.bin").unlink()
    service.index(repo.root, dry_run=True)
    assert kept(service)["counts"] == {"binary": 1, "sensitive": 1}
    repo.write_bytes("more.bin", bytes(range(256)) * 8)  # a watcher's run: its paths only
    service.index(repo.root, only_paths=["more.bin"])
    assert kept(service)["counts"] == {"binary": 1, "sensitive": 1}
    service.index(repo.root)  # the next whole run counts again
    assert kept(service)["counts"] == {"binary": 1, "sensitive": 1}
    (repo.root / "more.bin").unlink()
    (repo.root / ".env").unlink()
    service.index(repo.root)
    assert kept(service)["counts"] == {}


def test_a_removed_repository_leaves_no_counts_behind(
        service: Service, repo: RepoBuilder, tmp_path: Path) -> None:
    from ctxd.server.inventory import SKIPPED_META

    repo.write("app.py", "x = 1\n")
    repo.write(".env", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG\n")
    service.index(repo.root, embed=False)
    assert kept(service)["counts"] == {"sensitive": 1}
    (old,) = service.store().repos()
    service.remove("repo")
    assert service.store().get_meta(SKIPPED_META.format(old.id)) == ""
    other = RepoBuilder(tmp_path / "other")  # a new repository, whatever id it gets
    other.write("b.py", "y = 2\n")
    service.index(other.root, embed=False)
    assert kept(service)["counts"] == {}


def test_ctxd_status_prints_them(tmp_path: Path, repo: RepoBuilder) -> None:
    from click.testing import CliRunner

    from ctxd.server.cli.main import main

    repo.write("app.py", "x = 1\n")
    repo.write(".env", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG\n")
    service = Service(load_settings({"home": str(tmp_path / "ctxd-home")}),
                      embedder=FakeEmbedder())
    try:
        service.index(repo.root)
    finally:
        service.close()
    out = CliRunner().invoke(main, ["--home", str(tmp_path / "ctxd-home"), "--no-daemon",
                                    "status"], catch_exceptions=False).output
    assert "    skipped: sensitive 1 (at the run of 20" in out, out
