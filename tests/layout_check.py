#!/usr/bin/env python3
"""layout_check.py - the README's layout table and the folders' file maps
against the tree (run by test_layout.sh).

    layout_check.py SRCDIR

The tree is what git tracks, with the files git would add (in a git
checkout whose top is SRCDIR), else every file under SRCDIR but the
autotools' own folders (build-aux, autom4te.cache) and build trees (a
folder holding config.status, or named _*, as make distcheck's are).

1. The table under README.md's "## Layout" heading: its first column names
   each top-level folder (`name/`) once, and may name folders below them
   (`backend/datapath/`); every top-level folder of the tree is in it and
   every folder it names exists.  The files a row names in
   backticks (`name.c`, `dir/name.h`, ...) exist in that folder or below it,
   and every .c file of the product (all but tests/ and bench/) is named
   by the row of its folder or of the nearest folder above it.
2. File maps (README.md, "Layout"): the folder D's map is the first comment
   of D/<D's name>.h, its lines that begin with the names of .c files
   ("main.c  command line ...", "blkif.c, ring.c  the protocol ...", or
   "prof/prof_model.c  ..." for a file in a folder below D).  Every name
   exists (relative to D), and every .c file directly in D is named, and
   every one in a folder below D that has no map of its own (nor a folder
   between them), except those make generates (a first line saying
   "generated ... do not edit").  A folder at any depth may have one; a
   folder without one, under none, is not checked.
3. The top: the table's `./` row names every file at the top of the tree
   (`configure.ac`, `quickstart`, ...; in a tarball, not those autoconf
   and automake made there: configure, Makefile.in, ...) in backticks, and
   every backticked name of that row without a space or a slash is a file
   at the top.
Prints one line per problem and exits 1 if there is any.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tree_files as tree  # noqa: E402

SRC = sys.argv[1] if len(sys.argv) > 1 else "."
problems = []




def layout_table():
    """{folder: row text} from README.md's Layout table."""
    rows, in_section = {}, False
    with open(os.path.join(SRC, "README.md"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                in_section = line.strip() == "## Layout"
                continue
            m = re.match(r"\|\s*`([^`]+)/`\s*\|(.*)", line) if in_section else None
            if m:
                if m.group(1) in rows:
                    problems.append(f"README.md, Layout: `{m.group(1)}/` has two rows")
                rows[m.group(1)] = m.group(2)
    if not rows:
        problems.append("README.md has no Layout table (a '## Layout' section with a `folder/` row each)")
    return rows


def generated(path):
    with open(os.path.join(SRC, path), encoding="utf-8", errors="replace") as f:
        first = f.readline().lower()
    return "generated" in first and "do not edit" in first


MAP_LINE = re.compile(r"^\s*\*?\s*((?:[\w./-]+\.c)(?:\s*,\s*[\w./-]+\.c)*)(?=[\s,(:]|$)")


def file_map(header):
    """The .c names the first comment of header lists, or None."""
    with open(os.path.join(SRC, header), encoding="utf-8", errors="replace") as f:
        text = f.read()
    m = re.match(r"\s*/\*(.*?)\*/", text, re.S)
    if not m:
        return None
    names = []
    for line in m.group(1).splitlines():
        lm = MAP_LINE.match(line)
        if lm:
            names += [n.strip() for n in lm.group(1).split(",")]
    return names or None


files = tree.tree_files(SRC)
in_git = tree.in_git
fileset = set(files)
dirs = {os.path.dirname(f) for f in files}
alldirs = set()
for d in dirs:
    while d:
        alldirs.add(d)
        d = os.path.dirname(d)

# 1. the layout table
top = sorted({f.split("/")[0] for f in files if "/" in f})
rows = layout_table()
for d in top:
    if d not in rows:
        problems.append(f"README.md, Layout: the folder {d}/ is missing from the table")
for d, text in sorted(rows.items()):
    if d == ".":
        continue
    if d not in alldirs:
        problems.append(f"README.md, Layout: `{d}/` names no folder of the tree")
        continue
    below = [f[len(d) + 1:] for f in files if f.startswith(d + "/")]
    for name in re.findall(r"`([\w./-]+\.(?:c|h|sh|py|js|css|cjs))`", text):
        # in the row's folder or below it; a name with a folder may also
        # be one from the top of the tree (`util/clock.c` in backend's row)
        if not any(b == name or b.endswith("/" + name) for b in below) and name not in fileset:
            problems.append(f"README.md, Layout, `{d}/`: names `{name}`, which is nowhere in {d}/")

# Every source file of the product is named by the row of its folder (or
# of the nearest folder above it that has a row): the table is the map of
# the tree a newcomer reads.  tests/ and bench/ name their kinds of files.
for f in files:
    if not f.endswith(".c") or f.split("/")[0] in ("tests", "bench") or generated(f):
        continue
    d = os.path.dirname(f)
    while d and d not in rows:
        d = os.path.dirname(d)
    if not d:
        continue
    named = re.findall(r"`([\w./-]+\.c)`", rows[d])
    if not any(f == n or f.endswith("/" + n) for n in named):
        problems.append(f"README.md, Layout, `{d}/`: does not name {f[len(d) + 1:]}")

# 3. the top's files, both ways
# in a tarball (no git), what autoconf and automake made there is no file of ours
made = {"configure", "Makefile.in", "aclocal.m4", "config.h.in", "configure~", "config.h.in~"}
top_files = sorted(f for f in files if "/" not in f and not (not in_git and f in made))
if "." not in rows:
    problems.append("README.md, Layout: no `./` row naming the files at the top of the tree")
else:
    named_top = [n for n in re.findall(r"`([^`]+)`", rows["."]) if " " not in n and "/" not in n]
    for f in top_files:
        if f not in named_top:
            problems.append(f"README.md, Layout, `./`: does not name {f}, a file at the top of the tree")
    for n in named_top:
        if n not in fileset:
            problems.append(f"README.md, Layout, `./`: names `{n}`, which is no file at the top of the tree")

# 2. the file maps
map_cache = {}


def has_map(d):
    if d not in map_cache:
        header = f"{d}/{os.path.basename(d)}.h"
        map_cache[d] = header in fileset and file_map(header) is not None
    return map_cache[d]


def mapped_by(d):
    """The folder whose map must name the .c files of d: d's own, else the
    nearest folder above it with one (None: no map)."""
    while d:
        if has_map(d):
            return d
        d = os.path.dirname(d)
    return None


maps = 0
for d in sorted(alldirs):
    header = f"{d}/{os.path.basename(d)}.h"
    if header not in fileset:
        continue
    names = file_map(header)
    if names is None:
        continue
    maps += 1
    for n in names:
        if os.path.normpath(f"{d}/{n}") not in fileset:
            problems.append(f"{header}: the file map names {n}, which is not in {d}/")
    # its folder's files, and those of every folder below it that has no
    # map of its own (named by their path from d: "prof/prof_model.c")
    own = sorted(os.path.relpath(f, d) for f in files
                 if f.endswith(".c") and not generated(f) and mapped_by(os.path.dirname(f)) == d)
    missing = [c for c in own if c not in names]
    if missing:
        problems.append(f"{header}: the file map omits {len(missing)} of {d}/'s files: {' '.join(missing)}")

for p in problems:
    print(p)
print(f"layout: {len(top)} folders, {len(top_files)} files at the top, {len(rows)} rows, {maps} file maps, "
      f"{len(problems)} problems")
sys.exit(1 if problems else 0)
