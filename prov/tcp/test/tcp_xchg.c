/* SPDX-License-Identifier: MIT */
/*
 * One side of a two-process exchange over weft's tcp provider, run by
 * test_tcp_netns.sh in two network namespaces. Names travel through files
 * in a shared directory (the namespaces share the filesystem). Modes:
 *
 *   xchg DIR a|b SIZE COUNT   COUNT messages of SIZE each way, data
 *                             checked; prints "data ok"
 *   sink DIR                  receives 16 MiB messages until killed
 *   source DIR                sends 16 MiB messages to the sink until an
 *                             error completion; prints its error and how
 *                             long after the last success it came
 *   recvkill DIR              posts one 256 MiB receive and waits for its
 *                             completion (its sender gets killed)
 *   sendslow DIR              sends 256 MiB to recvkill
 *   connect IP PORT           sends to IP:PORT (a peer behind a
 *                             firewall) and blocks in fi_cq_sread; prints
 *                             the error, wall and CPU time of the wait
 *
 * Output lines are what the script checks; exit status 0 unless
 * something unexpected happened.
 */
#include "weft/compat.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "weft/core.h"

__attribute__((used)) static struct fi_provider *(*x_pull)(void) =
	tcp_prov_init;

#define X_BIG (16u << 20)
#define X_HUGE (256u << 20)

struct x_ctx {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	char name[64];
	size_t namelen;
	fi_addr_t peer;
};

static double x_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void x_die(const char *what, int err)
{
	printf("FAIL %s: %s\n", what, fi_strerror(err < 0 ? -err : err));
	fflush(stdout);
	exit(1);
}

static void x_open(struct x_ctx *x, enum fi_wait_obj wait)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED,
				      .wait_obj = wait, .size = 256 };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	int ret;

	hints->caps = FI_MSG;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup("tcp");
	hints->addr_format = FI_SOCKADDR_IN;
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &x->info);
	fi_freeinfo(hints);
	if (ret)
		x_die("fi_getinfo", ret);
	if ((ret = fi_fabric(x->info->fabric_attr, &x->fabric, NULL)) ||
	    (ret = fi_domain(x->fabric, x->info, &x->domain, NULL)) ||
	    (ret = fi_av_open(x->domain, &av_attr, &x->av, NULL)) ||
	    (ret = fi_cq_open(x->domain, &cq_attr, &x->cq, NULL)) ||
	    (ret = fi_endpoint(x->domain, x->info, &x->ep, NULL)) ||
	    (ret = fi_ep_bind(x->ep, &x->av->fid, 0)) ||
	    (ret = fi_ep_bind(x->ep, &x->cq->fid, FI_TRANSMIT | FI_RECV)) ||
	    (ret = fi_enable(x->ep)))
		x_die("open", ret);
	x->namelen = sizeof(x->name);
	ret = fi_getname(&x->ep->fid, x->name, &x->namelen);
	if (ret)
		x_die("fi_getname", ret);
}

static void x_close(struct x_ctx *x)
{
	fi_close(&x->ep->fid);
	fi_close(&x->cq->fid);
	fi_close(&x->av->fid);
	fi_close(&x->domain->fid);
	fi_close(&x->fabric->fid);
	fi_freeinfo(x->info);
}

/* Publish our name as DIR/ROLE.name (renamed into place: atomic). */
static void x_publish(struct x_ctx *x, const char *dir, const char *role)
{
	char tmp[512], path[512];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s/%s.tmp", dir, role);
	snprintf(path, sizeof(path), "%s/%s.name", dir, role);
	f = fopen(tmp, "w");
	if (!f || fwrite(x->name, 1, x->namelen, f) != x->namelen ||
	    fclose(f) || rename(tmp, path))
		x_die("publish name", EIO);
}

static void x_lookup(struct x_ctx *x, const char *path)
{
	char buf[64];
	double deadline = x_now() + 20;
	size_t n = 0;
	FILE *f;

	while (!(f = fopen(path, "r"))) {
		if (x_now() > deadline)
			x_die("peer name", ETIMEDOUT);
		usleep(10000);
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (fi_av_insert(x->av, buf, 1, &x->peer, 0, NULL) != 1)
		x_die("fi_av_insert", EINVAL);
	(void)n;
}

/* One completion (busy polling), error or not. */
static int x_wait(struct x_ctx *x, struct fi_cq_tagged_entry *e,
		  struct fi_cq_err_entry *err, double timeout_s)
{
	double deadline = x_now() + timeout_s;
	ssize_t n;

	for (;;) {
		n = fi_cq_read(x->cq, e, 1);
		if (n == 1)
			return 0;
		if (n == -FI_EAVAIL) {
			fi_cq_readerr(x->cq, err, 0);
			return err->err;
		}
		if (x_now() > deadline)
			return -ETIMEDOUT;
	}
}

static void x_fill(uint8_t *b, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = (uint8_t)(i * 13 + seed + (i >> 10));
}

static int x_check(const uint8_t *b, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != (uint8_t)(i * 13 + seed + (i >> 10)))
			return -1;
	return 0;
}

static ssize_t x_post(struct x_ctx *x, bool send, void *buf, size_t len,
		      void *ctx)
{
	ssize_t r;

	do {
		r = send ? fi_send(x->ep, buf, len, NULL, x->peer, ctx) :
			   fi_recv(x->ep, buf, len, NULL, FI_ADDR_UNSPEC, ctx);
		if (r == -FI_EAGAIN) {
			struct fi_cq_tagged_entry dummy;

			(void)fi_cq_read(x->cq, &dummy, 0);
		}
	} while (r == -FI_EAGAIN);
	return r;
}

static int x_xchg(const char *dir, const char *side, size_t size, int count)
{
	uint8_t *sbuf = malloc(size), *rbuf = malloc(size);
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	struct fi_context sctx, rctx;
	struct x_ctx x;
	char path[512];
	bool a = !strcmp(side, "a");
	int i, got;

	x_open(&x, FI_WAIT_NONE);
	x_publish(&x, dir, side);
	snprintf(path, sizeof(path), "%s/%s.name", dir, a ? "b" : "a");
	x_lookup(&x, path);
	printf("name %s\n", x.info->domain_attr->name);
	for (i = 0; i < count; i++) {
		x_fill(sbuf, size, (unsigned)i + (a ? 0 : 1000));
		memset(rbuf, 0, size);
		if (x_post(&x, false, rbuf, size, &rctx) ||
		    x_post(&x, true, sbuf, size, &sctx))
			x_die("post", EIO);
		for (got = 0; got < 2; got++)
			if (x_wait(&x, &e, &err, 30))
				x_die("exchange", err.err);
		if (x_check(rbuf, size, (unsigned)i + (a ? 1000 : 0)))
			x_die("data check", EIO);
	}
	printf("data ok: %d messages of %zu bytes each way\n", count, size);
	x_close(&x);
	free(sbuf);
	free(rbuf);
	return 0;
}

static int x_sink(const char *dir)
{
	uint8_t *buf = malloc(X_BIG);
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	struct fi_context ctx;
	struct x_ctx x;

	x_open(&x, FI_WAIT_NONE);
	x_publish(&x, dir, "sink");
	for (;;) {
		if (x_post(&x, false, buf, X_BIG, &ctx))
			x_die("post", EIO);
		if (x_wait(&x, &e, &err, 60))
			x_die("sink", err.err);
	}
	return 0;
}

/* Stream to the sink until it dies; report the error completion. */
static int x_source(const char *dir)
{
	uint8_t *buf = malloc(X_BIG);
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	struct fi_context ctx[4];
	struct x_ctx x;
	char path[512];
	double last = 0;
	int i, ret, done = 0;

	memset(buf, 7, X_BIG);
	x_open(&x, FI_WAIT_NONE);
	snprintf(path, sizeof(path), "%s/sink.name", dir);
	x_lookup(&x, path);
	for (i = 0; i < 4; i++)
		if (x_post(&x, true, buf, X_BIG, &ctx[i]))
			x_die("post", EIO);
	for (;;) {
		ret = x_wait(&x, &e, &err, 60);
		if (ret == -ETIMEDOUT) {
			printf("FAIL no error completion within 60 s\n");
			free(buf);
			return 1;
		}
		if (ret) {
			printf("error completion %s %.0f ms after the last "
			       "success\n", fi_strerror(ret),
			       (x_now() - last) * 1000);
			fflush(stdout);
			x_close(&x);
			free(buf);
			return 0;
		}
		last = x_now();
		if (++done == 4) {
			printf("streaming\n");
			fflush(stdout);
		}
		if (x_post(&x, true, buf, X_BIG, e.op_context))
			x_die("post", EIO);
	}
}

static int x_recvkill(const char *dir)
{
	uint8_t *buf = malloc(X_HUGE);
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	struct fi_context ctx;
	struct x_ctx x;
	int ret;

	x_open(&x, FI_WAIT_NONE);
	x_publish(&x, dir, "recv");
	if (x_post(&x, false, buf, X_HUGE, &ctx))
		x_die("post", EIO);
	ret = x_wait(&x, &e, &err, 60);
	if (ret == -ETIMEDOUT) {
		printf("FAIL no completion within 60 s\n");
		return 1;
	}
	printf("receive ended: %s\n", ret ? fi_strerror(ret) : "success");
	x_close(&x);
	free(buf);
	return 0;
}

static int x_sendslow(const char *dir)
{
	uint8_t *buf = malloc(X_HUGE);
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	struct fi_context ctx;
	struct x_ctx x;
	char path[512];

	memset(buf, 3, X_HUGE);
	x_open(&x, FI_WAIT_NONE);
	snprintf(path, sizeof(path), "%s/recv.name", dir);
	x_lookup(&x, path);
	if (x_post(&x, true, buf, X_HUGE, &ctx))
		x_die("post", EIO);
	printf("sending\n");
	fflush(stdout);
	(void)x_wait(&x, &e, &err, 60);
	return 0;
}

/* Toward a firewalled peer: blocked in fi_cq_sread, not spinning. */
static int x_connect(const char *ip, const char *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct fi_cq_err_entry err;
	struct fi_cq_tagged_entry e;
	struct fi_context ctx;
	struct rusage r0, r1;
	struct x_ctx x;
	char msg[64] = "anyone there?";
	double t0, wall, cpu;
	ssize_t n;

	x_open(&x, FI_WAIT_FD);
	sa.sin_port = htons((uint16_t)atoi(port));
	if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1 ||
	    fi_av_insert(x.av, &sa, 1, &x.peer, 0, NULL) != 1)
		x_die("address", EINVAL);
	getrusage(RUSAGE_SELF, &r0);
	t0 = x_now();
	if (x_post(&x, true, msg, sizeof(msg), &ctx))
		x_die("post", EIO);
	do {
		n = fi_cq_sread(x.cq, &e, 1, NULL, 60000);
	} while (n == -FI_EAGAIN && x_now() - t0 < 60);
	wall = x_now() - t0;
	getrusage(RUSAGE_SELF, &r1);
	cpu = (double)(r1.ru_utime.tv_sec - r0.ru_utime.tv_sec +
		       r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) +
	      (double)(r1.ru_utime.tv_usec - r0.ru_utime.tv_usec +
		       r1.ru_stime.tv_usec - r0.ru_stime.tv_usec) / 1e6;
	if (n != -FI_EAVAIL) {
		printf("FAIL fi_cq_sread returned %zd\n", n);
		return 1;
	}
	fi_cq_readerr(x.cq, &err, 0);
	printf("error %s wall_ms %.0f cpu_ms %.0f\n", fi_strerror(err.err),
	       wall * 1000, cpu * 1000);
	x_close(&x);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 6 && !strcmp(argv[1], "xchg"))
		return x_xchg(argv[2], argv[3], strtoull(argv[4], NULL, 0),
			      atoi(argv[5]));
	if (argc >= 3 && !strcmp(argv[1], "sink"))
		return x_sink(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "source"))
		return x_source(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "recvkill"))
		return x_recvkill(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "sendslow"))
		return x_sendslow(argv[2]);
	if (argc >= 4 && !strcmp(argv[1], "connect"))
		return x_connect(argv[2], argv[3]);
	fprintf(stderr, "usage: %s xchg|sink|source|recvkill|sendslow DIR ...,"
		" or connect IP PORT\n", argv[0]);
	return 2;
}
