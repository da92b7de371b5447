"""Which paths are pages of prose (`search.path_kinds.is_prose`): a manual written as YAML
or JSON under a documentation folder ranks as a page (issue 42: jq's manual.yml)."""

from __future__ import annotations

import pytest

from ctxd.search.path_kinds import is_prose


@pytest.mark.parametrize(("path", "prose"), [
    ("README.md", True),
    ("docs/guide.rst", True),
    ("jq/docs/content/manual/manual.yml", True),
    ("docs/content/manual/v1.6/manual.yml", True),
    ("doc/api/reference.json", True),
    ("src/jv_print.c", False),
    ("config/settings.yml", False),
    (".github/workflows/tests.yml", False),
    ("package.json", False),
    ("src/docs_builder.py", False),
])
def test_pages_of_prose(path: str, prose: bool) -> None:
    assert is_prose(path) is prose
