"""Markdown (and matching structured data) for the MCP tools that report server state.

`render_repos` (`list_repos`: the enriched repository list), `render_health`
(`get_health`), `render_index` (`index_repository`: what the run did) and `render_jobs`
(`index_status`: background jobs and index freshness) each return a `Rendered` whose
data is the tool's `*Output` in `server/mcp/schemas.py`. `index_out` and `job_out` build
those records from `IndexStats` and job fields; `error_text` is the text of a failed
tool call (`{code}: {message}`, hint, details) and `format_duration` the Go-style
durations of the original contract (`"5m0s"`).

Pure: no I/O, no service calls; every page stays within
its token budget (`server/mcp/budget.py`), clipped at a line boundary when it would not.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ctxd.indexer.errors import CtxdError
from ctxd.indexer.models import IndexStats, now_rfc3339
from ctxd.server.index_report import (
    masked_line,
    named_sample,
    not_embedded_line,
    sensitive_line,
    stopped_text,
)
from ctxd.server.mcp.budget import MIN_BUDGET, assemble, clip, fit, freshness_line, truncated_note
from ctxd.server.mcp.schemas import (
    BranchOut,
    ErrorOut,
    FailureOut,
    Freshness,
    IndexJobOutput,
    IndexOutput,
    IndexStatusOutput,
    JobOut,
    LargeFileOut,
    RemovedOut,
    Rendered,
    RepoOptionsOut,
    RepoOut,
    ReposOutput,
    SkippedOut,
    WindowedFileOut,
)

# -- errors -------------------------------------------------------------------------------


def error_text(err: CtxdError) -> str:
    """The text of a tool error: code, message, hint, details (one line each)."""
    lines = [f"{err.code}: {err.message}"]
    if err.hint:
        lines.append(f"Hint: {err.hint}")
    if err.details:
        lines.append("Details: " + json.dumps(err.details, default=str, ensure_ascii=False))
    return "\n".join(lines)


def error_out(err: CtxdError) -> ErrorOut:
    return ErrorOut(error=err.code, message=err.message, hint=err.hint, details=err.details)


# -- list_repos ------------------------------------------------------------------------------


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def _repo_out(r: dict[str, Any]) -> RepoOut:
    coverage = r.get("coverage")
    out = RepoOut(
        name=str(r["name"]), root=r.get("root"), source=str(r.get("source", "local")),
        files=int(r.get("files") or 0), bytes=int(r.get("bytes") or 0),
        branches=[BranchOut(name=str(b.get("name", "")), sha=str(b.get("sha", "")))
                  for b in r.get("branches") or []],
        symbols=bool(r.get("symbols")), indexed_at=_str_or_none(r.get("indexed_at")),
        indexing=bool(r.get("indexing")),
        coverage=float(coverage) if coverage is not None else None,
        options=_options_out(r.get("options")),
    )
    if r.get("root_moved"):
        out["root_moved"] = str(r["root_moved"])
    return out


def _options_out(o: Any) -> RepoOptionsOut | None:
    if not isinstance(o, dict):
        return None
    return RepoOptionsOut(
        include_patterns=[str(p) for p in o.get("include_patterns") or []],
        exclude_patterns=[str(p) for p in o.get("exclude_patterns") or []],
        max_file_size=int(o.get("max_file_size") or 0),
        explicit=[str(k) for k in o.get("explicit") or []])


def _options_line(o: RepoOptionsOut | None) -> str:
    """`   Options: include *.py; exclude gen/**; max_file_size 1.0 MB (given: ...)`."""
    if o is None:
        return ""
    size = human_bytes(o["max_file_size"]) if o["max_file_size"] else "no limit"
    given = f" (given: {', '.join(o['explicit'])})" if o["explicit"] else ""
    return (f"\n   Options: include {', '.join(o['include_patterns']) or 'all'}; exclude "
            f"{', '.join(o['exclude_patterns']) or 'none'}; max_file_size {size}{given}")


def _str_or_none(v: object) -> str | None:
    return None if v is None else str(v)


def _repo_item(i: int, r: RepoOut) -> str:
    first = f"{i}. **{r['name']}** ({r['files']:,} files, {human_bytes(r['bytes'])})"
    branches = ", ".join(f"{b['name']}@{b['sha'][:7]}" if b["sha"] else b["name"]
                         for b in r["branches"])
    if r["source"] == "local":  # indexed from disk: the files are the working tree's
        branches = f"{branches} (working tree)" if branches else "working tree (not git)"
    branches = branches or "HEAD"
    indexed = (r["indexed_at"] or "never")[:10] if r["indexed_at"] else "never"
    state = " | re-indexing now" if r["indexing"] else ""
    cov = (f" | Embedded: {r['coverage'] * 100:.0f}%"
           if r["coverage"] is not None and r["coverage"] < 1 else "")
    where = f"\n   Root: {r['root']}" if r["root"] else ""
    return (f"{first}\n   Branches: {branches}\n   Symbols: {'✅' if r['symbols'] else '❌'} | "
            f"Indexed: {indexed}{state}{cov} | Source: {r['source']}{where}"
            f"{_options_line(r['options'])}"
            + (f"\n   ⚠️ Root moved: {r['root_moved']}; not read, watched or re-indexed"
               if r.get("root_moved") else ""))


def render_repos(listing: dict[str, Any], *, name_filter: str | None, budget: int) -> Rendered:
    """`list_repos`: the enriched repository list of zoekt-list-api-research.md."""
    repos = [_repo_out(r) for r in listing.get("repositories", [])]
    total_files = int(listing.get("total_files") or sum(r["files"] for r in repos))
    total_bytes = int(listing.get("total_bytes") or sum(r["bytes"] for r in repos))
    matching = f" matching '{name_filter}'" if name_filter else ""
    if not repos:
        text = ("## Indexed Repositories\n\n" + (f"No repositories match '{name_filter}'."
                if name_filter else "No repositories are currently indexed.")
                + "\n\nUse `index_repository` with a folder path to index one.")
        data = ReposOutput(filter=name_filter, repositories=[], total=0, total_files=0,
                           total_bytes=0, truncated=False)
        return Rendered(text, dict(data))
    some = f"{len(repos)} {'repository' if len(repos) == 1 else 'repositories'}"
    head = f"## Indexed Repositories\n\nFound {some}{matching}:"
    items = [_repo_item(i, r) for i, r in enumerate(repos, start=1)]

    def tail(n: int) -> str:
        note = (truncated_note(n, len(repos), "repositories", "Narrow the list with `filter`.")
                + "\n" if n < len(repos) else "")
        return (f"{note}Total: {some}, {total_files:,} file{'' if total_files == 1 else 's'}, "
                f"{human_bytes(total_bytes)}")

    shown = max(fit(head, items, tail, budget), 1)
    data = ReposOutput(filter=name_filter, repositories=repos[:shown], total=len(repos),
                       total_files=total_files, total_bytes=total_bytes,
                       truncated=shown < len(repos))
    return Rendered(assemble(head, items[:shown], tail(shown)), dict(data))


# -- get_health ------------------------------------------------------------------------------


def _health_value(key: str, v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if v is None:
        return "-"
    if isinstance(v, int | float) and key.endswith(("_since", "_at")):
        # an epoch time: shown like every other time
        return now_rfc3339(float(v), timespec="milliseconds")
    if isinstance(v, dict | list):
        return json.dumps(v, default=str, ensure_ascii=False)
    return str(v)


def _is_record(v: Any) -> bool:
    return isinstance(v, dict) or (isinstance(v, list) and bool(v)
                                   and all(isinstance(x, dict) for x in v))


def _health_lines(key: str, value: Any, depth: int) -> list[str]:
    """`- key: a: 1, b: 2` with nested records (a dict of dicts, a list of dicts) as
    indented sub-items, so no section is printed as raw JSON."""
    pad = "  " * depth
    if isinstance(value, list) and _is_record(value):
        lines = [f"{pad}- {key}:"]
        for item in value:
            lines.extend(_health_lines("", item, depth + 1))
        return lines
    if not isinstance(value, dict):
        return [f"{pad}- {key}: {_health_value(key, value)}"]
    if not value:
        return [f"{pad}- {key}: none" if key else f"{pad}- none"]
    flat = ", ".join(f"{k}: {_health_value(k, v)}" for k, v in value.items()
                     if not _is_record(v))
    head = f"{key}: {flat}" if key and flat else (f"{key}:" if key else flat)
    lines = [f"{pad}- {head}"]
    for k, v in value.items():
        if _is_record(v):
            if isinstance(v, dict) and v and all(isinstance(x, dict) for x in v.values()):
                lines.append(f"{pad}  - {k}:")
                for name, sub in v.items():
                    lines.extend(_health_lines(str(name), sub, depth + 2))
            else:
                lines.extend(_health_lines(k, v, depth + 1))
    return lines


def render_health(health: dict[str, Any], *, budget: int) -> Rendered:
    """`get_health`: the service's health report, one `- key: value` line per field, nested
    records (repositories, the watcher and its repositories) as indented items, epoch
    times as RFC 3339."""
    lines = ["## ctxd health", ""]
    for key, value in health.items():
        lines.extend(_health_lines(key, value, 0))
    return Rendered(clip("\n".join(lines), max(budget, MIN_BUDGET)), dict(health))


# -- index_repository / index_status ---------------------------------------------------------


def index_out(stats: IndexStats, job_id: str | None) -> IndexOutput:
    return IndexOutput(
        path=stats.path, files_indexed=stats.files_indexed,
        include_patterns=list(stats.include_patterns),
        exclude_patterns=list(stats.exclude_patterns), max_file_size=stats.max_file_size,
        indexed_at=stats.indexed_at, repository=stats.repository,
        files_updated=stats.files_updated, files_unchanged=stats.files_unchanged,
        files_removed=stats.files_removed, removed_reasons=dict(stats.removed_reasons),
        removed=[RemovedOut(file=r.file, reason=r.reason) for r in stats.removed_files],
        files_skipped=dict(stats.files_skipped),
        skipped=[SkippedOut(file=s.path, reason=s.reason, detail=s.detail)
                 for s in stats.skipped_files],
        sensitive_files=list(stats.sensitive_files),
        files_masked=stats.files_masked, masked_files=list(stats.masked_files),
        not_embedded=dict(stats.not_embedded),
        not_embedded_files=[SkippedOut(file=s.path, reason=s.role, detail=s.detail)
                            for s in stats.not_embedded_files],
        large_files=[LargeFileOut(file=f.path, checkpoints=f.checkpoints)
                     for f in stats.large_files],
        windowed_files=[WindowedFileOut(file=f.path, reason=f.reason)
                        for f in stats.windowed_files],
        files_failed=len(stats.files_failed),
        errors=[FailureOut(file=f.file, error=f.error) for f in stats.files_failed[:50]],
        checkpoints=stats.checkpoints, chunks_embedded=stats.chunks_embedded,
        duration_ms=stats.duration_ms, job_id=job_id, stopped=stats.stopped,
    )


REMOVED_WHY = {
    "deleted": "deleted from disk",
    "not_included": "not matched by include_patterns",
    "excluded": "matched exclude_patterns",
    "ignored": "ignored (.gitignore/.ctxdignore or a pruned directory)",
    "too_large": "larger than max_file_size",
    "sensitive": "likely secret",
    "binary": "binary",
    "not_walked": "under a directory the walk no longer enters",
}
"""How the `index_repository` answer words each reason a file left the index."""


def _index_lines(o: IndexOutput) -> list[str]:
    skipped = sum(o["files_skipped"].values())
    reasons = ", ".join(f"{k} {v}" for k, v in o["files_skipped"].items())
    lines = [
        f"Path: {o['path']}",
        f"Files: {o['files_indexed']} indexed ({o['files_updated']} new or changed, "
        f"{o['files_unchanged']} unchanged, {o['files_removed']} removed)",
        f"Skipped: {skipped}" + (f" ({reasons})" if reasons else ""),
        f"Checkpoints: {o['checkpoints']} ({o['chunks_embedded']} embedded in this run)",
        f"Patterns: include {o['include_patterns'] or 'all files'}; exclude "
        f"{o['exclude_patterns'] or 'none'}; max_file_size {o['max_file_size']} bytes",
        f"Indexed at {o['indexed_at']} in {o['duration_ms'] / 1000:.1f}s"
        + (f" (job `{o['job_id']}`)" if o["job_id"] else ""),
    ]
    if o["skipped"]:
        lines.append("Skipped files: " + named_sample(
            [f"{s['file']} ({s['reason']})" for s in o["skipped"]], skipped))
    if o["sensitive_files"]:
        lines.append(sensitive_line(o["files_skipped"].get("sensitive", 0),
                                    o["sensitive_files"]))
    if o["masked_files"]:
        lines.append(masked_line(o["files_masked"], o["masked_files"]))
    if o["not_embedded"]:
        lines.append(not_embedded_line(o["not_embedded"], [s["file"]
                                                           for s in o["not_embedded_files"]]))
    lines.extend(f"Large: {f['file']} yielded {f['checkpoints']} checkpoints"
                 for f in o["large_files"])
    lines.extend(f"Line windows: {f['file']}: {f['reason']}" for f in o["windowed_files"])
    if o["files_removed"]:
        why = ", ".join(f"{REMOVED_WHY.get(k, k)} {v}" for k, v in o["removed_reasons"].items())
        lines.append(f"Removed from the index: {o['files_removed']} files ({why})")
        lines.extend(f"  - {r['file']}: {REMOVED_WHY.get(r['reason'], r['reason'])}"
                     for r in o["removed"][:10])
        if o["files_removed"] > 10:
            lines.append(f"  - … and {o['files_removed'] - 10} more (see structured content)")
    if o["files_failed"]:
        lines.append(f"Failed: {o['files_failed']}")
        lines.extend(f"  - {e['file']}: {e['error']}" for e in o["errors"][:10])
        if o["files_failed"] > 10:
            lines.append(f"  - … and {o['files_failed'] - 10} more (see structured content)")
    return lines


def render_index(stats: IndexStats, job_id: str | None, *, budget: int) -> Rendered:
    """`index_repository`: what the run did."""
    o = index_out(stats, job_id)
    if stats.stopped:
        again = f"`index_repository` with path `{stats.path}`"
        text = "\n".join([f"## Stopped indexing `{o['repository']}` before the end", "",
                          stopped_text(stats, again), "", *_index_lines(o)])
    else:
        text = "\n".join([f"## Indexed `{o['repository']}`", "", *_index_lines(o)])
    return Rendered(clip(text, budget), dict(o))


def render_index_job(
    *, path: str, job_id: str, state: str, phase: str, progress: int, total: int | None,
    started_at: str, after: str | None, waited: str, budget: int,
) -> Rendered:
    """`index_repository` for a run that goes on in the background: not an error, the
    job with one progress figure and how to follow it."""
    percent = round(100 * progress / total, 1) if total else None
    follow = f'index_status with job_id "{job_id}"'
    figure = f"{progress} of {total} work items ({percent}%)" if total else (
        f"{progress} files walked so far")
    where = f"queued after job `{after}` (same path, other arguments)" if after else (
        f"{state}, phase {phase}: {figure}")
    text = "\n".join([
        f"## Indexing `{path}` continues in the background as job `{job_id}`", "",
        f"Still going after {waited}: {where}; started {started_at}.",
        f'Follow it with `index_status` and `job_id: "{job_id}"` (`wait_seconds` waits for '
        "the result). Searches work meanwhile: lexical and symbol search see files as they "
        "are written, semantic search as embeddings land.",
    ])
    data = IndexJobOutput(path=path, job_id=job_id, state=state, phase=phase,
                          progress=progress, total=total, percent=percent,
                          started_at=started_at, follow=follow)
    if after:
        data["after"] = after
    return Rendered(clip(text, budget), dict(data))


def format_duration(seconds: float) -> str:
    """Go-style durations, as the original contract's `"timeout": "5m0s"`."""
    s = round(seconds)
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    if h:
        return f"{h}h{m}m{sec}s"
    if m:
        return f"{m}m{sec}s"
    return f"{sec}s"


def job_out(
    *, job_id: str, path: str, state: str, phase: str, progress: int, total: int | None,
    message: str, started_at: str, finished_at: str | None, stats: IndexStats | None,
    error: CtxdError | None,
) -> JobOut:
    return JobOut(
        job_id=job_id, path=path, state=state, phase=phase, progress=progress, total=total,
        message=message, started_at=started_at, finished_at=finished_at,
        result=index_out(stats, job_id) if stats is not None else None,
        error=error_out(error) if error is not None else None,
    )


def _job_line(j: JobOut) -> str:
    head = f"- `{j['job_id']}` {j['state']} — {j['path']}"
    if j["state"] == "succeeded" and j["result"]:
        r = j["result"]
        return (f"{head}: {r['files_indexed']} files, {r['checkpoints']} checkpoints in "
                f"{r['duration_ms'] / 1000:.1f}s (finished {j['finished_at']})")
    if j["state"] == "failed" and j["error"]:
        return f"{head}: {j['error']['error']}: {j['error']['message']}"
    total = f"/{j['total']}" if j["total"] is not None else ""
    return f"{head}: {j['message']} (progress {j['progress']}{total}; started {j['started_at']})"


def render_jobs(
    jobs: Sequence[JobOut], *, fresh: Sequence[Freshness], budget: int, single: bool
) -> Rendered:
    """`index_status`: one job in detail (with its result), or every job in one line each."""
    if single and jobs:
        j = jobs[0]
        lines = [f"## Index job `{j['job_id']}`: {j['state']}", "", f"Path: {j['path']}"]
        if j["result"] is not None:
            lines.extend(_index_lines(j["result"])[1:])
        elif j["error"] is not None:
            e = j["error"]
            lines.append(f"Error: {e['error']}: {e['message']}")
            if e["hint"]:
                lines.append(f"Hint: {e['hint']}")
        else:
            total = f" of {j['total']}" if j["total"] is not None else ""
            lines.append(f"Phase: {j['phase']} — {j['message']} (progress {j['progress']}"
                         f"{total}); started {j['started_at']}")
            lines.append("Searches work meanwhile: lexical and symbol search see files as "
                         "they are written, semantic search as embeddings land. Call "
                         f"`index_status` with `job_id: \"{j['job_id']}\"` again (set "
                         "`wait_seconds` to wait for it).")
    else:
        lines = ["## Index jobs", ""]
        lines.extend(_job_line(j) for j in jobs)
        if not jobs:
            lines.append("No index jobs have run in this server session.")
    lines.extend(["", freshness_line(fresh)])
    data = IndexStatusOutput(jobs=list(jobs), freshness=list(fresh))
    return Rendered(clip("\n".join(lines), budget), dict(data))
