"""The repositories page: each repository's root, files, checkpoints, embedding coverage,
freshness, watcher state and skipped files by reason (as the last whole index run counted
them, kept in the index; or as a check from this page just did); the index jobs this page
started, with live progress (`/api/progress`, server-sent events); forms to index a
folder, re-index or remove a repository, each confirmed on a second page before anything
changes."""

from __future__ import annotations

from typing import Any

from ctxd.server.jobs import JobSnapshot
from ctxd.server.ui.html import e


def csrf_field(csrf: str) -> str:
    return f'<input type="hidden" name="csrf" value="{e(csrf)}">'


def action_form(action: str, label: str, csrf: str, **fields: str) -> str:
    hidden = "".join(f'<input type="hidden" name="{e(k)}" value="{e(v)}">'
                     for k, v in fields.items())
    return (f'<form class="inline" method="post" action="{e(action)}">{csrf_field(csrf)}'
            f'{hidden}<button type="submit">{e(label)}</button></form>')


def watch_text(ws: dict[str, Any] | None) -> str:
    if not ws:
        return "not watched"
    lag = "-" if ws.get("lag_ms") is None else f"{ws['lag_ms']} ms"
    state = f"watching ({ws.get('mode', '?')})" if ws.get("watching") else "not watching"
    return (f"{state}, {ws.get('pending', 0)} pending, updated "
            f"{ws.get('last_update') or 'never'}, lag {lag}")


def skipped_html(counts: dict[str, int] | None, stored: dict[str, Any] | None = None) -> str:
    """Skipped files by reason: from a check made on this page (`counts`), else as the
    repository's last whole index run counted them (`stored`, kept in the index)."""
    when = ' <span class="muted">(a check from this page)</span>'
    if counts is None and stored is not None:
        counts = stored.get("counts")
        when = (f' <span class="muted">(at the run of {e(stored.get("at") or "?")})</span>')
    elif counts is None:
        return ('<span class="muted">not counted yet: no whole run since ctxd kept them '
                "(re-index, or check below)</span>")
    if not counts:
        return "none" + when
    return ", ".join(f"{e(reason)} {n:,}" for reason, n in sorted(
        counts.items(), key=lambda kv: (-kv[1], kv[0]))) + when


def repo_card(r: dict[str, Any], fresh: dict[str, Any], skipped: dict[str, int] | None,
              csrf: str) -> str:
    name = str(r["name"])
    coverage = r.get("coverage")
    cov = "-" if coverage is None else f"{coverage * 100:.1f}%"
    state = "re-indexing now" if r.get("indexing") else f"indexed {r.get('indexed_at') or 'never'}"
    backlog = fresh.get("embedding_backlog")
    moved = r.get("root_moved")
    rows = [
        ("Root", f"<code>{e(r.get('root', ''))}</code>"),
        ("Files", f"{r.get('files', 0):,}"),
        ("Checkpoints", f"{r.get('checkpoints', 0):,} ({r.get('symbols', 0):,} symbols)"),
        ("Embedded", f'<meter min="0" max="1" value="{coverage or 0}" '
                     f'aria-label="embedding coverage of {e(name)}"></meter> {cov}'
                     + (f", {backlog} waiting" if backlog else "")),
        ("Freshness", e(state)),
        ("Watcher", e(watch_text(r.get("watch")))),
        ("Skipped files", skipped_html(skipped, r.get("skipped"))),
    ]
    if moved:
        rows.append(("Root moved", f'<span class="bad">{e(moved)}</span>'))
    table = "".join(f"<tr><th scope=\"row\">{k}</th><td>{v}</td></tr>" for k, v in rows)
    actions = (action_form("/repos/reindex", "Re-index", csrf, name=name)
               + action_form("/repos/skipped", "Check skipped files", csrf, name=name)
               + action_form("/repos/remove", "Remove", csrf, name=name))
    return (f'<section class="repo-card" id="repo-{e(name)}" aria-labelledby="h-{e(name)}">'
            f'<h2 id="h-{e(name)}">{e(name)}</h2><table class="facts">{table}</table>'
            f'<div class="actions">{actions}</div></section>')


def job_row(s: JobSnapshot) -> str:
    total = s.total or 0
    bar = (f'<progress max="{total}" value="{s.progress}" aria-label="progress of {e(s.path)}">'
           "</progress>" if total else '<progress aria-label="progress"></progress>')
    outcome = ""
    if s.error is not None:
        outcome = f' <span class="bad">{e(s.error.message)}</span>'
    elif s.stats is not None:
        outcome = (f" {s.stats.files_indexed} files, {s.stats.files_updated} updated, "
                   f"{sum(s.stats.files_skipped.values())} skipped")
    return (f'<li class="job" data-job="{e(s.job_id)}" data-state="{e(s.state)}">'
            f'<code>{e(s.path)}</code> <span class="job-state">{e(s.state)}</span> '
            f'<span class="job-phase">{e(s.phase)}</span> {bar} '
            f'<span class="job-count">{s.progress}{"/" + str(total) if total else ""}</span>'
            f'<span class="job-msg">{e(s.message)}{outcome}</span></li>')


def repos_body(status: dict[str, Any], freshness: list[dict[str, Any]],
               skipped: dict[str, dict[str, int]], jobs: list[JobSnapshot], csrf: str) -> str:
    fresh = {f["repository"]: f for f in freshness}
    cards = "".join(repo_card(r, fresh.get(r["name"], {}), skipped.get(r["name"]), csrf)
                    for r in status.get("repositories", []))
    if not cards:
        cards = '<p class="muted">Nothing is indexed yet: index a folder below.</p>'
    running = any(not j.finished for j in jobs)
    job_list = ("<section aria-labelledby=\"h-jobs\"><h2 id=\"h-jobs\">Index runs</h2>"
                f'<ul class="jobs" id="jobs" data-live="{"1" if running else "0"}">'
                + "".join(job_row(j) for j in jobs) + "</ul></section>") if jobs else ""
    t = status.get("totals", {})
    return (
        "<h1>Repositories</h1>"
        f'<p class="state">{t.get("repositories", 0)} repositories, '
        f'{t.get("files", 0):,} files, {t.get("checkpoints", 0):,} checkpoints · '
        f'model {e(status.get("model", ""))} · index <code>{e(status.get("database", ""))}'
        "</code></p>"
        f"{job_list}{cards}"
        '<section aria-labelledby="h-add"><h2 id="h-add">Index a folder</h2>'
        f'<form method="post" action="/repos/index" class="add">{csrf_field(csrf)}'
        '<label for="add-path">Folder</label> '
        '<input id="add-path" name="path" size="40" placeholder="/home/me/src/project" required>'
        ' <button type="submit">Index…</button></form></section>')


CONFIRM_TEXT = {
    "index": ("Index {target}?", "The folder is walked, chunked and embedded; this may take "
              "a while for a large folder.", "Index"),
    "reindex": ("Re-index {target}?", "Changed files are read again; unchanged ones are "
                "skipped.", "Re-index"),
    "remove": ("Remove {target} from the index?", "Its files, checkpoints and vectors leave "
               "the index (the folder on disk is not touched).", "Remove"),
}


def confirm_body(action: str, target: str, field: str, csrf: str) -> str:
    title, detail, button = CONFIRM_TEXT[action]
    return (f"<h1>{e(title.format(target=target))}</h1><p>{e(detail)}</p>"
            f'<form method="post" action="/repos/{e(action)}">{csrf_field(csrf)}'
            f'<input type="hidden" name="{e(field)}" value="{e(target)}">'
            '<input type="hidden" name="confirm" value="yes">'
            f'<button type="submit" class="danger">{e(button)}</button> '
            '<a href="/repos">Cancel</a></form>')
