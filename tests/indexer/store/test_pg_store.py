"""What only the PostgreSQL store has to prove, on the session's real server: migrations that
several processes start at once run once; one writer per repository, several repositories
at once, and a killed writer's lock and half-done run left for the next run to complete; a
read-only role searches and is told clearly that it may not index; the URL's password never
shows and its TLS parameters reach libpq."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from click.testing import CliRunner

from ctxd.indexer.errors import BackendUnavailable, IndexLocked, StorageError
from ctxd.indexer.store.location import StoreOptions, redact_url
from ctxd.indexer.store.open import open_store, write_lock
from ctxd.indexer.store.pg.pool import close_pools
from ctxd.indexer.store.pg.schema import MIGRATIONS
from ctxd.server.cli.main import main
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder

ROOT = Path(__file__).resolve().parents[3]


def child(code: str, **env: str) -> subprocess.Popen[str]:
    """A Python process running `code` with this checkout importable."""
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env})


def test_processes_opening_a_new_store_at_once_migrate_it_once(pg_url: str) -> None:
    code = """
        from pathlib import Path
        from ctxd.indexer.store.location import StoreOptions
        from ctxd.indexer.store.open import open_store
        store = open_store(Path('/nonexistent'), StoreOptions(url=__import__('os').environ['URL']))
        print(store.get_meta('schema_version'))
    """
    procs = [child(code, URL=pg_url) for _ in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [e for _o, e in outs]
    assert {o.strip() for o, _e in outs} == {str(len(MIGRATIONS))}
    store = open_store(Path("/nonexistent"), StoreOptions(url=pg_url))
    assert store.query("SELECT count(*) FROM pg_class WHERE relname = 'repos' AND "
                       "relnamespace = current_schema()::regnamespace")[0][0] == 1


def test_one_writer_per_repository_and_several_repositories_at_once(pg_url: str) -> None:
    options = StoreOptions(url=pg_url)
    first = write_lock(Path("/x"), options, "/src/app")
    first.acquire()
    try:
        other_repo = write_lock(Path("/x"), options, "/src/lib")
        assert other_repo.try_acquire(wait=0)  # a second repository: no wait
        other_repo.release()
        second = write_lock(Path("/x"), options, "/src/app")
        assert not second.try_acquire(wait=0.3)
        heard: list[str] = []
        with pytest.raises(IndexLocked) as refused:
            second.acquire(wait=0.5, on_wait=heard.append)
        assert f"ctxd {os.getpid()} on" in refused.value.message
        assert heard and heard[0].startswith(f"ctxd {os.getpid()} on")
        assert second.is_held()
    finally:
        first.release()
    assert not write_lock(Path("/x"), options, "/src/app").is_held()


def test_a_killed_writer_leaves_a_consistent_store_that_the_next_run_completes(
        pg_url: str, tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "big")
    for i in range(40):
        repo.write(f"pkg/mod{i:02d}.py",
                   f'def handler_{i}(request):\n    """Serve request {i}."""\n    return {i}\n')
    code = """
        import os, sys, threading
        from tests.conftest import FakeEmbedder
        from ctxd.server.config import load_settings
        from ctxd.server.service import Service

        class Stall(FakeEmbedder):
            seen = 0
            def count_tokens(self, texts):
                Stall.seen += 1
                if Stall.seen == 25:  # after the first commits: say so, then hang
                    print("halfway", flush=True)
                    threading.Event().wait()
                return super().count_tokens(texts)

        settings = load_settings({"home": os.environ["HOME_DIR"], "store.url": os.environ["URL"]})
        Service(settings, embedder=Stall()).index(os.environ["REPO"])
    """
    proc = child(code, URL=pg_url, HOME_DIR=str(tmp_path / "home-a"), REPO=str(repo.root))
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == "halfway", proc.stderr.read() if proc.stderr else line
        locked = write_lock(Path("/x"), StoreOptions(url=pg_url), str(repo.root))
        assert locked.is_held()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    store = open_store(Path("/nonexistent"), StoreOptions(url=pg_url))
    written = store.query("SELECT count(*) FROM files")[0][0]
    assert 0 < written < 40
    # every committed file is whole: its text, its checkpoints, its summary row
    assert store.query("SELECT count(*) FROM files f WHERE NOT EXISTS (SELECT 1 FROM "
                       "file_text t WHERE t.file_id = f.id) OR NOT EXISTS (SELECT 1 FROM "
                       "checkpoints c WHERE c.file_id = f.id) OR NOT EXISTS (SELECT 1 FROM "
                       "summaries s WHERE s.file_id = f.id)")[0][0] == 0
    settings = load_settings({"home": str(tmp_path / "home-b"), "store.url": pg_url})
    service = Service(settings, embedder=FakeEmbedder())
    try:
        stats = service.index(repo.root, lock_wait=30)  # the dead writer's lock is gone
        assert stats.files_updated == 40 - written and stats.files_unchanged == written
        assert store.query("SELECT count(*) FROM files")[0][0] == 40
        assert store.count_pending() == 0
        checkpoints, tokens = store.query(
            "SELECT count(*), coalesce(sum(words_len), 0) FROM checkpoints")[0]
        assert store.query("SELECT rows, tokens FROM keyword_stats")[0] == (checkpoints, tokens)
    finally:
        service.close()


@pytest.fixture
def reader_url(pg_url: str) -> str:
    """The same store for a role that may only read it (the store made by the owner first)."""
    with open_store(Path("/nonexistent"), StoreOptions(url=pg_url)) as store:
        schema = store.query("SELECT current_schema()")[0][0]
    base = pg_url.split("?", 1)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS ctxd_reader")
        conn.execute("CREATE ROLE ctxd_reader LOGIN")
        conn.execute(f'GRANT USAGE ON SCHEMA "{schema}" TO ctxd_reader')
        conn.execute(f'GRANT SELECT ON ALL TABLES IN SCHEMA "{schema}" TO ctxd_reader')
        conn.execute(f'GRANT SELECT ON ALL SEQUENCES IN SCHEMA "{schema}" TO ctxd_reader')
    return base[0].replace("postgres:@", "ctxd_reader:@", 1) + "?" + base[1]


def test_a_read_only_role_searches_and_is_told_clearly_it_may_not_index(
        pg_url: str, reader_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = RepoBuilder(tmp_path / "shop")
    repo.write("cart.py", "def cart_total(items):\n    return sum(items)\n")
    owner = Service(load_settings({"home": str(tmp_path / "owner"), "store.url": pg_url}),
                    embedder=FakeEmbedder())
    owner.index(repo.root, embed=False)  # text and symbols: no model recorded yet
    owner.close()
    reader = Service(load_settings({"home": str(tmp_path / "reader"), "store.url": reader_url}),
                     embedder=FakeEmbedder())
    try:
        hits = reader.search("cart_total", mode="keyword").results
        assert hits and hits[0].path == "cart.py"
        assert reader.symbols("cart_total").items[0].name == "cart_total"
        with pytest.raises(StorageError) as refused:
            reader.index(repo.root)
        assert refused.value.details["kind"] == "read_only"
        assert "refuses to write for this database role" in refused.value.message
    finally:
        reader.close()
    monkeypatch.setenv("CTXD_NO_DAEMON", "1")
    result = CliRunner().invoke(main, ["--store", reader_url, "index", str(repo.root)])
    assert result.exit_code == 2
    assert "storage_error" in result.output and "Traceback" not in result.output
    assert "Index with a role that may write" in result.output


def test_the_password_never_shows_and_tls_parameters_reach_libpq(
        pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "s3cr3t-Pa55"
    base, query = pg_url.split("?", 1)
    with_password = base.replace("postgres:@", f"postgres:{quote(secret)}@", 1) + "?" + query
    monkeypatch.setenv("CTXD_NO_DAEMON", "1")
    monkeypatch.setenv("LOG_LEVEL", "debug")
    runner = CliRunner()
    status = runner.invoke(main, ["--store", with_password, "status", "--json"])
    assert status.exit_code == 0, status.output
    assert secret not in status.output
    assert json.loads(status.output)["database"] == redact_url(with_password)
    assert "postgres:***@" in json.loads(status.output)["database"]
    # a server that cannot be reached: a clear error, the password scrubbed from it
    unreachable = f"postgresql://ctxd:{secret}@127.0.0.1:1/ctxd?connect_timeout=2"
    failed = runner.invoke(main, ["--store", unreachable, "status"])
    assert failed.exit_code == 2 and secret not in failed.output
    assert "cannot reach the team store postgresql://ctxd:***@127.0.0.1:1/ctxd" in failed.output
    bad_url = runner.invoke(main, ["--store", f"mysql://u:{secret}@h/db", "status"])
    assert bad_url.exit_code == 2 and secret not in bad_url.output
    assert "store.url" in bad_url.output
    # TLS parameters pass through to libpq untouched: a bad one is libpq's own error
    bogus = runner.invoke(main, ["--store", pg_url + "&sslmode=bogus", "status"])
    assert bogus.exit_code == 2 and 'invalid sslmode value: "bogus"' in bogus.output
    close_pools()
    tls = pg_url + "&sslmode=require&sslrootcert=/etc/ssl/ctxd-ca.pem&application_name=ci"
    store = open_store(Path("/nonexistent"), StoreOptions(url=tls))
    with store._pool.connection() as conn:  # what libpq was handed
        given = conn.info.get_parameters()
    assert given.get("sslrootcert") == "/etc/ssl/ctxd-ca.pem"
    assert given.get("sslmode") == "require" and given.get("application_name") == "ci"
    with pytest.raises(BackendUnavailable) as down:
        open_store(Path("/x"), StoreOptions(url=unreachable))
    assert secret not in down.value.message and secret not in str(down.value.details)
