# SPDX-License-Identifier: GPL-2.0-or-later
# Writes a C file of N functions (about 25 lines each) for the cc1 benchmark:
# loops, switches, list walks and recursion, so that -O2 has real work and
# the compiler allocates as it does on ordinary code. Deterministic.
# Usage: awk -v N=150 -f bench/gen-c.awk > big.c
BEGIN {
	print "struct item { int key; double w; struct item *next; char name[16]; };"
	for (f = 0; f < N; f++) {
		printf "static const int weights_%d[8] = {", f
		for (k = 0; k < 8; k++)
			printf "%d%s", (f * 31 + k * 7) % 97, k < 7 ? ", " : ""
		print "};"
		printf "double step_%d(const struct item *it, int n, const double *v)\n{\n", f
		print "\tdouble acc = 0.0;"
		print "\tfor (int i = 0; i < n; i++) {"
		printf "\t\tswitch ((i + %d) %% 5) {\n", f
		for (c = 0; c < 5; c++)
			printf "\t\tcase %d: acc += v[i] * %d.5 - weights_%d[i & 7]; break;\n", c, (f + c) % 13, f
		print "\t\t}"
		print "\t\tfor (int j = 0; j < (i & 3); j++)"
		print "\t\t\tacc = acc * 0.5 + (double)j;"
		print "\t}"
		print "\tfor (; it; it = it->next) {"
		print "\t\tif (it->key > n)"
		print "\t\t\tacc -= it->w;"
		print "\t\telse"
		print "\t\t\tacc += it->w * it->name[it->key & 15];"
		print "\t}"
		if (f > 0)
			printf "\tif (n > %d)\n\t\tacc += step_%d(it, n - 1, v);\n", f % 17 + 3, f - 1
		print "\treturn acc;\n}\n"
	}
}
