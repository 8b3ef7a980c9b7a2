#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0-or-later
# A long-running perl service for bench/attach.sh: steady hash work, one
# work unit being a hash of 500 string keys built and then cleared, while
# a few older hashes stay alive (the interpreter's heap does not just
# bounce between two states). About every 100 ms it writes "UNITS SECONDS\n"
# in place at the start of the file named by its argument (SECONDS from
# CLOCK_MONOTONIC), so that bench/attach.sh reads a rate on the service's
# own clock without touching the process.
# Usage: perl bench/service.pl COUNTER_FILE
use strict;
use warnings;
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC);

my $file = shift or die "usage: $0 COUNTER_FILE\n";
open(my $out, '+>', $file) or die "$file: $!\n";

my @kept;
my $units = 0;
my $next = 0;
while (1) {
	my %h;
	for my $i (1 .. 500) {
		$h{"key-$units-$i"} = "value " . ($i * 7) . " of unit $units";
	}
	# One hash in sixteen outlives its unit, in a ring of eight.
	$kept[($units >> 4) & 7] = {%h} if ($units & 15) == 0;
	%h = ();
	$units++;
	# The clock is read once per unit (a fraction of a millisecond
	# natively), so a slowed-down service still reports on time.
	my $now = clock_gettime(CLOCK_MONOTONIC);
	if ($now >= $next) {
		# Fixed width: each write covers the previous one whole.
		sysseek($out, 0, 0);
		syswrite($out, sprintf("%20d %22.9f\n", $units, $now));
		$next = $now + 0.1;
	}
}
