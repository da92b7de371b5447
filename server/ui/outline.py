"""A file's outline for the file view: its definitions (or a document's sections), found in
the text the page shows by the same parsers the indexer uses (tree-sitter for code,
headings for Markdown and reStructuredText), so the outline always matches the lines on
screen, even when the file changed since it was indexed."""

from __future__ import annotations

from dataclasses import dataclass

from ctxd.indexer.chunk.headings import markdown_sections, rst_sections
from ctxd.indexer.chunk.languages import Family, family
from ctxd.indexer.chunk.syntax import Definition, ParseBudgetExceeded, parse_definitions

PARSE_BUDGET_S = 0.25
"""The most time the outline's parse may take; past it the page has no outline."""

MAX_ITEMS = 2000


@dataclass(frozen=True, slots=True)
class OutlineItem:
    name: str
    kind: str
    line: int
    end_line: int
    depth: int


def outline(language: str, text: str) -> list[OutlineItem]:
    """The definitions of `text` in file order, with their nesting depth (empty for a
    language without a parser, or a parse that fails or runs over its budget)."""
    fam = family(language)
    try:
        if fam is Family.MARKDOWN:
            defs: list[Definition] | None = markdown_sections(text.split("\n"))
        elif fam is Family.RST:
            defs = rst_sections(text.split("\n"))
        elif fam is Family.CODE:
            defs = parse_definitions(language, text, budget_s=PARSE_BUDGET_S)
        else:
            defs = None
    except (ParseBudgetExceeded, ValueError, RuntimeError, RecursionError):
        defs = None
    out: list[OutlineItem] = []

    def walk(items: tuple[Definition, ...] | list[Definition], depth: int) -> None:
        for d in items:
            if len(out) >= MAX_ITEMS:
                return
            out.append(OutlineItem(d.name, d.kind, d.line, d.end_line, depth))
            walk(d.children, depth + 1)

    walk(defs or [], 0)
    return out
