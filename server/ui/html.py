"""The page's HTML building blocks: escaping, addresses, the layout around every page.

Every text that comes from a file, a path, a repository, a branch, a query or an error
goes through `e()` (HTML-escaped, quotes too) and every address part through `url_part`;
nothing here writes inline script or style (the CSP forbids both).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from html import escape
from urllib.parse import quote, urlencode

from ctxd.server.pages import MODES


def e(value: object) -> str:
    """`value` as text safe in HTML content and in quoted attributes."""
    return escape(str(value), quote=True)


def url_part(value: str) -> str:
    """A path segment (or several: `/` kept) of an address, percent-encoded."""
    return quote(value, safe="/")


def file_url(repo: str, path: str, first: int | None = None, last: int | None = None,
             **query: str) -> str:
    """The file view's address: `/file/REPO/PATH` (+ `?query`) (+ `#L10-L20`)."""
    out = f"/file/{quote(repo, safe='')}/{url_part(path)}"
    if query:
        out += "?" + urlencode({k: v for k, v in query.items() if v})
    if first is not None:
        out += f"#L{first}" + (f"-L{last}" if last is not None and last != first else "")
    return out


def search_url(**params: str | None) -> str:
    return "/?" + urlencode({k: v for k, v in params.items() if v})


def layout(title: str, body: str, *, csrf: str, active: str = "", query: str = "") -> str:
    """A whole page: the head (the static stylesheet and script only), the top bar, `body`."""
    current = ' aria-current="page"'
    nav = "".join(
        f'<a href="{href}"{current if name == active else ""}>{label}</a>'
        for name, href, label in (("search", "/", "Search"), ("repos", "/repos",
                                                                "Repositories")))
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="color-scheme" content="light dark"><title>{e(title)} · ctxd</title>'
        '<link rel="stylesheet" href="/static/ui.css">'
        '<script src="/static/ui.js" defer></script></head>'
        f'<body data-csrf="{e(csrf)}">'
        '<a class="skip" href="#main">Skip to content</a>'
        f'<header class="top"><a class="brand" href="/">ctxd</a><nav aria-label="Pages">{nav}'
        '</nav><span class="keys" aria-hidden="true"><kbd>/</kbd> search '
        '<kbd>j</kbd>/<kbd>k</kbd> move <kbd>Enter</kbd> open</span></header>'
        f'<main id="main">{body}</main></body></html>'
    )


def options(values: Iterable[tuple[str, str]], selected: str) -> str:
    return "".join(
        f'<option value="{e(v)}"{" selected" if v == selected else ""}>{e(label)}</option>'
        for v, label in values)


def search_form(q: str, mode: str, repo: str, path: str, lang: str, repos: list[str],
                *, autofocus: bool = True) -> str:
    """The search box and its filters (`GET /`: the address holds the query)."""
    focus = " autofocus" if autofocus else ""
    return (
        '<form class="search" role="search" action="/" method="get">'
        '<div class="box"><label for="q" class="sr-only">Search code</label>'
        f'<input type="search" id="q" name="q" value="{e(q)}"{focus} autocomplete="off" '
        'spellcheck="false" placeholder="Search code: a question, words, or Zoekt syntax">'
        '<button type="submit">Search</button></div>'
        '<div class="filters">'
        f'<label>Mode <select name="mode">{options(((m, m) for m in MODES), mode)}</select>'
        '</label>'
        '<label>Repository <select name="repo">'
        f'{options([("", "all"), *((r, r) for r in repos)], repo)}</select></label>'
        f'<label>Path <input name="path" value="{e(path)}" placeholder="glob, e.g. src/**" '
        'size="16"></label>'
        f'<label>Language <input name="lang" value="{e(lang)}" placeholder="python" '
        'size="10"></label>'
        '</div></form>'
    )


CHUNK_LINES = 200
"""The file view's lines come in blocks of this many, each `content-visibility: auto`:
the browser lays out and paints only the blocks on screen."""


def code_block(lines: list[str], first: int, *, anchors: bool, repo: str = "",
               path: str = "", cls: str = "code") -> str:
    """Numbered lines: with `anchors` each line is `id=L<n>` and its number links to it
    (the file view, in blocks of `CHUNK_LINES`); else each number links to that line of
    the file."""
    out = [f'<div class="{cls}">']
    if anchors:
        out.extend(file_chunks(lines, first))
    else:
        prefix = file_url(repo, path)
        out.extend(f'<div class="line"><a class="ln" tabindex="-1" href="{prefix}#L{n}">{n}'
                   f"</a>{html_line}</div>"
                   for n, html_line in enumerate(lines, start=first))
    out.append("</div>")
    return "".join(out)


def file_chunks(lines: Iterable[str], first: int = 1) -> Iterator[str]:
    """The file view's numbered lines (`id=L<n>`, the number a link to it), as blocks of
    `CHUNK_LINES`, each yielded as soon as its lines are there."""
    block: list[str] = []
    for n, html_line in enumerate(lines, start=first):
        block.append(html_line)
        if len(block) == CHUNK_LINES:
            yield '<div class="chunk">' + chunk_lines(block, n - CHUNK_LINES + 1) + "</div>"
            block = []
    if block:
        yield '<div class="chunk">' + chunk_lines(block, n - len(block) + 1) + "</div>"


def chunk_lines(lines: Iterable[str], first: int) -> str:
    """One block's numbered lines, `first` the number of its first (what the page's script
    puts in a block when the block's colouring comes after its plain text)."""
    return "".join(f'<div class="line" id="L{n}"><a class="ln" tabindex="-1" '
                   f'href="#L{n}">{n}</a>{html_line}</div>'
                   for n, html_line in enumerate(lines, start=first))


def error_box(message: str, hint: str | None = None) -> str:
    return (f'<div class="error" role="alert"><p>{e(message)}</p>'
            + (f"<p class=\"hint\">{e(hint)}</p>" if hint else "") + "</div>")
