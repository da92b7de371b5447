"""`line_matches` (the lines of a keyword hit holding the question's words) searches the
whole text once; it must give what searching each line did."""

from __future__ import annotations

import random

from ctxd.search.keyword import line_matches, term_pattern
from ctxd.search.models import LineMatch


def _per_line(text: str, first_line: int, terms: list[str]) -> tuple[LineMatch, ...]:
    """The former implementation: one search per line."""
    words = term_pattern(terms)
    out = []
    for n, line in enumerate(text.split("\n")):
        ranges = tuple((m.start() + 1, m.end() + 1) for m in words.finditer(line))
        if ranges:
            out.append(LineMatch(first_line + n, line, ranges))
    return tuple(out)


def test_one_search_over_the_text_finds_what_one_search_per_line_found() -> None:
    rng = random.Random(30)
    alphabet = ["retry", "Retries", "RETRY_after", "back", "off", "backoff", "x", "_", " ",
                "\n", "\r\n", "9", "é", "(", "\t", "reTRY2"]
    ascii_only = [a for a in alphabet if a.isascii()]
    for i in range(8000):
        pieces = alphabet if i % 4 == 0 else ascii_only  # mostly ASCII: the fast path
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        terms = rng.sample(["retry", "back", "off", "after", "x9", "retry_after", "ba"],
                           rng.randint(1, 3))
        first = rng.randint(1, 500)
        assert line_matches(text, first, term_pattern(terms)) == _per_line(
            text, first, terms), (text, terms)


def test_lines_and_columns_of_a_checkpoint() -> None:
    text = "def retry(n):\n    return backoff(n)\r\n\n# retry, retries\n"
    assert line_matches(text, 10, term_pattern(["retry", "backoff"])) == (
        LineMatch(10, "def retry(n):", ((5, 10),)),
        LineMatch(11, "    return backoff(n)\r", ((12, 19),)),
        LineMatch(13, "# retry, retries", ((3, 8),)),  # `retries` does not start with it
    )
