/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The cache directory's name and creation (cachedir.h). */
#include "cachedir.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "xalloc.h"

char *
ht_cache_dir(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	if (xdg && xdg[0] == '/')
		return ht_xasprintf("%s/heaptrace", xdg);
	if (home && home[0] == '/')
		return ht_xasprintf("%s/.cache/heaptrace", home);
	return NULL;
}

bool
ht_make_dirs(const char *dir)
{
	char *p = ht_xstrdup(dir);
	bool ok = true;

	for (char *s = p + 1; ok && *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST)
			ok = false;
		*s = '/';
	}
	if (ok && mkdir(p, 0700) != 0 && errno != EEXIST)
		ok = false;
	free(p);
	struct stat st;
	return ok && stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}
