#!/usr/bin/env python3
# tests/trace_timeline_check.py - a MirageOS trace's thread timeline (the
# model of /api/runs/N/trace-timeline, profile/trace/trace_timeline.c) against
# babeltrace2's event list of the same trace (tests/test_trace_timeline.sh).
#   trace_timeline_check.py model TIMELINE.json BABELTRACE.txt
#     every thread babeltrace2 names (a thread field, a child, a source, a
#     resolvee, a sleeper) is a thread of the timeline and no other; every
#     creates and read event an arrow (its ends and time), and every other
#     arrow kind too; each thread's start (its creates, or its first event),
#     parent, last label and whether it was resolved; the run slices (switch
#     to switch) and the GC pauses; each counter's last value
#   trace_timeline_check.py thread THREAD.json BABELTRACE.txt ID
#     a thread's events are babeltrace2's events naming it, in order
# Prints one line saying what was compared; exits 1 on the first mismatch.
import json, re, sys

def fail(msg):
    print("trace_timeline_check: " + msg)
    sys.exit(1)

FIELD = re.compile(r'(\w+) = (0x[0-9A-Fa-f]+|-?\d+|"(?:[^"\\]|\\.)*"|\( "(\w+)" : container = \d+ \)|\( <unknown> : container = (\d+) \))')
U64 = 2 ** 64

def value(raw, enum_label, enum_unknown):
    if enum_label:
        return enum_label
    if enum_unknown:
        return int(enum_unknown)
    if raw.startswith('"'):
        return re.sub(r'\\(.)', r'\1', raw[1:-1])
    return int(raw, 16) if raw.startswith("0x") else int(raw)

def events(path):
    out = []
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        m = re.match(r'^\[(\d+)\] (\w+): (.*)$', line.rstrip("\n"))
        if not m:
            fail("babeltrace2 printed an unexpected line: %r" % line[:200])
        f = {k: value(v, a, b) for k, v, a, b in FIELD.findall(m.group(3))}
        f["ts"], f["event"] = int(m.group(1)), m.group(2)
        for k in ("thread", "child", "source", "resolvee", "sleeper"):
            if k in f and f[k] < 0:
                f[k] += U64
        out.append(f)
    return out

OTHER = {"creates": "child", "read": "source", "try_read": "source", "signal": "source",
         "fulfills": "resolvee", "fails": "resolvee", "becomes": "sleeper"}

def model(tl, bt):
    threads, arrows, labels, parent, start, ended, runs, gcs, counters = {}, [], {}, {}, {}, set(), [], [], {}
    run = None
    def seen(t, ts):
        if t not in start:
            start[t] = ts
    for e in bt:
        k, ts = e["event"], e["ts"]
        if k == "switch":
            if run is not None:
                runs.append([run[0], run[1], ts])
            run = (e["thread"], ts) if e["thread"] != U64 - 1 else None
            if run:
                seen(e["thread"], ts)
            continue
        if k == "gc":
            gcs.append([max(ts - e["duration_ns"], 0), ts, 1, e["duration_ns"]])
            continue
        if k in ("increase", "counter"):
            v = counters.get(e["counter"], 0)
            counters[e["counter"]] = e["value"] if k == "counter" else (v + e["amount"] + 2 ** 63) % U64 - 2 ** 63
            continue
        t = e["thread"]
        seen(t, ts)
        if k == "label":
            labels[t] = e["label"]
        if k in OTHER:
            o = e[OTHER[k]]
            seen(o, ts)
            if k == "creates" and o not in parent:
                parent[o] = t
                start[o] = min(start[o], ts)
            if k in ("fulfills", "fails"):
                ended.add(o)
            if k == "becomes":
                ended.add(t)
            inbound = k in ("read", "try_read", "signal")
            arrows.append([k, o if inbound else t, t if inbound else o, ts])
    if run is not None and bt:
        runs.append([run[0], run[1], bt[-1]["ts"]])
    got = {t["id"]: t for t in tl["threads"]}
    if len(got) != len(tl["threads"]):
        fail("a thread listed twice")
    if tl["threads_total"] != len(tl["threads"]) or tl["arrows_total"] != len(tl["arrows"]):
        fail("the model was thinned (%d of %d threads, %d of %d arrows): the test's trace is too big" % (
            len(tl["threads"]), tl["threads_total"], len(tl["arrows"]), tl["arrows_total"]))
    if set(got) != set(start):
        a, b = set(got) - set(start), set(start) - set(got)
        fail("threads: %d in the timeline, %d in babeltrace2's events; only the timeline's: %s; only babeltrace2's: %s" % (
            len(got), len(start), sorted(a)[:5], sorted(b)[:5]))
    for t, th in got.items():
        if th["start"] != start[t]:
            fail("thread %d starts at %d, babeltrace2's first event naming it at %d" % (t, th["start"], start[t]))
        if th["parent"] != parent.get(t):
            fail("thread %d's parent %s, babeltrace2's creates says %s" % (t, th["parent"], parent.get(t)))
        if th["label"] != labels.get(t):
            fail("thread %d's label %r, babeltrace2's last label event %r" % (t, th["label"], labels.get(t)))
        if th["ended"] != (t in ended):
            fail("thread %d ended=%s, babeltrace2's events say %s" % (t, th["ended"], t in ended))
    if tl["arrows"] != arrows:
        diff = next((i for i, (a, b) in enumerate(zip(tl["arrows"], arrows)) if a != b), min(len(arrows), len(tl["arrows"])))
        fail("arrows: %d in the timeline, %d from babeltrace2; first difference at %d: %s vs %s" % (
            len(tl["arrows"]), len(arrows), diff, tl["arrows"][diff:diff + 1], arrows[diff:diff + 1]))
    kinds = {k: sum(1 for a in arrows if a[0] == k) for k in OTHER}
    for k in ("creates", "read"):
        if kinds[k] == 0:
            fail("the trace has no %s event: nothing compared" % k)
    if tl["switches"] != runs or tl["switches_total"] != len(runs):
        fail("run slices: %d in the timeline, %d from babeltrace2's switches" % (len(tl["switches"]), len(runs)))
    if tl["gc"] != gcs:
        fail("GC pauses: %d marks in the timeline, %d pauses from babeltrace2" % (len(tl["gc"]), len(gcs)))
    last = {c["name"]: c["last"] for c in tl["counters"]}
    if last != counters:
        fail("counters' last values: %s vs babeltrace2's %s" % (last, counters))
    print("trace_timeline_check: %d threads, %d arrows (%d creates, %d read), %d run slices, %d GC pauses, "
          "%d counters, as babeltrace2 read them" % (len(got), len(arrows), kinds["creates"], kinds["read"],
                                                     len(runs), len(gcs), len(counters)))

def thread(doc, bt, tid):
    want = [e for e in bt if e["event"] != "gc" and (e.get("thread") == tid or e.get(OTHER.get(e["event"], "-")) == tid)]
    got = doc["events"]
    if doc["more"] != 0 or len(got) != len(want):
        fail("thread %d: %d events listed (%d more), babeltrace2 names it in %d" % (tid, len(got), doc["more"], len(want)))
    for a, b in zip(got, want):
        if a["ts"] != b["ts"] or a["event"] != b["event"]:
            fail("thread %d: %s vs babeltrace2's %s" % (tid, a, b))
    print("trace_timeline_check: thread %d's %d events, as babeltrace2 read them" % (tid, len(got)))

if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "model":
        model(json.load(open(sys.argv[2])), events(sys.argv[3]))
    elif len(sys.argv) == 5 and sys.argv[1] == "thread":
        thread(json.load(open(sys.argv[2])), events(sys.argv[3]), int(sys.argv[4]))
    else:
        fail("usage: trace_timeline_check.py model TL.json BT.txt | thread THREAD.json BT.txt ID")
