"""Writing styled lines (`server/cli/hits_text.py`) with or without colour.

Colour follows ripgrep's `--color auto|always|never`: `auto` colours only when stdout is
a terminal and `NO_COLOR` is not set (https://no-color.org); `always` colours even into
a pipe; `never` never does. Colour goes through `rich` (imported only when colouring,
so `ctxd --help` and piped output do not pay for it); without colour the text is plain.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from ctxd.server.cli.hits_text import StyledLine

COLOR_CHOICES = ("auto", "always", "never")

STYLES = {
    "heading": "bold magenta",
    "path": "magenta",
    "line": "green",
    "match": "bold red",
    "context": "dim",
    "symbol": "cyan",
    "separator": "dim",
    "meta": "dim",
}
"""Style names of the layout -> rich styles (ripgrep's colours: magenta paths, green
line numbers, red matches)."""


def use_color(choice: str, stream: TextIO | None = None) -> bool:
    """Whether to colour, for `--color CHOICE` and the stream written to."""
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    stream = stream or sys.stdout
    return stream.isatty()


def write_lines(lines: Sequence[StyledLine], *, color: bool, clean: Callable[[str], str],
                stream: TextIO | None = None) -> None:
    """Write `lines` to `stream` (stdout), coloured or plain; `clean` makes each piece of
    text safe for a terminal (control characters shown as escapes)."""
    stream = stream or sys.stdout
    if not color:
        for line in lines:
            stream.write("".join(clean(text) for text, _style in line) + "\n")
        stream.flush()
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(file=stream, force_terminal=True, color_system="standard",
                      no_color=False, highlight=False, markup=False, emoji=False, soft_wrap=True)
    for line in lines:
        text = Text(no_wrap=True, end="\n")
        for piece, style in line:
            text.append(clean(piece), style=STYLES.get(style) or None)
        console.print(text, soft_wrap=True)
