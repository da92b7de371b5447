"""Retrieval quality on a messy copy of the eval-dev corpus (issues 15 and 24).

    .venv/bin/python bench/messy_eval.py [--variants clean,messy,messy-rules-off] [--json FILE]

Real repositories carry lockfiles, one-line SVGs, minified bundles, certificates, data
blobs, vendored copies of other projects and generated code. This copies the eval-dev
corpus (bench/corpus.py) and adds, to each of its four repositories, deterministic junk of
real formats and sizes:

- `package-lock.json` (npm v3, 400 packages), `yarn.lock`, `poetry.lock`, `go.sum`;
- `docs/_static/logo.svg`: one line, ~330 KB; `static/app.min.js` and `dist/bundle.js`
  (a dense one-line bundle without a name hint), ~200 KB each, made of the repository's
  own identifiers so they match its queries;
- `tests/certs/ca.crt` and a PEM bundle `.txt`, `tests/data/blob.b64`;
- `third_party/<other>/`: a vendored copy of another eval repository's source (the
  hardest junk: real code that answers other repositories' questions);
- `proto/service_pb2.py`: protoc-style generated code;

and, for issue 24, the build output and secrets of a real package, made from the
repository's own sources, so that it answers the repository's own questions:

- non-minified bundles of the package's modules concatenated: `dist/<name>-full.js` (the
  whole package: a `/*! name v1.0.0` banner and a trailing `sourceMappingURL`),
  `static/<name>.umd.js` (a UMD wrapper only), `dist/esm/index.mjs` (only a `.map` beside
  it), `out/index.cjs` (only named by a `package.json`);
- `build/lib/<package>/`: a copy of the whole package, as `setup.py build` leaves it;
  `<package>.egg-info/` (PKG-INFO repeats the README);
- the lockfiles of every ecosystem (`Cargo.lock`, `Gemfile.lock`, `composer.lock`,
  `mix.lock`, `pubspec.lock`, `Package.resolved`, `Podfile.lock`, `packages.lock.json`,
  `flake.lock`, `gradle.lockfile`, `vendor.sum`, `pnpm-lock.yaml`, `bun.lock`, `uv.lock`,
  `Pipfile.lock`, `pdm.lock`) and a 3 MB `web/package-lock.json` (over the 1 MiB limit);
- secrets and code named for them: `.env` and `deploy/id_rsa` (must stay out of the
  index), and hand-written `tools/credentials.py` and `docs/secrets.md` (must be indexed;
  they are not junk).

Each variant is indexed from scratch with `ctxd index` (timed), then every query runs
through `Service.search` (hybrid, the default) and is scored with the eval set's own
`run_eval.py`. Reported per variant: R@1/R@5/MRR@10, index time, checkpoints, the share
of checkpoints in junk files, how many junk files reached any top 10, which junk files
were dropped (`too_large`: must be none) and the sensitive and secret-named files.
`messy-rules-off` sets `CTXD_WALK_LEXICAL_ONLY_RULES=false`: what the junk costs when
everything is embedded (the behaviour before issue 15, less its fusion fix).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.corpus import ensure_corpus, eval_dir
from bench.eval_quality import CTXD, HERE, load_scorer, ranked_files

REPOS = ("rich", "requests", "urllib3", "jinja2")
VENDOR_FROM = {"rich": "jinja2", "requests": "urllib3", "urllib3": "requests", "jinja2": "rich"}
LOCKFILES_24 = ("Cargo.lock", "Gemfile.lock", "composer.lock", "mix.lock", "pubspec.lock",
                "Package.resolved", "Podfile.lock", "packages.lock.json", "flake.lock",
                "gradle.lockfile", "vendor.sum", "pnpm-lock.yaml", "bun.lock", "uv.lock",
                "Pipfile.lock", "pdm.lock")
JUNK_MARKERS = ("package-lock.json", "yarn.lock", "poetry.lock", "go.sum", "logo.svg",
                "app.min.js", "dist/", "tests/certs/", "blob.b64", "third_party/",
                "service_pb2.py", "static/", "out/", "build/lib/", ".egg-info/",
                *LOCKFILES_24)
SECRETS = (".env", "deploy/id_rsa")
"""Must never be indexed."""
SECRET_NAMED = ("tools/credentials.py", "docs/secrets.md")
"""Real code and docs named for secrets: must be indexed."""


def is_junk(path: str) -> bool:
    """Junk added by this script (its generated code is embedded, so it is not junk):
    a marker at the start of a path segment; `.md` files only under `*.egg-info/`."""
    p = "/" + path
    if ".egg-info/" in p:
        return True
    return not p.endswith(".md") and any(
        f"/{m}" in p for m in JUNK_MARKERS if m != "service_pb2.py")


def words_of(repo: Path, rng: random.Random) -> list[str]:
    found = sorted({w for p in sorted(repo.rglob("*.py"))[:40]
                    for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]{3,}", p.read_text("utf-8"))})
    rng.shuffle(found)
    return found[:2000] or ["value"]


def package_lock(rng: random.Random, n: int = 400) -> str:
    packages: dict[str, Any] = {"": {"name": "site", "version": "1.0.0"}}
    for i in range(n):
        name = f"pkg-{i:03d}-{rng.choice(['core', 'utils', 'parser', 'http', 'color'])}"
        packages[f"node_modules/{name}"] = {
            "version": f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}",
            "resolved": f"https://registry.npmjs.org/{name}/-/{name}-1.0.0.tgz",
            "integrity": "sha512-" + base64.b64encode(rng.randbytes(48)).decode(),
            "dependencies": {f"pkg-{rng.randint(0, n - 1):03d}-core": "^1.0.0"},
        }
    return json.dumps({"name": "site", "lockfileVersion": 3, "requires": True,
                       "packages": packages}, indent=2) + "\n"


def yarn_lock(rng: random.Random, n: int = 200) -> str:
    out = ["# THIS IS AN AUTOGENERATED FILE. DO NOT EDIT THIS FILE DIRECTLY.",
           "# yarn lockfile v1", ""]
    for i in range(n):
        out += [f'"pkg-{i}@^1.0.0":', '  version "1.0.3"',
                f'  resolved "https://registry.yarnpkg.com/pkg-{i}/-/pkg-{i}-1.0.3.tgz"',
                "  integrity sha512-" + base64.b64encode(rng.randbytes(48)).decode(), ""]
    return "\n".join(out)


def poetry_lock(rng: random.Random, n: int = 120) -> str:
    out = []
    for i in range(n):
        out += ["[[package]]", f'name = "lib{i}"', f'version = "{rng.randint(1, 9)}.0.0"',
                'description = "A library"', 'optional = false', 'python-versions = ">=3.8"',
                "", "[[package.files]]", f'file = "lib{i}-1.0.0-py3-none-any.whl"',
                f'hash = "sha256:{rng.randbytes(32).hex()}"', ""]
    return "\n".join(out)


def go_sum(rng: random.Random, n: int = 300) -> str:
    return "".join(f"github.com/org{i}/mod{i} v1.{i}.0 h1:"
                   f"{base64.b64encode(rng.randbytes(32)).decode()}\n" for i in range(n))


def one_line_svg(words: list[str], rng: random.Random, size: int = 330_000) -> str:
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512"><title>'
             + " ".join(words[:12]) + "</title>"]
    while sum(map(len, parts)) < size:
        pts = " ".join(f"{rng.randint(0, 512)}.{rng.randint(0, 99)},{rng.randint(0, 512)}"
                       for _ in range(40))
        parts.append(f'<path id="{rng.choice(words)}" d="M{pts}Z"/>')
    return "".join(parts) + "</svg>"


def bundle(words: list[str], rng: random.Random, size: int = 200_000) -> str:
    parts = ['!function(e,t){"use strict";']
    while sum(map(len, parts)) < size:
        a, b, c = rng.choice(words), rng.choice(words), rng.choice(words)
        parts.append(f"function {a}({b},{c}){{return {b}.{c}?{a}({c}):{b}}}var {c}_{b}={a};")
    return "".join(parts) + "}(window);\n"


def pem(rng: random.Random, blocks: int = 1) -> str:
    body = "".join("-----BEGIN CERTIFICATE-----\n" + base64.encodebytes(rng.randbytes(900))
                   .decode() + "-----END CERTIFICATE-----\n" for _ in range(blocks))
    return body


def pb2(words: list[str]) -> str:
    fields = "\n".join(f"_{w.upper()} = _descriptor.FieldDescriptor(name='{w}', index={i})"
                       for i, w in enumerate(words[:60]))
    return ("# -*- coding: utf-8 -*-\n# Generated by the protocol buffer compiler.  DO NOT EDIT!"
            "\n# source: service.proto\nfrom google.protobuf import descriptor as _descriptor\n\n"
            + fields + "\n")


def package_dir(repo: Path) -> Path:
    """The repository's top-level Python package (`rich/`, `src/requests/`)."""
    for base in (repo / "src", repo):
        for d in sorted(base.iterdir()) if base.is_dir() else ():
            if (d / "__init__.py").is_file():
                return d
    raise SystemExit(f"no package in {repo}")


def modules_text(pkg: Path, limit: int = 0) -> str:
    """The package's modules concatenated as a bundler does, each under a path comment."""
    parts = []
    for p in sorted(pkg.rglob("*.py")):
        parts.append(f"// {p.relative_to(pkg.parent).as_posix()}\n{p.read_text('utf-8')}")
        if limit and sum(map(len, parts)) >= limit:
            break
    return "\n".join(parts)


def build_output(name: str, repo: Path) -> dict[str, str]:
    """Non-minified bundles of the package's own modules, each caught by one rule only."""
    pkg = package_dir(repo)
    banner = f"/*! {name} v1.0.0 | (c) the {name} authors | MIT License */\n"
    umd = ("(function (global, factory) {\n  typeof exports === 'object' && typeof module !== "
           "'undefined' ? module.exports = factory() :\n  typeof define === 'function' && "
           f"define.amd ? define(factory) : (global.{name} = factory());\n}})(this, (function "
           "() { 'use strict';\n" + modules_text(pkg, 200_000) + "\n}));\n")
    return {
        f"dist/{name}-full.js": banner + modules_text(pkg)
        + f"\n//# sourceMappingURL={name}-full.js.map\n",
        f"static/{name}.umd.js": umd,
        "dist/esm/index.mjs": modules_text(pkg, 300_000),
        "dist/esm/index.mjs.map": json.dumps({"version": 3, "file": "index.mjs",
                                              "sources": [pkg.name], "mappings": "AAAA"}),
        "package.json": json.dumps({"name": f"{name}-docs", "private": True,
                                    "main": "out/index.cjs"}, indent=2),
        "out/index.cjs": "'use strict';\n" + modules_text(pkg, 100_000),
    }


def lockfiles(rng: random.Random) -> dict[str, str]:
    """A small lockfile of each ecosystem in its own format, and a 3 MB package-lock.json."""
    def h() -> str:
        return rng.randbytes(32).hex()
    n = range(60)
    return {
        "Cargo.lock": "".join(f'[[package]]\nname = "crate{i}"\nversion = "1.{i}.0"\n'
                              f'source = "registry+https://github.com/rust-lang/crates.io-index"'
                              f'\nchecksum = "{h()}"\n\n' for i in n),
        "Gemfile.lock": "GEM\n  remote: https://rubygems.org/\n  specs:\n"
                        + "".join(f"    gem{i} (1.{i}.0)\n" for i in n),
        "composer.lock": json.dumps({"packages": [{"name": f"vendor/pkg{i}", "version":
                                                   f"v1.{i}.0", "dist": {"shasum": h()}}
                                                  for i in n]}, indent=4),
        "mix.lock": "%{\n" + "".join(f'  "dep{i}": {{:hex, :dep{i}, "1.{i}.0", "{h()}"}},\n'
                                       for i in n) + "}\n",
        "pubspec.lock": "packages:\n" + "".join(
            f"  pkg{i}:\n    dependency: transitive\n    description:\n      sha256: {h()}\n"
            f'    version: "1.{i}.0"\n' for i in n),
        "Package.resolved": json.dumps({"pins": [{"identity": f"swift-pkg{i}", "state": {
            "revision": h()[:40], "version": f"1.{i}.0"}} for i in n], "version": 2}, indent=2),
        "Podfile.lock": "PODS:\n" + "".join(f"  - Pod{i} (1.{i}.0)\n" for i in n)
                        + "SPEC CHECKSUMS:\n" + "".join(f"  Pod{i}: {h()[:40]}\n" for i in n),
        "packages.lock.json": json.dumps({"version": 1, "dependencies": {"net8.0": {
            f"Pkg{i}": {"type": "Transitive", "resolved": f"1.{i}.0", "contentHash": h()}
            for i in n}}}, indent=2),
        "flake.lock": json.dumps({"nodes": {f"input{i}": {"locked": {"narHash": h(),
                                                                     "rev": h()[:40]}}
                                            for i in n}, "version": 7}, indent=2),
        "gradle.lockfile": "".join(f"com.example:lib{i}:1.{i}.0=compileClasspath\n" for i in n),
        "vendor.sum": "".join(f"github.com/org{i}/mod v1.{i}.0 h1:{h()[:43]}=\n" for i in n),
        "pnpm-lock.yaml": "lockfileVersion: '9.0'\npackages:\n" + "".join(
            f"  pkg{i}@1.{i}.0:\n    resolution: {{integrity: sha512-{h()}}}\n" for i in n),
        "bun.lock": json.dumps({"lockfileVersion": 1, "packages": {
            f"pkg{i}": [f"pkg{i}@1.{i}.0", "", {}, f"sha512-{h()}"] for i in n}}, indent=2),
        "uv.lock": "".join(f'[[package]]\nname = "lib{i}"\nversion = "1.{i}.0"\n'
                           f'sdist = {{ hash = "sha256:{h()}" }}\n\n' for i in n),
        "Pipfile.lock": json.dumps({"default": {f"lib{i}": {"hashes": [f"sha256:{h()}"],
                                                            "version": f"==1.{i}.0"}
                                                for i in n}}, indent=4),
        "pdm.lock": "".join(f'[[package]]\nname = "lib{i}"\nversion = "1.{i}.0"\n'
                            f'files = [{{file = "lib{i}.whl", hash = "sha256:{h()}"}}]\n\n'
                            for i in n),
        "web/package-lock.json": package_lock(rng, 11_000),
    }


def secrets(rng: random.Random) -> dict[str, str]:
    """Two real-format secrets (never indexed) and code and docs named for secrets
    (always indexed)."""
    b64 = base64.b64encode(rng.randbytes(700)).decode()
    return {
        ".env": f"DATABASE_URL=postgres://app:{rng.randbytes(12).hex()}@db:5432/app\n"
                f"SECRET_KEY={rng.randbytes(32).hex()}\n",
        "deploy/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\n"
                         + "\n".join(b64[i:i + 70] for i in range(0, len(b64), 70))
                         + "\n-----END OPENSSH PRIVATE KEY-----\n",
        "tools/credentials.py": '''"""Where the release tooling finds its upload credentials."""

import netrc
import os


def upload_credentials(host, path=None):
    """(login, password) for `host` from the user's netrc file, or from the
    UPLOAD_USER / UPLOAD_PASSWORD environment variables when it has none."""
    try:
        found = netrc.netrc(path).authenticators(host)
    except (FileNotFoundError, netrc.NetrcParseError):
        found = None
    if found:
        return found[0], found[2]
    return os.environ.get("UPLOAD_USER", ""), os.environ.get("UPLOAD_PASSWORD", "")
''',
        "docs/secrets.md": "# Release secrets\n\nThe release job reads its upload login from "
                           "the runner's netrc file (see `tools/credentials.py`); nothing "
                           "secret is committed. Rotate the token every 90 days.\n",
    }


def make_messy(corpus: Path, dest: Path) -> list[str]:
    """Copy `corpus` to `dest` and add the junk; returns the junk files' paths."""
    shutil.copytree(corpus, dest)
    added: list[str] = []
    for name in REPOS:
        rng = random.Random(f"junk-{name}")
        repo = dest / name
        words = words_of(repo, rng)
        files = {
            "package-lock.json": package_lock(rng), "yarn.lock": yarn_lock(rng),
            "poetry.lock": poetry_lock(rng), "go.sum": go_sum(rng),
            "docs/_static/logo.svg": one_line_svg(words, rng),
            "static/app.min.js": bundle(words, rng), "dist/bundle.js": bundle(words, rng),
            "tests/certs/ca.crt": pem(rng), "tests/certs/ca-bundle.txt": pem(rng, 6),
            "tests/data/blob.b64": base64.encodebytes(rng.randbytes(30_000)).decode(),
            "proto/service_pb2.py": pb2(words),
            **build_output(name, repo), **lockfiles(rng), **secrets(rng),
        }
        for rel, text in files.items():
            p = repo / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, encoding="utf-8")
            added.append(f"{name}/{rel}")
        src = corpus / VENDOR_FROM[name]
        src = src / "src" if (src / "src").is_dir() else src
        shutil.copytree(src, repo / "third_party" / VENDOR_FROM[name],
                        ignore=shutil.ignore_patterns("*.md", "*.rst"))
        added += [f"{name}/third_party/{VENDOR_FROM[name]}/{p.relative_to(src).as_posix()}"
                  for p in src.rglob("*.py")]
        pkg = package_dir(repo)
        shutil.copytree(pkg, repo / "build" / "lib" / pkg.name)
        added += [f"{name}/build/lib/{p.relative_to(pkg.parent).as_posix()}"
                  for p in pkg.rglob("*") if p.is_file()]
        egg = repo / f"{pkg.name}.egg-info"
        egg.mkdir()
        readme = next((repo / r for r in ("README.md", "README.rst") if (repo / r).is_file()),
                      None)
        sources = sorted(p.relative_to(repo).as_posix() for p in pkg.rglob("*.py"))
        for rel, text in {
            "PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0.0\n\n"
                        + (readme.read_text("utf-8") if readme else ""),
            "SOURCES.txt": "\n".join(sources) + "\n",
            "top_level.txt": pkg.name + "\n",
            "dependency_links.txt": "\n",
        }.items():
            (egg / rel).write_text(text, encoding="utf-8")
            added.append(f"{name}/{egg.name}/{rel}")
    return added


def run_variant(tree: Path, rules: bool, junk: set[str],
                ranked_out: Path | None = None) -> dict[str, Any]:
    """Index `tree` from scratch and run every query; `junk`: the repo-relative paths of
    the added junk files (`make_messy`)."""
    home = Path(tempfile.mkdtemp(prefix="ctxd-messy-"))
    env = {**os.environ, "CTXD_HOME": str(home), "CTXD_NO_DAEMON": "1",
           "CTXD_WALK_LEXICAL_ONLY_RULES": "true" if rules else "false"}
    t0 = time.perf_counter()
    out = subprocess.run([*CTXD, "index", str(tree), "--json"], check=True, env=env,
                         cwd=str(HERE.parent), capture_output=True, text=True).stdout
    index_s = time.perf_counter() - t0
    stats = json.loads(out)
    os.environ.update({k: v for k, v in env.items() if k.startswith("CTXD_")})
    from ctxd.server.config import load_settings
    from ctxd.server.service import Service

    service = Service(load_settings(), long_lived=True)
    store = service.store()
    total = int(store.query("SELECT count(*) FROM checkpoints")[0][0])
    junk_cp = sum(int(n) for p, n in store.query(
        "SELECT path, count(*) FROM checkpoints GROUP BY path") if str(p) in junk)
    named = {str(r[0]) for r in store.query(  # the corpus is one repository: match a suffix
        " UNION ".join(["SELECT path FROM files WHERE path LIKE ?"] * len(SECRET_NAMED)),
        [f"%/{p}" for p in SECRET_NAMED])}
    dropped = [s["path"] for s in stats.get("skipped_files", [])
               if s["reason"] == "too_large" and s["path"] in junk]
    scorer = load_scorer()
    queries = scorer.load_queries(str(eval_dir() / "queries.jsonl"))
    results: dict[str, list[str]] = {}
    junk_top: set[str] = set()
    for q in queries:
        page = service.search(q["query"], mode="hybrid", limit=40)
        hits = list(page.results)
        while page.next_cursor and len(ranked_files(hits)) < 10:
            page = service.search(q["query"], mode="hybrid", limit=40, cursor=page.next_cursor)
            hits += page.results
        results[q["id"]] = ranked_files(hits)
        junk_top |= {f for f in results[q["id"]] if f in junk}
    service.close()
    if ranked_out is not None:
        with ranked_out.open("w", encoding="utf-8") as f:
            for qid, files in results.items():
                f.write(json.dumps({"id": qid, "ranked_files": files}) + "\n")
    _rows, summary = scorer.aggregate(queries, results)
    shutil.rmtree(home, ignore_errors=True)
    return {"index_s": round(index_s, 1), "checkpoints": total, "junk_checkpoints": junk_cp,
            "junk_share": round(junk_cp / max(total, 1), 4),
            "not_embedded": stats.get("not_embedded", {}),
            "files_skipped": stats.get("files_skipped", {}),
            "junk_too_large": dropped,
            "sensitive_files": stats.get("sensitive_files", []),
            "secret_named_indexed": sorted(named),
            "junk_in_top10": sorted(junk_top),
            **{k: round(float(summary["all"][k]), 4) for k in ("R@1", "R@5", "MRR@10", "nDCG@10")}}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", default="clean,messy,messy-rules-off")
    ap.add_argument("--json", type=Path, help="write the results here")
    args = ap.parse_args()
    corpus = ensure_corpus()
    work = Path(tempfile.mkdtemp(prefix="ctxd-messy-tree-"))
    messy = work / "corpus"
    added = make_messy(corpus, messy)
    print(f"junk files added: {len(added)} under {messy}", file=sys.stderr)
    junk = {a.split("/", 1)[1] for a in added if is_junk(a.split("/", 1)[1])}
    out: dict[str, Any] = {}
    for v in args.variants.split(","):
        tree = corpus if v == "clean" else messy
        out[v] = run_variant(tree, rules=v != "messy-rules-off", junk=junk,
                             ranked_out=HERE / "results" / f"messy-{v}.jsonl")
        print(v, json.dumps(out[v]), file=sys.stderr)
        if args.json:
            args.json.write_text(json.dumps(out, indent=2), encoding="utf-8")
    print("| variant | R@1 | R@5 | MRR@10 | nDCG@10 | index s | checkpoints | junk share "
          "| junk files in a top 10 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for v, r in out.items():
        print(f"| {v} | {r['R@1']:.3f} | {r['R@5']:.3f} | {r['MRR@10']:.3f} | "
              f"{r['nDCG@10']:.3f} | {r['index_s']} | {r['checkpoints']} | "
              f"{r['junk_share']:.1%} | {len(r['junk_in_top10'])} |")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2), encoding="utf-8")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
