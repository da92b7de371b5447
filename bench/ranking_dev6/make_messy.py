"""Make the dev6 checkouts messy the way real working copies are (bench/ranking_dev6/README.md).

    python bench/ranking_dev6/make_messy.py CORPUS

CORPUS holds `dayjs/` and `humanize/` checked out by setup_corpus.sh. Deterministic: the
same input trees give byte-identical output (sorted listings, no timestamps).

dayjs (what `npm run build` and `npm install` leave, plus a committed dist/):
- at the root, where dayjs's build writes them and its .gitignore lists them:
  `dayjs.min.js`, `locale/<name>.js`, `plugin/<name>.js` (one-line bundles), `esm/` (a copy
  of src/), `index.d.ts`, `locale.json` (the build's list of locales);
- `dist/`, as projects that commit their build do (vConsole, axios): `dayjs.min.js`,
  `dayjs.locales.min.js` (every locale in one line) and `locale.json`;
- `node_modules/` with a few packages' sources (from the tree itself: no download).

humanize (what `pip install -e .`, `python -m build`, `mkdocs build` and the translation
scripts leave):
- `build/lib/humanize/` (a copy of the package, gitignored), `humanize.pot` (gitignored);
- `site/` (mkdocs output, gitignored): one HTML page per docs page;
- `.venv/` with `pyvenv.cfg` and a copy of the package under site-packages;
- `benchmarks/results.json`: timings as a data file, not ignored;
- `vendor/humanize_legacy/`: the package vendored under another name, not ignored.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_LINE_COMMENT = re.compile(r"(^|\s)//[^\n]*")


def minify(js: str) -> str:
    """A crude one-line bundle: comments out, every run of white space one space."""
    js = _BLOCK_COMMENT.sub(" ", js)
    js = _LINE_COMMENT.sub(r"\1", js)
    return re.sub(r"\s+", " ", js).strip()


def umd(name: str, body: str) -> str:
    return ('!function(t,e){"object"==typeof exports&&"undefined"!=typeof module?'
            'module.exports=e():"function"==typeof define&&define.amd?define(e):'
            f'(t="undefined"!=typeof globalThis?globalThis:t||self).{name}=e()}}'
            f'(this,(function(){{"use strict";{minify(body)}}}));\n')


def copytree(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, dirs_exist_ok=True)


def dayjs(root: Path) -> None:
    src = root / "src"
    core = "".join((src / n).read_text() for n in ("constant.js", "utils.js", "index.js"))
    (root / "dayjs.min.js").write_text(umd("dayjs", core))
    locales = sorted((src / "locale").glob("*.js"))
    listing = []
    for p in locales:
        text = p.read_text()
        out = root / "locale" / p.name
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(umd(f"dayjs_locale_{p.stem.replace('-', '_')}", text))
        m = re.search(r"// (.*) \[", text)
        listing.append({"key": p.stem, "name": m[1] if m else p.stem})
    for d in sorted((src / "plugin").iterdir()):
        out = root / "plugin" / f"{d.name}.js"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(umd(f"dayjs_plugin_{d.name}", (d / "index.js").read_text()))
    copytree(src, root / "esm")
    shutil.copy(root / "types" / "index.d.ts", root / "index.d.ts")
    (root / "locale.json").write_text(json.dumps(listing))
    dist = root / "dist"
    dist.mkdir(exist_ok=True)
    shutil.copy(root / "dayjs.min.js", dist / "dayjs.min.js")
    (dist / "dayjs.locales.min.js").write_text(
        "".join((root / "locale" / p.name).read_text() for p in locales))
    (dist / "locale.json").write_text(json.dumps(listing, indent=2) + "\n")
    nm = root / "node_modules"
    for name in ("dayjs", "esm-copy"):
        copytree(src, nm / name / "esm")
    (nm / "dayjs" / "package.json").write_text('{"name": "dayjs", "main": "dayjs.min.js"}\n')
    shutil.copy(root / "dayjs.min.js", nm / "dayjs" / "dayjs.min.js")


def humanize(root: Path) -> None:
    pkg = root / "src" / "humanize"
    copytree(pkg, root / "build" / "lib" / "humanize")
    po = (pkg / "locale" / "fr_FR" / "LC_MESSAGES" / "humanize.po").read_text()
    pot = re.sub(r'(msgstr(?:\[\d\])?) ".*"(\n".*")*', r'\1 ""', po)
    (root / "humanize.pot").write_text(pot)
    site = root / "site"
    for page in sorted((root / "docs").glob("*.md")):
        body = page.read_text()
        module = re.search(r"::: (humanize\.\w+)", body)
        text = body
        if module:
            mod = module[1].split(".")[1]
            source = (pkg / f"{mod}.py").read_text()
            docs = re.findall(r'def (\w+)\(.*?"""(.*?)"""', source, re.DOTALL)
            text = body.replace(module[0], "".join(
                f'<h2 id="{module[1]}.{n}">{n}</h2>\n<div class="doc">{d}</div>\n'
                for n, d in docs))
        out = site / page.stem / "index.html"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text('<!doctype html>\n<html lang="en"><head><meta name="generator" '
                       'content="mkdocs-1.6.1, mkdocs-material-9.5.49">'
                       f"<title>{page.stem} - humanize</title></head><body>\n"
                       f"{text}\n</body></html>\n")
    venv = root / ".venv"
    (venv).mkdir(exist_ok=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.12.3\n")
    copytree(pkg, venv / "lib" / "python3.12" / "site-packages" / "humanize")
    bench = root / "benchmarks"
    bench.mkdir(exist_ok=True)
    names = sorted(re.findall(r"def (test_\w+)", (root / "tests" / "test_benchmarks.py")
                              .read_text()))
    results = {"machine": {"cpu": "x86_64", "python": "3.12.3"},
               "benchmarks": [{"name": n, "stats": {"min": 1e-6 * (i + 1),
                                                     "mean": 1.5e-6 * (i + 1),
                                                     "rounds": 1000 + i}}
                              for i, n in enumerate(names)]}
    (bench / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    copytree(pkg, root / "vendor" / "humanize_legacy")


def main() -> None:
    corpus = Path(sys.argv[1])
    dayjs(corpus / "dayjs")
    humanize(corpus / "humanize")


if __name__ == "__main__":
    main()
