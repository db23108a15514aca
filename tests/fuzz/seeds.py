#!/usr/bin/env python3
# tests/fuzz/seeds.py - writes the hand-made seed inputs of the fuzz targets
# into tests/fuzz/corpus/<target>/ (fuzz_store_open's seeds are real stores,
# made by tests/fuzz/seed-stores.sh with profdb).  Run from anywhere.
import os, struct, sys

here = os.path.dirname(os.path.abspath(__file__))
def put(target, name, data):
    d = os.path.join(here, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

# ---- fuzz_blkif: [abi][order][capacity u64] + ring page + indirect page ----
def sring(prod, slots):
    hdr = struct.pack("<IIII", prod, 1, 0, 1) + bytes(48)
    return hdr + b"".join(slots)
def req64(op, nseg, sector, segs, id_=7):
    body = struct.pack("<BBHIQQ", op, nseg, 0, 0, id_, sector)   # op, nseg, handle, pad, id, sector
    for g, f, l in segs:
        body += struct.pack("<IBBH", g, f, l, 0)
    return body.ljust(112, b"\0")
def req32(op, nseg, sector, segs, id_=7):
    body = struct.pack("<BBHQQ", op, nseg, 0, id_, sector)
    for g, f, l in segs:
        body += struct.pack("<IBBH", g, f, l, 0)
    return body.ljust(108, b"\0")
def ind64(nseg, sector, grefs, op=1):
    body = struct.pack("<BBH", 6, op, nseg) + bytes(4) + struct.pack("<QQH", 9, sector, 0) + bytes(6)
    body += b"".join(struct.pack("<I", g) for g in grefs)
    return body.ljust(112, b"\0")
cap = struct.pack("<Q", 1 << 20)
put("fuzz_blkif", "write-x86_64", bytes([2, 0]) + cap + sring(2, [req64(1, 1, 1, [(10, 0, 7)]), req64(1, 2, 9, [(11, 0, 7), (12, 0, 0)])]))
put("fuzz_blkif", "read-native", bytes([0, 0]) + cap + sring(1, [req64(0, 1, 0, [(10, 0, 7)])]))
put("fuzz_blkif", "flush-discard", bytes([2, 0]) + cap + sring(2, [req64(3, 0, 0, []), struct.pack("<BBHIQQQ", 5, 0, 0, 0, 3, 8, 16).ljust(112, b"\0")]))
put("fuzz_blkif", "write-x86_32", bytes([1, 0]) + cap + sring(1, [req32(1, 1, 1, [(10, 0, 7)])]))
segs = b"".join(struct.pack("<IBBH", 100 + i, 0, 7, 0) for i in range(32))
put("fuzz_blkif", "indirect-32", bytes([2, 0]) + cap + sring(1, [ind64(32, 0, [50])]).ljust(4096, b"\0") + segs)
put("fuzz_blkif", "bogus-prod", bytes([2, 0]) + cap + sring(10000, [req64(1, 1, 1, [(10, 0, 7)])]))
put("fuzz_blkif", "multipage", bytes([2, 2]) + cap + sring(3, [req64(1, 1, i, [(10, 0, 7)]) for i in range(3)]))

# ---- fuzz_xs_values: a frontend directory as node=value lines ----
put("fuzz_xs_values", "halvm", b"ring-ref=8\nevent-channel=5\nstate=3\n/local/domain/0/backend/profsvc/3/51953/state\nxvdp1\n")
put("fuzz_xs_values", "linux", b"ring-page-order=2\nring-ref0=8\nring-ref1=9\nring-ref2=10\nring-ref3=11\nevent-channel=5\nprotocol=x86_64-abi\nfeature-persistent=1\n/local/domain/0/backend/profsvc/3\n/local/domain/0/backend/profsvc/3/51728/sectors\n")
put("fuzz_xs_values", "backend-dir", b"/local/domain/3/device/vbd/51953\n3\nxvdp1\nring-ref=1\nevent-channel=2\nprotocol=x86_32-abi\n")
put("fuzz_xs_values", "bad", b"ring-page-order=99\nring-ref=-1\nevent-channel= 5\nprotocol=x86_64-abi\x01\nxvdzz9\nhda1\nsda\nxvda15\n")

# ---- fuzz_xs_wire: [0 = dom0 | 1 = guest] + xs_wire messages ----
def msg(t, body, req=1, tx=0):
    return struct.pack("<IIII", t, req, tx, len(body)) + body
XS_DIRECTORY, XS_READ, XS_GET_PERMS, XS_WATCH, XS_UNWATCH, XS_TRANSACTION_START, XS_TRANSACTION_END, XS_INTRODUCE, XS_RELEASE, XS_GET_DOMAIN_PATH, XS_WRITE, XS_MKDIR, XS_RM, XS_SET_PERMS = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14
put("fuzz_xs_wire", "dom0-basic", b"\0" + msg(XS_WRITE, b"/local/domain/0/backend/x\0hello") + msg(XS_READ, b"/local/domain/0/backend/x\0") + msg(XS_DIRECTORY, b"/local/domain\0") + msg(XS_WATCH, b"/local\0tok\0") + msg(XS_RM, b"/local/domain/0/backend\0"))
put("fuzz_xs_wire", "guest-tx", b"\1" + msg(XS_TRANSACTION_START, b"\0") + msg(XS_WRITE, b"device/vbd/51953/state\x003", tx=1) + msg(XS_TRANSACTION_END, b"T\0", tx=1) + msg(XS_GET_PERMS, b"device\0") + msg(XS_SET_PERMS, b"device\0b5\0r0\0") + msg(XS_GET_DOMAIN_PATH, b"5\0"))
put("fuzz_xs_wire", "guest-escape", b"\1" + msg(XS_WRITE, b"/local/domain/0/x\0evil") + msg(XS_READ, b"../../x\0") + msg(XS_MKDIR, b"a//b\0") + msg(XS_INTRODUCE, b"7\x001\x002\0"))
put("fuzz_xs_wire", "oversize", b"\0" + struct.pack("<IIII", XS_WRITE, 1, 0, 5000))

# ---- fuzz_status_block: 512 bytes ----
def block(size, closed, ws):
    fmt = "<Q" if ws == 8 else "<I"
    words = [size, closed]
    i = 2
    while len(words) * ws < 512:
        words += [size ^ i, closed ^ i]
        i += 2
    return b"".join(struct.pack(fmt, w & ((1 << (8 * ws)) - 1)) for w in words)[:512]
put("fuzz_status_block", "closed-8", block(138276, 1, 8))
put("fuzz_status_block", "open-8", block(4096, 0, 8))
put("fuzz_status_block", "closed-4", block(5559, 1, 4))
put("fuzz_status_block", "empty", bytes(512))
b = bytearray(block(1000, 1, 8)); b[100] ^= 0xff
put("fuzz_status_block", "one-copy-bad", bytes(b))

# ---- fuzz_profile: [mode][cut u16] + bytes ----
hp = b"JOB \"leak\"\nDATE \"Thu Jan 1\"\nSAMPLE_UNIT \"seconds\"\nVALUE_UNIT \"bytes\"\nBEGIN_SAMPLE 0.00\nEND_SAMPLE 0.00\nBEGIN_SAMPLE 0.10\nMAIN\t48\nEND_SAMPLE 0.10\n"
prof = b"\tFri Jan  1 00:00 2021 Time and Allocation Profiling Report  (Final)\n\n\t   leak +RTS -p -RTS\n\n\ttotal time  =        0.00 secs   (0 ticks @ 1000 us, 1 processor)\n"
put("fuzz_profile", "hp", bytes([1, 0, 0]) + hp)
put("fuzz_profile", "hp-crash", bytes([5, 60, 0]) + hp * 60)
put("fuzz_profile", "prof-4byte", bytes([2, 0, 0]) + prof)
put("fuzz_profile", "image", bytes([0x80, 0, 0]) + block(len(hp), 1, 8) + hp)
put("fuzz_profile", "image-unclosed", bytes([0x80, 0, 0]) + block(len(prof), 0, 8) + prof)
put("fuzz_profile", "image-short", bytes([0x80, 0, 0]) + block(100000, 1, 8) + hp)

# ---- fuzz_mprof: [packet size (64 + 16 b)][gaps] + packets -------------------
# Two mirage-profile packets of 1024 bytes as the guest writes them (the
# frontend-stub's mirage writer: every event kind once, then a string left
# without its NUL), and the same with a gap in the sequence.
MP_UUID = bytes.fromhex("05883b8d521a487bb397456ab150680c")
def mp_event(ts, ev, fields):
    return struct.pack("<QB", ts, ev) + fields
def mp_packet(count, events, size=1024):
    body = b"".join(events)
    content = (30 + len(body)) * 8
    hdr = struct.pack("<I16sIHHH", 0xc1fc1fc1, MP_UUID, size * 8, count, content & 0xffff, content >> 16)
    return (hdr + body + bytes(size))[:size]
mp_events = [
    mp_event(100, 0, struct.pack("<QQB", 1, 2, 3)), mp_event(110, 1, struct.pack("<QQ", 1, 2)),
    mp_event(120, 2, struct.pack("<QQ", 1, 2)), mp_event(130, 3, struct.pack("<QQ", 1, 2) + b"Not_found\0"),
    mp_event(140, 4, struct.pack("<QQ", 1, 2)), mp_event(150, 5, struct.pack("<Q", 1) + b"main\0"),
    mp_event(160, 6, struct.pack("<Qq", 1, -5) + b"rx\0"), mp_event(170, 7, struct.pack("<Q", 1)),
    mp_event(180, 8, struct.pack("<Q", 999)), mp_event(190, 9, struct.pack("<QQ", 1, 2)),
    mp_event(200, 10, struct.pack("<QQ", 1, 2)), mp_event(210, 11, struct.pack("<Qq", 1, 77) + b"tx\0"),
]
mp_tail = [mp_event(300, 5, struct.pack("<Q", 1) + b"unterminated")]
put("fuzz_mprof", "two-packets", bytes([60, 0]) + mp_packet(0, mp_events) + mp_packet(1, mp_events[:3] + mp_tail))
put("fuzz_mprof", "gap", bytes([60, 0xff]) + mp_packet(0, mp_events) + mp_packet(5, mp_events[4:]))

# ---- fuzz_xs_values: a trace ref list --------------------------------------
put("fuzz_xs_values", "mprof-ring-ref", b"8,9,10,11\n8,,9\n4294967296\n")

# ---- fuzz_xlcfg: a guest's xl config (tests/test_xlcfg.sh's cases) ----------
xl = {
    "one-profsvc": b'name = "g";\nmemory = 64;\ndisk = [ "vdev=xvdp1, backendtype=profsvc" ]\n',
    "two-packed": b'name="g" ; disk=["vdev=xvdp1,backendtype=profsvc","vdev=xvdp2,backendtype=profsvc"]',
    "kept-disk": b'name = "g"\ndisk = [ "file:/srv/a b.img,xvda,w",   # xl\'s\n  # "vdev=xvdp3, backendtype=profsvc",\n  "vdev=xvdp1, backendtype=profsvc", ]\n',
    "escapes": b'name = "q\\"x"\ndisk = [ \'file:/srv/o"b\\\\x.img,xvda,w\', "vdev=xvdp2,backendtype=profsvc" ]\n',
    "disk-append": b'name = "g"\ndisk = [ "vdev=xvdp1, backendtype=profsvc" ]\ndisk += [ "vdev=xvdp2, backendtype=profsvc", "file:/a,xvda,w" ]\n',
    "positional": b'name = "g"\ndisk = [ ",,xvdp1,w,backendtype=profsvc", "/srv/r.img,raw,xvda,r" ]\n',
    "target": b'name = "g"\ndisk = [ "vdev=xvdp1, backendtype=profsvc, target=/srv/p.img" ]\n',
    "bad-case": b'name = "g"\n\ndisk = [ "vdev=xvdp1, backendtype=PROFSVC", "vdev=xvdp1, backendtype = profsvc" ]\n',
    "bad-string": b'name = "g" # a comment\n# disk = [ "x" ]\ndisk = "vdev=xvdp1, backendtype=profsvc"\n',
    "bad-dup": b'name = "g"\ndisk = [ "vdev=xvdp1, backendtype=profsvc", "phy:/dev/vg/a,xvdp1,w" ]\n',
}
for k, v in xl.items():
    put("fuzz_xlcfg", k, v)

# ---- fuzz_walk_ghc: [flags][budget][sp off][outlen][name len][stack len][info len]
# + name + stack region (0x10000) + info region (0x20000) + RTS region (0x30000):
# a thread whose chunk holds a small, a big, an update and a function frame,
# then underflows into a chunk with a small frame and the stop frame.
def ghc_image(v800, name, budget=4000, outlen=64, headers=False):
    STACK, INFO, RTS = 0x10000, 0x20000, 0x30000
    small_t = 32 if v800 else 30   # RET_SMALL; RET_BIG .. STOP_FRAME follow
    q = lambda v: struct.pack("<Q", v)
    info = bytearray(0x900)
    def table(k, layout, t):       # its return point: INFO + 0x20 k + 0x10
        struct.pack_into("<QII", info, 0x20 * k, layout, t, 0)
        return INFO + 0x20 * k + 0x10
    small = table(0, 2, small_t)
    big = table(1, 0x800 - 0x30, small_t + 1)
    struct.pack_into("<Q", info, 0x800, 5)
    fun = table(2, 0, small_t + 2)
    upd = table(3, 1, small_t + 3)
    under = table(4, 1, small_t + 5)
    stop = table(5, 0, small_t + 6)
    words = 64
    frames = (q(small) + q(0) + q(0) + q(big) + bytes(40) + q(upd) + q(0)
              + q(fun) + q(1) + q(0) + q(0) + q(under) + q(RTS + 0x800))
    sp = STACK + 24 + words * 8 - len(frames)
    stack = bytearray(24 + words * 8)
    tso_hdr, stack_hdr = (INFO + 0x10, INFO + 0x20) if headers else (0, 0)
    struct.pack_into("<QIIQ", stack, 0, stack_hdr, words, 1, sp)
    stack[sp - STACK:] = frames
    rts = bytearray(0x900)
    struct.pack_into("<Q", rts, 24 + 872, RTS + 0x400)   # MainCapability.r.rCurrentTSO
    struct.pack_into("<Q", rts, 0x400, tso_hdr)          # the TSO's header
    struct.pack_into("<Q", rts, 0x400 + 24, STACK)       # ->stackobj
    b_words = 8
    b_sp = RTS + 0x800 + 24 + b_words * 8 - 32
    struct.pack_into("<QIIQ", rts, 0x800, stack_hdr, b_words, 1, b_sp)
    struct.pack_into("<QQQQ", rts, b_sp - RTS, small, 0, 0, stop)
    hdr = struct.pack("<BHHBHHH", (1 if v800 else 0) | 2 | (4 if headers else 0), budget, sp - STACK, outlen - 1,
                      len(name), len(stack), len(info))
    return hdr + name + bytes(stack) + bytes(info) + bytes(rts)
put("fuzz_walk_ghc", "ghc900", ghc_image(False, b"base_GHCziBase_zpzp_info"))
put("fuzz_walk_ghc", "ghc800", ghc_image(True, b"ghczmprim_GHCziTuple_Z3T_con_info"))
put("fuzz_walk_ghc", "budget", ghc_image(False, b"Main_z2200U_info", budget=9, outlen=5))
put("fuzz_walk_ghc", "local", ghc_image(False, b"_c1ab_info"))
put("fuzz_walk_ghc", "headers", ghc_image(False, b"Main_zdwlevelC_info", headers=True))
# ---- fuzz_samples: [n][n piece sizes] + a samples stream (profile/samples/samples.h) --
def srec(t, payload):
    return struct.pack("<HHI", t, 0, len(payload)) + payload
def sstr(s):
    return struct.pack("<H", len(s)) + s
def sbegin(hz=1000, vcpus=2, prog=b"halvm-guest", start=1 << 60):
    return srec(1, struct.pack("<IIQI", 1, hz, start, vcpus) + sstr(prog))
def sframe(i, kind, name, module=b"", file=b"", line=0, addr=0):
    return srec(2, struct.pack("<IBBHQI", i, kind, 0, 0, addr, line) + sstr(name) + sstr(module) + sstr(file))
def ssample(t, vcpu, ids, weight=1, stop=0):
    return srec(3, struct.pack("<QIIHH", t, vcpu, weight, len(ids), stop) + b"".join(struct.pack("<I", i) for i in ids))
frames = (sframe(1, 1, b"main", b"Main", b"Main.hs", 10, 0x401000) + sframe(2, 1, b"go", b"Main", b"Main.hs", 20, 0x401100)
          + sframe(3, 0, b"memcpy", b"libc", b"", 0, 0x402000) + sframe(4, 2, b"[GC]") + sframe(5, 3, b"", b"", b"", 0, 0xffff800000001000))
samples = ssample(1000, 0, [2, 1]) + ssample(2000, 1, [3, 2, 1]) + ssample(3000, 0, [4]) + ssample(4000, 1, [5, 1], 3, 2)
tail = srec(4, struct.pack("<QII", 5000, 2, 1)) + srec(5, struct.pack("<QI", 6000, 500)) + srec(6, struct.pack("<QI", 7000, 2))
put("fuzz_samples", "one-segment", b"\0" + sbegin() + frames + samples + tail + bytes(64))
put("fuzz_samples", "pieces", bytes([3, 1, 7, 200]) + sbegin() + frames + samples + tail)
put("fuzz_samples", "two-segments", b"\0" + sbegin() + frames + samples + srec(6, struct.pack("<QI", 7000, 2))
    + sbegin(start=(1 << 60) + 10**9) + sframe(1, 0, b"memcpy", b"libc", b"", 0, 0x402000) + sframe(2, 1, b"go", b"Main", b"Main.hs", 20, 0x401100)
    + ssample(10, 0, [1, 2]) + srec(77, b"newer record"))
put("fuzz_samples", "hostile-names", b"\0" + sbegin(prog=b"evil\x1b]0;x\x07") + sframe(1, 0, b"a\\b;c\n\xff\xc3", b"we ird", b"f\"ile", 7, 1)
    + sframe(2, 1, "rtl\u202egnp".encode(), b"M\x00d") + ssample(1, 0, [1]))
put("fuzz_samples", "cut", b"\0" + (sbegin() + frames + samples)[:-5])
def smapping(i, start, limit, offset, file, build_id=b""):
    return srec(8, struct.pack("<IIQQQ", i, 0, start, limit, offset) + sstr(file) + sstr(build_id))
def smframe(i, kind, name, mapping, addr):
    return srec(2, struct.pack("<IBBHQI", i, kind, 0, mapping, addr, 0) + sstr(name) + sstr(b"") + sstr(b""))
put("fuzz_samples", "mappings-and-time", b"\0" + sbegin() + smapping(1, 0x401000, 0x402000, 0x1000, b"/usr/bin/p", b"abcdef")
    + smapping(2, 0x7f0000000000, 0x7f0000100000, 0x26000, b"/lib/libc.so.6") + smframe(1, 0, b"main", 1, 0x401234)
    + smframe(2, 0, b"qsort", 2, 0x7f0000000abc) + srec(7, struct.pack("<Q", 250000)) + ssample(1000, 0, [2, 1])
    + srec(7, struct.pack("<Q", 7)) + ssample(2000, 1, [1]) + ssample(3000, 0, [2, 1]))
# ---- fuzz_pagetable: [cr3][4 vas] + entries [frame u8][index u16][value u64] --
def pt_entry(frame, index, value):
    return struct.pack("<BHQ", frame, index, value)
def pt_idx(va, level):
    return (va >> (12 + 9 * (level - 1))) & 511
def pt_guest(cr3, vas, entries):
    return struct.pack("<5Q", cr3, *vas) + b"".join(pt_entry(*e) for e in entries)
P, PS = 1, 0x80
va4k, va2m, va1g = 0x00007f1234567abc, 0xffff888040323456, 0x00007fc0abcdef12
put("fuzz_pagetable", "4k", pt_guest(1 << 12, [va4k, va4k + 0x1000, 0x0000800000000000, 0], [
    (1, pt_idx(va4k, 4), 2 << 12 | P), (2, pt_idx(va4k, 3), 3 << 12 | P),
    (3, pt_idx(va4k, 2), 4 << 12 | P), (4, pt_idx(va4k, 1), 5 << 12 | P)]))
put("fuzz_pagetable", "2m-1g", pt_guest(1 << 12, [va2m, va1g, va2m + 0x200000, va1g | 0xfff], [
    (1, pt_idx(va2m, 4), 2 << 12 | P), (2, pt_idx(va2m, 3), 3 << 12 | P),
    (3, pt_idx(va2m, 2), 0x40000 << 12 | P | PS),
    (1, pt_idx(va1g, 4), 6 << 12 | P), (6, pt_idx(va1g, 3), 0x80000 << 12 | P | PS)]))
put("fuzz_pagetable", "self-loop", pt_guest(7 << 12, [0, 0x123, 0x00007fffffffffff, 0xffffffffffffffff], [
    (7, 0, 7 << 12 | P), (7, 511, 7 << 12 | P)]))
put("fuzz_pagetable", "beyond", pt_guest(1 << 12, [0, 0x1000, 0x40000000, 0xffff800000000000], [
    (1, 0, 9 << 12 | P), (1, 256, 0xffffffffffffff7f)]))

# ---- fuzz_walk_fp: [fp offset u16][budget u16][flags] + a stack region -------
def fp_chain(n, loop=False):
    base = 0x7ff000000000
    region = bytearray(16 * (n + 1))
    for i in range(n):
        nxt = 0 if i == n - 1 else base + 16 * (i + 1)
        if loop and i == n - 1:
            nxt = base  # back down to the first frame
        struct.pack_into("<QQ", region, 16 * i, nxt, 0x401000 + i)
    return region
put("fuzz_walk_fp", "chain", struct.pack("<HHB", 0, 4000, 0) + fp_chain(20))
put("fuzz_walk_fp", "loop", struct.pack("<HHB", 0, 4000, 0) + fp_chain(8, loop=True))
put("fuzz_walk_fp", "short-reads", struct.pack("<HHB", 0, 64, 1) + fp_chain(40))

# ---- fuzz_walk_cfi: [pc u8][pc offset u16][sp offset u16][budget u16][flags] + a stack
put("fuzz_walk_cfi", "entry", struct.pack("<BHHHB", 0, 0, 64, 4000, 0) + fp_chain(20))
put("fuzz_walk_cfi", "libc", struct.pack("<BHHHB", 2, 0, 0, 4000, 0) + fp_chain(20))
put("fuzz_walk_cfi", "short-reads", struct.pack("<BHHHB", 5, 17, 8, 64, 1) + fp_chain(40))

# ---- fuzz_kallsyms: a System.map or /proc/kallsyms copy -----------------------
put("fuzz_kallsyms", "system-map", b"".join(b"%016x %s %s\n" % (a, t, n) for a, t, n in [
    (0xffffffff81000000, b"T", b"_stext"), (0xffffffff81000000, b"T", b"startup_64"),
    (0xffffffff81001000, b"T", b"hypercall_page"), (0xffffffff81001020, b"t", b"xen_hypercall_sched_op"),
    (0xffffffff81002000, b"T", b"alias_a"), (0xffffffff81002000, b"t", b"alias_b"),
    (0xffffffff81003000, b"w", b"weak_undefined"), (0, b"A", b"fixed_percpu_data"),
    (0xffffffff81005000, b"T", b"_etext"), (0xffffffff83000000, b"T", b"_sinittext"),
    (0xffffffff83001000, b"T", b"_einittext")]))
put("fuzz_kallsyms", "kallsyms-modules", b"ffffffff81000000 T _stext\nffffffff81800000 T _etext\n"
    b"ffffffffc0001000 t blkif_interrupt\t[xen_blkfront]\nffffffffc0002000 T xlvbd_alloc_gendisk\t[xen_blkfront]\n")
put("fuzz_kallsyms", "stub", b"ffffffffffffffff B The real System.map is in the linux-image-6.1.0-56-amd64-dbg package\n")

# ---- fuzz_eventlog: [n][n piece sizes] + a GHC eventlog (big-endian) ---------
def el_type(num, size, desc):
    d = desc.encode()
    return b"etb\0" + struct.pack(">HHI", num, size, len(d)) + d + struct.pack(">I", 0) + b"ete\0"
def el_ev(t, time, payload=b"", var=False):
    return struct.pack(">HQ", t, time) + (struct.pack(">H", len(payload)) if var else b"") + payload
VAR = 0xffff
el_types = [(2, 10, "Stop thread"), (9, 0, "Starting GC"), (10, 0, "Finished GC"), (18, 14, "Block marker"),
            (19, VAR, "User message"), (50, 12, "Current heap size"), (51, 12, "Current heap live data"),
            (53, 58, "GC statistics"), (160, VAR, "Start of heap profile"), (161, VAR, "Cost center definition"),
            (162, 8, "Start of heap profile sample"), (163, VAR, "Heap profile cost-centre sample"),
            (164, VAR, "Heap profile string sample"), (165, 8, "End of heap profile sample"),
            (300, 5, "A newer GHC's event"), (301, VAR, "Another")]
el_header = b"hdrbhetb" + b"".join(el_type(*t) for t in el_types) + b"hetehdredatb"
def el_body():
    evs = el_ev(2, 90, struct.pack(">IHI", 1, 1, 0)) + el_ev(9, 100) + el_ev(10, 300)
    evs += el_ev(53, 301, struct.pack(">IHQQQIQQQ", 0, 1, 4096, 8, 16, 1, 0, 0, 0))
    evs += el_ev(50, 302, struct.pack(">IQ", 0, 1 << 20)) + el_ev(51, 303, struct.pack(">IQ", 0, 300000))
    evs += el_ev(19, 400, b"hello", True) + el_ev(300, 410, b"\1\2\3\4\5") + el_ev(301, 420, b"abc", True)
    block = el_ev(18, 50, struct.pack(">IQH", 24 + len(evs), 2000, 0)) + evs
    prof = el_ev(160, 1201, struct.pack(">BQI", 0, 50000000, 1) + b"\0" * 5, True)
    prof += el_ev(161, 1202, struct.pack(">I", 7) + b"main\0Main\0Main.hs:3:1\0\1", True)
    prof += el_ev(162, 1300, struct.pack(">Q", 1))
    prof += el_ev(164, 1301, struct.pack(">BQ", 0, 1000) + b"ARR_WORDS\0", True)
    prof += el_ev(163, 1302, struct.pack(">BQBII", 0, 500, 2, 7, 8), True)
    prof += el_ev(165, 1304, struct.pack(">Q", 1))
    glob = el_ev(18, 1200, struct.pack(">IQH", 24 + len(prof), 1500, 0xffff)) + prof
    return block + glob
el_log = el_header + el_body() + b"\xff\xff"
put("fuzz_eventlog", "hand-made", b"\0" + el_log)
put("fuzz_eventlog", "pieces", b"\3\x05\x81\x10" + el_log)
put("fuzz_eventlog", "cut", b"\0" + el_log[:len(el_log) - 30])
put("fuzz_eventlog", "undeclared", b"\0" + el_header + el_ev(77, 5))
put("fuzz_eventlog", "hostile-sizes", b"\0" + b"hdrbhetb" + el_type(19, VAR, "m") + el_type(18, 14, "b") + b"hetehdredatb"
    + el_ev(18, 1, struct.pack(">IQH", 0xffffffff, 0, 3)) + el_ev(19, 2, b"x" * 40, True)
    + struct.pack(">HQH", 19, 3, 0xffff) + b"short")

# ---- fuzz_read_request: a read service request's payload (store/store_wire.h) ----
def wstr(s):
    return struct.pack("<I", len(s)) + s
HELLO, GET_RUN, LATEST_RUN, COUNT_STATES, ACTIVITY, LIST_RUNS, LIST_DEVICES, FIND_DEVICE, GET_DEVICE, READ_RANGE, TRACE_PACKETS, SPACE, RUNS_SPACE = range(1, 14)
put("fuzz_read_request", "hello", bytes([HELLO]) + struct.pack("<IQQ", 1, 2049, 131))
put("fuzz_read_request", "get-run", bytes([GET_RUN]) + struct.pack("<q", 7))
put("fuzz_read_request", "list-runs", bytes([LIST_RUNS]) + struct.pack("<IB", 0xffffffff, 1) + wstr(b"halvm-*") + struct.pack("<qqqq", 0, 500, 0, 12))
put("fuzz_read_request", "find-device", bytes([FIND_DEVICE]) + struct.pack("<q", 3) + wstr(b"xvdp2"))
put("fuzz_read_request", "read-range", bytes([READ_RANGE]) + struct.pack("<qQQB", 5, 512, 1 << 20, 1))
put("fuzz_read_request", "trace", bytes([TRACE_PACKETS]) + struct.pack("<qQ", 9, 100))
put("fuzz_read_request", "runs-space", bytes([RUNS_SPACE]) + struct.pack("<q", 10))
put("fuzz_read_request", "overflow", bytes([READ_RANGE]) + struct.pack("<qQQB", 5, (1 << 64) - 4, 100, 0))
put("fuzz_read_request", "long-glob", bytes([LIST_RUNS]) + struct.pack("<IB", 1, 1) + struct.pack("<I", 0xfffffff0) + b"x" * 40)

# ---- fuzz_read_reply: [op u8][off u64][len u64] + a reply's payload ----
R, BYE = 0x52, 0x42
T_END, T_RUN, T_DEVICE, T_PACKET, T_DATA, T_HOLE, T_DAMAGE, T_ACTIVITY, T_RUN_SPACE, T_RUN_ID, T_COUNTS, T_SPACE, T_HELLO = range(13)
def end(rc=0, msg=b"", more=0, nxt=0):
    return bytes([T_END]) + struct.pack("<i", rc) + wstr(msg) + struct.pack("<BQ", more, nxt)
def run_item(rid, name=b"halvm-phases"):
    return (bytes([T_RUN]) + struct.pack("<qI", rid, 5) + wstr(name) + wstr(b"0e1f-uuid") + struct.pack("<qqB", 10, 20, 1)
            + wstr(b"xen7") + wstr(b"0.9") + wstr(b"capture") + struct.pack("<qqqqI", 9143, 138276, -1, -1, 2)
            + wstr(b"") + b"\0")
def dev_item(did, vdev=b"xvdp2", role=2):
    return (bytes([T_DEVICE]) + struct.pack("<qq", did, 1) + wstr(vdev) + struct.pack("<IBQ", 51730, role, 1 << 31)
            + struct.pack("<qqqqqqqQ", 40, 140000, 0, 0, 1, 0, 0, 300) + struct.pack("<BqBIq", 1, 138276, 1, 8, 99))
def hdr(op, off=0, ln=0):
    return bytes([op - 1]) + struct.pack("<QQ", off, ln)
put("fuzz_read_reply", "hello", hdr(HELLO) + bytes([R, HELLO, T_HELLO]) + wstr(b"/var/lib/profsvc/profiles.db") + struct.pack("<I", 9) + wstr(b"0123456789abcdef0123456789abcdef") + end())
put("fuzz_read_reply", "list-runs", hdr(LIST_RUNS) + bytes([R, LIST_RUNS]) + run_item(1) + run_item(2, b"evil\x1b]0;x\x07") + end(0, b"", 1, 2))
put("fuzz_read_reply", "devices", hdr(LIST_DEVICES) + bytes([R, LIST_DEVICES]) + dev_item(1, b"xvdp1", 1) + dev_item(2) + end())
put("fuzz_read_reply", "range", hdr(READ_RANGE, 512, 200000) + bytes([R, READ_RANGE, T_DATA]) + struct.pack("<QI", 512, 1024) + bytes(range(256)) * 4
    + bytes([T_DAMAGE]) + struct.pack("<qq", 1, 2) + wstr(b"xvdp2") + struct.pack("<QQqq", 65536, 65536, 1, -1)
    + bytes([T_HOLE]) + struct.pack("<QQ", 1536, 198976) + end())
put("fuzz_read_reply", "range-more", hdr(READ_RANGE, 0, 1 << 20) + bytes([R, READ_RANGE, T_HOLE]) + struct.pack("<QQ", 0, 4096) + end(0, b"", 1, 4096))
put("fuzz_read_reply", "packets", hdr(TRACE_PACKETS) + bytes([R, TRACE_PACKETS, T_PACKET]) + struct.pack("<QQIQQQBqQB", 0, 8, 4000, 12, 100, 200, 0, 5, 77, 1) + end())
put("fuzz_read_reply", "error", hdr(GET_RUN) + bytes([R, GET_RUN]) + end(-8, b"no run 7 in /var/lib/profsvc/profiles.db"))
put("fuzz_read_reply", "space", hdr(SPACE) + bytes([R, SPACE, T_SPACE]) + struct.pack("<12q", *range(12)) + end())
put("fuzz_read_reply", "counts", hdr(COUNT_STATES) + bytes([R, COUNT_STATES, T_COUNTS]) + struct.pack("<3q", 1, 2, 3) + end())
put("fuzz_read_reply", "bye", hdr(GET_RUN) + bytes([BYE]) + wstr(b"evicted: user 65534 opened another connection"))
