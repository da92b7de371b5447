"""The index home is private to its owner: the folder 0700, every file in it 0600.

The index holds the full text of every indexed file, so nothing in `CTXD_HOME` may be
readable by other local users. `private_home(home)` creates the folder 0700 or tightens
an existing one (and the files in it) and says once per process, as a warning, what it
changed; `create_private(path)` creates an empty file 0600 before SQLite or a writer
opens it (SQLite gives a database's `-wal` and `-shm` the database file's mode), and
never opens one that exists (see its docstring: the rule that keeps the WAL safe).
A shared folder (sticky bit, as `/tmp`) keeps its mode: only ctxd's files in it are
tightened. `private_home` also writes the home's marker (`HOME_MARKER`), by which the
walker keeps a home that lies inside an indexed repository out of the walk.
`PRIVATE_UMASK` is the umask the daemon runs under, so a file it creates any other way is
private too (the CLI and `ctxd serve` rely on `private_home` and `create_private`).

A home is the user's own or it is not used (`check_home`, issue 39 item 2): a folder of
another user, or one other users can write (group or others' write bit, no sticky bit),
and a ctxd file in it that belongs to another user or that others can write, are refused
with a `ConfigError` naming the path and the fix, before a byte is read or written. Read
bits only are tightened as before: nobody could have put or changed anything through
them. A shared sticky folder (`/tmp`) of this user or root may hold an index; its files
are checked one by one.
"""

from __future__ import annotations

import logging
import os
import pwd
import stat
from pathlib import Path

from ctxd.indexer.errors import ConfigError
from ctxd.indexer.models import HOME_MARKER

log = logging.getLogger("ctxd.indexer.store.private")

PRIVATE_UMASK = 0o077
DIR_MODE = 0o700
FILE_MODE = 0o600

CTXD_FILES = ("index.db", "daemon.", "watch-status.json", ".watch-status.json.",
              ".daemon.json.", HOME_MARKER, "http-token")
"""Name prefixes of the files ctxd keeps in a home: the only ones `private_home` touches
(a home pointed at a folder that holds other things leaves those alone)."""

_said: set[str] = set()
"""Homes whose tightening was reported by this process (say it once)."""


def private_home(home: Path, *, names: tuple[str, ...] = ()) -> list[str]:
    """Create `home` (mode 0700) or make an existing one private: the folder 0700 and
    ctxd's files in it (`CTXD_FILES`, and those starting with one of `names`) 0600.
    Returns the names it tightened (and warns once per home).

    Raises:
        OSError: the folder cannot be created.
        ConfigError: it, or a ctxd file in it, is another user's or others can write it
            (`check_home`).
    """
    home = Path(home)
    home.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    check_home(home, names=names)
    _mark(home)
    changed = []
    if not _shared(home) and _tighten(home):
        changed.append(f"{home}/")
    try:
        entries = list(os.scandir(home))
    except OSError:
        entries = []
    prefixes = CTXD_FILES + names
    for entry in entries:
        if not entry.name.startswith(prefixes):
            continue
        try:
            if entry.is_file(follow_symlinks=False) and _tighten(Path(entry.path)):
                changed.append(entry.name)
        except OSError:
            continue  # gone meanwhile, or not ours: nothing to tighten
    if changed and str(home) not in _said:
        _said.add(str(home))
        log.warning("the index folder %s was readable by other users: made it private "
                    "(folder 0700, files 0600; tightened %s)", home, ", ".join(sorted(changed)))
    return changed


def check_home(home: Path, *, names: tuple[str, ...] = ()) -> None:
    """Refuse an index home that is not this user's own: the folder (if it exists) of
    another user, or writable by others without the sticky bit; a ctxd file in it
    (`CTXD_FILES`, and those starting with one of `names`) of another user, or a regular
    one others can write.

    Raises:
        ConfigError: naming the path, its owner or mode, and the fix.
    """
    home = Path(home)
    try:
        st = home.stat()
    except OSError:
        return  # not there (yet): whoever creates it creates it private
    me = os.geteuid()
    sticky = bool(st.st_mode & stat.S_ISVTX)
    if not stat.S_ISDIR(st.st_mode):
        return  # not a folder: the caller's own error says so
    if st.st_uid != me and not (sticky and st.st_uid == 0):
        raise _refused(home, f"the index home {home}: it belongs to {_who(st.st_uid)}, "
                       f"not to you (uid {me})",
                       f"Point --home / CTXD_HOME at a folder of your own (a new one is made "
                       f"private); never keep an index in {home}.")
    if st.st_mode & 0o022 and not sticky:
        raise _refused(home, f"the index home {home}: other users can write it "
                       f"(mode {stat.S_IMODE(st.st_mode):o}), "
                       "so they could have put or replaced its files",
                       f"If nobody else has used it, `chmod 700 {home}`; else remove it "
                       "and index again in a folder of your own.")
    try:
        entries = list(os.scandir(home))
    except OSError:
        return
    prefixes = CTXD_FILES + names
    for entry in entries:
        if not entry.name.startswith(prefixes):
            continue
        try:
            fst = entry.stat(follow_symlinks=False)
        except OSError:
            continue  # gone meanwhile
        path = Path(entry.path)
        if fst.st_uid != me:
            raise _refused(path, f"{path} in the index home: it belongs to "
                           f"{_who(fst.st_uid)}, not to you (uid {me})",
                           f"Remove {path} (it is not one ctxd wrote for you), or point "
                           "--home / CTXD_HOME at a folder of your own.")
        if stat.S_ISREG(fst.st_mode) and fst.st_mode & 0o022:
            raise _refused(path, f"{path} in the index home: other users can write it "
                           f"(mode {stat.S_IMODE(fst.st_mode):o})",
                           f"If nobody else has used it, `chmod 600 {path}`; else remove it "
                           "(an index is rebuilt by `ctxd index`).")


def _who(uid: int) -> str:
    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"


def _refused(path: Path, why: str, hint: str) -> ConfigError:
    return ConfigError(f"refusing {why}", hint=hint,
                       details={"field": "home", "value": str(path)})


_MARKER_TEXT = (
    "This folder is a ctxd index home: index.db (SQLite) and the daemon's files.\n"
    "ctxd never indexes or reads a folder holding this file, so a home inside an\n"
    "indexed repository stays out of its own index.\n"
)


def _mark(home: Path) -> None:
    """Write `HOME_MARKER` into the home unless it is there (the walker prunes a folder
    holding it). A home that cannot be written keeps working without it."""
    marker = home / HOME_MARKER
    if marker.exists():
        return
    try:
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    except OSError:
        return  # another process wrote it meanwhile, or the folder is read-only
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(_MARKER_TEXT)


def _shared(folder: Path) -> bool:
    """A folder with the sticky bit (`/tmp`, `/var/tmp`): shared by design, so an index
    file placed directly in it leaves the folder's mode alone (its own files are still
    made private)."""
    try:
        return bool(folder.stat().st_mode & stat.S_ISVTX)
    except OSError:
        return False


def _tighten(path: Path) -> bool:
    """Drop the group's and others' permissions; whether there were any (and it could:
    a read-only file system keeps them, and says so in the debug log)."""
    st = path.lstat()
    if st.st_uid != os.getuid():
        return False  # another user's file: not ours to change
    current = stat.S_IMODE(st.st_mode)
    if not current & PRIVATE_UMASK:
        return False
    try:
        os.chmod(path, current & ~PRIVATE_UMASK)
    except OSError as exc:
        log.debug("cannot make %s private: %s", path, exc)
        return False
    return True


def create_private(path: Path) -> None:
    """Create `path` empty with mode 0600 if it does not exist yet; never open an existing
    file (raises OSError).

    An existing database file is left to SQLite: its locks are POSIX advisory locks, which
    belong to the process, so opening and closing the file here would drop the locks of
    every connection this process holds on it ("How To Corrupt An SQLite Database File",
    2.2) and let another process delete the WAL under them. `O_EXCL` opens only a file this
    call creates, which no connection can hold yet; an existing one is made private by path
    (`private_home`)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE)
    except FileExistsError:
        return
    os.close(fd)
