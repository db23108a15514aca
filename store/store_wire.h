/*
 * store_wire.h - the read service's protocol: how a reader that may not
 * open the store's files (a member of the store's group, profdb serve as
 * user profsvc) asks the backend, which may, for what the read part of the
 * store API gives (store.h).  The backend's read service
 * (backend/daemon/read_service.c) answers on <run-dir>/read.sock;
 * store_remote.c is its client, a store opened through it.
 *
 * Frames: a 32-bit little-endian length, then that many bytes of payload.
 *   request  op (u8), then the op's fields; at most WIRE_REQUEST_MAX bytes.
 *   reply    WIRE_REPLY (u8), the op (u8), items (a tag u8 and its fields:
 *            runs, devices, packets, data pieces...), then WIRE_T_END: the
 *            result (a STORE_E* code, 0 ok), its message, whether more
 *            follows and where to go on from (a run id, a seq, an offset);
 *            at most WIRE_REPLY_MAX bytes, of which at most WIRE_DATA_MAX
 *            of data.
 *   bye      WIRE_BYE (u8) and a reason: the service drops the client
 *            (idle, evicted for another of its user's, a bad request).
 * Integers little-endian; a string is a u32 length and its bytes (no NUL).
 * Everything in a frame is the other side's and is checked here: lengths,
 * ranges, enumerations, which items an op may carry, data pieces in order
 * inside the range asked for.  A reader of a frame that fails gets -1 and
 * a reason; nothing it read is trusted for more than its bounds.
 *
 * Stands apart in the store (store_internal.h): uses store.h's types
 * alone, calls nothing.
 */
#ifndef PROFSVC_STORE_WIRE_H
#define PROFSVC_STORE_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

#define WIRE_VERSION 2
/* The read service's socket in the backend's run directory. */
#define WIRE_SOCKET_NAME "read.sock"
#define WIRE_REQUEST_MAX 4096u
/* Data bytes in one reply: a bigger read is several requests. */
#define WIRE_DATA_MAX (512u << 10)
#define WIRE_REPLY_MAX (WIRE_DATA_MAX + (64u << 10))
#define WIRE_GLOB_MAX 1024u
#define WIRE_MSG_MAX 600u

enum wire_op {
	WIRE_HELLO = 1,     /* version, the file's device and inode: is it yours? */
	WIRE_GET_RUN,       /* id */
	WIRE_LATEST_RUN,
	WIRE_COUNT_STATES,
	WIRE_ACTIVITY,
	WIRE_LIST_RUNS,     /* the filter, and after_id: the page after it */
	WIRE_LIST_DEVICES,  /* id: the run */
	WIRE_FIND_DEVICE,   /* id: the run, name: vdev or role */
	WIRE_GET_DEVICE,    /* id: the device */
	WIRE_READ_RANGE,    /* id: the device, off, len, salvage */
	WIRE_TRACE_PACKETS, /* id: the device, off: the first seq */
	WIRE_SPACE,
	WIRE_RUNS_SPACE,    /* limit */
	WIRE__OPS
};

struct wire_request {
	enum wire_op op;
	uint32_t version;              /* HELLO */
	uint64_t dev, ino;             /* HELLO: the database file the client names */
	int64_t id;
	int32_t state;                 /* LIST_RUNS: -1 any, else enum store_run_state */
	int has_glob;
	char glob[WIRE_GLOB_MAX + 1];
	int64_t since_us, limit, before_id, after_id;
	char name[32];                 /* FIND_DEVICE */
	uint64_t off, len;
	int salvage;
};

/* The request as a frame into buf (cap bytes): its length, or 0 when it
 * does not fit or a field is out of range. */
size_t wire_request_encode(const struct wire_request *rq, uint8_t *buf, size_t cap);
/* A request's payload (the frame without its length): 0, or -1 and why. */
int wire_request_parse(const uint8_t *p, size_t n, struct wire_request *rq, char *why, size_t whylen);

/* A reply being built, into a buffer of 4 + WIRE_REPLY_MAX bytes. */
struct wire_out {
	uint8_t *p;
	size_t len;
	size_t data;  /* data bytes so far */
};
void wire_out_begin(struct wire_out *o, uint8_t *buf, enum wire_op op);
/* Each adds an item: 0, or 1 when the reply has no room for it (nothing
 * added: the reply ends there, with more). */
int wire_out_run(struct wire_out *o, const struct store_run *r);
int wire_out_device(struct wire_out *o, const struct store_device_info *d);
int wire_out_packet(struct wire_out *o, const struct store_trace_packet *p);
/* A piece of a device's bytes; data NULL: len bytes of zeros. */
int wire_out_piece(struct wire_out *o, uint64_t off, const void *data, size_t len);
int wire_out_damage(struct wire_out *o, const struct store_damage *d);
int wire_out_activity(struct wire_out *o, const struct store_activity *a);
int wire_out_run_space(struct wire_out *o, const struct store_run_space *r);
int wire_out_run_id(struct wire_out *o, int64_t id);
int wire_out_counts(struct wire_out *o, const int64_t counts[3]);
int wire_out_space(struct wire_out *o, const struct store_space *sp);
int wire_out_hello(struct wire_out *o, const char *path, int schema, const char *store_id);
/* Ends the reply: its result and message, more and next; the frame's
 * length (the bytes of o->p to send). */
size_t wire_out_end(struct wire_out *o, int rc, const char *msg, int more, uint64_t next);
/* A bye frame into buf (4 + WIRE_MSG_MAX + 8 bytes at least): its length. */
size_t wire_bye(uint8_t *buf, const char *reason);

/* What a reply says besides its repeated items. */
struct wire_reply {
	int bye;                       /* a bye frame: why in msg */
	int rc;                        /* the result: 0 or a STORE_E* code */
	char msg[WIRE_MSG_MAX + 1];
	int more;
	uint64_t next;
	int64_t run_id;                /* LATEST_RUN */
	int64_t counts[3];             /* COUNT_STATES */
	struct store_space space;      /* SPACE */
	char path[4096];               /* HELLO */
	int32_t schema;
	char store_id[33];
	int singles;                   /* single items seen (run id, counts, space, hello) */
};
/* The repeated items, as they come (NULL: that item is refused); a
 * non-zero return stops the parse and is returned. */
struct wire_reply_cb {
	int (*run)(void *ctx, const struct store_run *r);
	int (*device)(void *ctx, const struct store_device_info *d);
	int (*packet)(void *ctx, const struct store_trace_packet *p);
	int (*piece)(void *ctx, uint64_t off, const void *data, size_t len);
	int (*damage)(void *ctx, const struct store_damage *d);
	int (*activity)(void *ctx, const struct store_activity *a);
	int (*run_space)(void *ctx, const struct store_run_space *r);
};
/* The reader of a malformed frame's result (never a STORE_E* code). */
#define WIRE_BAD (-1000)
/* A reply's payload to the request rq: 0 (out says the result), a
 * callback's non-zero return, or WIRE_BAD with why. */
int wire_reply_parse(const struct wire_request *rq, const uint8_t *p, size_t n, const struct wire_reply_cb *cb,
                     void *ctx, struct wire_reply *out, char *why, size_t whylen);

#endif
