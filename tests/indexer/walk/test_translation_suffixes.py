# ruff: noqa: RUF001, E501  (translated text: full-width punctuation, long lines)
"""Translated pages named by a language or a country in capitals (vConsole's `*_CN.md`,
`README-JP.md`, `README_ZH.md`) as well as by a lowercase code (`README.zh-CN.md`): the
file-name conventions real repositories use, through `Translations` and `classify`."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxd.indexer.walk.textclass import Role, TextRules, classify
from ctxd.indexer.walk.translations import Translations, suffix_language, translation_place
from tests.conftest import RepoBuilder

ENGLISH = ("vConsole is a lightweight, extendable front-end developer tool for mobile web "
           "pages. It shows the logs, the network requests and the storage of the page, and "
           "you can write plugins for it.\n")
CHINESE = "一个轻量、可拓展、针对手机网页的前端开发者调试面板。可以查看日志、网络请求和本地存储，也可以编写插件。\n"
JAPANESE = "モバイルウェブページ向けの軽量で拡張可能なフロントエンド開発者ツールです。ログとネットワークを表示します。\n"


@pytest.mark.parametrize("name,lang", [
    ("README_CN.md", "zh"), ("README-zh_CN.md", "zh"), ("README.zh_TW.md", "zh"),
    ("README_zh-CN.md", "zh"), ("README-cn.md", "zh"), ("README_ZH.md", "zh"),
    ("README-JP.md", "ja"), ("README_KR.md", "ko"), ("README.pt-BR.md", "pt"),
    ("README_ja.md", "ja"), ("plugin_building_a_plugin_CN.md", "zh"),
    ("use_in_CN.md", "zh"), ("README_EN.md", "en"),
    # not a language
    ("README.md", None), ("HOW_TO.md", None), ("WHAT_IS.md", None), ("TO_BE.md", None),
    ("notes-api.md", None), ("SIGN_IN.md", None),
])
def test_suffixes_that_name_a_language(name: str, lang: str | None) -> None:
    assert suffix_language(name) == lang


LAYOUT = {
    # vConsole: every page has a Chinese twin named _CN
    "README.md": ENGLISH,
    "README_CN.md": CHINESE,
    "CHANGELOG.md": "## 3.9.1\n\n- `Fix(Network)` " + ENGLISH,
    "CHANGELOG_CN.md": "## 3.9.1\n\n- `Fix(Network)` " + CHINESE,
    "doc/tutorial.md": ENGLISH,
    "doc/tutorial_CN.md": CHINESE,
    "doc/a_doc_index_CN.md": CHINESE,
    "doc/a_doc_index.md": ENGLISH,
    # a capital country beside a capital language
    "guide/intro-JP.md": JAPANESE,
    "guide/intro-EN.md": ENGLISH,
    # not translations: English under a country suffix, an English word in capitals
    "notes/setup_CN.md": ENGLISH,
    "notes/WHAT_IS.md": ENGLISH,
    "notes/WHAT.md": ENGLISH,
}
TRANSLATED = {
    "README_CN.md": "zh",
    "CHANGELOG_CN.md": "zh",
    "doc/tutorial_CN.md": "zh",
    "doc/a_doc_index_CN.md": "zh",
    "guide/intro-JP.md": "ja",
}


def test_country_and_capital_suffixes_are_translations(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path)
    for rel, text in LAYOUT.items():
        repo.write(rel, text)
    t = Translations(tmp_path)
    found = {rel: got[0] for rel, text in LAYOUT.items() if (got := t.language(rel, text))}
    assert found == TRANSLATED
    assert t.language("doc/tutorial_CN.md", CHINESE) == ("zh", "translation of tutorial.md")
    roles = {rel: classify(rel, text, TextRules(), translations=Translations(tmp_path))[0]
             for rel, text in LAYOUT.items()}
    assert {r for r, role in roles.items() if role is Role.TRANSLATION} == set(TRANSLATED)
    assert translation_place("doc/tutorial_CN.md") == "doc/tutorial_CN.md"


def test_a_gettext_catalogue_is_a_translation_whatever_its_code(tmp_path: Path) -> None:
    klingon = 'msgid "%d second"\nmsgid_plural "%d seconds"\nmsgstr[0] "%d lup"\n'
    layout = {"src/humanize/locale/tlh/LC_MESSAGES/humanize.po": klingon,
              "src/humanize/locale/sr@latin/LC_MESSAGES/humanize.po": klingon,
              "src/humanize/locale/pt_BR/LC_MESSAGES/humanize.po": klingon,
              "src/humanize/locale/en_GB/LC_MESSAGES/humanize.po": klingon,
              "humanize.pot": klingon}
    for rel, text in layout.items():
        RepoBuilder(tmp_path).write(rel, text)
    t = Translations(tmp_path)
    found = {rel: got[0] for rel, text in layout.items() if (got := t.language(rel, text))}
    assert found == {"src/humanize/locale/tlh/LC_MESSAGES/humanize.po": "tlh",
                     "src/humanize/locale/sr@latin/LC_MESSAGES/humanize.po": "sr",
                     "src/humanize/locale/pt_BR/LC_MESSAGES/humanize.po": "pt"}
    role, _why = classify("src/humanize/locale/tlh/LC_MESSAGES/humanize.po", klingon,
                          TextRules(), translations=t)
    assert role is Role.TRANSLATION
