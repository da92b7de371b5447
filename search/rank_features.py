"""One record per hybrid candidate of what the legs and the rules know (issue 42, item 1):
the features a fitted ranking (`search.rank_model`) weighs instead of hand-set constants.

Pure: hits in, vectors out; nothing touches the store or the model.

`candidates(query, legs, ...)` turns the legs (`semantic`, `keyword`, `lexical`,
`summary`) into one candidate per checkpoint (a checkpoint two legs found is one
candidate, its sources and matching lines united, as `search.hybrid` fuses them) plus one
per file only the lexical engine found, each with its vector in `FEATURES` order:

- each leg's evidence: the checkpoint's score relative to the leg's best (`normalised`)
  and its reciprocal rank, for `semantic` and `keyword`; `lexical` and `summary` are
  file-level (the file's normalised score and reciprocal rank), `lexical_line` whether a
  matching line falls in the checkpoint; a checkpoint without a vector yet (its repository
  still embedding) takes its keyword evidence as its semantic evidence;
- same-file evidence: the two best other checkpoints of the file, per leg;
- `log_legs`: the log of the hand fusion's sum of the legs (`search.hybrid.leg_weights`),
  so that the kind features act as factors on it, as the hand ranking's demotions do;
- `log_hand`: the log of the hand ranking's score of the checkpoint (`search.hybrid`'s
  fusion, re-ranking and file summary: its leg weights and its factors for the kinds of
  files), so that the fitted model starts from the hand ranking's evidence and corrects
  it;
- agreement (both checkpoint legs found it), words of the query in the checkpoint's
  symbol and in the file's name (`search.hybrid.query_words`);
- the file's kind (`search.path_kinds`): test or stub, generated, example, TypeScript
  type declarations, changelog, prose, data (`.json`, `.yaml`, ...), built or vendored
  (`search.copies.copy_tier` 3);
- the question's form (`QueryForm`: identifier query, "where in the code", how-to, asks
  for tests, examples, history, types, wants prose) enters only through its interactions
  with the candidate (a form alone moves every candidate of a question alike): a leg's
  evidence in an identifier query, a test when tests are asked for, prose in a how-to, a
  "where" or a behaviour question, ...

The hard guarantees stay rules outside the record (`search.definitions`,
`search.exact_phrase`, `search.translations`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

from ctxd.search.copies import copy_tier
from ctxd.search.hybrid import (
    FusionOptions,
    _stem,
    fused_hits,
    is_identifier_query,
    leg_weights,
    normalised,
    query_words,
    rerank,
    word_parts,
)
from ctxd.search.merge import ordered_sources
from ctxd.search.models import Hit, LineMatch, MatchSource
from ctxd.search.path_kinds import (
    is_changelog,
    is_example,
    is_prose,
    is_test_or_stub,
    is_test_symbol,
    is_type_declarations,
)
from ctxd.search.questions import (
    asks_for_examples,
    asks_for_history,
    asks_for_tests,
    asks_for_types,
    asks_how_to,
    asks_where_in_code,
    wants_prose,
)

__all__ = ["FEATURES", "Candidate", "QueryForm", "candidates", "file_kinds"]

FEATURES: tuple[str, ...] = (
    # the legs
    "semantic", "semantic_rr", "keyword", "keyword_rr", "lexical", "lexical_rr",
    "lexical_line", "lexical_only", "summary", "summary_rr",
    "file_semantic", "file_keyword", "agreement", "symbol_words", "path_words", "log_legs",
    "log_hand",
    # the legs in an identifier query
    "semantic_x_identifier", "keyword_x_identifier", "lexical_x_identifier",
    "symbol_words_x_identifier",
    # the file's kind
    "test", "generated", "example", "type_declarations", "changelog", "prose", "data",
    "built",
    # the kind against the question's form
    "test_x_asks_tests", "example_x_asks_examples", "type_declarations_x_asks_types",
    "changelog_x_asks_history", "prose_x_how_to", "prose_x_where", "prose_x_wants_prose",
    "prose_x_identifier", "prose_x_behaviour", "semantic_x_prose", "keyword_x_prose",
)
"""The record's fields, in the order of every vector (and of a model's weights)."""

_DATA = re.compile(r"\.(json|jsonc|json5|ya?ml|toml|csv|tsv|xml|ini|cfg|conf|lock|properties|"
                   r"plist|xliff|xlf|arb|po|pot|ipynb)$", re.IGNORECASE)

_Identity = tuple[str, str, int, int, int | None]
_File = tuple[str, str]


@dataclass(frozen=True, slots=True)
class QueryForm:
    """What kind of question a query is (`search.questions`, `search.hybrid`)."""

    identifier: bool
    where: bool
    how_to: bool
    tests: bool
    examples: bool
    history: bool
    types: bool
    prose: bool
    words: frozenset[str]
    keyword_weight: float
    """The hand fusion's keyword weight for this query (`search.hybrid.leg_weights`)."""
    lexical_weight: float
    summary_weight: float

    @classmethod
    def of(cls, query: str) -> QueryForm:
        how_to = asks_how_to(query)
        w = leg_weights(query, FusionOptions())
        return cls(identifier=is_identifier_query(query), where=asks_where_in_code(query),
                   how_to=how_to, tests=asks_for_tests(query),
                   examples=how_to or asks_for_examples(query),
                   history=asks_for_history(query), types=asks_for_types(query),
                   prose=wants_prose(query), words=frozenset(query_words(query)),
                   keyword_weight=w["keyword"], lexical_weight=w["lexical"],
                   summary_weight=FusionOptions().summary_weight)

    def flags(self) -> dict[str, bool]:
        return {"identifier": self.identifier, "where in the code": self.where,
                "how-to": self.how_to, "asks for tests": self.tests,
                "asks for examples": self.examples, "asks about history": self.history,
                "asks about types": self.types, "wants prose": self.prose}


@dataclass(frozen=True, slots=True)
class Candidate:
    """A fused candidate and its feature vector (`FEATURES` order)."""

    hit: Hit
    vector: tuple[float, ...]

    def record(self) -> dict[str, float]:
        return dict(zip(FEATURES, self.vector, strict=True))


def file_kinds(path: str, symbol: str | None, generated: bool) -> tuple[float, ...]:
    """test, generated, example, type declarations, changelog, prose, data, built (1/0)."""
    prose = is_prose(path)
    test = is_test_or_stub(path) or is_test_symbol(symbol)
    return (float(test), float(generated), float(is_example(path) and not prose),
            float(is_type_declarations(path)), float(is_changelog(path)), float(prose),
            float(bool(_DATA.search(path))), float(copy_tier(path) == 3))


def _identity(h: Hit) -> _Identity:
    return (h.repository, h.path, h.start_line, h.end_line, h.checkpoint)


def _per_file(leg: Sequence[Hit]) -> dict[_File, tuple[float, float]]:
    """(repository, path) -> (normalised score, reciprocal rank) of a file-level leg."""
    out: dict[_File, tuple[float, float]] = {}
    for rank, (h, s) in enumerate(zip(leg, normalised([h.score for h in leg]), strict=True),
                                  1):
        out.setdefault((h.repository, h.path), (s, 1.0 / rank))
    return out


def _overlap(words: frozenset[str], text: str) -> float:
    """The query's words in `text`'s word parts, over the root of their number (as
    `search.hybrid.rerank`'s symbol and path bonuses)."""
    if not words or not text:
        return 0.0
    return len(words & {_stem(w) for w in word_parts(text)}) / math.sqrt(len(words))


def _checkpoints(
    legs: Mapping[str, Sequence[Hit]], unembedded: Collection[tuple[str, str, int, int]]
) -> tuple[dict[_Identity, dict[str, tuple[float, float]]], dict[_Identity, Hit],
           dict[_Identity, set[MatchSource]], dict[_Identity, set[LineMatch]]]:
    """Per checkpoint of the semantic and keyword legs: each leg's (normalised score,
    reciprocal rank), its first hit, its sources and matching lines."""
    found: dict[_Identity, dict[str, tuple[float, float]]] = {}
    first: dict[_Identity, Hit] = {}
    sources: dict[_Identity, set[MatchSource]] = {}
    matches: dict[_Identity, set[LineMatch]] = {}
    for name in ("semantic", "keyword"):
        leg = legs.get(name) or ()
        norms = normalised([h.score for h in leg])
        for rank, (h, s) in enumerate(zip(leg, norms, strict=True), 1):
            key = _identity(h)
            seen = found.setdefault(key, {})
            if name not in seen or seen[name][0] < s:
                seen[name] = (s, 1.0 / rank)
            first.setdefault(key, h)
            sources.setdefault(key, set()).update(h.sources)
            matches.setdefault(key, set()).update(h.matches)
    pending = set(unembedded)
    if pending:
        for key, seen in found.items():
            if "semantic" not in seen and "keyword" in seen and key[:4] in pending:
                seen["semantic"] = seen["keyword"]
    return found, first, sources, matches


def candidates(
    query: str, legs: Mapping[str, Sequence[Hit]], *,
    unembedded: Collection[tuple[str, str, int, int]] = (),
    generated: Collection[tuple[str, str]] = (),
    hand: Mapping[_Identity, float] | None = None,
) -> list[Candidate]:
    """The candidates of `legs` with their vectors (module docstring), in the legs' order;
    `hand`: the hand ranking's score of each checkpoint (`hand_scores`; computed here when
    not given)."""
    if hand is None:
        hand = hand_scores(query, legs, unembedded, generated)
    form = QueryForm.of(query)
    found, first, sources, matches = _checkpoints(legs, unembedded)
    lexical = legs.get("lexical") or ()
    lex = _per_file(lexical)
    lex_hits = {(h.repository, h.path): h for h in lexical}
    summ = _per_file(legs.get("summary") or ())
    best_in_file: dict[_File, dict[str, list[float]]] = {}
    for key, seen in found.items():
        per = best_in_file.setdefault(key[:2], {"semantic": [], "keyword": []})
        for name, (s, _r) in seen.items():
            per[name].append(s)
    top2 = {f: {n: sorted(v, reverse=True)[:3] for n, v in per.items()}
            for f, per in best_in_file.items()}
    generated_set = set(generated)
    kinds: dict[tuple[str, str, str | None], tuple[float, ...]] = {}
    out: list[Candidate] = []
    hits: list[tuple[Hit, dict[str, tuple[float, float]], bool]] = []
    for key, seen in found.items():
        h = first[key]
        f = (h.repository, h.path)
        src = sources[key]
        lex_hit = lex_hits.get(f)
        line_in = bool(lex_hit and any(h.start_line <= m.line <= h.end_line
                                       for m in lex_hit.matches))
        if line_in and lex_hit is not None:
            src = src | set(lex_hit.sources)
        hit = replace(h, sources=ordered_sources(src),
                      matches=tuple(sorted(matches[key], key=lambda m: m.line)))
        hits.append((hit, seen, line_in))
    known = {(h.repository, h.path) for h, _s, _l in hits}
    for f, h in lex_hits.items():
        if f not in known:
            hits.append((h, {}, True))
    ident = float(form.identifier)
    for hit, seen, line_in in hits:
        f = (hit.repository, hit.path)
        sem, sem_rr = seen.get("semantic", (0.0, 0.0))
        kw, kw_rr = seen.get("keyword", (0.0, 0.0))
        lx, lx_rr = lex.get(f, (0.0, 0.0))
        sm, sm_rr = summ.get(f, (0.0, 0.0))
        best = top2.get(f, {"semantic": [], "keyword": []})
        file_sem = _others(best["semantic"], sem)
        file_kw = _others(best["keyword"], kw)
        sym = _overlap(form.words, hit.symbol or "")
        stem = hit.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        pth = _overlap(form.words, stem)
        kkey = (hit.repository, hit.path, hit.symbol)
        kind = kinds.get(kkey)
        if kind is None:
            kind = kinds[kkey] = file_kinds(hit.path, hit.symbol, f in generated_set)
        test, gen, example, types, changelog, prose, data, built = kind
        behaviour = float(not (form.prose or form.how_to or form.identifier))
        vector = (
            sem, sem_rr, kw, kw_rr, lx, lx_rr, float(line_in), float(not seen), sm, sm_rr,
            file_sem, file_kw, float(len(seen) > 1), sym, pth,
            math.log(0.01 + sem + form.keyword_weight * kw + form.lexical_weight * lx),
            math.log(0.01 + max(0.0, hand.get(_identity(hit), 0.0)) + form.summary_weight * sm),
            sem * ident, kw * ident, lx * ident, sym * ident,
            test, gen, example, types, changelog, prose, data, built,
            test * form.tests, example * form.examples, types * form.types,
            changelog * form.history, prose * form.how_to, prose * form.where,
            prose * form.prose, prose * ident, prose * behaviour, sem * prose, kw * prose,
        )
        out.append(Candidate(hit, vector))
    return out


def hand_scores(query: str, legs: Mapping[str, Sequence[Hit]],
                unembedded: Collection[tuple[str, str, int, int]] = (),
                generated: Collection[tuple[str, str]] = ()) -> dict[_Identity, float]:
    """The hand ranking's score of each checkpoint before merging (`search.hybrid`'s
    fusion and re-ranking with its default options)."""
    options = FusionOptions()
    fused = fused_hits(query, legs, options, unembedded)
    return {_identity(h): h.score for h in rerank(query, fused, options, generated)}


def _others(best: list[float], own: float) -> float:
    """The mean of the two best scores of the file other than `own`."""
    rest = list(best)
    if own in rest:
        rest.remove(own)
    return sum(rest[:2]) / 2
