#!/usr/bin/env python3
"""layering_check.py - the layers the README and the head comments state,
against the product's real includes (run by test_layering.sh).

    layering_check.py SRCDIR

The product is every .c and .h file of the tree outside tests/ and bench/
(the tree as layout_check.py finds it: what git tracks, else the files
under SRCDIR).  Its includes are the `#include "..."` lines, resolved
against the including file's folder, then the top ("../store/store.h" and
"store/store.h" alike); one that names no file of the tree must be one
the build generates (named in configure.ac or Makefile.am: config.h,
profsvc_paths.h).  A module is a .c file and its same-stem .h (a header
without a .c is a module of its own).

1. Folder order.  README.md's Layout section holds one list under
   "**Folder order.**", a line per statement:
       - `cli/` over `web/` (from `cmd_serve.c` only), over `view/`
       - in `backend/`: `daemon/` over `control/` and `toolstack/`, over ...
   Each folder (or group of folders joined by "and") is over every one
   after it on the line; "over" goes through (a folder over one that is
   over a third is over it too); "(from `f.c` only)" after a folder
   limits the line's earlier folders to reaching it from those files.  A
   line with "in `D/`:" orders D's sub-folders.  A file may include the
   headers of its own folder and of the folders its folder is over,
   nothing else; the stated order has no circle, and names every
   top-level folder of the product, and every sub-folder of a folder it
   orders.
2. The store's layers: store/store_internal.h's "THE LAYERS" list numbers
   the store's files; a store module includes only modules of lower
   layers, or of its own layer listed before it; those that "stand apart"
   include no store module with a .c but one another.
3. No circle: no module includes, however indirectly, one that includes
   it.  A header without a .c of its own is looked through (what it
   includes is what its includer includes): a folder's shared internal
   header (web_internal.h, store_internal.h) is no module of its own.
4. Head comments: every .c file's first comment, and every header
   without a .c that includes another of the product's files, has a
   "May call:" list (the sentence it begins, to the first full stop
   ending a sentence or the end of its paragraph).  Every module a file
   includes but its own is named in its module's lists (the .c's and the
   .h's together): by file name (`log.c`, `store.h`), stem with a folder
   (`util/safe_text`), or a folder (`view/`, `blkif/`: any file below
   it).  Every file or folder a list names exists.
5. One include style: a file of the product's own folder is included by
   its name alone ("store_internal.h"), any other by its path from the
   top of the tree ("store/store.h", "profile/prof/time_profile.h"),
   never through "..".
Prints one line per problem and exits 1 if there is any.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tree_files import tree_files  # noqa: E402

SRC = sys.argv[1] if len(sys.argv) > 1 else "."
problems = []


def read(path):
    with open(os.path.join(SRC, path), encoding="utf-8", errors="replace") as f:
        return f.read()


files = tree_files(SRC)
fileset = set(files)
product = [f for f in files if f.endswith((".c", ".h")) and "/" in f and f.split("/")[0] not in ("tests", "bench")]
prodset = set(product)
proddirs = set()
for f in product:
    d = os.path.dirname(f)
    while d:
        proddirs.add(d)
        d = os.path.dirname(d)


def generated(path):
    first = read(path).split("\n", 1)[0].lower()
    return "generated" in first and "do not edit" in first


def top(f):
    return f.split("/")[0]


def module(f):
    return f[:-2]


def has_c(m):
    return m + ".c" in prodset


# --- the includes -------------------------------------------------------
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', re.M)
built = read("configure.ac") + read("Makefile.am") if "configure.ac" in fileset and "Makefile.am" in fileset else ""
def made(name):
    """Whether the build makes a file of this name (config.h, profsvc_paths.h)."""
    return re.search(r"(?<![\w/.])" + re.escape(os.path.basename(name)) + r"(?![\w])", built) is not None


includes = {}
for f in product:
    out = []
    for name in INCLUDE.findall(read(f)):
        cands = [os.path.normpath(os.path.join(os.path.dirname(f), name)), os.path.normpath(name)]
        hit = next((c for c in cands if c in fileset), None)
        if hit is None:
            if not made(name):
                problems.append(f'{f}: #include "{name}" names no file of the tree')
            continue
        if hit in prodset and module(hit) != module(f):
            out.append(hit)
        # 5. one include style
        same = os.path.dirname(hit) == os.path.dirname(f)
        want = os.path.basename(hit) if same else hit
        if hit in fileset and name != want:
            problems.append(f'{f}: #include "{name}" is written "{want}" (a file of its own folder by its '
                            f'name, any other by its path from the top: README.md, Layout)')
    includes[f] = out


# --- 1. the folder order ------------------------------------------------
def order_lines():
    """The bullet lines of README.md's "**Folder order.**" list."""
    lines, in_section, in_list = [], False, False
    for line in read("README.md").splitlines():
        if line.startswith("## "):
            in_section = line.strip() == "## Layout"
            in_list = False
            continue
        if not in_section:
            continue
        if line.startswith("**Folder order.**"):
            in_list = True
            continue
        if in_list:
            if line.startswith("- "):
                lines.append(line[2:])
            elif lines and line.startswith("  ") and line.strip():
                lines[-1] += " " + line.strip()
            elif lines and not line.strip():
                break
    return lines


ITEM = re.compile(r"`([\w-]+)/`(\s*\(from ((?:[^()]|\([^()]*\))*?) only\))?")


def parse_order():
    """{scope: (over, limited)}: scope '' for the top, 'backend' for a line
    "in `backend/`:"; over[a] = set of folders a is over (as stated, not
    yet closed); limited[(a, b)] = the files of a that may reach b."""
    orders = {}
    lines = order_lines()
    if not lines:
        problems.append('README.md, Layout: no "**Folder order.**" list (a line "- `a/` over `b/`" each)')
    for line in lines:
        m = re.match(r"\s*in `([\w/-]+)/`:\s*(.*)", line)
        scope, text = (m.group(1), m.group(2)) if m else ("", line)
        over, limited = orders.setdefault(scope, ({}, {}))
        groups = []
        for part in re.split(r"(?:,\s*|\s+)over\s+", text):
            items = [(i.group(1), re.findall(r"`([^`]+)`", i.group(3) or ""), i.group(2) is not None)
                     for i in ITEM.finditer(part)]
            if not items:
                problems.append(f"README.md, Folder order: cannot read '{part.strip()}' in '{line.strip()}'")
                continue
            groups.append(items)
        for gi, g in enumerate(groups):
            for a, _, _ in g:
                over.setdefault(a, set())
                for later in groups[gi + 1:]:
                    for b, only, lim in later:
                        over[a].add(b)
                        if lim:
                            limited.setdefault((a, b), set()).update(only)
    return orders


def closure(over):
    reach = {}
    for a in over:
        seen, stack = set(), [a]
        while stack:
            x = stack.pop()
            for y in over.get(x, ()):
                if y not in seen:
                    seen.add(y)
                    stack.append(y)
        reach[a] = seen
    return reach


def check_order(scope, over, limited, folder_of):
    """Each include that crosses folders of the scope against the order."""
    where = f"in `{scope}/`" if scope else "at the top"
    for a, r in sorted(closure(over).items()):
        if a in r:
            problems.append(f"README.md, Folder order: a circle {where}: `{a}/` is over itself")
    # the order names every folder of the scope
    base = scope + "/" if scope else ""
    present = sorted({folder_of(f) for f in product if f.startswith(base) and folder_of(f)})
    for d in present:
        if d not in over:
            problems.append(f"README.md, Folder order: `{base}{d}/` is in no line {where}")
    for d in sorted(over):
        if not os.path.isdir(os.path.join(SRC, base + d)) or base + d not in proddirs:
            problems.append(f"README.md, Folder order: `{base}{d}/` ({where}) is no folder of the product")
    unlimited = {a: {b for b in bs if (a, b) not in limited} for a, bs in over.items()}
    reach = closure(unlimited)
    n = 0
    for f in product:
        if not f.startswith(base):
            continue
        a = folder_of(f)
        for t in includes[f]:
            if not t.startswith(base):
                continue
            b = folder_of(t)
            if not a or not b or a == b:
                continue
            n += 1
            ok = b in reach.get(a, ())
            if not ok:
                for (x, y), only in limited.items():
                    if x == a and (y == b or b in reach.get(y, ())) and os.path.basename(f) in only:
                        ok = True
            if not ok:
                why = "above" if a in reach.get(b, ()) else "not below"
                problems.append(f"{f}: includes {t}, but {base}{b}/ is {why} {base}{a}/ in the folder order "
                                f"(README.md, Layout: {base}{a}/ may include "
                                f"{', '.join(base + x + '/' for x in sorted(reach.get(a, ()))) or 'only its own'})")
    return n


orders = parse_order()
crossings = 0
for scope, (over, limited) in sorted(orders.items()):
    if scope:
        depth = scope.count("/") + 1
        fo = (lambda f, d=depth: f.split("/")[d] if len(f.split("/")) > d + 1 else None)
    else:
        fo = top
    crossings += check_order(scope, over, limited, fo)
if "" not in orders and order_lines():
    problems.append("README.md, Folder order: no line orders the top-level folders")


# --- 2. the store's layers ----------------------------------------------
def store_layers():
    """{module: (layer, position)} from store_internal.h; 'apart' ones
    have layer None."""
    path = "store/store_internal.h"
    if path not in fileset:
        return {}
    text = read(path)
    m = re.search(r"THE LAYERS\.(.*?)\n \*\s*\n", text, re.S)
    if not m:
        problems.append(f"{path}: no \"THE LAYERS.\" paragraph")
        return {}
    layers, layer, pos = {}, None, 0
    body = re.sub(r"\n \* ?", "\n", m.group(1))
    for line in body.splitlines():
        lm = re.match(r"\s*(\d+)\.\s", line)
        if lm:
            layer = int(lm.group(1))
        for name in re.findall(r"\b(store_\w+)\.c\b", line):
            key = "store/" + name
            if key not in layers:
                layers[key] = (layer, pos)
                pos += 1
    # "store_watch.c and store_wire.c ... stand apart" precede the words
    apart = re.search(r"stand\s+apart", body)
    if apart:
        before = re.split(r"\.\s*\n", body[:apart.start()])[-1]
        for name in re.findall(r"\b(store_\w+)\.c\b", before):
            layers["store/" + name] = (None, layers.get("store/" + name, (None, pos))[1])
    return layers


layers = store_layers()
if layers:
    for f in product:
        if top(f) == "store" and f.endswith(".c") and module(f) not in layers:
            problems.append(f"store/store_internal.h, THE LAYERS: {f} is in no layer")
    for m in layers:
        if m + ".c" not in prodset:
            problems.append(f"store/store_internal.h, THE LAYERS: names {m}.c, which is not in store/")
    for f in product:
        mf = module(f)
        if mf not in layers:
            continue
        la, pa = layers[mf]
        for t in includes[f]:
            mt = module(t)
            if mt not in layers:
                continue
            lb, pb = layers[mt]
            if la is None and lb is not None:
                problems.append(f"{f}: includes {t}, but {os.path.basename(mf)}.c stands apart "
                                f"(store/store_internal.h: it uses store.h alone)")
            elif lb is not None and (lb > la or (lb == la and pb > pa)):
                problems.append(f"{f}: includes {t}, of layer {lb}, above its own ({la}) "
                                f"(store/store_internal.h, THE LAYERS)")


# --- 3. no circle -------------------------------------------------------
def deps(m, seen=None):
    """The modules m's files include, headers without a .c looked through."""
    out = set()
    for f in (m + ".c", m + ".h"):
        if f not in prodset:
            continue
        for t in includes[f]:
            mt = module(t)
            if has_c(mt):
                out.add(mt)
            else:
                seen = seen if seen is not None else {m}
                if mt not in seen:
                    seen.add(mt)
                    out |= deps(mt, seen)
    out.discard(m)
    return out


modules = sorted({module(f) for f in product if has_c(module(f))})
graph = {m: sorted(deps(m)) for m in modules}
edge_via = {}
for m in modules:
    for f in (m + ".c", m + ".h"):
        if f in prodset:
            for t in includes[f]:
                edge_via.setdefault((m, module(t)), f"{f} includes {t}")

state, cycles = {}, []


def visit(m, path):
    state[m] = 1
    path.append(m)
    for n in graph.get(m, ()):
        if state.get(n) == 1:
            cycles.append(path[path.index(n):] + [n])
        elif n not in state:
            visit(n, path)
    path.pop()
    state[m] = 2


sys.setrecursionlimit(10000)
for m in modules:
    if m not in state:
        visit(m, [])
for c in cycles:
    hops = []
    for a, b in zip(c, c[1:]):
        hops.append(edge_via.get((a, b), f"{a} reaches {b} through a header without a .c"))
    problems.append("a circle of includes: " + " -> ".join(c) + " (" + "; ".join(hops) + ")")


# --- 4. the head comments -----------------------------------------------
def head_comment(f):
    m = re.match(r"\s*/\*(.*?)\*/", read(f), re.S)
    if not m:
        return None
    return "\n".join(re.sub(r"^\s*\*? ?", "", l) for l in m.group(1).splitlines())


def may_call(f):
    """The text of f's "May call:" list, or None."""
    text = head_comment(f)
    if text is None:
        return None
    m = re.search(r"May call:(.*?)(?:\.(?=\s+[A-Z(])|\.\s*$|\n\s*\n|$)", text, re.S)
    return m.group(1) if m else None


NAME_FILE = re.compile(r"(?<![\w./-])([\w-]+(?:/[\w-]+)*\.[ch])(?![\w])")
NAME_DIR = re.compile(r"(?<![\w./-])((?:[\w-]+/)+)(?![\w.-])")
NAME_STEM = re.compile(r"(?<![\w./-])([\w-]+(?:/[\w-]+)+)(?![\w./-])")


def suffix_match(path, name):
    return path == name or path.endswith("/" + name)


def names(text):
    """(files, dirs, stems) a list names: stems without their .c/.h."""
    text = re.sub(r"<[^>]*>", "", text)
    fs = [n for n in NAME_FILE.findall(text)]
    ds = [n.rstrip("/") for n in NAME_DIR.findall(text)]
    ss = [n for n in NAME_STEM.findall(text)]
    return fs, ds, ss


def dir_exists(d):
    return any(suffix_match(x, d) for x in proddirs)


lists = 0
named_of = {}
def must_name(f, t):
    """A header without a .c in the includer's own folder (its types, its
    constants, the folder's shared plumbing: store_internal.h,
    xensim_hv_parts.h) need not be named; every other include must."""
    return has_c(module(t)) or os.path.dirname(t) != os.path.dirname(f)


for f in product:
    text = may_call(f)
    m = module(f)
    needs = f.endswith(".c") or (not has_c(m) and any(must_name(f, t) for t in includes[f]))
    if text is None:
        if needs and not generated(f):
            problems.append(f"{f}: its head comment has no \"May call:\" list")
        continue
    lists += 1
    fs, ds, ss = names(text)
    for n in fs:
        if not any(suffix_match(x, n) for x in prodset) and not made(n):
            problems.append(f"{f}: May call names {n}, which is no file of the product")
    for d in ds:
        if not dir_exists(d):
            problems.append(f"{f}: May call names {d}/, which is no folder of the product")
    keep = []
    for s in ss:
        d = os.path.dirname(s)
        if dir_exists(d):
            if not any(suffix_match(module(x), s) for x in prodset):
                problems.append(f"{f}: May call names {s}, which is no file of the product")
            keep.append(s)
    named_of.setdefault(m, ([], [], []))
    named_of[m][0].extend(module(n) for n in fs)
    named_of[m][1].extend(ds)
    named_of[m][2].extend(keep)

for f in product:
    m = module(f)
    fs, ds, ss = named_of.get(m, ([], [], []))
    for t in includes[f]:
        mt = module(t)
        if not must_name(f, t) or any(suffix_match(mt, n) for n in fs + ss):
            continue
        if any(suffix_match(os.path.dirname(t), d) or ("/" + d + "/") in ("/" + t) for d in ds):
            continue
        if not named_of.get(m):
            continue    # no list at all: said above (or a header with a .c)
        problems.append(f"{f}: includes {t}, which its May call list does not name "
                        f"(as {os.path.basename(t)}, {mt} or {os.path.dirname(t)}/)")

for p in problems:
    print(p)
print(f"layering: {len(product)} files, {len(modules)} modules, {crossings} includes across folders, "
      f"{len(layers)} store files in layers, {lists} May call lists, {len(problems)} problems")
sys.exit(1 if problems else 0)
