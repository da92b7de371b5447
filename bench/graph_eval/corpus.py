"""The graph-precision corpus: real libraries from pinned registry archives and commits.

Each Python/JS/TS repository is one archive (a PyPI sdist or an npm tarball) named by
version and checked against its sha256 before anything is unpacked; the archive's top
folder is stripped, and build output that a checkout would not have is removed (sdist
metadata, npm's compiled `dist/`). The Go and Rust repositories (registry `git`) are one
commit of a local git clone or bare mirror, `git archive`d whole; their check is the
commit's tree id (content-addressed, so the same tree whatever git wrote the archive).
Mirrors are looked up under $GRAPH_EVAL_MIRRORS (default /work/.mirror) as
`<owner>+<name>` (a bare mirror in its `repo/` folder, or a clone). The same pins feed
the gold builder and the scorer, so both see byte-identical trees.

    fetch_all(work_dir) -> {repo name: unpacked root}
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Pin:
    name: str  # the repository's name in the index and in the gold records
    language: str  # "python", "typescript" (TypeScript and JavaScript sources), "go", "rust",
    # "c"
    registry: str  # "pypi", "npm" or "git" (a local clone or mirror of `package`)
    package: str  # for git: the GitHub owner/name
    version: str  # for git: the commit
    sha256: str  # of the archive file; for git: the commit's tree id
    archive: str  # the archive's file name (git: unused)
    prune: tuple[str, ...] = ()  # folders (relative to the root) removed after unpacking
    # "dev": its misses are written up for the graph's authors; "heldout": reported only
    # as totals, so that the figures show how the resolution does on code nobody tuned on
    set: str = "dev"


PINS: tuple[Pin, ...] = (
    Pin("requests", "python", "pypi", "requests", "2.32.3",
        "55365417734eb18255590a9ff9eb97e9e1da868d4ccd6402399eaf68af20a760",
        "requests-2.32.3.tar.gz"),
    Pin("urllib3", "python", "pypi", "urllib3", "2.2.3",
        "e7d814a81dad81e6caf2ec9fdedb284ecc9c73076b62654547cc64ccdcae26e9",
        "urllib3-2.2.3.tar.gz"),
    Pin("click", "python", "pypi", "click", "8.1.7",
        "ca9853ad459e787e2192211578cc907e7594e294c7ccc834310722b41b9ca6de",
        "click-8.1.7.tar.gz"),
    Pin("axios", "typescript", "npm", "axios", "1.7.7",
        "5f2dde3882446ea1cb5094dd7db99b4ed7cf09f0c96be646a8d30959b0923bec",
        "axios-1.7.7.tgz", prune=("dist",)),
    Pin("rxjs", "typescript", "npm", "rxjs", "7.8.1",
        "c532167725ab7d085123209156c93cef22f2479cb9c8527060f1cd903aa9d149",
        "rxjs-7.8.1.tgz", prune=("dist",)),
    Pin("jinja2", "python", "pypi", "jinja2", "3.1.4",
        "4a3aee7acbbe7303aede8e9648d13b8bf88a429282aa6122a993f0ac800cb369",
        "jinja2-3.1.4.tar.gz", set="heldout"),
    Pin("query-core", "typescript", "npm", "@tanstack/query-core", "5.59.0",
        "2586579316ffc0957be3c4c33e2f9dfa7732b55c15013b7139244d2ab60d27fc",
        "tanstack-query-core-5.59.0.tgz", prune=("build",), set="heldout"),
    # Go and Rust: the commits of bench/polyglot_dev{,2}/setup_corpus.sh; gold by hand,
    # dev only (no held-out repository for these two languages)
    Pin("gin", "go", "git", "gin-gonic/gin", "dcaa4296d111981ffb31ac3eba90bb63e1eb5ab9",
        "b97c21f21a531fb175be721bf0fbcac3b1a38269", ""),
    Pin("cobra", "go", "git", "spf13/cobra", "adbc8813901bba65827259daa8e22ff94ec1f30e",
        "5a3b2c8e9af4c74e607a0a55e7910c1edb5d266f", ""),
    Pin("axum", "rust", "git", "tokio-rs/axum", "3d78036dcac289d6c1d54934708acb6a5bd73686",
        "96fd502a221ab84b2512add022119732e500edaf", ""),
    Pin("ripgrep", "rust", "git", "BurntSushi/ripgrep",
        "3fce3b5bb0236da2df6d99672afb8a719642eca7", "856ed9162d23416ee7dc5f4389975b54ca062f60", ""),
    # C: the commit of bench/ranking_dev3/setup_corpus.sh; gold by hand and grep (dev only)
    Pin("jq", "c", "git", "jqlang/jq", "579e6f76cffd7643ba4002a2c3618a5ea710589a",
        "4fa48550438b0ff89c64a58804c0a342e2f92891", ""),
    # C#, PHP, Kotlin (bench/ranking_dev3), Swift, Lua, Elixir (bench/ranking_dev4) at their
    # setup_corpus.sh commits, and scopt (Scala); gold by hand, dev only
    Pin("serilog", "csharp", "git", "serilog/serilog", "60935b4d7abad71cf6157b45a10f5c3c65ead527",
        "4ca602e516115a132d58581e6d6419ee1cf321fd", ""),
    Pin("guzzle", "php", "git", "guzzle/guzzle", "2779e868a00289e1b1fd854af030c43a06f4bcb4",
        "c75b6afdecde2beb25c5287a5017e61ccd475b08", ""),
    Pin("clikt", "kotlin", "git", "ajalt/clikt", "fa2e48c54995a88d492f05568a64889d99994877",
        "f764a4eb3ec43e994b45f9b92c3c024ed401c6aa", ""),
    Pin("alamofire", "swift", "git", "Alamofire/Alamofire",
        "7595cbcf59809f9977c5f6378500de2ad73b7ddb", "957dba498fb621b51176ebf6c89f80c444b0b446",
        ""),
    Pin("scopt", "scala", "git", "scopt/scopt", "75cd14c9e1f517e9d1beb8de9e3427e40630f1cb",
        "043a89a792959613a20adb3ff0ee71a7168bbbe6", ""),
    Pin("lazy.nvim", "lua", "git", "folke/lazy.nvim", "306a05526ada86a7b30af95c5cc81ffba93fef97",
        "e34493b6c87511edffefa6418d5f4270a2c606f5", ""),
    Pin("plug", "elixir", "git", "elixir-plug/plug", "a898c454a04ca5ffad306bd751a15c7ac9ff6927",
        "7b39499b0224aefd8905b3b30ef00e53927ab15a", ""),
)

MIRRORS_ENV = "GRAPH_EVAL_MIRRORS"
DEFAULT_MIRRORS = Path("/work/.mirror")


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _download(pin: Pin, dl: Path) -> Path:
    target = dl / pin.archive
    if target.exists():
        return target
    if pin.registry == "pypi":
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
               "--no-binary", ":all:", "-d", str(dl), f"{pin.package}=={pin.version}"]
    else:
        cmd = ["npm", "pack", "--silent", f"{pin.package}@{pin.version}"]
    subprocess.run(cmd, check=True, cwd=dl, stdout=subprocess.DEVNULL)
    if not target.exists():
        raise SystemExit(f"{pin.registry} gave no {pin.archive} in {dl}")
    return target


def _unpack(pin: Pin, archive: Path, dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            parts = Path(member.name).parts
            if len(parts) < 2 or not (member.isfile() or member.isdir()):
                continue  # the top folder itself, links, devices
            member.name = str(Path(*parts[1:]))
            tar.extract(member, dest, filter="data")
    (dest / "PKG-INFO").unlink(missing_ok=True)
    for egg in list(dest.rglob("*.egg-info")):
        shutil.rmtree(egg)
    for folder in pin.prune:
        shutil.rmtree(dest / folder, ignore_errors=True)


def git_dir(pin: Pin) -> Path:
    """The local clone or bare mirror holding `pin`'s commit."""
    base = Path(os.environ.get(MIRRORS_ENV) or DEFAULT_MIRRORS) / pin.package.replace("/", "+")
    for candidate in (base / "repo", base / "repo" / ".git", base / ".git", base):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    raise SystemExit(f"no git mirror of {pin.package} at {base}: clone "
                     f"https://github.com/{pin.package} there (or set {MIRRORS_ENV} to "
                     "a folder holding <owner>+<name> clones)")


def _export_git(pin: Pin, dest: Path) -> None:
    gd = git_dir(pin)
    tree = subprocess.run(["git", "--git-dir", str(gd), "rev-parse", f"{pin.version}^{{tree}}"],
                          capture_output=True, text=True, check=False).stdout.strip()
    if tree != pin.sha256:
        raise SystemExit(f"{gd}: commit {pin.version} has tree {tree or 'none (missing)'}, "
                         f"want {pin.sha256}; fetch the commit into the mirror")
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "--git-dir", str(gd), "archive", "--format=tar",
                              pin.version], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        members = [m for m in tar.getmembers() if m.isfile() or m.isdir()]
        tar.extractall(dest, members=members, filter="data")


def fetch(pin: Pin, work: Path) -> Path:
    """The unpacked tree of `pin` under `work/corpus/<name>` (reused when its stamp matches)."""
    dl = work / "archives"
    dl.mkdir(parents=True, exist_ok=True)
    dest = work / "corpus" / pin.name
    stamp = work / "corpus" / f"{pin.name}.sha256"
    if stamp.exists() and stamp.read_text().strip() == pin.sha256:
        return dest
    if pin.registry == "git":
        _export_git(pin, dest)
        stamp.write_text(pin.sha256 + "\n")
        return dest
    archive = _download(pin, dl)
    got = sha256_of(archive)
    if got != pin.sha256:
        raise SystemExit(f"sha256 mismatch for {archive}: got {got}, want {pin.sha256}")
    _unpack(pin, archive, dest)
    stamp.write_text(pin.sha256 + "\n")
    return dest


def fetch_all(work: Path, names: set[str] | None = None) -> dict[str, Path]:
    return {p.name: fetch(p, work) for p in PINS if names is None or p.name in names}


def pin_named(name: str) -> Pin:
    for p in PINS:
        if p.name == name:
            return p
    raise KeyError(name)
