# SPDX-License-Identifier: GPL-2.0-or-later
# The perl allocation storm of tests/run/survive.sh: hash, string and
# array work (perl allocates through malloc for each of them) for a fixed
# amount of work, whose result is checked against itself and printed as
#
#     perl-storm: KEYS keys, checksum N
#
# then exit 7. The same work is repeated in rounds for as long as stdin
# has not reached end of file (looked at between rounds without blocking:
# with stdin from /dev/null there is one round), every round giving the
# first round's result, so that one script serves a fixed run (`heaptrace
# run`) and a process to attach to. "perl-storm: running" on stderr once
# the first round starts; a round with another result prints one line on
# stderr and exits 1. The result does not depend on hash order (sums are
# taken over sorted keys), so it is the same whatever PERL_HASH_SEED.
use strict;
use warnings;

my $n = shift // 30000;

sub round_of_work {
	my %h;
	for my $i (1 .. $n) {
		my $k = "k" . ($i * 7919 % 100003);
		$h{$k} .= "x" x (1 + $i % 97);
	}
	# deletions and regrowth: freed strings, rehashing
	for my $i (1 .. $n) {
		delete $h{"k" . ($i * 31 % 100003)} if $i % 3 == 0;
	}
	my @list = map { [ $_, length $h{$_} ] } sort keys %h;
	my $joined = join ",", map { $_->[0] . "=" . $_->[1] } @list;
	my $sum = 0;
	$sum = ($sum * 131 + ord($_)) % 1000000007 for split //, $joined;
	return (scalar(keys %h), $sum);
}

print STDERR "perl-storm: running\n";
my ($keys, $sum) = round_of_work();
my $rounds = 1;
for (;;) {
	my $rin = '';
	vec($rin, fileno(STDIN), 1) = 1;
	my $ready = select(my $rout = $rin, undef, undef, 0);
	if ($ready > 0) {
		my $got = sysread(STDIN, my $buf, 4096);
		last if !$got;
	}
	my ($k, $s) = round_of_work();
	if ($k != $keys || $s != $sum) {
		print STDERR "perl-storm: round $rounds gave $k keys, checksum $s\n";
		exit 1;
	}
	$rounds++;
}
print "perl-storm: $keys keys, checksum $sum\n";
print STDERR "perl-storm: $rounds rounds\n" if $rounds > 1;
exit 7;
