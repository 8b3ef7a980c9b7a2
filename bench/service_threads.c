/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A service of many threads for bench/top_services.sh: a pool of THREADS
   threads (1000 by default) all waiting in accept() on one listening
   socket on 127.0.0.1, each serving one connection at a time, HTTP/1.0 or
   1.1 with keep-alive, so that a load generator such as `ab -k -c 1000`
   keeps every thread of the pool busy at once. Each request allocates as
   a real handler would: a copy of the request, a scratch buffer of varied
   size for the reply, and one block of varied size replacing a random one
   among the thread's kept blocks (a live set that changes all the time;
   its size moves with the mix of block sizes). The reply's body has a
   fixed length, which load generators check.
   The port, chosen by the kernel (never a port in use), is written in
   decimal to PORT_FILE once every thread is ready.
   Usage: service_threads THREADS PORT_FILE */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define KEPT 16
#define REQUEST_MAX 8192
#define BODY_LEN 256
/* Small stacks: a thousand threads of the default 8 MiB would reserve
   8 GiB of address space for nothing. */
#define STACK_SIZE (256 * 1024)

struct worker {
	int listener;
	uint64_t seed;
	void *kept[KEPT];
	pthread_barrier_t *ready;
};

static uint64_t
next_random(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* The allocating steps are functions of their own, kept out of line, so
   that the sites a profile shows have recognisable names. */
__attribute__((noinline)) static char *
copy_request(const char *req, size_t len)
{
	char *c = malloc(len + 1);
	if (!c)
		abort();
	memcpy(c, req, len);
	c[len] = '\0';
	return c;
}

/* 16 B to 8 KiB, each power of two equally likely, plus odd bytes. */
static size_t
varied_size(uint64_t r)
{
	return ((size_t)16 << (r % 10)) + (r >> 8) % 61;
}

__attribute__((noinline)) static void
replace_kept(struct worker *w, uint64_t r)
{
	int i = (int)((r >> 32) % KEPT);
	size_t size = varied_size(r);
	char *p = malloc(size);
	if (!p)
		abort();
	p[0] = (char)r;
	p[size - 1] = (char)(r >> 8);
	free(w->kept[i]);
	w->kept[i] = p;
}

__attribute__((noinline)) static char *
reply_buffer(uint64_t r, size_t *cap)
{
	*cap = varied_size(r >> 16) + BODY_LEN + 256;
	char *p = malloc(*cap);
	if (!p)
		abort();
	return p;
}

static int
write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Whether the connection stays open after REQ's reply: HTTP/1.1 unless
   it says close, HTTP/1.0 only when it asks for keep-alive. */
static int
keeps_alive(const char *req)
{
	if (strcasestr(req, "connection: close"))
		return 0;
	if (strstr(req, "HTTP/1.1"))
		return 1;
	return strcasestr(req, "connection: keep-alive") != NULL;
}

/* One request of LEN bytes at REQ answered on FD: 0, or -1 when the
   connection is to be closed. */
static int
serve_request(struct worker *w, int fd, const char *req, size_t len)
{
	uint64_t r = next_random(&w->seed);
	char *copy = copy_request(req, len);
	int keep = keeps_alive(copy);
	replace_kept(w, r);
	size_t cap;
	char *out = reply_buffer(r, &cap);
	int head = snprintf(out, cap, "HTTP/1.1 200 OK\r\n"
			    "Content-Type: text/plain\r\n"
			    "Content-Length: %d\r\n"
			    "Connection: %s\r\n\r\n", BODY_LEN,
			    keep ? "keep-alive" : "close");
	memset(out + head, 'x', BODY_LEN - 1);
	out[head + BODY_LEN - 1] = '\n';
	int rc = write_all(fd, out, (size_t)head + BODY_LEN);
	free(out);
	free(copy);
	return rc || !keep ? -1 : 0;
}

/* The requests of one connection, until it closes or asks to. */
static void
serve_connection(struct worker *w, int fd)
{
	char buf[REQUEST_MAX];
	size_t have = 0;
	for (;;) {
		char *end = have ? memmem(buf, have, "\r\n\r\n", 4) : NULL;
		if (end) {
			size_t len = (size_t)(end - buf) + 4;
			if (serve_request(w, fd, buf, len))
				return;
			memmove(buf, buf + len, have - len);
			have -= len;
			continue;
		}
		if (have == sizeof(buf))
			return; /* a request too long: not ours to serve */
		ssize_t n = recv(fd, buf + have, sizeof(buf) - have, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		have += (size_t)n;
	}
}

static void *
work(void *arg)
{
	struct worker *w = arg;
	for (int i = 0; i < KEPT; i++)
		replace_kept(w, next_random(&w->seed));
	pthread_barrier_wait(w->ready);
	for (;;) {
		int fd = accept(w->listener, NULL, NULL);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED ||
			    errno == EMFILE || errno == ENFILE)
				continue;
			perror("accept");
			exit(1);
		}
		serve_connection(w, fd);
		close(fd);
	}
	return NULL;
}

static int
listen_local(int *port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(fd, 4096) ||
	    getsockname(fd, (struct sockaddr *)&a, &len)) {
		close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static int
write_port(const char *path, int port)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%d\n", port);
	return fclose(f);
}

int
main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s THREADS PORT_FILE\n", argv[0]);
		return 2;
	}
	char *end;
	long threads = strtol(argv[1], &end, 10);
	if (*end || threads < 1 || threads > 100000) {
		fprintf(stderr, "%s: THREADS from 1 to 100000\n", argv[0]);
		return 2;
	}
	int port, fd = listen_local(&port);
	if (fd < 0) {
		perror("listen on 127.0.0.1");
		return 1;
	}
	pthread_barrier_t ready;
	pthread_barrier_init(&ready, NULL, (unsigned)threads + 1);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK_SIZE);
	struct worker *w = calloc((size_t)threads, sizeof(*w));
	if (!w)
		abort();
	for (long i = 0; i < threads; i++) {
		pthread_t t;
		w[i].listener = fd;
		w[i].seed = 0x9e3779b97f4a7c15u * (uint64_t)(i + 1);
		w[i].ready = &ready;
		if (pthread_create(&t, &attr, work, &w[i])) {
			fprintf(stderr, "%s: pthread_create failed at thread "
				"%ld\n", argv[0], i);
			return 1;
		}
	}
	pthread_barrier_wait(&ready);
	if (write_port(argv[2], port)) {
		perror(argv[2]);
		return 1;
	}
	for (;;)
		pause();
}
