"""Why a hit ranks where it does: each feature's contribution to its hybrid score (issue 42,
item 4), so that a surprising rank can be read.

`explain_hit(query, legs, hit, options, ...)` re-derives, from the same legs and the same
options `search.hybrid.rank_hybrid` used, what each part of the ranking gave the hit:

- the legs, added: `semantic` and `keyword` (the leg's weight for this query times the
  best normalised score of that leg's candidates within the hit's lines), `lexical` and
  `summary` (file-level: weight times the file's normalised score);
- the file's kind, a factor: tests and stubs, generated code, examples, TypeScript type
  modules, changelogs, prose for a "where" or a how-to question (`rerank`'s rules), and
  prose for a behaviour question (`search.prose.code_first`);
- `other`: what the score holds beyond those (other strong parts of the file, merged
  neighbours, a page held just below the code it describes);
- the hard rules that moved the hit to the front: a definition the query names
  (`search.definitions`), an exact phrase (`search.exact_phrase`).

With the fitted ranking (`search.rank_model`, `[search] fusion = "fitted"`),
`explain_fitted` gives instead each feature's contribution to the model's sum (its weight
times the candidate's value, plus its splits' changes along the model's trees, kind
`weight`; `search.rank_features.FEATURES`) and the bias, preceded, when the model builds
on the hand ranking (`log_hand`), by the hand ranking's own parts as above (what
`log_hand` is made of), and followed by the same hard rules; the score is the exp of the
weights' sum.

Pure and off the ranking's path: it runs only when an explanation is asked for, so ranking
time does not change.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from ctxd.search.hybrid import (
    FusionOptions,
    demotes_example,
    file_norms,
    leg_weights,
    normalised,
    release_versions_of,
    version_factor,
)
from ctxd.search.models import Hit
from ctxd.search.path_kinds import (
    is_changelog,
    is_example,
    is_locale_data,
    is_prose,
    is_stub,
    is_test_or_stub,
    is_test_symbol,
    is_type_declarations,
)
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
    wants_prose,
)
from ctxd.search.rank_features import FEATURES, candidates
from ctxd.search.rank_model import RankModel

__all__ = ["Contribution", "explain_fitted", "explain_hit", "explain_text"]


@dataclass(frozen=True, slots=True)
class Contribution:
    """One feature's part in a hit's score."""

    feature: str
    value: float
    kind: str
    """`add` (added to the score), `factor` (the score multiplied by it), `weight` (a
    fitted model's weight times the feature's value, added to the model's sum), `rule` (a
    hard rule that moved the hit to the front; value 0)."""

    def as_dict(self) -> dict[str, object]:
        return {"feature": self.feature, "value": round(self.value, 4), "kind": self.kind}


def _leg_part(leg: Sequence[Hit], hit: Hit, weight: float) -> float:
    """`weight` times the best normalised score of `leg`'s candidates in `hit`'s lines."""
    if not leg or weight <= 0:
        return 0.0
    best = 0.0
    for h, s in zip(leg, normalised([h.score for h in leg]), strict=True):
        if (h.repository, h.path) == (hit.repository, hit.path) and (
                h.start_line <= hit.end_line and hit.start_line <= h.end_line):
            best = max(best, s)
    return weight * best


def _factors(query: str, hit: Hit, legs: Mapping[str, Sequence[Hit]], options: FusionOptions,
             generated: Collection[tuple[str, str]]) -> list[Contribution]:
    """The kind-of-file factors `rerank` and `code_first` applied to `hit`."""
    out: list[Contribution] = []
    how_to = asks_how_to(query)
    prose = is_prose(hit.path)
    example_asked = asks_for_examples(query) and is_example(hit.path)
    stub_asked = asks_for_stubs(query) and is_stub(hit.path)
    if not asks_for_tests(query) and not example_asked and not stub_asked and (
            is_test_or_stub(hit.path) or is_test_symbol(hit.symbol)):
        out.append(Contribution("test or stub", options.demote_tests, "factor"))
    elif asks_about_tests(query) and is_test_or_stub(hit.path):
        out.append(Contribution("test, the question is about tests", options.promote_tests,
                                "factor"))
    elif (hit.repository, hit.path) in generated:
        out.append(Contribution("generated code", options.demote_generated, "factor"))
    elif demotes_example(hit.path, how_to or asks_for_examples(query), asks_task(query)):
        out.append(Contribution("example code", options.demote_examples, "factor"))
    elif not asks_for_types(query) and is_type_declarations(hit.path):
        out.append(Contribution("type declarations", options.demote_type_declarations,
                                "factor"))
    elif not names_language(query) and is_locale_data(hit.path):
        out.append(Contribution("one language's locale file", options.demote_locale_data,
                                "factor"))
    history = asks_for_history(query)
    if not history and is_changelog(hit.path):
        out.append(Contribution("changelog", options.demote_changelogs, "factor"))
    elif asks_where_in_code(query) and prose:
        out.append(Contribution("prose, a 'where in the code' question",
                                options.demote_prose_for_where, "factor"))
    elif how_to and prose:
        out.append(Contribution("prose, a how-to question", options.promote_prose_for_how_to,
                                "factor"))
    found = [h for n in ("semantic", "keyword", "lexical") for h in legs.get(n, ())]
    version = version_factor(release_versions_of(query, found), hit.path, options)
    if version != 1.0:
        out.append(Contribution("its path names a version the question names"
                                if version == options.promote_named_version
                                else "its path names another version than the question",
                                version, "factor"))
    if prose and options.code_first and not history and not wants_prose(query):
        out.append(Contribution("prose, a behaviour question (code first)",
                                options.prose_factor, "factor"))
    return [c for c in out if c.value != 1.0]


def explain_hit(
    query: str, legs: Mapping[str, Sequence[Hit]], hit: Hit, options: FusionOptions, *,
    generated: Collection[tuple[str, str]] = (), rules: Sequence[str] = (),
) -> list[Contribution]:
    """Each feature's contribution to `hit`'s score (module docstring); `rules`: the hard
    rules that moved its file to the front (a definition the query names, an exact
    phrase)."""
    w = leg_weights(query, options)
    parts = [Contribution("semantic", _leg_part(legs.get("semantic", ()), hit, w["semantic"]),
                          "add"),
             Contribution("keyword", _leg_part(legs.get("keyword", ()), hit, w["keyword"]),
                          "add")]
    key = (hit.repository, hit.path)
    lexical = legs.get("lexical", ())
    if lexical and w["lexical"] > 0:
        parts.append(Contribution("lexical", w["lexical"] * file_norms(lexical).get(key, 0.0),
                                  "add"))
    summary = legs.get("summary", ())
    if summary and options.summary_weight > 0:
        parts.append(Contribution(
            "file summary", options.summary_weight * file_norms(summary).get(key, 0.0), "add"))
    if "translations" in legs and any((h.repository, h.path) == key
                                      for h in legs["translations"]):
        parts.append(Contribution("translated page in the question's language", 0.0, "rule"))
    factors = _factors(query, hit, legs, options, generated)
    product = 1.0
    for f in factors:
        product *= f.value
    expected = sum(p.value for p in parts if p.kind == "add") * product
    out = [p for p in parts if p.value or p.kind == "rule"] + factors
    out += [Contribution(r, 0.0, "rule") for r in rules]
    if not rules:
        out.append(Contribution("other (more of the file, merged parts, placement)",
                                hit.score - expected, "add"))
    return out


def explain_fitted(
    query: str, legs: Mapping[str, Sequence[Hit]], hit: Hit, model: RankModel, *,
    unembedded: Collection[tuple[str, str, int, int]] = (),
    generated: Collection[tuple[str, str]] = (), rules: Sequence[str] = (),
    options: FusionOptions | None = None,
) -> list[Contribution]:
    """Each feature's contribution to `hit`'s fitted score (module docstring): the
    candidate of its file that scored best within its lines (a merged hit keeps its best
    part's score), largest contribution first, then the bias and `rules`."""
    best: tuple[float, tuple[float, ...]] | None = None
    for cand in candidates(query, legs, unembedded=unembedded, generated=generated,
                           options=options):
        h = cand.hit
        if (h.repository, h.path) != (hit.repository, hit.path):
            continue
        if not (h.start_line <= hit.end_line and hit.start_line <= h.end_line):
            continue
        score = model.score(cand.vector)
        if best is None or score > best[0]:
            best = (score, cand.vector)
    out: list[Contribution] = []
    if best is not None:
        if model.weights[FEATURES.index("log_hand")]:
            out = explain_hit(query, legs, hit, options or FusionOptions(),
                              generated=generated)
        out += [Contribution(f"{name} {value:.3g}", part, "weight")
                for name, value, part in model.contributions(best[1])]
        out.append(Contribution("bias", model.base, "weight"))
    return out + [Contribution(r, 0.0, "rule") for r in rules]


def explain_text(contributions: Sequence[Contribution]) -> str:
    """One line: `semantic 0.91 + keyword 0.33 x test or stub 0.5 + other 0.05`; for a
    fitted score, `exp(log_hand -0.2: -0.210, test 1: -1.200, ..., bias: +0.100)`."""
    weights = [c for c in contributions if c.kind == "weight"]
    if weights:
        text = "exp(" + ", ".join(f"{c.feature}: {c.value:+.3f}" for c in weights) + ")"
        hand = [c for c in contributions if c.kind in ("add", "factor")]
        if hand:
            text += "; log_hand = log(" + _hand_text(hand) + ")"
        for c in contributions:
            if c.kind == "rule":
                text += f"; rule: {c.feature}"
        return text
    text = _hand_text(contributions)
    for c in contributions:
        if c.kind == "rule":
            text += f"; rule: {c.feature}"
    return text


def _hand_text(contributions: Sequence[Contribution]) -> str:
    """The hand ranking's parts: `semantic 0.91 + keyword 0.33, x0.5 (test or stub)`."""
    adds = [c for c in contributions if c.kind == "add" and not c.feature.startswith("other")]
    text = " + ".join(f"{c.feature} {c.value:.3f}" for c in adds) or "no leg"
    for c in contributions:
        if c.kind == "factor":
            text += f", x{c.value:g} ({c.feature})"
    for c in contributions:
        if c.kind == "add" and c.feature.startswith("other"):
            text += f", {c.value:+.3f} {c.feature}"
    return text
