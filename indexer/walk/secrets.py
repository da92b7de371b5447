"""What a secret is: key and credential files by name, and secrets found in a file's text.

A file is judged by what it is, never by a word in the name of source code or docs:

- `SENSITIVE_FILE_PATTERNS`: exact names and extensions of key and credential files
  (`.env*`, `*.pem`, `*.key`, `id_rsa*`, `credentials.json`, `.npmrc`, `.git-credentials`,
  `shadow`, ...), whatever the file holds;
- `SENSITIVE_WORD_PATTERNS`: a name holding `secret`, `credential` or `password` makes a
  *data or config* file sensitive (`secrets.yaml`, `aws_credentials.json`,
  `client_secret.txt`: `is_data_or_config`); source code, docs and anything else
  (`secret.go`, `docs/secrets.md`, a fixture `testdata/secret-list.golden`) are judged by
  their text alone, never by a word in their name;
- `find_secrets(text)`: the content of any file, read by the pipeline or a file request: a
  PEM private key, found by following the key from its BEGIN line to its END line
  whatever the layout (indented, quoted, in a YAML block scalar, a C macro continued with
  `\\`, `\\r\\n` escapes, wrapped at 32 columns, split over string literals joined by
  `+`, `.` or nothing, its BEGIN line split too), the base64 of one (`LS0tLS1CRUdJTi`), the
  `data` / `stringData` of a Kubernetes `kind: Secret`, a well-known token format (AWS
  access key ids and the secret access key named or written beside one, GitHub, GitLab,
  Slack, Stripe, Google, npm, PyPI, OpenAI, Anthropic, SendGrid tokens; also split over
  joined literals), password hashes in `/etc/shadow` form, a URL with a password (a git
  config's remote or `insteadOf`, a credential store, any `scheme://user:pw@host`), an
  `extraheader` authorization, a kubeconfig's client key or token, netrc and pgpass
  entries, a Docker registry `auth`, an npm auth token (`.yarnrc.yml`'s `npmAuthToken`),
  a database image's password variable (`POSTGRES_PASSWORD` in a compose file).
  Placeholders (`AKIAIOSFODNN7EXAMPLE`, `ghp_xxxx...`, `https://USER:TOKEN@...`,
  `{password}`, a CI database's `postgres:postgres`, a Helm template's `{{ ... }}`) are
  not secrets; a file or folder *named* after a token is refused by name (`name_secret`,
  `indexer.walk.policy`), its name masked in reports (`mask_name`);
- `redact(text, found)`: the text with every secret masked character for character (`*`),
  so that source code and docs holding a test key stay indexed, symbols and line numbers
  intact, and the secret is in no index and no answer (`indexer.walk.policy`).

`indexer.walk.policy` applies it (names, content). The rules, one per format, are
`indexer.walk.secret_rules`. Uses only `re` and RE2 (the walk imports nothing of
`indexer.chunk`: `CODE_AND_DOCS` names the extensions itself).

Invariants: pure functions over names and text; one RE2 set over a file's bytes (all
rules at once, linear time) decides that it holds no secret, the common case, and else
which rules may match: only those look at the file again, one by one, to tell a secret
from a placeholder (`bench/bench_secrets.py` measures the cost per MiB).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Any

import re2

from ctxd.indexer.walk.secret_rules import PEM_RULE, RULES, Rule, Span, rule_spans

__all__ = [
    "CODE_AND_DOCS",
    "SENSITIVE_DIR_PATTERNS",
    "SENSITIVE_FILE_PATTERNS",
    "SENSITIVE_WORD_PATTERNS",
    "Found",
    "find_secrets",
    "is_code_or_docs",
    "is_data_or_config",
    "mask_name",
    "name_secret",
    "redact",
    "secret_in",
]

SENSITIVE_FILE_PATTERNS: tuple[str, ...] = (
    # environment files and private keys
    ".env*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore",
    "*.ppk", "*.kdbx", "*.keytab", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
    # credential stores of tools
    "credentials", "credentials.json", "client_secret*.json", ".netrc*", "netrc", "*_netrc",
    ".npmrc", ".pypirc", ".pgpass*", "pgpass", "pgpass.conf", ".htpasswd", ".git-credentials",
    ".dockercfg", "kubeconfig", "*.kubeconfig",
    # system password databases
    "shadow", "shadow-", "gshadow", "gshadow-", "master.passwd",
    # infrastructure state (holds every secret it provisioned)
    "*.tfstate", "*.tfstate.*",  # and every backup: `terraform.tfstate.<time>.backup`
)
"""Key and credential files by exact name or extension (case-insensitive)."""

SENSITIVE_WORD_PATTERNS: tuple[str, ...] = ("*secret*", "*credential*", "*password*")
"""Names that make a data or config file sensitive; never source code or docs."""

SENSITIVE_DIR_PATTERNS: tuple[str, ...] = (".aws", ".ssh", ".gnupg", ".kube", ".azure")
"""Built-in sensitive directories (case-insensitive): pruned with one `Skipped`."""

CODE_AND_DOCS = frozenset({
    # source code
    "py", "pyi", "pyx", "pxd", "js", "mjs", "cjs", "jsx", "ts", "mts", "cts", "tsx", "go",
    "rs", "java", "kt", "kts", "scala", "groovy", "gradle", "c", "h", "cc", "cpp", "cxx",
    "hh", "hpp", "hxx", "m", "mm", "cs", "fs", "vb", "swift", "rb", "rake", "gemspec", "php",
    "pl", "pm", "lua", "r", "dart", "ex", "exs", "erl", "hrl", "hs", "ml", "mli", "clj",
    "cljs", "zig", "nim", "jl", "sh", "bash", "zsh", "ksh", "fish", "ps1", "psm1", "bat",
    "cmd", "vue", "svelte", "sql", "graphql", "gql", "proto", "tf", "hcl", "cmake", "mk",
    "css", "scss", "less", "html", "htm", "j2", "jinja", "jinja2", "tmpl", "tpl",
    # docs
    "md", "markdown", "mdx", "rst", "adoc", "asciidoc", "tex", "org", "pod", "rdoc",
})
"""Extensions of source code and docs: never refused for a word in their name."""
DATA_AND_CONFIG = frozenset({
    "json", "json5", "jsonc", "yaml", "yml", "toml", "ini", "cfg", "conf", "config", "cnf",
    "properties", "props", "xml", "plist", "env", "txt", "text", "csv", "tsv", "tfvars",
    "bak", "backup", "old", "orig", "save", "sav", "enc", "gpg", "asc", "age", "sops",
})
"""Extensions of data and config files (and their backups): named for secrets, refused."""
_CODE_NAMES = frozenset({"makefile", "dockerfile", "containerfile", "rakefile", "gemfile",
                         "jenkinsfile", "vagrantfile"})


def is_code_or_docs(rel: str) -> bool:
    """Whether the name says source code or docs (`.go`, `.py`, `.md`, `.tf`, `Makefile`,
    ...), as opposed to data or config (`.json`, `.yaml`, `.txt`, no or another extension)."""
    name = rel.rsplit("/", 1)[-1].lower()
    _stem, dot, ext = name.rpartition(".")
    return (bool(dot) and ext in CODE_AND_DOCS) or name in _CODE_NAMES


def is_data_or_config(rel: str) -> bool:
    """Whether the name says data or config (`.json`, `.yaml`, `.ini`, `.txt`, a backup,
    no extension): such a file named for secrets is refused. Anything else named for them
    (a test fixture such as `secret-list.golden`, source code, docs) is judged by what its
    text holds, never by the word."""
    name = rel.rsplit("/", 1)[-1].lower()
    _stem, dot, ext = name.lstrip(".").rpartition(".")
    return not is_code_or_docs(name) and (not dot or ext in DATA_AND_CONFIG)


_TOKEN_STARTS = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xoxa-",
                 "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "sk_live_", "rk_live_", "AIza",
                 "npm_", "AKIA", "ASIA", "SG.", "sk-", "pypi-")
"""How the token formats start: a literal that ends with one of them, or with a part of
one, right before a join may be the first half of a token split in code."""
_OP = r"(?:(?:\+|\.\.?|&|~|\|\|)[ \t]*)?"
_JOIN_TAIL = rf"[ \t]*{_OP}(?:\\?\r?\n[ \t]*{_OP})?[\"']"
_JOIN = re.compile(rf"[\"']{_JOIN_TAIL}")
"""Where code joins two string literals (`"` or `'`): a closing quote, a concatenation
operator (`+`, PHP's `.`, Lua's `..`, `&`, `~`, `||`) or none (adjacent literals), at most
one line end (a `\\` may continue the line) and the opening quote of the next."""
_PARTS = sorted({re.escape(t[:i]) for t in _TOKEN_STARTS for i in range(2, len(t))},
                key=len, reverse=True)
_SPLIT_TOKEN = re.compile(
    r"(?:-----(?:BEGIN(?: [A-Z ]*-{0,4})?|BEGI|BEG|BE|B)?|[\"'](?:" + "|".join(_PARTS)
    + "|(?:" + "|".join(re.escape(t) for t in _TOKEN_STARTS) + r")[A-Za-z0-9_.-]*))"
    + rf"[\"']{_JOIN_TAIL}")
"""A literal that is the start of a token (or a part of its prefix: `"gh" + "p_..."`),
or ends in a part of a PEM BEGIN line, joined to the next one: only then are the literals
joined and looked at again (backquotes are left out: Markdown's inline code)."""


def _split_tokens(text: str) -> list[tuple[int, str, list[Span]]]:
    """Tokens split over string literals joined in code (`"ghp_1a2b" + "3c4d..."`, Python's
    adjacent literals, PHP's `.`): the text with every join taken out is looked at with the
    token rules, and a token found across a join is masked piece by piece in `text` (its
    quotes and operators kept). `(where, what, spans)` of each."""
    parts: list[str] = []
    joined_at: list[int] = []  # where each kept part starts in the joined text
    text_at: list[int] = []  # and in `text`
    size = pos = 0
    for join in _JOIN.finditer(text):
        parts.append(text[pos:join.start()])
        joined_at.append(size)
        text_at.append(pos)
        size += join.start() - pos
        pos = join.end()
    parts.append(text[pos:])
    joined_at.append(size)
    text_at.append(pos)
    joined = "".join(parts)
    found: list[tuple[int, str, list[Span]]] = []
    for rule in RULES:
        if not rule.token or not any(lit in joined for lit in rule.literals):
            continue
        for m in rule.regex.finditer(joined):
            for start, end, _how in rule_spans(rule, joined, m):
                first = bisect.bisect_right(joined_at, start) - 1
                last = bisect.bisect_right(joined_at, end - 1) - 1
                if first == last:
                    continue  # in one literal: the text itself holds it
                pieces: list[Span] = []
                for i in range(first, last + 1):
                    lo, hi = max(start, joined_at[i]), min(end, joined_at[i] + len(parts[i]))
                    pieces.append((text_at[i] + lo - joined_at[i],
                                   text_at[i] + hi - joined_at[i], "all"))
                found.append((pieces[0][0], rule.what, pieces))
    return found


_SPLIT = len(RULES)
"""Stands for `_SPLIT_TOKEN` among the rules' indexes (`_ANY_RULE`)."""


def _any_rule() -> tuple[Any, tuple[tuple[int, ...], ...]]:
    """All rules as one RE2 set over UTF-8 bytes (a pattern shared by rules, such as the
    URL rules' gate, once): one linear pass says which rules may match. The set, and the
    indexes in `RULES` (`_SPLIT`: the split-token trigger) of each of its patterns."""
    options = re2.Options()
    options.never_capture = True
    options.log_errors = False
    options.max_mem = 64 << 20
    rules = re2.Set.SearchSet(options)
    parts: dict[str, list[int]] = {}
    for i, rule in enumerate((*RULES, Rule("", (), _SPLIT_TOKEN))):
        if rule.gate:
            part = f"(?:{rule.gate})"
        else:
            source = re.sub(r"\(\?P<\w+>", "(?:", rule.regex.pattern)
            part = ("(?m:" if rule.regex.flags & re.MULTILINE else "(?:") + source + ")"
        parts.setdefault(part, []).append(i)
    for part in parts:
        rules.Add(part.encode("utf-8"))
    rules.Compile()
    return rules, tuple(tuple(ids) for ids in parts.values())


_ANY_RULE, _RULES_OF = _any_rule()


@dataclass(frozen=True, slots=True)
class Found:
    """The secrets in a text: the first, described with its line, and every span."""

    what: str
    """`a GitHub token (line 12)`."""
    spans: tuple[Span, ...]
    """Each secret's `(start, end, how)`: the text to mask (`redact`, `Span`)."""


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


MAX_CANDIDATES = 10_000
"""The most matches of one rule looked at in one text: each costs at most a few
`PEM_WINDOW`s, so a file made of candidates (base64 of `-----BEGIN ` over and over, ten
thousand `kind: Secret` documents) is judged in bounded time."""


def find_secrets(text: str) -> Found | None:
    """Every secret in `text` (see the module docstring), or None: one RE2 pass first, then
    the rules that matched, one by one, to tell secrets from placeholders."""
    hits = _ANY_RULE.Match(text.encode("utf-8", "surrogatepass"))
    if not hits:
        return None
    which = sorted(i for hit in hits for i in _RULES_OF[hit])
    first: tuple[int, str] | None = None
    spans: list[Span] = []
    for i in which:
        if i == _SPLIT:
            continue
        rule = RULES[i]
        for n, m in enumerate(rule.regex.finditer(text)):
            if n == MAX_CANDIDATES:
                break  # a file made to be slow to look at (`MAX_CANDIDATES`)
            got = rule_spans(rule, text, m)
            if not got:
                continue
            spans.extend(got)
            at = m.start() if rule is PEM_RULE else got[0][0]
            if first is None or at < first[0]:
                first = (at, rule.what)
    if _SPLIT in which:
        for at, what, got in _split_tokens(text):
            spans.extend(got)
            if first is None or at < first[0]:
                first = (at, what)
    if first is None:
        return None
    return Found(f"{first[1]} (line {_line(text, first[0])})", tuple(sorted(spans)))


MASK = "*"
"""What a secret's characters become (`redact`): not base64, not a token character."""
_PEM_MASKED = re.compile(r"\\+[nrt]|(?<![A-Za-z0-9+/=])(?:\+|//?)(?![A-Za-z0-9+/=])"
                         r"|([A-Za-z0-9+/=]+)")
"""In a key's span: escapes and a lone `+` or `/` (an operator, a comment leader) stay;
every run of base64 is masked, however short its piece."""


def redact(text: str, found: Found) -> str | None:
    """`text` with every secret `found` masked, character for character (line numbers,
    offsets and the code around them unchanged; line ends kept), or None when a secret is
    still found in what is left (then the file is refused whole)."""
    out: list[str] = []
    at = 0
    for start, end, how in found.spans:
        start = max(start, at)
        if end <= start:
            continue
        out.append(text[at:start])
        part = text[start:end]
        if how == "b64":
            out.append(_PEM_MASKED.sub(
                lambda m: MASK * len(m[1]) if m[1] else m[0], part))
        else:
            out.append(re.sub(r"[^\n]", MASK, part))
        at = end
    out.append(text[at:])
    masked = "".join(out)
    return None if find_secrets(masked) is not None else masked


def secret_in(text: str) -> str | None:
    """What secret `text` holds, with its line (`a GitHub token (line 12)`), or None."""
    found = find_secrets(text)
    return None if found is None else found.what


def name_secret(name: str) -> str | None:
    """What secret a file or folder name holds (`a GitHub token`: a file named after the
    token it holds), or None."""
    found = find_secrets(name)
    return None if found is None else found.what.rsplit(" (line ", 1)[0]


def mask_name(path: str) -> str:
    """`path` with the secrets its names hold masked (for reports of refused files)."""
    found = find_secrets(path)
    return path if found is None else (redact(path, found) or MASK * len(path))
