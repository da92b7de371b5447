"""Code over prose: for a question about behaviour, the code that does it before the page
that describes it.

A tutorial page explains what the code does in plain words, so for "how are dates
converted to JSON" it often reads closer to the question than the encoder does, and it
ranks first. An agent asking how something works wants the code. `code_first` (the last
step of `search.hybrid.rank_hybrid`) re-orders the fused candidates:

- **What the question asks for** (`wants_prose`): a usage question ("how do I ...",
  "can I ...", "is there a way ..."), a task ("serve a directory of images"), one that
  names the documentation (a guide, a tutorial, the docs, the README,
  install or getting started), or one asked in another language than the code's
  (`search.translations.query_language`) is answered by prose: nothing changes. Any
  other question about behaviour is answered by code.
- **Prose that describes a candidate** (`describes`): every prose hit loses
  `PROSE_FACTOR` of its score, and a page whose candidate hits name an identifier that a
  code hit among the candidates defines (its symbol) or uses (a word shaped like an
  identifier in its text: `jsonable_encoder`, `xsrfCookieName`, `HTTPBasic`; in a code
  span or shaped like one in the page) goes no higher than just below the best such code
  hit, when that scores at least `ANCHOR_SHARE` of the page: the page comes after the
  code it describes, never above it. (The code that answers may be among the candidates
  under words the page does not use: hence the factor for every page.)
- **A bounded share of the top**: at most `MAX_PROSE_TOP` prose hits among the first
  `TOP` results, so a question that code answers still shows the pages that explain it,
  after the code, and never a first page of prose alone. Code in folders of examples
  (`docs_src/`, `examples/`) counts in that share unless the question asks for an
  example (`asks_for_examples`): it illustrates the code as a page does, and a question
  quoting a sample (`/items/{item_id}`) otherwise fills the top with the samples that
  hold it. When no code hit scores at least `CODE_FLOOR` of the best hit, no code
  answers the question, and prose keeps its place.

The signals are the kind of file (`is_prose`), the identifiers the candidates define or use and
the prose names (any language), and the question's form; none is a word list alone.
Pure: hits in, hits out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache

from ctxd.search.merge import descending
from ctxd.search.models import Hit
from ctxd.search.path_kinds import is_example, is_prose
from ctxd.search.questions import asks_for_examples, wants_prose

__all__ = ["code_first", "describes", "named"]

PROSE_FACTOR = 0.85
"""Score factor for every prose hit, for a behaviour question."""
MAX_PROSE_TOP = 3
"""At most this many prose hits among the first `TOP` for a behaviour question."""
TOP = 10
CODE_FLOOR = 0.5
"""A code hit scoring at least this share of the best hit answers the question."""

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_CODE_SPAN = re.compile(r"``?([^`\n]{1,80})``?")
_SHAPE = r"_[A-Za-z0-9]|[a-z0-9][A-Z]|[A-Z]{2}[a-z]"
"""What marks a word as an identifier: an underscore inside it, a lower-to-upper step,
or two capitals before a lower-case letter."""
_NAMED = re.compile(rf"[A-Za-z_]*(?:{_SHAPE})[A-Za-z0-9_]*")
"""An identifier by its form: `snake_case`, `camelCase`, `HTTPBasic`."""
ANCHOR_SHARE = 0.7
"""A page goes below the code it names only when that code scores at least this share
of the page (else a name shared by chance would bury the page)."""


def _names(hit: Hit) -> set[str]:
    """What a code hit defines or uses by a name of its own: its symbol's parts
    (`Retry.increment` -> `Retry`, `increment`) of three characters or more, and the
    identifiers shaped like one in its text (`xsrfCookieName`, `max_redirects`: a page
    naming the options a function reads describes it, though the function is anonymous,
    as JavaScript's `export default (config) => ...`). Not a file's name: a page that
    says `layout` need not describe `layout.py`; not dunders (`__init__`)."""
    out = {p for p in re.split(r"[.:#]+", hit.symbol) if len(p) >= 3} if hit.symbol else set()
    return out | _used(hit.snippet)


_WORD4 = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
_SHAPED = re.compile(_SHAPE)
"""`_NAMED`'s test, on each distinct word (3x faster than `_NAMED` over a text)."""


@lru_cache(maxsize=8192)
def _used(text: str) -> frozenset[str]:
    """The identifiers shaped like one (`_NAMED`) of four characters or more in a code
    hit's text, dunders left out; kept per text (a long-lived process meets the same
    checkpoints question after question)."""
    return frozenset(w for w in set(_WORD4.findall(text)) if _SHAPED.search(w)
                     and not (w.startswith("__") and w.endswith("__")))


def named(text: str) -> set[str]:
    """The identifiers a page names: words in code spans (`` `Query` ``, ``` ``render`` ```)
    and words shaped like identifiers anywhere (`jsonable_encoder`, `HTTPBasic`)."""
    out = {w for span in _CODE_SPAN.findall(text) for w in _IDENT.findall(span)}
    out.update(_NAMED.findall(text))
    return out


def describes(words: set[str], code: Sequence[Hit], names: dict[int, set[str]] | None = None,
              floor: float = 0.0) -> Hit | None:
    """The best-scored hit of `code` (best first) scoring at least `floor` that a page
    holding `words` (the identifiers of its candidate hits, `named`) names an identifier
    of, or None. `names` keeps each code hit's `_names` by its place in `code`, computed
    only as far down as a page's search goes, once for all of a question's pages."""
    if not words:
        return None
    kept = {} if names is None else names
    for i, c in enumerate(code):
        if c.score < floor:
            return None
        found = kept.get(i)
        if found is None:
            found = kept[i] = _names(c)
        if found & words:
            return c
    return None


def code_first(query: str, hits: Sequence[Hit], *, factor: float = PROSE_FACTOR,
               max_prose_top: int = MAX_PROSE_TOP, top: int = TOP) -> list[Hit]:
    """`hits` best first, prose placed after the code it describes for a behaviour
    question (module docstring); unchanged order (best first) otherwise."""
    ranked = sorted(hits, key=lambda h: (-h.score, h.repository, h.path, h.start_line))
    if not ranked or wants_prose(query):
        return ranked
    best = ranked[0].score
    code = [h for h in ranked if not is_prose(h.path)]
    if not code or code[0].score < CODE_FLOOR * best:
        return ranked
    words: dict[tuple[str, str], set[str]] = {}
    for h in ranked:
        if is_prose(h.path):
            words.setdefault((h.repository, h.path), set()).update(named(h.snippet))
    names: dict[int, set[str]] = {}
    out: list[Hit] = []
    for h in ranked:
        if not is_prose(h.path):
            out.append(h)
            continue
        # only code scoring ANCHOR_SHARE of the page can hold it below: below that share
        # the factor alone ranks it
        anchor = describes(words[(h.repository, h.path)], code, names,
                           floor=ANCHOR_SHARE * h.score)
        score = h.score * factor
        if anchor is not None:
            score = min(score, anchor.score * 0.999)
        h = replace(h, score=score)
        out.append(h)
    out.sort(key=lambda h: (-h.score, h.repository, h.path, h.start_line))
    return _bound(out, max_prose_top, top,
                  is_prose if asks_for_examples(query) else _illustrates)


def _illustrates(path: str) -> bool:
    """Prose, or code in a folder of examples (`path_kinds.is_example`): both show how to
    use the code; neither is where it does what a behaviour question asks."""
    return is_prose(path) or is_example(path)


def _bound(ranked: list[Hit], most: int, top: int, bounded: Callable[[str], bool] = is_prose
           ) -> list[Hit]:
    """At most `most` files of the `bounded` kind (prose) among the first `top` (by
    file): the rest move down to just after the `top`-th result, in their order."""
    head: list[Hit] = []
    held: list[Hit] = []
    files: set[tuple[str, str]] = set()
    prose_files: set[tuple[str, str]] = set()
    rest = list(ranked)
    while rest and len(files) < top:
        h = rest.pop(0)
        f = (h.repository, h.path)
        if bounded(h.path) and f not in prose_files and len(prose_files) >= most:
            held.append(h)
            continue
        if bounded(h.path):
            prose_files.add(f)
        files.add(f)
        head.append(h)
    if not held:
        return ranked
    return descending([*head, *held, *rest])
