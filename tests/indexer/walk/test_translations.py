# ruff: noqa: RUF001, E501  (translated text and a bundle: full-width punctuation, long lines)
"""Translated documentation by place and by the language of its prose (issue 29):
`indexer.walk.translations` on real folder layouts (mkdocs, Docusaurus, Sphinx, Hugo,
ant-design, READMEs), and through `textclass.classify` as `Role.TRANSLATION`."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxd.indexer.walk.textclass import Role, TextRules, classify
from ctxd.indexer.walk.translations import Translations, prose_language, translation_place
from tests.conftest import RepoBuilder

GERMAN = ("Wenn Sie andere Funktionsparameter deklarieren, die nicht Teil der Pfadparameter "
          "sind, dann werden diese automatisch als Query-Parameter interpretiert. Die Werte "
          "sind optional und haben einen Defaultwert, wenn Sie das so wollen.\n")
ENGLISH = ("When you declare other function parameters that are not part of the path "
           "parameters, they are automatically interpreted as query parameters. They can be "
           "optional and can have default values, if you want that.\n")
JAPANESE = "パスパラメータではない関数パラメータを宣言すると、それらは自動的にクエリパラメータとして解釈されます。\n"
CHINESE = "当你声明不属于路径参数的其他函数参数时，它们将被自动解释为查询参数。这些参数可以是可选的。\n"
RUSSIAN = ("Когда вы объявляете параметры функции, которые не являются параметрами пути, "
           "они автоматически интерпретируются как query-параметры.\n")


@pytest.mark.parametrize("text,lang", [
    (GERMAN, "de"), (ENGLISH, "en"), (JAPANESE, "ja"), (CHINESE, "zh"), (RUSSIAN, "ru"),
    ("```python\ndef f():\n    return 1\n```\n" + ENGLISH, "en"), ("# Title\n", None),
])
def test_the_language_of_prose(text: str, lang: str | None) -> None:
    assert prose_language(text) == lang


LAYOUT = {
    # mkdocs: docs/<lang>/ beside docs/en/
    "docs/en/docs/tutorial/query.md": ENGLISH,
    "docs/de/docs/tutorial/query.md": GERMAN,
    "docs/zh-hant/docs/tutorial/query.md": CHINESE,
    # Docusaurus
    "website/i18n/ja/docusaurus-plugin-content-docs/current/intro.md": JAPANESE,
    # Sphinx catalogues
    "doc/locale/ru/LC_MESSAGES/index.po": 'msgid "Query"\nmsgstr "Запрос"\n',
    # Hugo: content/<lang>/ beside content/en/
    "content/en/posts/query.md": ENGLISH,
    "content/pt-br/posts/query.md": ("Quando você declara outros parâmetros na função que não "
                                     "fazem parte dos parâmetros da rota, eles são "
                                     "interpretados automaticamente como parâmetros de consulta "
                                     "e podem ser opcionais com um valor padrão para você.\n"),
    # READMEs and ant-design pages
    "README.md": ENGLISH,
    "README.zh-CN.md": CHINESE,
    "README_ja.md": JAPANESE,
    "components/button/index.en-US.md": ENGLISH,
    "components/button/index.zh-CN.md": CHINESE,
    # not translations
    "docs/id/overview.md": ENGLISH,  # a folder named like a code, holding English
    "notes/api-id.md": ENGLISH,  # a suffix that reads as a code, in English
    "src/i18n/de.py": "GREETING = 'Hallo'\n",  # code is never a translation
    "guide/intro.md": GERMAN,  # German, but nothing names a language: the only version
}
TRANSLATED = {
    "docs/de/docs/tutorial/query.md": "de",
    "docs/zh-hant/docs/tutorial/query.md": "zh",
    "website/i18n/ja/docusaurus-plugin-content-docs/current/intro.md": "ja",
    "doc/locale/ru/LC_MESSAGES/index.po": "ru",
    "content/pt-br/posts/query.md": "pt",
    "README.zh-CN.md": "zh",
    "README_ja.md": "ja",
    "components/button/index.zh-CN.md": "zh",
}


def test_translations_by_folder_suffix_and_prose(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path)
    for rel, text in LAYOUT.items():
        repo.write(rel, text)
    t = Translations(tmp_path)
    found = {rel: got[0] for rel, text in LAYOUT.items() if (got := t.language(rel, text))}
    assert found == TRANSLATED
    roles = {rel: classify(rel, text, TextRules(), translations=Translations(tmp_path))[0]
             for rel, text in LAYOUT.items()}
    assert {r for r, role in roles.items() if role is Role.TRANSLATION} == set(TRANSLATED)
    assert Role.TRANSLATION.lexical_only


def test_a_single_language_folder_needs_prose_in_that_language(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path)
    repo.write("docs/index.md", ENGLISH)
    repo.write("docs/de/index.md", GERMAN)
    repo.write("docs/it/index.md", ENGLISH)  # "it": integration tests, in English
    t = Translations(tmp_path)
    assert t.language("docs/de/index.md", GERMAN) is not None
    assert t.language("docs/it/index.md", ENGLISH) is None


def test_embed_allow_brings_a_language_back(tmp_path: Path) -> None:
    RepoBuilder(tmp_path).write("docs/de/docs/tutorial/query.md", GERMAN)
    RepoBuilder(tmp_path).write("docs/en/docs/tutorial/query.md", ENGLISH)
    rules = TextRules.build(True, (), ("docs/de",))
    role, _why = classify("docs/de/docs/tutorial/query.md", GERMAN, rules,
                          translations=Translations(tmp_path))
    assert role is Role.EMBED
    assert translation_place("docs/de/docs/tutorial/query.md") == "docs/de"
    assert translation_place("README.zh-CN.md") == "README.zh-CN.md"
    assert translation_place("docs/en/index.md") is None
