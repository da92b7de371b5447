"""The search results as HTML: hits grouped by file, each with its enclosing symbol, its
lines coloured with a little context and the matches marked, its "also in" copies and why
it ranked; the page's notes (freshness, embedding coverage) above them."""

from __future__ import annotations

from collections.abc import Sequence

from ctxd.search.models import Hit
from ctxd.server.pages import SearchPage
from ctxd.server.ui.highlight import highlight_snippet, marks, query_words, word_ranges
from ctxd.server.ui.html import code_block, e, file_url, search_url

MAX_HIT_LINES = 12
"""Lines shown of a checkpoint hit (the rest are a click away, in the file view)."""

MAX_BLOCKS = 4
"""Context blocks shown of a lexical hit (a file matching on hundreds of lines says how
many more it has; the file view shows them all)."""


def hit_lines(hit: Hit, words: Sequence[str]) -> list[tuple[int, list[str]]]:
    """A hit's runs of lines: (first line number, coloured lines with marks)."""
    runs: list[tuple[int, list[str]]] = []
    if hit.blocks or hit.matches:
        by_line = {m.line: [(a - 1, b - 1) for a, b in m.ranges] for m in hit.matches}
        spans = ([(b.start_line, list(b.lines)) for b in hit.blocks[:MAX_BLOCKS]]
                 if hit.blocks else [(hit.start_line, hit.snippet.split("\n"))])
        for start, lines in spans:
            coloured = highlight_snippet("\n".join(lines), hit.language, hit.path)
            runs.append((start, [marks(h, by_line.get(start + i, []))
                                 for i, h in enumerate(coloured)]))
        return runs
    lines = hit.snippet.split("\n")
    best = _best_window(lines, words)
    shown = lines[best:best + MAX_HIT_LINES]
    coloured = highlight_snippet("\n".join(shown), hit.language, hit.path)
    runs.append((hit.start_line + best,
                 [marks(h, word_ranges(plain, words)) for h, plain in zip(coloured, shown,
                                                                         strict=False)]))
    return runs


def _best_window(lines: Sequence[str], words: Sequence[str]) -> int:
    """Where the window of `MAX_HIT_LINES` lines holding the most query words starts."""
    if len(lines) <= MAX_HIT_LINES or not words:
        return 0
    counts = [sum(w in line.lower() for w in words) for line in lines]
    best, best_sum = 0, sum(counts[:MAX_HIT_LINES])
    running = best_sum
    for i in range(1, len(lines) - MAX_HIT_LINES + 1):
        running += counts[i + MAX_HIT_LINES - 1] - counts[i - 1]
        if running > best_sum:
            best, best_sum = i, running
    return max(0, best - 1) if best else 0


def why(hit: Hit) -> str:
    """Why a hit ranked: the legs that found it and its fused score."""
    legs = " + ".join(str(s) for s in hit.sources) or "?"
    return f"{legs}, score {hit.score:.4g}"


def hits_html(page: SearchPage, *, first_index: int = 0) -> str:
    """The hits of one page, grouped by file (a file's hits keep their best rank)."""
    words = query_words(page.query)
    groups: dict[tuple[str, str], list[Hit]] = {}
    for hit in page.results:
        groups.setdefault((hit.repository, hit.path), []).append(hit)
    out: list[str] = []
    for n, ((repo, path), hits) in enumerate(groups.items(), start=first_index):
        top = hits[0]
        symbols = sorted({h.symbol for h in hits if h.symbol})
        sym = (' <span class="sym">' + ", ".join(e(s) for s in symbols) + "</span>"
               if symbols else "")
        href = file_url(repo, path, top.start_line, top.end_line)
        out.append(
            f'<li class="file" data-rank="{n}"><h3 class="file-head">'
            f'<a class="hit-link" href="{e(href)}"><span class="repo">{e(repo)}</span>/'
            f'<span class="path">{e(path)}</span></a>{sym}'
            f' <span class="lang">{e(top.language)}</span></h3>')
        out.extend(_hit_html(hit, words) for hit in hits)
        out.append("</li>")
    return "".join(out)


def _hit_html(hit: Hit, words: Sequence[str]) -> str:
    span = (f"lines {hit.start_line}-{hit.end_line}" if hit.end_line != hit.start_line
            else f"line {hit.start_line}")
    meta = [f'<a href="{e(file_url(hit.repository, hit.path, hit.start_line, hit.end_line))}"'
            f' tabindex="-1">{span}</a>']
    if hit.symbol:
        meta.append(f'in <span class="sym">{e(hit.symbol)}</span>')
    meta.append(f'<span class="why" title="the legs that found it and its score">'
                f'{e(why(hit))}</span>')
    if hit.also_in:
        copies = ", ".join(
            f'<a tabindex="-1" href="{e(file_url(c.repository, c.path, c.start_line))}">'
            f"{e(c.repository)}/{e(c.path)}:{c.start_line}</a>" for c in hit.also_in[:5])
        more = f" and {len(hit.also_in) - 5} more" if len(hit.also_in) > 5 else ""
        meta.append(f'<span class="also">also in {copies}{more}</span>')
    blocks = "".join(code_block(lines, start, anchors=False, repo=hit.repository,
                                path=hit.path) for start, lines in hit_lines(hit, words))
    if len(hit.blocks) > MAX_BLOCKS:
        rest = len(hit.blocks) - MAX_BLOCKS
        blocks += (f'<p class="meta more-blocks">{rest} more matching '
                   f'{"block" if rest == 1 else "blocks"} in this file</p>')
    return f'<div class="hit"><p class="meta">{" · ".join(meta)}</p>{blocks}</div>'


def notes_html(notes: Sequence[str]) -> str:
    if not notes:
        return ""
    return ('<ul class="notes" aria-label="Notes">'
            + "".join(f"<li>{e(n)}</li>" for n in notes) + "</ul>")


def more_link(page: SearchPage, params: dict[str, str]) -> str:
    """The "more results" link (the next page by cursor); empty on the last page."""
    if not page.next_cursor:
        return ""
    href = search_url(**params, cursor=page.next_cursor)
    return (f'<p class="more-row"><a id="more" class="button" href="{e(href)}" '
            f'data-cursor="{e(page.next_cursor)}">More results</a></p>')


def results_html(page: SearchPage, params: dict[str, str], took_ms: float) -> str:
    """The results section of the search page (also what `/api/search` returns)."""
    files = len({(h.repository, h.path) for h in page.results})
    if not page.results:
        summary = f"No results for <q>{e(page.query)}</q>."
    else:
        summary = (f"{len(page.results)} results in {files} files "
                   f"<span class=\"took\">({took_ms:.0f} ms)</span>")
    explain = (
        f'<details class="explain" data-q="{e(page.query)}" data-mode="{e(page.mode)}">'
        '<summary>How this query ran (explain)</summary>'
        '<pre class="explain-text">Loading…</pre></details>')
    return (f'<p class="summary" role="status">{summary}</p>{notes_html(page.notes)}'
            f'{explain}<ol class="files" id="hits">{hits_html(page)}</ol>'
            f'{more_link(page, params)}')
