/* SPDX-License-Identifier: MIT */
/*
 * The raw-socket baseline for the tcp provider: the same exchanges as
 * fi_pingpong, over one plain TCP connection, with nothing between the
 * program and the kernel. A provider cannot beat this; how close it
 * comes is its overhead.
 *
 *   tcp_raw [-x pingpong|bw] [-S SIZE] [-I ITERS] [-P PORT] [-b ADDR]
 *           [SERVER]
 *
 * Without SERVER it listens (on -b ADDR, default any) and serves one
 * client. pingpong: SIZE bytes each way per iteration, both sides polling
 * the socket with non-blocking receives as a provider's progress loop
 * does (TCP_NODELAY). bw: the client writes ITERS messages of SIZE, the
 * server reads them all and answers one byte. Output is fi_pingpong's
 * table (bytes, #sent, #ack, total, time, MB/sec, usec/xfer, Mxfers/sec),
 * usec/xfer being half a round trip for pingpong, so contrib/bench
 * scripts read both the same way.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct raw_opts {
	const char *mode;
	size_t size;
	long iters;
	const char *port;
	const char *bind_addr;
	const char *server;
};

static double raw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void raw_die(const char *what)
{
	perror(what);
	exit(1);
}

static int raw_socket(const struct raw_opts *o)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	int fd, one = 1, lfd;

	hints.ai_flags = o->server ? 0 : AI_PASSIVE;
	if (getaddrinfo(o->server ? o->server : o->bind_addr, o->port, &hints,
			&ai))
		raw_die("getaddrinfo");
	fd = socket(ai->ai_family, SOCK_STREAM, 0);
	if (fd < 0)
		raw_die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (o->server) {
		if (connect(fd, ai->ai_addr, ai->ai_addrlen))
			raw_die("connect");
	} else {
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 1))
			raw_die("listen");
		lfd = fd;
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			raw_die("accept");
		close(lfd);
	}
	freeaddrinfo(ai);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void raw_send_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			raw_die("send");
		buf += n;
		len -= (size_t)n;
	}
}

/* Receive exactly len bytes, polling like a provider's progress loop. */
static void raw_recv_poll(int fd, char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = recv(fd, buf, len, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			raw_die("recv");
		buf += n;
		len -= (size_t)n;
	}
}

static void raw_recv_all(int fd, char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = recv(fd, buf, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			raw_die("recv");
		buf += n;
		len -= (size_t)n;
	}
}

static void raw_report(size_t size, long iters, double t, double bytes,
		       double xfers)
{
	printf("%-7s %-7s %-7s %-10s %-10s %-10s %-11s %-s\n", "bytes",
	       "#sent", "#ack", "total", "time", "MB/sec", "usec/xfer",
	       "Mxfers/sec");
	char secs[32];

	snprintf(secs, sizeof(secs), "%.2fs", t);
	printf("%-7zu %-7ld =%-6ld %-10.0f %-10s %-10.2f %-11.2f %.2f\n",
	       size, iters, iters, bytes, secs, bytes / t / 1e6,
	       t * 1e6 / xfers, xfers / t / 1e6);
}

static void raw_pingpong(int fd, const struct raw_opts *o, char *buf)
{
	long warmup = o->iters / 10 + 1, i;
	double t0 = 0;

	for (i = -warmup; i < o->iters; i++) {
		if (i == 0)
			t0 = raw_now();
		if (o->server) {
			raw_send_all(fd, buf, o->size);
			raw_recv_poll(fd, buf, o->size);
		} else {
			raw_recv_poll(fd, buf, o->size);
			raw_send_all(fd, buf, o->size);
		}
	}
	if (o->server)
		raw_report(o->size, o->iters, raw_now() - t0,
			   2.0 * (double)o->size * (double)o->iters,
			   2.0 * (double)o->iters);
}

static void raw_bw(int fd, const struct raw_opts *o, char *buf)
{
	double t0 = raw_now();
	char ack = 1;
	long i;

	for (i = 0; i < o->iters; i++) {
		if (o->server)
			raw_send_all(fd, buf, o->size);
		else
			raw_recv_all(fd, buf, o->size);
	}
	if (!o->server) {
		raw_send_all(fd, &ack, 1);
		return;
	}
	raw_recv_all(fd, &ack, 1);
	raw_report(o->size, o->iters, raw_now() - t0,
		   (double)o->size * (double)o->iters, (double)o->iters);
}

int main(int argc, char **argv)
{
	struct raw_opts o = { .mode = "pingpong", .size = 64, .iters = 10000,
			      .port = "47593", .bind_addr = NULL };
	char *buf;
	int c, fd;

	while ((c = getopt(argc, argv, "x:S:I:P:b:h")) != -1) {
		switch (c) {
		case 'x': o.mode = optarg; break;
		case 'S': o.size = strtoull(optarg, NULL, 0); break;
		case 'I': o.iters = atol(optarg); break;
		case 'P': o.port = optarg; break;
		case 'b': o.bind_addr = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-x pingpong|bw] [-S SIZE] "
				"[-I ITERS] [-P PORT] [-b ADDR] [SERVER]\n",
				argv[0]);
			return 2;
		}
	}
	o.server = optind < argc ? argv[optind] : NULL;
	buf = calloc(1, o.size ? o.size : 1);
	if (!buf)
		raw_die("calloc");
	fd = raw_socket(&o);
	if (!strcmp(o.mode, "bw"))
		raw_bw(fd, &o, buf);
	else
		raw_pingpong(fd, &o, buf);
	close(fd);
	free(buf);
	return 0;
}
