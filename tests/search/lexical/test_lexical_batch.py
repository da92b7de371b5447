"""The batch verifier (`search/lexical/batch.py`) answers as the per-file path does, and the
texts kept between queries (`search/lexical/texts.py`) follow the index.

Random files (ASCII and not, CRLF, KELVIN SIGN and LONG S, which RE2 folds to k and s,
definitions, no final newline) are indexed for real; each query's whole answer (files,
scores, lines, columns, context, counts, notes) from an engine that verifies a batch at a
time must equal one from an engine that verifies file by file (`batch=False`).
"""

from __future__ import annotations

import random

from ctxd.search.lexical import engine as engine_module
from ctxd.search.lexical.engine import EmbeddedLexical
from ctxd.search.lexical.texts import TEXTS
from tests.search.conftest import IndexBuilder

_WORDS = [
    "self", "Self", "SELF", "elf", "the", "The", "def", "kelvin", "Kelvin", "k", "s", "sk",
    "é", "naïve", "foo_bar", "fooBar", "x", "xx", "42", "2024-01-02", "(", ")", ".", ",",
    "quokka", "retry", "backoff",
]
_FOLDED = ["\u212a", "\u017f", "\u212aelvin", "\u017felf"]
"""Characters that RE2 folds to k and s (the batch leaves their files to the per-file
path for such patterns): only in the second repository's files."""
_QUERIES = [
    "self", "Self", "case:yes Self", "case:no SELF", "elf", "the", "def", "k", "kelvin",
    "s", "sk", "é", "naïve", "foo_bar", "FooBar", "quokka", "42", "xx", "x", r"e\)", "Elf",
    r"\w+", r"\s+", r"se.f", r"^def", r"\)$", r"x*", r"\bself\b", r"[kK]elvin",
    r"\d{4}-\d{2}-\d{2}", r"(?i)kelvin", r"e\sd", r"\Aself", "elf$",
    "self the", "self -the", "self or def", "(self or the) def", "self elf", "self sel",
    "retry backoff", "retry backoff quokka", r"file:\.py$ self", "file:b self", "-file:b self",
    "lang:python def", "lang:markdown the", "content:self", "f:a", "f:py self", "r:app self",
    "sym:quokka", "type:file self", "self case:yes", "-self", "-file:b", "self or -the",
    "lang:python -def", "type:repo self", r"retry backoff \d+", "Self self", "case:yes self Self",
    "retry the backoff",
]


def _text(rng: random.Random, words: list[str]) -> str:
    lines = []
    for _ in range(rng.randint(0, 30)):
        if rng.random() < 0.15:
            lines.append(f"def {rng.choice(['quokka', 'self_test', 'kelvin', 'the'])}"
                         f"{rng.randint(0, 3)}(self):")
        elif rng.random() < 0.05:
            lines.append(f"class {rng.choice(['Self', 'Kelvin', 'Quokka'])}:")
        else:
            line = [rng.choice(words) for _ in range(rng.randint(0, 8))]
            lines.append(rng.choice([" ", "", "  ", "\t"]).join(line))
    end = rng.choice(["\n", "", "\r\n"])
    return rng.choice(["\n", "\r\n"]).join(lines) + end


def _answer(engine: EmbeddedLexical, query: str, **kw: int) -> tuple[object, ...]:
    with engine_module._ANSWERS_LOCK:
        engine_module._ANSWERS.clear()
    res = engine.search(query, **kw)
    return (res.files, res.match_count, res.file_count, res.partial, res.notes)


def test_batch_verifier_answers_as_the_per_file_path(index: IndexBuilder) -> None:
    rng = random.Random(30)
    for repo, words in (("app", _WORDS), ("lib", _WORDS + _FOLDED)):
        files = {}
        for i in range(140):  # batches (64 files) of one repository, and of both
            ext = rng.choice([".py", ".md", ".txt"])
            files[f"{rng.choice(['a', 'b', 'src/c'])}{i}{ext}"] = _text(rng, words)
        index.add_repo(repo, files)
    batch = EmbeddedLexical(index.store)
    per_file = EmbeddedLexical(index.store, batch=False)
    for query in _QUERIES:
        for kw in ({"max_files": 1000, "context_lines": 2}, {"max_files": 3, "context_lines": 0}):
            fast = _answer(batch, query, **kw)
            assert fast == _answer(per_file, query, **kw), (query, kw)
            TEXTS.clear()  # and read afresh
            assert fast == _answer(batch, query, **kw), (query, kw)


def test_batch_verifier_stops_at_the_match_limit_where_the_per_file_path_does(
    index: IndexBuilder,
) -> None:
    files = {f"f{i:03}.txt": "self\n" * (1 + i % 7) for i in range(150)}
    index.add_repo("app", files)
    for limit in (1, 10, 64, 100):
        batch = EmbeddedLexical(index.store, match_limit=limit)
        per_file = EmbeddedLexical(index.store, match_limit=limit, batch=False)
        fast = _answer(batch, "self", max_files=1000, context_lines=1)
        assert fast == _answer(per_file, "self", max_files=1000, context_lines=1), limit
        assert fast[3] is True  # partial


def test_batch_verifier_stops_at_the_scan_limit_where_the_per_file_path_does(
    index: IndexBuilder,
) -> None:
    files = {f"f{i:03}.txt": f"2024-01-{i % 28 + 1:02}\n" + "x " * i for i in range(150)}
    index.add_repo("app", files)
    query = r"\d{4}-\d{2}-\d{2}"  # no literal of 3 characters: scanned under the budget
    for limit in (1, 500, 5_000):
        batch = EmbeddedLexical(index.store, scan_limit_bytes=limit)
        per_file = EmbeddedLexical(index.store, scan_limit_bytes=limit, batch=False)
        fast = _answer(batch, query, max_files=1000, context_lines=0)
        assert fast == _answer(per_file, query, max_files=1000, context_lines=0), limit
        assert fast[3] is True and "bounded scan" in str(fast[4])


def test_kept_texts_follow_the_index_when_a_file_changes(index: IndexBuilder) -> None:
    index.add_repo("app", {"a.py": "quokka = 1\n", "b.py": "wombat = 2\n"})
    engine = EmbeddedLexical(index.store)
    assert [f.path for f in engine.search("quokka").files] == ["a.py"]
    assert engine.search("wombat").files[0].matches[0].text == "wombat = 2"
    index.add_repo("app", {"b.py": "wombat = 3  # quokka\n"})  # b.py written again
    assert [f.path for f in engine.search("quokka").files] == ["a.py", "b.py"]
    assert engine.search("wombat").files[0].matches[0].text == "wombat = 3  # quokka"
