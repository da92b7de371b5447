"""The keys a file is found by as an importer: `link_keys(graph, path)`.

Each import gives the last part of its module's name (`module_tail`), for `from pkg
import name` also `name` (it may be a module), for `import pkg.mod` also `pkg` (the name
it binds), for a Rust path its crate. A relative import (Python `from ..a import b`,
JS/TS `./x`, `../y/index`) can only name files under one folder, its `import_scope`
(Python: the folder its dots climb to; JS/TS: the folder of the path it names), so its
keys are written with that folder in front (`scoped`: `c057/urllib3/src/urllib3` SCOPE
`response`): a definition's candidates are looked up under the folders above the files
that may be named (`search.graph.candidates`), and a monorepo's other copies, whose
relative imports are keyed under their own folders, are never read.

A Python absolute import names the module of that dotted name nearest the importer (the
most leading folders shared), so its keys are written twice: under the importer's top
folder (`top_keyed`: `c057` TOP `response`) and under the module's first name
(`root_keyed`: TOP `urllib3` TOP `response`). An importer in a top folder that holds a
copy of a file at the same path below it (`c057/urllib3/...` for `c000/urllib3/...`)
reaches the file only by its full dotted name, which starts with the file's top folder:
the candidates skip such top folders' keys and ask the root keys of that name instead.

Invariants: a relative import keys the file only under its scope, and every file it may
name (`search.graph.modules.RepoLayout.import_files`) lies under that scope (or is the
scope's own `__init__`/`index` file, `scope/index.ts`); a Python absolute import keys it
under its top folder ('' for a file at the root) and its module's first name; the other
keys are as written.
"""

from __future__ import annotations

import posixpath
import re

from ctxd.indexer.graph.model import FileGraph, Import, module_tail

__all__ = ["SCOPE", "TOP", "import_scope", "link_keys", "root_keyed", "scoped", "top_keyed",
           "top_of"]

SCOPE = "\x1f"
"""Between a relative import's folder and its key (never in a path, a name or a
module's tail)."""
TOP = "\x1e"
"""Between a Python absolute import's top folder or first name and its key."""
_JS_LIKE = frozenset({"javascript", "typescript", "tsx"})


def scoped(folder: str, key: str) -> str:
    """A key as a relative import under `folder` writes it."""
    return f"{folder}{SCOPE}{key}"


def top_of(path: str) -> str:
    """The first folder of a path ('' for a file at the root)."""
    head, sep, _ = path.partition("/")
    return head if sep else ""


def top_keyed(top: str, key: str) -> str:
    """A key as a Python absolute import in the top folder `top` writes it."""
    return f"{top}{TOP}{key}"


def root_keyed(first: str, key: str) -> str:
    """A key as a Python absolute import of a module whose first name is `first` writes
    it."""
    return f"{TOP}{first}{TOP}{key}"


def import_scope(path: str, imp: Import, language: str) -> str | None:
    """The folder every file a relative import of `path` may name lies under (Python:
    the importer's folder, one up per dot past the first; JS/TS: the folder of the path
    it names, normalised); None: not a relative import."""
    if language == "python":
        if imp.level <= 0:
            return None
        base = posixpath.dirname(path)
        for _ in range(imp.level - 1):
            base = posixpath.dirname(base)
        return base
    if language in _JS_LIKE and imp.module.startswith("."):
        stem = posixpath.normpath(posixpath.join(posixpath.dirname(path), imp.module))
        return posixpath.dirname(stem)
    return None


def link_keys(graph: FileGraph, path: str) -> list[str]:
    """The distinct keys under which the file at `path` (relative to its repository's
    root) is found as an importer (see the module docstring)."""
    keys: dict[str, None] = {}
    top = top_of(path)
    for imp in graph.imports:
        scope = import_scope(path, imp, graph.language)
        for key in _keys(imp, graph.language):
            if scope is not None:
                keys[scoped(scope, key)] = None
            elif graph.language == "python":
                keys[top_keyed(top, key)] = None
                keys[root_keyed(imp.module.partition(".")[0], key)] = None
            else:
                keys[key] = None
    return list(keys)


def _keys(imp: Import, language: str) -> list[str]:
    out: list[str] = []
    tail = module_tail(imp.module)
    if tail:
        out.append(tail)
    if imp.name is None and not imp.alias and not imp.level and re.fullmatch(
            r"\w+(?:\.\w+)+", imp.module):  # Python `import a.b` binds `a`
        out.append(imp.module.partition(".")[0])
    if imp.name and imp.name != "*" and imp.name != "default":
        out.append(imp.name.rpartition(".")[2])
    if language == "rust" and (head := imp.module.partition("::")[0]) not in (
            "crate", "self", "super", "std", "core", "alloc", imp.module):
        out.append(head)  # `use grep::matcher::Matcher`: the crate `grep` too
    return out
