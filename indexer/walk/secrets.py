"""What a secret is: key and credential files by name, and secrets found in a file's text.

A file is judged by what it is, never by a word in the name of source code or docs:

- `SENSITIVE_FILE_PATTERNS`: exact names and extensions of key and credential files
  (`.env*`, `*.pem`, `*.key`, `id_rsa*`, `credentials.json`, `.npmrc`, `.git-credentials`,
  `shadow`, ...), whatever the file holds;
- `SENSITIVE_WORD_PATTERNS`: a name holding `secret`, `credential` or `password` makes a
  *data or config* file sensitive (`secrets.yaml`, `aws_credentials.json`,
  `client_secret.txt`); source code and docs (`secret.go`, `credentials/credentials.go`,
  `docs/secrets.md`) are never refused for a word in their name (`is_code_or_docs`);
- `secret_in(text)`: the content of any file, read by the pipeline or a file request: a
  PEM private-key block, a well-known token format (AWS access key ids, GitHub, GitLab,
  Slack, Stripe, Google, npm, PyPI, OpenAI, Anthropic, SendGrid tokens), password hashes
  in `/etc/shadow` form, or a URL with a password in a git config or credential store.
  Placeholders (`AKIAIOSFODNN7EXAMPLE`, `ghp_xxxx...`, `https://USER:TOKEN@...`) are not
  secrets.

`indexer.walk.policy` applies it (names, content). Uses only `re` and RE2 (the walk
imports nothing of `indexer.chunk`: `CODE_AND_DOCS` names the extensions itself).

Invariants: pure functions over names and text; one RE2 pass over a file's bytes (all
rules at once, linear time) decides that it holds no secret, the
common case; only a file where some rule matches is looked at again, rule by rule, to
tell a secret from a placeholder.
"""

from __future__ import annotations

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
    "is_code_or_docs",
    "secret_in",
]

SENSITIVE_FILE_PATTERNS: tuple[str, ...] = (
    # environment files and private keys
    ".env", ".env.*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore",
    "*.ppk", "*.kdbx", "*.keytab", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
    # credential stores of tools
    "credentials", "credentials.json", "client_secret*.json", ".netrc", "_netrc", ".npmrc",
    ".pypirc", ".pgpass", ".htpasswd", ".git-credentials", ".dockercfg",
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
_CODE_NAMES = frozenset({"makefile", "dockerfile", "containerfile", "rakefile", "gemfile",
                         "jenkinsfile", "vagrantfile"})


def is_code_or_docs(rel: str) -> bool:
    """Whether the name says source code or docs (`.go`, `.py`, `.md`, `.tf`, `Makefile`,
    ...), as opposed to data or config (`.json`, `.yaml`, `.txt`, no or another extension)."""
    name = rel.rsplit("/", 1)[-1].lower()
    _stem, dot, ext = name.rpartition(".")
    return (bool(dot) and ext in CODE_AND_DOCS) or name in _CODE_NAMES


@dataclass(frozen=True, slots=True)
class _Rule:
    """One content rule: a literal every match holds (a cheap first look), the regex, and
    what a match is called."""

    what: str
    literals: tuple[str, ...]
    regex: re.Pattern[str]
    real: Callable[[re.Match[str]], bool] = lambda _m: True


_PLACEHOLDER = re.compile(
    r"(?i)^(?:<[^>]*>|\$\{?\w+\}?|\{\{.*\}\}|%\w+%|[x*.#_-]+|password|passwd|pass|pwd|secret|"
    r"token|pat|apikey|api_key|changeme|redacted|example|user|username)$")


def _random(body: str) -> bool:
    """A token body that looks random: varied characters and no placeholder words."""
    low = body.lower()
    return (len(set(body)) >= 10 and "example" not in low and "xxxx" not in low
            and "0000" not in body and "1234" not in body)


def _url_password(m: re.Match[str]) -> bool:
    return _PLACEHOLDER.match(m["password"]) is None and _PLACEHOLDER.match(m["user"]) is None


_NL = r"(?:\\r)?(?:\\n|\n)"
"""A line end, also written as `\\n` inside a string literal."""
_USERINFO = r"[a-zA-Z][a-zA-Z0-9+.-]*://(?P<user>[^/\s:@'\"]+):(?P<password>[^/\s@'\"]+)@"

_RULES: tuple[_Rule, ...] = (
    _Rule("a PEM private key", ("PRIVATE KEY-----",), re.compile(
        r"-----BEGIN (?:(?:RSA|DSA|EC|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY(?: BLOCK)?-----"
        rf"(?:{_NL}[A-Za-z][\w-]*: [^\n]*)*(?:{_NL})+[A-Za-z0-9+/=]{{40}}")),
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
        r"^[a-z_][a-z0-9_.-]*:\$(?:1|2[abxy]?|5|6|7|y|gy|sha1)\$[^:\n]{8,}:", re.MULTILINE)),
    _Rule("a password in a git remote URL", ("url",), re.compile(
        rf"^[ \t]*(?:url|pushurl)[ \t]*=[ \t]*{_USERINFO}", re.MULTILINE), _url_password),
    _Rule("a git credential store", ("://",), re.compile(
        rf"\A(?:[ \t]*\n)*{_USERINFO}[^\s/]+/?[ \t]*$", re.MULTILINE), _url_password),
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


def secret_in(text: str) -> str | None:
    """What secret `text` holds, with its line (`a GitHub token (line 12)`), or None."""
    if _ANY_RULE.search(text.encode("utf-8", "surrogatepass")) is None:
        return None
    for rule in _RULES:
        if not any(lit in text for lit in rule.literals):
            continue
        for m in rule.regex.finditer(text):
            if rule.real(m):
                return f"{rule.what} (line {text.count(chr(10), 0, m.start()) + 1})"
    return None
