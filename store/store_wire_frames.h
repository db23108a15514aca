/*
 * store_wire_frames.h - what the read service's writer
 * (store_wire_write.c) and reader (store_wire.c) agree on beyond
 * store_wire.h: a frame's kind and the tags of a reply's items.  Private
 * to those two files.  Calls nothing.
 */
#ifndef PROFSVC_STORE_WIRE_FRAMES_H
#define PROFSVC_STORE_WIRE_FRAMES_H

enum wire_kind { WIRE_REPLY = 0x52, WIRE_BYE = 0x42 };

enum wire_tag {
	WIRE_T_END = 0,
	WIRE_T_RUN,
	WIRE_T_DEVICE,
	WIRE_T_PACKET,
	WIRE_T_DATA,
	WIRE_T_HOLE,
	WIRE_T_DAMAGE,
	WIRE_T_ACTIVITY,
	WIRE_T_RUN_SPACE,
	WIRE_T_RUN_ID,
	WIRE_T_COUNTS,
	WIRE_T_SPACE,
	WIRE_T_HELLO,
	WIRE_T__TAGS
};

#endif
