#!/usr/bin/env python3
# tests/trace_check.py - checks a MirageOS trace export (tests/test_trace.sh)
# against what the guest wrote and what babeltrace2 read.
#   trace_check.py ref EXPORT.json GUEST.jsonl exact|lost|crash
#     exact: every event the guest wrote, in order, in the packet it went to
#     lost:  the events of every packet kept, exactly; the packets missing
#            are the export's lost packets, counted and ranged right
#     crash: every event written before the crash; at most one more (the
#            torn event the guest died inside)
#   trace_check.py bt EXPORT.json BABELTRACE.txt
#     babeltrace2's events (--clock-cycles --no-delta) are the export's
#     events, field by field
# Prints one line saying what was compared; exits 1 on the first mismatch.
import json, re, sys

def fail(msg):
    print("trace_check: " + msg)
    sys.exit(1)

def load_export(path):
    return json.load(open(path))

def ranges(seqs):
    out, i = [], 0
    seqs = sorted(seqs)
    while i < len(seqs):
        j = i
        while j + 1 < len(seqs) and seqs[j + 1] == seqs[j] + 1:
            j += 1
        out.append(str(seqs[i]) if i == j else "%d-%d" % (seqs[i], seqs[j]))
        i = j + 1
    return ", ".join(out)

def check_ref(export, ref_path, mode):
    ev = export["events"]
    ref = [json.loads(l) for l in open(ref_path) if l.strip()]
    if mode == "exact":
        if ev != ref:
            diff = next((i for i, (a, b) in enumerate(zip(ev, ref)) if a != b), min(len(ev), len(ref)))
            fail("exact: %d events exported, %d written; first difference at %d: %s vs %s" % (
                len(ev), len(ref), diff, ev[diff] if diff < len(ev) else None, ref[diff] if diff < len(ref) else None))
        if export["packets"]["lost"] != 0:
            fail("exact: %d packets reported lost" % export["packets"]["lost"])
        print("trace_check: %d events, all exact, no packet lost" % len(ev))
    elif mode == "lost":
        kept = {e["seq"] for e in ev}
        want = [e for e in ref if e["seq"] in kept]
        if ev != want:
            fail("lost: the events of the packets kept differ from the guest's (%d vs %d)" % (len(ev), len(want)))
        last = max(kept) if kept else -1
        missing = [s for s in range(0, last + 1) if s not in kept]
        # a packet kept with no events has no event in the export: count
        # it as kept by the export's own total
        p = export["packets"]
        if p["lost"] + p["kept"] != last + 1 and p["lost"] != len(missing):
            fail("lost: %d reported lost, %d kept, last seq %d" % (p["lost"], p["kept"], last))
        if p["lost"] == 0 and missing:
            fail("lost: %d packets missing but none reported lost" % len(missing))
        if len(missing) and p["lost"] == len(missing) and p["lost_ranges"] != ranges(missing):
            fail("lost: ranges '%s', want '%s'" % (p["lost_ranges"], ranges(missing)))
        print("trace_check: %d of %d events kept, %d packets lost (%s)" % (len(ev), len(ref), p["lost"], p["lost_ranges"]))
    elif mode == "crash":
        if ev[:len(ref)] != ref:
            fail("crash: the events before the crash differ (%d exported, %d written)" % (len(ev), len(ref)))
        if len(ev) - len(ref) > 1:
            fail("crash: %d events after the crash" % (len(ev) - len(ref)))
        if not export["packets"]["ended"]:
            fail("crash: the trace did not end with its last packet")
        print("trace_check: %d events before the crash, all kept, %d torn after" % (len(ref), len(ev) - len(ref)))

FIELD = re.compile(r'(\w+) = (0x[0-9A-Fa-f]+|-?\d+|"(?:[^"\\]|\\.)*"|\( "(\w+)" : container = \d+ \)|\( <unknown> : container = (\d+) \))')

def value(raw, enum_label, enum_unknown):
    if enum_label:
        return enum_label
    if enum_unknown:
        return int(enum_unknown)
    if raw.startswith('"'):
        return re.sub(r'\\(.)', r'\1', raw[1:-1])  # babeltrace2 escapes " and \
    return int(raw, 16) if raw.startswith("0x") else int(raw)

def check_bt(export, bt_path):
    ev = export["events"]
    got = []
    for line in open(bt_path, encoding="utf-8", errors="replace"):
        m = re.match(r'^\[(\d+)\] (\w+): (.*)$', line.rstrip("\n"))
        if not m:
            fail("babeltrace2 printed an unexpected line: %r" % line[:200])
        fields = {k: value(v, a, b) for k, v, a, b in FIELD.findall(m.group(3))}
        seq = fields.pop("stream_packet_count")
        got.append(dict(seq=seq, ts=int(m.group(1)), event=m.group(2), **fields))
    if len(got) != len(ev):
        fail("babeltrace2 read %d events, the export holds %d" % (len(got), len(ev)))
    for a, b in zip(got, ev):
        b = dict(b)
        b["seq"] &= 0xffff
        if a != b:
            fail("babeltrace2 and the export differ: %s vs %s" % (a, b))
    print("trace_check: babeltrace2 read all %d events, every field as exported" % len(got))

if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "ref":
        check_ref(load_export(sys.argv[2]), sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 4 and sys.argv[1] == "bt":
        check_bt(load_export(sys.argv[2]), sys.argv[3])
    else:
        fail("usage: trace_check.py ref EXPORT GUEST.jsonl exact|lost|crash | bt EXPORT BT.txt")
