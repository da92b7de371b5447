"""Hybrid ranking: fuse the semantic, keyword and lexical legs, re-rank, merge overlaps.

Everything here is pure (hits in, hits out); nothing touches the store or the model.

`rank_hybrid(query, legs, options)` is the default mode's ranking (`legs`: `semantic`,
`keyword`, `lexical` and `summary`, any of them missing or empty):

1. **Query-aware weights** (`leg_weights`): an identifier-like query (`load_config_file`,
   `Retry.increment`, `MAX_RETRIES`) trusts the keyword and lexical legs as much as the
   vectors; a natural-language question keeps them well below the vectors, so BM25 on a
   question's common words cannot outvote the semantic leg.
2. **Fusion** (`leg_contributions`; `fuse_scores` and `fuse`, plain RRF, run it alone):
   each leg's scores are divided by its best candidate's (`normalised`), weighted and
   summed per checkpoint (one checkpoint found by two legs collects both).
3. **Lexical evidence** (embedded engine or Zoekt) is file-level: a file it matched adds
   its weight to every checkpoint of that file, the checkpoints holding a matching line
   name the engine in `sources`, and a file no other leg found enters as a hit on its
   first match (a repository only Zoekt indexes still shows path and line).
4. **Re-ranking** (`rerank`): a bonus for the query's words in the checkpoint's symbol
   and path, for agreement between legs, and for other strong checkpoints of the same
   file (`file_evidence`); tests (`search.path_kinds`, by each language's conventions:
   `x_test.go`, `x.spec.ts`, `XTest.java`; Rust's `mod tests`), type stubs and generated
   code are demoted unless the query asks for tests (and tests promoted when they are its
   subject: "tests for X", `asks_about_tests`), code in folders of examples and
   demos unless it asks for an example or a usage, TypeScript's modules of type
   declarations (`types.ts`, `types/`) unless it asks about types, interfaces or
   options, changelogs unless it asks about releases; prose files (`.md`, `.rst`, ...)
   are demoted for "where in the code" questions and promoted for a user's how-to
   questions ("how do I ...", "can I ...").
5. Identical texts answer once (`search.copies.collapse_copies`: a verbatim copy of a
   checkpoint elsewhere becomes an `also_in` place of the copy preferred by path), then
   overlapping or touching hits of one file, and adjacent checkpoints of one definition,
   are merged (`search.merge.merge_overlaps`); the merged hit keeps its best part's score
   and the union of `sources`.
6. **File summaries** (`add_summaries`, the `summary` leg: one similarity per candidate
   file, of the query to the file's embedded summary, `indexer.chunk.summary`): each hit
   gains `summary_weight` times its file's similarity relative to the best file's.
7. **Translated pages** (the `translations` leg: lexical hits of translated docs in the
   question's own language, `search.translations.own_language_pages`) are added, scored
   by the share of the question's words they hold; no other question sees them.
8. **Code over prose** (`search.prose.code_first`): for a question about behaviour, a
   page of prose goes right after the candidate code it names, other prose loses a
   little, and at most `max_prose_top` prose files stay in the first ten; a usage or
   documentation question (or one no code answers) keeps prose first.
9. **A page that spans files** (`search.merge.spread_files`): at most `per_file_top` hits
   of one file among the first ten; a file's further hits follow the tenth.

Defaults were tuned on the eval-dev set only, with rules that name no repository
(docs/BENCHMARKS.md, "Retrieval quality"). `fuse` (reciprocal-rank fusion) stays for
comparison and for callers that want rank-only fusion.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from ctxd.search.copies import collapse_copies
from ctxd.search.merge import PER_FILE_TOP, by_score, merge_overlaps, ordered_sources, spread_files
from ctxd.search.models import Hit, LineMatch, MatchSource
from ctxd.search.path_kinds import (
    is_changelog,
    is_docs_code,
    is_example,
    is_locale_data,
    is_prose,
    is_stub,
    is_test_or_stub,
    is_test_symbol,
    is_type_declarations,
)
from ctxd.search.prose import code_first
from ctxd.search.questions import (
    asks_about_tests,
    asks_for_examples,
    asks_for_history,
    asks_for_stubs,
    asks_for_tests,
    asks_for_types,
    asks_how_to,
    asks_task,
    asks_where_in_code,
    names_language,
)
from ctxd.search.translations import own_language_pages
from ctxd.search.versions import query_versions, release_versions, version_match

_Key = tuple[str, str, int, int]
_Identity = tuple[str, str, int, int, int | None]


@dataclass(frozen=True, slots=True)
class FusionOptions:
    """How `rank_hybrid` fuses and re-ranks (defaults: the tuned eval-dev choice)."""

    method: str = "score"
    """`score`: normalised-score sum; `rrf`: reciprocal-rank fusion."""
    rrf_k: int = 10
    semantic_weight: float = 1.0
    keyword_weight: float = 0.6
    """Keyword (BM25) leg against the semantic leg, for identifier-like queries."""
    lexical_weight: float = 0.15
    """Lexical leg (embedded engine or Zoekt), file-level, for identifier-like queries."""
    summary_weight: float = 0.1
    """File summaries (the `summary` leg): each hit gains this times its file's summary
    similarity relative to the best candidate file's."""
    question_factor: float = 0.7
    """Keyword and lexical weights are multiplied by this for natural-language questions."""
    query_aware: bool = True
    file_evidence: float = 0.1
    """Each checkpoint gains this times the scores of the next two best of its file."""
    rerank: bool = False
    symbol_bonus: float = 0.15
    path_bonus: float = 0.1
    agreement_bonus: float = 0.05
    demote_tests: float = 0.5
    """Score factor for tests and type stubs (1.0 = off) unless the query asks for tests."""
    promote_tests: float = 1.3
    """Score factor for test files when the tests are the question's subject ("tests for
    X", "tests that ...": `asks_about_tests`), so they go before the code they test
    (1.0 = off)."""
    demote_changelogs: float = 0.5
    """Score factor for changelogs (1.0 = off) unless the query asks about releases."""
    demote_generated: float = 0.5
    """Score factor for generated code (`rank_hybrid`'s `generated`), like tests."""
    demote_examples: float = 0.7
    """Score factor for code in folders of examples, samples and demos
    (`path_kinds.is_example`) unless the query asks for an example, a usage or how to
    do something."""
    demote_locale_data: float = 0.5
    """Score factor for a language's own file in a locale folder (`path_kinds.is_locale_data`:
    dayjs's `src/locale/ru.js`, one of 140) unless the question names a language
    (`names_language`)."""
    demote_type_declarations: float = 0.85
    """Score factor for TypeScript's modules of type declarations
    (`path_kinds.is_type_declarations`: `types.ts`, `types/`) unless the query asks about
    types, interfaces, options or definitions (`asks_for_types`)."""
    demote_prose_for_where: float = 0.7
    """Score factor for prose files (`.md`, `.rst`, ...) when the query asks where in the
    code something happens (`asks_where_in_code`; 1.0 = off)."""
    promote_prose_for_how_to: float = 1.4
    """Score factor for prose files when the query is a user's how-to question
    (`asks_how_to`: "how do I ...", "can I ...", "is there a way ..."; 1.0 = off)."""
    promote_named_version: float = 1.3
    """Score factor for a file whose path names a version the question names
    (`search.versions`: "breaking changes in Alamofire 5" and `Alamofire 5.0 Migration
    Guide.md`; 1.0 = off)."""
    demote_other_version: float = 0.8
    """Score factor for a file whose path names only other versions than the question
    names (the 4.0 and 3.0 guides beside the 5.0 one; 1.0 = off)."""
    code_first: bool = True
    """For a question about behaviour, code before the prose that describes it, and a
    bounded share of prose in the top 10 (`search.prose.code_first`)."""
    prose_factor: float = 0.85
    """`code_first`: score factor for prose (its page then goes no higher than the code it
    names)."""
    max_prose_top: int = 3
    """`code_first`: at most this many prose files among the first ten."""
    per_file_top: int = PER_FILE_TOP
    """At most this many hits of one file among the first ten (`merge.spread_files`;
    0 = no bound)."""


# -- query analysis ------------------------------------------------------------------------

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_]|[A-Za-z_]")
_CAMEL = re.compile(r"[a-z0-9][A-Z]")


def is_identifier(token: str) -> bool:
    """`snake_case`, `camelCase`, `Dotted.name`, `ALL_CAPS` or a call `name()`."""
    t = token.rstrip("()")
    if "_" in t.strip("_") or "." in t:
        return True
    if _CAMEL.search(t):
        return True
    return len(t) >= 3 and t.isupper()


def identifier_terms(query: str) -> list[str]:
    """The identifier-like tokens of a query, in order, distinct."""
    seen: dict[str, None] = {}
    for tok in _TOKEN.findall(query.replace("`", " ")):
        if is_identifier(tok):
            seen.setdefault(tok.strip("."), None)
    return list(seen)


def is_identifier_query(query: str) -> bool:
    """True when at least half the query's words are identifiers, or it is a lone name.

    `Retry.increment is_exhausted` and `load_config_file` are; "where do we decide
    whether a session expired?" is not.
    """
    words = _TOKEN.findall(query.replace("`", " "))
    if not words:
        return False
    idents = sum(1 for w in words if is_identifier(w))
    return idents * 2 >= len(words) or (len(words) <= 2 and idents >= 1) or (
        len(words) == 1 and words[0].isidentifier() and not query.strip().endswith("?"))


def leg_weights(query: str, options: FusionOptions) -> dict[str, float]:
    """The weight of each leg for this query (see `FusionOptions`)."""
    factor = 1.0
    if options.query_aware and not is_identifier_query(query):
        factor = options.question_factor
    return {
        "semantic": options.semantic_weight,
        "keyword": options.keyword_weight * factor,
        "lexical": options.lexical_weight * factor,
    }


_WORD = re.compile(r"[A-Za-z][a-z0-9]*|[A-Z]+(?![a-z])|\d+")


def word_parts(text: str) -> set[str]:
    """Lowercase word parts of identifiers and paths (`parseHeader_v2.py` -> parse,
    header, v2, py)."""
    return {w.lower() for w in _WORD.findall(text) if len(w) >= 2}


def _stem(word: str) -> str:
    for suffix in ("ing", "ers", "ed", "es", "er", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


# -- fusion --------------------------------------------------------------------------------


def _key(h: Hit) -> _Key:
    return (h.repository, h.path, h.start_line, h.end_line)


def _identity(h: Hit) -> _Identity:
    """What fusion adds up: one checkpoint. Lines alone do not name one: every part of a
    very long line spans the same single line (issue 15)."""
    return (h.repository, h.path, h.start_line, h.end_line, h.checkpoint)


def normalised(scores: Sequence[float]) -> list[float]:
    """Scores relative to the list's best (`s / best`, so the best is 1.0; negative
    scores count as 0). Unlike min-max scaling, this does not depend on how deep the
    list goes, and a leg whose candidates all score alike keeps them alike."""
    if not scores:
        return []
    hi = max(scores)
    if hi <= 0:
        return [1.0 if s == hi else 0.0 for s in scores]
    return [max(0.0, s) / hi for s in scores]


def fuse(
    rankings: Sequence[Sequence[Hit]],
    *,
    k: int = 10,
    weights: Sequence[float] | None = None,
) -> list[Hit]:
    """One ranked list from several (best first each), by reciprocal rank fusion.

    Args:
        rankings: ranked hit lists, e.g. [semantic, keyword].
        k: the RRF constant; larger flattens the difference between ranks.
        weights: one per ranking (default 1.0 each).

    Returns:
        Hits ordered by fused score (ties: repository, path, line), overlapping ranges
        of one file merged.
    """
    weights = list(weights) if weights is not None else [1.0] * len(rankings)
    contributions = leg_contributions(rankings, weights, method="rrf", rrf_k=k)
    return by_score(merge_overlaps(_combine(rankings, contributions)))


def fuse_scores(rankings: Sequence[Sequence[Hit]], weights: Sequence[float]) -> list[Hit]:
    """Weighted sum of each leg's normalised scores (`normalised`), per checkpoint.

    Unlike RRF, a leg whose best hit barely beats its tenth contributes little
    separation, and a leg with one clear winner contributes a clear margin.
    """
    return by_score(_combine(rankings, leg_contributions(rankings, weights)))


def leg_contributions(
    rankings: Sequence[Sequence[Hit]], weights: Sequence[float], *, method: str = "score",
    rrf_k: int = 10,
) -> list[list[float]]:
    """What each hit of each ranking adds to its checkpoint's fused score: `weight /
    (rrf_k + rank)` for `rrf`, `weight * normalised score` for `score`."""
    if method == "rrf":
        return [[weight / (rrf_k + rank) for rank in range(1, len(ranking) + 1)]
                for ranking, weight in zip(rankings, weights, strict=True)]
    return [[weight * s for s in normalised([h.score for h in ranking])]
            for ranking, weight in zip(rankings, weights, strict=True)]


def _combine(rankings: Sequence[Sequence[Hit]], contributions: Sequence[Sequence[float]]
             ) -> list[Hit]:
    """One hit per checkpoint (`_identity`): its legs' contributions summed, at most one
    per leg (a leg that lists a checkpoint twice counts its best), so a fused score stays
    within the sum of the legs' weights however many parts a file has."""
    scores: dict[_Identity, float] = {}
    first: dict[_Identity, Hit] = {}
    sources: dict[_Identity, set[MatchSource]] = {}
    matches: dict[_Identity, set[LineMatch]] = {}
    for ranking, contrib in zip(rankings, contributions, strict=True):
        best: dict[_Identity, float] = {}
        for hit, c in zip(ranking, contrib, strict=True):
            key = _identity(hit)
            best[key] = max(best.get(key, 0.0), c)
            first.setdefault(key, hit)
            sources.setdefault(key, set()).update(hit.sources)
            matches.setdefault(key, set()).update(hit.matches)
        for key, c in best.items():
            scores[key] = scores.get(key, 0.0) + c
    return [
        replace(first[key], score=scores[key], sources=ordered_sources(sources[key]),
                matches=tuple(sorted(matches[key], key=lambda m: m.line)))
        for key in scores
    ]


def file_norms(per_file: Sequence[Hit]) -> dict[tuple[str, str], float]:
    """(repository, path) -> score relative to the best (`normalised`), for a leg that
    holds one hit per file."""
    return dict(zip(((h.repository, h.path) for h in per_file),
                    normalised([h.score for h in per_file]), strict=True))


def add_lexical(hits: Sequence[Hit], lexical: Sequence[Hit], weight: float) -> list[Hit]:
    """File-level lexical evidence (see the module docstring, step 3).

    `lexical` holds one hit per file, best first, spanning that file's first matches.
    """
    if not lexical or weight <= 0:
        return list(hits)
    norm = file_norms(lexical)
    by_file = {(h.repository, h.path): h for h in lexical}
    out: list[Hit] = []
    seen: set[tuple[str, str]] = set()
    for h in hits:
        f = (h.repository, h.path)
        lex = by_file.get(f)
        if lex is None:
            out.append(h)
            continue
        seen.add(f)
        lines = {m.line for m in lex.matches}
        hit_lines = any(h.start_line <= n <= h.end_line for n in lines)
        src = ordered_sources({*h.sources, *lex.sources}) if hit_lines else h.sources
        out.append(replace(h, score=h.score + weight * norm[f], sources=src))
    top = max((h.score for h in hits), default=1.0)
    for f, lex in by_file.items():
        if f not in seen:
            # Found by the lexical engine alone: scaled like a weak fused hit.
            out.append(replace(lex, score=weight * norm[f] * min(top, 1.0)))
    return out


# -- re-ranking ----------------------------------------------------------------------------


def query_words(query: str) -> set[str]:
    """Stemmed content words of a query, identifier parts included (stop words dropped)."""
    from ctxd.search.keyword import STOPWORDS

    return {_stem(w) for w in word_parts(query) if w not in STOPWORDS and len(w) >= 3}


def rerank(query: str, hits: Sequence[Hit], options: FusionOptions,
           generated: Collection[tuple[str, str]] = ()) -> list[Hit]:
    """Re-score fused hits with signals ctxd already has (module docstring, step 4);
    `generated` names (repository, path) of generated code, demoted like tests."""
    words = query_words(query) if options.rerank else set()
    tests_ok = asks_for_tests(query)
    tests_about = asks_about_tests(query)
    history_ok = asks_for_history(query)
    code_wanted = asks_where_in_code(query)
    how_to = asks_how_to(query)
    examples_asked = asks_for_examples(query)
    examples_ok = examples_asked or how_to
    task = asks_task(query)
    types_ok = asks_for_types(query)
    language_named = names_language(query)
    stubs_ok = asks_for_stubs(query)
    versions = release_versions_of(query, hits)
    out: list[Hit] = []
    for h in hits:
        score = _bonuses(h.score, h, words, options) if options.rerank else h.score
        if not tests_ok and (is_test_or_stub(h.path) or is_test_symbol(h.symbol)) and not (
                examples_asked and is_example(h.path)) and not (
                stubs_ok and is_stub(h.path)):
            score *= options.demote_tests
        elif tests_about and is_test_or_stub(h.path):
            score *= options.promote_tests
        elif (h.repository, h.path) in generated:
            score *= options.demote_generated
        elif demotes_example(h.path, examples_ok, task):
            score *= options.demote_examples
        else:
            score *= declarations_factor(h.path, types_ok, language_named, options)
        if not history_ok and is_changelog(h.path):
            score *= options.demote_changelogs
        elif code_wanted and is_prose(h.path):
            score *= options.demote_prose_for_where
        elif how_to and is_prose(h.path):
            score *= options.promote_prose_for_how_to
        if versions:
            score *= version_factor(versions, h.path, options)
        out.append(replace(h, score=score))
    if options.file_evidence > 0:
        out = file_evidence(out, options.file_evidence)
    return out


def declarations_factor(path: str, types_ok: bool, language_named: bool,
                        options: FusionOptions) -> float:
    """`rerank`'s factor for code that declares rather than does: TypeScript's modules of
    type declarations unless the question asks about types (`types_ok`), one language's
    locale file (`path_kinds.is_locale_data`) unless the question names a language."""
    if not types_ok and is_type_declarations(path):
        return options.demote_type_declarations
    if not language_named and is_locale_data(path):
        return options.demote_locale_data
    return 1.0


def demotes_example(path: str, examples_ok: bool, task: bool) -> bool:
    """Whether `rerank` demotes `path` as example code (`path_kinds.is_example`, not a
    page): not when the question asks for an example, a usage or how to do something
    (`examples_ok`), nor, for a task ("shut down the server gracefully"), an example
    program; the documentation's own snippets (`docs_src/`, `path_kinds.is_docs_code`)
    still are for a task, as the page that shows them answers it."""
    if examples_ok or not is_example(path) or is_prose(path):
        return False
    return not task or is_docs_code(path)


def release_versions_of(query: str, hits: Iterable[Hit]) -> tuple[tuple[int, ...], ...]:
    """The versions `query` names that are releases of the project, not an API's versions
    that the code's paths among `hits` name (`search.versions.release_versions`)."""
    wanted = query_versions(query)
    if not wanted:
        return wanted
    return release_versions(wanted, (h.path for h in hits if not _page(h.path)))


def _page(path: str) -> bool:
    return is_prose(path) or is_changelog(path)


def version_factor(versions: Sequence[tuple[int, ...]], path: str,
                   options: FusionOptions) -> float:
    """`rerank`'s factor for a page (prose, a changelog) whose path names a version, when
    the question names release `versions` (`release_versions_of`): the same one, or only
    others; 1.0 otherwise, and for code (`api/v2/handlers.go` is an API's version)."""
    if not _page(path):
        return 1.0
    named = version_match(tuple(versions), path)
    if named is None:
        return 1.0
    return options.promote_named_version if named else options.demote_other_version


def _bonuses(score: float, h: Hit, words: set[str], options: FusionOptions) -> float:
    """`score` plus `rerank`'s additive part: the query's words in the symbol and the
    file name, and agreement between legs."""
    if words:
        sym = {_stem(w) for w in word_parts(h.symbol or "")}
        stem = h.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        path = {_stem(w) for w in word_parts(stem)}
        score += options.symbol_bonus * len(words & sym) / len(words) ** 0.5
        score += options.path_bonus * len(words & path) / len(words) ** 0.5
    if len({s for s in h.sources if s is not MatchSource.SYMBOL}) > 1:
        score += options.agreement_bonus
    return score


def file_evidence(hits: Sequence[Hit], weight: float) -> list[Hit]:
    """Each hit gains `weight` times the summed scores of the two best other hits of its
    file: several strong checkpoints in one file are evidence for the file."""
    by_file: dict[tuple[str, str], list[float]] = {}
    for h in hits:
        by_file.setdefault((h.repository, h.path), []).append(h.score)
    top3 = {f: sorted(scores, reverse=True)[:3] for f, scores in by_file.items()}
    out = []
    for h in hits:
        others = list(top3[(h.repository, h.path)])
        if h.score in others:
            others.remove(h.score)
        out.append(replace(h, score=h.score + weight * sum(others[:2])))
    return out


# -- the default mode ----------------------------------------------------------------------


def rank_hybrid(
    query: str,
    legs: Mapping[str, Sequence[Hit]],
    options: FusionOptions | None = None,
    *,
    unembedded: Collection[_Key] = (),
    generated: Collection[tuple[str, str]] = (),
) -> list[Hit]:
    """The hybrid ranking of `legs` (`semantic`, `keyword`, `lexical`, `summary`,
    `translations`; any may be missing or empty) for `query`: fused, re-ranked, overlaps
    merged, best first.

    `unembedded` names checkpoints (repository, path, start, end) that have no vector
    yet (a repository still embedding): the semantic leg cannot see them, so their
    missing semantic evidence is imputed from their keyword evidence instead of counting
    as zero; otherwise any weak semantic neighbour would outrank them. `generated`
    names generated files (`indexer.walk.textclass`), demoted like tests.
    """
    options = options or FusionOptions()
    reranked = rerank(query, fused_hits(query, legs, options, unembedded), options, generated)
    return settle(query, reranked, legs, options, generated)


def settle(query: str, scored: Sequence[Hit], legs: Mapping[str, Sequence[Hit]],
           options: FusionOptions, generated: Collection[tuple[str, str]] = ()) -> list[Hit]:
    """Steps 5-9 of `rank_hybrid` over hits already scored (by `rerank`, or by the fitted
    model, `search.rank_model`): copies answer once, overlaps merge, file summaries and
    translated pages join, code before prose, files spread over the first page."""
    ranked = collapse_copies(merge_overlaps(collapse_copies(scored, generated)), generated)
    ranked = add_summaries(ranked, legs.get("summary", ()), options.summary_weight)
    ranked = own_language_pages(ranked, legs.get("translations", ()), query)
    if options.code_first and not asks_for_history(query):  # changelogs answer those
        ranked = code_first(query, ranked, factor=options.prose_factor,
                            max_prose_top=options.max_prose_top)
    else:
        ranked = by_score(ranked)
    return spread_files(ranked, options.per_file_top) if options.per_file_top else ranked


def fused_hits(query: str, legs: Mapping[str, Sequence[Hit]], options: FusionOptions,
               unembedded: Collection[_Key] = ()) -> list[Hit]:
    """Steps 1-3 of `rank_hybrid`: one hit per checkpoint, scored by its legs' weighted
    evidence and its file's lexical evidence (not yet re-ranked)."""
    w = leg_weights(query, options)
    names = [n for n in ("semantic", "keyword") if legs.get(n) and w[n] > 0]
    rankings = [list(legs[n]) for n in names]
    weights = [w[n] for n in names]
    contributions = leg_contributions(rankings, weights, method=options.method,
                                      rrf_k=options.rrf_k)
    if unembedded and "keyword" in names:
        i = names.index("keyword")
        pending = set(unembedded)
        imputed = [(h, c / weights[i] * w["semantic"])
                   for h, c in zip(rankings[i], contributions[i], strict=True)
                   if _key(h) in pending]
        rankings.append([h for h, _c in imputed])
        contributions.append([c for _h, c in imputed])
    fused = _combine(rankings, contributions)
    if options.method == "rrf":
        scale = max((h.score for h in fused), default=1.0) or 1.0
        fused = [replace(h, score=h.score / scale) for h in fused]
    return add_lexical(fused, legs.get("lexical", ()), w["lexical"])


def add_summaries(hits: Sequence[Hit], summaries: Sequence[Hit], weight: float) -> list[Hit]:
    """File-level evidence from file summaries (module docstring, step 6): `summaries`
    holds one hit per file, scored by similarity; a file without one gains nothing, and
    no file enters the list through its summary alone."""
    if not summaries or weight <= 0:
        return list(hits)
    norm = file_norms(summaries)
    return [replace(h, score=h.score + weight * norm.get((h.repository, h.path), 0.0))
            for h in hits]
