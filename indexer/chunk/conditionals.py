"""Conditional compilation (C#, C, C++), read as if every first branch were compiled.

tree-sitter's C# grammar parses `#if`/`#else`/`#endif` between declarations, but not
inside one: serilog's `ILogger` writes each default method body as
`void Warning(...)\\n#if FEATURE_X\\n  => Write(...)\\n#endif\\n;`, and a method whose
signature differs per target framework repeats it in an `#else` branch; the parse of
such a file is mostly errors, and it was cut into line windows. `first_branches(source)`
blanks, byte for byte (so that every offset, row and column stays the file's), each
`#if`/`#elif`/`#else`/`#endif` line and the lines of every branch after the first, so
the grammar reads one consistent version of the file. `indexer.chunk.syntax` parses
that version only when the file's own parse has errors and this one has fewer. C and C++
do the same with `#ifdef WIN32 ... #else ... #endif` around a function's head or an
`if`'s braces: four of jq's C files (`main.c`, `util.c`, `jv_dtoa.c`, `jq_test.c`) parsed
over 30% errors, got no symbols and no code graph, and parse cleanly this way. A
directive continued with a trailing backslash is blanked with its continuation lines.

Pure.
"""

from __future__ import annotations

__all__ = ["PREPROCESSED", "first_branches"]

PREPROCESSED = frozenset({"csharp", "c", "cpp"})
"""The languages whose files may be read again through `first_branches`."""

_OPEN = (b"#if",)
_ELSE = (b"#elif", b"#else")
_CLOSE = (b"#endif",)


def first_branches(source: bytes) -> bytes:
    """`source` with its conditional directives and every non-first branch blanked (the same
    length); `source` itself when it has no `#if` line."""
    if b"#if" not in source:
        return source
    lines = source.split(b"\n")
    live: list[bool] = []  # per open `#if`: is the branch being read the first one?
    changed = False
    continued = False  # the line before was a directive ending with a backslash
    for i, line in enumerate(lines):
        body = line.lstrip(b" \t")
        directive = body.startswith(b"#")
        if directive:  # `#  ifdef X` is `#ifdef X`
            body = b"#" + body[1:].lstrip(b" \t")
        if continued:
            continued = line.rstrip(b"\r").endswith(b"\\")
            lines[i] = b" " * len(line.rstrip(b"\r")) + (b"\r" if line.endswith(b"\r") else b"")
            continue
        if directive and body.startswith(_OPEN + _ELSE + _CLOSE):
            continued = line.rstrip(b"\r").endswith(b"\\")
        if directive and body.startswith(_OPEN):
            live.append(True)
        elif directive and body.startswith(_ELSE) and live:
            live[-1] = False
        elif directive and body.startswith(_CLOSE) and live:
            live.pop()
        elif all(live):
            continue
        lines[i] = b" " * len(line.rstrip(b"\r")) + (b"\r" if line.endswith(b"\r") else b"")
        changed = True
    return b"\n".join(lines) if changed else source
