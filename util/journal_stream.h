/*
 * journal_stream.h - is stderr systemd's journal?  A service started by
 * systemd with StandardError=journal gets JOURNAL_STREAM="DEV:INO" naming
 * the stream it was given (systemd.exec(5)); if stderr is still that
 * stream, what it writes there would reach the journal without fields,
 * and a program sends structured entries (sd_journal_send) instead.
 * No dependencies.
 */
#ifndef PROFSVC_JOURNAL_STREAM_H
#define PROFSVC_JOURNAL_STREAM_H

/* 1 when stderr is the journal's stream, else 0. */
int journal_stream_is_stderr(void);

#endif
