"""indexer.walk.reader: reads in blocks within a hard ceiling (issue 23, item 6).

`--max-file-size 0` ("no limit") used to read whole files: a 2 GB sparse file took the
process to 2.1 GB of RSS, a 16 GB one ended the run with `internal_error: MemoryError`.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from ctxd.indexer.checkpoints import content_hash
from ctxd.indexer.models import FileEntry, Skipped, SkipReason
from ctxd.indexer.walk.policy import READ_LIMIT
from ctxd.indexer.walk.reader import BLOCK, read_file, read_text
from ctxd.indexer.walk.walker import WalkOptions, walk
from tests.conftest import RepoBuilder as Repo

CTXD = [sys.executable, "-c", "import sys; from ctxd.server.cli.main import main; "
        "sys.argv[0] = 'ctxd'; main()"]


def entry_for(repo: Repo, rel: str, **options: object) -> FileEntry:
    found = [e for e in walk(repo.root, WalkOptions(**options))  # type: ignore[arg-type]
             if isinstance(e, FileEntry) and e.path == rel]
    assert found, rel
    return found[0]


def test_huge_sparse_files_with_no_limit_are_skipped_not_read(repo: Repo, tmp_path: Path) -> None:
    """A real `ctxd index --max-file-size 0` over sparse 2 GB and 16 GB files (no disk
    used): both TOO_LARGE with a reason, the run goes on, and the process never holds
    them. Its address space is capped at 1 GiB so that the code before the fix fails with
    a MemoryError here instead of taking the machine's memory (it read the 2 GB file)."""
    repo.write("a.py", "def f():\n    return 1\n")
    for name, size in (("sparse2g.txt", 2 << 30), ("sparse16g.txt", 16 << 30)):
        with open(repo.root / name, "wb") as f:
            f.truncate(size)
    env = dict(os.environ, CTXD_HOME=str(tmp_path / "home"))

    def cap_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, resource.RLIM_INFINITY))

    proc = subprocess.Popen(
        [*CTXD, "index", str(repo.root), "--dry-run", "--max-file-size", "0", "--json"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=cap_memory)
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err.decode()[-2000:]
    stats = json.loads(out)
    assert stats["files_indexed"] == 1
    assert stats["files_skipped"] == {"too_large": 2}
    details = {s["path"]: s["detail"] for s in stats["skipped_files"]}
    assert details["sparse2g.txt"].startswith("2147483648 bytes > 67108864 bytes (64 MiB)")
    assert "even with max_file_size 0" in details["sparse16g.txt"]


# The child writes its own peak RSS (`VmHWM` of the program it runs) to stderr at exit. The
# kernel's `wait4` figure is no good here: Linux carries a forked child's high-water mark
# across `exec`, so after this test process has loaded the model (~400 MB) it read 417 MB
# for a 70 MB run.
PEAK = [sys.executable, "-c", "import atexit, sys; atexit.register(lambda: sys.stderr.write("
        "next(l for l in open('/proc/self/status') if l.startswith('VmHWM:')))); "
        "from ctxd.server.cli.main import main; sys.argv[0] = 'ctxd'; main()"]


def test_peak_memory_stays_flat_with_no_limit(repo: Repo, tmp_path: Path) -> None:
    """The same run's peak RSS, as the child measures itself (`VmHWM`): about 70 MB, as
    without the files; 2.1 GB before the fix."""
    repo.write("a.py", "def f():\n    return 1\n")
    with open(repo.root / "sparse2g.txt", "wb") as f:
        f.truncate(2 << 30)
    with open(repo.root / "zeros60m.bin.txt", "wb") as f:  # under the ceiling: read, refused
        f.truncate(60 << 20)
    env = dict(os.environ, CTXD_HOME=str(tmp_path / "home"))

    def cap_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, resource.RLIM_INFINITY))

    proc = subprocess.run(
        [*PEAK, "index", str(repo.root), "--dry-run", "--max-file-size", "0", "--json"],
        env=env, capture_output=True, text=True, preexec_fn=cap_memory, check=False)
    out = proc.stdout
    assert proc.returncode == 0
    peak_mb = int(proc.stderr.rsplit("VmHWM:", 1)[1].split()[0]) / 1024  # kB
    assert peak_mb < 400, peak_mb
    stats = json.loads(out)
    assert stats["files_skipped"] == {"binary": 1, "too_large": 1}


def test_file_over_the_ceiling_is_too_large_before_reading(repo: Repo) -> None:
    repo.write("a.txt", "x\n")
    entry = entry_for(repo, "a.txt", max_file_size=0)
    with open(repo.root / "a.txt", "r+b") as f:
        f.truncate(READ_LIMIT + 1)  # grew past the ceiling after the walk
    result = read_file(entry)
    assert isinstance(result, Skipped) and result.reason is SkipReason.TOO_LARGE
    assert "64 MiB" in result.detail


def test_binary_detected_in_a_later_block(repo: Repo) -> None:
    repo.write_bytes("late.txt", b"a" * (3 * BLOCK) + b"\x00" + b"b" * 10)
    result = read_text(entry_for(repo, "late.txt", max_file_size=0))
    assert result == Skipped("late.txt", SkipReason.BINARY, "contains NUL bytes")


def test_invalid_utf8_in_a_later_block_names_its_byte(repo: Repo) -> None:
    repo.write_bytes("bad.txt", b"a" * (BLOCK + 5) + b"\xff" + b"a" * 10)
    result = read_text(entry_for(repo, "bad.txt", max_file_size=0))
    assert result == Skipped("bad.txt", SkipReason.BINARY, f"not valid UTF-8 (byte {BLOCK + 5})")


def test_truncated_utf8_at_the_end_is_binary(repo: Repo) -> None:
    repo.write_bytes("cut.txt", "caf\u00e9".encode()[:-1])
    result = read_text(entry_for(repo, "cut.txt"))
    assert isinstance(result, Skipped) and result.reason is SkipReason.BINARY


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbf" + b"x" * (BLOCK - 4) + b"\r\n" + b"y\r\n",  # BOM, CRLF on the seam
        b"x" * (BLOCK - 1) + b"\r" + b"\ny\r",  # \r ends the first block, bare \r at the end
        b"x" * (BLOCK - 1) + b"\r" + b"\r\rz",  # bare \r runs across the seam
        b"x" * (BLOCK - 1) + "\u00e9\u4e2d".encode() + b"\r\n",  # a character cut in two
        b"",
        b"plain\n",
    ],
)
def test_streamed_hash_equals_the_hash_of_the_text(repo: Repo, data: bytes) -> None:
    repo.write_bytes("f.txt", data)
    got = read_file(entry_for(repo, "f.txt", max_file_size=0))
    assert not isinstance(got, Skipped)
    expected = data.removeprefix(b"\xef\xbb\xbf").decode().replace("\r\n", "\n").replace(
        "\r", "\n")
    assert got.text == expected
    assert got.digest == content_hash(expected)
