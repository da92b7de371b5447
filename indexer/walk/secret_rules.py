"""The content rules of the secret scan: one `Rule` per secret format, and what tells a
secret from a placeholder.

`RULES` lists every format `indexer.walk.secrets.find_secrets` looks for (key files' PEM
bodies, their base64, token formats, URLs with a password, git, kubeconfig, netrc, pgpass,
Docker and npm credentials, database passwords in the environment, Kubernetes Secrets);
`rule_spans(rule, text, match)` says what a match masks. A rule whose regex only finds
where to look (a PEM BEGIN line, `kind: Secret`, `://user:pw@`) has a `find` here that
follows the secret to its end (`pem_key`, `k8s_secret`, ...); the others have a `real`
test that tells a secret from a placeholder (`AKIAIOSFODNN7EXAMPLE`, `{password}`, a CI
database's `postgres:postgres`).

Called by `indexer.walk.secrets` only (which runs all rules at once in one RE2 set, joins
split literals, and redacts). Invariants: pure functions over text; each `find` looks at
most a few `PEM_WINDOW`s past its match, so one match costs bounded time.
"""

from __future__ import annotations

import base64
import re
import string
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["PEM_RULE", "PEM_WINDOW", "RULES", "Rule", "Span", "rule_spans"]

Span = tuple[int, int, str]
"""`(start, end, how)` of a secret in a text; `how` says what `redact` masks: `"all"`
(every character but line ends), `"b64"` (a key's base64, its quotes, escapes and line
ends kept) or `"pieces"` (the token characters of literals joined in code)."""


@dataclass(frozen=True, slots=True)
class Rule:
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
    begin = PEM_RULE.regex.search(plain)
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


PEM_RULE = Rule("a PEM private key", ("PRIVATE KEY-----",), re.compile(
    r"-----BEGIN (?:(?:RSA|DSA|EC|OPENSSH|ENCRYPTED|PGP) )?PRIVATE KEY(?: BLOCK)?-----"),
    find=_pem_key, token=True)

RULES: tuple[Rule, ...] = (
    PEM_RULE,
    Rule("an AWS access key id", ("AKIA", "ASIA"), re.compile(
        r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), find=_aws_pair, token=True),
    Rule("an AWS secret access key", (
        "ecret_access_key", "ECRET_ACCESS_KEY", "ecretAccessKey", "ecret_key",
        "ECRET_KEY", "ecretKey"), re.compile(
        r"(?i:aws_?secret_?(?:access_?)?key|secret_?access_?key)[\"']?[ \t]*(?:=>|:=|[:=])"
        r"[ \t]*[\"']?(?P<password>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"),
        lambda m: _aws_secret(m["password"]),
        gate=r"(?i:aws_?secret_?(?:access_?)?key|secret_?access_?key)"),
    Rule("a GitHub token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), re.compile(
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{82})\b"),
        lambda m: _random(m[0][4:]), token=True),
    Rule("a GitLab token", ("glpat-",), re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"),
          lambda m: _random(m[0][6:]), token=True),
    Rule("a Slack token", ("xox", "hooks.slack.com/services/"), re.compile(
        r"\bxox[abposr]-[0-9A-Za-z-]{20,}|https://hooks\.slack\.com/services/"
        r"T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{20,}"), lambda m: _random(m[0][5:]), token=True),
    Rule("a Stripe live key", ("_live_",), re.compile(r"\b(?:sk|rk)_live_[0-9A-Za-z]{24,}"),
          lambda m: _random(m[0][8:]), token=True),
    Rule("a Google API key", ("AIza",), re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"),
          lambda m: _random(m[0][4:]), token=True),
    Rule("an npm token", ("npm_",), re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"),
          lambda m: _random(m[0][4:]), token=True),
    Rule("a PyPI token", ("pypi-AgEIcHlwaS5vcmc",), re.compile(
        r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}"), token=True),
    Rule("an OpenAI API key", ("T3BlbkFJ",), re.compile(
        r"\bsk-[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,}"), token=True),
    Rule("an Anthropic API key", ("sk-ant-",), re.compile(
        r"\bsk-ant-[a-z0-9]+-[A-Za-z0-9_-]{80,}"), lambda m: _random(m[0][-40:]), token=True),
    Rule("a SendGrid API key", ("SG.",), re.compile(
        r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b"), lambda m: _random(m[0][3:]), token=True),
    Rule("password hashes (shadow file)", (":$",), re.compile(
        r"^[a-z_][a-z0-9_.-]*:(?P<password>\$(?:1|2[abxy]?|5|6|7|y|gy|sha1)\$[^:\n]{8,}):",
        re.MULTILINE)),
    Rule("a password in a git remote URL", ("url",), re.compile(
        rf"^[ \t]*(?:url|pushurl)[ \t]*=[ \t]*{_USERINFO}", re.MULTILINE), _url_password),
    Rule("a password in a git URL rewrite", ("url",), re.compile(
        rf"^[ \t]*\[url[ \t]+\"{_USERINFO}", re.MULTILINE), _url_password),
    Rule("a git credential store", ("://",), re.compile(
        rf"\A(?:[ \t]*(?:#[^\n]*)?\n)*{_USERINFO}[^\s/]+/?[ \t]*$", re.MULTILINE),
        _url_password),
    Rule("an HTTP authorization header in a git config", ("xtraheader", "XTRAHEADER"),
          re.compile(r"(?i:^[ \t]*(?:[^\n=]*\.)?extraheader[ \t]*=[ \t]*\"?[ \t]*"
                     r"authorization:[ \t]*(?:basic|bearer|token)[ \t]+"
                     r"(?P<password>[A-Za-z0-9+/=._~-]{8,}))", re.MULTILINE), _not_placeholder),
    Rule("a kubeconfig client key", ("client-key-data",), re.compile(
        r"^[ \t]*client-key-data:[ \t]*[\"']?(?P<password>[A-Za-z0-9+/=]{40,})",
        re.MULTILINE)),
    Rule("a kubeconfig token", ("token:",), re.compile(
        r"^[ \t]*(?:id-|refresh-)?token:[ \t]*[\"']?(?P<password>[A-Za-z0-9._~+/=-]{20,})",
        re.MULTILINE), _random_value),
    Rule("a netrc password", ("machine", "default"), re.compile(
        r"(?:^|[ \t])(?:machine[ \t\n]+[^\s]+|default)"
        r"(?:[ \t\n]+(?:account|port)[ \t\n]+[^\s]+)*[ \t\n]+login[ \t\n]+[^\s]+"
        r"(?:[ \t\n]+(?:account|port)[ \t\n]+[^\s]+)*"
        r"[ \t\n]+password[ \t\n]+(?P<password>[^\s]+)", re.MULTILINE), _not_placeholder),
    Rule("a pgpass password", (":",), re.compile(
        r"^(?P<user>[^:\s#]+:(?:[0-9]+|\*):[^:\s]+:[^:\s]+):(?P<password>[^\s:]{6,})[ \t]*$",
        re.MULTILINE), lambda m: _PLACEHOLDER.match(m["password"]) is None
        and m["password"].lower() not in _DEV_PASSWORDS),
    Rule("a Docker registry auth", ('"auth"',), re.compile(
        r"\"auth\"[ \t\r\n]*:[ \t\r\n]*\"(?P<password>[A-Za-z0-9+/]{8,}={0,2})\""),
        _docker_auth),
    Rule("a password in a database URL", ("://",), _URL_AT, find=_db_url),
    Rule("a password in a URL", ("://",), _URL_AT, find=_any_url),
    Rule("an npm auth token", ("npmAuth", "_auth", "_password"), re.compile(
        r"(?:npmAuth(?:Token|Ident)|(?<![^\s:])_(?:authToken|auth|password))[\"']?[ \t]*"
        r"[:=][ \t]*[\"']?(?P<password>[A-Za-z0-9._~+/=:-]{8,})(?:[\"'\s]|$)",
        re.MULTILINE), _not_placeholder,
        gate=r"(?m:(?:npmAuth(?:Token|Ident)|(?:^|[\s:])_(?:authToken|auth|password))"
             r"[\"']?[ \t]*[:=])"),
    Rule("a database password in the environment", ("PASS",), re.compile(
        rf"(?<![\w.]){_DB_ENV}[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?P<password>[^\s\"'#(){}\[\]$,;]+)(?:[\"']|[ \t]*(?:#[^\n]*)?$)", re.MULTILINE),
        _env_password, gate=rf"{_DB_ENV}[\"']?[ \t]*[:=]"),
    Rule("a base64-encoded private key", ("LS0tLS1CRUdJTi", "0tLS0tQkVHSU4g",
                                           "tLS0tLUJFR0lOI"), _B64_PEM, find=_base64_key,
          token=True),
    Rule("a Kubernetes Secret", ("Secret",), _K8S_SECRET, find=_k8s_secret),
)

def rule_spans(rule: Rule, text: str, m: re.Match[str]) -> list[Span]:
    """The spans a match of `rule` masks: its `find`, else the match (or its password)
    when `real`."""
    if rule.find is not None:
        return rule.find(text, m)
    if not rule.real(m):
        return []
    return [(*m.span("password" if "password" in rule.regex.groupindex else 0), "all")]


