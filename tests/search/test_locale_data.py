"""One language's locale file (dayjs's `src/locale/ru.js`, one of 140 alike) answers a
question about that language only: `path_kinds.is_locale_data` and
`questions.names_language`; `hybrid.rerank` demotes such files, `explain` says so, and
`legs.semantic_leg` keeps them from crowding the code out of the semantic candidates
(`locale_crowded`, `thin_locales`). A question asking for TypeScript's declarations or
Python's stubs does not demote them as test support (`asks_for_stubs`). Pure: strings and
hits in, order out."""

from __future__ import annotations

from ctxd.search.explain_rank import explain_hit
from ctxd.search.hybrid import FusionOptions, rank_hybrid
from ctxd.search.legs import locale_crowded, thin_locales
from ctxd.search.models import Hit, MatchSource
from ctxd.search.path_kinds import is_locale_data
from ctxd.search.questions import asks_for_stubs, names_language

SEM = MatchSource.SEMANTIC
LOCALES = ["ru", "de", "en-gb", "zh-hk", "sr-cyrl", "tl-ph", "fo", "es-do", "pt-br", "ja"]


def hit(path: str, score: float) -> Hit:
    return Hit("r", path, "javascript", 1, 9, score, (SEM,))


def test_locale_files_by_folder_and_name() -> None:
    for path in ("dayjs/src/locale/ru.js", "src/locale/en-gb.js", "src/locale/sr-cyrl.js",
                 "src/locale/tl-ph.js", "lib/locales/it.ts", "app/i18n/zh_CN.py",
                 "src/nls/fr.js"):
        assert is_locale_data(path), path
    for path in ("src/locale/index.js", "src/locale.js", "src/ru.js", "src/i18n/all.js",
                 "docs/de/index.md", "src/locale/utils.js", "locale/README"):
        assert not is_locale_data(path), path


def test_a_question_names_a_language() -> None:
    assert names_language("Russian month names in the genitive case")
    assert names_language("the British English date format")
    assert not names_language("where is a locale object registered globally")
    assert not names_language("where are format tokens such as YYYY replaced")


def test_locale_files_go_below_the_code_unless_a_language_is_named() -> None:
    legs = {"semantic": [*(hit(f"src/locale/{c}.js", 0.95 - i / 100)
                           for i, c in enumerate(LOCALES)),
                         hit("src/index.js", 0.80)]}
    q = "where are format tokens such as YYYY, MM and HH replaced in the output string"
    assert rank_hybrid(q, legs)[0].path == "src/index.js"
    assert not [p for p in explain_hit(q, legs, hit("src/index.js", 0.8), FusionOptions())
                if "locale" in p.feature]
    parts = explain_hit(q, legs, hit("src/locale/ru.js", 0.95), FusionOptions())
    assert [p.value for p in parts if "locale" in p.feature] == [0.5]
    named = "Russian month names and the plural rule for relative time"
    assert rank_hybrid(named, legs)[0].path == "src/locale/ru.js"


def test_a_crowded_semantic_leg_is_thinned() -> None:
    deep = [*(hit(f"pkg{i}/locale/{c}.js", 0.9) for i in range(3) for c in LOCALES[:5]),
            *(hit(f"src/plugin/p{i}.js", 0.5) for i in range(20))]
    q = "where are format tokens replaced"
    assert locale_crowded(deep[:20], q)
    assert not locale_crowded(deep[:20], "Russian month names")
    assert not locale_crowded(deep[15:35], q)
    thinned = thin_locales(deep, 20)
    assert len(thinned) == 20
    assert sum(is_locale_data(h.path) for h in thinned) == 5
    assert thinned[:5] == deep[:5]  # the nearest locale files stay, in order


def test_a_typescript_question_lets_declaration_files_answer() -> None:
    assert asks_for_stubs("TypeScript declaration of the input types dayjs() accepts")
    assert asks_for_stubs("the .pyi stub for the client")
    assert not asks_for_stubs("where are format tokens replaced")
    legs = {"semantic": [hit("types/index.d.ts", 0.9), hit("src/index.js", 0.8)]}
    q = "TypeScript declaration of the input types the dayjs() function accepts"
    assert rank_hybrid(q, legs)[0].path == "types/index.d.ts"
    assert not [p for p in explain_hit(q, legs, hit("types/index.d.ts", 0.9), FusionOptions())
                if "stub" in p.feature]
    other = "where are the input types of the dayjs() function checked"
    assert rank_hybrid(other, legs)[0].path == "src/index.js"


def test_a_leg_of_locale_files_only_keeps_its_depth() -> None:
    only = [hit(f"pkg{i}/locale/{c}.js", 0.9 - i / 100) for i in range(8) for c in LOCALES]
    thinned = thin_locales(only, 20)
    assert thinned == only[:20]  # nothing else to let in: the same leg
