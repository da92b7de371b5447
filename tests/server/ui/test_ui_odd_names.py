"""The page opens every file it links to, whatever its name: a name holding a newline
(git allows one; `ctxd cat` serves it) was linked from search results as
`/file/REPO/dir/new%0Aline.py` and answered 404 (the route's path did not match a
newline).

A real repository and SQLite index (fake embedder), the page's app on a real uvicorn.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.ui.site import request, serve_in_thread


def test_a_file_whose_name_holds_a_newline_opens_from_its_search_link(
    tmp_path: Path, repo: RepoBuilder
) -> None:
    repo.write("odd dir/new\nline.py", "def newline_named():\n    return 2\n")
    repo.write("plain.py", "def plain_named():\n    return 1\n")
    service = Service(load_settings({"home": str(tmp_path / "home")}), embedder=FakeEmbedder())
    try:
        service.index(repo.root)
        with serve_in_thread(service) as (base, gate):
            cookie = request(f"{base}/?token={gate.token}").cookie
            page = request(f"{base}/?q=newline_named&mode=lexical", cookie=cookie)
            assert page.status == 200
            link = f"/file/{repo.root.name}/" + quote("odd dir/new\nline.py")
            assert link in page.body
            view = request(base + link, cookie=cookie)
            assert view.status == 200, view.body[:300]
            assert "newline_named" in view.body
            assert request(f"{base}/file/{repo.root.name}/plain.py", cookie=cookie).status == 200
    finally:
        service.close()
