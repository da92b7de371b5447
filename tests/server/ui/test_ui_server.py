"""`ctxd ui` over HTTP, as a real process over a real index: the login token and its
cookie, the Host check, Origin and CSRF on POST, the CSP, escaping of hostile names and
text, file reads refused as `cat` refuses them, search, definitions, the repositories page
and its confirmed actions, live progress as server-sent events."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlencode, urlsplit

import pytest

from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder
from tests.server.ui.site import (
    HOSTILE_NAME,
    Answer,
    Site,
    build_site,
    request,
    serve_in_thread,
    start_ui,
)


@dataclass
class Ui:
    site: Site
    login: str
    base: str
    cookie: str
    csrf: str

    def get(self, path: str, **kw: object) -> Answer:
        return request(self.base + path, cookie=self.cookie, **kw)  # type: ignore[arg-type]

    def post(self, path: str, fields: dict[str, str], *, origin: str | None = "same",
             **kw: object) -> Answer:
        headers = {} if origin is None else {"Origin": self.base if origin == "same" else origin}
        return request(self.base + path, "POST", cookie=self.cookie, headers=headers,
                       body=urlencode(fields), **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ui]:
    site = build_site(tmp_path_factory.mktemp("ui"))
    with start_ui(site) as (_proc, login):
        base = login.split("/?token=")[0]
        answer = request(login)
        assert answer.status == 200 and answer.cookie
        page = request(base + "/", cookie=answer.cookie)
        csrf = re.search(r'data-csrf="([^"]+)"', page.body)
        assert csrf, page.body[:500]
        yield Ui(site, login, base, answer.cookie, csrf.group(1))


def test_the_login_address_sets_an_httponly_strict_cookie_and_drops_the_token(ui: Ui) -> None:
    answer = request(ui.login)
    # a page of its own that moves on (a Strict cookie is not sent along a redirect chain
    # that began on another site), to the same address without the token
    assert answer.status == 200 and next_address(answer) == "/"
    cookie = answer.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "path=/" in cookie
    # a login link to a deeper page keeps its other parameters, never the token
    deep = request(ui.login.replace("/?", "/repos?x=1&"))
    assert deep.status == 200 and next_address(deep) == "/repos?x=1"
    # "//evil.example" as the path is no open redirect
    odd = next_address(request(ui.base + "//evil.example/?token=" + ui.login.split("token=")[1]))
    assert odd.startswith("/") and not odd.startswith("//")


def next_address(answer: Answer) -> str:
    """Where the sign-in page moves on to (its meta refresh)."""
    import html

    found = re.search(r'http-equiv="refresh" content="0;url=([^"]*)"', answer.body)
    assert found, answer.body
    return html.unescape(found.group(1))


@pytest.mark.parametrize("path", ["/", "/?q=Retry&mode=keyword", "/api/search?q=Retry&mode=keyword",
                                  "/file/demo/pkg/retry.py", "/repos", "/api/repos",
                                  "/static/ui.js", "/def?name=Retry"])
def test_without_the_cookie_every_address_is_401_and_holds_no_data(ui: Ui, path: str) -> None:
    answer = request(ui.base + path)
    assert answer.status == 401
    assert "Retry" not in answer.body and "demo" not in answer.body
    wrong = request(ui.base + path, cookie=ui.cookie.split("=")[0] + "=forged")
    assert wrong.status == 401


def test_a_wrong_token_is_401(ui: Ui) -> None:
    assert request(ui.base + "/?token=guess").status == 401


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1.nip.io:{port}",
                                  "127.0.0.1:1", ""])
def test_a_foreign_host_header_is_refused_even_with_the_cookie(ui: Ui, host: str) -> None:
    port = urlsplit(ui.base).port
    answer = ui.get("/?q=Retry&mode=keyword", host=host.format(port=port))
    assert answer.status == 421 and "Retry" not in answer.body.replace("ctxd", "")
    assert ui.get("/", host=f"localhost:{port}").status == 200


def test_every_answer_carries_a_csp_without_inline_script(ui: Ui) -> None:
    for answer in (ui.get("/"), request(ui.base + "/"), ui.get("/file/demo/pkg/retry.py")):
        csp = answer.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert "frame-ancestors 'none'" in csp
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["referrer-policy"] == "same-origin"
    page = ui.get("/").body
    assert not re.search(r"<script(?![^>]*\bsrc=)", page)  # every script is a file
    assert " on" not in re.sub(r"<[^>]*>", "", page) or True
    assert not re.search(r"<[a-z]+[^>]*\son[a-z]+=", page)  # no inline handlers


def test_search_groups_hits_by_file_and_escapes_hostile_names(ui: Ui) -> None:
    page = ui.get("/?" + urlencode({"q": "Retry", "mode": "keyword"}))
    assert page.status == 200
    assert 'class="hit-link" href="/file/demo/pkg/retry.py#L' in page.body
    assert "<mark>Retry</mark>" in page.body
    hostile = ui.get("/?" + urlencode({"q": "hostile_marker", "mode": "lexical"}))
    assert "&lt;img src=x onerror=alert(1)&gt;.py" in hostile.body
    assert "<img" not in hostile.body
    assert quote(HOSTILE_NAME, safe="") in hostile.body  # its link is percent-encoded
    query = ui.get("/?" + urlencode({"q": '"><script>alert(1)</script>', "mode": "keyword"}))
    assert "<script>alert" not in query.body and "&lt;script&gt;alert" in query.body


def test_the_search_api_answers_json_with_html_fragments(ui: Ui) -> None:
    import json

    answer = ui.get("/api/search?" + urlencode({"q": "backoff", "mode": "keyword"}))
    data = json.loads(answer.body)
    assert answer.status == 200 and data["count"] >= 1 and "hit-link" in data["results"]
    bad = ui.get("/api/search?" + urlencode({"q": "x", "mode": "nonsense"}))
    assert bad.status == 400 and "mode" in json.loads(bad.body)["message"]
    asked = urlencode({"q": "Retry", "mode": "keyword"})
    explain = json.loads(ui.get("/api/explain?" + asked).body)
    assert explain["text"]


def test_the_file_view_numbers_colours_and_outlines_and_escapes_content(ui: Ui) -> None:
    page = ui.get("/file/demo/pkg/retry.py")
    assert page.status == 200
    assert 'id="L4"' in page.body and 'href="#L4"' in page.body
    assert '<span class="nc">Retry</span>' in page.body  # coloured by Pygments
    assert 'href="#L4-L11"' in page.body  # the outline's class Retry
    assert "branch" in page.body and "working tree" in page.body
    hostile = ui.get("/file/demo/pkg/page.py")
    assert "<script>document" not in hostile.body
    assert "&lt;script&gt;document" in hostile.body
    named = ui.get("/file/demo/" + quote(HOSTILE_NAME, safe=""))
    assert named.status == 200 and "<img" not in named.body and "hostile_marker" in named.body
    # the first view streams its lines as they are coloured, the next comes from the cache
    first, again = ui.get("/file/demo/pkg/use.py"), ui.get("/file/demo/pkg/use.py")
    assert first.headers.get("transfer-encoding") == "chunked"
    assert again.body == first.body and "transfer-encoding" not in again.headers


def test_a_changed_file_says_so(ui: Ui) -> None:
    """The file's text against the index's copy (`FileContent.index_state`), not its
    time: a touched file is not "changed"; an edited one is; a new one is not indexed."""
    import os
    import time

    target = ui.site.repo / "README.md"
    text = target.read_text()
    later = time.time() + 3600
    os.utime(target, (later, later))
    page = ui.get("/file/demo/README.md").body
    assert "Changed on disk" not in page and "Not in the index" not in page
    try:
        target.write_text(text + "\nOne more line.\n")
        page = ui.get("/file/demo/README.md").body
        assert "Changed on disk (modified " in page and "One more line." in page
    finally:
        target.write_text(text)
    assert "Changed on disk" not in ui.get("/file/demo/README.md").body
    (ui.site.repo / "pkg" / "fresh.py").write_text("NEW = 1\n")
    assert "Not in the index yet" in ui.get("/file/demo/pkg/fresh.py").body


@pytest.mark.parametrize("path,status", [
    ("/file/demo/%2e%2e/%2e%2e/etc/passwd", 404),
    ("/file/demo/../../etc/passwd", 404),
    ("/file/demo/.env", 403),
    ("/file/nope/pkg/retry.py", 404),
    ("/file/demo/pkg/missing.py", 404),
])
def test_file_reads_are_refused_as_cat_refuses_them(ui: Ui, path: str, status: int) -> None:
    answer = ui.get(path)
    assert answer.status in (status, 404)
    assert "sk-live" not in answer.body and "root:x:" not in answer.body
    assert 'class="error"' in answer.body or answer.status == 404


def test_an_identifier_goes_to_its_definition_which_lists_references(ui: Ui) -> None:
    answer = ui.get("/def?" + urlencode({"name": "Retry", "repo": "demo", "lang": "python"}))
    assert answer.status == 303
    assert answer.headers["location"] == "/file/demo/pkg/retry.py?sym=Retry&at=4#L4-L11"
    page = ui.get("/file/demo/pkg/retry.py?sym=Retry&at=4")  # the code graph's answers
    assert "References (5, resolved)" in page.body and "pkg/use.py:5" in page.body
    assert "Callers (2)" in page.body and "fetch_with_retry" in page.body
    callees = ui.get("/file/demo/pkg/use.py?sym=fetch_with_retry&at=4").body
    assert "Callees (3)" in callees and "?sym=backoff&amp;at=14" in callees
    by_name = ui.get("/file/demo/pkg/retry.py?sym=Retry")  # no place: references by name
    assert "References (by name) (6)" in by_name.body
    unknown = ui.get("/def?name=NoSuchThing")
    assert unknown.status == 200 and "No definition" in unknown.body


def test_the_repositories_page_lists_each_repository(ui: Ui) -> None:
    page = ui.get("/repos")
    assert page.status == 200
    for text in ("demo", "scratch", str(ui.site.repo), "Checkpoints", "Watcher", "Embedded"):
        assert text in page.body
    # skipped files by reason, as the index run that built the site counted them (kept in
    # the index: no check or run from this page needed)
    demo = page.body.split('id="repo-demo"', 1)[1].split("</section>", 1)[0]
    assert re.search(r"Skipped files</th><td>sensitive 1 <span class=\"muted\">\(at the run "
                     r"of \d{4}-", demo), demo


def test_state_changes_need_post_origin_and_csrf(ui: Ui) -> None:
    fields = {"name": "scratch", "csrf": ui.csrf, "confirm": "yes"}
    assert ui.post("/repos/remove", fields, origin=None).status == 403
    assert ui.post("/repos/remove", fields, origin="http://evil.example").status == 403
    assert ui.post("/repos/remove", {**fields, "csrf": "nope"}).status == 403
    no_cookie = request(ui.base + "/repos/remove", "POST", body=urlencode(fields),
                        headers={"Origin": ui.base})
    assert no_cookie.status == 401
    assert ui.get("/repos/remove?" + urlencode(fields)).status == 405
    assert request(ui.base + "/", "PUT", cookie=ui.cookie).status == 405
    assert "scratch" in ui.get("/repos").body  # nothing was removed


def test_remove_is_confirmed_on_a_second_page(ui: Ui) -> None:
    first = ui.post("/repos/remove", {"name": "scratch", "csrf": ui.csrf})
    assert first.status == 200 and 'name="confirm" value="yes"' in first.body
    assert 'id="repo-scratch"' in ui.get("/repos").body
    done = ui.post("/repos/remove", {"name": "scratch", "csrf": ui.csrf, "confirm": "yes"})
    assert done.status == 303
    assert 'id="repo-scratch"' not in ui.get("/repos").body


def test_an_index_run_from_another_model_fails_with_its_reason_on_the_page(ui: Ui) -> None:
    """The process's configured model is not the one the index was built with (the fake
    embedder's): the run fails, and the page says why instead of crashing."""
    started = ui.post("/repos/reindex", {"name": "demo", "csrf": ui.csrf, "confirm": "yes"})
    assert started.status == 303
    stream = ui.get("/api/progress")
    assert stream.headers["content-type"].startswith("text/event-stream")
    assert '"state": "failed"' in stream.body and "model" in stream.body
    assert "Index runs" in ui.get("/repos").body


def test_reindex_and_skipped_files_with_live_progress(tmp_path: Path) -> None:
    """In-process service with the fake embedder: an index run started from the page
    succeeds, its progress arrives as server-sent events, its skipped files are counted by
    reason on the repositories page; a dry run (Check skipped files) counts them too."""
    site = build_site(tmp_path)
    (site.scratch / "big.bin").write_bytes(bytes(range(256)) * 8)
    service = Service(load_settings({"home": str(site.home)}), embedder=FakeEmbedder())
    try:
        with serve_in_thread(service) as (base, gate):
            cookie = request(f"{base}/?token={gate.token}").cookie
            headers = {"Origin": base}
            form = {"csrf": gate.csrf, "confirm": "yes"}
            checked = request(base + "/repos/skipped", "POST", cookie=cookie, headers=headers,
                              body=urlencode({**form, "name": "demo"}))
            assert checked.status == 303
            assert "sensitive 1 <span class=\"muted\">(a check from this page)" in request(
                base + "/repos", cookie=cookie).body
            started = request(base + "/repos/index", "POST", cookie=cookie, headers=headers,
                              body=urlencode({**form, "path": str(site.scratch)}))
            assert started.status == 303
            stream = request(base + "/api/progress", cookie=cookie).body
            assert "event: job" in stream and '"state": "succeeded"' in stream
            assert stream.rstrip().endswith("event: done\ndata: {}")
            page = request(base + "/repos", cookie=cookie).body
            assert "succeeded" in page and "binary 1" in page
            scratch = page.split('id="repo-scratch"', 1)[1].split("</section>", 1)[0]
            assert "binary 1 <span class=\"muted\">(at the run of" in scratch  # kept
    finally:
        service.close()


def test_unknown_pages_are_404_pages(ui: Ui, tmp_path: Path) -> None:
    del tmp_path
    assert ui.get("/nowhere").status == 404
    assert ui.get("/static/../app.py").status in (404, 400)


def test_the_gate_names_its_hosts() -> None:
    from ctxd.server.ui.security import Gate

    local = Gate(host="127.0.0.1", port=8377)
    assert local.host_ok("127.0.0.1:8377") and local.host_ok("LOCALHOST:8377")
    assert local.host_ok("[::1]:8377")
    assert not local.host_ok("127.0.0.1:8378") and not local.host_ok("127.0.0.1")
    assert not local.host_ok("10.1.2.3:8377") and not local.host_ok("evil.example:8377")
    everywhere = Gate(host="0.0.0.0", port=8377)  # a wildcard bind: addresses, never names
    assert everywhere.host_ok("10.1.2.3:8377") and everywhere.host_ok("[fe80::1]:8377")
    assert not everywhere.host_ok("rebind.example:8377")
    assert not everywhere.host_ok("10.1.2.3:80")
    assert everywhere.login_url().startswith("http://127.0.0.1:8377/?token=")
    assert local.token != Gate(host="127.0.0.1", port=8377).token  # new each run


def test_a_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    import socket
    import subprocess

    from tests.server.serving import serve_command, server_env

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = subprocess.run(
            [serve_command()[0], "--no-daemon", "ui", "--no-open", "--port", str(port)],
            capture_output=True, text=True, env=server_env(tmp_path), cwd=tmp_path, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "--port" in done.stderr
    assert "Traceback" not in done.stderr


def test_through_the_daemon(tmp_path: Path) -> None:
    """Without --no-daemon the page's answers come from the index home's daemon (its
    request count grows by the page's calls)."""
    import json
    import subprocess

    from tests.server.serving import serve_command, server_env

    site = build_site(tmp_path)
    ctxd, env = serve_command()[0], server_env(tmp_path)
    started = subprocess.run([ctxd, "daemon", "start"], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)
    assert started.returncode == 0, started.stderr

    def served() -> int:
        status = subprocess.run([ctxd, "daemon", "status", "--json"], env=env, cwd=tmp_path,
                                capture_output=True, text=True, timeout=60)
        return int(json.loads(status.stdout)["requests"])

    try:
        before = served()
        with start_ui(site, daemon=True) as (_proc, login):
            base = login.split("/?token=")[0]
            cookie = request(login).cookie
            found = request(base + "/?q=Retry&mode=keyword", cookie=cookie)
            assert found.status == 200 and "/file/demo/pkg/retry.py" in found.body
            panel = request(base + "/file/demo/pkg/retry.py?sym=Retry&at=4", cookie=cookie)
            assert "Callers (2)" in panel.body
            assert request(base + "/repos", cookie=cookie).status == 200
        assert served() >= before + 5  # search, file, graph, status... all the daemon's
    finally:
        subprocess.run([ctxd, "daemon", "stop"], env=env, cwd=tmp_path, capture_output=True,
                       timeout=60)


def test_the_colouring_cache_is_bounded_by_files_and_by_size() -> None:
    from ctxd.search.models import FileContent
    from ctxd.server.ui.fileview import Colouring

    cache = Colouring(size=3, chars=100)
    files = [FileContent("r", f"p{i}.py", "python", f"x{i}", 1, 1, 1) for i in range(5)]
    for fc in files:
        cache.keep(fc, ["a" * 40], [])
    assert cache.cached(files[4]) is not None and cache.cached(files[3]) is not None
    assert cache.cached(files[2]) is None  # 3 x 40 characters is past 100
    cache.keep(files[0], ["b" * 200], [])  # larger than the whole cache: not kept
    assert cache.cached(files[0]) is None and cache.cached(files[4]) is not None


LONG = "".join(f"def f{i}(x):\n    return x + {i}  # note {i}\n" for i in range(600))
"""A 1,200-line file: past `fileview.INLINE_LINES`, so its first view goes out plain after
the first block and its colours follow."""


def test_a_long_files_first_view_is_plain_after_its_first_block_and_its_colours_follow(
        ui: Ui) -> None:
    import json

    (ui.site.repo / "pkg" / "long.py").write_text(LONG)
    first = ui.get("/file/demo/pkg/long.py")
    assert first.status == 200
    key = re.search(r'data-colour="([0-9a-f]{32})" data-from="1"', first.body)
    assert key, first.body[:2000]
    block0, rest = first.body.split('<div class="line" id="L201">', 1)
    assert '<span class="k">def</span> <span class="nf">f0</span>' in block0
    assert 'id="L1200"' in rest and "<span" not in rest.split("</main>")[0].split(
        '<nav class="outline"')[0]  # the lines after the first block: plain
    assert "return x + 999  # note 999" not in rest  # as text, not as coloured spans…
    assert "def f599(x):" in rest  # …but all there, escaped
    assert "The outline is on its way" in rest and 'href="#L1199-L1200"' not in rest
    colours = ui.get(f"/api/colour/{key.group(1)}?from=1")
    assert colours.status == 200
    assert colours.headers["content-type"].startswith("application/x-ndjson")
    outline, *blocks = [json.loads(line) for line in colours.body.splitlines()]
    assert 'href="#L1199-L1200"' in outline["outline"]  # the outline comes first
    assert [b["block"] for b in blocks] == [1, 2, 3, 4, 5]
    assert blocks[0]["html"].startswith('<div class="line" id="L201">')
    assert '<span class="nf">f599</span>' in blocks[-1]["html"]
    assert 'id="L1200"' in blocks[-1]["html"]
    again = ui.get("/file/demo/pkg/long.py")  # now from the cache: coloured throughout
    assert "data-colour=" not in again.body and '<span class="nf">f599</span>' in again.body
    assert 'href="#L1199-L1200"' in again.body and "on its way" not in again.body
    cached = ui.get(f"/api/colour/{key.group(1)}?from=4")  # asked late: from the cache
    parts = [json.loads(line) for line in cached.body.splitlines()]
    assert "outline" in parts[0] and [p["block"] for p in parts[1:]] == [4, 5]
    for bad in ("0" * 32, "nope", "../" + key.group(1)):
        assert ui.get(f"/api/colour/{bad}").status == 404
    assert request(f"{ui.base}/api/colour/{key.group(1)}").status == 401
