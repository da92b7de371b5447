"""`search.lru.Lru`: bounded by count, or by weight when given `weigh`."""

from __future__ import annotations

from ctxd.search.lru import Lru


def test_entries_beyond_the_size_go_least_recently_used_first():
    lru: Lru[str, int] = Lru(2)
    lru.put("a", 1)
    lru.put("b", 2)
    assert lru.get("a") == 1  # "b" is now the least recently used
    lru.put("c", 3)
    assert (lru.get("a"), lru.get("b"), lru.get("c")) == (1, None, 3)


def test_a_weighed_cache_holds_what_fits_its_weight_and_counts_a_replaced_entry_once():
    lru: Lru[str, bytes] = Lru(10, len)
    lru.put("a", b"xxxx")
    lru.put("b", b"yyyy")
    lru.put("a", b"zzzz")  # replaced: 8 in all, not 12
    assert (lru.get("a"), lru.get("b")) == (b"zzzz", b"yyyy")
    lru.put("c", b"ww")  # 10: everything still fits
    assert lru.get("b") == b"yyyy"
    lru.put("d", b"v")  # 11: the least recently used ("a") goes
    assert (lru.get("a"), lru.get("b"), lru.get("c"), lru.get("d")) == (None, b"yyyy", b"ww", b"v")
    lru.clear()
    lru.put("e", b"0123456789")
    assert lru.get("e") == b"0123456789"
