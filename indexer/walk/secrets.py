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
  PEM private-key block (also indented, quoted, in a YAML block scalar or split over
  string literals), a well-known token format (AWS access key ids, GitHub, GitLab, Slack,
  Stripe, Google, npm, PyPI, OpenAI, Anthropic, SendGrid tokens), password hashes in
  `/etc/shadow` form, a URL with a password in a git config (a remote, an `insteadOf`
  rewrite) or credential store, an `extraheader` authorization, a kubeconfig's client key
  or token, netrc and pgpass entries, a Docker registry `auth`, a password in a database
  URL. Placeholders (`AKIAIOSFODNN7EXAMPLE`, `ghp_xxxx...`, `https://USER:TOKEN@...`,
  `{password}`, a CI database's `postgres:postgres`) are not secrets;
- `redact(text, found)`: the text with every secret masked character for character (`*`),
  so that source code and docs holding a test key stay indexed, symbols and line numbers
  intact, and the secret is in no index and no answer (`indexer.walk.policy`).

`indexer.walk.policy` applies it (names, content). Uses only `re` and RE2 (the walk
imports nothing of `indexer.chunk`: `CODE_AND_DOCS` names the extensions itself).

Invariants: pure functions over names and text; one RE2 pass over a file's bytes (all
rules at once, linear time) decides that it holds no secret, the
common case; only a file where some rule matches is looked at again, rule by rule, to
tell a secret from a placeholder.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import re2

__all__ = [
    "CODE_AND_DOCS",
    "SENSITIVE_DIR_PATTERNS",
    "SENSITIVE_FILE_PATTERNS",
    "SENSITIVE_WORD_PATTERNS",
    "Found",
    "find_secrets",
    "is_code_or_docs",
    "is_data_or_config",
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
    "*.tfstate", "*.tfstate.backup",
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


@dataclass(frozen=True, slots=True)
class _Rule:
    """One content rule: a literal every match holds (a cheap first look), the regex, and
    what a match is called."""

    what: str
    literals: tuple[str, ...]
    regex: re.Pattern[str]
    real: Callable[[re.Match[str]], bool] = lambda _m: True


_PLACEHOLDER = re.compile(
    r"(?i)^(?:<[^>]*>|\$\{?\w+\}?|\{\{.*\}\}|\{[^{}]*\}|%\w+%|%(?:\(\w+\))?s|[x*.#_-]+|"
    r"password|passwd|pass|pwd|secret|"
    r"token|pat|apikey|api_key|changeme|redacted|example|user|username)$")


def _random(body: str) -> bool:
    """A token body that looks random: varied characters and no placeholder words."""
    low = body.lower()
    return (len(set(body)) >= 10 and "example" not in low and "xxxx" not in low
            and "0000" not in body and "1234" not in body)


def _url_password(m: re.Match[str]) -> bool:
    return _PLACEHOLDER.match(m["password"]) is None and _PLACEHOLDER.match(m["user"]) is None


_DEV_PASSWORDS = frozenset({
    "postgres", "postgresql", "mysql", "mariadb", "mongo", "mongodb", "redis", "root",
    "admin", "test", "testing", "tests", "dev", "development", "local", "localhost",
    "guest", "docker", "demo", "sample", "pw", "passw0rd", "p4ssw0rd", "default", "app",
    "ci", "travis", "circleci", "github", "gitlab", "dummy", "fake", "foo", "bar", "baz",
})
"""Passwords of throwaway development databases (a CI service container's
`postgres://postgres:postgres@localhost/test`): not secrets."""


def _db_password(m: re.Match[str]) -> bool:
    password = m["password"]
    return (_url_password(m) and password != m["user"]
            and password.lower() not in _DEV_PASSWORDS)


def _not_placeholder(m: re.Match[str]) -> bool:
    return _PLACEHOLDER.match(m["password"]) is None


def _random_value(m: re.Match[str]) -> bool:
    return _random(m["password"])


def _docker_auth(m: re.Match[str]) -> bool:
    """A Docker `auth`: base64 of `user:password`, the password no placeholder."""
    try:
        plain = base64.b64decode(m["password"], validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return False
    user, colon, password = plain.partition(":")
    return bool(colon) and bool(password) and _PLACEHOLDER.match(password) is None and (
        _PLACEHOLDER.match(user) is None)


_GAP = r"(?:[ \t\r\n\"'`+,;|>#*/]|\\[nr])+"
"""What may stand between a PEM line and the next: line ends (also `\\n` in a string
literal), indentation, a Markdown quote, comment leaders, and the quotes and `+` of string
literals joined across lines (a key split over Go, Java or Python literals)."""
_USERINFO = r"[a-zA-Z][a-zA-Z0-9+.-]*://(?P<user>[^/\s:@'\"]+):(?P<password>[^/\s@'\"]+)@"
_DB_SCHEMES = (r"(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|"
               r"sqlserver|oracle|cockroachdb|clickhouse)(?:\+[a-z0-9]+)?")

_RULES: tuple[_Rule, ...] = (
    _Rule("a PEM private key", ("PRIVATE KEY-----",), re.compile(
        r"-----BEGIN (?:(?:RSA|DSA|EC|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY(?: BLOCK)?-----"
        rf"(?:{_GAP}[A-Za-z][\w-]*: [^\n]*)*{_GAP}[A-Za-z0-9+/=]{{40}}")),
    _Rule("an AWS access key id", ("AKIA", "ASIA"), re.compile(
        r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), lambda m: _random(m[0][4:])),
    _Rule("a GitHub token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), re.compile(
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{82})\b"),
        lambda m: _random(m[0][4:])),
    _Rule("a GitLab token", ("glpat-",), re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"),
          lambda m: _random(m[0][6:])),
    _Rule("a Slack token", ("xox", "hooks.slack.com/services/"), re.compile(
        r"\bxox[abposr]-[0-9A-Za-z-]{20,}|https://hooks\.slack\.com/services/"
        r"T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{20,}"), lambda m: _random(m[0][5:])),
    _Rule("a Stripe live key", ("_live_",), re.compile(r"\b(?:sk|rk)_live_[0-9A-Za-z]{24,}"),
          lambda m: _random(m[0][8:])),
    _Rule("a Google API key", ("AIza",), re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
          lambda m: _random(m[0][4:])),
    _Rule("an npm token", ("npm_",), re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"),
          lambda m: _random(m[0][4:])),
    _Rule("a PyPI token", ("pypi-AgEIcHlwaS5vcmc",), re.compile(
        r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}")),
    _Rule("an OpenAI API key", ("T3BlbkFJ",), re.compile(
        r"\bsk-[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,}")),
    _Rule("an Anthropic API key", ("sk-ant-",), re.compile(
        r"\bsk-ant-[a-z0-9]+-[A-Za-z0-9_-]{80,}"), lambda m: _random(m[0][-40:])),
    _Rule("a SendGrid API key", ("SG.",), re.compile(
        r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b"), lambda m: _random(m[0][3:])),
    _Rule("password hashes (shadow file)", (":$",), re.compile(
        r"^[a-z_][a-z0-9_.-]*:(?P<password>\$(?:1|2[abxy]?|5|6|7|y|gy|sha1)\$[^:\n]{8,}):",
        re.MULTILINE)),
    _Rule("a password in a git remote URL", ("url",), re.compile(
        rf"^[ \t]*(?:url|pushurl)[ \t]*=[ \t]*{_USERINFO}", re.MULTILINE), _url_password),
    _Rule("a password in a git URL rewrite", ("url",), re.compile(
        rf"^[ \t]*\[url[ \t]+\"{_USERINFO}", re.MULTILINE), _url_password),
    _Rule("a git credential store", ("://",), re.compile(
        rf"\A(?:[ \t]*(?:#[^\n]*)?\n)*{_USERINFO}[^\s/]+/?[ \t]*$", re.MULTILINE),
        _url_password),
    _Rule("an HTTP authorization header in a git config", ("xtraheader", "XTRAHEADER"),
          re.compile(r"(?i:^[ \t]*(?:[^\n=]*\.)?extraheader[ \t]*=[ \t]*\"?[ \t]*"
                     r"authorization:[ \t]*(?:basic|bearer|token)[ \t]+"
                     r"(?P<password>[A-Za-z0-9+/=._~-]{8,}))", re.MULTILINE), _not_placeholder),
    _Rule("a kubeconfig client key", ("client-key-data",), re.compile(
        r"^[ \t]*client-key-data:[ \t]*[\"']?(?P<password>[A-Za-z0-9+/=]{40,})",
        re.MULTILINE)),
    _Rule("a kubeconfig token", ("token:",), re.compile(
        r"^[ \t]*(?:id-|refresh-)?token:[ \t]*[\"']?(?P<password>[A-Za-z0-9._~+/=-]{20,})",
        re.MULTILINE), _random_value),
    _Rule("a netrc password", ("machine", "default"), re.compile(
        r"(?:^|[ \t])(?:machine[ \t\n]+[^\s]+|default)"
        r"(?:[ \t\n]+(?:account|port)[ \t\n]+[^\s]+)*[ \t\n]+login[ \t\n]+[^\s]+"
        r"(?:[ \t\n]+(?:account|port)[ \t\n]+[^\s]+)*"
        r"[ \t\n]+password[ \t\n]+(?P<password>[^\s]+)", re.MULTILINE), _not_placeholder),
    _Rule("a pgpass password", (":",), re.compile(
        r"^(?P<user>[^:\s#]+:(?:[0-9]+|\*):[^:\s]+:[^:\s]+):(?P<password>[^\s:]{6,})[ \t]*$",
        re.MULTILINE), lambda m: _PLACEHOLDER.match(m["password"]) is None
        and m["password"].lower() not in _DEV_PASSWORDS),
    _Rule("a Docker registry auth", ('"auth"',), re.compile(
        r"\"auth\"[ \t\r\n]*:[ \t\r\n]*\"(?P<password>[A-Za-z0-9+/]{8,}={0,2})\""),
        _docker_auth),
    _Rule("a password in a database URL", ("://",), re.compile(
        rf"(?i:\b{_DB_SCHEMES})://(?P<user>[^/\s:@'\"]+):(?P<password>[^/\s@'\"]+)@"),
        _db_password),
)


def _any_rule() -> Any:
    """All rules as one RE2 program over UTF-8 bytes (no captures): a quick first look."""
    options = re2.Options()
    options.never_capture = True
    options.log_errors = False
    options.max_mem = 64 << 20
    parts = []
    for rule in _RULES:
        source = re.sub(r"\(\?P<\w+>", "(?:", rule.regex.pattern)
        parts.append(("(?m:" if rule.regex.flags & re.MULTILINE else "(?:") + source + ")")
    return re2.compile("|".join(parts).encode("utf-8"), options)


_ANY_RULE = _any_rule()


@dataclass(frozen=True, slots=True)
class Found:
    """The secrets in a text: the first, described with its line, and every span."""

    what: str
    """`a GitHub token (line 12)`."""
    spans: tuple[tuple[int, int, bool], ...]
    """`(start, end, pem)` of each secret: the text to mask (`redact`); `pem`: a PEM
    block, whose base64 is masked and whose quotes, `+` and line ends stay."""


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


_PEM_BODY = re.compile(r"[A-Za-z0-9+/=]{16,}")
_PEM_END = re.compile(r"-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----")


def _pem_span(text: str, m: re.Match[str]) -> tuple[int, int, bool]:
    """From the end of a PEM key's BEGIN line to its END line; without one, to the end of
    the last line of the run of lines that hold base64."""
    start = text.index("-----", m.start() + 5) + 5
    end_marker = _PEM_END.search(text, start, start + (1 << 16))
    if end_marker is not None:
        return start, end_marker.start(), True
    end = m.end()
    while True:
        nl = text.find("\n", end)
        if nl < 0:
            return start, len(text), True
        following = text.find("\n", nl + 1)
        line_end = len(text) if following < 0 else following
        if not _PEM_BODY.search(text, nl + 1, line_end):
            return start, nl, True
        end = line_end


def find_secrets(text: str) -> Found | None:
    """Every secret in `text` (see the module docstring), or None: one RE2 pass first, then
    the rules that matched, one by one, to tell secrets from placeholders."""
    if _ANY_RULE.search(text.encode("utf-8", "surrogatepass")) is None:
        return None
    first: tuple[int, str] | None = None
    spans: list[tuple[int, int, bool]] = []
    for rule in _RULES:
        if not any(lit in text for lit in rule.literals):
            continue
        for m in rule.regex.finditer(text):
            if not rule.real(m):
                continue
            if rule is _RULES[0]:
                span = _pem_span(text, m)
            elif "password" in rule.regex.groupindex:
                span = (*m.span("password"), False)
            else:
                span = (*m.span(), False)
            spans.append(span)
            at = m.start() if span[2] else span[0]
            if first is None or at < first[0]:
                first = (at, rule.what)
    if first is None:
        return None
    return Found(f"{first[1]} (line {_line(text, first[0])})", tuple(sorted(spans)))


MASK = "*"
"""What a secret's characters become (`redact`): not base64, not a token character."""
_PEM_MASKED = re.compile(r"\\[nrt]|([A-Za-z0-9+/=]{4,})")


def redact(text: str, found: Found) -> str | None:
    """`text` with every secret `found` masked, character for character (line numbers,
    offsets and the code around them unchanged; line ends kept), or None when a secret is
    still found in what is left (then the file is refused whole)."""
    out: list[str] = []
    at = 0
    for start, end, pem in found.spans:
        start = max(start, at)
        if end <= start:
            continue
        out.append(text[at:start])
        part = text[start:end]
        if pem:
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
