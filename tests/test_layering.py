"""Imports point one way (STYLE.md 1.1, DESIGN.md): server -> search -> indexer; inside
server/, the edges (cli, mcp, daemon) and the watcher use the service layer, never the
other way round; no import circles between modules; only indexer/store/sqlite/connection.py
opens SQLite; the concerns of the store stand apart and its engines (sqlite/, pg/) do not
import each other; search/ and server/ execute no SQL themselves; the installed
distribution has one top-level import name, `ctxd`."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("indexer", "search", "server")
FORBIDDEN = {"indexer": {"search", "server"}, "search": {"server"}, "server": set()}
EDGES = ("cli", "mcp", "daemon", "watch", "ui")
"""server/ subpackages that may use the service layer but that it must not import."""
CORE = ("server/service.py", "server/search_cases.py", "server/resources.py",
        "server/inventory.py", "server/file_contents.py", "server/repo_names.py",
        "server/requests.py", "server/config.py", "server/jobs.py",
        "server/watch_state.py", "server/use_cases.py", "server/graph_cases.py")


def module_name(path: Path) -> str:
    """`server/watch/batch.py` -> `ctxd.server.watch.batch` (the installed name)."""
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["ctxd", *parts])


def source_files() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def imported_modules(path: Path, *, type_checking: bool = True) -> set[str]:
    """Absolute module names imported by `path` (`from ctxd.x import y` gives `ctxd.x` and
    `ctxd.x.y`; the caller keeps those that exist). Imports under `if TYPE_CHECKING:` are
    left out when `type_checking` is False."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    if not type_checking:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skip.update(id(n) for n in ast.walk(node))
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def top_level(path: Path) -> set[str]:
    """First-layer package names (`indexer`, `search`, `server`, `sqlean`, ...)."""
    out = set()
    for name in imported_modules(path):
        parts = name.split(".")
        out.add(parts[1] if parts[0] == "ctxd" and len(parts) > 1 else parts[0])
    return out


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_point_one_way(package):
    offenders = {
        str(p.relative_to(ROOT)): sorted(top_level(p) & FORBIDDEN[package])
        for p in (ROOT / package).rglob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_no_module_imports_the_old_top_level_names():
    offenders = sorted(
        str(p.relative_to(ROOT))
        for p in source_files()
        if {n.split(".")[0] for n in imported_modules(p)} & set(PACKAGES)
    )
    assert offenders == []


@pytest.mark.parametrize("core", CORE)
def test_service_layer_never_imports_the_edges_or_the_watcher(core):
    edges = {f"ctxd.server.{e}" for e in EDGES}
    bad = sorted(n for n in imported_modules(ROOT / core) if ".".join(n.split(".")[:3]) in edges)
    assert bad == []


def test_no_import_cycles_between_modules():
    """Run-time imports (not `if TYPE_CHECKING:`) form no circle."""
    files = {module_name(p): p for p in source_files()}
    graph = {
        name: {m for m in imported_modules(p, type_checking=False) if m in files and m != name}
        for name, p in files.items()
    }
    # A package's __init__ being imported by its own modules is not a circle of concern.
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt):], nxt] if nxt in stack else [node, nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_only_the_store_and_schema_talk_to_sqlite():
    users = sorted(
        str(p.relative_to(ROOT))
        for p in source_files()
        if {"sqlean", "sqlite3", "apsw"} & top_level(p)
    )
    # schema.py only runs migrations on the connection connection.py opened and hands it.
    assert users == ["indexer/store/sqlite/connection.py", "indexer/store/sqlite/schema.py"]


def test_ctxd_is_the_only_top_level_import_name():
    """The wheel maps every folder under `ctxd.` (package-dir), so installing ctxd cannot
    clash with another distribution's `server`, `search` or `indexer`."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = config["tool"]["setuptools"]
    packages = setuptools["packages"]
    assert {p.split(".")[0] for p in packages} == {"ctxd"}
    mapped = setuptools["package-dir"]
    assert mapped == {f"ctxd.{p}": p for p in PACKAGES}
    # every folder with an __init__.py under the mapped ones is listed, so none is left out
    found = {module_name(p.parent) for p in source_files() if p.name == "__init__.py"}
    assert found == set(packages)
    script = config["project"]["scripts"]["ctxd"]
    assert script.startswith("ctxd.")


SUBPACKAGES = {"indexer": ("walk", "chunk", "store"), "search": ("lexical", "zoekt")}
"""Sibling subpackages stand apart: each uses its package's shared modules (models,
errors, ...), never a sibling (the walk knows nothing of chunks or storage, the embedded
lexical engine nothing of the Zoekt client), so either side can be replaced alone."""


@pytest.mark.parametrize("package", sorted(SUBPACKAGES))
def test_sibling_subpackages_do_not_import_each_other(package):
    subs = SUBPACKAGES[package]
    offenders = {}
    for sub in subs:
        for p in (ROOT / package / sub).rglob("*.py"):
            used = {name.split(".")[2] for name in imported_modules(p)
                    if name.startswith(f"ctxd.{package}.") and len(name.split(".")) > 2}
            if bad := sorted(used & (set(subs) - {sub})):
                offenders[str(p.relative_to(ROOT))] = bad
    assert offenders == {}
    for sub in subs:
        assert (ROOT / package / sub / "__init__.py").is_file(), f"{package}/{sub} is a package"


STORE_CONCERNS = ("repos", "files", "pending", "vectors", "coverage")
"""indexer/store/sqlite/ modules that each own one concern of `Store`, built on `STORE_BASE` alone:
none imports another, only store.py composes them, so each can be replaced alone (the
vectors by another engine behind `vector_rows.VectorRows`)."""
STORE_BASE = ("connection", "records", "vector_rows", "schema", "private")
"""What the concerns build on; these import no concern and not the composed store."""


def store_modules(path: Path) -> set[str]:
    """The indexer/store/ and indexer/store/sqlite/ modules `path` imports (`if
    TYPE_CHECKING:` included)."""
    out = set()
    for n in imported_modules(path):
        for prefix in ("ctxd.indexer.store.sqlite.", "ctxd.indexer.store."):
            if n.startswith(prefix):
                out.add(n.removeprefix(prefix).split(".")[0])
                break
    return out


def store_file(name: str) -> Path:
    """The SQLite store's module `name`, or the engine-neutral one at the store's root."""
    sqlite = ROOT / "indexer" / "store" / "sqlite" / f"{name}.py"
    return sqlite if sqlite.is_file() else ROOT / "indexer" / "store" / f"{name}.py"


def test_store_concerns_stand_apart():
    offenders = {}
    for name in STORE_CONCERNS:
        if bad := sorted(store_modules(store_file(name)) & (set(STORE_CONCERNS) - {name})):
            offenders[f"{name}.py"] = bad
    for name in STORE_BASE:
        if bad := sorted(store_modules(store_file(name)) & {*STORE_CONCERNS, "store"}):
            offenders[f"{name}.py"] = bad
    assert offenders == {}
    assert set(STORE_CONCERNS) <= store_modules(store_file("store")), "Store composes them all"


ENGINES = ("sqlite", "pg")
"""indexer/store/ subpackages that each implement the store's protocol for one engine."""


@pytest.mark.parametrize("engine", ENGINES)
def test_the_store_engines_do_not_import_each_other(engine):
    """Each engine builds on the store's engine-neutral root (protocol, records, words,
    dialect, ...) only, so either can be replaced or left out alone."""
    others = {f"ctxd.indexer.store.{e}" for e in ENGINES if e != engine}
    offenders = {
        str(p.relative_to(ROOT)): bad
        for p in (ROOT / "indexer" / "store" / engine).rglob("*.py")
        if (bad := sorted(n for n in imported_modules(p)
                          if any(n == o or n.startswith(o + ".") for o in others)))
    }
    assert offenders == {}
    assert (ROOT / "indexer" / "store" / engine / "__init__.py").is_file()


def test_the_store_root_names_what_is_public_and_loads_no_engine():
    """`ctxd.indexer.store` resolves every name it lists, and importing the package (as
    the settings do, for `location`) loads no database driver."""
    code = ("import sys, ctxd.indexer.store as s, ctxd.indexer.store.location\n"
            "assert not {'sqlean', 'psycopg'} & set(sys.modules), sorted(sys.modules)\n"
            "missing = [n for n in s.__all__ if getattr(s, n, None) is None]\n"
            "assert not missing, missing\n")
    subprocess.run([sys.executable, "-c", code], check=True)


DRIVERS = {"sqlean", "sqlite3", "apsw", "psycopg", "psycopg2", "psycopg_pool"}
EXECUTE = {"execute", "executemany", "executescript", "cursor"}
SQL_STATEMENT = re.compile(
    r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|WITH|PRAGMA|BEGIN|COMMIT|VACUUM)\b")


def executed_sql(path: Path) -> list[str]:
    """Where `path` talks to a database itself: a driver import, or a call of a
    connection's or cursor's `execute`, `executemany`, `executescript` or `cursor`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = [f"imports {n}" for n in imported_modules(path) if n.split(".")[0] in DRIVERS]
    found += [f"line {n.lineno}: .{n.func.attr}(...)" for n in ast.walk(tree)
              if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
              and n.func.attr in EXECUTE]
    return found


def sql_statements(path: Path) -> list[str]:
    """The SQL statements written out in `path`: string literals (docstrings and other
    bare string statements left out) that start with a statement's keyword."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bare = {id(n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    return [f"line {n.lineno}: {n.value.strip()[:40]}" for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in bare and SQL_STATEMENT.search(n.value)]


@pytest.mark.parametrize("package", ["search", "server"])
def test_search_and_server_execute_no_sql_themselves(package):
    """Only the store talks to the database: the layers above call its methods."""
    offenders = {str(p.relative_to(ROOT)): found for p in sorted((ROOT / package).rglob("*.py"))
                 if (found := executed_sql(p))}
    assert offenders == {}


@pytest.mark.parametrize("package", ["search", "server"])
def test_search_and_server_hold_no_sql(package):
    """Every SQL statement lives in the store (indexer/store/); `search/` and `server/`
    ask for what they need by method."""
    offenders = {str(p.relative_to(ROOT)): found for p in sorted((ROOT / package).rglob("*.py"))
                 if (found := sql_statements(p))}
    assert offenders == {}
