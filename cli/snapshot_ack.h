/* SPDX-License-Identifier: GPL-2.0-or-later */
/* How a tracer tells `heaptrace snapshot` which file its request produced:
   a one-line acknowledgement file per traced process, replaced atomically
   at each snapshot written on demand, removed when the profile ends. */
#ifndef HT_CLI_SNAPSHOT_ACK_H
#define HT_CLI_SNAPSHOT_ACK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The acknowledgement file of process TARGET traced by heaptrace TRACER,
   malloc'd. */
char *snapshot_ack_path(pid_t tracer, pid_t target);
/* From the tracer: snapshot number N of TARGET went to PATH (OK), or
   failed with the one-line reason PATH (not OK). Returns 0 or -errno. */
int snapshot_ack_publish(pid_t target, unsigned n, bool ok, const char *path);
/* From the tracer: TARGET's profile ended; its acknowledgement goes. */
void snapshot_ack_remove(pid_t target);
/* From `heaptrace snapshot`: the last acknowledgement of TARGET by
   TRACER, which must be a regular file owned by OWNER. Returns 0 with its
   number in *N, *OK and the path or reason in TEXT (LEN bytes), -ENOENT
   when there is none yet, or another -errno. */
int snapshot_ack_read(pid_t tracer, pid_t target, uid_t owner, unsigned *n,
		      bool *ok, char *text, size_t len);

#endif
