"""One result per definition (`search/merge.py`): pure merging of a file's hits."""

from __future__ import annotations

from ctxd.search.merge import MAX_DEFINITION_GAP, merge_overlaps, merge_ranked
from ctxd.search.models import Hit, MatchSource

SEM, KW = MatchSource.SEMANTIC, MatchSource.KEYWORD


def part(a: int, b: int, symbol: str | None, score: float, src=SEM) -> Hit:
    return Hit("r", "app.py", "python", a, b, score, (src,), symbol=symbol,
               snippet="\n".join(f"l{i}" for i in range(a, b + 1)))


def test_adjacent_parts_of_one_definition_separated_by_a_blank_line_merge():
    (m,) = merge_overlaps([part(10, 20, "App.run", 0.4), part(22, 30, "App.run", 0.9, KW)])
    assert (m.start_line, m.end_line, m.score, m.symbol) == (10, 30, 0.9, "App.run")
    assert m.sources == (SEM, KW)
    lines = m.snippet.split("\n")
    assert len(lines) == 21 and lines[11] == "" and lines[12] == "l22" and lines[0] == "l10"


def test_other_definitions_and_far_parts_stay_apart():
    far = 20 + MAX_DEFINITION_GAP + 2
    assert len(merge_overlaps([part(10, 20, "App.run", 0.4), part(far, 40, "App.run", 0.9)])) == 2
    assert len(merge_overlaps([part(10, 20, "App.run", 0.4), part(22, 30, "App.stop", 0.9)])) == 2
    assert len(merge_overlaps([part(10, 20, None, 0.4), part(22, 30, None, 0.9)])) == 2


def test_a_better_hit_inside_another_keeps_the_outer_snippet_numbering():
    (m,) = merge_overlaps([part(1, 10, None, 0.2), part(4, 6, None, 0.8)])
    assert (m.start_line, m.end_line, m.score) == (1, 10, 0.8)
    assert m.snippet.split("\n")[0] == "l1" and len(m.snippet.split("\n")) == 10


def test_merge_ranked_orders_best_first():
    out = merge_ranked([part(1, 2, "a", 0.1), part(50, 60, "b", 0.7),
                        Hit("r", "b.py", "python", 1, 2, 0.5, (SEM,))])
    assert [(h.path, h.start_line) for h in out] == [("app.py", 50), ("b.py", 1), ("app.py", 1)]


def test_a_lexical_hit_merged_with_a_checkpoint_keeps_each_text_at_its_own_lines():
    """A lexical hit's snippet is its first context block, not its range: merged with a
    checkpoint of the same file, each text stays numbered from its own first line."""
    from ctxd.search.models import Block

    lexical = Hit("r", "f.py", "python", 1, 30, 1.0, (MatchSource.LEXICAL,),
                  snippet="L1\nL2", blocks=(Block(1, ("L1", "L2")),))
    part = Hit("r", "f.py", "python", 20, 22, 2.0, (MatchSource.SEMANTIC,),
               snippet="C20\nC21\nC22")
    (merged,) = merge_overlaps([lexical, part])
    assert (merged.start_line, merged.end_line, merged.score) == (1, 30, 2.0)
    assert merged.blocks == (Block(1, ("L1", "L2")), Block(20, ("C20", "C21", "C22")))


def test_a_page_fills_up_when_merges_take_more_than_half_the_raw_hits():
    """Keyword and semantic pages fetch twice their size and merge; when one long
    function's parts take more than that, they fetch more instead of a short last page."""
    from ctxd.server.search_cases import merged_page

    parts = [part(i * 10 + 1, i * 10 + 9, "f", 1.0 - i * 0.001) for i in range(30)]
    others = [Hit("r", f"b{j}.py", "python", 1, 5, 0.5 - j * 0.01, (SEM,), symbol=f"g{j}")
              for j in range(10)]
    page = merged_page(lambda k: [*parts, *others][:k], 0, 5)
    assert [h.path for h in page] == ["app.py", "b0.py", "b1.py", "b2.py", "b3.py"]
