"""`ctxd search --explain` in the default (hybrid) mode: after the plan, each hit of the
first page with its features' contributions to its score (`search.explain_rank`), so that
a surprising rank can be read (issue 42)."""

from __future__ import annotations

from typing import Any

from ctxd.indexer.errors import CtxdError
from ctxd.search.explain_rank import Contribution, explain_text


def explained(service: Any, query: str, mode: str, options: dict[str, Any]) -> str:
    """How the query runs (`Service.explain`), then, in hybrid mode, `explained_hits`."""
    plan = str(service.explain(query, mode))
    return plan if mode != "hybrid" else plan + "\n" + explained_hits(service, query, options)


def explained_hits(service: Any, query: str, options: dict[str, Any]) -> str:
    """The first page's hits, one line each with its score and contributions; a line
    saying why there are none when the search cannot run (no index yet, say)."""
    try:
        page = service.search(query, explain=True, **options)
    except CtxdError as exc:
        return f"hits: not run ({exc.message})"
    rows = page.stats.get("explain") or []
    lines = [f"hits ({len(page.results)}), each score's parts:"]
    for n, (hit, parts) in enumerate(zip(page.results, rows, strict=False), 1):
        contributions = [Contribution(str(p["feature"]), float(p["value"]), str(p["kind"]))
                         for p in parts]
        where = f"{hit.path}:{hit.start_line}-{hit.end_line}"
        lines.append(f"{n:>3}. {where}  score {hit.score:.3f} = {explain_text(contributions)}")
    return "\n".join(lines)
