"""Secrets by what a file is (`indexer.walk.secrets`): key and credential files by name, data
files named for secrets, and secrets in any file's text; never source code or docs for a
word in their name. Through the real walk and the indexing pipeline into a real index.

The tokens are made at run time from random characters, so that this file holds none."""

from __future__ import annotations

import base64
import random
import string
from pathlib import Path

import pytest

from ctxd.indexer.models import FileEntry, Skipped, SkipReason
from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.sqlite.store import Store
from ctxd.indexer.walk.judge import FileJudge
from ctxd.indexer.walk.secrets import is_code_or_docs, secret_in
from ctxd.indexer.walk.servable import read_servable
from ctxd.indexer.walk.walker import WalkOptions, walk
from tests.conftest import FakeEmbedder, RepoBuilder

_RNG = random.Random(24)
ALNUM = string.ascii_letters + string.digits


def rand(n: int, alphabet: str = ALNUM) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


B64 = string.ascii_letters + string.digits + "+/"
PRIVATE_KEY = ("-----BEGIN RSA PRIVATE KEY-----\n"
               + "".join(rand(64, B64) + "\n" for _ in range(6))
               + "-----END RSA PRIVATE KEY-----\n")
OPENSSH_KEY_IN_CODE = ('KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\\n' + rand(70, B64)
                       + '\\n-----END OPENSSH PRIVATE KEY-----\\n"\n')
GITHUB = "gh" + "p_" + rand(36)
AWS = "AK" + "IA" + rand(16, string.ascii_uppercase + string.digits)
SLACK = "xo" + "xb-" + rand(11, string.digits) + "-" + rand(24)
GITLAB = "gl" + "pat-" + rand(20)
STRIPE = "sk" + "_live_" + rand(24)
GOOGLE = "AI" + "za" + rand(35)
SHADOW = ("root:$6$" + rand(8) + "$" + rand(86, ALNUM + "./") + ":19700:0:99999:7:::\n"
          "daemon:*:19700:0:99999:7:::\n")


@pytest.mark.parametrize(
    ("text", "what"),
    [
        (PRIVATE_KEY, "a PEM private key (line 1)"),
        ("import os\n\n" + OPENSSH_KEY_IN_CODE, "a PEM private key (line 3)"),
        (f'TOKEN = "{GITHUB}"\n', "a GitHub token"),
        (f"aws_access_key_id = {AWS}\n", "an AWS access key id"),
        (f"SLACK_BOT_TOKEN={SLACK}\n", "a Slack token"),
        (f"token: {GITLAB}\n", "a GitLab token"),
        (f"stripe.api_key = '{STRIPE}'\n", "a Stripe live key"),
        (f"key={GOOGLE}\n", "a Google API key"),
        (SHADOW, "password hashes (shadow file)"),
        ('[core]\n\tbare = true\n[remote "origin"]\n\turl = https://bob:'
         + rand(20) + "@github.com/acme/app.git\n", "a password in a git remote URL"),
        ("https://bob:" + rand(20) + "@github.com\n", "a git credential store"),
    ],
)
def test_secrets_are_found_in_text(text: str, what: str) -> None:
    found = secret_in(text)
    assert found is not None and found.startswith(what), found


@pytest.mark.parametrize(
    "text",
    [
        # AWS's documented example key, placeholders, and code that only names a format
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n",
        "TOKEN = 'ghp_" + "x" * 36 + "'\n",
        'if line.startswith("-----BEGIN RSA PRIVATE KEY-----"):\n    parse(line)\n',
        '[remote "origin"]\n\turl = https://USER:TOKEN@github.com/acme/app.git\n',
        '\turl = https://<user>:<password>@example.com/repo.git\n',
        "proxies = {'http': 'http://user:pass@10.10.1.10:3128/'}\n",
        "See https://user:password@host/ for the URL form with credentials.\n",
        "-----BEGIN CERTIFICATE-----\n" + rand(64, B64) + "\n-----END CERTIFICATE-----\n",
    ],
)
def test_placeholders_and_mentions_are_not_secrets(text: str) -> None:
    assert secret_in(text) is None


def test_code_and_docs_are_told_from_data_by_name() -> None:
    for rel in ("secret.go", "credentials/credentials.go", "docs/secrets.md", "Makefile",
                "infra/secret.tf", "docs/secret-management.rst", "lib/password.py"):
        assert is_code_or_docs(rel), rel
    for rel in ("secrets.yaml", "client_secret.json", "secret_key", "passwords.txt",
                "credentials.ini"):
        assert not is_code_or_docs(rel), rel


def walked(root: Path, **options: object) -> tuple[set[str], dict[str, Skipped]]:
    admitted: set[str] = set()
    skipped: dict[str, Skipped] = {}
    for item in walk(root, WalkOptions(**options)):  # type: ignore[arg-type]
        if isinstance(item, FileEntry):
            admitted.add(item.path)
        else:
            skipped[item.path] = item
    return admitted, skipped


CODE_NAMED_FOR_SECRETS = [
    "credentials/credentials.go",
    "opts/secret.go",
    "api/types/swarm/secret.go",
    "client/secret_create.go",
    "docs/reference/commandline/secret_create.md",
    "docs/secrets.md",
    "auth/password_reset.py",
]
KEY_AND_CREDENTIAL_FILES = [
    ".env", "config/.env.production", "id_rsa", "deploy/id_ed25519", "tls/server.key",
    "certs/client.pem", "credentials.json", "gcp/client_secret_1234.json", ".npmrc",
    ".pypirc", ".netrc", ".git-credentials", "etc/shadow", "etc/gshadow", "secrets.yaml",
    "config/aws_credentials.json", "passwords.txt",
]


def test_source_and_docs_are_never_refused_for_a_word_in_their_name(repo: RepoBuilder) -> None:
    for rel in CODE_NAMED_FOR_SECRETS:
        repo.write(rel, "package x\n")
    for rel in KEY_AND_CREDENTIAL_FILES:
        repo.write(rel, "x\n")
    admitted, skipped = walked(repo.root)
    assert admitted == set(CODE_NAMED_FOR_SECRETS)
    assert {p for p, s in skipped.items() if s.reason is SkipReason.SENSITIVE} == set(
        KEY_AND_CREDENTIAL_FILES)


@pytest.fixture
def secret_tree(repo: RepoBuilder) -> RepoBuilder:
    repo.write("app/main.py", "def main():\n    return 'hello'\n")
    repo.write("app/settings.py", f"DEBUG = False\nGITHUB_TOKEN = '{GITHUB}'\n")
    repo.write("deploy/notes.txt", "The deploy key:\n\n" + PRIVATE_KEY)
    repo.write("backup/etc-shadow.bak", SHADOW)
    repo.write("mirror.git/config", "[core]\n\tbare = true\n[remote \"origin\"]\n"
               f"\turl = https://deploy:{rand(24)}@git.example.com/acme/app.git\n")
    repo.write("docs/aws.md", "# AWS\n\nSet `aws_access_key_id = AKIAIOSFODNN7EXAMPLE`.\n")
    return repo


SECRET_FILES = {"deploy/notes.txt", "backup/etc-shadow.bak", "mirror.git/config"}


def test_files_holding_secrets_are_not_indexed_and_say_why(
        secret_tree: RepoBuilder, tmp_path: Path) -> None:
    """Data and config files holding a secret are left out and named; source code is kept
    with the secret masked (issue 31, item 13)."""
    store = Store.open(tmp_path / "index.db")
    stats = Indexer(store, FakeEmbedder()).index(secret_tree.root, WalkOptions())
    indexed = {r[0] for r in store.query("SELECT path FROM files")}
    assert indexed == {"app/main.py", "app/settings.py", "docs/aws.md"}
    assert set(stats.sensitive_files) == SECRET_FILES
    why = {s.path: s.detail for s in stats.skipped_files}
    assert why["deploy/notes.txt"] == "holds a PEM private key (line 3)"
    assert GITHUB not in str(stats)
    text = "".join(r[0] for r in store.query("SELECT content FROM file_text"))
    assert GITHUB not in text and "PRIVATE KEY" not in text
    assert "GITHUB_TOKEN = '" + "*" * len(GITHUB) + "'" in text


def test_sensitive_allow_and_sensitive_excludes_lift_the_content_rules(
        secret_tree: RepoBuilder, tmp_path: Path) -> None:
    store = Store.open(tmp_path / "index.db")
    indexer = Indexer(store, FakeEmbedder())
    stats = indexer.index(secret_tree.root, WalkOptions(sensitive_allow=("app", "*.bak")))
    assert set(stats.sensitive_files) == {"deploy/notes.txt", "mirror.git/config"}
    stats = indexer.index(secret_tree.root, WalkOptions(sensitive_excludes=False))
    assert stats.sensitive_files == [] and stats.files_indexed == 6


def test_a_secret_added_to_an_indexed_file_takes_it_out_or_masks_it(
        secret_tree: RepoBuilder, tmp_path: Path) -> None:
    store = Store.open(tmp_path / "index.db")
    indexer = Indexer(store, FakeEmbedder())
    secret_tree.write("config/app.yaml", "name: app\n")
    indexer.index(secret_tree.root, WalkOptions())
    secret_tree.write("config/app.yaml", f"name: app\nslack: {SLACK}\n")
    secret_tree.write("app/main.py", f"def main():\n    return '{SLACK}'\n")
    stats = indexer.index(secret_tree.root, WalkOptions(),
                          only_paths=["app/main.py", "config/app.yaml"])
    assert stats.removed_reasons == {"sensitive": 1}
    assert not store.query("SELECT 1 FROM files WHERE path = 'config/app.yaml'")
    text = "".join(r[0] for r in store.query("SELECT content FROM file_text"))
    assert SLACK not in text and "return '" + "*" * len(SLACK) + "'" in text


def test_a_git_folder_indexed_as_a_root_keeps_its_credentials_out(
        repo: RepoBuilder, tmp_path: Path) -> None:
    """Issue 23: `.git/config` with a password in a URL, `.git-credentials`, `shadow` and
    `gshadow` are never indexed, even when someone indexes the folder that holds them."""
    git = RepoBuilder(repo.root / ".git")
    git.write("config", "[core]\n\trepositoryformatversion = 0\n[remote \"origin\"]\n"
              f"\turl = https://alice:{rand(24)}@github.com/acme/app.git\n")
    git.write("HEAD", "ref: refs/heads/main\n")
    etc = RepoBuilder(tmp_path / "etc")
    etc.write("shadow", SHADOW)
    etc.write("gshadow", "root:*::\nsudo:!::alice\n")
    etc.write("shadow-", SHADOW)
    etc.write("hostname", "box\n")
    home = RepoBuilder(tmp_path / "home")
    home.write(".git-credentials", f"https://alice:{rand(24)}@github.com\n")
    home.write("notes.md", "# Notes\n")
    store = Store.open(tmp_path / "index.db")
    indexer = Indexer(store, FakeEmbedder())
    for root, kept, out in ((git.root, {"HEAD"}, {"config"}),
                            (etc.root, {"hostname"}, {"shadow", "gshadow", "shadow-"}),
                            (home.root, {"notes.md"}, {".git-credentials"})):
        stats = indexer.index(root, WalkOptions())
        assert set(stats.sensitive_files) == out, root
        repo_row = store.repo_by_root(str(root))
        assert repo_row is not None
        assert {r[0] for r in store.query("SELECT path FROM files WHERE repo_id = ?",
                                          (repo_row.id,))} == kept


# ----------------------------------------------------------- issue 31: items 3, 8, 12, 13

KEY_LINES = [rand(64, B64) for _ in range(6)]
GO_TEST_KEY = (
    "package tlsutil\n\nimport \"testing\"\n\n"
    "const testKey = \"-----BEGIN RSA PRIVATE KEY-----\\n\" +\n"
    + "".join(f'\t"{line}\\n" +\n' for line in KEY_LINES)
    + '\t"-----END RSA PRIVATE KEY-----\\n"\n\n'
    "func TestParseKey(t *testing.T) {\n\tif _, err := Parse(testKey); err != nil {\n"
    "\t\tt.Fatal(err)\n\t}\n}\n")
HELM_VALUES = ("replicaCount: 1\ntls:\n  enabled: true\n  key: |\n"
               "    -----BEGIN PRIVATE KEY-----\n"
               + "".join(f"    {line}\n" for line in KEY_LINES)
               + "    -----END PRIVATE KEY-----\n")
MARKDOWN_KEY = ("# Deploying\n\nUse this key:\n\n    -----BEGIN EC PRIVATE KEY-----\n"
                + "".join(f"    {line}\n" for line in KEY_LINES)
                + "    -----END EC PRIVATE KEY-----\n\nThen run `make deploy`.\n")
QUOTED_KEY = ("> -----BEGIN OPENSSH PRIVATE KEY-----\n"
              + "".join(f"> {line}\n" for line in KEY_LINES)
              + "> -----END OPENSSH PRIVATE KEY-----\n")


@pytest.mark.parametrize("text", [GO_TEST_KEY, HELM_VALUES, MARKDOWN_KEY, QUOTED_KEY],
                         ids=["go-literals", "helm-block-scalar", "markdown-indented",
                              "markdown-quoted"])
def test_indented_and_split_private_keys_are_found(text: str) -> None:
    """Issue 31, item 3: the base64 need not start right after a line end."""
    found = secret_in(text)
    assert found is not None and found.startswith("a PEM private key"), found


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


PASSWORD = rand(18)


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("apiVersion: v1\nkind: Config\nusers:\n- name: admin\n  user:\n"
         "    client-certificate-data: " + b64("-----BEGIN CERTIFICATE-----\n" + rand(60))
         + "\n    client-key-data: " + b64("-----BEGIN RSA PRIVATE KEY-----\n" + rand(60))
         + "\n", "a kubeconfig client key"),
        ("apiVersion: v1\nkind: Config\nusers:\n- name: ci\n  user:\n    token: "
         + rand(40, ALNUM + "._-") + "\n", "a kubeconfig token"),
        (f"machine api.example.com\n  login deploy\n  password {PASSWORD}\n",
         "a netrc password"),
        (f"db.internal:5432:app:app_rw:{PASSWORD}\n", "a pgpass password"),
        (f'[url "https://ci:{PASSWORD}@git.example.com/"]\n'
         "\tinsteadOf = https://git.example.com/\n", "a password in a git URL rewrite"),
        ('[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic '
         + b64("x-access-token:" + PASSWORD) + "\n",
         "an HTTP authorization header in a git config"),
        ('{\n  "auths": {\n    "registry.example.com": {\n      "auth": "'
         + b64("deploy:" + PASSWORD) + '"\n    }\n  }\n}\n', "a Docker registry auth"),
        (f"# written by git credential-store\nhttps://bob:{PASSWORD}@github.com\n",
         "a git credential store"),
        (f'DATABASE_URL = "postgres://app:{PASSWORD}@db.internal:5432/app"\n',
         "a password in a database URL"),
    ],
    ids=["kubeconfig-key", "kubeconfig-token", "netrc", "pgpass", "git-insteadof",
         "git-extraheader", "docker-config", "git-credentials-comment", "database-url"],
)
def test_credentials_in_well_known_formats_are_found(text: str, what: str) -> None:
    """Issue 31, item 8."""
    found = secret_in(text)
    assert found is not None and found.startswith(what), found


@pytest.mark.parametrize(
    "text",
    [
        # the service container of a CI job, and placeholders in docs
        "DATABASE_URL: postgres://postgres:postgres@localhost:5432/test\n",
        "DATABASE_URL=postgresql://user:password@localhost/db\n",
        "SQLALCHEMY_URL = mysql://root:root@127.0.0.1:3306/app\n",
        "machine example.com login USER password PASS\n",
        "Change the default password after the first login.\n",
        "The default login is admin, the default password admin too.\n",
        '{"auths": {"registry.example.com": {"auth": "' + b64("user:password") + '"}}}\n',
        "*:*:*:postgres:postgres\n",
        'url = f"postgresql://ctxd:{secret}@127.0.0.1:1/ctxd"\n',
        "dsn = 'mysql://app:%s@db/app' % password\n",
        "fe80:0:0:0:1\n",
        "extraheader = AUTHORIZATION: basic ***\n",
        "token: ${{ secrets.GITHUB_TOKEN }}\n",
        "    token: str = field(default_factory=new_token)\n",
    ],
)
def test_dev_defaults_and_placeholders_in_those_formats_are_not_secrets(text: str) -> None:
    assert secret_in(text) is None


def test_credential_files_under_other_names_and_envrc_are_refused(repo: RepoBuilder) -> None:
    """Issue 31, items 8 and 12: netrc and pgpass under the names tools and dotfile
    managers give them, and every `.env*` file as README promises (`.envrc` included)."""
    named = ["netrc", "dot_netrc", "private_dot_netrc", "pgpass.conf", ".pgpass.bak",
             ".netrc.old", ".envrc", "sub/.envrc", ".env.example", ".env_local"]
    for rel in named:
        repo.write(rel, "x\n")
    repo.write(".docker/config.json", '{"auths": {"registry.example.com": {"auth": "'
               + b64("deploy:" + PASSWORD) + '"}}}\n')
    repo.write("kube/config", f"apiVersion: v1\nusers:\n- user:\n    token: {rand(40)}\n")
    repo.write("environment.py", "x = 1\n")
    admitted, skipped = walked(repo.root)
    assert admitted == {"environment.py", ".docker/config.json", "kube/config"}
    assert {p for p, s in skipped.items() if s.reason is SkipReason.SENSITIVE} == set(named)
    judge = FileJudge(repo.root, WalkOptions())
    for item in walk(repo.root, WalkOptions()):
        if isinstance(item, FileEntry) and item.path != "environment.py":
            judged = judge.judge(item)
            assert isinstance(judged, Skipped), item.path
            assert judged.reason is SkipReason.SENSITIVE, item.path


def test_code_holding_a_test_key_is_indexed_with_the_key_masked(
        repo: RepoBuilder, tmp_path: Path) -> None:
    """Issue 31, item 13: a Go test file with a PEM test key keeps its symbols and its line
    numbers; the index, `cat` and `file_content` never hold the key. A data file holding a
    key (a Helm values file) is still refused whole."""
    repo.write("tlsutil/key_test.go", GO_TEST_KEY)
    repo.write("docs/deploy.md", MARKDOWN_KEY)
    repo.write("chart/values.yaml", HELM_VALUES)
    store = Store.open(tmp_path / "index.db")
    stats = Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions())
    assert stats.sensitive_files == ["chart/values.yaml"]
    assert stats.files_masked == 2
    assert sorted(stats.masked_files) == ["docs/deploy.md", "tlsutil/key_test.go"]
    rows = dict(store.query("SELECT f.path, t.content FROM files f JOIN file_text t "
                            "ON t.rowid = f.id"))
    assert set(rows) == {"tlsutil/key_test.go", "docs/deploy.md"}
    for rel, original in (("tlsutil/key_test.go", GO_TEST_KEY), ("docs/deploy.md", MARKDOWN_KEY)):
        masked = rows[rel]
        assert len(masked) == len(original) and masked.count("\n") == original.count("\n")
        assert not any(line in masked for line in KEY_LINES)
        assert not any(line[:12] in masked for line in KEY_LINES)
        assert "-----BEGIN" in masked and secret_in(masked) is None
        served = read_servable(repo.root, rel, WalkOptions())
        assert served == (rel, masked)
    assert "Then run `make deploy`." in rows["docs/deploy.md"]
    symbols = {r[0]: r[1] for r in store.query(
        "SELECT name, line FROM symbols WHERE path = 'tlsutil/key_test.go'")}
    assert symbols.get("TestParseKey") == GO_TEST_KEY.count("\n", 0, GO_TEST_KEY.index(
        "func TestParseKey")) + 1
    assert isinstance(read_servable(repo.root, "chart/values.yaml", WalkOptions()), Skipped)


def test_fixtures_named_for_secrets_are_judged_by_their_text(repo: RepoBuilder) -> None:
    """Issue 31, item 13: the golden files of a `secret` command (docker's
    `cli/command/secret/testdata/secret-list-with-format.golden`) hold no secret and are
    indexed; a data or config file named for secrets still is not."""
    golden = ["cli/command/secret/testdata/secret-list-with-format.golden",
              "cli/command/secret/testdata/secret-inspect-pretty.simple.golden",
              "internal/secrets/testdata/secret_create.out"]
    for rel in golden:
        repo.write(rel, "ID        NAME    DRIVER    CREATED\nID-foo    foo     2 hours ago\n")
    data = ["secrets.yaml", "deploy/secret", "config/db_password.txt", "secrets.json.bak"]
    for rel in data:
        repo.write(rel, "x\n")
    admitted, skipped = walked(repo.root)
    assert admitted == set(golden)
    assert set(skipped) == set(data)
