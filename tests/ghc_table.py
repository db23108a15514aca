#!/usr/bin/env python3
# tests/ghc_table.py - checks that `profdb top` is GHC's own table of top
# cost centres (the one at the head of a text .prof):
#
#   ghc_table.py PROF TOP.json TOP.txt
#
# TOP.json is `profdb top RUN -n N --json` and TOP.txt `profdb top RUN -n
# N+1`, N the table's rows.  Both must give the table's rows first, in its
# order, with %time and %alloc as GHC printed them (and -P's ticks and
# bytes), each row's figures from GHC's table ("self_from"); in the text,
# the next line ends GHC's part or the rows.  Exits 1 with what differs.
import json
import sys

prof, js, txt = sys.argv[1:4]
rows, cols, state = [], 0, 0
for line in open(prof, encoding="utf-8", errors="surrogateescape"):
    t = line.strip()
    if state == 0 and t.startswith("COST CENTRE") and "%time" in t and " no." not in t:
        state, cols = 1, (4 if " ticks" in t else 2)
    elif state == 1 and t:
        f = t.split()
        rows.append({"name": f[0], "module": f[1], "src": " ".join(f[2:-cols]), "time": f[-cols],
                     "alloc": f[-cols + 1], "ticks": f[-2] if cols == 4 else None,
                     "bytes": f[-1] if cols == 4 else None})
    elif state == 1 and rows:
        break


def spelled(ours):
    """A backslash in a name may be shown doubled (escaped for display)."""
    return ours.replace("\\\\", "\\")


bad = []
doc = json.load(open(js, encoding="utf-8"))
got = doc["cost_centres"]
if doc.get("ghc_table") != "used" or len(got) != len(rows) or not rows:
    bad.append("ghc_table %s, %d rows, GHC's table has %d" % (doc.get("ghc_table"), len(got), len(rows)))
for i, (g, w) in enumerate(zip(got, rows)):
    if (g["name"] != w["name"] and spelled(g["name"]) != w["name"]) or g["module"] != w["module"] or \
            g["src"] != w["src"] or "%.1f" % g["time"] != w["time"] or "%.1f" % g["alloc"] != w["alloc"] or \
            g.get("self_from") != "ghc_table" or \
            (w["ticks"] and (str(g["ticks"]), str(g["bytes"])) != (w["ticks"], w["bytes"])):
        bad.append("--json rank %d: %s %s %s %.2f %.2f, GHC's table: %s %s %s %s %s" % (
            i + 1, g["name"], g["module"], g["src"], g["time"], g["alloc"], w["name"], w["module"], w["src"],
            w["time"], w["alloc"]))
lines = open(txt, encoding="utf-8", errors="surrogateescape").read().split("\n")
for i, w in enumerate(rows):
    line = lines[5 + i] if 5 + i < len(lines) else ""
    f = line.split()
    name = spelled(f[0]) if f else ""
    # the name and module columns are cut at 30 and 20 columns
    if len(f) < 7 or not w["name"].startswith(name) or len(name) < min(len(w["name"]), 29) or \
            not w["module"].startswith(f[1]) or f[3:5] != [w["time"], w["alloc"]] or \
            (w["ticks"] and f[7:9] != [w["ticks"], w["bytes"]]):
        bad.append("rank %d: %r, GHC's table: %s %s %s %s" % (i + 1, line, w["name"], w["module"], w["time"],
                                                              w["alloc"]))
after = lines[5 + len(rows)] if 5 + len(rows) < len(lines) else ""
if after.strip() and not after.startswith("  -- not in GHC's table"):
    bad.append("after GHC's rows: %r" % after)
if bad:
    sys.exit(prof + ":\n  " + "\n  ".join(bad[:10]))
