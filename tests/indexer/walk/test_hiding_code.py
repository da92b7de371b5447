"""Issue 39, item 10: a file is not taken out of semantic search by one long line or one
comment. A `.py` with a 3,000-character line beside short functions stays embedded, a
hand-written `.js` in a source folder ending with a `sourceMappingURL` comment is not build
output; real bundles and minified files still are. Through `classify` and the real
pipeline into a real index."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.sqlite.store import Store
from ctxd.indexer.walk.buildout import BuildDirs
from ctxd.indexer.walk.textclass import Role, TextRules, VendorDirs, classify
from ctxd.indexer.walk.walker import WalkOptions
from tests.conftest import FakeEmbedder, RepoBuilder

HIDDEN = "def exfiltrate(path):\n    return open(path).read()\n"
PY_WITH_A_LONG_LINE = ('"""Helpers."""\n\nTABLE = "' + "ab" * 1500 + '"\n\n\n' + HIDDEN
                       + "\n\ndef other():\n    return 1\n")
JS_WITH_A_MAP_COMMENT = ("export function exfiltrate(path) {\n  return fetch(path);\n}\n\n"
                         "//# sourceMappingURL=app.js.map\n")
MINIFIED_JS = "!function(e){" + "e.a=function(t){return t};" * 200 + "}(window);\n"


def role_of(tmp_path: Path, rel: str, text: str) -> tuple[Role, str]:
    return classify(rel, text, TextRules(), VendorDirs(tmp_path), BuildDirs(tmp_path))


@pytest.mark.parametrize(
    ("rel", "text"),
    [
        ("app/helpers.py", PY_WITH_A_LONG_LINE),
        ("src/app.js", JS_WITH_A_MAP_COMMENT),
        ("src/components/app.js", JS_WITH_A_MAP_COMMENT),
    ],
    ids=["py-long-line", "js-source-map-in-src", "js-source-map-in-src-sub"],
)
def test_one_long_line_or_one_comment_does_not_hide_code(
        tmp_path: Path, rel: str, text: str) -> None:
    role, why = role_of(tmp_path, rel, text)
    assert role is Role.EMBED, why


@pytest.mark.parametrize(
    ("rel", "text", "role"),
    [
        ("static/app.min.js", MINIFIED_JS, Role.MINIFIED),
        ("static/app.js", MINIFIED_JS, Role.MINIFIED),
        ("public/app.js", JS_WITH_A_MAP_COMMENT, Role.BUILT),
        ("src/app.js", "export const a = 1;\n//# sourceMappingURL=data:application/json;"
         "base64,eyJ2ZXJzaW9uIjozfQ==\n", Role.BUILT),
        ("app/tables.py", "A = '" + "ab" * 1500 + "'\nB = '" + "cd" * 1500 + "'\nC = 1\n",
         Role.LONG_LINES),
        ("app/blob.py", "def f():\n    return 1\n\n\nBLOB = '" + "ab" * 600_000 + "'\n",
         Role.MINIFIED),
    ],
    ids=["min-js", "minified-by-text", "map-comment-outside-src", "inline-map-in-src",
         "mostly-long-py", "huge-py-blob"],
)
def test_minified_and_built_files_still_are(tmp_path: Path, rel: str, text: str,
                                            role: Role) -> None:
    assert role_of(tmp_path, rel, text)[0] is role


MOSTLY_LONG = "".join(f"T{i} = '" + "ab" * 1500 + "'\n" for i in range(6)) + "\n\n" + HIDDEN


def test_the_short_lines_of_a_mostly_long_file_are_embedded(
        repo: RepoBuilder, tmp_path: Path) -> None:
    """Most of its lines long: greppable whole, its short code lines embedded, the long
    ones not (they cost what a minified file would)."""
    assert role_of(tmp_path, "app/tables.py", MOSTLY_LONG)[0] is Role.LONG_LINES
    repo.write("app/tables.py", MOSTLY_LONG)
    store = Store.open(tmp_path / "index.db")
    Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions())
    assert store.query("SELECT role FROM files")[0][0] == "long-lines"
    spans = store.query("SELECT start_line, end_line FROM checkpoints")
    long_lines = set(range(1, 7))
    assert spans and all(not long_lines & set(range(a, b + 1)) for a, b in spans), spans
    assert any(a <= 9 <= b for a, b in spans)  # `def exfiltrate` on line 9
    assert "exfiltrate" in {r[0] for r in store.query("SELECT name FROM symbols")}
    assert "abab" in store.query("SELECT content FROM file_text")[0][0]


def test_the_short_function_beside_a_long_line_reaches_the_embeddings(
        repo: RepoBuilder, tmp_path: Path) -> None:
    repo.write("app/helpers.py", PY_WITH_A_LONG_LINE)
    repo.write("src/app.js", JS_WITH_A_MAP_COMMENT)
    store = Store.open(tmp_path / "index.db")
    Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions())
    roles = dict(store.query("SELECT path, role FROM files"))
    assert roles == {"app/helpers.py": "", "src/app.js": ""}
    symbols = {r[0] for r in store.query("SELECT name FROM symbols")}
    assert {"exfiltrate", "other"} <= symbols
