"""Imports point one way: server -> search -> indexer (STYLE.md 1.1), and only
indexer/store.py opens SQLite."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {"indexer": {"search", "server"}, "search": {"server"}, "server": set()}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
    return out


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_point_one_way(package):
    offenders = {
        str(p.relative_to(ROOT)): sorted(imported_packages(p) & FORBIDDEN[package])
        for p in (ROOT / package).glob("*.py")
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_only_the_store_and_schema_talk_to_sqlite():
    users = sorted(
        str(p.relative_to(ROOT))
        for package in FORBIDDEN
        for p in (ROOT / package).glob("*.py")
        if {"sqlean", "sqlite3", "apsw"} & imported_packages(p)
    )
    # schema.py only runs migrations on the connection store.py opened and hands it.
    assert users == ["indexer/schema.py", "indexer/store.py"]
