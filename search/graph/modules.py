"""Which indexed file an import names, per language: `RepoLayout.resolve(path, imp, lang)`.

A `RepoLayout` is one repository's file list plus what its build files say: Python
modules by every dotted suffix of their path (so `src/` layouts and nested roots
resolve: `src/pkg/models.py` is `pkg.models`, `pkg/__init__.py` is `pkg`); JS/TS
relative paths with their extensions and `index` files, `tsconfig.json` `baseUrl` and
`paths`; Go import paths under `go.mod`'s module path (a package is a folder); Rust
`crate::`/`self::`/`super::` paths and `mod x;` over `src/` trees, a Cargo workspace's
sibling library crates by name (`use globset::Glob`: its `Cargo.toml`); Java `import a.b.C`
by path suffix (a package is a folder); Ruby `require_relative`; C/C++ `#include "x.h"` by
path suffix. What names no indexed file
resolves to nothing (a standard library, a dependency): the caller treats the name as
unresolved. Pure over the lists it is given.
"""

from __future__ import annotations

import posixpath
import re
import tomllib
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterable
from functools import cached_property

from ctxd.indexer.graph import Import
from ctxd.search.graph.build_files import BUILD_ENDS, is_build_file, ts_config

__all__ = ["JS_LIKE", "RepoLayout", "file_keys", "import_keys", "module_name", "shared_folders"]

JS_LIKE = frozenset({"javascript", "typescript", "tsx"})
_JS_EXTS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_PY_EXTS = (".py", ".pyi")
MEMO_SIZE = 200_000
"""Python and JS module lookups a layout remembers (then it starts again)."""


def module_name(path: str) -> str:
    """A file's dotted module name from its path (`src/pkg/models.py` -> `src.pkg.models`,
    `pkg/__init__.py` -> `pkg`, `a/b.ts` -> `a.b`, `a/index.ts` -> `a`, `src/mod.rs` ->
    `src`; Python's `pkg/lib.py` is `pkg.lib`: only `__init__` names its package there)."""
    stem = path[:-3] if path.endswith(".py") else path[:-4] if path.endswith(  # (Python's:
        ".pyi") else _SOURCE_EXT.sub("", path)  # no expression, a monorepo asks thousands)
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] in (("__init__",) if path.endswith(_PY_EXTS) else _PACKAGE_STEMS):
        parts.pop()
    return ".".join(parts)


_SOURCE_EXT = re.compile(r"\.(py|pyi|d\.ts|ts|tsx|js|jsx|mjs|cjs|go|rs|java|rb|c|h|cc|cpp|hpp)$")


class RepoLayout:
    """One repository's files, indexed for import resolution."""

    def __init__(self, paths: Iterable[str], read: Callable[[str], str | None], *,
                 builds: Iterable[str] | None = None) -> None:
        """`read(path)`: a build file's indexed text (`go.mod`, `tsconfig.json`), or None
        (asked for the files `is_build_file` names, in path order, here and only here;
        `builds`: those files, when the caller has found them among `paths`).
        What a lookup needs of the paths (by folder, by name, Python modules by name,
        the tsconfig files' options) is indexed at its first use: a monorepo's 80,000
        paths cost a set here, and a Python question does not build Go's index."""
        self.paths = set(paths)
        self.go_modules: list[tuple[str, str]] = []  # (module path, folder)
        self.rust_crates: dict[str, str] = {}  # library crate name -> its root file
        self._ts_texts: list[tuple[str, str]] = []
        if builds is None:
            builds = (p for p in self.paths if p.endswith(BUILD_ENDS) and is_build_file(p))
        for p in sorted(builds):
            base = posixpath.basename(p)
            if base == "go.mod":
                text = read(p) or ""
                m = re.search(r"(?m)^module\s+(\S+)", text)
                if m:
                    self.go_modules.append((m.group(1), posixpath.dirname(p)))
            elif base == "Cargo.toml":
                self._cargo(p, read(p) or "")
            else:
                self._ts_texts.append((p, read(p) or ""))
        self._py_memo: dict[tuple[str, str, str | None, int], tuple[str, ...]] = {}
        self._files_memo: dict[tuple[str, str, str | None, int], tuple[str, ...]] = {}
        self._named_memo: dict[str, list[str]] = {}
        self._keys_memo: dict[tuple[str, str, str | None, int, str], frozenset[str] | None] = {}
        self._file_keys_memo: dict[str, frozenset[str]] = {}
        self._above_memo: dict[str, tuple[frozenset[str], frozenset[str]]] = {}
        self._java_packages: dict[tuple[str, str], list[str]] | None = None
        self._ts_parsed: dict[str, list[tuple[str, str, dict[str, list[str]]]]] = {}

    @cached_property
    def by_dir(self) -> dict[str, list[str]]:
        """A folder -> its files, by path (folders in the order of their first file)."""
        out: dict[str, list[str]] = defaultdict(list)
        for p in sorted(self.paths):
            out[posixpath.dirname(p)].append(p)
        return out

    @cached_property
    def by_base(self) -> dict[str, list[str]]:
        """A file's name -> its paths (`#include "x.h"` by path suffix)."""
        out: dict[str, list[str]] = defaultdict(list)
        for p in self.paths:
            out[posixpath.basename(p)].append(p)
        return out

    @cached_property
    def _py_tails(self) -> dict[str, list[str]]:
        """The last part of a Python file's module name (`module_name`) -> its paths."""
        out: dict[str, list[str]] = defaultdict(list)
        for p in self.paths:
            if p.endswith(_PY_EXTS):
                out[_py_tail(p)].append(p)
        return out

    def py_named(self, dotted: str) -> list[str]:
        """The Python files whose dotted module name (`module_name`) is `dotted` or ends
        in `.dotted` (`pkg.models` finds `src/pkg/models.py`), by path."""
        got = self._named_memo.get(dotted)
        if got is None:
            if len(self._named_memo) >= MEMO_SIZE:
                self._named_memo.clear()
            tail = dotted.rpartition(".")[2]
            got = self._named_memo[dotted] = sorted(
                p for p in self._py_tails.get(tail, ())
                if (m := module_name(p)) == dotted or m.endswith("." + dotted))
        return got

    def _ts_applying(self, path: str) -> list[tuple[str, str, dict[str, list[str]]]]:
        """The `ts_configs` whose folder holds `path`, innermost first (found by the
        folders above it: a monorepo has a tsconfig in each of its packages)."""
        by_folder, parsed = self._ts_by_folder, self._ts_parsed
        out: list[tuple[str, str, dict[str, list[str]]]] = []
        folder = posixpath.dirname(path)
        while True:
            if folder in by_folder:  # (a folder's files parsed when first asked)
                got = parsed.get(folder)
                if got is None:
                    got = parsed[folder] = [c for p, text in by_folder[folder]
                                            if (c := ts_config(p, text)) is not None]
                out += got
            if not folder:
                return out
            folder = posixpath.dirname(folder)

    @cached_property
    def _ts_by_folder(self) -> dict[str, list[tuple[str, str]]]:
        """A folder -> its tsconfig/jsconfig files' (path, text), in path order."""
        out: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for p, text in self._ts_texts:
            out[posixpath.dirname(p)].append((p, text))
        return out

    @cached_property
    def ts_configs(self) -> list[tuple[str, str, dict[str, list[str]]]]:
        """(folder, base folder, `paths`) of each tsconfig/jsconfig file, innermost
        first."""
        out: list[tuple[str, str, dict[str, list[str]]]] = []
        for p, text in self._ts_texts:
            got = ts_config(p, text)
            if got is not None:
                out.append(got)
        out.sort(key=lambda c: -len(c[0]))
        return out

    def _cargo(self, path: str, text: str) -> None:
        """A Cargo package's library crate: its name (`[lib] name`, else the package's,
        `-` read as `_`) -> its root file (`[lib] path`, else `src/lib.rs`)."""
        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError):
            return
        package, lib = data.get("package"), data.get("lib")
        lib = lib if isinstance(lib, dict) else {}
        name = lib.get("name") or (package.get("name") if isinstance(package, dict) else None)
        if not isinstance(name, str) or not name:
            return
        folder = posixpath.dirname(path)
        given = lib.get("path")
        root = posixpath.normpath(posixpath.join(
            folder, given if isinstance(given, str) else "src/lib.rs"))
        if root in self.paths:
            self.rust_crates[name.replace("-", "_")] = root

    def rust_crate(self, name: str) -> str | None:
        """The root file of the repository's library crate `name` (a Cargo workspace's
        sibling crate), or None."""
        return self.rust_crates.get(name)

    def _sibling_crate(self, path: str, parts: list[str]) -> list[str]:
        """The file a Rust path that starts with a sibling library crate's name names
        (`globset::glob` in a Cargo workspace: `crates/globset/src/glob.rs`); [] when
        it does not (no such crate, or a module of that name beside `path`)."""
        lib = self.rust_crates.get(parts[0]) if parts else None
        stem = posixpath.join(posixpath.dirname(path), parts[0]) if parts else ""
        if lib is None or lib == path or f"{stem}.rs" in self.paths or (
                f"{stem}/mod.rs" in self.paths):
            return []
        return [lib] if len(parts) == 1 else self.rust_module(lib, parts[1:])

    def rust_crate_of(self, path: str) -> str | None:
        """The name of the library crate whose folder holds `path` (the innermost)."""
        best: tuple[int, str] | None = None
        for name, root in self.rust_crates.items():
            folder = posixpath.dirname(posixpath.dirname(root)) if root.endswith(
                "/src/lib.rs") or root == "src/lib.rs" else posixpath.dirname(root)
            if (not folder or path.startswith(folder + "/")) and (
                    best is None or len(folder) > best[0]):
                best = (len(folder), name)
        return best[1] if best else None

    # ---------------------------------------------------------------- per language

    def resolve(self, path: str, imp: Import, language: str) -> list[str]:
        """The indexed files (or, for Go, a package's files) that `imp` in `path` names."""
        if language == "python":
            return self._python(path, imp)
        if language in JS_LIKE:
            key = (posixpath.dirname(path), imp.module, None, -1)
            got = self._py_memo.get(key)  # (memoised: see `python_module`)
            if got is None:
                if len(self._py_memo) >= MEMO_SIZE:
                    self._py_memo.clear()
                got = self._py_memo[key] = tuple(self._js(path, imp.module))
            return list(got)
        if language == "go":
            return self._go(imp.module)
        if language == "rust":
            return self._rust(path, imp)
        if language in ("c", "cpp"):
            return self._suffix(path, imp.module)
        if language == "java":
            return self._java(path, imp)
        if language == "ruby":
            return self._ruby(path, imp)
        return []

    def import_files(self, path: str, imp: Import, language: str) -> tuple[str, ...]:
        """Every indexed file a Python or JS/TS import may name: its module's, and for
        Python `from pkg import mod` the module `pkg.mod`, for `import a.b` the package
        `a` (memoised by the importer's folder; other languages: `resolve`)."""
        python = language == "python"
        if not python and language not in JS_LIKE:
            return tuple(self.resolve(path, imp, language))
        key = (posixpath.dirname(path), imp.module, imp.name if python else None,
               imp.level if python else -2)
        got = self._files_memo.get(key)
        if got is None:
            files = self.resolve(path, imp, language)
            if python and imp.name and imp.name != "*":  # `from pkg import module`
                dotted = f"{imp.module}.{imp.name}" if imp.module else imp.name
                files = files + self.python_module(path, dotted, imp.level)
            elif python and imp.name is None and "." in imp.module and not imp.level:
                files = files + self.python_module(path, imp.module.split(".")[0], 0)
            if len(self._files_memo) >= MEMO_SIZE:
                self._files_memo.clear()
            got = self._files_memo[key] = tuple(files)
        return got

    def import_keys(self, path: str, imp: Import, language: str,
                    folder: str | None = None) -> frozenset[str] | None:
        """`import_keys(path, imp, language)`, memoised by the importer's folder (what
        they depend on: the files of a folder import much the same modules; `folder`:
        `path`'s, when the caller has it)."""
        key = (posixpath.dirname(path) if folder is None else folder, imp.module, imp.name,
               imp.level, language)
        if key not in self._keys_memo:
            if len(self._keys_memo) >= MEMO_SIZE:
                self._keys_memo.clear()
            self._keys_memo[key] = import_keys(path, imp, language)
        return self._keys_memo[key]

    def file_keys(self, path: str) -> frozenset[str]:
        """`file_keys(path)`, memoised (a depth-3 tree asks for the same files' keys once
        per definition it expands)."""
        got = self._file_keys_memo.get(path)
        if got is None:
            if len(self._file_keys_memo) >= MEMO_SIZE:
                self._file_keys_memo.clear()
            got = self._file_keys_memo[path] = file_keys(path)
        return got

    def packages_above(self, path: str) -> tuple[frozenset[str], frozenset[str]]:
        """The `__init__.py`/`.pyi` files of every folder above `path` (whether they
        exist or not) and their `file_keys`, memoised by folder."""
        folder = posixpath.dirname(path)
        got = self._above_memo.get(folder)
        if got is None:
            files: set[str] = set()
            f = folder
            while f:
                files.update((f"{f}/__init__.py", f"{f}/__init__.pyi"))
                f = posixpath.dirname(f)
            if len(self._above_memo) >= MEMO_SIZE:
                self._above_memo.clear()
            got = self._above_memo[folder] = (frozenset(files), frozenset().union(
                *(self.file_keys(p) for p in files)))
        return got

    def python_module(self, path: str, dotted: str, level: int) -> list[str]:
        """Files of the Python module `dotted` (relative to `path` by `level` dots);
        memoised by the importer's folder (what the answer depends on), since a monorepo
        of many copies has many modules of one dotted name to pick the nearest from."""
        key = (posixpath.dirname(path), dotted, "", level)
        got = self._py_memo.get(key)
        if got is None:
            if len(self._py_memo) >= MEMO_SIZE:
                self._py_memo.clear()
            got = self._py_memo[key] = self._python_module(path, dotted, level)
        return list(got)

    def _python_module(self, path: str, dotted: str, level: int) -> tuple[str, ...]:
        if level:
            folder = posixpath.dirname(path)
            for _ in range(level - 1):
                folder = posixpath.dirname(folder)
            rel = dotted.replace(".", "/")
            stem = posixpath.join(folder, rel) if rel else folder
            return tuple([c for c in (f"{stem}.py", f"{stem}/__init__.py", f"{stem}.pyi",
                                      f"{stem}/__init__.pyi") if c in self.paths][:1])
        found = self.py_named(dotted)
        if len(found) > 1:  # the one nearest the importer, then the shortest path
            return (_nearest(found, path),)
        return tuple(found)

    def _python(self, path: str, imp: Import) -> list[str]:
        return self.python_module(path, imp.module, imp.level)

    def _js_candidates(self, stem: str) -> list[str]:
        out = [stem]
        base = re.sub(r"\.(js|jsx|mjs|cjs)$", "", stem)
        for s in dict.fromkeys((stem, base)):
            out += [s + ext for ext in _JS_EXTS]
            out += [f"{s}/index{ext}" for ext in _JS_EXTS]
        return out

    def _js(self, path: str, module: str) -> list[str]:
        if module.startswith("."):
            stem = posixpath.normpath(posixpath.join(posixpath.dirname(path), module))
            return [c for c in self._js_candidates(stem) if c in self.paths][:1]
        for _, base, mapping in self._ts_applying(path):
            for pattern, targets in mapping.items():
                prefix, star, suffix = pattern.partition("*")
                if star and module.startswith(prefix) and module.endswith(suffix):
                    rest = module[len(prefix):len(module) - len(suffix)]
                elif not star and module == pattern:
                    rest = ""
                else:
                    continue
                for target in targets:
                    stem = posixpath.normpath(posixpath.join(base, target.replace("*", rest)))
                    got = [c for c in self._js_candidates(stem) if c in self.paths]
                    if got:
                        return got[:1]
            if base:
                stem = posixpath.normpath(posixpath.join(base, module))
                got = [c for c in self._js_candidates(stem) if c in self.paths]
                if got:
                    return got[:1]
        return []

    def _go(self, module: str) -> list[str]:
        for mod, folder in self.go_modules:
            if module == mod or module.startswith(mod + "/"):
                rel = module[len(mod):].lstrip("/")
                d = posixpath.join(folder, rel) if folder else rel
                return [p for p in self.by_dir.get(d, []) if p.endswith(".go")
                        and not p.endswith("_test.go")]
        return []

    def go_import_tail(self, path: str) -> str:
        """The last element of a Go file's package import path (`github.com/spf13/cobra`
        for the module's root folder: `cobra`; '' outside every module)."""
        folder = posixpath.dirname(path)
        for mod, root in sorted(self.go_modules, key=lambda m: -len(m[1])):  # innermost
            if not root or folder == root or folder.startswith(root + "/"):
                rel = folder[len(root):].strip("/") if root else folder
                return posixpath.basename(posixpath.join(mod, rel)) if rel else (
                    mod.rstrip("/").rpartition("/")[2])
        return ""

    def go_package(self, path: str) -> list[str]:
        """The other files of a Go file's package (its folder)."""
        return [p for p in self.by_dir.get(posixpath.dirname(path), [])
                if p.endswith(".go") and p != path]

    def _rust_root(self, path: str) -> str:
        folder = posixpath.dirname(path)
        while folder:
            if posixpath.basename(folder) == "src":
                return folder
            folder = posixpath.dirname(folder)
        return "src" if path.startswith("src/") else ""

    def rust_module(self, path: str, parts: list[str]) -> list[str]:
        """The file of a Rust module path (`crate`, `self`, `super` first, or relative)."""
        if not parts:
            return []
        here = posixpath.dirname(path)
        base = posixpath.basename(path)
        if base not in ("mod.rs", "lib.rs", "main.rs"):
            here = posixpath.join(here, base[:-3])
        if parts[0] == "crate":
            here, parts = self._rust_root(path), parts[1:]
        while parts and parts[0] in ("self", "super"):
            if parts[0] == "super":
                here = posixpath.dirname(here)
            parts = parts[1:]
        found: list[str] = []
        folder = here
        for k, part in enumerate(parts):
            stem = posixpath.join(folder, part) if folder else part
            hit = [c for c in (f"{stem}.rs", f"{stem}/mod.rs") if c in self.paths]
            if not hit:
                break
            found, folder = hit, stem
            if k == len(parts) - 1:
                return found
        if not parts:
            for c in (f"{here}.rs", f"{here}/mod.rs", f"{here}/lib.rs", f"{here}/main.rs"):
                if c in self.paths:
                    return [c]
        return found

    def _rust(self, path: str, imp: Import) -> list[str]:
        if imp.module == "self" and imp.name:  # `mod x;`
            return self.rust_module(path, ["self", imp.name])
        parts = imp.module.split("::")
        return self._sibling_crate(path, parts) or self.rust_module(path, parts)

    def _suffix(self, path: str, include: str) -> list[str]:
        local = posixpath.normpath(posixpath.join(posixpath.dirname(path), include))
        if local in self.paths:
            return [local]
        hits = sorted((p for p in self.by_base.get(posixpath.basename(include), ())
                       if p.endswith("/" + include) or p == include),
                      key=lambda p: (-shared_folders(p, path), len(p)))
        return hits[:1]

    def _java(self, path: str, imp: Import) -> list[str]:
        """`import a.b.C` -> the file `.../a/b/C.java`; `import a.b.*` -> the package's
        files (a folder `.../a/b`)."""
        folder = imp.module.replace(".", "/")
        if imp.name == "*":
            hits = [d for d in self.by_dir if d == folder or d.endswith("/" + folder)]
            return [p for d in hits[:1] for p in self.by_dir[d] if p.endswith(".java")]
        return self._suffix(path, f"{folder}/{imp.name}.java")

    def same_package(self, path: str, extension: str) -> list[str]:
        """The other files of the folder of `path` with the same extension (a Go or Java
        package); for Java also the package's folders in the module's other source sets
        (Maven's and Gradle's `src/test/java/a/b` beside `src/main/java/a/b`: a test sees
        the package's classes without an import)."""
        folder = posixpath.dirname(path)
        folders = [folder]
        if extension == ".java":
            folders += [d for d in self._java_source_sets(folder) if d != folder]
        return [p for d in folders for p in self.by_dir.get(d, [])
                if p.endswith(extension) and p != path]

    def _java_source_sets(self, folder: str) -> list[str]:
        """The folders of one Java package across a module's source sets
        (`.../src/<set>/java/<package>`), `folder`'s included; [] outside that layout."""
        if self._java_packages is None:
            self._java_packages = defaultdict(list)
            for d in self.by_dir:
                if m := _JAVA_SOURCE_SET.search(d + "/"):
                    key = (d[:m.start("set")], (d + "/")[m.end():].rstrip("/"))
                    self._java_packages[key].append(d)
        m = _JAVA_SOURCE_SET.search(folder + "/")
        if m is None:
            return []
        return self._java_packages.get(
            (folder[:m.start("set")], (folder + "/")[m.end():].rstrip("/")), [])

    def _ruby(self, path: str, imp: Import) -> list[str]:
        name = imp.module if imp.module.endswith(".rb") else imp.module + ".rb"
        if imp.level:
            stem = posixpath.normpath(posixpath.join(posixpath.dirname(path), name))
            return [stem] if stem in self.paths else []
        for root in ("lib/", ""):
            if root + name in self.paths:
                return [root + name]
        return []


def import_keys(path: str, imp: Import, language: str) -> frozenset[str] | None:
    """What a Python or JS/TS import of `path` may land in, as keys that a file it lands
    in (`RepoLayout.import_files`) has among its `file_keys`: a relative import, the
    folder the files lie under and their name (`folder\0name`); a Python absolute one,
    the dotted names its module must end in (None: not known without resolving the
    import: a JS package or path alias). A file found under an import key is searched
    only when one of its imports lands near the definition, and the imports that cannot
    land there (another package's or another copy's module) are never resolved."""
    if language == "python":
        if not imp.level:  # (`import a.b` binds `a`; `from pkg import module`)
            out = {imp.module}
            if imp.name and imp.name != "*":
                out.add(f"{imp.module}.{imp.name}" if imp.module else imp.name)
            elif imp.name is None and "." in imp.module:
                out.add(imp.module.split(".")[0])
            return frozenset(out)
        base = posixpath.dirname(path)
        for _ in range(imp.level - 1):
            base = posixpath.dirname(base)
        if imp.module:  # `base/a/b.py` or `base/a/b/__init__.py`: under `base`, named `b`
            out = {f"{base}\0{imp.module.rpartition('.')[2]}"}
        else:  # `from . import x`: `base.py` or `base/__init__.py`, then `base/x...`
            out = {f"{posixpath.dirname(base)}\0{base.rpartition('/')[2]}"}
        if imp.name and imp.name != "*":
            out.add(f"{base}\0{imp.name.rpartition('.')[2]}")
        return frozenset(out)
    if language not in JS_LIKE or not imp.module.startswith("."):
        return None
    stem = posixpath.normpath(posixpath.join(posixpath.dirname(path), imp.module))
    folder, _, last = stem.rpartition("/")
    return frozenset({f"{folder}\0{last}",
                      f"{folder}\0{re.sub(r'[.](js|jsx|mjs|cjs)$', '', last)}"})


def file_keys(path: str) -> frozenset[str]:
    """The keys of `import_keys` that name the file: each folder above it (the root
    too) with each name an import may call it by (its name, that name without each
    extension it ends in, its module name's last part, and for a package's
    `__init__`/`index` file the folder's name), and every dotted ending of its module
    name (`module_name`)."""
    folder, _, base = path.rpartition("/")
    module = module_name(path)
    names = {base, module.rpartition(".")[2]}
    names.update(base[:-len(e)] for e in (*_PY_EXTS, *_JS_EXTS) if base.endswith(e))
    if base.startswith(("__init__.", "index.")):
        names.add(folder.rpartition("/")[2])
    parts = folder.split("/") if folder else []
    above = ["/".join(parts[:k]) for k in range(len(parts) + 1)]
    dotted = module.split(".")
    return frozenset({f"{a}\0{n}" for a in above for n in names} |
                     {".".join(dotted[k:]) for k in range(len(dotted))})


def _py_tail(path: str) -> str:
    """`module_name(path).rpartition(".")[2]` for a `.py`/`.pyi` path, without its
    regular expression (the Python index of a monorepo reads ~20,000 of them)."""
    stem = path[:-4] if path.endswith(".pyi") else path[:-3]
    head, _, last = stem.rpartition("/")
    if last == "__init__":
        last = head.rpartition("/")[2]
    if not last or "//" in path or path.startswith("/"):  # (empty parts: the long way)
        return module_name(path).rpartition(".")[2]
    return last.rpartition(".")[2]


_PACKAGE_STEMS = frozenset({"__init__", "index", "mod", "lib"})
_JAVA_SOURCE_SET = re.compile(r"(?:^|/)src/(?P<set>[^/]+)/java/")
"""A Maven or Gradle source set's Java root (`src/main/java/`, `src/test/java/`)."""


def _nearest(found: list[str], path: str) -> str:
    """The path of `found` (sorted) sharing the most leading folders with `path`, then
    the shortest, then the first by name: `min(found, key=(-shared_folders(p, path), len(p),
    p))`, by a binary search per folder, deepest first (a monorepo has a module of one
    name in each of its copies)."""
    folders = path.split("/")[:-1]
    for k in range(len(folders), 0, -1):
        prefix = "/".join(folders[:k]) + "/"  # (the paths under it sort before `...0`)
        hits = found[bisect_left(found, prefix):bisect_left(found, prefix[:-1] + "0")]
        if hits:
            return min(hits, key=lambda p: (len(p), p))
    return min(found, key=lambda p: (len(p), p))


def shared_folders(a: str, b: str) -> int:
    """How many leading folders two paths share."""
    n = 0
    for x, y in zip(a.split("/")[:-1], b.split("/")[:-1], strict=False):
        if x != y:
            break
        n += 1
    return n
