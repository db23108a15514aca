#!/usr/bin/env python3
"""tests/deps_check.py - what the tests and the build need is what
quickstart installs (tests/test_deps.sh runs it).

A used machine hides a missing install step: a program that an earlier
session installed by hand, or that the machine's image happened to carry
(curl, a Node.js with npm), lets every test pass there while a new user's
bare Debian 12 fails.  This check reads the tree, not the machine, and
holds three things:

 1. Every external program the tests, the benchmarks, the demo and the
    build call (in command position in a shell script or a make recipe,
    `need X` and `command -v X`, a subprocess in Python and a benchmark's
    need(X, PACKAGE) (bench/benchlib.py), a spawn in Node.js, an
    exec/system/popen in C) is either the project's own, a
    shell builtin or function, a program of Debian's minbase (debootstrap
    --variant=minbase: the packages of Priority required, and apt), or
    named in tests/programs.tsv with the Debian package that has it.
 2. Every package tests/programs.tsv names is in quickstart's lists
    (`./quickstart packages demo|test` prints them); where the program is
    on this machine and dpkg owns it, dpkg names the same package (or one
    the table allows beside it).
 3. Every pkg-config module configure.ac's PKG_CHECK_MODULES asks for,
    and every library of its AC_CHECK_LIB, comes from a package (dpkg -S
    on the .pc file or the library) in quickstart's demo list and in the
    README's dom0 `apt-get install` line.

What it cannot see: a program named only in a variable's value, or built
up at run time.  Scripts that run elsewhere are left out on purpose:
tests/xen/dom0-tests.sh runs inside the dom0 image, whose packages
tests/xen/xen-e2e.sh installs itself (DOM0_PKGS).

Usage: deps_check.py SRCDIR   (prints one line per problem, then a
summary "deps: ..."; exit 0 when none, 1 otherwise).  With
DEPS_MACHINE=no the machine's dpkg is not asked (only the tree's own
facts: 1 for names in the table, 2's lists), as in a tarball's build on a
machine without dpkg.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

SRC = sys.argv[1] if len(sys.argv) > 1 else "."
USE_MACHINE = os.environ.get("DEPS_MACHINE", "yes") != "no" and shutil.which("dpkg-query") is not None
problems = []


def problem(msg):
    problems.append(msg)


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


# --- the table --------------------------------------------------------------
TABLE = {}  # program -> (package, [other packages dpkg may name], used by)
for n, line in enumerate(read(os.path.join(SRC, "tests/programs.tsv")).splitlines(), 1):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    f = line.split(None, 2)
    if len(f) < 3:
        problem(f"tests/programs.tsv:{n}: want 'program package[|other...] used-by': {line!r}")
        continue
    pkgs = f[1].split("|")
    TABLE[f[0]] = (pkgs[0], pkgs[1:], f[2])

# --- quickstart's lists ------------------------------------------------------
def quickstart_packages(kind):
    out = subprocess.run([os.path.join(SRC, "quickstart"), "packages", kind],
                         capture_output=True, text=True)
    if out.returncode != 0:
        problem(f"./quickstart packages {kind} exited {out.returncode}: {out.stderr.strip()}")
        return set()
    return set(out.stdout.split())


QS_DEMO = quickstart_packages("demo")
QS_TEST = quickstart_packages("test")
if QS_DEMO - QS_TEST:
    problem(f"quickstart's test list lacks the demo's: {sorted(QS_DEMO - QS_TEST)}")

# --- the machine: which package has a file, and which are minbase's ---------
PRIORITY = {}
if USE_MACHINE:
    q = subprocess.run(["dpkg-query", "-W", "-f", "${Package}\t${Priority}\t${Essential}\n"],
                       capture_output=True, text=True)
    for row in q.stdout.splitlines():
        p = row.split("\t")
        if len(p) == 3:
            PRIORITY[p[0]] = (p[1], p[2])


def minbase(pkg):
    pri, ess = PRIORITY.get(pkg, ("", ""))
    return pri == "required" or ess == "yes" or pkg == "apt"


def owner(path):
    """The package dpkg says has PATH (either side of /usr-merge), or None."""
    if not USE_MACHINE:
        return None
    cands = [path, os.path.realpath(path)]
    for c in list(cands):
        for a, b in (("/usr/bin/", "/bin/"), ("/usr/sbin/", "/sbin/"), ("/usr/lib/", "/lib/")):
            if c.startswith(a):
                cands.append(b + c[len(a):])
            elif c.startswith(b):
                cands.append(a + c[len(b):])
    for c in cands:
        out = subprocess.run(["dpkg", "-S", c], capture_output=True, text=True)
        for row in out.stdout.splitlines():
            if row.startswith("diversion by"):
                continue
            pkg, _, _ = row.partition(": ")
            return pkg.split(":")[0].split(",")[0].strip()
    return None


# A bare Debian's PATH, not this shell's: a program found only in a
# user's own directories (pyenv's shims, ~/.local/bin) is what a new
# user's machine lacks.
SEARCH = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]


def where(prog):
    for d in SEARCH:
        p = os.path.join(d, prog)
        if d and os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


# --- what the tree calls -------------------------------------------------------
SHELL_WORDS = set("""
    if then else elif fi for in do done while until case esac function select time
    return exit break continue local export readonly declare typeset unset shift set
    trap eval exec source . : true false echo printf read cd pwd test [ [[ ]] wait kill
    jobs fg bg let type command builtin hash umask ulimit getopts mapfile readarray alias
    unalias shopt disown pushd popd dirs enable help logout times caller compgen complete
    coproc suspend
""".split())
# Wrappers whose first non-option word is the command they run.
WRAPPERS = {"env", "nice", "nohup", "setsid", "timeout", "exec", "time", "xargs", "sudo",
            "runuser", "setpriv", "unshare", "chroot", "flock", "stdbuf", "ionice", "taskset",
            "xvfb-run", "valgrind", "strace", "perf", "command", "builtin", "!"}
PROJECT = {"profdb", "profile-backend", "xensim", "frontend-stub", "halvm-mkdisk", "quickstart",
           "check-fresh.sh", "configure", "config.status", "autogen.sh"}
# Names the command-position scan finds that are not programs anyone runs:
# each with the reason (a word of prose inside a string, a file, a name
# made at run time).
NOT_PROGRAMS = {}

def shell_lex(text):
    """TEXT with what cannot run blanked: comments, here-document bodies,
    single-quoted strings (but a `sh -c '...'` or `bash -c '...'` script),
    and double-quoted strings but their $(...) and `...`.  Newlines are
    kept (line numbers); a backslash-newline becomes \x01 (a newline for
    counting, a space for splitting)."""
    out = []
    i, n = 0, len(text)
    heredoc = []   # terminators of here-documents opened on this line

    def skip_heredocs(j):
        # at a newline ending a line that opened here-documents: blank
        # their bodies; returns the index after the last terminator line
        for end in heredoc:
            while j < n:
                k = text.find("\n", j)
                k = n if k < 0 else k
                line = text[j:k]
                out.append("\n")
                j = k + 1
                if line.strip() == end:
                    break
        heredoc.clear()
        return j

    def dquoted(j):
        # j after the opening '"'; returns the index after the closing one
        while j < n and text[j] != '"':
            if text[j] == "\\" and j + 1 < n:
                out.append("__" if text[j + 1] != "\n" else "\x01")
                j += 2
            elif text.startswith("$((", j):
                k = text.find("))", j)
                k = n if k < 0 else k + 1
                out.append("_" * (k + 1 - j))
                j = k + 1
            elif text.startswith("${", j):
                k = text.find("}", j)
                k = n if k < 0 else k
                out.append("_" * (k + 1 - j))
                j = k + 1
            elif text.startswith("$(", j):
                out.append(" ; ")
                j = code(j + 2, ")")
                out.append(" ; ")
            elif text[j] == "`":
                out.append(" ; ")
                j = code(j + 1, "`")
                out.append(" ; ")
            else:
                out.append("\n" if text[j] == "\n" else "_")
                j += 1
        return j + 1

    def code(j, close):
        # shell code from j until CLOSE at depth 0 (None: the end)
        depth = 0
        while j < n:
            c = text[j]
            if close and c == close and depth == 0:
                return j + 1
            if c == "(" and close == ")":
                depth += 1
            elif c == ")" and close == ")":
                depth -= 1
            if c == "\\" and j + 1 < n:
                out.append("\x01" if text[j + 1] == "\n" else "__")
                j += 2
                continue
            if c == "#" and (j == 0 or text[j - 1] in " \t;\n(|&"):
                while j < n and text[j] != "\n":
                    j += 1
                continue
            if c == "'":
                k = text.find("'", j + 1)
                k = n if k < 0 else k
                before = "".join(out[-12:])
                if re.search(r"\b(?:sh|bash) -c\s*$", before):
                    out.append(" ; ")
                    sub = text[j + 1:k]
                    out.append(shell_lex(sub))
                    out.append(" ; ")
                else:
                    out.append("".join("\n" if ch == "\n" else "_" for ch in text[j + 1:k]))
                j = k + 1
                continue
            if c == '"':
                j = dquoted(j + 1)
                continue
            if text.startswith("$((", j):  # arithmetic: no command
                k = text.find("))", j)
                k = n if k < 0 else k + 1
                out.append("_" * (k + 1 - j))
                j = k + 1
                continue
            if text.startswith("${", j):  # a parameter's expansion: no command
                k = text.find("}", j)
                k = n if k < 0 else k
                out.append("_" * (k + 1 - j))
                j = k + 1
                continue
            m = re.match(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1", text[j:j + 40])
            if m:
                heredoc.append(m.group(2))
                out.append(" " * len(m.group(0)))
                j += len(m.group(0))
                continue
            if c == "\n":
                out.append("\n")
                j += 1
                if heredoc:
                    j = skip_heredocs(j)
                continue
            out.append(c)
            j += 1
        return j

    code(0, None)
    return "".join(out)


SPLIT = re.compile(r"\$\(|`|;|&&|\|\||\||&|\(|\)|\{|\}|\n|\bthen\b|\bdo\b|\belse\b|\belif\b|\bif\b|\bwhile\b|\buntil\b|!(?=\s)")


def shell_commands(text, what):
    """(word, where) for every word in command position in shell TEXT."""
    found = []
    lexed = shell_lex(text)
    pos = 0
    for piece in SPLIT.split(lexed):
        start = lexed.find(piece, pos) if piece else pos
        pos = max(pos, start)
        line = lexed.count("\n", 0, start) + lexed.count("\x01", 0, start) + 1
        words = piece.replace("\x01", " ").split()
        k = 0
        while k < len(words):
            w = words[k]
            if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w):  # VAR=value prefix
                k += 1
                continue
            if w in WRAPPERS:
                if w not in ("exec", "time", "command", "builtin", "!"):
                    found.append((w, f"{what}:{line}"))
                k += 1
                # the wrapper's options and their values
                while k < len(words) and (words[k].startswith("-") or re.match(r"^[0-9.]+[smhd]?$", words[k])
                                          or (w in ("runuser", "sudo") and words[k - 1] in ("-u", "-g"))):
                    if words[k] == "--":
                        k += 1
                        break
                    k += 1
                continue
            if re.match(r"^[a-z][a-z0-9_.+-]*$", w):
                found.append((w, f"{what}:{line}"))
            break
    return found


def shell_needs(text, what):
    """(word, where) for every program a script declares it needs: the
    arguments of `need` (tests/lib.sh) and `command -v`."""
    out = []
    lexed = shell_lex(text)
    for m in re.finditer(r"(?:^|[;&|({!]|\bif|\bthen|\belse|\bdo)\s*(?:command -v|need)\s+([^;&|)\n]*)", lexed, re.M):
        line = lexed.count("\n", 0, m.start(1)) + lexed.count("\x01", 0, m.start(1)) + 1
        for w in m.group(1).split():
            if re.match(r"^[a-z][a-z0-9_.+-]*$", w):
                out.append((w, f"{what}:{line}"))
    return out


def shell_functions(text):
    return set(re.findall(r"^\s*(?:function\s+)?([A-Za-z_][A-Za-z0-9_-]*)\s*\(\)", text, re.M))


def python_commands(text, what):
    out = []
    for m in re.finditer(r"\[\s*['\"]([a-z][a-z0-9_.+-]*)['\"]\s*,", text):
        out.append((m.group(1), f"{what}:{text.count(chr(10), 0, m.start()) + 1}"))
    for m in re.finditer(r"shutil\.which\(\s*['\"]([a-z][a-z0-9_.+-]*)['\"]", text):
        out.append((m.group(1), f"{what}:{text.count(chr(10), 0, m.start()) + 1}"))
    return out + python_needs(text, what)


def python_needs(text, what):
    """(word, where) for every peer a benchmark declares it needs
    (bench/benchlib.py: need(PROGRAM, PACKAGE)), held as a shell `need`."""
    return [(m.group(1), f"{what}:{text.count(chr(10), 0, m.start()) + 1}")
            for m in re.finditer(r"\bneed\(\s*['\"]([a-z][a-z0-9_.+-]*)['\"]", text)]


def js_commands(text, what):
    out = []
    for m in re.finditer(r"\b(?:spawn|spawnSync|execFile|execFileSync|execSync|exec)\(\s*['\"`]([a-z][a-z0-9_.+/-]*)", text):
        out.append((os.path.basename(m.group(1)), f"{what}:{text.count(chr(10), 0, m.start()) + 1}"))
    return out


def c_commands(text, what):
    out = []
    for m in re.finditer(r"\b(?:execlp|execvp|system|popen)\(\s*\"([a-z][a-z0-9_.+-]*)", text):
        out.append((m.group(1), f"{what}:{text.count(chr(10), 0, m.start()) + 1}"))
    return out


def make_recipes(text, what):
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        if line.startswith("\t"):
            body = re.sub(r"\$\([A-Za-z_]+\)|\$\$\{?[A-Za-z_]+\}?|@", " ", line[1:])
            out += [(w, f"{what}:{n}") for w, _ in shell_commands(body.replace("$$(", "$("), what)]
    return out


SCANNED = []
sh_files = sorted(set(glob.glob(os.path.join(SRC, "tests/**/*.sh"), recursive=True)
                      + glob.glob(os.path.join(SRC, "bench/*.sh"))
                      + [os.path.join(SRC, p) for p in ("quickstart", "demo/demo.sh", ".ci/run")]))
# Not scanned: dom0-tests.sh (it runs in the dom0 image, whose packages
# xen-e2e.sh installs) and test_deps.sh, whose programs are planted data.
sh_files = [f for f in sh_files if os.path.exists(f) and "node_modules" not in f
            and not f.endswith(("tests/xen/dom0-tests.sh", "tests/test_deps.sh"))]
funcs = set()
texts = {}
for f in sh_files:
    texts[f] = read(f)
    funcs |= shell_functions(texts[f])
calls = []
for f in sh_files:
    rel = os.path.relpath(f, SRC)
    calls += shell_commands(texts[f], rel) + shell_needs(texts[f], rel)
py_files = sorted(glob.glob(os.path.join(SRC, "tests/**/*.py"), recursive=True) + glob.glob(os.path.join(SRC, "bench/*.py")))
for f in py_files:
    calls += python_commands(read(f), os.path.relpath(f, SRC))
for f in sorted(glob.glob(os.path.join(SRC, "tests/peers/*.cjs")) + glob.glob(os.path.join(SRC, "bench/*.cjs"))):
    calls += js_commands(read(f), os.path.relpath(f, SRC))
for f in sorted(glob.glob(os.path.join(SRC, "tests/**/*.c"), recursive=True) + glob.glob(os.path.join(SRC, "bench/*.c"))):
    calls += c_commands(read(f), os.path.relpath(f, SRC))
calls += make_recipes(read(os.path.join(SRC, "Makefile.am")), "Makefile.am")
scripts = {os.path.basename(f) for f in glob.glob(os.path.join(SRC, "tests/**/*"), recursive=True) if os.path.isfile(f)}
scripts |= {os.path.basename(f) for f in glob.glob(os.path.join(SRC, "bench/*"))}
for m in re.finditer(r"AC_PATH_PROG\(\[\w+\],\s*\[([\w.+-]+)\]", read(os.path.join(SRC, "configure.ac"))):
    calls.append((m.group(1), "configure.ac"))

seen = {}
for word, loc in calls:
    if word in SHELL_WORDS or word in funcs or word in PROJECT or word in scripts or word in NOT_PROGRAMS:
        continue
    if word.startswith(("test_", "fuzz_")) or word.endswith((".sh", ".py", ".cjs")):
        continue
    seen.setdefault(word, loc)

checked = 0
for word, loc in sorted(seen.items()):
    path = where(word)
    if word in TABLE:
        pkg, others, _ = TABLE[word]
        checked += 1
        if pkg not in QS_TEST:
            problem(f"{word} ({loc}): tests/programs.tsv names package {pkg}, which quickstart does not install")
        if path:
            o = owner(path)
            if o and o != pkg and o not in others:
                problem(f"{word} ({loc}): tests/programs.tsv says {pkg}, dpkg says {path} is {o}'s")
        continue
    if path is None:
        # not on this machine and not in the table: a word of prose, or a
        # program nothing installs (a test's declared need is held below)
        continue
    o = owner(path)
    if o is None:
        if USE_MACHINE:
            problem(f"{word} ({loc}): {path} is no Debian package's: a bare Debian 12 lacks it")
        continue
    if minbase(o):
        continue
    problem(f"{word} ({loc}): {path} is package {o}'s, not in minbase: add it to tests/programs.tsv "
            f"(and {o} to quickstart's lists)")

# a program a test declares it needs (need X, command -v X; a benchmark's
# need(X, PACKAGE), bench/benchlib.py) must be known
# whether or not this machine has it
declared = [n for f in sh_files for n in shell_needs(texts[f], os.path.relpath(f, SRC))]
declared += [n for f in py_files for n in python_needs(read(f), os.path.relpath(f, SRC))]
for word, loc in declared:
    if word in TABLE or word in PROJECT or word in funcs or word in SHELL_WORDS:
        continue
    path = where(word)
    o = owner(path) if path else None
    if o and minbase(o):
        continue
    problem(f"{word} ({loc}): a test needs it and tests/programs.tsv does not say which package has it")

# every table entry is used somewhere (a stale row hides nothing, but lies)
for word in TABLE:
    if word not in seen:
        problem(f"tests/programs.tsv: {word} is called nowhere the check looks: remove its row")

# --- configure.ac's libraries ---------------------------------------------------
conf = read(os.path.join(SRC, "configure.ac"))
readme = read(os.path.join(SRC, "README.md"))
m = re.search(r"apt-get install((?:[^\n]*\\\n)*[^\n]*)", readme)
readme_pkgs = set(m.group(1).replace("\\", " ").split()) if m else set()
if not m:
    problem("README.md: no dom0 'apt-get install' line found")
libs = []
for m in re.finditer(r"PKG_CHECK_MODULES\(\[(\w+)\],\s*\[([^\]]*)\]", conf):
    mods = [w for w in m.group(2).split() if re.match(r"^[A-Za-z][\w.+-]*$", w)]
    libs += [("pkg-config module " + mod, mod, None) for mod in mods]
for m in re.finditer(r"AC_CHECK_LIB\(\[(\w+)\]", conf):
    libs.append(("library -l" + m.group(1), None, m.group(1)))
for what, mod, lib in libs:
    path = None
    if USE_MACHINE and mod and shutil.which("pkg-config"):
        d = subprocess.run(["pkg-config", "--variable=pcfiledir", mod], capture_output=True, text=True).stdout.strip()
        if d and os.path.exists(os.path.join(d, mod + ".pc")):
            path = os.path.join(d, mod + ".pc")
    if USE_MACHINE and lib:
        cands = glob.glob(f"/usr/lib/*/lib{lib}.so") + glob.glob(f"/usr/lib/lib{lib}.so")
        path = cands[0] if cands else None
    if not USE_MACHINE:
        continue
    if path is None:
        problem(f"configure.ac's {what}: not found on this machine (is quickstart's demo list installed?)")
        continue
    o = owner(path)
    if o is None:
        problem(f"configure.ac's {what}: {path} is no Debian package's")
        continue
    checked += 1
    if o not in QS_DEMO:
        problem(f"configure.ac's {what}: {path} is {o}'s, not in quickstart's demo list")
    if o not in readme_pkgs:
        problem(f"configure.ac's {what}: {path} is {o}'s, not in README's dom0 apt-get install line")
for m in re.finditer(r"AC_PATH_PROG\(\[\w+\],\s*\[([\w.+-]+)\]", conf):
    prog = m.group(1)
    if prog not in TABLE:
        problem(f"configure.ac's program {prog}: not in tests/programs.tsv")
    elif TABLE[prog][0] not in QS_DEMO or TABLE[prog][0] not in readme_pkgs:
        problem(f"configure.ac's program {prog}: {TABLE[prog][0]} must be in quickstart's demo list and README's apt-get line")

for p in problems:
    print(p)
print(f"deps: {len(seen)} programs called, {checked} checked against the table or dpkg, "
      f"{len(problems)} problems{'' if USE_MACHINE else ' (this machine not asked)'}")
sys.exit(1 if problems else 0)
