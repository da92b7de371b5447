"""Translated documentation: the same page in another language, recognised by place and text.

A project that translates its docs holds each page many times (FastAPI: 15 languages, 58%
of its checkpoints), and the copies crowd the English page and the code out of every
answer. `indexer.walk.textclass` keeps what this module recognises greppable but out of
the embeddings (`Role.TRANSLATION`); a question asked in a translation's own language
still finds it (`search.translations`).

`Translations(root).language(rel, text)` returns the language code of a translated page,
or None, by the conventions translation tools use:

- a folder named for a language beside another one, or under a folder that holds
  translations: mkdocs `docs/<lang>/`, Docusaurus `i18n/<lang>/`, Sphinx
  `locale/<lang>/LC_MESSAGES/` (any code there: a gettext catalogue), Hugo
  `content/<lang>/`, `translations/<lang>/`, ...;
- a file named for a language: `README.zh-CN.md`, `README_ja.md`, `index.de.md`, ant-design's
  `index.zh-CN.md` beside `index.en-US.md`, vConsole's `tutorial_CN.md` (a country for its
  language), `README_ZH.md`, when a page of the same stem sits beside it;
- the language of the prose (`prose_language`: the script, or the share of a language's
  commonest words) confirms a weaker sign (a single language folder, a language suffix
  without a sibling page) and overrules a folder name that reads as a language code but
  holds English.

English is the original: a page in English is never a translation, so a project whose
only docs are in one language keeps them all, and so does one whose docs are not in
English and not translated (nothing names a language). Only documentation formats are
considered (`PAGE_SUFFIXES`); code never is.

Invariants: `language` reads no file; it lists a folder at most once per repository
(cached), and looks at the first `SAMPLE` characters of the text.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["LANGUAGES", "PAGE_SUFFIXES", "Translations", "gettext_language", "language_code",
           "prose_language", "suffix_language", "translation_place"]

LANGUAGES = frozenset({
    "af", "am", "ar", "az", "be", "bg", "bn", "bs", "ca", "cs", "cy", "da", "de", "el", "en",
    "eo", "es", "et", "eu", "fa", "fi", "fil", "fr", "ga", "gl", "gu", "he", "hi", "hr", "hu",
    "hy", "id", "is", "it", "ja", "ka", "kk", "km", "kn", "ko", "ky", "lo", "lt", "lv", "mk",
    "ml", "mn", "mr", "ms", "my", "nb", "ne", "nl", "nn", "no", "pa", "pl", "ps", "pt", "ro",
    "ru", "si", "sk", "sl", "sq", "sr", "sv", "sw", "ta", "te", "tg", "th", "tk", "tl", "tr",
    "uk", "ur", "uz", "vi", "yo", "zh", "zu"})
"""ISO 639-1 codes (and `fil`) that name a translation folder or suffix."""
_REGION = re.compile(r"(?P<lang>[a-z]{2,3})(?:[-_](?P<region>[a-z]{2}|[a-z]{4}|\d{3}))?",
                     re.IGNORECASE)
"""`de`, `pt-BR`, `pt_BR`, `zh-Hans`, `zh-hant`, `es-419`."""
PAGE_SUFFIXES = (".md", ".mdx", ".markdown", ".rst", ".txt", ".adoc", ".po", ".pot",
                 ".ipynb", ".html", ".htm")
"""Formats of documentation pages (and Sphinx/gettext catalogues)."""
_HOLDERS = frozenset({"i18n", "l10n", "locale", "locales", "translations", "translated",
                      "lang", "langs", "languages"})
"""Folders whose children are named for languages."""
_SUFFIXED = re.compile(r"^(?P<stem>.+?)(?P<sep>[._-])(?P<code>[a-z]{2,3}(?:[-_](?:[A-Za-z]{2}|"
                       r"[A-Za-z]{4}|\d{3}))?|[A-Z]{2,3}(?:[-_][A-Z]{2})?)"
                       r"(?P<ext>\.[A-Za-z0-9]+)$")
"""`README.zh-CN.md`, `index_ja.rst`, and in capitals `README_ZH.md`, `README_CN.md`."""
_COUNTRIES = {"cn": "zh", "tw": "zh", "hk": "zh", "jp": "ja", "kr": "ko", "br": "pt"}
"""Countries a file name writes for its language (`README_CN.md`, `README-JP.md`,
`tutorial_TW.md`): only as a file's suffix, where no language has the code."""
_CAPITAL_WORDS = frozenset({"AM", "BE", "HE", "HI", "IS", "MY", "NO"})
"""English words that are language codes in capitals: `WHAT_IS.md`, `TO_BE.md` name none."""
SAMPLE = 8000
"""Characters of a page that the language check looks at."""


def language_code(name: str) -> str | None:
    """The language a folder or suffix names (`pt-BR` -> `pt`, `zh_Hant` -> `zh`), or None."""
    m = _REGION.fullmatch(name)
    if m is None:
        return None
    lang = m["lang"].lower()
    if lang not in LANGUAGES:
        return None
    region = m["region"]
    if region and not (region.isupper() or region.isdigit() or region.lower() in
                       {"hans", "hant", "latn", "cyrl", "cn", "tw", "hk", "br", "pt", "us",
                        "gb", "es", "mx", "ar", "fr", "ca", "de", "at", "ch", "jp", "kr",
                        "ru", "ua", "in", "id", "it", "nl", "be", "se", "no", "dk", "fi",
                        "pl", "cz", "tr", "vn", "th", "sg", "my", "au", "nz", "ie", "za"}):
        return None
    if lang == "no" and region is None:
        return "no"
    return lang


def translation_place(rel: str) -> str | None:
    """What `walk.embed_allow` names to bring a translated page back: its language folder
    (`docs/de` for `docs/de/docs/index.md`), or the file itself (`README.zh-CN.md`)."""
    parts = rel.split("/")
    for i, seg in enumerate(parts[:-1]):
        if language_code(seg) not in (None, "en"):
            return "/".join(parts[: i + 1])
    return rel if suffix_language(parts[-1]) not in (None, "en") else None


def suffix_language(name: str) -> str | None:
    """The language a file name's suffix names (`README.zh-CN.md`, `index_ja.rst`,
    `README_CN.md`, `README-JP.md` -> `zh`, `ja`, `zh`, `ja`), or None."""
    found = _suffix(name)
    return found[1] if found is not None else None


def _suffix(name: str) -> tuple[str, str, str] | None:
    """(stem, language, extension) of a file named for a language, or None. A country
    stands for its language (`_COUNTRIES`); `use_in_CN.md` reads as `use_in` in `CN`."""
    m = _SUFFIXED.match(name)
    if m is None:
        return None
    stem, code, ext = m["stem"], m["code"], m["ext"]
    if code in _CAPITAL_WORDS:
        return None
    lang = _COUNTRIES.get(code.lower()) or language_code(code)
    if lang is None and len(parts := re.split(r"[-_]", code)) == 2:
        stem, lang = f"{stem}{m['sep']}{parts[0]}", _COUNTRIES.get(parts[1].lower())
    return (stem, lang, ext) if lang is not None else None


_CATALOGUE_LOCALE = re.compile(r"[a-z]{2,3}(?:[-_@][A-Za-z0-9]{2,8})*", re.IGNORECASE)


def gettext_language(parts: list[str]) -> str | None:
    """The language of a gettext catalogue `<locale>/LC_MESSAGES/<domain>.po` (a path's
    `parts`), whatever its code: `language_code`'s (`pt_BR` -> `pt`) or the folder's own,
    lowercased (humanize's Klingon `tlh`, `sr@latin`); None for any other file."""
    if len(parts) < 3 or parts[-2] != "LC_MESSAGES" or not parts[-1].lower().endswith(".po"):
        return None
    seg = parts[-3]
    if not _CATALOGUE_LOCALE.fullmatch(seg):
        return None
    return language_code(seg) or re.split(r"[-_@]", seg)[0].lower()


# -- the language of prose -----------------------------------------------------------------

_SCRIPTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("ja", re.compile(r"[\u3040-\u30ff]")),  # kana first: Japanese also writes Han
    ("ko", re.compile(r"[\uac00-\ud7af\u1100-\u11ff]")),
    ("zh", re.compile(r"[\u4e00-\u9fff\u3400-\u4dbf]")),
    ("ru", re.compile(r"[\u0400-\u04ff]")),
    ("ar", re.compile(r"[\u0600-\u06ff]")),
    ("he", re.compile(r"[\u0590-\u05ff]")),
    ("hi", re.compile(r"[\u0900-\u097f]")),
    ("th", re.compile(r"[\u0e00-\u0e7f]")),
    ("el", re.compile(r"[\u0370-\u03ff]")),
    ("bn", re.compile(r"[\u0980-\u09ff]")),
    ("ta", re.compile(r"[\u0b80-\u0bff]")),
)
"""Scripts that are not Latin, and a language that writes each (the script is the sign;
the code only has to be other than `en`)."""
_FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset("the and of to is in that it for you with are this be on as can a an or "
                    "does do how what when where which not from by at we i if".split()),
    "de": frozenset("der die das und ist nicht mit ein eine sie auch für den dem zu sich "
                    "wird werden oder wenn wie ich kann".split()),
    "fr": frozenset("le la les et est des une pour dans que vous avec sur pas ce qui sont "
                    "du au comment je".split()),
    "es": frozenset("el la los las y es que en una para con por se del como su puedes "
                    "al cómo".split()),
    "pt": frozenset("o os as e é que em uma para com por se do da não você dos das "
                    "pode como".split()),
    "it": frozenset("il lo la gli le e è che di un una per con non sono del della "
                    "puoi".split()),
    "nl": frozenset("de het een en is van dat niet met voor op zijn je ook te".split()),
    "tr": frozenset("bir ve bu için ile da de olarak gibi daha çok ya değil olan".split()),
    "pl": frozenset("i w z na się nie że do jest to jak dla są po".split()),
    "id": frozenset("yang dan di dengan untuk ini dari tidak akan dalam ke pada adalah "
                    "anda".split()),
    "vi": frozenset("và của là có được các cho trong không một những này với".split()),
}
"""The commonest words of languages written in Latin script: a page in one of them uses
its own far more than English's."""
_WORDS = re.compile(r"[^\W\d_]+", re.UNICODE)
_CODE_BLOCK = re.compile(r"```.*?```|~~~.*?~~~|<[^>\n]{0,200}>|`[^`\n]*`|https?://\S+",
                         re.DOTALL)


def prose_language(text: str) -> str | None:
    """The language `text` (prose, maybe with code blocks) is written in, as a code, or
    None when there is too little prose to tell. Code blocks, inline code, tags and URLs
    are left out; a non-Latin script that makes up a fifth of the letters decides;
    otherwise the language whose commonest words are most frequent does."""
    sample = _CODE_BLOCK.sub(" ", text[:SAMPLE])
    words = _WORDS.findall(sample)
    letters = sum(len(w) for w in words)
    if letters < 40:
        return None
    for code, script in _SCRIPTS:
        if len(script.findall(sample)) >= letters * 0.2:
            return code
    lower = [w.lower() for w in words]
    if len(lower) < 20:
        return None
    counts = {lang: sum(1 for w in lower if w in fw) for lang, fw in _FUNCTION_WORDS.items()}
    best = max(counts, key=lambda k: counts[k])
    if counts[best] < len(lower) * 0.05:
        return None
    distinct = {w for w in lower if w in _FUNCTION_WORDS[best] and len(w) >= 2}
    if best != "en" and len(distinct) < 2:
        return None  # one-letter words ("a", "e") alone are no sign
    return best


# -- places --------------------------------------------------------------------------------


class Translations:
    """Which pages of one repository are translations (folder listings cached)."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self._names: dict[str, frozenset[str]] = {}

    def language(self, rel: str, text: str) -> tuple[str, str] | None:
        """(language code, why) when the page at repo-relative `rel` with `text` is a
        translation (module docstring), else None."""
        if not rel.lower().endswith(PAGE_SUFFIXES):
            return None
        parts = rel.split("/")
        if (catalogue := gettext_language(parts)) is not None:
            return None if catalogue == "en" else (
                catalogue, f"translation ({'/'.join(parts[:-2])}/, a gettext catalogue)")
        found = self._by_folder(parts) or self._by_suffix(parts)
        if found is None:
            return None
        code, why, strong = found
        if code == "en":
            return None
        prose = prose_language(text) if not rel.lower().endswith((".po", ".pot")) else None
        if prose == "en":
            return None  # a folder named like a code that holds English
        if not strong and (prose is None or prose == "en"):
            return None
        return code, why

    def _by_folder(self, parts: list[str]) -> tuple[str, str, bool] | None:
        """A folder named for a language: strong when a folder above holds translations
        or a sibling folder is named for another language."""
        for i, seg in enumerate(parts[:-1]):
            code = language_code(seg)
            if code is None:
                continue
            parent = parts[:i]
            where = "/".join(parts[: i + 1]) + "/"
            if any(p.lower() in _HOLDERS for p in parent):
                return code, f"translation ({where})", True
            siblings = [n for n in self._listing(parent)
                        if n != seg and language_code(n) not in (None, code)]
            if siblings:
                return code, f"translation ({where}; {siblings[0]}/ beside it)", True
            return code, f"translation ({where})", False
        return None

    def _by_suffix(self, parts: list[str]) -> tuple[str, str, bool] | None:
        """A file named `<stem>.<lang>.<ext>` or `<stem>_<lang>.<ext>`: strong when a page
        of the same stem (untagged or in another language) sits beside it."""
        found = _suffix(parts[-1])
        if found is None:
            return None
        stem, code, ext = found
        for n in self._listing(parts[:-1]):
            if n == parts[-1]:
                continue
            if n.lower() in (f"{stem}{ext}".lower(), f"{stem}.md".lower()):
                return code, f"translation of {n}", True
            other = _suffix(n)
            if other and other[0] == stem and other[1] != code:
                return code, f"translation ({n} beside it)", True
        return code, "translation (language suffix)", False

    def _listing(self, parts: list[str]) -> frozenset[str]:
        key = "/".join(parts)
        names = self._names.get(key)
        if names is None:
            names = frozenset()
            if self.root is not None:
                try:
                    names = frozenset(os.listdir(self.root.joinpath(*parts)))
                except OSError:
                    pass
            self._names[key] = names
        return names
