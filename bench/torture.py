"""A torture test of real processes sharing one index (issue 22).

    python -m bench.torture --minutes 30 --seed 7            # the long run
    python -m bench.torture --rounds 40 --seed 7 --no-extras # what the CI test runs

One home, one repository of a few dozen files, and every kind of process ctxd has, at
once: `ctxd watch` runs throughout; each round churns the files (edit, create, delete,
rename) and then takes one action, chosen by a seeded random generator:

- `daemon_index`: `ctxd index` through the running daemon;
- `inprocess_index`: `ctxd --no-daemon index`;
- `killed_index`: `ctxd --no-daemon index` killed with SIGKILL at a random moment;
- `daemon_search` / `inprocess_search`: a lexical, keyword or hybrid query;
- `status`: `ctxd status` (through the daemon when it runs) or `--no-daemon status`;
- `daemon_toggle`: `ctxd daemon start` or `ctxd daemon stop`.

With extras (the default of the long run): MCP clients over stdio and HTTP
(`mcp_stdio`, `mcp_http`), `sigterm_index` (SIGTERM at a random moment: the run must say
it stopped and exit non-zero, or finish), `daemon_kill9` (the daemon killed with SIGKILL)
and, when a tmpfs can be mounted (root), `disk_full` rounds: the home lives on a small
tmpfs, a filler file takes its free space, and writers must answer `storage_error` (or
succeed) and the index must stay whole.

At the end (`verify`): `PRAGMA integrity_check` is ok; after the watcher and the daemon
stop, a refresh equals a clean index of the final tree (files, checkpoints, embedded
count, lexical answers for a handful of probes); the last write is visible to every
process; and no output of any step, nor the daemon's or the watcher's log, contains an
internal error, a traceback, `malformed`, `disk I/O error` or `database is locked`.

A failure is printed with the seed and the round, so the run can be replayed (timings
differ between runs, the sequence of actions and file changes does not).

Used by `tests/server/test_torture.py` (a bounded run) and from the command line.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlean as sqlite3

CORE_ACTIONS = ("daemon_index", "inprocess_index", "killed_index", "daemon_search",
                "inprocess_search", "status", "daemon_toggle")
EXTRA_ACTIONS = ("mcp_stdio", "mcp_http", "sigterm_index", "daemon_kill9", "disk_full")
WEIGHTS = {"daemon_index": 3, "inprocess_index": 2, "killed_index": 2, "daemon_search": 3,
           "inprocess_search": 2, "status": 2, "daemon_toggle": 1, "mcp_stdio": 1,
           "mcp_http": 1, "sigterm_index": 1, "daemon_kill9": 1, "disk_full": 1}
BAD = ("internal_error", "Traceback", "malformed", "disk I/O error", "database is locked",
       "This is a bug")
"""Text that must never appear in any output of any step."""
STEP_TIMEOUT = 900.0
"""Seconds one step may take (a hang is a failure); generous for a loaded machine."""
CTXD = [str(Path(sys.executable).with_name("ctxd"))]
"""The `ctxd` console script of this environment (what a user runs)."""


class TortureFailure(AssertionError):
    """A check failed; the message names the seed and the round."""


@dataclass
class Step:
    round: int
    action: str
    detail: str
    rc: int | None
    seconds: float


@dataclass
class Torture:
    """One torture run in `work` (a folder of its own: the repository and the home)."""

    work: Path
    seed: int
    extras: bool = False
    tmpfs_mb: int = 0
    """With extras: mount a tmpfs of this size for the home (0 = no disk-full rounds)."""
    say: Any = print
    rng: random.Random = field(init=False)
    repo: Path = field(init=False)
    home: Path = field(init=False)
    steps: list[Step] = field(default_factory=list)
    kills: int = 0
    sigterms: int = 0
    files: dict[str, int] = field(default_factory=dict)
    """The expected tree: file name -> its version (its text follows from both)."""
    index_seconds: list[float] = field(default_factory=list)
    daemon_up: bool = False
    watch: subprocess.Popen[str] | None = None
    mounted: bool = False
    _next_id: int = 0
    _round: int = 0

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.repo = self.work / "repo"
        self.home = self.work / "home"

    # -- set-up -----------------------------------------------------------------------

    def setup(self) -> None:
        self.work.mkdir(parents=True, exist_ok=True)
        if self.extras and self.tmpfs_mb:
            self.mounted = _mount_tmpfs(self.home, self.tmpfs_mb)
            if not self.mounted:
                self.say("disk_full rounds off: cannot mount a tmpfs here (needs root)")
        for _ in range(36):
            self._create()
        self.ctxd_ok("--no-daemon", "index", str(self.repo), what="first index")
        self.start_watch()

    def env(self, home: Path | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("CTXD_") and k not in ("ZOEKT_URL", "MCP_TRANSPORT")}
        env.update(CTXD_HOME=str(home or self.home), HF_HUB_OFFLINE="1",
                   CTXD_DAEMON_AUTOSTART="false", CTXD_DAEMON_IDLE_MINUTES="0",
                   XDG_CONFIG_HOME=str(self.work / "xdg-config"), PYTHONUNBUFFERED="1",
                   CTXD_WATCH_DEBOUNCE_MS="100")
        return env

    def start_watch(self) -> None:
        log = (self.work / "watch.log").open("a", encoding="utf-8")
        self.watch = subprocess.Popen([*CTXD, "watch", str(self.repo)], env=self.env(),
                                      stdout=log, stderr=subprocess.STDOUT, text=True,
                                      stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()

    def close(self) -> None:
        """Stop every process this run started and unmount its tmpfs."""
        self.stop_processes()
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.home)], check=False)
            self.mounted = False

    def stop_processes(self) -> None:
        """Stop `ctxd watch` and the daemon."""
        if self.watch is not None and self.watch.poll() is None:
            self.watch.send_signal(signal.SIGINT)
            try:
                self.watch.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.watch.kill()
                self.watch.wait()
        self.watch = None
        with contextlib.suppress(Exception):
            self.ctxd("daemon", "stop", timeout=120)
        self.daemon_up = False

    # -- the tree -----------------------------------------------------------------------

    def _text(self, name: str, version: int) -> str:
        fid = name.removesuffix(".py").replace("/", "_")
        body = [
            f'"""Module {fid}, version {version} of torture run {self.seed}."""',
            "",
            f"def handle_{fid}(request):",
            f'    """Handle a request for {fid}: token {self.token(name, version)}."""',
            f"    return request.get({version!r})",
            "",
        ]
        body += [f"def helper_{fid}_{k}(x):\n    return x * {k + version}\n"
                 for k in range(self.rng.randint(1, 4))]
        return "\n".join(body)

    def token(self, name: str, version: int) -> str:
        return f"tok{name.removesuffix('.py').replace('/', '')}v{version}s{self.seed}"

    def _write(self, name: str, version: int) -> None:
        path = self.repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(self._text(name, version), encoding="utf-8")
        os.replace(tmp, path)  # editors save by rename; a reader never sees half a file
        self.files[name] = version

    def _create(self) -> None:
        self._next_id += 1
        folder = self.rng.choice(["", "pkg/", "pkg/sub/", "lib/"])
        self._write(f"{folder}m{self._next_id}.py", 1)

    def churn(self) -> str:
        """Edit, create, delete or rename a few files; what was done."""
        done = []
        for _ in range(self.rng.randint(1, 5)):
            op = self.rng.choice(["edit", "edit", "create", "delete", "rename"])
            names = sorted(self.files)
            if op == "create" or len(names) < 12:
                self._create()
                done.append("create")
            elif op == "edit":
                name = self.rng.choice(names)
                self._write(name, self.files[name] + 1)
                done.append("edit")
            elif op == "delete":
                name = self.rng.choice(names)
                (self.repo / name).unlink()
                del self.files[name]
                done.append("delete")
            else:
                name = self.rng.choice(names)
                self._next_id += 1
                new = f"{name.rpartition('/')[0]}/r{self._next_id}.py".lstrip("/")
                (self.repo / name).rename(self.repo / new)
                # The text names the old file: rewrite it as the new one's first version.
                del self.files[name]
                self._write(new, 1)
                done.append("rename")
        return ",".join(done)

    # -- running ctxd ------------------------------------------------------------------

    def ctxd(self, *args: str, home: Path | None = None,
             timeout: float = STEP_TIMEOUT) -> subprocess.CompletedProcess[str]:
        run = subprocess.run([*CTXD, *args], env=self.env(home), capture_output=True,
                             text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        self.check_output(f"ctxd {' '.join(args)}", run.stdout + run.stderr)
        return run

    def ctxd_ok(self, *args: str, what: str, home: Path | None = None,
                ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
        run = self.ctxd(*args, home=home)
        if run.returncode not in ok:
            self.fail(f"{what}: exit {run.returncode}\n{run.stdout[-2000:]}\n"
                      f"{run.stderr[-2000:]}")
        return run

    def check_output(self, what: str, text: str) -> None:
        for bad in BAD:
            if bad in text:
                self.fail(f"{what} printed {bad!r}:\n{text[-4000:]}")

    def fail(self, message: str) -> None:
        raise TortureFailure(f"seed {self.seed}, round {self._round}: {message}\n"
                             f"replay: python -m bench.torture --seed {self.seed} "
                             f"--rounds {self._round}")

    # -- the actions -------------------------------------------------------------------

    def pick(self) -> str:
        actions = list(CORE_ACTIONS) + (list(EXTRA_ACTIONS) if self.extras else [])
        if not self.mounted and "disk_full" in actions:
            actions.remove("disk_full")
        return self.rng.choices(actions, weights=[WEIGHTS[a] for a in actions])[0]

    def round(self, number: int, action: str | None = None) -> Step:
        self._round = number
        churned = self.churn()
        action = action or self.pick()
        started = time.monotonic()
        rc, detail = getattr(self, f"do_{action}")()
        step = Step(number, action, f"{churned}; {detail}", rc, time.monotonic() - started)
        self.steps.append(step)
        if self.watch is not None and self.watch.poll() is not None:
            self.fail(f"`ctxd watch` exited ({self.watch.returncode}); see "
                      f"{self.work / 'watch.log'}")
        return step

    def do_daemon_index(self) -> tuple[int | None, str]:
        if not self.daemon_up:
            self.do_daemon_toggle()
        run = self.ctxd_ok("index", str(self.repo), what="index through the daemon")
        return run.returncode, "through the daemon"

    def do_inprocess_index(self) -> tuple[int | None, str]:
        started = time.monotonic()
        run = self.ctxd_ok("--no-daemon", "index", str(self.repo), what="in-process index")
        self.index_seconds.append(time.monotonic() - started)
        return run.returncode, "in-process"

    def _interrupted_index(self, sig: signal.Signals) -> tuple[int | None, float]:
        """An in-process index run sent `sig` at a random moment of a typical run; a run
        that ends first is tried again with earlier moments (so that a signal lands)."""
        typical = sorted(self.index_seconds)[len(self.index_seconds) // 2] \
            if self.index_seconds else 6.0
        latest = max(0.5, typical)
        for _ in range(4):
            rc, delay, landed = self._signal_index(sig, self.rng.uniform(0.2, latest))
            if landed:
                break
            latest = max(0.3, delay / 2)
            self.churn()  # something to do again
        return rc, delay

    def _signal_index(self, sig: signal.Signals, delay: float) -> tuple[int | None, float, bool]:
        proc = subprocess.Popen([*CTXD, "--no-daemon", "index", str(self.repo)],
                                env=self.env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
        landed, started = False, time.monotonic()
        try:
            out, err = proc.communicate(timeout=delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(sig)
            landed = True
            out, err = proc.communicate(timeout=STEP_TIMEOUT)
        self.check_output(f"index interrupted by {sig.name}", out + err)
        if landed and sig is signal.SIGTERM and proc.returncode == 0:
            self.fail(f"a run stopped by SIGTERM exited 0 (it must say it stopped and exit "
                      f"non-zero):\n{out}\n{err}")
        if not landed:  # it ended first: how long such a run takes now
            self.index_seconds.append(time.monotonic() - started)
        return proc.returncode, delay, landed

    def do_killed_index(self) -> tuple[int | None, str]:
        rc, delay = self._interrupted_index(signal.SIGKILL)
        if rc == -signal.SIGKILL:
            self.kills += 1
        return rc, f"SIGKILL after {delay:.2f} s"

    def do_sigterm_index(self) -> tuple[int | None, str]:
        rc, delay = self._interrupted_index(signal.SIGTERM)
        self.sigterms += 1
        return rc, f"SIGTERM after {delay:.2f} s"

    def _query(self) -> tuple[str, str]:
        kind = self.rng.choice(["lexical", "keyword", "hybrid"])
        if kind == "hybrid":
            return kind, "where is the request for a module handled"
        name = self.rng.choice(sorted(self.files))
        return kind, self.token(name, self.files[name])

    def do_daemon_search(self) -> tuple[int | None, str]:
        kind, query = self._query()
        run = self.ctxd_ok("search", "--mode", kind, "--json", query,
                           what=f"{kind} search (daemon {'up' if self.daemon_up else 'down'})",
                           ok=(0, 1))
        return run.returncode, f"{kind} through the daemon"

    def do_inprocess_search(self) -> tuple[int | None, str]:
        kind, query = self._query()
        if kind == "hybrid" and self.rng.random() < 0.7:
            kind, query = "lexical", query.split()[0]  # a model load per process: keep few
        run = self.ctxd_ok("--no-daemon", "search", "--mode", kind, "--json", query,
                           what=f"in-process {kind} search", ok=(0, 1))
        return run.returncode, f"{kind} in-process"

    def do_status(self) -> tuple[int | None, str]:
        args = ["status", "--json"] if self.rng.random() < 0.5 else ["--no-daemon", "status"]
        run = self.ctxd_ok(*args, what="status")
        return run.returncode, " ".join(args)

    def do_daemon_toggle(self) -> tuple[int | None, str]:
        if self.daemon_up:
            run = self.ctxd_ok("daemon", "stop", what="daemon stop")
            self.daemon_up = False
            return run.returncode, "daemon stop"
        run = self.ctxd_ok("daemon", "start", what="daemon start")
        self.daemon_up = True
        return run.returncode, "daemon start"

    def do_daemon_kill9(self) -> tuple[int | None, str]:
        if not self.daemon_up:
            return self.do_daemon_toggle()
        record = json.loads((self.home / "daemon.json").read_text(encoding="utf-8"))
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(record["pid"]), signal.SIGKILL)
        self.kills += 1
        self.daemon_up = False
        # The next call notices and works in-process (or a start replaces it).
        return None, f"daemon pid {record['pid']} SIGKILL"

    def do_mcp_stdio(self) -> tuple[int | None, str]:
        from bench.torture_mcp import stdio_session
        _, query = self._query()
        out = stdio_session(self.env(), str(self.repo), query, index=self.rng.random() < 0.5)
        self.check_output("MCP over stdio", out)
        return 0, "MCP stdio"

    def do_mcp_http(self) -> tuple[int | None, str]:
        from bench.torture_mcp import http_session
        _, query = self._query()
        out = http_session(self.env(), self.work, str(self.repo), query,
                           index=self.rng.random() < 0.5)
        self.check_output("MCP over HTTP", out)
        return 0, "MCP HTTP"

    def do_disk_full(self) -> tuple[int | None, str]:
        filler = self.home / "filler"
        _fill(filler)
        try:
            for _ in range(3):
                self._create()
            run = self.ctxd("--no-daemon", "index", str(self.repo))
            if run.returncode not in (0, 2) or (
                run.returncode == 2 and "storage_error" not in run.stdout + run.stderr
            ):
                self.fail(f"index on a full disk: exit {run.returncode}, expected 0 or a "
                          f"storage_error:\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}")
            search = self.ctxd("--no-daemon", "search", "--mode", "lexical", "handle_")
            if search.returncode not in (0, 1):
                self.fail(f"search on a full disk: exit {search.returncode}\n"
                          f"{search.stderr[-2000:]}")
        finally:
            filler.unlink()
        return run.returncode, "index on a full disk"

    # -- the end ------------------------------------------------------------------------

    def verify(self) -> dict[str, Any]:
        """The checks of a finished run; returns what was compared."""
        self._round = len(self.steps) + 1
        # The last write, made through the daemon, is seen at once by every process.
        if not self.daemon_up:
            self.do_daemon_toggle()
        self.ctxd_ok("--no-daemon", "status", what="status beside the daemon")
        last = "last_write.py"
        self._write(last, 1)
        self.ctxd_ok("index", str(self.repo), what="last write through the daemon")
        token = self.token(last, 1)
        for args in (("--no-daemon",), ()):
            run = self.ctxd_ok(*args, "search", "--mode", "lexical", "--json", token,
                               what="the last write", ok=(0, 1))
            paths = [r["path"] for r in json.loads(run.stdout)["results"]]
            if paths != [last]:
                self.fail(f"the last write is not visible to {' '.join(args) or 'the daemon'}"
                          f": {paths}")
        hybrid = self.ctxd_ok("search", "--json", "handle_last_write request", what="hybrid")
        if last not in {r["path"] for r in json.loads(hybrid.stdout)["results"]}:
            self.fail("a hybrid query through the daemon does not find the last write")
        self.stop_processes()
        self.check_output("daemon.log", _read(self.home / "daemon.log"))
        self.check_output("ctxd watch", _read(self.work / "watch.log"))
        db = self.home / "index.db"
        integrity = _rows(db, "PRAGMA integrity_check")
        if integrity != [("ok",)]:
            self.fail(f"integrity_check: {integrity[:10]}")
        self.ctxd_ok("--no-daemon", "index", str(self.repo), what="refresh")
        clean_home = self.work / "clean-home"
        shutil.rmtree(clean_home, ignore_errors=True)
        self.ctxd_ok("--no-daemon", "index", str(self.repo), home=clean_home,
                     what="clean index")
        got, want = snapshot(db), snapshot(clean_home / "index.db")
        for key in want:
            if got[key] != want[key]:
                self.fail(f"refresh differs from a clean index in {key}: "
                          f"{_diff(got[key], want[key])}")
        indexed = sorted(row[0] for row in got["files"])
        if indexed != sorted(self.files):
            self.fail(f"indexed files {indexed} != the tree {sorted(self.files)}")
        probes = [self.token(n, v) for n, v in sorted(self.files.items())[:4]]
        probes += ["handle_", "helper_", "return x"]
        for probe in probes:
            a = self.ctxd_ok("--no-daemon", "search", "--mode", "lexical", "--json", "--limit",
                             "100", probe, what=f"probe {probe}", ok=(0, 1))
            b = self.ctxd_ok("--no-daemon", "search", "--mode", "lexical", "--json", "--limit",
                             "100", probe, home=clean_home, what=f"clean probe {probe}",
                             ok=(0, 1))
            if _answers(a.stdout) != _answers(b.stdout):
                self.fail(f"lexical answers for {probe!r} differ from a clean index")
        return {"files": len(got["files"]), "checkpoints": len(got["checkpoints"]),
                "embedded": got["embedded"], "probes": len(probes)}

    def summary(self) -> dict[str, Any]:
        counts: dict[str, int] = {}
        for s in self.steps:
            counts[s.action] = counts.get(s.action, 0) + 1
        return {"seed": self.seed, "rounds": len(self.steps), "kills": self.kills,
                "sigterms": self.sigterms, "actions": counts}


# -- helpers ---------------------------------------------------------------------------


def snapshot(db: Path) -> dict[str, Any]:
    """What a refresh and a clean index must agree on (ids and times left out)."""
    return {
        "repos": _rows(db, "SELECT name, root, options FROM repos ORDER BY name"),
        "files": _rows(db, "SELECT path, size, hash, language, lines, role FROM files "
                           "ORDER BY path"),
        "checkpoints": _rows(db, "SELECT path, start_line, end_line, symbol, hash "
                                 "FROM checkpoints ORDER BY path, start_line, end_line, hash"),
        "symbols": _rows(db, "SELECT path, name, kind, line FROM symbols "
                             "ORDER BY path, line, name, kind"),
        "embedded": _rows(db, "SELECT count(DISTINCT c.hash) FROM checkpoints c "
                              "JOIN embeddings e ON e.hash = c.hash")[0][0],
        "unembedded": _rows(db, "SELECT count(DISTINCT c.hash) FROM checkpoints c WHERE "
                                "NOT EXISTS (SELECT 1 FROM embeddings e "
                                "WHERE e.hash = c.hash)")[0][0],
        "text": _rows(db, "SELECT f.path, t.content FROM files f JOIN file_text t "
                          "ON t.rowid = f.id ORDER BY f.path"),
        "graph": _rows(db, "SELECT f.path, g.data FROM graph g JOIN files f "
                           "ON f.id = g.file_id ORDER BY f.path"),
        "graph_links": _rows(db, "SELECT f.path, l.key FROM graph_links l JOIN files f "
                                 "ON f.id = l.file_id ORDER BY f.path, l.key"),
    }


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=60)
    try:
        return [tuple(r) for r in conn.execute(sql)]
    finally:
        conn.close()


def _diff(got: Any, want: Any) -> str:
    if isinstance(got, list) and isinstance(want, list):
        extra = [r for r in got if r not in want][:5]
        missing = [r for r in want if r not in got][:5]
        return f"extra {extra}, missing {missing}"
    return f"{got!r} != {want!r}"


def _answers(stdout: str) -> list[tuple[str, int, int]]:
    return sorted((r["path"], r["start_line"], r["end_line"])
                  for r in json.loads(stdout)["results"])


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _mount_tmpfs(folder: Path, mb: int) -> bool:
    folder.mkdir(parents=True, exist_ok=True)
    run = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={mb}m,mode=0700", "tmpfs",
                          str(folder)], capture_output=True, text=True, check=False)
    return run.returncode == 0


def _fill(filler: Path) -> None:
    """Take all the free space of `filler`'s file system."""
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (1 << 20, 4096, 1):
            block = b"\0" * size
            with contextlib.suppress(OSError):
                while os.write(fd, block):
                    pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def torture(work: Path, seed: int, **kw: Any) -> Iterator[Torture]:
    run = Torture(work, seed, **kw)
    try:
        run.setup()
        yield run
    finally:
        run.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=float, default=0.0, help="run for this long")
    p.add_argument("--rounds", type=int, default=0, help="or this many rounds")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-extras", action="store_true",
                   help="only the actions of the CI test (no MCP, SIGTERM, disk full)")
    p.add_argument("--tmpfs-mb", type=int, default=64,
                   help="size of the home's tmpfs for disk-full rounds (0 = none)")
    p.add_argument("--work", type=Path, default=None, help="folder to run in (kept)")
    p.add_argument("--json", type=Path, default=None, help="write the summary here")
    args = p.parse_args(argv)
    if not args.minutes and not args.rounds:
        args.rounds = 40
    work = args.work or Path(tempfile.mkdtemp(prefix=f"ctxd-torture-{args.seed}-"))
    started = time.monotonic()
    deadline = started + args.minutes * 60 if args.minutes else None
    result: dict[str, Any] = {"seed": args.seed, "work": str(work)}
    run = Torture(work, args.seed, extras=not args.no_extras,
                  tmpfs_mb=0 if args.no_extras else args.tmpfs_mb)
    try:
        run.setup()
        number = 0
        while (deadline is None and number < args.rounds) or (
            deadline is not None and time.monotonic() < deadline
        ):
            number += 1
            step = run.round(number)
            print(f"round {step.round:4d} {step.action:<16} rc={step.rc!s:<5} "
                  f"{step.seconds:6.1f}s  {step.detail}", flush=True)
        result["verified"] = run.verify()
        result["ok"] = True
    except TortureFailure as exc:
        result["ok"], result["failure"] = False, str(exc)
        print(f"FAILED: {exc}", flush=True)
    finally:
        run.close()
        result.update(run.summary())
        result["minutes"] = round((time.monotonic() - started) / 60, 1)
        print(json.dumps(result, indent=1))
        if args.json:
            args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0 if result.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
