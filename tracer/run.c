/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Running a program under heaptrace (`heaptrace run`): it is started
   (launch.c) and traced by the event loop until it and every process it
   forked are gone, and heaptrace's exit status is then the program's.
   SIGTERM, SIGHUP and SIGINT to heaptrace are the program's (forward.c):
   the first reaches it exactly once; a second makes heaptrace detach
   (detach.c), write the profile, and wait for the program, which runs on
   untraced, to have its status. A sink's tracer_request_detach ends the
   tracing the same way. */
#include "tracer/session.h"

#include <signal.h>
#include <sys/wait.h>

#include "tracer/tracer.h"

int
tracer_run(const struct ht_options *opt, char *const argv[],
	   const struct tracer_sink *sink, struct tracer_result *res,
	   char *err, size_t errlen)
{
	int rc = tracer_check_program(argv, err, errlen);
	if (rc)
		return rc;
	struct tracer t;
	tracer_init(&t, opt, sink);
	tracer_watch_install(&t, sink);

	/* The terminal's SIGQUIT is the target's to handle; our dying of it
	   would leave the program untraced. */
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_quit;
	struct forward_saved old_stop;
	int err_fd = -1;
	rc = launch_spawn(&t, argv, &err_fd, err, errlen);
	if (rc) {
		tracer_watch_finish(&t);
		tracer_fini(&t);
		return rc;
	}
	forward_install(&t, &old_stop);
	sigaction(SIGQUIT, &ign, &old_quit);
	tracer_loop(&t);
	if (forward_detach_asked() || loop_detach_requested()) {
		detach_all(&t);
		forward_after_detach();
	}
	if (!t.target_done) {
		/* Detached (at exec, or at a signal): still our child. */
		int status;
		if (waitpid(t.target, &status, 0) == t.target)
			tracer_record_result(&t, status);
	}
	forward_restore(&old_stop);
	sigaction(SIGQUIT, &old_quit, NULL);

	tracer_watch_finish(&t);
	*res = t.result;
	tracer_fini(&t);
	return launch_result(err_fd, argv, err, errlen);
}
