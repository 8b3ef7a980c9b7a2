/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a program gets when it starts (tests/run/privileges.sh): prints
   "euid N egid N caps HEX" (its effective user and group IDs and its
   effective capability set) and exits 0. A set-user-ID or file-capability
   copy of it prints more than the plain one, unless the kernel withheld
   its privileges. */
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int
main(void)
{
	struct __user_cap_header_struct head = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = { { 0 } };
	if (syscall(SYS_capget, &head, data) < 0) {
		perror("capget");
		return 1;
	}
	uint64_t eff = (uint64_t)data[1].effective << 32 | data[0].effective;
	printf("euid %ld egid %ld caps %llx\n", (long)geteuid(),
	       (long)getegid(), (unsigned long long)eff);
	return 0;
}
