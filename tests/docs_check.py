#!/usr/bin/env python3
"""docs_check.py - what the documentation says against what the programs do
(run by test_docs_options.sh and test_docs_examples.sh).

    docs_check.py options SRCDIR BUILDDIR
    docs_check.py examples SRCDIR

options prints one line per comparison, "ok: WHAT" or "problem: WHAT", and
exits 1 if there is a problem.  It compares, both ways:

1. Subcommands and options: for profdb, profile-backend and xensim, the
   subcommands and each one's options as the program's own help gives them
   (`P --help`, and `P SUB --help` for profdb and profile-backend), against
   the parsers in the sources (the getopt tables: the code's behaviour is the
   truth), the man page (man/P.*.scd: SYNOPSIS, COMMANDS, OPTIONS) and the
   README's synopsis block (the code block that opens the "## profdb" and
   "## profile-backend" sections).  Options are found in the help text, not
   listed here, so an option a command gains is checked as soon as its help
   names it.  An option and its other spelling (-v, --verbose) are one.
   Every other code line of the README, docs/*.md and the man pages that
   runs one of the three programs (examples and synopsis lines alike) may
   use only subcommands and options the help names.
2. Facts the server decides: /api/runs's `limit` (its default and largest
   value, web/), and that /api/runs/N/eventlog is HTML, as the README, the
   man page and docs/json.md say them; and every command whose help has
   --json has its document in docs/json.md.
3. The suites: docs/testing.md's table names every suite of Makefile.am's
   TESTS and no other; its fast tier names FAST_TESTS exactly.
4. Links: every link of the README to a heading (#anchor), to docs/*.md and
   to a heading there resolves, and the README's contents list every "## "
   section; docs/*.md's links back to the README resolve.

examples prints every example command the README, docs/*.md and the man
pages show, one a line: FILE<TAB>LINE<TAB>SECTION<TAB>COMMAND.  An example
is a code line (indented four spaces or in a ``` fence in Markdown, in a
``` fence in a man page) whose first word, after VAR=value assignments, is
profdb, profile-backend, xensim or $XENSIM, and which has no "[": a line
with "[" is a synopsis, which the options check reads instead.  A line
ending in "\\" or followed by lines that begin with "[" or "(" continues;
"# ..." comments are left out.
"""
import os
import re
import subprocess
import sys

PROGRAMS = ("profdb", "profile-backend", "xensim")
BINARY = {"profdb": "profdb", "profile-backend": "profile-backend", "xensim": "xensim/xensim"}
MAN = {"profdb": "man/profdb.1.scd", "profile-backend": "man/profile-backend.8.scd", "xensim": "man/xensim.1.scd"}
# Options every command of the program takes, never compared per command.
GLOBAL = {"profdb": {"--db", "-h", "--version"}, "profile-backend": {"-h", "--version"},
          "xensim": {"-h", "--version"}}
# An option: --word or -x, not inside a word (raw-direct=DIR, xl -vvv).
OPT = re.compile(r"(?<![\w.-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])")

results = []


def check(ok, what):
    results.append((bool(ok), what))


def opts_in(text, prog):
    """The options named in text, in their canonical spelling."""
    return {ALIAS.get(prog, {}).get(o, o) for o in OPT.findall(text)}


def show(opts):
    return " ".join(sorted(opts)) or "none"


def compare(a_name, a, b_name, b, what):
    """a and b must be equal: one problem per side that has more."""
    check(not (a - b), f"{what}: {show(a - b)} in {a_name} but not in {b_name}" if a - b else
          f"{what}: {a_name} and {b_name} agree")
    if b - a:
        check(False, f"{what}: {show(b - a)} in {b_name} but not in {a_name}")


# --- the sources: getopt tables --------------------------------------------------------------------

def c_string(src, name):
    """The text of the C string constant `name` (adjacent literals joined)."""
    m = re.search(r"\b" + re.escape(name) + r"\s*\[\]\s*=\s*((?:\s*\"(?:[^\"\\]|\\.)*\")+)", src)
    if not m:
        return None
    return "".join(re.findall(r"\"((?:[^\"\\]|\\.)*)\"", m.group(1))).replace("\\n", "\n")


def option_table(text):
    """{--long: val} of a `struct option NAME[] = {...};` body, and the
    long names written after a comment saying "Not in the usage"."""
    longs, hidden, hide = {}, set(), False
    for line in text.splitlines():
        if "Not in the usage" in line:
            hide = True
        for name, val in re.findall(r"\{\s*\"([a-z0-9-]+)\"\s*,\s*\w+\s*,\s*NULL\s*,\s*'(.)'\s*\}", line):
            longs["--" + name] = val
            if hide:
                hidden.add("--" + name)
    return longs, hidden


def shorts_of(spec):
    return {"-" + c for c in spec if c.isalpha()}


def aliases(longs, shorts):
    return {lo: "-" + v for lo, v in longs.items() if "-" + v in shorts}


def profdb_source(src):
    """{sub: options} from cli/: each option table with the cli_optspec after
    it, whose usage string names the command; and the command table."""
    per, alias = {}, {}
    for fn in sorted(os.listdir(os.path.join(src, "cli"))):
        if not (fn.startswith("cmd_") and fn.endswith(".c")):
            continue
        text = open(os.path.join(src, "cli", fn), encoding="utf-8").read()
        for m in re.finditer(r"struct option \w+\[\]\s*=\s*\{(.*?)\};(.*?)struct cli_optspec \w+\s*=\s*\{\s*(\w+)\s*,"
                             r"\s*\"([^\"]*)\"", text, re.S):
            longs, _ = option_table(m.group(1))
            usage = c_string(text, m.group(3)) or ""
            um = re.match(r"usage: profdb ([a-z-]+)", usage)
            if not um:
                check(False, f"cli/{fn}: the option table before {m.group(3)} names no command "
                      "('usage: profdb COMMAND' is its usage's first words)")
                continue
            shorts = shorts_of(m.group(4))
            alias.update(aliases(longs, shorts))
            per.setdefault(um.group(1), set()).update(set(longs) | shorts)
    table = open(os.path.join(src, "cli", "profdb.c"), encoding="utf-8").read()
    subs = set(re.findall(r"\{\s*\"([a-z-]+)\"\s*,\s*cmd_\w+\s*[,}]", table))
    return subs, per, alias


def backend_source(src):
    text = open(os.path.join(src, "backend", "daemon", "main.c"), encoding="utf-8").read()
    m = re.search(r"subcommands\[\]\s*=\s*\{(.*?)\n\};", text, re.S)
    subs = set(re.findall(r"^\t\{\s*\"([a-z-]+)\"", m.group(1), re.M)) if m else set()
    m = re.search(r"static const struct option opts\[\]\s*=\s*\{(.*?)\};", text, re.S)
    longs, hidden = option_table(m.group(1)) if m else ({}, set())
    shorts = set()
    for spec in re.findall(r"\"\+?([a-zA-Z:]+)\"\s*:\s*\"\+?([a-zA-Z:]+)\"", text):
        for s in spec:
            shorts |= shorts_of(s)
    return subs, set(longs) | shorts, hidden, aliases(longs, shorts)


def xensim_source(src):
    text = open(os.path.join(src, "xensim", "xensim.c"), encoding="utf-8").read()
    m = re.search(r"struct option opts\[\]\s*=\s*\{(.*?)\};", text, re.S)
    longs, hidden = option_table(m.group(1)) if m else ({}, set())
    sm = re.search(r"getopt_long\(argc, argv, \"([^\"]*)\"", text)
    shorts = shorts_of(sm.group(1)) if sm else set()
    # options the main loop takes itself (--exec PROGRAM ARGS...)
    own = {"--" + o for o in re.findall(r"strcmp\(argv\[\w+\], \"--([a-z-]+)\"\)", text)}
    subs = set(re.findall(r"strcmp\(cl\.cmd, \"([a-z-]+)\"\)", text))
    return subs, set(longs) | shorts | own, hidden, aliases(longs, shorts)


# --- the help texts --------------------------------------------------------------------------------

def run_help(build, prog, *args):
    try:
        p = subprocess.run([os.path.join(build, BINARY[prog]), *args, "--help"], capture_output=True, text=True,
                           timeout=30)
    except OSError as e:
        check(False, f"{prog} {' '.join(args)} --help: {e}")
        return ""
    check(p.returncode == 0, f"{prog} {' '.join(args)} --help exits 0" if p.returncode == 0 else
          f"{prog} {' '.join(args)} --help exited {p.returncode}: {p.stderr.strip()[:200]}")
    return p.stdout


def usage_lines(text, prog):
    """The synopsis of a help text: from "usage:" on, the lines that begin
    with "[" or with the program's name (another form), each joined to the
    line it continues; a line of anything else ends it."""
    out, started, note = [], False, False
    for line in text.splitlines():
        s = line.strip()
        if started and (note or s.startswith("(")):
            note = not s.endswith(")")  # a note on the form above: "(-v: xl -vvv, ...)"
            continue
        if s.startswith("usage:"):
            started = True
            out.append(s[len("usage:"):].strip())
        elif started and s.startswith("["):
            out[-1] += " " + s
        elif started and s.startswith(prog + " "):
            out.append(s)
        elif started:
            break
    return out


def split_subs(line, prog, subs):
    """[(sub, text)] of a synopsis line: "P [global options] SUB ..." and
    "SUB1 | SUB2 ..." forms (xl's and ours: "stop | status [--json]")."""
    line = re.sub(r"^" + re.escape(prog) + r"\s+", "", line.strip())
    # the global options before the command
    line = re.sub(r"^(\[--db [^\]]*\]\s*|--db(=|\s+)\S+\s*)", "", line)
    alt = "|".join(sorted((re.escape(s) for s in subs), key=len, reverse=True))
    parts = re.split(r"\s*\|\s*(?=(?:" + alt + r")(?![\w-]))", line) if alt else [line]
    out = []
    for p in parts:
        w = p.split()[0] if p.split() else ""
        out.append((w, p[len(w):]))
    return out


def profdb_help(build):
    """subs of `profdb --help` with their options, and each `profdb SUB --help`'s."""
    text = run_help(build, "profdb")
    top, cur = {}, None
    m = re.search(r"^commands:\n(.*?)\n\n", text, re.S | re.M)
    for line in (m.group(1) if m else "").splitlines():
        em = re.match(r"  ([a-z][a-z-]*)\b", line)
        if em:
            cur = em.group(1)
            top.setdefault(cur, set())
        if cur:
            top[cur] |= opts_in(line, "profdb")
    check(top, "profdb --help lists its commands" if top else "profdb --help: no 'commands:' section")
    per = {}
    for sub in sorted(top):
        lines = usage_lines(run_help(build, "profdb", sub), "profdb")
        opts = set()
        for line in lines:
            for s, rest in split_subs(line, "profdb", [sub]):
                if s != sub:
                    check(False, f"profdb {sub} --help: its usage names '{s}'")
                opts |= opts_in(rest, "profdb")
        check(lines, f"profdb {sub} --help has a usage" if lines else f"profdb {sub} --help: no usage line")
        per[sub] = opts
    return top, per


def backend_help(build):
    text = run_help(build, "profile-backend")
    m = re.search(r"^Commands[^\n]*:\n(.*?)\n(?!  )", text, re.S | re.M)
    subs = set(re.findall(r"^  ([a-z][a-z-]*)\s", m.group(1), re.M)) if m else set()
    top = {}
    for line in usage_lines(text, "profile-backend"):
        for s, rest in split_subs(line, "profile-backend", subs):
            top.setdefault(s, set()).update(opts_in(rest, "profile-backend"))
    compare("profile-backend --help's Commands", subs, "its usage", set(top), "profile-backend's commands")
    common = set()
    cm = re.search(r"^Common options:(.*?\.)$", text, re.S | re.M)  # to the line that ends the sentence
    if cm:
        common = opts_in(cm.group(1), "profile-backend")
    check(common, "profile-backend --help names its common options" if common else
          "profile-backend --help: no 'Common options:'")
    per = {}
    for sub in sorted(subs):
        opts = set()
        lines = usage_lines(run_help(build, "profile-backend", sub), "profile-backend")
        for line in lines:
            for s, rest in split_subs(line, "profile-backend", [sub]):
                opts |= opts_in(rest, "profile-backend")
        check(lines, f"profile-backend {sub} --help has a usage" if lines else
              f"profile-backend {sub} --help: no usage line")
        per[sub] = opts
    return top, per, common


def xensim_help(build):
    text = run_help(build, "xensim")
    words = [line.split()[0] for line in usage_lines(text, "xensim")]
    subs = {line.split()[1] for line in usage_lines(text, "xensim") if len(line.split()) > 1}
    per = {}
    for line in usage_lines(text, "xensim"):
        for s, rest in split_subs(line, "xensim", subs):
            per.setdefault(s, set()).update(opts_in(rest, "xensim"))
    check(words and set(words) == {"xensim"}, "xensim --help has its usage")
    return per


# --- the man pages ----------------------------------------------------------------------------------

def man_sections(src, prog):
    text = open(os.path.join(src, MAN[prog]), encoding="utf-8").read()
    secs, cur = {}, None
    for line in text.splitlines():
        if line.startswith(";"):
            continue
        m = re.match(r"# (.+)", line)
        if m:
            cur = m.group(1).strip()
            secs[cur] = []
        elif cur:
            secs[cur].append(line)
    return secs


def unmark(s):
    """scdoc's markup out: *bold*, _underline_, \\ escapes, ++ line breaks."""
    return s.replace("\\", "").replace("*", "").replace("++", " ").replace("_", "")


def man_entries(lines):
    """The headings of a SYNOPSIS, COMMANDS or OPTIONS section: the lines
    that begin with a word in bold, each with the heading lines right after
    it (a form per line), outside ``` blocks; not prose."""
    out, fence, prev_blank = [], False, True
    for line in lines:
        if line.startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        if line.startswith("*"):
            if prev_blank or not out:
                out.append(unmark(line))
            else:
                out[-1] += " " + unmark(line)
        elif line.startswith("\t") and line.strip().startswith("\\[") and out:
            out[-1] += " " + unmark(line)  # xensim's continued synopsis
        prev_blank = not line.strip()
    return out


def man_synopsis(secs, prog, subs):
    """{sub: options} of the SYNOPSIS section's per-command forms."""
    per = {}
    for e in man_entries(secs.get("SYNOPSIS", [])):
        for s, rest in split_subs(e, prog, subs):
            if s in subs:
                per.setdefault(s, set()).update(opts_in(rest, prog))
    return per


def man_commands(secs, prog, subs):
    per = {}
    for e in man_entries(secs.get("COMMANDS", [])):
        for s, rest in split_subs(e, prog, subs):
            per.setdefault(s, set()).update(opts_in(rest, prog))
    return per


def man_options(secs, prog):
    return set().union(*[opts_in(e, prog) for e in man_entries(secs.get("OPTIONS", []))] or [set()])


# --- the README and docs: code lines -----------------------------------------------------------------

def code_lines(path):
    """[(line number, section, text)] of the code lines of a Markdown file or
    a man page, continuation lines joined and comments left out."""
    md = path.endswith(".md")
    out, fence, section, cont = [], False, "", False
    for n, raw in enumerate(open(path, encoding="utf-8").read().splitlines(), 1):
        if raw.startswith("```"):
            fence = not fence
            cont = False
            continue
        h = re.match(r"(#+) (.+)", raw)
        if h and not fence and (md or len(h.group(1)) == 1):
            section = h.group(2).strip()
            cont = False
            continue
        code = fence or (md and re.match(r"(    |\t)", raw))
        if not code:
            cont = False
            continue
        text = raw.strip()
        if text.startswith("#"):
            continue
        text = re.sub(r"\s+#\s.*$", "", text)  # a comment after the command
        if out and (cont or text.startswith("[") or text.startswith("(")) and out[-1][0] == n - 1 - out[-1][3]:
            ln, sec, prev, k = out[-1]
            out[-1] = (ln, sec, prev.rstrip("\\").rstrip() + " " + text, k + 1)
        else:
            out.append((n, section, text, 0))
        cont = text.endswith("\\")
    return [(n, s, t) for n, s, t, _ in out]


def program_of(text):
    """(program, the command from the program on) of a code line, or None."""
    words = text.split()
    i = 0
    while i < len(words) and re.match(r"[A-Z_][A-Z0-9_]*=\S*$", words[i]):
        i += 1
    if i >= len(words):
        return None
    w = "xensim" if words[i] in ("$XENSIM", "${XENSIM}") else words[i]
    if w in PROGRAMS:
        return w, " ".join([w] + words[i + 1:])
    return None


def doc_files(src):
    files = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(src, "docs")) if f.endswith(".md"))
    return files + [MAN[p] for p in PROGRAMS]


def all_commands(src):
    """[(file, line, section, program, command, is_example)]"""
    out = []
    for f in doc_files(src):
        for n, sec, text in code_lines(os.path.join(src, f)):
            pc = program_of(text)
            if pc:
                out.append((f, n, sec, pc[0], pc[1], "[" not in pc[1]))
    return out


def readme_block(src, heading):
    """The code lines of the first code block under a README heading."""
    text = open(os.path.join(src, "README.md"), encoding="utf-8").read().splitlines()
    start = next((i for i, line in enumerate(text) if line.strip() == heading), None)
    if start is None:
        check(False, f"README.md has no '{heading}' section")
        return []
    i = start + 1
    while i < len(text) and not text[i].strip():
        i += 1
    first = i
    while i < len(text) and (not text[i].strip() or re.match(r"(    |\t)", text[i])):
        i += 1
    # line numbers first+1..i (1-based) are the block
    return [t for n, _, t in code_lines(os.path.join(src, "README.md")) if first < n <= i]


# --- the checks --------------------------------------------------------------------------------------

def check_options(src, build):
    global ALIAS
    pd_subs_src, pd_src, pd_alias = profdb_source(src)
    be_subs_src, be_src, be_hidden, be_alias = backend_source(src)
    xs_subs_src, xs_src, xs_hidden, xs_alias = xensim_source(src)
    ALIAS = {"profdb": dict(pd_alias, **{"--help": "-h"}), "profile-backend": dict(be_alias, **{"--help": "-h"}),
             "xensim": dict(xs_alias, **{"--help": "-h"})}
    canon = lambda prog, s: {ALIAS[prog].get(o, o) for o in s}  # noqa: E731

    # profdb: the command table, the usage, each command's help and parser
    top, per = profdb_help(build)
    g = GLOBAL["profdb"]
    compare("profdb --help", set(top), "cli/profdb.c's command table", pd_subs_src, "profdb's commands")
    for sub in sorted(top):
        compare(f"profdb {sub} --help", per.get(sub, set()) - g, "profdb --help", top[sub] - g,
                f"profdb {sub}'s options")
        compare(f"profdb {sub} --help", per.get(sub, set()) - g, "its parser (cli/)",
                canon("profdb", pd_src.get(sub, set())) - g, f"profdb {sub}'s options")
    secs = man_sections(src, "profdb")
    mc = man_commands(secs, "profdb", set(top))
    compare("profdb --help", set(top), "profdb(1) COMMANDS", set(mc), "profdb's commands")
    for sub in sorted(set(top) & set(mc)):
        compare(f"profdb {sub} --help", per[sub] - g, "profdb(1) COMMANDS", mc[sub] - g, f"profdb {sub}'s options")
    mo = man_options(secs, "profdb")
    compare("profdb's global options", g, "profdb(1) OPTIONS", mo, "profdb's options")
    readme = {}
    for line in readme_block(src, "## profdb"):
        for s, rest in split_subs(line, "profdb", set(top)):
            readme.setdefault(s, set()).update(opts_in(rest, "profdb") - g)
    compare("profdb --help", set(top), "the README's profdb synopsis", set(readme), "profdb's commands")
    for sub in sorted(set(top) & set(readme)):
        compare(f"profdb {sub} --help", per[sub] - g, "the README's profdb synopsis", readme[sub],
                f"profdb {sub}'s options")

    # profile-backend: its table of subcommands, the usage, each command's help
    btop, bper, common = backend_help(build)
    g = GLOBAL["profile-backend"]
    subs = set(bper)
    compare("profile-backend --help", subs, "backend/daemon/main.c's table", be_subs_src, "profile-backend's commands")
    for sub in sorted(subs):
        compare(f"profile-backend {sub} --help", bper[sub], "profile-backend --help", btop.get(sub, set()),
                f"profile-backend {sub}'s options")
    shown = set().union(common, *bper.values())
    accepted = canon("profile-backend", be_src - be_hidden) - g
    compare("profile-backend's help (every command and the common options)", shown - g,
            "its parser (backend/daemon/main.c, but what it hides)", accepted, "profile-backend's options")
    secs = man_sections(src, "profile-backend")
    ms = man_synopsis(secs, "profile-backend", subs)
    mc = man_commands(secs, "profile-backend", subs)
    mo = man_options(secs, "profile-backend")
    compare("profile-backend --help", subs, "profile-backend(8) SYNOPSIS", set(ms), "profile-backend's commands")
    compare("profile-backend --help", subs, "profile-backend(8) COMMANDS", set(mc), "profile-backend's commands")
    for sub in sorted(subs & set(ms)):
        compare(f"profile-backend {sub} --help", bper[sub], "profile-backend(8) SYNOPSIS", ms[sub],
                f"profile-backend {sub}'s options")
    for sub in sorted(subs & set(mc)):
        extra = mc[sub] - bper[sub]
        check(not extra, f"profile-backend(8) COMMANDS {sub}: its options are in its help" if not extra else
              f"profile-backend(8) COMMANDS {sub}: {show(extra)} not in profile-backend {sub} --help")
    for sub in sorted(subs):
        missing = bper[sub] - g - mo - mc.get(sub, set())
        check(not missing, f"profile-backend(8) describes every option of {sub}" if not missing else
              f"profile-backend {sub}: {show(missing)} neither in profile-backend(8) OPTIONS nor in its COMMANDS entry")
    missing = common - mo
    check(not missing, "profile-backend(8) OPTIONS has the common options" if not missing else
          f"profile-backend's common options: {show(missing)} not in profile-backend(8) OPTIONS")
    extra = mo - shown - g
    check(not extra, "profile-backend(8) OPTIONS names only options of the help" if not extra else
          f"profile-backend(8) OPTIONS: {show(extra)} in no profile-backend --help")
    readme = {}
    for line in readme_block(src, "## profile-backend"):
        for s, rest in split_subs(line, "profile-backend", subs):
            readme.setdefault(s, set()).update(opts_in(rest, "profile-backend"))
    compare("profile-backend --help", subs, "the README's profile-backend synopsis", set(readme),
            "profile-backend's commands")
    for sub in sorted(subs & set(readme)):
        compare(f"profile-backend {sub} --help", bper[sub], "the README's profile-backend synopsis", readme[sub],
                f"profile-backend {sub}'s options")

    # xensim: its usage against its parser and xensim(1)
    xper = xensim_help(build)
    g = GLOBAL["xensim"]
    subs = set(xper)
    compare("xensim --help", subs, "xensim/xensim.c", xs_subs_src & (subs | xs_subs_src), "xensim's commands")
    shown = set().union(*xper.values())
    compare("xensim --help", shown - g, "its parser (xensim/xensim.c)",
            canon("xensim", xs_src - xs_hidden) - g, "xensim's options")
    secs = man_sections(src, "xensim")
    ms = man_synopsis(secs, "xensim", subs)
    compare("xensim --help", subs, "xensim(1) SYNOPSIS", set(ms), "xensim's commands")
    for sub in sorted(subs & set(ms)):
        compare(f"xensim --help ({sub})", xper[sub], "xensim(1) SYNOPSIS", ms[sub], f"xensim {sub}'s options")
    mo = man_options(secs, "xensim")
    compare("xensim --help", shown - g, "xensim(1) OPTIONS", mo - g, "xensim's options")
    mc = man_commands(secs, "xensim", subs)
    compare("xensim --help", subs, "xensim(1) COMMANDS", set(mc), "xensim's commands")

    check_completion(src, per, bper, common)

    # every command that prints JSON has its document in docs/json.md
    spans = re.findall(r"`([^`]*--json[^`]*)`", open(os.path.join(src, "docs", "json.md"), encoding="utf-8").read())
    for prog, subs in (("profdb", per), ("profile-backend", bper)):
        for sub in sorted(s for s, o in subs.items() if "--json" in o):
            lead = "" if prog == "profdb" else prog + " "
            said(any(re.match(r"(?:--db \S+ )?" + re.escape(lead + sub) + r"\b", sp) for sp in spans),
                 f"docs/json.md has {prog} {sub} --json's document",
                 f"{prog} {sub} --json: docs/json.md has no document for it (a `{lead}{sub} ... --json` row)")

    # every other command line of the docs: real commands and options only
    known = {"profdb": per, "profile-backend": bper, "xensim": xper}
    commons = {"profdb": GLOBAL["profdb"], "profile-backend": common | GLOBAL["profile-backend"],
               "xensim": GLOBAL["xensim"]}
    n = 0
    for f, ln, sec, prog, cmd, _ in all_commands(src):
        cmd = cmd.replace("%SIMDIR%/", "")
        for s, rest in split_subs(cmd, prog, set(known[prog])):
            n += 1
            if s not in known[prog]:
                check(False, f"{f}:{ln}: '{cmd}': {prog} has no command '{s}'")
                continue
            bad = opts_in(rest, prog) - known[prog][s] - commons[prog]
            check(not bad, f"{f}:{ln}: '{cmd}': {show(bad)} not in {prog} {s} --help" if bad else
                  f"{f}:{ln}: {prog} {s}'s options are real")
    check(n > 0, "the docs' command lines were found" if n else "no command line found in the docs")


def completion_cases(text, common=""):
    """{sub: options} of a completion's `case "$cmd" in SUB) opts="..." ;;`."""
    per = {}
    for subs, opts in re.findall(r'^\s*([a-z][a-z| -]*)\)\s*opts="([^"]*)"', text, re.M):
        for sub in subs.split("|"):
            per[sub.strip()] = opts.replace("$common", common)
    return per


def check_completion(src, per, bper, common):
    text = open(os.path.join(src, "completion", "profdb"), encoding="utf-8").read()
    m = re.search(r'local commands="([^"]*)"', text)
    subs = set(m.group(1).split()) if m else set()
    compare("profdb --help", set(per), "completion/profdb", subs, "profdb's commands")
    cases = completion_cases(text)
    g = GLOBAL["profdb"]
    for sub in sorted(set(per) & subs):
        compare(f"profdb {sub} --help", per[sub] - g, "completion/profdb", opts_in(cases.get(sub, ""), "profdb") - g,
                f"profdb {sub}'s options")
    text = open(os.path.join(src, "completion", "profile-backend"), encoding="utf-8").read()
    m = re.search(r'local common="([^"]*)"', text)
    ccommon = m.group(1) if m else ""
    m = re.search(r'compgen -W "([^"$]*)"', text)
    subs = {w for w in (m.group(1).split() if m else []) if not w.startswith("-")}
    compare("profile-backend --help", set(bper), "completion/profile-backend", subs, "profile-backend's commands")
    cases = completion_cases(text, ccommon)
    g = GLOBAL["profile-backend"]
    for sub in sorted(set(bper) & subs):
        compare(f"profile-backend {sub} --help (and the common options)", (bper[sub] | common) - g,
                "completion/profile-backend", opts_in(cases.get(sub, ccommon), "profile-backend") - g,
                f"profile-backend {sub}'s options")


def said(ok, good, bad):
    check(ok, good if ok else bad)


def check_facts(src):
    api = open(os.path.join(src, "web", "web_internal.h"), encoding="utf-8").read()
    args = open(os.path.join(src, "web", "args.c"), encoding="utf-8").read()
    m, d = re.search(r"#define WEB_MAX_LIMIT (\d+)", api), re.search(r"f->limit = (\d+);", args)
    if not m or not d:
        check(False, "web/: WEB_MAX_LIMIT or the default limit not found")
        return
    most, dflt = m.group(1), d.group(1)
    readme = open(os.path.join(src, "README.md"), encoding="utf-8").read()
    man = open(os.path.join(src, "man", "profdb.1.scd"), encoding="utf-8").read()
    json_md = open(os.path.join(src, "docs", "json.md"), encoding="utf-8").read()
    row = next((line for line in readme.splitlines() if line.startswith("| `/api/runs` |")), "")
    rm = re.search(r"`limit` 1\.\.(\d+), default (\d+)", row)
    said(rm and rm.groups() == (most, dflt), f"README: /api/runs's limit 1..{most}, default {dflt}, as web/ has it",
         f"README's /api/runs row: want `limit` 1..{most}, default {dflt} (web/), it says: {row[:200]}")
    mm = re.search(r"\*limit\* up to (\d+)", man)
    said(mm and mm.group(1) == most, f"profdb(1): /api/runs's limit up to {most}",
         f"profdb(1): want '*limit* up to {most}' (web/), it says {mm.group(0) if mm else 'nothing'}")
    jm = re.search(r"at most `limit` \((\d+); 1\.\.(\d+)\)", json_md)
    said(jm and jm.groups() == (dflt, most), f"docs/json.md: /api/runs's limit ({dflt}; 1..{most})",
         f"docs/json.md: want 'at most `limit` ({dflt}; 1..{most})' (web/), it says {jm.group(0) if jm else 'nothing'}")
    # /api/runs/N/eventlog: what web/ replies
    pages = open(os.path.join(src, "web", "pages.c"), encoding="utf-8").read()
    fm = re.search(r"void page_timeline\(.*?\n\}", pages, re.S)
    kind = "HTML" if fm and "text/html" in fm.group(0) else "JSON" if fm and "json" in fm.group(0) else None
    said(kind, f"web/pages.c: /api/runs/N/eventlog replies {kind}",
         "web/pages.c: page_timeline (/api/runs/N/eventlog) not found")
    row = next((line for line in readme.splitlines() if line.startswith("| `/api/runs/N/eventlog` |")), "")
    said(kind and kind in row, f"README: /api/runs/N/eventlog is {kind}",
         f"README's /api/runs/N/eventlog row does not say {kind}: {row[:200]}")
    item = re.search(r"[^\n]*_/api/runs/N/eventlog_.*?(?=\n\t- |\n\n)", man, re.S)
    text = " ".join(item.group(0).split()) if item else ""
    said(kind and kind in text and "JSON" not in text, f"profdb(1): /api/runs/N/eventlog is {kind}",
         f"profdb(1): /api/runs/N/eventlog is {kind} (web/pages.c), the page says: {text[:240]}")


def make_var(mk, name):
    m = re.search(r"^" + name + r"\s*=((?:[^\n]*\\\n)*[^\n]*)", mk, re.M)
    return m.group(1).replace("\\\n", " ") if m else ""


def suite_names(text):
    return {re.sub(r"\.sh$", "", w.split("/")[-1]) for w in re.findall(r"tests/test_[a-z0-9_]+(?:\.sh)?", text)}


def check_suites(src):
    mk = open(os.path.join(src, "Makefile.am"), encoding="utf-8").read()
    tests = make_var(mk, "TESTS").replace("$(TEST_PROGS)", make_var(mk, "TEST_PROGS"))
    fast = make_var(mk, "FAST_TESTS")
    doc = open(os.path.join(src, "docs", "testing.md"), encoding="utf-8").read()
    table = set()
    for line in doc.splitlines():
        if line.startswith("| `test_"):
            table |= {re.sub(r"\.sh$", "", n) for n in re.findall(r"`(test_[a-z0-9_]+(?:\.sh)?)`", line.split("|")[1])}
    compare("Makefile.am's TESTS", suite_names(tests), "docs/testing.md's table", table, "the suites")
    m = re.search(r"^## The fast tier.*?\n\n(.*?)\n\n", doc, re.S | re.M)
    named = {re.sub(r"\.sh$", "", n) for n in re.findall(r"`(test_[a-z0-9_]+(?:\.sh)?)`", m.group(1))} if m else set()
    compare("Makefile.am's FAST_TESTS", suite_names(fast), "docs/testing.md's fast tier", named, "the fast tier")


def slug(heading):
    """GitHub's anchor of a heading."""
    h = re.sub(r"`", "", heading.strip().lower())
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def anchors(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return {slug(m) for m in re.findall(r"^#+ (.+)$", text, re.M)}


def check_links(src):
    here = {"README.md": anchors(os.path.join(src, "README.md"))}
    for f in doc_files(src)[:-len(PROGRAMS)]:
        text = open(os.path.join(src, f), encoding="utf-8").read()
        n = 0
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            n += 1
            if not os.path.isfile(os.path.join(src, dest)):
                check(False, f"{f}: the link ({target}) names no file")
                continue
            if anchor and dest.endswith(".md"):
                if dest not in here:
                    here[dest] = anchors(os.path.join(src, dest))
                if anchor not in here[dest]:
                    check(False, f"{f}: the link ({target}): {dest} has no such heading")
                    continue
            check(True, f"{f}: ({target}) resolves")
    readme = open(os.path.join(src, "README.md"), encoding="utf-8").read()
    m = re.search(r"^## Contents\n(.*?)\n## ", readme, re.S | re.M)
    listed = set(re.findall(r"\]\(#([^)]+)\)", m.group(1))) if m else set()
    sections = {slug(h) for h in re.findall(r"^## (.+)$", re.sub(r"^```.*?^```", "", readme, flags=re.S | re.M),
                                            re.M)} - {"contents"}
    missing = sections - listed
    check(m and not missing, "the README's contents list every section" if m and not missing else
          f"the README's contents lack: {show(missing)}" if m else "the README has no '## Contents'")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "examples":
        for f, ln, sec, prog, cmd, example in all_commands(sys.argv[2]):
            if example:
                print(f"{f}\t{ln}\t{sec}\t{cmd}")
        return 0
    if len(sys.argv) != 4 or sys.argv[1] != "options":
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    src, build = sys.argv[2], sys.argv[3]
    check_options(src, build)
    check_facts(src)
    check_suites(src)
    check_links(src)
    bad = 0
    for ok, what in results:
        print(("ok: " if ok else "problem: ") + what)
        bad += not ok
    print(f"docs: {len(results)} comparisons, {bad} problems")
    return 1 if bad else 0


ALIAS = {}
if __name__ == "__main__":
    sys.exit(main())
