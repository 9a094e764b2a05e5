/* SPDX-License-Identifier: MIT */
/*
 * shm_coll_instr: the instructions of one small collective through the
 * public API, for callgrind (a benchmark, not a test). Two endpoints of
 * one process form a group and run an allreduce (or -x barrier), both
 * posted, then both progressed until both complete, so the count does
 * not depend on timing:
 *
 *   valgrind --tool=callgrind --collect-atstart=no \
 *     --toggle-collect=shm_coll_instr_loop prov/shm/test/shm_coll_instr \
 *     [-S bytes] [-I iters] [-x allreduce|barrier]
 *
 * Instructions per operation and member = collected Ir / (2 * iters).
 * Run natively, it prints the time per operation (both members on one
 * core: the software cost, no cross-core traffic).
 */
#include "weft/compat.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "weft/core.h"

__attribute__((used)) static struct fi_provider *(*instr_shm_pull)(void) =
	shm_prov_init;

struct side {
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_eq *eq;
	struct fid_av_set *set;
	struct fid_mc *mc;
	fi_addr_t coll;
	float *in, *out;
};

static size_t size = 8;
static long iters = 10000;
static int barrier;

#define CHK(x) do { long _r = (long)(x); if (_r < 0) { \
	fprintf(stderr, "%s: %s\n", #x, fi_strerror((int)-_r)); exit(1); } \
	} while (0)

static void post(struct side *s)
{
	if (barrier)
		CHK(fi_barrier(s->ep, s->coll, s));
	else
		CHK(fi_allreduce(s->ep, s->in, size / sizeof(float), NULL,
				 s->out, NULL, s->coll, FI_FLOAT, FI_SUM, 0, s));
}

/* Both posted, then both read until both completed. */
__attribute__((noinline)) void shm_coll_instr_loop(struct side *a,
						   struct side *b, long n);
__attribute__((noinline)) void shm_coll_instr_loop(struct side *a,
						   struct side *b, long n)
{
	struct fi_cq_entry e;

	for (long i = 0; i < n; i++) {
		int done = 0;

		post(a);
		post(b);
		while (done < 2) {
			if (fi_cq_read(a->cq, &e, 1) == 1)
				done++;
			if (fi_cq_read(b->cq, &e, 1) == 1)
				done++;
		}
	}
}

static void side_open(struct fid_fabric *fab, struct fid_domain *dom,
		      struct fi_info *info, struct fid_av *av, struct side *s)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_NONE };

	CHK(fi_endpoint(dom, info, &s->ep, NULL));
	CHK(fi_cq_open(dom, &cq_attr, &s->cq, NULL));
	CHK(fi_eq_open(fab, &eq_attr, &s->eq, NULL));
	CHK(fi_ep_bind(s->ep, &av->fid, 0));
	CHK(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV));
	CHK(fi_ep_bind(s->ep, &s->eq->fid, 0));
	CHK(fi_enable(s->ep));
	s->in = calloc(1, size + 64);
	s->out = calloc(1, size + 64);
	if (!s->in || !s->out)
		exit(1);
}

static void join(struct fid_av *av, struct side *a, struct side *b,
		 const fi_addr_t *addr)
{
	struct fi_av_set_attr attr = { .count = 2,
				       .start_addr = FI_ADDR_NOTAVAIL,
				       .end_addr = FI_ADDR_NOTAVAIL };
	struct side *s[2] = { a, b };
	struct fi_eq_entry ev;
	struct fi_cq_entry c;
	uint32_t event;
	int joined = 0;

	for (int i = 0; i < 2; i++) {
		CHK(fi_av_set(av, &attr, &s[i]->set, NULL));
		CHK(fi_av_set_insert(s[i]->set, addr[0]));
		CHK(fi_av_set_insert(s[i]->set, addr[1]));
		CHK(fi_join_collective(s[i]->ep, FI_ADDR_NOTAVAIL, s[i]->set, 0,
				       &s[i]->mc, s[i]));
	}
	while (joined < 2) {
		for (int i = 0; i < 2; i++) {
			(void)fi_cq_read(s[i]->cq, &c, 1);
			if (fi_eq_read(s[i]->eq, &event, &ev, sizeof(ev), 0) > 0) {
				s[i]->coll = fi_mc_addr(s[i]->mc);
				joined++;
			}
		}
	}
}

int main(int argc, char **argv)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_av *av;
	struct fi_info *hints, *info;
	struct side a = { 0 }, b = { 0 };
	char name[2][128];
	fi_addr_t addr[2];
	size_t len;
	struct timespec t0, t1;
	int o;

	while ((o = getopt(argc, argv, "S:I:x:")) != -1) {
		switch (o) {
		case 'S': size = strtoul(optarg, NULL, 0); break;
		case 'I': iters = strtol(optarg, NULL, 0); break;
		case 'x': barrier = !strcmp(optarg, "barrier"); break;
		default:
			fprintf(stderr, "usage: %s [-S bytes] [-I iters] "
				"[-x allreduce|barrier]\n", argv[0]);
			return 2;
		}
	}
	hints = fi_allocinfo();
	hints->caps = FI_COLLECTIVE | FI_MSG;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup("shm");
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	CHK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info));
	CHK(fi_fabric(info->fabric_attr, &fab, NULL));
	CHK(fi_domain(fab, info, &dom, NULL));
	CHK(fi_av_open(dom, &av_attr, &av, NULL));
	side_open(fab, dom, info, av, &a);
	side_open(fab, dom, info, av, &b);
	len = sizeof(name[0]);
	CHK(fi_getname(&a.ep->fid, name[0], &len));
	len = sizeof(name[1]);
	CHK(fi_getname(&b.ep->fid, name[1], &len));
	CHK(fi_av_insert(av, name[0], 1, &addr[0], 0, NULL));
	CHK(fi_av_insert(av, name[1], 1, &addr[1], 0, NULL));
	join(av, &a, &b, addr);

	shm_coll_instr_loop(&a, &b, 100);	/* warm up */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	shm_coll_instr_loop(&a, &b, iters);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%s %zu B: %ld operations, %.1f ns per operation and member "
	       "(one core)\n", barrier ? "barrier" : "allreduce", size, iters,
	       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) /
	       (2.0 * iters));
	fi_close(&a.mc->fid);
	fi_close(&b.mc->fid);
	fi_close(&a.set->fid);
	fi_close(&b.set->fid);
	fi_close(&a.ep->fid);
	fi_close(&b.ep->fid);
	fi_close(&a.cq->fid);
	fi_close(&b.cq->fid);
	fi_close(&a.eq->fid);
	fi_close(&b.eq->fid);
	fi_close(&av->fid);
	fi_close(&dom->fid);
	fi_close(&fab->fid);
	fi_freeinfo(info);
	fi_freeinfo(hints);
	return 0;
}
