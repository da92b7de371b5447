"""Messy trees, part two (issue 24), end to end with the real model: a JavaScript package
that commits its bundles (UMD, ESM with a source map, CommonJS; `package.json` `main` into
`dist/`), a Python `build/lib/` copy and egg-info, an identical copy of a source file, the
lockfiles of every ecosystem (one over 3 MB), and Go code named `secret.go` and
`credentials.go` next to a real `.env` and `id_rsa`.

The source answers first and no build output reaches a top 10; built files and lockfiles
are kept for lexical search and named; the 3 MB lockfile is greppable; the Go code and the
docs are searchable while `.env` and `id_rsa` stay out."""

from __future__ import annotations

import json
import random
import re
import string
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxd.indexer.embedder import SentenceTransformerEmbedder
from ctxd.indexer.errors import FileRefused
from ctxd.indexer.models import IndexStats
from ctxd.server.cli.main import main
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import RepoBuilder

LIB = {
    "lib/retry.js": '''/**
 * Retries a failed request with exponential backoff.
 */
export function retryWithBackoff(request, { attempts = 5, baseDelayMs = 200 } = {}) {
  let delay = baseDelayMs;
  return (async function attempt(left) {
    try {
      return await request();
    } catch (error) {
      if (left <= 1 || !isRetryable(error)) throw error;
      await sleep(delay);
      delay *= 2;
      return attempt(left - 1);
    }
  })(attempts);
}

function isRetryable(error) {
  return error.code === 'ECONNRESET' || (error.status >= 500 && error.status < 600);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
''',
    "lib/headers.js": '''/**
 * Normalises HTTP header names to their canonical capitalisation.
 */
export function normalizeHeaderName(name) {
  return name.trim().toLowerCase().replace(/(^|-)([a-z])/g, (_, dash, c) => dash + c.toUpperCase());
}

export function mergeHeaders(defaults, overrides) {
  const out = {};
  for (const [k, v] of Object.entries({ ...defaults, ...overrides })) {
    out[normalizeHeaderName(k)] = v;
  }
  return out;
}
''',
    "lib/cookies.js": '''/**
 * Parses a Cookie request header into a map of names to values.
 */
export function parseCookieHeader(header) {
  const jar = {};
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name) jar[name] = decodeURIComponent(rest.join('='));
  }
  return jar;
}
''',
    "lib/cancel.js": '''/**
 * A token that lets a caller abort a request that is still running.
 */
export class CancelToken {
  constructor() {
    this.reason = null;
    this.listeners = [];
  }

  cancel(message) {
    if (this.reason) return;
    this.reason = new Error(message || 'canceled');
    for (const fn of this.listeners) fn(this.reason);
  }

  onCancel(fn) {
    this.listeners.push(fn);
  }
}
''',
}

HERD = '''"""Zebra herds."""


def count_by_stripes(herd, min_stripes=40):
    """Count the zebras in a herd that have at least `min_stripes` stripes."""
    return sum(1 for zebra in herd if zebra.stripes >= min_stripes)


def heaviest(herd):
    """The heaviest zebra of the herd."""
    return max(herd, key=lambda z: z.weight)
'''

GO = {
    "go.mod": "module example.com/vault\n\ngo 1.22\n\nrequire github.com/pkg/errors v0.9.1\n",
    "credentials/credentials.go": '''// Package credentials keeps registry logins.
package credentials

// Credentials are the login of one server.
type Credentials struct {
	ServerURL string
	Username  string
	Secret    string
}

// Store keeps, lists and erases credentials for registry servers.
type Store interface {
	// Store saves the credentials of a server, replacing earlier ones.
	Store(c Credentials) error
	// Get returns the credentials saved for a server.
	Get(serverURL string) (Credentials, error)
	// Erase removes the credentials of a server.
	Erase(serverURL string) error
}
''',
    "secret/secret.go": '''// Package secret models the secrets a service mounts in its containers.
package secret

import "strings"

// Secret is a named value a service reads from a file at run time.
type Secret struct {
	Name   string
	Target string
	Data   []byte
}

// Redacted shows the secret with its value replaced by stars, for logs.
func (s *Secret) Redacted() string {
	return s.Name + "=" + strings.Repeat("*", len(s.Data))
}
''',
    "docs/secrets.md": '''# Managing secrets

Secrets are named values that a service reads from a file under `/run/secrets` at run
time. Create one with `vault secret create NAME FILE`, grant it to a service with
`--secret NAME`, and rotate it by creating a new version and updating the service.
''',
    "vendor/modules.txt": "# github.com/pkg/errors v0.9.1\n## explicit\ngithub.com/pkg/errors\n",
    "vendor/github.com/pkg/errors/errors.go": '''package errors

// New returns an error with the supplied message.
func New(message string) error { return &fundamental{msg: message} }

type fundamental struct{ msg string }

func (f *fundamental) Error() string { return f.msg }
''',
}

_RNG = random.Random(2024)
B64 = string.ascii_letters + string.digits + "+/"
ENV = ("DATABASE_URL=postgres://app:" + "".join(_RNG.choice(string.ascii_letters)
                                                 for _ in range(20)) + "@db:5432/app\n"
       "SESSION_SIGNING_KEY=" + "".join(_RNG.choice(string.hexdigits) for _ in range(64)) + "\n")
ID_RSA = ("-----BEGIN OPENSSH PRIVATE KEY-----\n"
          + "".join("".join(_RNG.choice(B64) for _ in range(70)) + "\n" for _ in range(7))
          + "-----END OPENSSH PRIVATE KEY-----\n")


def _exports(src: str) -> list[str]:
    return re.findall(r"^export (?:async )?(?:function|class) (\w+)", src, re.MULTILINE)


def bundles() -> dict[str, str]:
    """What rollup makes of lib/: a UMD bundle, an ESM bundle with its source map, and a
    CommonJS build, non-minified, with the usual banner."""
    banner = "/*! Fetchy v1.7.2 Copyright (c) 2026 The Fetchy authors */\n"
    body = "\n".join(re.sub(r"^export ", "", src, flags=re.MULTILINE) for src in LIB.values())
    names = [n for src in LIB.values() for n in _exports(src)]
    umd = (banner + "(function (global, factory) {\n"
           "  typeof exports === 'object' && typeof module !== 'undefined' ? "
           "module.exports = factory() :\n"
           "  typeof define === 'function' && define.amd ? define(factory) :\n"
           "  (global = typeof globalThis !== 'undefined' ? globalThis : global || self, "
           "global.fetchy = factory());\n"
           "})(this, (function () { 'use strict';\n\n"
           + "".join("  " + line + "\n" for line in body.splitlines())
           + f"\n  return {{ {', '.join(names)} }};\n\n}}));\n")
    esm = (banner + body + f"\nexport {{ {', '.join(names)} }};\n"
           "//# sourceMappingURL=fetchy.esm.js.map\n")
    source_map = json.dumps({"version": 3, "file": "fetchy.esm.js",
                             "sources": [f"../{p}" for p in LIB],
                             "sourcesContent": list(LIB.values()),
                             "mappings": "AAAA;AACA;AACA"})
    cjs = (banner + "'use strict';\n\n" + body
           + "".join(f"\nexports.{n} = {n};" for n in names) + "\n")
    return {"dist/fetchy.umd.js": umd, "dist/fetchy.esm.js": esm,
            "dist/fetchy.esm.js.map": source_map, "dist/node/fetchy.cjs": cjs}


def big_package_lock(size: int) -> str:
    packages: dict[str, object] = {"": {"name": "fetchy", "version": "1.7.2"}}
    i = 0
    while True:
        name = f"pkg-{i:05d}"
        packages[f"node_modules/{name}"] = {
            "version": f"{i % 9}.{i % 31}.{i % 7}",
            "resolved": f"https://registry.npmjs.org/{name}/-/{name}-1.0.0.tgz",
            "integrity": "sha512-" + "".join(_RNG.choice(B64) for _ in range(86)) + "==",
        }
        i += 1
        if i % 1000 == 0:
            text = json.dumps({"name": "fetchy", "lockfileVersion": 3, "requires": True,
                               "packages": packages}, indent=2) + "\n"
            if len(text) >= size:
                return text


LOCKFILES = {
    "go.sum": "github.com/pkg/errors v0.9.1 h1:FEBLx1zS214owpjy7qsBeixbURkuhQAwrK5UwLGTwt4=\n",
    "vendor.sum": "github.com/pkg/errors v0.9.1 h1:FEBLx1zS214owpjy7qsBeixbURkuhQAwrK5Uw=\n",
    "Cargo.lock": '[[package]]\nname = "serde"\nversion = "1.0.203"\n',
    "yarn.lock": 'left-pad@^1.3.0:\n  version "1.3.0"\n',
    "pnpm-lock.yaml": "lockfileVersion: '9.0'\npackages:\n  left-pad@1.3.0: {}\n",
    "bun.lock": '{"lockfileVersion": 1, "packages": {"left-pad": ["left-pad@1.3.0"]}}\n',
    "uv.lock": '[[package]]\nname = "zebra"\nversion = "0.1.0"\n',
    "poetry.lock": '[[package]]\nname = "attrs"\nversion = "23.2.0"\n',
    "Pipfile.lock": '{"default": {"attrs": {"version": "==23.2.0"}}}\n',
    "pdm.lock": '[[package]]\nname = "attrs"\nversion = "23.2.0"\n',
    "Gemfile.lock": "GEM\n  specs:\n    rake (13.2.1)\n",
    "composer.lock": '{"packages": [{"name": "monolog/monolog", "version": "3.6.0"}]}\n',
    "mix.lock": '%{"jason": {:hex, :jason, "1.4.1"}}\n',
    "pubspec.lock": "packages:\n  http:\n    version: \"1.2.1\"\n",
    "Package.resolved": '{"pins": [{"identity": "swift-nio", "state": {"version": "2.65.0"}}]}\n',
    "Podfile.lock": "PODS:\n  - Alamofire (5.9.1)\n",
    "packages.lock.json": '{"version": 1, "dependencies": {"net8.0": {}}}\n',
    "flake.lock": '{"nodes": {"nixpkgs": {"locked": {"rev": "abc"}}}, "version": 7}\n',
    "gradle.lockfile": "com.google.guava:guava:33.2.0-jre=compileClasspath\n",
}


def messy_build_tree(root: Path) -> RepoBuilder:
    repo = RepoBuilder(root)
    repo.write("package.json", json.dumps({
        "name": "fetchy", "version": "1.7.2", "main": "dist/node/fetchy.cjs",
        "module": "dist/fetchy.esm.js", "unpkg": "dist/fetchy.umd.js",
        "files": ["lib/", "dist/"]}, indent=2))
    for rel, text in {**LIB, **bundles(), **GO, **LOCKFILES}.items():
        repo.write(rel, text)
    repo.write("package-lock.json", big_package_lock(3_200_000))
    repo.write("examples/cookies.js", LIB["lib/cookies.js"])  # an identical copy
    repo.write("pyproject.toml", '[project]\nname = "zebra"\nversion = "0.1.0"\n')
    repo.write("zebra/__init__.py", "")
    repo.write("zebra/herd.py", HERD)
    repo.write("build/lib/zebra/herd.py", HERD)
    repo.write("zebra.egg-info/PKG-INFO", "Metadata-Version: 2.1\nName: zebra\nVersion: 0.1.0\n")
    repo.write(".env", ENV)
    repo.write("id_rsa", ID_RSA)
    return repo


BUILT = {"dist/fetchy.umd.js", "dist/fetchy.esm.js", "dist/node/fetchy.cjs",
         "build/lib/zebra/herd.py", "zebra.egg-info/PKG-INFO"}
LOCKS = {*LOCKFILES, "package-lock.json"}


def is_build_output(path: str) -> bool:
    return path.startswith(("dist/", "build/", "zebra.egg-info/"))


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory,
            real_embedder: SentenceTransformerEmbedder) -> Iterator[tuple[Service, IndexStats]]:
    base = tmp_path_factory.mktemp("issue24")
    root = messy_build_tree(base / "fetchy").root
    service = Service(load_settings({"home": str(base / "home")}), embedder=real_embedder)
    stats = service.index(root)
    yield service, stats
    service.close()


QUESTIONS = {
    "retry a failed request with exponential backoff": "lib/retry.js",
    "parse the cookie header of a request": "lib/cookies.js",
    "normalise the capitalisation of HTTP header names": "lib/headers.js",
    "abort a request that is still running": "lib/cancel.js",
    "count the zebras in a herd that have enough stripes": "zebra/herd.py",
}


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "keyword"])
def test_the_source_answers_first_and_no_build_output_reaches_a_top_10(
        indexed: tuple[Service, IndexStats], mode: str) -> None:
    service, _stats = indexed
    for question, source in QUESTIONS.items():
        paths = [h.path for h in service.search(question, mode=mode, limit=10).results]
        assert paths[0] in (source, "examples/cookies.js" if "cookie" in question else source), (
            mode, question, paths)
        assert source in paths[:2], (mode, question, paths)
        assert not [p for p in paths if is_build_output(p) or p in LOCKS], (mode, question, paths)


def test_built_files_and_lockfiles_are_lexical_only_and_named(
        indexed: tuple[Service, IndexStats]) -> None:
    _service, stats = indexed
    roles = {f.path: f.role for f in stats.not_embedded_files}
    assert {p for p, r in roles.items() if r == "built"} == BUILT
    assert {p for p, r in roles.items() if r == "lockfile"} == LOCKS
    assert roles["dist/fetchy.esm.js.map"] == "minified"
    assert stats.files_skipped.get("too_large", 0) == 0


def test_the_3_mb_lockfile_and_the_bundles_stay_greppable(
        indexed: tuple[Service, IndexStats]) -> None:
    service, _stats = indexed
    hits = service.search('"node_modules/pkg-03999"', mode="lexical").results
    assert [h.path for h in hits] == ["package-lock.json"]
    defs = [h.path for h in service.search("retryWithBackoff", mode="lexical").results]
    assert defs[0] == "lib/retry.js", defs  # the definition before the bundles' copies
    assert {"dist/fetchy.umd.js", "dist/fetchy.esm.js", "dist/node/fetchy.cjs"} <= set(defs)


def test_go_code_and_docs_named_for_secrets_are_searchable_and_keys_stay_out(
        indexed: tuple[Service, IndexStats]) -> None:
    service, stats = indexed
    asked = {
        "interface that stores, gets and erases registry credentials":
            "credentials/credentials.go",
        "show a secret with its value hidden for the logs": "secret/secret.go",
        "how do I create a secret and grant it to a service": "docs/secrets.md",
    }
    for question, path in asked.items():
        paths = [h.path for h in service.search(question, mode="hybrid", limit=5).results]
        assert paths[0] == path, (question, paths)
    sym = service.search("sym:Redacted", mode="lexical").results
    assert [h.path for h in sym] == ["secret/secret.go"]
    assert set(stats.sensitive_files) == {".env", "id_rsa"}
    for needle in ("SESSION_SIGNING_KEY", "OPENSSH PRIVATE KEY"):
        assert not service.search(f'"{needle}"', mode="lexical").results
    with pytest.raises(FileRefused, match="looks like a secret"):
        service.file_content("fetchy", ".env")


def test_ctxd_index_names_likely_secrets_in_its_text_output(tmp_path: Path) -> None:
    repo = RepoBuilder(tmp_path / "vault")
    for rel, text in GO.items():
        repo.write(rel, text)
    repo.write(".env", ENV)
    repo.write("id_rsa", ID_RSA)
    token = "gh" + "p_" + "Zq3T8rWbN1yXkLm4Vd7Pc2Hs9Jf6Ga0Ue5Ri"
    repo.write("deploy/settings.yaml", f"token: '{token}'\n")
    r = CliRunner().invoke(main, ["index", str(repo.root), "--dry-run"],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if "Likely secrets" in x)
    assert "Likely secrets, not indexed: 3: .env, deploy/settings.yaml, id_rsa" in line
    assert "walk.sensitive_allow" in line
    assert "ghp_" not in r.output
