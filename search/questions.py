"""What a question asks for, by its words: the code, its tests, examples, prose, history.

Every ranking step that reads the question's form asks here, so one word list decides
each kind (hybrid ranking's demotions in `search.hybrid.rerank`, code before prose in
`search.prose.code_first`, the how-to case of `server.search_cases`):

- `asks_where_in_code`: "where is ... decided", "which function ...", unless the question
  names the documentation (`_DOCS_NAMED`);
- `asks_how_to`: a user's how-to ("how do I ...", "can I ...", "is there a way ..."),
  unless it asks where in the code;
- `wants_prose`: a usage question, one naming the documentation or its kinds of pages
  (`_DOCS_NAMED` and `_PAGES`: examples, install, FAQ, changelog ...), or one asked in
  another language than the code's, unless it asks for the place in the code
  (`_CODE_ASKED`);
- `asks_for_tests`, `asks_for_examples`, `asks_for_types`, `asks_for_history`: the
  question names tests, examples (samples, snippets, usage), types (interfaces, options,
  declarations) or releases, so those files are not demoted.
"""

from __future__ import annotations

import re

from ctxd.search.path_kinds import EXAMPLE_WORDS

__all__ = ["asks_for_examples", "asks_for_history", "asks_for_tests", "asks_for_types",
           "asks_how_to", "asks_where_in_code", "wants_prose"]

_DOCS_NAMED = (r"docs?|documentation|documented|guides?|readme|tutorials?|manual")
"""Words that name the documentation itself."""
_PAGES = (r"examples?|usage|install(ation|ing)?|getting started|quick ?start|walkthrough|"
          r"faq|changelog|release notes?")
"""Further kinds of pages a user reads (prose answers a question naming them)."""
_DOCS = re.compile(rf"\b({_DOCS_NAMED})\b", re.IGNORECASE)
_PROSE_ASKED = re.compile(rf"\b({_DOCS_NAMED}|{_PAGES})\b", re.IGNORECASE)

_WHERE_WORDS = r"\bwhere\b|\bwhich (function|method|class|module|file|code)\b"
_WHERE = re.compile(_WHERE_WORDS, re.IGNORECASE)
_CODE_ASKED = re.compile(
    rf"{_WHERE_WORDS}|\bimplement(ed|s|ation)?\b"
    r"|\bhow is (that|this|it) (done|achieved|decided|handled)\b", re.IGNORECASE)
"""A question about the place in the code, which wins over a user's form ("my token
disappeared ...; where is that decided?")."""

_HOW_TO = re.compile(
    r"\b(how (do|can|should) (i|we)|(can|do|should) i|i'm|i am|is there a way|how to)\b",
    re.IGNORECASE)
_USAGE = re.compile(
    r"\b(how (do|can|should|would) (i|you)|how to|(can|could|do|should) i|"
    r"i'm|i am|i've|i get|i want|my|is there( a| an| any)?|is it possible|"
    r"^does \S+ (\S+ )?(work|support|handle|run|accept|allow)|what('s| is) the "
    r"(quickest|easiest|best|recommended|fix|way)|which version|why would)\b", re.IGNORECASE)
"""The form of a user's question (first person, "is there", "does it support", "what is
the easiest way"): the user's side of the code, which documentation answers. Broader
than `_HOW_TO`, which lets examples and usage pages rank among the code."""

_TESTS = re.compile(r"\b(tests?|testing|unittests?|pytest|fixtures?|stubs?|pyi|d\.ts|typings?)\b",
                    re.IGNORECASE)
_EXAMPLES = re.compile(rf"\b({EXAMPLE_WORDS}|recipes?|usages?)\b", re.IGNORECASE)
_TYPES = re.compile(r"\b(types?|typings?|typed|interfaces?|declar\w*|signatures?|schemas?|"
                    r"options?|props|fields?|shapes?|defin(ed|es|itions?))\b", re.IGNORECASE)
_HISTORY = re.compile(r"\b(release[sd]?|version(s|ed)?|changelog|history|changed|"
                      r"deprecated|removed|introduced|since)\b", re.IGNORECASE)


def asks_where_in_code(query: str) -> bool:
    """"Where is ... decided", "which function ...": the answer is a place in the code,
    not a page of prose (unless the query names the documentation)."""
    return bool(_WHERE.search(query)) and not _DOCS.search(query)


def asks_how_to(query: str) -> bool:
    """A user's how-to question ("how do I turn off ...", "can I ...", "I'm running ...;
    is there a way ..."): usage documentation answers it, unless it asks where in the
    code (`asks_where_in_code` wins)."""
    return bool(_HOW_TO.search(query)) and not asks_where_in_code(query)


def wants_prose(query: str) -> bool:
    """Whether prose answers `query`: one not in English, or, unless it asks where in the
    code (`_CODE_ASKED`), a user's usage question or one naming the documentation."""
    from ctxd.search.translations import query_language

    if query_language(query) is not None:
        return True
    if _CODE_ASKED.search(query):
        return False
    return bool(_PROSE_ASKED.search(query) or _USAGE.search(query))


def asks_for_tests(query: str) -> bool:
    """The question names tests, fixtures or type stubs (`.pyi`, `.d.ts`, typings)."""
    return bool(_TESTS.search(query))


def asks_for_examples(query: str) -> bool:
    """Whether a question asks for an example, a sample or a usage by name ("where is X
    used to ..." asks for the code; "how do I use X" is a how-to question, which hybrid
    ranking also lets examples answer)."""
    return bool(_EXAMPLES.search(query))


def asks_for_types(query: str) -> bool:
    """The question is about what values look like: types, interfaces, declarations,
    signatures, options, fields, definitions (TypeScript's type modules answer it)."""
    return bool(_TYPES.search(query))


def asks_for_history(query: str) -> bool:
    """The question is about releases or changes (changelogs answer it)."""
    return bool(_HISTORY.search(query))
