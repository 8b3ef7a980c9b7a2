#!/usr/bin/perl
# SPDX-License-Identifier: GPL-2.0-or-later
# A perl HTTP service for bench/top_services.sh: one process serving one
# connection at a time on 127.0.0.1 (a port the kernel picks, written in
# decimal to PORT_FILE once it listens), each request answered and the
# connection closed, as a load generator such as `ab -c 4` expects. A
# request does hash work as a small web application would: a hash of 200
# string keys built for the request, and one request in eight leaves its
# hash in a cache of 64 entries (an older one dropped), so the live heap
# changes all the time. The reply's body has a fixed length, which load
# generators check.
# Usage: perl bench/service_http.pl PORT_FILE
use strict;
use warnings;
use IO::Socket::INET;

my $file = shift or die "usage: $0 PORT_FILE\n";
my $listener = IO::Socket::INET->new(
	LocalAddr => '127.0.0.1', LocalPort => 0, Proto => 'tcp',
	Listen => 1024, ReuseAddr => 1) or die "listen on 127.0.0.1: $@\n";
open(my $out, '>', $file) or die "$file: $!\n";
print $out $listener->sockport, "\n";
close($out) or die "$file: $!\n";

my $body = ('x' x 255) . "\n";
my @cache;
my $served = 0;

# The request's work: its hash, and the cache's share of it.
sub handle {
	my ($path) = @_;
	my %h;
	for my $i (1 .. 200) {
		$h{"$path-$served-$i"} = "value " . ($i * 7) . " of request $served";
	}
	$cache[$served & 63] = {%h} if ($served & 7) == 0;
	$served++;
	return scalar(keys %h);
}

while (1) {
	my $c = $listener->accept or next;
	my $request = '';
	while ($request !~ /\r\n\r\n/) {
		my $n = sysread($c, $request, 4096, length $request);
		last if !$n;
	}
	if ($request =~ m{^GET (\S+)}) {
		handle($1);
		my $reply = "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n" .
			"Content-Length: " . length($body) . "\r\n" .
			"Connection: close\r\n\r\n" . $body;
		syswrite($c, $reply);
	}
	close($c);
}
