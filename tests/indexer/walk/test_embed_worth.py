"""What is worth embedding (issue 42, item 5): diagrams, lists of people or sponsors and
translation strings stay greppable but are not embedded; a long changelog is embedded
coarsely (its newest releases); a dry run says why. Real files through the pipeline into a
real SQLite index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.sqlite.store import Store
from ctxd.indexer.walk.textclass import CHANGELOG_EMBEDDED, Role, TextRules, classify
from ctxd.indexer.walk.walker import WalkOptions
from tests.conftest import FakeEmbedder, RepoBuilder

RULES = TextRules.build(True, (), ())

DRAWIO = """<mxfile host="app.diagrams.net"><diagram id="d1" name="Request flow">
<mxGraphModel dx="1426" dy="794" grid="1"><root><mxCell id="0"/><mxCell id="1" parent="0"/>
<mxCell id="2" value="Router" style="rounded=1;whiteSpace=wrap;" vertex="1" parent="1">
<mxGeometry x="40" y="40" width="120" height="60" as="geometry"/></mxCell>
</root></mxGraphModel></diagram></mxfile>
"""

EXCALIDRAW = json.dumps({"type": "excalidraw", "version": 2, "elements": [
    {"type": "text", "text": "Dependency injection", "x": 10, "y": 20}]})

PEOPLE_YML = "experts:\n" + "".join(
    f"- login: user{i}\n  count: {100 - i}\n  avatarUrl: https://avatars.example/u/{i}\n"
    f"  url: https://github.com/user{i}\n" for i in range(30))

SPONSORS_JSON = json.dumps({"sponsors": [
    {"login": f"org{i}", "avatarUrl": f"https://a.example/{i}", "url": f"https://o{i}.example",
     "tier": "gold"} for i in range(12)]}, indent=2)

SPONSORS_YML = "gold:\n" + "".join(
    f"  - url: https://sponsor{i}.example\n    title: Sponsor number {i}\n"
    f"    img: /img/sponsors/s{i}.png\n" for i in range(12))

WORKFLOW_YML = "name: tests\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n" \
    "    steps:\n" + "".join(f"      - name: step {i}\n        run: make step{i}\n"
                            for i in range(30))


MANUAL_YML = "sections:\n" + "".join(  # jq's manual: a YAML of prose, 100+ KB
    f"  - title: Filter number {i}\n    body: |\n\n"
    "      The filter takes its input and produces the same value as output, so that you\n"
    "      can pipe it into the next one. Use it when you want to keep the whole input\n"
    "      and only change how it is printed, for example with the raw output option.\n"
    f"    examples:\n      - program: '.[{i}]'\n        input: '[1, 2, 3]'\n"
    "        output: ['2']\n" for i in range(300))

DATA_YML = "records:\n" + "".join(  # a large YAML of records: data
    f"  - id: {i}\n    name: item_{i}\n    price: {i * 3}.50\n    tags: [a, b, c]\n"
    f"    description: Blue widget size {i % 9}\n" for i in range(1500))


def changelog(releases: int) -> str:
    return "# Release notes\n" + "".join(
        f"\n## 1.{n}.0\n\n- Fixed the connection pool leaking sockets in release number {n}.\n"
        f"- Added a timeout option to the retry helper, case {n}.\n"
        for n in range(releases, 0, -1))


@pytest.mark.parametrize(("rel", "text", "role"), [
    ("docs/architecture.drawio", DRAWIO, Role.DIAGRAM),
    ("docs/flow.excalidraw", EXCALIDRAW, Role.DIAGRAM),
    ("docs/data/people.yml", PEOPLE_YML, Role.DATA),
    ("sponsors.json", SPONSORS_JSON, Role.DATA),
    ("docs/en/data/sponsors.yml", SPONSORS_YML, Role.DATA),
    ("locales/de.json", json.dumps({"greeting": "Hallo", "bye": "Tschüss"}), Role.DATA),
    ("src/i18n/messages/fr.yaml", "greeting: Bonjour\n", Role.DATA),
    ("lib/l10n/app_de.arb", '{"hello": "Hallo"}', Role.DATA),
    (".github/workflows/tests.yml", WORKFLOW_YML, Role.EMBED),
    ("docs/content/manual/manual.yml", MANUAL_YML, Role.EMBED),  # large, but prose
    ("data/records.yml", DATA_YML, Role.DATA),
    ("data/records.json", json.dumps([{"id": i, "name": f"item {i}", "price": i * 3.5}
                                      for i in range(3000)], indent=2), Role.DATA),
    ("src/i18n/index.ts", "export const locale = 'en';\n", Role.EMBED),
    ("CHANGELOG.md", changelog(900), Role.CHANGELOG),
    ("docs/release-notes.md", changelog(900), Role.CHANGELOG),
    ("CHANGES.rst", changelog(10), Role.EMBED),  # short: embedded whole
    ("app/history.py", "def history():\n    return []\n" * 2000, Role.EMBED),
])
def test_what_is_worth_embedding(rel: str, text: str, role: Role) -> None:
    got, why = classify(rel, text, RULES)
    assert got is role, (rel, why)
    assert bool(why) is (role is not Role.EMBED)


def test_a_long_changelog_embeds_its_head_only() -> None:
    text = changelog(900)
    last = Role.CHANGELOG.embedded_lines(text)
    assert last is not None
    assert text.count("\n", 0, CHANGELOG_EMBEDDED) + 1 == last
    assert Role.EMBED.embedded_lines(text) is None
    assert not Role.CHANGELOG.lexical_only and Role.DIAGRAM.lexical_only


def tree(repo: RepoBuilder) -> None:
    repo.write("pool.py", '"""Connection pools."""\n\n\ndef get_pool():\n    return []\n')
    repo.write("docs/architecture.drawio", DRAWIO)
    repo.write("docs/data/people.yml", PEOPLE_YML)
    repo.write("CHANGELOG.md", changelog(900))


def test_a_dry_run_says_why_each_is_not_embedded(repo: RepoBuilder, tmp_path: Path) -> None:
    tree(repo)
    store = Store.open(tmp_path / "index.db")
    stats = Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions(), dry_run=True)
    assert stats.not_embedded == {"changelog": 1, "data": 1, "diagram": 1}
    why = {f.path: f.detail for f in stats.not_embedded_files}
    assert "diagram" in why["docs/architecture.drawio"]
    assert "people or sponsors" in why["docs/data/people.yml"]
    assert "newest releases" in why["CHANGELOG.md"]


def test_a_long_changelog_is_embedded_coarsely_and_greppable_whole(
        repo: RepoBuilder, tmp_path: Path) -> None:
    tree(repo)
    store = Store.open(tmp_path / "index.db")
    emb = FakeEmbedder()
    stats = Indexer(store, emb).index(repo.root, WalkOptions())
    embedded = "\n".join(emb.embedded_texts)
    assert "release number 900." in embedded  # the newest release
    assert "release number 1." not in embedded  # the oldest: greppable only
    assert "mxGraphModel" not in embedded and "avatarUrl" not in embedded
    last = Role.CHANGELOG.embedded_lines(changelog(900))
    rows = store.query("SELECT max(start_line) FROM checkpoints WHERE path = 'CHANGELOG.md'")
    assert rows[0][0] is not None and int(rows[0][0]) <= int(last or 0)
    grep = store.query("SELECT f.path FROM files f JOIN file_text t ON t.rowid = f.id "
                       "WHERE t.content LIKE '%release number 1.%'")
    assert [r[0] for r in grep] == ["CHANGELOG.md"]
    assert stats.not_embedded == {"changelog": 1, "data": 1, "diagram": 1}
    cov = store.embedding_coverage(("repo",))
    assert cov[0][1] == cov[0][2] > 0, "coverage counts only what is meant to be embedded"
