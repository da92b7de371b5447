"""End to end with the real model: on a tiny repository, a conceptual question finds the
implementing file first in the default (hybrid) mode, ahead of the test and the changelog
that talk about the same thing in the same words."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxd.indexer.embedder import SentenceTransformerEmbedder
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import RepoBuilder

FILES = {
    "webapp/auth/session.py": '''"""Server-side login state."""

import time


class Session:
    """One signed-in user's state between requests."""

    def __init__(self, user_id, idle_timeout=1800):
        self.user_id = user_id
        self.idle_timeout = idle_timeout
        self.last_seen = time.monotonic()

    def touch(self):
        self.last_seen = time.monotonic()

    def is_expired(self, now=None):
        """True once no request came for longer than the idle timeout."""
        now = time.monotonic() if now is None else now
        return now - self.last_seen > self.idle_timeout
''',
    "webapp/billing/tax.py": '''def vat(amount, rate=0.2):
    """Value added tax owed on a net amount."""
    return round(amount * rate, 2)


def gross(amount, rate=0.2):
    return amount + vat(amount, rate)
''',
    "webapp/net/retry.py": '''import time


def with_backoff(call, attempts=5, base=0.5):
    """Call again after exponentially growing pauses when it raises."""
    for n in range(attempts):
        try:
            return call()
        except OSError:
            time.sleep(base * 2 ** n)
    return call()
''',
    "webapp/render/markdown.py": '''import html


def paragraph(text):
    """Wrap escaped text in a paragraph element."""
    return "<p>" + html.escape(text) + "</p>"
''',
    "tests/test_session.py": '''from webapp.auth.session import Session


def test_session_expires_after_idle_timeout():
    s = Session("u1", idle_timeout=10)
    assert not s.is_expired(now=s.last_seen + 5)
    assert s.is_expired(now=s.last_seen + 11)


def test_touch_keeps_the_session_alive():
    s = Session("u1", idle_timeout=10)
    s.touch()
    assert not s.is_expired(now=s.last_seen + 1)
''',
    "webapp/support/report.py": '''"""Bug report helper: the versions of Python, the TLS
library and the optional packages, for users to paste into an issue."""

import platform
import ssl


def _implementation():
    return {"name": platform.python_implementation(), "version": platform.python_version()}


def info():
    return {"implementation": _implementation(), "openssl": ssl.OPENSSL_VERSION}


def main():
    print(info())
''',
    "CHANGES.md": '''# Changes

## 2.1.0

- Sessions no longer expire while a user is active: the idle timeout restarts on
  every request, and an expired session now logs the user out cleanly.
- Tax rounding fixed for amounts below one cent.
''',
}

QUESTION = ("where do we decide that a signed-in user has been inactive too long and must "
            "log in again?")
MORE = (
    # With rank-only RRF of the semantic and keyword legs (the previous default), the
    # changelog or the test came first for these.
    "how long can a session stay idle before it expires?",
    "when is a session considered expired?",
    "where is the idle timeout of a session checked?",
)


@pytest.fixture
def quality_repo(tmp_path: Path) -> Path:
    b = RepoBuilder(tmp_path / "webapp-repo")
    for rel, text in FILES.items():
        b.write(rel, text)
    return b.root


def test_a_conceptual_question_finds_the_implementation_first(
    tmp_path: Path, quality_repo: Path, real_embedder: SentenceTransformerEmbedder
) -> None:
    service = Service(load_settings({"home": str(tmp_path / "home")}), embedder=real_embedder)
    try:
        service.index(quality_repo)
        hybrid = service.search(QUESTION, mode="hybrid")
        more = {q: service.search(q, mode="hybrid").results[0].path for q in MORE}
        asked_for_tests = service.search(
            "which test checks that an idle session expires?", mode="hybrid")
    finally:
        service.close()
    files = list(dict.fromkeys(h.path for h in hybrid.results))
    assert files[0] == "webapp/auth/session.py", files
    assert hybrid.results[0].start_line <= 18 <= hybrid.results[0].end_line  # is_expired
    assert files.index("tests/test_session.py") > 0
    assert more == dict.fromkeys(MORE, "webapp/auth/session.py")
    # Asking for tests brings the test file back to the top.
    assert asked_for_tests.results[0].path == "tests/test_session.py"


def test_the_model_gives_unit_vectors_in_float32(
    real_embedder: SentenceTransformerEmbedder,
) -> None:
    """Scores take cos = 1 - L2^2 / 2 (sqlite-vec and the in-memory matrix alike), which
    holds only for unit vectors; a bf16 model normalises in bf16 (norms off by ~0.2%)."""
    vecs = real_embedder.embed([QUESTION, *MORE, "x"])
    assert vecs.dtype.name == "float32"
    norms = [float(sum(float(v) ** 2 for v in row) ** 0.5) for row in vecs]
    assert all(abs(n - 1.0) < 1e-5 for n in norms), norms


def test_a_question_about_a_modules_purpose_is_answered_by_its_summary(
    tmp_path: Path, quality_repo: Path, real_embedder: SentenceTransformerEmbedder
) -> None:
    """Every code file's summary (path, module docstring, classes, function names) is
    embedded at index time; hybrid search scores its candidate files by it."""
    question = "which module gathers the version details users attach to a bug report?"
    service = Service(load_settings({"home": str(tmp_path / "home")}), embedder=real_embedder)
    try:
        service.index(quality_repo)
        legs, _ms, _notes = service.hybrid_legs(question, depth=20)
        hybrid = service.search(question, mode="hybrid")
    finally:
        service.close()
    summary = [h.path for h in legs["summary"]]
    assert summary[0] == "webapp/support/report.py", summary
    assert "CHANGES.md" not in summary  # prose has no summary
    assert hybrid.results[0].path == "webapp/support/report.py"
