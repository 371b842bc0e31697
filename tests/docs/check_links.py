#!/usr/bin/env python3
"""Dead-link check of the documentation.

For README.md, CHANGELOG.md, CONTRIBUTING.md, docs/*.md and examples/*.md:
  - every relative markdown link [text](target) must name an existing file or folder
    (relative to the page; an #anchor part is ignored);
  - a `code span` starting with ../ is reported (it points outside the repository);
  - every `code span` that names a path in the repository (it starts with one of the
    top-level folders below and holds no placeholder such as <flavour>, *, {a,b} or ...)
    must exist, after dropping a trailing :LINE, (args) or trailing slash; a span naming a
    build output (build/...) is not checked.
Prints each dead reference as FILE:LINE: target, and exits 1 if there is any.
usage: check_links.py REPO_ROOT
"""
import os
import re
import sys

TOP = ("src/", "include/", "tools/", "tests/", "bench/", "docs/", "scripts/", "cmake/",
       "examples/", ".ci/")
LINK = re.compile(r"\[[^\]]*\]\(([A-Za-z0-9_./#-]+)\)")
SPAN = re.compile(r"`([^`\n]+)`")
PLACEHOLDER = re.compile(r"[<>*{}$]|\.\.\.|…")


def pages(root):
    for name in ("README.md", "CHANGELOG.md", "CONTRIBUTING.md"):
        if os.path.exists(os.path.join(root, name)):
            yield name
    for folder in ("docs", "examples"):
        d = os.path.join(root, folder)
        if os.path.isdir(d):
            for name in sorted(os.listdir(d)):
                if name.endswith(".md"):
                    yield os.path.join(folder, name)


def span_path(text):
    """The repository path a code span names, or None."""
    t = text.strip()
    if t.startswith("../"):
        return t                            # outside the repository: a reader has no such file
    if " " in t or not t.startswith(TOP) or PLACEHOLDER.search(t):
        return None
    t = re.sub(r"\(.*\)$", "", t)          # src/foo.c(bar)
    t = re.sub(r":[0-9][0-9,-]*$", "", t)  # src/foo.c:12
    t = re.sub(r"[:;,.]$", "", t)
    return t.rstrip("/")


def dead_refs(root, page):
    here = os.path.dirname(os.path.join(root, page))
    with open(os.path.join(root, page), encoding="utf-8") as f:
        lines = f.read().split("\n")
    in_code = False
    for no, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        for m in LINK.finditer(line):
            target = m.group(1).split("#")[0]
            if not target or re.match(r"^[a-z]+:", target):
                continue
            if not os.path.exists(os.path.join(here, target)):
                yield no, target
        for m in SPAN.finditer(line):
            path = span_path(m.group(1))
            if path and not os.path.exists(os.path.join(root, path)):
                yield no, path


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    dead = 0
    checked = 0
    for page in pages(root):
        checked += 1
        for no, target in dead_refs(root, page):
            print(f"{page}:{no}: {target}")
            dead += 1
    print(f"{checked} pages checked, {dead} dead references")
    return 1 if dead else 0


if __name__ == "__main__":
    sys.exit(main())
