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

`indexer.walk.policy` applies it (names, content). Uses only `re` and RE2 (the walk
imports nothing of `indexer.chunk`: `CODE_AND_DOCS` names the extensions itself).

Invariants: pure functions over names and text; one RE2 set over a file's bytes (all
rules at once, linear time) decides that it holds no secret, the common case, and else
which rules may match: only those look at the file again, one by one, to tell a secret
from a placeholder (`bench/bench_secrets.py` measures the cost per MiB).
"""

from __future__ import annotations

import base64
import bisect
import re
import string
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


Span = tuple[int, int, str]
"""`(start, end, how)` of a secret in a text; `how` says what `redact` masks: `"all"`
(every character but line ends), `"b64"` (a key's base64, its quotes, escapes and line
ends kept) or `"pieces"` (the token characters of literals joined in code)."""


@dataclass(frozen=True, slots=True)
class _Rule:
    """One content rule: a literal every match holds (a cheap first look), the regex, and
    what a match is called."""

    what: str
    literals: tuple[str, ...]
    regex: re.Pattern[str]
    real: Callable[[re.Match[str]], bool] = lambda _m: True
    find: Callable[[str, re.Match[str]], list[Span]] | None = None
    """The spans to mask for a match of `regex` (none: no secret there), for a rule whose
    regex only finds where to look (a PEM key's BEGIN line, a Kubernetes Secret)."""
    token: bool = False
    """A token format: also looked for across string literals joined in code."""
    gate: str = ""
    """What the first look (one RE2 program for all rules) asks instead of `regex`, when
    that is cheaper: a superset of its matches (`://user:pw@` for every URL rule)."""


_PLACEHOLDER = re.compile(
    r"(?i)^(?:<[^>]*>|\$\{?\w+\}?|\{\{.*\}\}|\{[^{}]*\}|%\w+%|%(?:\(\w+\))?s|[x*.#_-]+|"
    r"password|passwd|pass|pwd|secret|(?:my|your|some)_?(?:pass\w*|pw|pwd|secret|token|user\w*)|"
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


_URL_PARTS = frozenset({"repo", "org", "owner", "branch", "sha", "ref", "path", "host",
                        "port", "name", "bucket", "project", "key"})
"""What some URL schemes put where a password goes (fsspec's `github://org:repo@sha/`)."""


def _any_url_password(m: re.Match[str]) -> bool:
    return _db_password(m) and m["password"].lower() not in _URL_PARTS


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


_PEM_TOKEN = re.compile(
    r"(?P<end>-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----)|(?P<stop>-----)"
    r"|(?P<hdr>[A-Z][A-Za-z]*(?:-[A-Za-z]+)*: [^\n\\\"'`]*)"
    r"|(?P<b64>[A-Za-z0-9+/=]+)"
    r"|(?:\\+(?:[nrt]|x0[aAdD]|u000[aAdD])|[\s\"'`.,;|&~()\[\]<>!#*\\_@$%?-])+")
"""What may stand in a private key, from its BEGIN line to its END line: its base64, its
headers (`Proc-Type: 4,ENCRYPTED`), and whatever code puts between the pieces: line ends,
indentation, quotes, escapes (`\\n`, `\\r\\n`, `\\x0a`), a `\\` that continues a line (a C
macro, a Python string), concatenation (`+`, `.`, `..`, `&`, `||`, `~`), commas and
brackets (an array, `concat!`), comment leaders, a Markdown quote. Anything else (a `:`
or a `{` of code, another PEM block's dashes) ends the key."""
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+|[A-Za-z][a-z0-9]+(?:[A-Z][a-z0-9]+)*")
"""A piece between a BEGIN line and what follows that is a word or a name (`line`, `Paste`,
`END`, `getElementById`, `sha256`), not base64: code and prose about keys are made of
them, a key's base64 (upper case letters side by side, digits anywhere) next to never."""
PEM_WINDOW = 1 << 16
"""The most characters after a BEGIN line looked at for the key's body."""


def _pem_key(text: str, m: re.Match[str]) -> list[Span]:
    """The span of the private key whose BEGIN line `m` matched, from the end of that line
    to its END line (else to the end of its last piece of base64); none when what follows
    holds no key: under 40 characters of base64 that looks random, not counting words."""
    start = pos = m.end()
    stop = min(len(text), start + PEM_WINDOW)
    pieces: list[str] = []
    end = start
    while pos < stop:
        t = _PEM_TOKEN.match(text, pos, stop)
        if t is None or t.lastgroup == "stop":
            break
        if t.lastgroup == "end":
            end = t.start()
            break
        if t.lastgroup == "b64":
            pieces.append(t[0])
            end = t.end()
        pos = t.end()
    body = "".join(p for p in pieces if not _WORD.fullmatch(p)).rstrip("=")
    if (len(body) < 40 or len(set(body)) < 16 or body.isalpha() or body.islower()
            or body.isupper()):
        return []
    return [(start, end, "b64")]


_B64_PEM = re.compile(r"LS0tLS1CRUdJTi|0tLS0tQkVHSU4g|tLS0tLUJFR0lOI")
"""Base64 of `-----BEGIN ` at each of the three alignments (a Kubernetes `tls.key`, a
JSON value, a kubeconfig's `client-key-data`)."""
_B64_RUN = re.compile(r"[A-Za-z0-9+/]*={0,2}(?:(?:\\n|\r?\n)[ \t]*[A-Za-z0-9+/]{4,}={0,2})*")
"""The rest of a base64 value from a point in it, also wrapped over lines (as `base64`
writes it: 76 characters a line) or over `\\n` escapes."""
_NOT_B64 = re.compile(r"[^A-Za-z0-9+/]")
_B64_CHARS = frozenset(string.ascii_letters + string.digits + "+/")


B64_LOOK = 1024
"""Encoded characters from `-----BEGIN ` decoded to tell a base64 private key (its BEGIN
line and the first 40 characters of its body fit in far fewer)."""


def _base64_key(text: str, m: re.Match[str]) -> list[Span]:
    """The base64 value holding `-----BEGIN ` at `m` when it decodes to a private key:
    `B64_LOOK` characters decoded to tell, the whole value (at most `PEM_WINDOW`) masked."""
    start = m.start()
    floor = max(0, start - 8)
    while start > floor and text[start - 1] in _B64_CHARS:
        start -= 1
    look = _B64_RUN.match(text, m.start(), m.start() + B64_LOOK)
    encoded = _NOT_B64.sub("", text[start:look.end() if look is not None else m.end()])
    try:
        plain = base64.b64decode(encoded[: len(encoded) // 4 * 4]).decode("utf-8", "replace")
    except ValueError:
        return []
    begin = _PEM_RULE.regex.search(plain)
    if begin is None or not _pem_key(plain, begin):
        return []
    run = _B64_RUN.match(text, m.start(), m.start() + PEM_WINDOW)
    return [(start, run.end() if run is not None else m.end(), "all")]


_K8S_SECRET = re.compile(
    r"kind(?P<json>\")?[ \t]*:[ \t]*[\"']?Secret[\"']?[ \t]*\r?(?:#[^\n]*)?(?:$|,|\})",
    re.MULTILINE)
_YAML_KEY_INDENT = re.compile(r"[ \t]*(?:-[ \t]+)?")
_YAML_DOC = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?(?:#[^\n]*)?$", re.MULTILINE)
_YAML_ENTRY = re.compile(r"([ \t]*(?:-[ \t]+)?)([^\s:#][^:\n]*):[ \t]*([^\n]*)")
_JSON_DATA = re.compile(r"\"(data|stringData)\"[ \t\r\n]*:[ \t\r\n]*\{([^{}]*)\}")
_JSON_ENTRY = re.compile(r"\"[^\"\n]*\"[ \t\r\n]*:[ \t\r\n]*\"([^\"\n]*)\"")


def _kept_value(value: str, encoded: bool) -> bool:
    """A Secret's value that holds something: not empty, not a template's (`{{ ... }}`,
    `${VAR}`), not a placeholder; for `data`, not the base64 of one."""
    value = value.strip().strip("\"'").strip()
    if not value or value in ("~", "null", "{}") or "{{" in value or "${" in value:
        return False
    if _PLACEHOLDER.match(value) is not None:
        return False
    if encoded:
        try:
            plain = base64.b64decode(value, validate=True).decode("utf-8").strip()
        except (ValueError, UnicodeDecodeError):
            return True
        return bool(plain) and _PLACEHOLDER.match(plain) is None and (
            plain.lower() not in _DEV_PASSWORDS)
    return True


def _k8s_json(text: str, m: re.Match[str]) -> list[Span]:
    """The values of the `data` and `stringData` objects of a Secret written as JSON (its
    object: between the `kind`s before and after its own, within `PEM_WINDOW`)."""
    lo, hi = max(0, m.start() - PEM_WINDOW), m.end() + PEM_WINDOW
    lo = max(lo, text.rfind('"kind"', lo, m.start()) + 1)
    if (following := text.find('"kind"', m.end(), hi)) >= 0:
        hi = following
    return [(block.start(2) + entry.start(1), block.start(2) + entry.end(1), "all")
            for block in _JSON_DATA.finditer(text, lo, hi)
            for entry in _JSON_ENTRY.finditer(block[2])
            if _kept_value(entry[1], block[1] == "data")]


def _yaml_value(lines: list[str], i: int, value: str, depth: int) -> tuple[str, int]:
    """A YAML entry's value on line `i` and how many characters it spans from its line's
    start: a block scalar (`|`, `>`) takes the lines indented under it."""
    if value.split("#")[0].strip() not in ("|", "|-", "|+", ">", ">-", ">+"):
        return value, len(lines[i])
    follow: list[str] = []
    for line in lines[i + 1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= depth:
            break
        follow.append(line)
    return "\n".join(follow), len(lines[i]) + sum(len(x) + 1 for x in follow)


def _yaml_doc_start(text: str, at: int) -> int:
    """Where the YAML document holding `at` starts: after the last `---` (or `...`) line
    before it, looked for backwards within `PEM_WINDOW` (a document's `kind` is near its
    top)."""
    lo = max(0, at - PEM_WINDOW)
    end = text.rfind("\n", 0, at)  # the end of the line before `at`'s
    while end >= lo and end > 0:
        start = max(lo, text.rfind("\n", lo, end) + 1)
        if _YAML_DOC.fullmatch(text, start, end):
            return end + 1
        end = start - 1
    return lo


def _k8s_secret(text: str, m: re.Match[str]) -> list[Span]:
    """The values under `data` and `stringData` of the Kubernetes Secret whose `kind` `m`
    matched (YAML: in the same document, at the same indentation; JSON: the object's)."""
    if m["json"]:
        return _k8s_json(text, m)
    line_start = text.rfind("\n", 0, m.start()) + 1
    if not _YAML_KEY_INDENT.fullmatch(text, line_start, m.start()):
        return []  # `kind: Secret` within a line: no YAML key
    doc_start = _yaml_doc_start(text, m.start())
    after = _YAML_DOC.search(text, m.end(), m.end() + 4 * PEM_WINDOW)
    doc_end = after.start() if after is not None else min(len(text), m.end() + 4 * PEM_WINDOW)
    indent = m.start() - line_start
    lines = text[doc_start:doc_end].split("\n")
    spans: list[Span] = []
    at = doc_start
    encoded: bool | None = None  # inside `data` (base64 values) or `stringData`
    for i, line in enumerate(lines):
        entry = _YAML_ENTRY.fullmatch(line)
        depth = len(line) - len(line.lstrip(" \t-"))
        if line.strip() and depth <= indent:
            encoded = None
        if entry is not None and len(entry[1]) == indent and entry[2] in ("data",
                                                                          "stringData"):
            encoded = entry[2] == "data"
        elif encoded is not None and entry is not None:
            value, length = _yaml_value(lines, i, entry[3], depth)
            if _kept_value(value, encoded):
                spans.append((at + entry.start(3), at + length, "all"))
        at += len(line) + 1
    return spans


_USERINFO = r"[a-zA-Z][a-zA-Z0-9+.-]*://(?P<user>[^/\s:@'\"]+):(?P<password>[^/\s@'\"]+)@"
_DB_SCHEMES = (r"(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|"
               r"sqlserver|oracle|cockroachdb|clickhouse)(?:\+[a-z0-9]+)?")
_URL_AT = re.compile(r"://(?P<user>[^/\s:@'\"\[\]<>{}\\^|`]*):"
                     r"(?P<password>[^/\s@'\"\[\]<>{}\\^|`]+)@")
"""A user and a password in a URL (its scheme is looked at by `_scheme`): no characters a
URL's user or password never holds unescaped (`[`, `{`, `<`, ...), so that a regex or a
template is not read as one."""
_SCHEME_CHARS = frozenset(string.ascii_letters + string.digits + "+.-")
_DB_SCHEME = re.compile(rf"(?i:{_DB_SCHEMES})")


def _scheme(text: str, at: int) -> str:
    """The scheme of the URL whose `://` is at `at` ('' when none: not a word's start)."""
    start = at
    while start > max(0, at - 40) and text[start - 1] in _SCHEME_CHARS:
        start -= 1
    if start == at or (start and (text[start - 1].isalnum() or text[start - 1] == "_")):
        return ""
    while start < at and not text[start].isalpha():
        start += 1
    return text[start:at]


def _db_url(text: str, m: re.Match[str]) -> list[Span]:
    """A password in a database URL (`postgres://app:pw@db/app`), not a dev default."""
    if _DB_SCHEME.fullmatch(_scheme(text, m.start())) and _db_password(m):
        return [(*m.span("password"), "all")]
    return []


def _any_url(text: str, m: re.Match[str]) -> list[Span]:
    """A password in a URL of any scheme (`https://deploy:pw@registry/`)."""
    if _scheme(text, m.start()) and _any_url_password(m):
        return [(*m.span("password"), "all")]
    return []
_DB_ENV = (r"(?:POSTGRES|PG|MYSQL(?:_ROOT)?|MARIADB(?:_ROOT)?|MONGO_INITDB_ROOT|"
           r"MONGODB(?:_ROOT)?|REDIS|RABBITMQ_DEFAULT|MSSQL_SA|SA|ELASTIC|MINIO_ROOT|"
           r"KEYCLOAK_ADMIN|KC_DB|GF_SECURITY_ADMIN|DB|DATABASE)_?PASS(?:WORD)?")
"""The environment variables that set a database's (or a service's) password in the
images' documented compose files."""


def _env_password(m: re.Match[str]) -> bool:
    password = m["password"]
    return (len(password) >= 4 and _PLACEHOLDER.match(password) is None
            and password.lower() not in _DEV_PASSWORDS)


_AWS_BESIDE = re.compile(r"[^A-Za-z0-9/+=](?P<password>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")


def _aws_secret(value: str) -> bool:
    """Forty characters of an AWS secret access key: random, with digits and both cases
    (not a Java class path nor the documented `wJalr...EXAMPLEKEY`)."""
    return (_random(value) and sum(c.isdigit() for c in value) >= 2
            and not value.isalpha() and value.lower() != value and value.upper() != value)


def _aws_pair(text: str, m: re.Match[str]) -> list[Span]:
    """An AWS access key id, and the secret access key written beside it (the next 40
    random characters within 100: a constructor's second argument, a CSV's next column)."""
    if not _random(m[0][4:]):
        return []
    spans: list[Span] = [(m.start(), m.end(), "all")]
    beside = _AWS_BESIDE.search(text, m.end(), m.end() + 100)
    if beside is not None and _aws_secret(beside["password"]):
        spans.append((*beside.span("password"), "all"))
    return spans


_PEM_RULE = _Rule("a PEM private key", ("PRIVATE KEY-----",), re.compile(
    r"-----BEGIN (?:(?:RSA|DSA|EC|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY(?: BLOCK)?-----"),
    find=_pem_key, token=True)

_RULES: tuple[_Rule, ...] = (
    _PEM_RULE,
    _Rule("an AWS access key id", ("AKIA", "ASIA"), re.compile(
        r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), find=_aws_pair, token=True),
    _Rule("an AWS secret access key", (
        "ecret_access_key", "ECRET_ACCESS_KEY", "ecretAccessKey", "ecret_key",
        "ECRET_KEY", "ecretKey"), re.compile(
        r"(?i:aws_?secret_?(?:access_?)?key|secret_?access_?key)[\"']?[ \t]*(?:=>|:=|[:=])"
        r"[ \t]*[\"']?(?P<password>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"),
        lambda m: _aws_secret(m["password"]),
        gate=r"(?i:aws_?secret_?(?:access_?)?key|secret_?access_?key)"),
    _Rule("a GitHub token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), re.compile(
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{82})\b"),
        lambda m: _random(m[0][4:]), token=True),
    _Rule("a GitLab token", ("glpat-",), re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"),
          lambda m: _random(m[0][6:]), token=True),
    _Rule("a Slack token", ("xox", "hooks.slack.com/services/"), re.compile(
        r"\bxox[abposr]-[0-9A-Za-z-]{20,}|https://hooks\.slack\.com/services/"
        r"T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{20,}"), lambda m: _random(m[0][5:]), token=True),
    _Rule("a Stripe live key", ("_live_",), re.compile(r"\b(?:sk|rk)_live_[0-9A-Za-z]{24,}"),
          lambda m: _random(m[0][8:]), token=True),
    _Rule("a Google API key", ("AIza",), re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
          lambda m: _random(m[0][4:]), token=True),
    _Rule("an npm token", ("npm_",), re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"),
          lambda m: _random(m[0][4:]), token=True),
    _Rule("a PyPI token", ("pypi-AgEIcHlwaS5vcmc",), re.compile(
        r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"), token=True),
    _Rule("an OpenAI API key", ("T3BlbkFJ",), re.compile(
        r"\bsk-[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,}"), token=True),
    _Rule("an Anthropic API key", ("sk-ant-",), re.compile(
        r"\bsk-ant-[a-z0-9]+-[A-Za-z0-9_-]{80,}"), lambda m: _random(m[0][-40:]), token=True),
    _Rule("a SendGrid API key", ("SG.",), re.compile(
        r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b"), lambda m: _random(m[0][3:]), token=True),
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
    _Rule("a password in a database URL", ("://",), _URL_AT, find=_db_url),
    _Rule("a password in a URL", ("://",), _URL_AT, find=_any_url),
    _Rule("an npm auth token", ("npmAuth", "_auth", "_password"), re.compile(
        r"(?:npmAuth(?:Token|Ident)|(?<![^\s:])_(?:authToken|auth|password))[\"']?[ \t]*"
        r"[:=][ \t]*[\"']?(?P<password>[A-Za-z0-9._~+/=:-]{8,})(?:[\"'\s]|$)",
        re.MULTILINE), _not_placeholder,
        gate=r"(?m:(?:npmAuth(?:Token|Ident)|(?:^|[\s:])_(?:authToken|auth|password))"
             r"[\"']?[ \t]*[:=])"),
    _Rule("a database password in the environment", ("PASS",), re.compile(
        rf"(?<![\w.]){_DB_ENV}[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?P<password>[^\s\"'#(){}\[\]$,;]+)(?:[\"']|[ \t]*(?:#[^\n]*)?$)", re.MULTILINE),
        _env_password, gate=rf"{_DB_ENV}[\"']?[ \t]*[:=]"),
    _Rule("a base64-encoded private key", ("LS0tLS1CRUdJTi", "0tLS0tQkVHSU4g",
                                           "tLS0tLUJFR0lOI"), _B64_PEM, find=_base64_key,
          token=True),
    _Rule("a Kubernetes Secret", ("Secret",), _K8S_SECRET, find=_k8s_secret),
)


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
    for rule in _RULES:
        if not rule.token or not any(lit in joined for lit in rule.literals):
            continue
        for m in rule.regex.finditer(joined):
            for start, end, _how in _spans(rule, joined, m):
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


def _spans(rule: _Rule, text: str, m: re.Match[str]) -> list[Span]:
    """The spans a match of `rule` masks: its `find`, else the match (or its password)
    when `real`."""
    if rule.find is not None:
        return rule.find(text, m)
    if not rule.real(m):
        return []
    return [(*m.span("password" if "password" in rule.regex.groupindex else 0), "all")]


_SPLIT = len(_RULES)
"""Stands for `_SPLIT_TOKEN` among the rules' indexes (`_ANY_RULE`)."""


def _any_rule() -> tuple[Any, tuple[tuple[int, ...], ...]]:
    """All rules as one RE2 set over UTF-8 bytes (a pattern shared by rules, such as the
    URL rules' gate, once): one linear pass says which rules may match. The set, and the
    indexes in `_RULES` (`_SPLIT`: the split-token trigger) of each of its patterns."""
    options = re2.Options()
    options.never_capture = True
    options.log_errors = False
    options.max_mem = 64 << 20
    rules = re2.Set.SearchSet(options)
    parts: dict[str, list[int]] = {}
    for i, rule in enumerate((*_RULES, _Rule("", (), _SPLIT_TOKEN))):
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
        rule = _RULES[i]
        for n, m in enumerate(rule.regex.finditer(text)):
            if n == MAX_CANDIDATES:
                break  # a file made to be slow to look at (`MAX_CANDIDATES`)
            got = _spans(rule, text, m)
            if not got:
                continue
            spans.extend(got)
            at = m.start() if rule is _PEM_RULE else got[0][0]
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
