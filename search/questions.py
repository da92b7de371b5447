"""What a question asks for, by its words: the code, its tests, examples, prose, history.

Every ranking step that reads the question's form asks here, so one word list decides
each kind (hybrid ranking's demotions in `search.hybrid.rerank`, code before prose in
`search.prose.code_first`, the how-to case of `server.search_cases`):

- `asks_where_in_code`: "where is ... decided", "which function ...", unless the question
  names the documentation (`_DOCS_NAMED`); "where do I change ..." is a user's how-to;
- `asks_how_to`: a user's how-to however phrased ("how do I ...", "can I ...", "I want
  to ...", "need to ...", "is there a way ...", "what's the recommended way ...", "how can
  X be done", "tutorial for ..."), unless it asks where in the code;
- `asks_task`: a task without a question word ("serve a directory of images", "adding a
  middleware that ..."), known by the imperative's or gerund's place, not by a list of
  verbs; as often a description of what the code does, so weaker than a how-to;
- `wants_prose`: a usage question, a how-to, a task, one naming the documentation or its
  kinds of pages (`_DOCS_NAMED` and `_PAGES`: usage, install, FAQ, changelog ...; not an
  example, which is as often a program: "example program that uses option groups"), or
  one asked in another language than the code's, unless it asks for the place in the
  code (`_CODE_ASKED`);
- `asks_for_tests`, `asks_for_examples`, `asks_for_types`, `asks_for_history`: the
  question names tests, examples (samples, snippets, usage), types (interfaces, options,
  declarations) or releases, so those files are not demoted;
- `asks_about_tests`: the tests are the question's subject ("tests for X", "tests that
  ...", "where are the tests of ...", "which tests ..."), so test files go before the
  code they test.
"""

from __future__ import annotations

import re

from ctxd.search.path_kinds import EXAMPLE_WORDS

__all__ = ["asks_about_tests", "asks_for_examples", "asks_for_history", "asks_for_stubs",
           "asks_for_tests", "asks_for_types", "asks_how_to", "asks_task", "asks_where_in_code",
           "names_language", "wants_prose"]

_DOCS_NAMED = (r"docs?|documentation|documented|guides?|readme|tutorials?|manual")
"""Words that name the documentation itself."""
_PAGES = (r"usage|install(ation|ing)?|getting started|quick ?start|walkthrough|"
          r"faq|changelog|release notes?")
"""Further kinds of pages a user reads (prose answers a question naming them)."""
_DOCS = re.compile(rf"\b({_DOCS_NAMED})\b", re.IGNORECASE)
_PROSE_ASKED = re.compile(rf"\b({_DOCS_NAMED}|{_PAGES})\b", re.IGNORECASE)

_WHERE_WORDS = r"\bwhere\b|\bwhich (function|method|class|module|file|code)\b"
_WHERE = re.compile(_WHERE_WORDS, re.IGNORECASE)
_USER_WHERE = re.compile(
    r"\bwhere (do|can|could|should|would|must) i (?!(find|see|look|locate|spot|read)\b)",
    re.IGNORECASE)
""""Where do I change ...", "where should I put ...": a user's how-to, not a place in
the code ("where do I find the retry loop?" still asks for the place)."""
_CODE_ASKED = re.compile(
    rf"{_WHERE_WORDS}|\bimplement(ed|s|ation)?\b"
    r"|\bhow is (that|this|it) (done|achieved|decided|handled)\b", re.IGNORECASE)
"""A question about the place in the code, which wins over a user's form ("my token
disappeared ...; where is that decided?")."""

_HOW_TO = re.compile(
    r"\b(how (do|can|could|should|would|might) (i|we|you|one)|how to|"
    r"how (can|could|should|might)( \S+){1,6} be \w+ed|"
    r"(can|could|do|should|would|may|must) i|(can|should) we|(can|could) you|i'm|i am|"
    r"i (want|need|would like|wish|tried|try)|i'd like|we (want|need|would like) to|"
    r"(want|need|wish) to|is it possible|is it recommended|"
    r"(is|are) there (a|an|any)? ?(way|option|setting|switch|recipe)s?|any way|"
    r"a way to|ways to|steps to|"
    r"what('s| is)? the (best|recommended|easiest|simplest|quickest|right|proper|correct|"
    r"preferred|idiomatic|usual|standard|cleanest) (way|approach|practice)|"
    r"(best|recommended|easiest|simplest|right|proper|correct|preferred|idiomatic) "
    r"(way|approach)|"
    r"what (should|do|can|must) i|where (do|can|could|should|must) i|"
    r"tutorials?|guides? (to|for|on)|walkthrough|how-to|"
    r"recipes? for)\b",
    re.IGNORECASE)
"""A user's how-to in words: first person ("how do I", "can I", "I want to", "need to",
"what should I do", "where do I change ..."), a way asked for ("is there a way", "any
way", "what's the best / recommended way", "is it possible"), a modal passive ("how can
a parameter be restricted ..."), or a guide named ("tutorial", "guide to", "example of")."""

_TASK_HEAD = re.compile(r"^\W*([A-Za-z]+)\b(?: +([^\s,;:.?!]+))?(?: +([^\s,;:.?!]+))?")
_OBJECT = frozenset(
    """a an the my our your their its every each all any some this that these those one
    only multiple several many no""".split())
"""Words that open a verb's object ("serve *a* directory", "allow *my* frontend")."""
_PARTICLE = frozenset("up off on down".split())
"""A phrasal verb's particle ("set up logging", "turn off colours", "shut down the
server")."""
_NOT_VERBS = frozenset(
    """how what where which why when who whom whose does do did is are was were am be been
    can could should would will shall may might must has have had let lets i we you it
    they he she me us them the a an my our your their its this that these those there here
    if in on at for from with without within inside outside by of to into onto and or but
    not no nor each every all any some one only after before while during until unless
    since once then than as like per via through across between under over also just even
    still so""".split())
"""First words that do not open an imperative: question words, auxiliaries, pronouns,
determiners, prepositions and conjunctions."""
_ING_NOUNS = frozenset(
    """string strings thing things something anything everything nothing ring rings
    spring king ceiling during morning evening""".split())
_VERBS = frozenset(
    """accept access add allow apply attach authenticate avoid block build bundle cache call
    cancel catch change check clean close collect combine compress configure connect
    convert copy count create customize debug declare decode define delete deploy detect
    disable display document download drop embed emit enable encode encrypt ensure
    escape expose extend extract fetch filter find force format forward generate get give
    group handle hash hide ignore import include inject install integrate intercept keep
    limit list listen load lock log make manage map mark measure merge migrate mock modify
    monitor mount move open override paginate parse pass patch persist pin point post
    prevent print process protect provide publish push put query raise read receive
    redirect refresh register reject reload remove rename render replace report require
    reset resize restrict retry return reuse rotate route run save schedule send serve set
    share show sign skip sort split start stop store stream subscribe support switch sync
    throttle trace track transform translate trigger turn update upgrade upload use
    validate verify wait watch wrap write""".split())
"""Verbs a task commonly opens with ("stream events to the browser", "accept JSON
requests that ..."), for a task whose object opens with no determiner."""
_LABEL = re.compile(r"^[^:?]{0,60}:(?!//)")
"""A leading "topic:" ("calling a template macro: bind ...") names a subject, not a task."""


_MODAL_HOW = re.compile(r"^\W*how (can|could|should|might) (?!(i|we|you|one)\b)",
                        re.IGNORECASE)
""""How can a path operation return 201 ...": what a user's code can do, or what the
library can; a task, not a how-to in words."""


def _task_shaped(query: str) -> bool:
    """An imperative or a gerund at the start, with no question word: "serve a directory
    of images", "return a 404 ...", "allow my frontend ...", "set up logging",
    "adding a middleware ...", "stream events to the browser"; or "how can X ...". The
    verb is known by its place (a first word that is no function word, then an object's
    determiner or a particle), or, before an object with no determiner, as one of the
    verbs tasks commonly open with (`_VERBS`)."""
    if _LABEL.match(query):
        return False
    if _MODAL_HOW.match(query):
        return True
    m = _TASK_HEAD.match(query)
    if m is None:
        return False
    first = m.group(1).lower()
    second, third = (m.group(2) or "").lower(), (m.group(3) or "").lower()
    if first in _NOT_VERBS or (m.group(1)[1:] != m.group(1)[1:].lower()):
        return False  # a function word, or a name (`HTTPBasic`, `QueryParams`)
    if first.endswith("ing") and len(first) > 5 and first not in _ING_NOUNS:
        return bool(second)
    if second.isdigit():
        return True  # "return 404 ..."
    if second in _OBJECT or (second in _PARTICLE and bool(third)):
        return True
    # a short query opening with a common verb is as often a name (`Query user`)
    return (first in _VERBS and bool(second) and second not in _NOT_VERBS
            and len(query.split()) >= 4)


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
_ABOUT_TESTS = re.compile(
    r"^\W*(?:the\s+)?(?:unit\s+|integration\s+|end-to-end\s+|e2e\s+)?tests?\s+"
    r"(?:for|of|that|which|checking|covering|verifying|about|on|exercising|asserting)\b"
    r"|\bwhere\s+are\s+(?:the\s+)?(?:unit\s+)?tests\b|\bwhich\s+tests\b",
    re.IGNORECASE)
"""A question whose subject is the tests: it starts with "tests for/of/that ..." or asks
"where are the tests" / "which tests"; not a how-to that names testing ("testing my
routes", "mock X in a component test") nor a question about code used in tests."""
_EXAMPLES = re.compile(rf"\b({EXAMPLE_WORDS}|recipes?|usages?)\b", re.IGNORECASE)
_TYPES = re.compile(r"\b(types?|typings?|typed|interfaces?|declar\w*|signatures?|schemas?|"
                    r"options?|props|fields?|shapes?|defin(ed|es|itions?))\b", re.IGNORECASE)
_HISTORY = re.compile(r"\b(release[sd]?|version(s|ed)?|changelog|history|changed|"
                      r"deprecated|removed|introduced|since|breaking( \w+)? changes?|what's new|"
                      r"what is new|migration guides?|"
                      r"(migrat|upgrad)(e|es|ed|ing) (from|to) (v|version )?\d)\b",
                      re.IGNORECASE)
_HISTORY_CJK = re.compile(r"更新(记录|日志|履歴)|变更(记录|日志)|版本(历史|记录)|发布说明|"
                          r"更新記錄|版本歷史|変更履歴|リリースノート|변경\s?(내역|사항|로그)|"
                          r"릴리스\s?노트")
"""A changelog's names in Chinese (simplified and traditional), Japanese and Korean; CJK
writes no spaces, so no word boundaries."""
_REQUIREMENTS = re.compile(
    r"\b(minimum|min|oldest|lowest|supported|required|requires?|compatible)"
    r"( [\w.+-]+){0,4}? versions?\b|\bversions? (\w+ ){0,3}(supported|required)\b"
    r"|\b(system )?requirements\b|\bsupported (platforms|versions|os|systems)\b"
    r"|\bcompatib(le|ility) with\b", re.IGNORECASE)
"""What a project needs or runs on ("the minimum Python version", "minimum iOS and Swift
versions required", "supported platforms", "requirements"): the README or the install
page says it, not the changelog (so not `asks_for_history` for its "versions")."""
_OVERVIEW = re.compile(
    r"^\W*((give|show) me |what is |what's |is there )?(a |an |the )?(full |complete |short )?"
    r"(list|overview|summary|comparison) of\b"
    r"|\bwhich \w+( \w+)? (ship|come|are (included|bundled|available|provided|built in))"
    r"\b|\bwhat does each( one)?\b"
    r"|\bwhy (use|choose|pick|prefer|should (i|we) (use|choose|pick))\b",
    re.IGNORECASE)
"""A question about the project as a whole, which its README or guide answers: "list of
attacks X defends against", "which extensions ship with X and what does each one add",
"why use X instead of Y"."""


def asks_where_in_code(query: str) -> bool:
    """"Where is ... decided", "which function ...": the answer is a place in the code,
    not a page of prose (unless the query names the documentation)."""
    return bool(_WHERE.search(_USER_WHERE.sub(" ", query))) and not _DOCS.search(query)


def asks_how_to(query: str) -> bool:
    """A user's how-to question in words (`_HOW_TO`: "how do I turn off ...", "can I
    ...", "I want to ...", "need to ...", "is there a way ...", "what's the recommended
    way ...", "where do I change ..."): usage documentation answers it, unless it asks
    where in the code (`asks_where_in_code` wins)."""
    return bool(_HOW_TO.search(query)) and not asks_where_in_code(query)


def asks_task(query: str) -> bool:
    """A task asked without a question word ("serve a directory of images", "return a
    404 when an item is missing", "adding a middleware that ..."): a user's how-to as
    often as a description of what the code does ("parse the tag syntax into spans"), so
    weaker than `asks_how_to`: prose is not put after the code (`wants_prose`), nor
    promoted. Not a where-in-code question, nor a "topic: ..." label."""
    return _task_shaped(query) and not asks_where_in_code(query)


def wants_prose(query: str) -> bool:
    """Whether prose answers `query`: one not in English, or, unless it asks where in the
    code (`_CODE_ASKED`), a user's usage question, a how-to (`asks_how_to`), a task
    (`asks_task`) or one naming the documentation."""
    from ctxd.search.translations import query_language

    if query_language(query) is not None:
        return True
    if _CODE_ASKED.search(_USER_WHERE.sub(" ", query)):
        return False
    return bool(_PROSE_ASKED.search(query) or _USAGE.search(query) or _HOW_TO.search(query)
                or _REQUIREMENTS.search(query) or _OVERVIEW.search(query)
                or _task_shaped(query))


def asks_for_tests(query: str) -> bool:
    """The question names tests, fixtures or type stubs (`.pyi`, `.d.ts`, typings)."""
    return bool(_TESTS.search(query))


def asks_about_tests(query: str) -> bool:
    """The tests are what the question is about (`_ABOUT_TESTS`): test files answer it,
    before the code they test (hybrid ranking promotes them)."""
    return bool(_ABOUT_TESTS.search(query))


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
    """The question is about releases or changes (changelogs and migration guides answer
    it: "what changed in 1.19", "breaking changes in 5"); not about what a version
    requires ("the minimum Python version": `_REQUIREMENTS`). A changelog's own name in
    Chinese, Japanese or Korean (`_HISTORY_CJK`) counts too: a translated changelog
    (`CHANGELOG_CN.md`) is a changelog (`path_kinds.is_changelog`)."""
    if not query.isascii() and _HISTORY_CJK.search(query):
        return True
    return bool(_HISTORY.search(_REQUIREMENTS.sub(" ", query)))


_LANGUAGE_NAMES = re.compile(
    r"\b(afrikaans|albanian|arabic|armenian|azerbaijani|basque|belarusian|bengali|"
    r"bosnian|breton|bulgarian|burmese|catalan|chinese|croatian|czech|danish|dutch|"
    r"esperanto|estonian|faroese|filipino|finnish|french|galician|georgian|german|greek|"
    r"gujarati|hebrew|hindi|hungarian|icelandic|indonesian|irish|italian|japanese|kazakh|"
    r"khmer|korean|kurdish|kyrgyz|lao|latvian|lithuanian|macedonian|malay|malayalam|"
    r"maltese|marathi|mongolian|nepali|norwegian|persian|farsi|polish|portuguese|"
    r"punjabi|romanian|russian|serbian|sinhala|slovak|slovenian|spanish|swahili|swedish|"
    r"tagalog|tamil|telugu|thai|tibetan|turkish|turkmen|ukrainian|urdu|uzbek|"
    r"vietnamese|welsh|yoruba|(?:british|american|canadian|australian) english)\b",
    re.IGNORECASE)


def names_language(query: str) -> bool:
    """The question names a human language other than plain English ("Russian month
    names", "the British English date format"): a locale's own file
    (`path_kinds.is_locale_data`) may answer it; any other question is not about one
    language's strings."""
    return bool(_LANGUAGE_NAMES.search(query))


_STUBS_ASKED = re.compile(r"\b(typescript|typings?|type (stubs?|hints?|declarations?|definitions?)|"
                          r"declaration files?|stubs?)\b|\.d\.ts\b|\.pyi\b", re.IGNORECASE)


def asks_for_stubs(query: str) -> bool:
    """The question asks for TypeScript's declarations or Python's type stubs ("the
    TypeScript declaration of ...", "type hints for ...", "the .pyi stub"): a stub
    (`path_kinds.is_stub`) answers it and is not demoted as test support."""
    return bool(_STUBS_ASKED.search(query))
