/* SPDX-License-Identifier: MIT */
/*
 * shm_instr: the instructions of one message round trip through the public
 * API, without idle polling, for callgrind (a benchmark, not a test). -p
 * picks another provider of the same process-local kind of test (tcp over
 * loopback: there the kernel's share of each message is not counted by
 * callgrind, the wall time per message includes it).
 *
 * Two endpoints of one process do what fi_pingpong does per message (the
 * sender fi_inject()s or fi_send()s, the receiver reads its completion with
 * fi_cq_read and reposts the receive), in turn, so every fi_cq_read finds
 * its message at once and the count does not depend on timing:
 *
 *   valgrind --tool=callgrind --collect-atstart=no \
 *     --toggle-collect=shm_instr_loop prov/shm/test/shm_instr [-m tagged] [-S size] [-I iters] [-t safe|domain]
 *
 * -t domain opens the domain FI_THREAD_DOMAIN (no locks), -t safe
 * FI_THREAD_SAFE; without -t, the provider's default (FI_THREAD_SAFE).
 * Instructions per message = collected Ir / (2 * iters); with
 * --toggle-collect=shm_instr_idle, Ir / iters = one empty fi_cq_read. Also prints the
 * wall time per message when run natively (single core, no cross-core
 * traffic: an upper bound of the software cost only).
 */
#include "weft/compat.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

static const char *prov = "shm";

struct side {
	struct fid_ep *ep;
	struct fid_cq *cq;
	fi_addr_t peer;
	char *sbuf;
	char *rbuf;
};

static bool tagged;
static size_t size = 64, inject_size;
static size_t rx_size = 1 << 20;
static long iters = 10000;
static enum fi_threading threading = FI_THREAD_UNSPEC;

#define CHK(x) do { long _r = (long)(x); if (_r < 0) { \
	fprintf(stderr, "%s: %s\n", #x, fi_strerror((int)-_r)); exit(1); } \
	} while (0)

static void post_rx(struct side *s)
{
	if (tagged)
		CHK(fi_trecv(s->ep, s->rbuf, rx_size, NULL, FI_ADDR_UNSPEC, 0x1,
			     0, s));
	else
		CHK(fi_recv(s->ep, s->rbuf, rx_size, NULL, FI_ADDR_UNSPEC, s));
}

/* While warming up, both sides progress: a provider that connects lazily
 * (tcp) needs its sender to run the handshake. Never during the count. */
static struct side *warm_other[2];

static void wait_comp(struct side *s)
{
	struct fi_cq_tagged_entry e;
	struct side *other = warm_other[0] == s ? warm_other[1] :
			     warm_other[1] == s ? warm_other[0] : NULL;
	ssize_t n;

	while ((n = fi_cq_read(s->cq, &e, 1)) == -FI_EAGAIN)
		if (other)
			(void)fi_cq_read(other->cq, &e, 0);
	CHK(n);
}

static void tx(struct side *s)
{
	if (size <= inject_size) {
		if (tagged)
			CHK(fi_tinject(s->ep, s->sbuf, size, s->peer, 0x1));
		else
			CHK(fi_inject(s->ep, s->sbuf, size, s->peer));
		return;
	}
	if (tagged)
		CHK(fi_tsend(s->ep, s->sbuf, size, NULL, s->peer, 0x1, s));
	else
		CHK(fi_send(s->ep, s->sbuf, size, NULL, s->peer, s));
	wait_comp(s);
}

/* One message each way per iteration; the toggle point for callgrind. */
__attribute__((noinline)) void shm_instr_loop(struct side *a, struct side *b,
					      long n);
__attribute__((noinline)) void shm_instr_loop(struct side *a, struct side *b,
					      long n)
{
	for (long i = 0; i < n; i++) {
		tx(a);
		wait_comp(b);
		post_rx(b);
		tx(b);
		wait_comp(a);
		post_rx(a);
	}
}

/* Empty polls: what one turn of an application's completion loop costs
 * while nothing arrives (its length is part of every message's latency). */
__attribute__((noinline)) void shm_instr_idle(struct side *a, long n);
__attribute__((noinline)) void shm_instr_idle(struct side *a, long n)
{
	struct fi_cq_tagged_entry e;

	for (long i = 0; i < n; i++)
		if (fi_cq_read(a->cq, &e, 1) != -FI_EAGAIN)
			exit(1);
}

static void side_open(struct fid_domain *dom, struct fi_info *info,
		      struct fid_av *av, struct side *s)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };

	CHK(fi_endpoint(dom, info, &s->ep, NULL));
	CHK(fi_cq_open(dom, &cq_attr, &s->cq, NULL));
	CHK(fi_ep_bind(s->ep, &av->fid, 0));
	CHK(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
	CHK(fi_enable(s->ep));
	s->sbuf = calloc(1, rx_size);
	s->rbuf = calloc(1, rx_size);
	if (!s->sbuf || !s->rbuf)
		exit(1);
}

int main(int argc, char **argv)
{
	struct fi_av_attr av_attr = { .type = FI_AV_MAP };
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_av *av;
	struct fi_info *hints, *info;
	struct side a = { 0 }, b = { 0 };
	char name[2][128];
	size_t len;
	struct timespec t0, t1;
	int o;

	while ((o = getopt(argc, argv, "p:m:S:I:t:")) != -1) {
		switch (o) {
		case 'p': prov = optarg; break;
		case 'm': tagged = !strcmp(optarg, "tagged"); break;
		case 'S': size = strtoul(optarg, NULL, 0); break;
		case 'I': iters = strtol(optarg, NULL, 0); break;
		case 't':
			threading = !strcmp(optarg, "domain") ?
				    FI_THREAD_DOMAIN : FI_THREAD_SAFE;
			break;
		default:
			fprintf(stderr, "usage: %s [-p shm|tcp] [-m msg|tagged] "
				"[-S size] [-I iters] [-t safe|domain]\n",
				argv[0]);
			return 2;
		}
	}
	if (size > rx_size)
		rx_size = size;
	hints = fi_allocinfo();
	hints->caps = tagged ? FI_TAGGED : FI_MSG;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup(prov);
	hints->mode = FI_CONTEXT;
	hints->domain_attr->threading = threading;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	CHK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));
	inject_size = info->tx_attr->inject_size;
	CHK(fi_fabric(info->fabric_attr, &fab, NULL));
	CHK(fi_domain(fab, info, &dom, NULL));
	CHK(fi_av_open(dom, &av_attr, &av, NULL));
	side_open(dom, info, av, &a);
	side_open(dom, info, av, &b);
	len = sizeof(name[0]);
	CHK(fi_getname(&a.ep->fid, name[0], &len));
	len = sizeof(name[1]);
	CHK(fi_getname(&b.ep->fid, name[1], &len));
	CHK(fi_av_insert(av, name[1], 1, &a.peer, 0, NULL));
	CHK(fi_av_insert(av, name[0], 1, &b.peer, 0, NULL));
	post_rx(&a);
	post_rx(&b);

	warm_other[0] = &a;
	warm_other[1] = &b;
	shm_instr_loop(&a, &b, 100);	/* warm up: peers opened, caches */
	warm_other[0] = warm_other[1] = NULL;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	shm_instr_loop(&a, &b, iters);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%s %zu B: %ld round trips, %.1f ns per message (one core)\n",
	       tagged ? "tagged" : "msg", size, iters,
	       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) /
		       (2.0 * iters));

	clock_gettime(CLOCK_MONOTONIC, &t0);
	shm_instr_idle(&a, iters);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("empty fi_cq_read: %.1f ns\n",
	       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) /
		       (double)iters);

	fi_close(&a.ep->fid);
	fi_close(&b.ep->fid);
	fi_close(&a.cq->fid);
	fi_close(&b.cq->fid);
	fi_close(&av->fid);
	fi_close(&dom->fid);
	fi_close(&fab->fid);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	free(a.sbuf); free(a.rbuf); free(b.sbuf); free(b.rbuf);
	return 0;
}
