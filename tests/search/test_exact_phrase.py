"""Which phrases of a query hybrid search looks up verbatim (`search.exact_phrase`)."""

from __future__ import annotations

from ctxd.search.exact_phrase import lexical_query, phrases
from ctxd.search.lexical.query import parse


def test_quoted_parts_are_the_phrases() -> None:
    assert phrases('why "There was an error parsing the body" here') == [
        "There was an error parsing the body"]
    assert phrases("“Read timed out” and `Max retries exceeded`") == [
        "Read timed out", "Max retries exceeded"]


def test_a_pasted_message_and_its_part_before_a_filled_in_value() -> None:
    assert phrases("Request failed with status code 404") == [
        "Request failed with status code 404", "Request failed with status code"]
    assert phrases("There was an error parsing the body.") == [
        "There was an error parsing the body"]
    assert phrases("KeyError: 'user_id' not found in session store") == [
        "KeyError: 'user_id' not found in session store", "not found in session store"]


def test_questions_and_short_queries_are_not_looked_up() -> None:
    assert phrases("how are redirects followed") == []
    assert phrases("where is the retry backoff computed") == []
    assert phrases("parse the cookie header?") == []
    assert phrases("retry backoff") == []
    assert phrases("x " * 200) == []


def test_the_lexical_query_is_one_literal() -> None:
    q = lexical_query('a "quoted" path\\to (x)')
    parse(q)  # valid Zoekt syntax
    assert q.startswith('case:no "')
