"""The graph-precision corpus: real libraries from pinned registry archives.

Each repository is one archive (a PyPI sdist or an npm tarball) named by version and
checked against its sha256 before anything is unpacked; the archive's top folder is
stripped, and build output that a checkout would not have is removed (sdist metadata,
npm's compiled `dist/`). The same pins feed the gold builder and the scorer, so both
see byte-identical trees.

    fetch_all(work_dir) -> {repo name: unpacked root}
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Pin:
    name: str  # the repository's name in the index and in the gold records
    language: str  # "python" or "typescript" (TypeScript and JavaScript sources)
    registry: str  # "pypi" or "npm"
    package: str
    version: str
    sha256: str  # of the archive file
    archive: str  # the archive's file name
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
)


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


def fetch(pin: Pin, work: Path) -> Path:
    """The unpacked tree of `pin` under `work/corpus/<name>` (reused when its stamp matches)."""
    dl = work / "archives"
    dl.mkdir(parents=True, exist_ok=True)
    dest = work / "corpus" / pin.name
    stamp = work / "corpus" / f"{pin.name}.sha256"
    if stamp.exists() and stamp.read_text().strip() == pin.sha256:
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
