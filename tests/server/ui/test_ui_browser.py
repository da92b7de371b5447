"""`ctxd ui` in a real browser: Playwright driving Debian's Chromium (`/usr/bin/chromium`,
installed by `.ci/run`; never a downloaded browser) against a real `ctxd ui` process.

Logs in from the printed address, searches, opens a hit with the keyboard, follows an
identifier to its definition, reads the repositories page, opens the hostile-name and
hostile-content files (nothing runs), and is refused without the token, through a
foreign host name (DNS rebinding, simulated with Chromium's resolver rules) and from a
cross-site form. Every page passes axe-core with no serious or critical violation.
With CTXD_UI_SCREENSHOTS=DIR set, it saves each page's screenshot there (docs/ui).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.server.ui.site import HOSTILE_NAME, build_site, start_ui

CHROMIUM = "/usr/bin/chromium"
AXE = Path(__file__).resolve().parent / "data" / "axe.min.js"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run",
        "--host-resolver-rules=MAP rebind.test 127.0.0.1, MAP attacker.test 127.0.0.1"]

pytestmark = pytest.mark.skipif(not os.path.exists(CHROMIUM),
                                reason=f"Chromium is not installed at {CHROMIUM} "
                                "(.ci/run installs it: apt-get install chromium)")


@dataclass
class Browser:
    login: str
    base: str
    port: int
    browser: Any
    context: Any
    dialogs: list[str] = field(default_factory=list)
    shots: Path | None = None
    repo: Path | None = None

    def page(self) -> Any:
        page = self.context.new_page()
        page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        return page

    def sign_in(self, page: Any, path: str = "/") -> None:
        """Open the printed address (for `path`); wait until the page moved on to it."""
        page.goto(self.login.replace("/?", path + "?") if path != "/" else self.login)
        page.wait_for_url(self.base + path)

    def shoot(self, page: Any, name: str) -> None:
        if self.shots is not None:
            page.screenshot(path=str(self.shots / f"{name}.png"), full_page=False)


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    sync_api = pytest.importorskip("playwright.sync_api")
    site = build_site(tmp_path_factory.mktemp("ui-browser"))
    shots_dir = os.environ.get("CTXD_UI_SCREENSHOTS")
    shots = Path(shots_dir).resolve() if shots_dir else None
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
    # two hits a page: "More results" (the next page by cursor) has something to fetch
    with start_ui(site, CTXD_SEARCH_DEFAULT_LIMIT="2") as (_proc, login), \
            sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        base = login.split("/?token=")[0]
        try:
            yield Browser(login, base, int(base.rsplit(":", 1)[1]), browser, context,
                          shots=shots, repo=site.repo)
        finally:
            context.close()
            browser.close()


def axe_violations(page: Any) -> list[str]:
    """Serious and critical axe-core violations of the page (run through the DevTools
    protocol, which the page's CSP does not govern)."""
    page.evaluate(AXE.read_text(encoding="utf-8") + "\n;0")
    result = page.evaluate(
        "async () => (await axe.run(document)).violations.map(v => ({id: v.id, "
        "impact: v.impact, n: v.nodes.length, "
        "where: v.nodes.slice(0, 3).map(n => n.html + ' ' + n.failureSummary)}))")
    return [f"{v['id']} ({v['impact']}, {v['n']} nodes: {v['where']})" for v in result
            if v["impact"] in ("serious", "critical")]


def test_without_the_token_the_page_is_401_and_shows_no_data(web: Browser) -> None:
    fresh = web.browser.new_context()
    try:
        page = fresh.new_page()
        answer = page.goto(web.base + "/?q=Retry&mode=keyword")
        assert answer.status == 401
        assert "demo" not in page.content() and "Retry helpers" not in page.content()
    finally:
        fresh.close()


def test_the_login_link_works_when_clicked_on_another_site(web: Browser) -> None:
    """A SameSite=Strict cookie is not sent along a redirect chain that began on another
    site (a chat, a web terminal): the sign-in page moves on by itself instead."""
    fresh = web.browser.new_context()
    try:
        page = fresh.new_page()
        page.route("http://chat.test/**", lambda route: route.fulfill(
            body=f'<!doctype html><title>chat</title><a id="go" href="{web.login}">link</a>',
            content_type="text/html"))
        page.goto("http://chat.test/")
        page.click("#go")
        page.wait_for_url(web.base + "/")
        page.wait_for_selector("#q")  # the search page, signed in
    finally:
        fresh.close()


def test_log_in_search_open_a_hit_and_follow_a_definition(web: Browser) -> None:
    page = web.page()
    web.sign_in(page)
    assert page.url == web.base + "/"  # the token left the address
    assert page.evaluate("document.activeElement.id") == "q"  # the search box has focus
    assert axe_violations(page) == []
    web.shoot(page, "search-empty")
    page.select_option("select[name=mode]", "keyword")
    page.fill("#q", "Retry backoff")
    page.keyboard.press("Enter")
    page.wait_for_selector("#hits li.file")
    assert "q=Retry+backoff" in page.url and "mode=keyword" in page.url  # shareable
    assert page.locator("#hits mark").count() > 0
    assert axe_violations(page) == []
    web.shoot(page, "search-results")
    shown = page.locator("#hits > li.file").count()
    page.click("#more")  # the next page, appended in place
    page.wait_for_function("n => document.querySelectorAll('#hits > li.file').length > n",
                           arg=shown)
    page.click("details.explain summary")  # how the query ran, fetched when opened
    page.wait_for_function("() => !document.querySelector('.explain-text').textContent"
                           ".startsWith('Loading')")
    page.keyboard.press("Escape")  # leave the search box: j/k move through results
    page.keyboard.press("j")
    assert page.evaluate("document.activeElement.className") == "hit-link"
    page.keyboard.press("Enter")
    page.wait_for_url("**/file/demo/**")
    page.wait_for_selector(".code .line.sel")  # the hit's lines are selected
    page.goto(web.base + "/file/demo/pkg/use.py")
    page.locator(".code span.n", has_text="Retry").first.click()
    page.wait_for_url("**/file/demo/pkg/retry.py?sym=Retry&at=4#L4-L11")
    assert page.locator("#L4.sel").count() == 1
    panel = page.locator("aside.symbol").inner_text()
    assert "References" in panel and "pkg/use.py:5" in panel
    assert axe_violations(page) == []
    web.shoot(page, "file-definition")


def test_the_repositories_page(web: Browser) -> None:
    page = web.page()
    web.sign_in(page, "/repos")
    page.wait_for_selector("#repo-demo")
    text = page.locator("main").inner_text()
    assert "demo" in text and "scratch" in text and "Checkpoints" in text
    skipped = page.locator("#repo-demo tr", has_text="Skipped files").inner_text()
    assert "sensitive 1" in skipped and "at the run of" in skipped  # kept by the index run
    assert axe_violations(page) == []
    web.shoot(page, "repositories")
    page.set_viewport_size({"width": 420, "height": 800})
    page.emulate_media(color_scheme="dark")
    page.goto(web.base + "/?" + urlencode({"q": "Retry", "mode": "keyword"}))
    page.wait_for_selector("#hits li.file")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 430  # no sideways scrolling of the page on a narrow window
    assert axe_violations(page) == []
    web.shoot(page, "search-narrow-dark")
    page.goto(web.base + "/file/demo/pkg/use.py")  # long lines scroll inside their box
    assert page.evaluate("document.documentElement.scrollWidth") <= 430
    assert axe_violations(page) == []


def test_a_reindex_from_the_page_is_confirmed_and_followed_live(web: Browser) -> None:
    """The run fails here (the index was built with the fake embedder, the process is
    configured for the shipped model), which the page then says: the flow is what counts."""
    page = web.page()
    web.sign_in(page, "/repos")
    page.locator("#repo-scratch form[action='/repos/reindex'] button").click()
    page.wait_for_selector("text=Re-index scratch?")
    assert axe_violations(page) == []
    page.locator("main form button").click()  # confirmed: the run starts
    page.wait_for_selector("li.job[data-state=failed]")  # its events, then a reload
    assert "model" in page.locator("li.job").first.inner_text()


def test_hostile_names_and_contents_run_nothing(web: Browser) -> None:
    page = web.page()
    web.sign_in(page)
    page.goto(web.base + "/?" + urlencode({"q": "hostile_marker", "mode": "lexical"}))
    page.wait_for_selector("#hits li.file")
    assert HOSTILE_NAME in page.locator("#hits").inner_text()  # shown as text
    assert page.locator("#hits img").count() == 0
    page.locator("#hits a.hit-link").first.click()
    page.wait_for_url("**/file/demo/**")
    assert "hostile_marker" in page.locator(".code").inner_text()
    page.goto(web.base + "/file/demo/pkg/page.py")
    assert "<script>document.title='pwned'</script>" in page.locator(".code").inner_text()
    assert page.title() != "pwned" and "pwned" not in page.title()
    assert web.dialogs == []


def test_a_foreign_host_name_is_refused(web: Browser) -> None:
    """DNS rebinding: a name that resolves to 127.0.0.1 is not this page's address."""
    page = web.page()
    answer = page.goto(f"http://rebind.test:{web.port}/?q=Retry&mode=keyword")
    assert answer.status == 421
    assert "Retry helpers" not in page.content()


def test_a_cross_site_post_changes_nothing(web: Browser) -> None:
    page = web.page()
    web.sign_in(page)  # signed in: the cookie is there to be abused
    attacker = (f'<!doctype html><title>x</title><form method="post" '
                f'action="{web.base}/repos/remove"><input name="name" value="scratch">'
                '<input name="confirm" value="yes"><button id="go">go</button></form>')
    page.route("http://attacker.test/**",
               lambda route: route.fulfill(body=attacker, content_type="text/html"))
    page.goto("http://attacker.test/")
    with page.expect_navigation() as nav:
        page.click("#go")
    assert nav.value.status in (401, 403)
    page.goto(web.base + "/repos")
    assert page.locator("#repo-scratch").count() == 1  # still indexed


def test_no_file_outside_a_repository_is_served(web: Browser) -> None:
    page = web.page()
    web.sign_in(page)
    for path in ("/file/demo/.env", "/file/demo/%2e%2e/%2e%2e/etc/passwd"):
        answer = page.goto(web.base + path)
        assert answer.status in (403, 404)
        assert "sk-live" not in page.content() and "root:x:" not in page.content()
    assert shutil.which("true")  # keep the import honest on every platform


def test_a_long_files_colours_follow_its_plain_lines_and_keep_the_selection(
        web: Browser) -> None:
    assert web.repo is not None
    (web.repo / "pkg" / "long_view.py").write_text(
        "".join(f"def g{i}(x):\n    return x * {i}\n" for i in range(600)))
    page = web.page()
    web.sign_in(page)
    page.goto(web.base + "/file/demo/pkg/long_view.py#L899-L900")
    page.wait_for_selector(".code.file[data-coloured]")  # every block's colours came
    assert "Not in the index yet" in page.locator("p.note.changed").inner_text()
    assert page.locator('nav.outline a[href="#L1199-L1200"]').count() == 1  # came after
    assert page.locator(".outline-wait").count() == 0
    assert axe_violations(page) == []
    assert page.locator("#L899 span.nf").inner_text() == "g449"  # coloured in place
    assert page.locator(".code .line.sel").count() == 2  # the selection is kept
    assert page.locator("#L899.sel").count() == 1
    assert page.locator(".code .line").count() == 1200
    page.locator("#L1199 span.nf").click()  # a name in a block coloured later links too
    page.wait_for_url("**/def?name=g599&repo=demo&lang=python")  # (not indexed: no match)
    assert web.dialogs == []
