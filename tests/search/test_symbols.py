"""Symbol ranking (pure) and symbol search over a real store."""

from __future__ import annotations

import pytest

from ctxd.indexer.models import Symbol
from ctxd.indexer.store.location import StoreOptions
from ctxd.indexer.store.open import open_store
from ctxd.indexer.store.sqlite.store import FileRecord
from ctxd.search.symbols import (
    fuzzy_score,
    rank_symbol,
    search_symbols,
    word_starts,
    word_starts_by_chars,
)


def test_tiers_exact_prefix_substring_fuzzy():
    assert rank_symbol("calc", "calc")[0] == 0
    assert rank_symbol("calc", "calculate_total")[0] == 1
    assert rank_symbol("calc", "recalculate")[0] == 2
    assert rank_symbol("calc", "compute_all_costs")[0] == 3
    assert rank_symbol("calc", "total") is None


def test_case_exact_match_ranks_first():
    assert rank_symbol("Cart", "Cart") < rank_symbol("Cart", "cart")


def test_word_starts_camel_and_snake():
    assert word_starts("getCharacterCellSize") == {0, 3, 12, 16}
    assert word_starts("get_character_cell_size") == {0, 4, 14, 19}
    assert word_starts("HTTPResponse") == {0, 4}


def test_fuzzy_prefers_word_starts():
    assert fuzzy_score("gccs", "get_character_cell_size") > fuzzy_score("gccs", "agcxcxs")
    assert fuzzy_score("xyz", "abc") is None


@pytest.fixture
def store(isolated_env, store_url):
    s = open_store(isolated_env / "index.db", StoreOptions(url=store_url))
    repo = s.upsert_repo("/src/shop", {}, "2026-01-01T00:00:00Z")
    syms = [
        Symbol("AuthService", "class", 15, 40),
        Symbol("MockAuthService", "class", 8, 20, container="tests"),
        Symbol("AuthServiceConfig", "class", 5, 9),
        Symbol("calculate_total", "function", 42, 50),
        Symbol("calc_discount", "method", 88, 99, container="PriceCalculator"),
        Symbol("recalculate", "method", 120, 130, container="Cart"),
        Symbol("calc", "function", 5, 7),
    ]
    for i, sym in enumerate(syms):
        s.replace_file(repo.id, FileRecord(f"f{i}.py", 1, 1, str(i), "python", 200), "x", [],
                       [sym], "2026-01-01T00:00:00Z")
    yield s
    s.close()


def test_search_ranks_as_documented(store):
    names = [i.name for i in search_symbols(store, "calc")]
    assert names[0] == "calc"
    assert names.index("calc_discount") < names.index("recalculate")
    assert names.index("calculate_total") < names.index("recalculate")


def test_kind_filter_and_container(store):
    items = search_symbols(store, "AuthService", kinds=["class"])
    assert [i.name for i in items] == ["AuthService", "AuthServiceConfig", "MockAuthService"]
    assert items[2].container == "tests"
    assert search_symbols(store, "calc", kinds=["method"])[0].name == "calc_discount"


def test_qualified_query_uses_the_container(store):
    assert [i.name for i in search_symbols(store, "Cart.recalc")] == ["recalculate"]
    # Rust/C++/PHP notation (axum's `Router::merge` found only Markdown headings)
    assert [i.name for i in search_symbols(store, "Cart::recalc")] == ["recalculate"]


def test_like_wildcards_in_the_query_are_literal(store):
    assert search_symbols(store, "%") == []
    assert search_symbols(store, "calc_") [0].name == "calc_discount"


def test_word_starts_of_ascii_names_follow_the_character_rules():
    import random
    import string

    rng = random.Random(18)
    alphabet = string.ascii_letters + string.digits + "_-.$"
    names = ["".join(rng.choices(alphabet, k=rng.randint(1, 24))) for _ in range(20_000)]
    names += ["getHTTPResponse", "HTTPResponse", "__init__", "a.b-c$d", "x2Y", "ABCdef"]
    assert [word_starts(n) for n in names] == [word_starts_by_chars(n) for n in names]
