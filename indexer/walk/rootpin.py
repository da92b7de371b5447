"""A repository's root pinned by identity: the folder indexed, not whatever its path
leads to later.

A repository is stored with its root as a resolved path (`repos.root`) and the identity
of the folder found there when it was indexed (`repos.root_id`, `"<st_dev>:<st_ino>"`,
`identity_of`). Anyone who can write the root's parent folder can replace the root by a
symlink (`mv proj proj.real && ln -s /etc proj`) or by another folder; a reader that
followed the path would then read, watch and index `/etc` as if it were the repository.
`pinned_root(root, identity)` opens the stored path through
`indexer.walk.safeopen.open_verified` (no symlink anywhere on it) and compares the
folder's identity with the recorded one; it returns the stored path unchanged, which
every later open under it is verified against (a swap after the check fails those
opens), or raises `RootMoved`. A folder with another identity is accepted only when it
belongs to this user (or root): a repository deleted and cloned again, restored from a
backup, is yours and is watched again (the next run records its identity), while a
folder another user put in its place (they can write the parent) is refused. So is a
folder of this user's own of another identity when other users can write the parent
(`others_can_write`: no sticky bit): they could have renamed one of the user's other
folders into the root's place (issue 39, item 7); a full run of the path refuses it too
(`unconfirmed_swap`) unless forced (`ctxd index PATH --force`), the user's confirmation
that pins it.
`root_problem` is the same check as a sentence, for `status`. An empty identity (a
repository indexed before identities were recorded) is checked by path only, and pinned
by its next index run.

Callers: `indexer.walk.walker.walk`, `indexer.walk.filefilter.FileFilter` and
`indexer.walk.servable.read_servable` (given `pin`), the indexing pipeline (a re-index
of a stored root, the watcher's runs), the service (`file_content`, `status`), the
watcher. Calls `os`, `indexer.walk.safeopen`.
"""

from __future__ import annotations

import errno
import os
import stat

from ctxd.indexer.errors import RootMoved, ValidationError
from ctxd.indexer.walk.safeopen import O_DIR, PathChanged, open_verified

__all__ = ["RootMoved", "identity_of", "moved_root", "others_can_write", "pinned_identity",
           "pinned_root", "root_moved", "root_problem", "unconfirmed_swap"]


def root_moved(root: str, why: str) -> RootMoved:
    """The error for a stored root `root` that is no longer the folder indexed."""
    parent = os.path.dirname(root.rstrip("/")) or "/"
    return RootMoved(
        f"the repository root {root} is no longer the folder that was indexed: {why}; "
        "ctxd refuses to read, watch or re-index through it",
        hint=f"If you moved or replaced it yourself, index the folder where it is now "
        f"(`ctxd index <its path>`) and `ctxd remove {root}`; if you did not, someone "
        f"who can write {parent} did: check that folder before anything else.",
        details={"field": "root", "root": root, "kind": "root_moved", "why": why},
    )


def identity_of(root_real: str) -> str:
    """`"<st_dev>:<st_ino>"` of the folder at the symlink-free path `root_real`.

    Raises:
        OSError: not a folder there now, or a symlink on the way (`PathChanged`).
    """
    fd = open_verified(root_real, O_DIR)
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    return f"{st.st_dev}:{st.st_ino}"


def pinned_root(root: str, identity: str) -> str:
    """`root` (a stored, resolved root) when it still is the folder indexed as `identity`
    (`""`: checked by path only).

    Raises:
        RootMoved: a symlink now lies on the path, or another user's folder (or a file) is
            there.
        ValidationError: nothing is there any more (`path does not exist`).
    """
    pinned_identity(root, identity)
    return root


def pinned_identity(root: str, identity: str) -> str:
    """`pinned_root`'s check, answering the identity of the folder it found there (the
    one to record: this user's re-created folder has a new one), read from the same open.

    Raises:
        RootMoved, ValidationError: as `pinned_root`.
    """
    why, now = _examine(root, identity)
    if why is None:
        return now
    if why == "":
        raise ValidationError(
            "path does not exist",
            hint=f"The repository's folder {root} is gone; index it where it is now, or "
            f"`ctxd remove {root}`.",
            details={"field": "path", "path": root},
        )
    raise root_moved(root, why)


def root_problem(root: str, identity: str) -> str | None:
    """Why `root` is no longer the folder indexed as `identity`, or None (it is, or it is
    simply gone: not a folder that could be read in its place)."""
    return _examine(root, identity)[0] or None


def moved_root(root: str, identity: str, *, here: bool = True) -> dict[str, str]:
    """`{"root_moved": why}` for a repository whose root is no longer the folder indexed,
    else `{}`: what `status` and `list_repos` add to a repository. One another machine
    indexed (`here` False, a shared store) is not judged: its identity is that machine's."""
    why = root_problem(root, identity) if here else None
    return {"root_moved": why} if why else {}


def _examine(root: str, identity: str) -> tuple[str | None, str]:
    """(why, identity now): why None: it is the folder (or this user's, re-created); "":
    nothing there; else why it is no longer the folder indexed."""
    try:
        fd = open_verified(root, O_DIR)
    except PathChanged as exc:
        return f"it now leads to {exc.filename}", ""
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return "", ""
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            return _what_is_there(root), ""
        return f"it cannot be opened ({exc.strerror})", ""
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    now = f"{st.st_dev}:{st.st_ino}"
    if identity and now != identity and st.st_uid not in (os.geteuid(), 0):
        return (f"another user's folder is there (uid {st.st_uid}; device:inode {now}, "
                f"indexed as {identity}): it was moved or replaced"), now
    if identity and now != identity:
        parent = os.path.dirname(root.rstrip("/")) or "/"
        open_to = others_can_write(parent)
        if open_to:
            return (f"another folder is there (device:inode {now}, indexed as {identity}) "
                    f"and other users can write {parent} ({open_to}): one of them may have "
                    "put one of your folders in its place"), now
    return None, now


def unconfirmed_swap(root: str, identity: str) -> str | None:
    """Why a full run of the stored root `root` (pinned as `identity`) must not take the
    folder there without the user's confirmation (`force`), or None: another folder of
    this user's (or root's) is there and other users can write its parent, so it may be
    one of the user's other folders renamed into place; a plain re-index would replace
    the repository's files by its. (Another user's folder there is refused on every read
    and taken by a full run, as before: the run pins it.)"""
    if not identity:
        return None
    why, now = _examine(root, identity)
    if why is None or not now or now == identity:
        return None
    try:
        if os.stat(root).st_uid not in (os.geteuid(), 0):
            return None  # another user's folder: the first case
    except OSError:
        return None
    return why


def others_can_write(folder: str) -> str | None:
    """How users other than this one can rename entries of `folder` (so swap a folder of
    yours into a repository's place), or None: its owner is another user (not root), or
    it is writable by others or by a group with other members, without the sticky bit
    (which keeps them from renaming what is not theirs)."""
    try:
        st = os.stat(folder)
    except OSError:
        return None
    me = os.geteuid()
    if st.st_uid not in (me, 0):
        return f"it belongs to uid {st.st_uid}"
    if st.st_mode & stat.S_ISVTX:
        return None
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o002:
        return f"mode {mode:o}"
    if mode & 0o020 and _group_has_others(st.st_gid, me):
        return f"mode {mode:o}, group {st.st_gid} has other members"
    return None


def _group_has_others(gid: int, me: int) -> bool:
    """Whether a user other than `me` is in group `gid` (a member, or its primary group)."""
    import grp
    import pwd

    try:
        mine = pwd.getpwuid(me).pw_name
    except KeyError:
        mine = ""
    try:
        if set(grp.getgrgid(gid).gr_mem) - {mine}:
            return True
    except KeyError:
        pass
    return any(p.pw_gid == gid and p.pw_uid != me for p in pwd.getpwall())


def _what_is_there(root: str) -> str:
    try:
        st = os.lstat(root)
    except OSError:
        return "a symlink now lies on its path"
    if stat.S_ISLNK(st.st_mode):
        try:
            return f"it is now a symlink to {os.readlink(root)}"
        except OSError:
            return "it is now a symlink"
    if not stat.S_ISDIR(st.st_mode):
        return "it is no longer a folder"
    return "a symlink now lies on its path"
