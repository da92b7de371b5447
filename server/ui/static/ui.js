// ctxd ui: the page's one script (no build step, no library). Served from /static with a
// CSP that allows no inline script; everything it inserts is HTML the server escaped.
"use strict";
(function () {
  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));
  const typing = (el) => el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));

  // --- keyboard: "/" focuses the search box, j/k move through results, Enter opens
  let current = -1;
  function results() { return $$("#hits > li.file"); }
  function select(i) {
    const items = results();
    if (!items.length) return;
    current = Math.max(0, Math.min(items.length - 1, i));
    items.forEach((li, n) => li.classList.toggle("current", n === current));
    const link = $(".hit-link", items[current]);
    if (link) { link.focus({ preventScroll: true }); items[current].scrollIntoView({ block: "nearest" }); }
  }
  document.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (typing(document.activeElement)) {
      if (ev.key === "Escape") document.activeElement.blur();
      return;
    }
    const q = $("#q");
    if (ev.key === "/" && q) { ev.preventDefault(); q.focus(); q.select(); }
    else if (ev.key === "j") { select(current + 1); }
    else if (ev.key === "k") { select(current - 1); }
  });

  // --- search without a page load: the address still holds the query (shareable)
  const form = $("form.search");
  const box = $("#results");
  let seq = 0;
  async function search(params, push) {
    const mine = ++seq;
    const res = await fetch("/api/search?" + params.toString(), { credentials: "same-origin" });
    const data = await res.json();
    if (mine !== seq) return;  // a newer search is on its way
    box.innerHTML = data.results;
    current = -1;
    if (push) history.pushState({}, "", "/?" + params.toString());
    document.title = (params.get("q") || "Search") + " · ctxd";
    wireResults();
  }
  function formParams() {
    const p = new URLSearchParams(new FormData(form));
    for (const [k, v] of Array.from(p.entries())) if (!v) p.delete(k);
    return p;
  }
  if (form && box) {
    let timer = null;
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      clearTimeout(timer);
      if (!$("#q").value.trim()) return;
      search(formParams(), true).catch(() => form.submit());
    });
    $("#q").addEventListener("input", () => {  // search as you type: lexical mode only
      if (form.elements.mode.value !== "lexical") return;
      clearTimeout(timer);
      timer = setTimeout(() => { if ($("#q").value.trim()) search(formParams(), false).catch(() => {}); }, 200);
    });
    window.addEventListener("popstate", () => { location.reload(); });
  }
  function wireResults() {
    const more = $("#more");
    if (more) more.addEventListener("click", async (ev) => {
      ev.preventDefault();
      const url = new URL(more.href);
      url.pathname = "/api/search";
      url.searchParams.set("first", String(results().length));
      url.searchParams.set("part", "items");
      const data = await (await fetch(url, { credentials: "same-origin" })).json();
      $("#hits").insertAdjacentHTML("beforeend", data.items);
      more.parentElement.outerHTML = data.more || "";
      wireResults();
    }, { once: true });
    const explain = $("details.explain");
    if (explain) explain.addEventListener("toggle", async () => {
      if (!explain.open || explain.dataset.loaded) return;
      explain.dataset.loaded = "1";
      const p = new URLSearchParams({ q: explain.dataset.q, mode: explain.dataset.mode });
      const data = await (await fetch("/api/explain?" + p, { credentials: "same-origin" })).json();
      $(".explain-text", explain).textContent = data.text;
    });
  }
  wireResults();

  // --- file view: #L10-L20 selects lines; shift-click a number extends; names link to definitions
  const source = $(".source");
  function selectLines(scroll) {
    const m = /^#L(\d+)(?:-L(\d+))?$/.exec(location.hash);
    $$(".code .line.sel").forEach((el) => el.classList.remove("sel"));
    if (!m) return;
    const a = +m[1], b = m[2] ? +m[2] : a;
    for (let n = Math.min(a, b); n <= Math.max(a, b); n++) {
      const el = document.getElementById("L" + n);
      if (el) el.classList.add("sel");
    }
    const first = document.getElementById("L" + Math.min(a, b));
    if (first && scroll !== false) first.scrollIntoView({ block: "center" });
  }
  // a long file's first view: its lines after the first block came plain; its outline
  // and their colours follow, one part per JSON line, each put in place as it comes
  async function colourIn(code) {
    const res = await fetch("/api/colour/" + encodeURIComponent(code.dataset.colour) +
                            "?from=" + encodeURIComponent(code.dataset.from || "1"),
                            { credentials: "same-origin" });
    if (!res.ok || !res.body) return;
    const blocks = $$(":scope > .chunk", code);
    const reader = res.body.getReader();
    const text = new TextDecoder();
    let buffered = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += text.decode(value, { stream: true });
      let end;
      while ((end = buffered.indexOf("\n")) >= 0) {
        const msg = JSON.parse(buffered.slice(0, end));
        buffered = buffered.slice(end + 1);
        const wait = $(".outline-wait");
        if (msg.outline !== undefined) { if (wait) wait.outerHTML = msg.outline; }
        else if (blocks[msg.block]) blocks[msg.block].innerHTML = msg.html;
      }
      selectLines(false);
    }
    delete code.dataset.colour;
    code.dataset.coloured = "1";
  }
  if (source) {
    selectLines();
    window.addEventListener("hashchange", selectLines);
    const code = $(".code.file[data-colour]", source);
    if (code) colourIn(code).catch(() => {});
    let anchor = null;
    source.addEventListener("click", (ev) => {
      const ln = ev.target.closest("a.ln");
      if (ln) {
        const n = +ln.textContent;
        if (ev.shiftKey && anchor) {
          ev.preventDefault();
          location.hash = "#L" + Math.min(anchor, n) + "-L" + Math.max(anchor, n);
        } else { anchor = n; }
        return;
      }
      const name = ev.target.closest("span.n, span.nf, span.nc, span.nx, span.na, span.nn, span.fm, span.nv, span.py, span.nd, span.ne");
      if (!name || window.getSelection().toString()) return;
      const word = name.textContent.trim().replace(/^[.@]+/, "");
      if (!/^[A-Za-z_$][\w$]*$/.test(word)) return;
      const p = new URLSearchParams({ name: word, repo: source.dataset.repo, lang: source.dataset.lang });
      location.href = "/def?" + p;
    });
  }

  // --- repositories: live progress of index runs (server-sent events)
  const jobs = $("#jobs");
  if (jobs && jobs.dataset.live === "1" && window.EventSource) {
    const events = new EventSource("/api/progress");
    events.addEventListener("job", (ev) => {
      const s = JSON.parse(ev.data);
      const row = $$("li.job", jobs).find((li) => li.dataset.job === s.job);
      if (!row) return;
      row.dataset.state = s.state;
      $(".job-state", row).textContent = s.state;
      $(".job-phase", row).textContent = s.phase;
      $(".job-count", row).textContent = s.total ? s.progress + "/" + s.total : String(s.progress);
      $(".job-msg", row).textContent = s.error || s.message || "";
      const bar = $("progress", row);
      if (bar && s.total) { bar.max = s.total; bar.value = s.progress; }
    });
    events.addEventListener("done", () => { events.close(); location.reload(); });
  }
})();
