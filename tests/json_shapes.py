#!/usr/bin/env python3
# tests/json_shapes.py - checks a profdb --json document against the
# shapes of docs/json.md: every documented field present with its type
# (or null where the document allows it), and no field undocumented.
#   json_shapes.py KIND FILE    KIND: runs, show, import, export, check, delete, du, api_runs,
#                               backend (profile-backend status --json),
#                               heap, heaps, top, top_samples, top_sandwich, diff, diff_gc, watch_sample, watch_gc,
#                               sync, fleet_runs (query runs over a fleet catalogue),
#                               events, gc, watch_trace, trace_timeline, trace_thread
import json
import sys

INT, STR, BOOL, NUL = "int", "str", "bool", "null"

RUN = {
    "run_id": [INT], "name": [STR], "domid": [INT, NUL], "uuid": [STR, NUL],
    "state": [STR], "source": [STR], "started": [STR, NUL], "started_us": [INT],
    "ended": [STR, NUL], "ended_us": [INT, NUL], "duration_us": [INT, NUL],
    "backend_alive": [BOOL, NUL], "end_reason": [STR, NUL],
    "host": [STR, NUL], "backend_version": [STR, NUL], "prof_bytes": [INT, NUL],
    "hp_bytes": [INT, NUL], "eventlog_bytes": [INT, NUL], "trace_bytes": [INT, NUL],
    "trace_packets": [INT, NUL], "trace_events": [INT, NUL], "samples_bytes": [INT, NUL], "samples": [INT, NUL],
    "holds": [[STR]], "ndevices": [INT],
}
STATUS = {"block": [STR], "file_size": [INT, NUL], "closed": [BOOL, NUL],
          "word_size": [INT, NUL], "updated_us": [INT, NUL]}
DEVICE = {
    "device_id": [INT], "run_id": [INT], "vdev": [STR], "devid": [INT], "role": [STR],
    "capacity_sectors": [INT], "written_bytes": [INT], "written_end_sector": [INT],
    "write_requests": [INT], "write_bytes": [INT], "read_requests": [INT],
    "read_bytes": [INT], "flush_requests": [INT], "discard_requests": [INT],
    "errors": [INT], "status": [STATUS, NUL],
}
SAMPLES = {"samples": [INT], "lost": [INT], "frames": [INT], "hz": [INT], "vcpus": [INT],
           "seconds": ["real"], "program": [STR], "ended": [BOOL], "cut": [BOOL]}
RECLAIMED = {"db_bytes": [INT], "data_bytes": [INT], "data_bytes_waiting": [INT]}
FILE = {"apparent_bytes": [INT], "allocated_bytes": [INT]}
SHAPES = {
    "runs": {"runs": [[RUN]]},
    "api_runs": {"runs": [[RUN]], "before": [INT, NUL]},
    "show": {"run": [RUN], "devices": [[DEVICE]], "trace": [dict, NUL], "samples": [SAMPLES, NUL]},
    "import": {"run": [RUN], "devices": [[DEVICE]]},
    "export": {"exported": [[{"run_id": [INT], "vdev": [STR], "path": [STR], "bytes": [INT]}]]},
    "check": {"check": [{"database": [STR], "ok": [BOOL], "quick": [BOOL], "problems": [STR, NUL],
                         "chunks_verified": [INT], "packets_verified": [INT], "checksum_failures": [INT],
                         "damaged": [[{"run_id": [INT], "vdev": [STR], "device_id": [INT], "offset": [INT],
                                       "length": [INT], "chunk": [INT, NUL], "trace_packet": [INT, NUL],
                                       "what": [STR]}]],
                         "summary": [STR]}]},
    "delete": {"deleted": [[RUN]], "skipped": [[{"run": [RUN], "reason": [STR]}]],
               "dry_run": [BOOL], "reclaimed": [RECLAIMED, NUL]},
    "du": {"du": [{"path": [STR], "database": [FILE, NUL], "wal": [FILE, NUL], "data": [FILE, NUL],
                   "page_size": [INT], "free_db_bytes": [INT], "data_slots_in_use": [INT],
                   "reclaimable_data_bytes": [INT],
                   "runs": [[{"run_id": [INT], "bytes": [INT], "db_bytes": [INT], "data_bytes": [INT]}]]}]},
}
XSTATE = [STR]
BACKEND = {
    "version": [STR], "pid": [INT], "platform": [STR], "up_seconds": [INT], "store": [STR],
    "durability": [STR], "sink": [STR], "sink_dir": [STR, NUL], "heap_bytes": [INT],
    "store_cache_bytes": [INT], "batches": [INT], "inline_commits": [INT], "failed_commits": [INT],
    "xenstore": [{"events": [INT], "deferred": [INT], "rounds": [INT], "unwatched": [INT]}],
    "devices": [[{"domid": [INT], "vdev": [STR], "backend_state": XSTATE, "frontend_state": XSTATE,
                  "run_id": [INT, NUL], "requests": [INT], "bytes": [INT], "errors": [INT],
                  "last_error": [STR, NUL]}]],
    "traces": [[{"domid": [INT], "run_id": [INT, NUL], "pages": [INT], "packets_kept": [INT],
                 "packets_lost": [INT], "packets_dropped": [INT], "bytes": [INT], "state": [STR]}]],
    "runs": [[{"run_id": [INT], "domid": [INT], "devices": [INT], "bytes": [INT], "name": [STR],
             "end_failures": [INT], "end_error": [STR, NUL]}]],
    "sync": [{"catalogue": [STR], "connected": [BOOL], "waiting": [INT], "catch_up": [BOOL],
              "pushed": [INT], "pushed_bytes": [INT], "failures": [INT], "last_push_us": [INT, NUL],
              "last_error": [STR, NUL]}, NUL],
}
SHAPES["backend"] = {"backend": [BACKEND]}
REAL = "real"
HEAP = {"run": [RUN], "job": [STR], "date": [STR], "samples": [INT], "start": [REAL], "end": [REAL],
        "max_total": [INT], "trace_dropped": [INT], "merged_into_other": [INT], "left_out_bytes": [INT],
        "partial_sample": [BOOL],
        "bands": [[{"name": [STR], "other": [BOOL], "peak": [INT], "total": [INT]}]]}
SHAPES["heap"] = HEAP
SHAPES["heaps"] = [HEAP]
CC = {"name": [STR], "module": [STR], "src": [STR], "entries": [INT], "time": [REAL], "alloc": [REAL],
      "inherited_time": [REAL], "inherited_alloc": [REAL], "stacks": [INT], "self_from": [STR]}
CC_TICKS = dict(CC, ticks=[INT], bytes=[INT])
SHAPES["top"] = {"run": [RUN], "format": [STR], "command": [STR], "total_time": [REAL], "total_ticks": [INT],
                 "total_alloc": [INT], "ghc_table": [STR], "cost_centres": [[CC, CC_TICKS]]}
SFN = {"name": [STR], "module": [STR], "src": [STR], "self_samples": [INT], "total_samples": [INT],
       "self_ns": [INT], "total_ns": [INT], "self_pct": [REAL], "total_pct": [REAL]}
SEDGE = {"name": [STR], "module": [STR], "src": [STR], "samples": [INT], "ns": [INT], "pct": [REAL],
         "function_pct": [REAL]}
SAMPLES_TOP = {
    "sampling": [{"hz_asked": [INT], "hz_kept": [INT], "samples": [INT], "lost": [INT], "vcpus": [INT],
                  "segments": [INT], "seconds": [REAL], "sampled_seconds": [REAL], "weighed_by": [STR]}],
    "selection": [{"from_seconds": [REAL], "to_seconds": [REAL, NUL], "vcpu": [INT, NUL], "focus": [[STR]],
                   "ignore": [[STR]], "samples": [INT], "ns": [INT], "kept_samples": [INT], "kept_ns": [INT]}],
    "nfunctions": [INT], "functions": [[SFN]]}
SHAPES["top_samples"] = dict(SAMPLES_TOP, run=[RUN])
SHAPES["top_sandwich"] = dict(SAMPLES_TOP, run=[RUN], sandwich=[{"function": [SFN], "callers": [[SEDGE]],
                                                                "callees": [[SEDGE]]}])
DIFF_GC = {"collections": [INT], "by_generation": [[INT]], "pauses": [INT], "total_pause_ns": [INT],
           "longest_pause_ns": [INT], "p50_ns": [INT], "p90_ns": [INT], "p99_ns": [INT], "elapsed_ns": [INT],
           "gc_share": [REAL], "peak_live_bytes": [INT], "peak_heap_bytes": [INT], "allocated_bytes": [INT]}
SHAPES["diff"] = {"before": [RUN], "after": [RUN],
                  "stacks": [[{"stack": [STR], "before": [BOOL], "after": [BOOL], "time": [[REAL]],
                               "alloc": [[REAL]], "entries": [[INT]]}]],
                  "bands": [[{"band": [STR], "before": [BOOL], "after": [BOOL], "peak": [[INT]],
                              "area": [[REAL]]}]]}
# diff --json's "gc" (both runs with GHC's eventlog), checked on its own
SHAPES["diff_gc"] = {"before": [DIFF_GC], "after": [DIFF_GC]}
SHAPES["watch_gc"] = {"gc": [{"collections": [INT], "pauses": [INT], "total_pause_ns": [INT],
                              "longest_pause_ns": [INT], "elapsed_ns": [INT], "gc_share": [REAL],
                              "heap_bytes": [INT], "live_bytes": [INT], "peak_heap_bytes": [INT],
                              "peak_live_bytes": [INT]}]}
SHAPES["watch_sample"] = {"sample": [{"index": [INT], "time": [REAL], "total": [INT],
                                      "bands": [[{"name": [STR], "bytes": [INT]}]]}]}
SHAPES["watch_trace"] = {"trace": [{"events": [INT], "packets_kept": [INT], "packets_lost": [INT], "threads": [INT],
                                    "threads_alive": [INT], "gc_pauses": [INT], "gc_total_ns": [INT],
                                    "gc_longest_ns": [INT], "span_ns": [INT], "ended": [BOOL],
                                    "counters": [[{"name": [STR], "value": [INT], "updates": [INT]}]]}]}
SHAPES["trace_timeline"] = {
    "run": [INT], "guest": [STR], "t0": [INT], "t1": [INT], "from": [INT], "to": [INT], "events": [INT],
    "ended": [BOOL], "packets": [{"kept": [INT], "lost": [INT]}],
    "threads": [[{"id": [INT], "start": [INT], "end": [INT], "ended": [BOOL], "parent": [INT, NUL],
                  "label": [STR, NUL], "type": [STR, INT, NUL], "events": [INT]}]],
    "groups": [[{"label": [STR, NUL], "threads": [INT], "shown": [INT]}]],
    "groups_more": [{"labels": [INT], "threads": [INT], "shown": [INT]}],
    "threads_total": [INT], "threads_dropped": [INT],
    "arrows": [[[STR, INT]]], "arrows_total": [INT], "switches": [[[INT]]], "switches_total": [INT],
    "gc": [[[INT]]], "gc_total": [INT],
    "counters": [[{"name": [STR], "lo": [INT], "hi": [INT], "last": [INT], "updates": [INT], "in_window": [INT],
                   "points": [[[INT]]]}]],
    "counters_more": [INT], "labels": [INT]}
SHAPES["trace_thread"] = {"thread": [INT], "more": [INT],
                          "events": [[{"ts": [INT], "event": [STR], "thread": [INT], "other": [INT],
                                       "type": [STR], "text": [STR]},
                                      {"ts": [INT], "event": [STR], "thread": [INT], "other": [INT], "type": [STR]},
                                      {"ts": [INT], "event": [STR], "thread": [INT], "other": [INT], "text": [STR]},
                                      {"ts": [INT], "event": [STR], "thread": [INT], "other": [INT]},
                                      {"ts": [INT], "event": [STR], "thread": [INT], "text": [STR]},
                                      {"ts": [INT], "event": [STR], "thread": [INT]}]]}
FLEET_RUN = dict(RUN, host_id=[STR], hostname=[STR])
SHAPES["fleet_runs"] = {"runs": [[FLEET_RUN]]}
SHAPES["sync"] = {"sync": [{"host_id": [STR], "pushed": [INT], "current": [INT], "running": [INT], "summed": [INT],
                            "bytes": [INT], "damaged": [INT], "complete": [BOOL]}]}
SHAPES["events"] = {"run": [RUN], "whole": [BOOL], "bytes": [INT], "cut_bytes": [INT], "events_read": [INT],
                    "types": [[{"type": [INT], "name": [STR, NUL], "description": [STR], "size": [INT, NUL]}]],
                    "events": [[{"time_ns": [INT], "cap": [INT, NUL], "type": [INT], "name": [STR, NUL],
                                 "line": [STR]}]]}
SHAPES["gc"] = {"run": [RUN], "whole": [BOOL], "collections": [INT], "gc_starts": [INT], "by_generation": [[INT]],
                "pauses": [INT], "total_pause_ns": [INT], "longest_pause_ns": [INT], "p50_ns": [INT],
                "p90_ns": [INT], "p99_ns": [INT], "elapsed_ns": [INT], "gc_share": [REAL],
                "peak_live_bytes": [INT], "peak_heap_bytes": [INT], "allocated_bytes": [INT],
                "copied_bytes": [INT], "unmatched": [INT]}
STATES = {"running", "complete", "crashed"}
ROLES = {"prof", "hp", "eventlog", "trace", "samples", "raw"}  # docs/json.md, "device"


def check(v, kinds, where):
    for k in kinds:
        if k == NUL and v is None:
            return
        if k == INT and isinstance(v, int) and not isinstance(v, bool):
            return
        if k == REAL and isinstance(v, (int, float)) and not isinstance(v, bool):
            return
        if k == STR and isinstance(v, str):
            return
        if k == BOOL and isinstance(v, bool):
            return
        if k is dict and isinstance(v, dict):
            return
        if isinstance(k, list) and isinstance(v, list):
            for i, e in enumerate(v):
                check(e, k, "%s[%d]" % (where, i))
            return
        if isinstance(k, dict) and isinstance(v, dict):
            if set(v) != set(k):
                if any(isinstance(o, dict) and set(v) == set(o) for o in kinds):
                    continue  # another of the allowed shapes fits
                sys.exit("json_shapes: %s: fields %s, documented %s" % (where, sorted(v), sorted(k)))
            for f, fk in k.items():
                check(v[f], fk, where + "." + f)
            if (k is RUN or k is FLEET_RUN) and v["state"] not in STATES:
                sys.exit("json_shapes: %s.state is %r" % (where, v["state"]))
            if k is DEVICE and v["role"] not in ROLES:
                sys.exit("json_shapes: %s.role is %r" % (where, v["role"]))
            return
    sys.exit("json_shapes: %s is %r, not %s" % (where, v, kinds))


doc = json.load(open(sys.argv[2]))
check(doc, [SHAPES[sys.argv[1]]], sys.argv[1])
