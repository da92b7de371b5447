"""Check that no code graph site lies in a comment or a string: every site of every file
with graph rules under the trees is placed against the file's tree-sitter parse, and one
whose node, or a named node around it, is of a type the language's spec skips (comments,
strings; import statements aside) without an interpolation in between is reported.

    .venv/bin/python -m bench.graph_eval.code_only TREE [TREE ...]

Prints the first offending sites and `N files, M sites, K in a comment or string`; exit
status 1 when K > 0.
"""

from __future__ import annotations

import os
import sys

from ctxd.indexer.chunk.languages import detect_language
from ctxd.indexer.chunk.syntax import parse_source
from ctxd.indexer.graph.extract import extract
from ctxd.indexer.graph.specs import SPECS

MAX_BYTES = 1_000_000
_STATEMENTS = frozenset({"import_declaration", "import", "package_header", "using_directive",
                         "namespace_use_declaration", "namespace_name"})
"""Skipped node types that are code, not text (their names are imports, not usages)."""


def check(path: str) -> tuple[int, list[str]]:
    """(sites, the offending ones) of one file (0, []: no graph rules, unreadable)."""
    lang = detect_language(path)
    if lang not in SPECS or os.path.getsize(path) > MAX_BYTES:
        return 0, []
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return 0, []
    parsed = parse_source(lang, text)
    graph = extract(lang, parsed) if parsed is not None else None
    if parsed is None or graph is None:
        return 0, []
    spec, lines, bad = SPECS[lang], parsed.source.split(b"\n"), []
    for s in graph.sites:
        row = s.line - 1
        line = lines[row].decode("utf-8", "replace") if row < len(lines) else ""
        byte = len(line[:s.col - 1].encode("utf-8"))
        node = parsed.tree.root_node.descendant_for_point_range((row, byte), (row, byte))
        while node is not None and node.type not in spec.code_inside:
            if node.is_named and node.type in spec.skip and node.type not in _STATEMENTS:
                bad.append(f"{path}:{s.line}:{s.col} {s.name} ({s.role.name})")
                break
            node = node.parent
    return len(graph.sites), bad


def main() -> None:
    files = sites = 0
    bad: list[str] = []
    for tree in sys.argv[1:]:
        for folder, dirs, names in os.walk(tree):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for name in names:
                n, found = check(os.path.join(folder, name))
                files += n > 0
                sites += n
                bad += found
    for b in bad[:20]:
        print(b)
    print(f"{files} files, {sites} sites, {len(bad)} in a comment or string")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
