"""One record per hybrid candidate of what the legs and the rules know (issue 42, item 1):
the features a fitted ranking (`search.rank_model`) weighs instead of hand-set constants.

Pure: hits in, vectors out; nothing touches the store or the model.

`candidates(query, legs, ...)` turns the legs (`semantic`, `keyword`, `lexical`,
`summary`) into the hand ranking's fused candidates (`search.hybrid.fused_hits`: one per
checkpoint, a checkpoint two legs found is one candidate with its sources and matching
lines united, plus one per file only the lexical engine found), each with its vector in
`FEATURES` order:

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
  symbol, in the file's name and in its folders (with the repository's name:
  `dir_words`) (`search.hybrid.query_words`);
- the file's kind (`search.path_kinds`): test or stub, generated, example, TypeScript
  type declarations, changelog, prose, data (`.json`, `.yaml`, ...), built or vendored
  (`search.copies.copy_tier` 3), plain text that is not prose (language `text`: a
  prebuilt man page, an API dump, a `.txt`);
- the question's form (`QueryForm`: identifier query, "where in the code", how-to, a
  task, asks for tests, examples, history, types, wants prose) enters only through its interactions
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
from ctxd.search.models import Hit
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
    asks_task,
    asks_where_in_code,
    wants_prose,
)

__all__ = ["FEATURES", "LIGHT_FEATURES", "LIGHT_FILE_FEATURES", "Candidate", "QueryForm",
           "candidates", "file_kinds", "light_values"]

FEATURES: tuple[str, ...] = (
    # the legs
    "semantic", "semantic_rr", "keyword", "keyword_rr", "lexical", "lexical_rr",
    "lexical_line", "lexical_only", "summary", "summary_rr",
    "file_semantic", "file_keyword", "agreement", "symbol_words", "path_words", "dir_words",
    "log_legs",
    "log_hand",
    # the legs in an identifier query
    "semantic_x_identifier", "keyword_x_identifier", "lexical_x_identifier",
    "symbol_words_x_identifier",
    # the file's kind
    "test", "generated", "example", "type_declarations", "changelog", "prose", "data",
    "built", "plain_text",
    # the kind against the question's form
    "test_x_asks_tests", "example_x_asks_examples", "type_declarations_x_asks_types",
    "changelog_x_asks_history", "prose_x_how_to", "prose_x_where", "prose_x_wants_prose",
    "prose_x_identifier", "prose_x_behaviour", "prose_x_task", "semantic_x_prose",
    "keyword_x_prose",
)
"""The record's fields, in the order of every vector (and of a model's weights)."""

LEG_FEATURES: frozenset[str] = frozenset({
    "semantic", "semantic_rr", "keyword", "keyword_rr", "lexical", "lexical_rr",
    "lexical_line", "lexical_only", "file_semantic", "file_keyword", "agreement",
    "symbol_words", "log_legs", "semantic_x_identifier", "keyword_x_identifier",
    "lexical_x_identifier", "symbol_words_x_identifier", "semantic_x_prose",
    "keyword_x_prose"})
"""The features read from each leg's checkpoints (and the symbol): `candidates` does
not compute them (0, `lexical_only` and `log_legs` meaningless) when the model asking
weighs none of them (`needed`); every other feature but `log_hand` is then the file's,
computed once per file, which spares their cost on every search."""
_LOG_HAND = FEATURES.index("log_hand")

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
    task: bool
    """A task asked without a question word (`search.questions.asks_task`)."""
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
    def of(cls, query: str, options: FusionOptions | None = None) -> QueryForm:
        options = options or FusionOptions()
        how_to = asks_how_to(query)
        w = leg_weights(query, options)
        return cls(identifier=is_identifier_query(query), where=asks_where_in_code(query),
                   how_to=how_to, task=asks_task(query), tests=asks_for_tests(query),
                   examples=how_to or asks_for_examples(query),
                   history=asks_for_history(query), types=asks_for_types(query),
                   prose=wants_prose(query), words=frozenset(query_words(query)),
                   keyword_weight=w["keyword"], lexical_weight=w["lexical"],
                   summary_weight=options.summary_weight)

    def flags(self) -> dict[str, bool]:
        return {"identifier": self.identifier, "where in the code": self.where,
                "how-to": self.how_to, "task": self.task, "asks for tests": self.tests,
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


def _leg_evidence(
    legs: Mapping[str, Sequence[Hit]], unembedded: Collection[tuple[str, str, int, int]]
) -> dict[_Identity, dict[str, tuple[float, float]]]:
    """Per checkpoint of the semantic and keyword legs: each leg's (normalised score,
    reciprocal rank), the best when a leg lists it twice."""
    found: dict[_Identity, dict[str, tuple[float, float]]] = {}
    for name in ("semantic", "keyword"):
        leg = legs.get(name) or ()
        norms = normalised([h.score for h in leg])
        for rank, (h, s) in enumerate(zip(leg, norms, strict=True), 1):
            seen = found.setdefault(_identity(h), {})
            if name not in seen or seen[name][0] < s:
                seen[name] = (s, 1.0 / rank)
    pending = set(unembedded)
    if pending:
        for key, seen in found.items():
            if "semantic" not in seen and "keyword" in seen and key[:4] in pending:
                seen["semantic"] = seen["keyword"]
    return found


def candidates(
    query: str, legs: Mapping[str, Sequence[Hit]], *,
    unembedded: Collection[tuple[str, str, int, int]] = (),
    generated: Collection[tuple[str, str]] = (), options: FusionOptions | None = None,
    needed: Collection[str] | None = None,
) -> list[Candidate]:
    """The candidates of `legs` with their vectors (module docstring), in the order of
    the hand ranking's fusion (`search.hybrid.fused_hits`, whose hits they are: one per
    checkpoint, sources and matching lines united, scored by the hand ranking with
    `options`' weights, score fusion: the `[search]` weights; default `FusionOptions()`,
    as the model was trained). `needed`: the features the caller weighs; when none of
    `LEG_FEATURES` is among them, those stay 0 (not computed)."""
    options = replace(options or FusionOptions(), method="score")
    hand = rerank(query, fused_hits(query, legs, options, unembedded), options, generated)
    form = QueryForm.of(query, options)
    light = needed is not None and LEG_FEATURES.isdisjoint(needed)
    found = {} if light else _leg_evidence(legs, unembedded)
    lexical = () if light else (legs.get("lexical") or ())
    lex = _per_file(lexical)
    lex_lines = {(h.repository, h.path): [m.line for m in h.matches] for h in lexical}
    summ = _per_file(legs.get("summary") or ())
    best_in_file: dict[_File, dict[str, list[float]]] = {}
    for key, seen in found.items():
        per = best_in_file.setdefault(key[:2], {"semantic": [], "keyword": []})
        for name, (s, _r) in seen.items():
            per[name].append(s)
    top3 = {f: {n: sorted(v, reverse=True)[:3] for n, v in per.items()}
            for f, per in best_in_file.items()}
    generated_set = set(generated)
    kinds: dict[_File, tuple[float, ...]] = {}
    overlaps: dict[str, float] = {}
    ident = float(form.identifier)
    behaviour = float(not (form.prose or form.how_to or form.identifier))
    test_symbols: dict[str, bool] = {}
    templates: dict[tuple[_File, bool], tuple[float, ...]] = {}
    out: list[Candidate] = []
    for hit in hand:
        f = (hit.repository, hit.path)
        symbol = hit.symbol or ""
        test_symbol = test_symbols.get(symbol)
        if test_symbol is None:
            test_symbol = test_symbols[symbol] = bool(symbol) and is_test_symbol(symbol)
        if light:  # every feature but log_hand is the file's: one vector per file
            template = templates.get((f, test_symbol))
            if template is not None:
                sm = summ.get(f, (0.0, 0.0))[0]
                own = math.log(0.01 + max(0.0, hit.score) + form.summary_weight * sm)
                out.append(Candidate(hit, (*template[:_LOG_HAND], own,
                                           *template[_LOG_HAND + 1:])))
                continue
        seen = found.get(_identity(hit), {})
        line_in = any(hit.start_line <= n <= hit.end_line for n in lex_lines.get(f, ()))
        sem, sem_rr = seen.get("semantic", (0.0, 0.0))
        kw, kw_rr = seen.get("keyword", (0.0, 0.0))
        lx, lx_rr = lex.get(f, (0.0, 0.0))
        sm, sm_rr = summ.get(f, (0.0, 0.0))
        best = top3.get(f, {"semantic": [], "keyword": []})
        sym = 0.0 if light else overlaps.get(symbol)
        if sym is None:
            sym = overlaps[symbol] = _overlap(form.words, symbol)
        kind = kinds.get(f)
        if kind is None:
            stem = hit.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
            folders = hit.repository + "/" + hit.path.rpartition("/")[0]
            dirs = overlaps.get(folders)
            if dirs is None:
                dirs = overlaps[folders] = _overlap(form.words, folders)
            kind = kinds[f] = (*file_kinds(hit.path, None, f in generated_set),
                               _overlap(form.words, stem), dirs,
                               float(hit.language == "text"))
        test, gen, example, types, changelog, prose, data, built, pth, dirs, text = kind
        if test_symbol:
            test = 1.0
        vector = (
            sem, sem_rr, kw, kw_rr, lx, lx_rr, float(line_in), float(not seen), sm, sm_rr,
            _others(best["semantic"], sem), _others(best["keyword"], kw),
            float(len(seen) > 1), sym, pth, dirs,
            math.log(0.01 + sem + form.keyword_weight * kw + form.lexical_weight * lx),
            math.log(0.01 + max(0.0, hit.score) + form.summary_weight * sm),
            sem * ident, kw * ident, lx * ident, sym * ident,
            test, gen, example, types, changelog, prose, data, built, text * (1.0 - prose),
            test * form.tests, example * form.examples, types * form.types,
            changelog * form.history, prose * form.how_to, prose * form.where,
            prose * form.prose, prose * ident, prose * behaviour, prose * form.task,
            sem * prose, kw * prose,
        )
        if light:
            templates[(f, test_symbol)] = vector
        out.append(Candidate(hit, vector))
    return out


LIGHT_FILE_FEATURES: tuple[str, ...] = ("dir_words", "plain_text", "prose_x_task",
                                         "prose_x_wants_prose")
"""The file-level features `light_values` gives, in the order it gives them."""
LIGHT_FEATURES = frozenset({"log_hand", *LIGHT_FILE_FEATURES})
"""The features `light_values` gives: a model that reads no others (the shipped one) is
scored without building any candidate's vector."""


def light_values(
    query: str, legs: Mapping[str, Sequence[Hit]], *,
    unembedded: Collection[tuple[str, str, int, int]] = (),
    generated: Collection[tuple[str, str]] = (), options: FusionOptions | None = None,
) -> list[tuple[Hit, float, tuple[float, ...]]]:
    """Each candidate of `candidates` (the same hits, in the same order) with the values of
    `LIGHT_FEATURES` only, as `candidates` computes them: its `log_hand`, and its file's
    `LIGHT_FILE_FEATURES` in that order; the other features cost the shipped model's
    searches ~1 ms for nothing."""
    options = replace(options or FusionOptions(), method="score")
    hand = rerank(query, fused_hits(query, legs, options, unembedded), options, generated)
    form = QueryForm.of(query, options)
    summ = _per_file(legs.get("summary") or ())
    per_file: dict[_File, tuple[float, ...]] = {}
    out: list[tuple[Hit, float, tuple[float, ...]]] = []
    for hit in hand:
        f = (hit.repository, hit.path)
        values = per_file.get(f)
        if values is None:
            folders = hit.repository + "/" + hit.path.rpartition("/")[0]
            prose = float(is_prose(hit.path))
            text = float(hit.language == "text") * (1.0 - prose)
            values = per_file[f] = (_overlap(form.words, folders), text, prose * form.task,
                                    prose * form.prose)
        sm = summ.get(f, (0.0, 0.0))[0]
        own = math.log(0.01 + max(0.0, hit.score) + form.summary_weight * sm)
        out.append((hit, own, values))
    return out


def _others(best: list[float], own: float) -> float:
    """The mean of the two best scores of the file other than `own`."""
    rest = list(best)
    if own in rest:
        rest.remove(own)
    return sum(rest[:2]) / 2
