/* SPDX-License-Identifier: MIT */
/*
 * Data-parallel training with fi_allreduce: each of N processes holds a
 * shard of a data set and a replica of a linear model; every step, each
 * computes the gradient of the squared error over its shard, the
 * processes sum their gradients with fi_allreduce, and every replica takes
 * the same step with the average. At the end every process checks that
 * its parameters are bit for bit those of every other process and those
 * of a single process that trains on the whole data set.
 *
 * Why the gradients are summed in fixed point: a floating-point sum
 * depends on its order (weft's float allreduce is reproducible for a
 * given member count and algorithm, but it does not add in the order of a
 * serial loop). Each sample's gradient is rounded to a multiple of 2^-32
 * and summed as int64 (FI_INT64, FI_SUM), which is exact in any order, so
 * the distributed run must match the single process exactly. This is the
 * usual way to make data-parallel training deterministic.
 *
 *   train_allreduce [-p shm|srd] [-n PROCS] [-s STEPS]
 *
 * Public API only: build with `cc train_allreduce.c $(pkg-config --cflags
 * --libs weft)`. A parent process forks the ranks, relays their endpoint
 * names over pipes (the out-of-band step any launcher does) and tells
 * them when all are done.
 */
#include <math.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#define DIM 8			/* features; the model has DIM + 1 weights */
#define SAMPLES 4096
#define LR 0.05
#define SCALE 4294967296.0	/* 2^32: fixed-point step of the sums */
#define MAX_RANKS 16
#define NAME_MAX_LEN 256

struct rank {
	int me, n;
	int to_parent, from_parent;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_eq *eq;
	struct fid_ep *ep;
	fi_addr_t peers[MAX_RANKS];
	struct fid_av_set *set;
	struct fid_mc *mc;
	fi_addr_t coll;
};

#define CHECK(call) do { int r_ = (int)(call); if (r_) { \
	fprintf(stderr, "rank %d: %s: %s\n", R->me, #call, fi_strerror(-r_)); \
	return -1; } } while (0)

/* ---- the data and the model ---------------------------------------------- */

/* Sample i: features in [-1, 1), target of a fixed linear model plus
 * noise. Deterministic: every process can make any sample. */
static void sample(int i, double *x, double *y)
{
	uint64_t s = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
	double t = 0.5;

	for (int d = 0; d < DIM; d++) {
		s ^= s >> 29;
		s *= 0xbf58476d1ce4e5b9ull;
		x[d] = (double)(s >> 11) / 9007199254740992.0 * 2 - 1;
		t += (d + 1) * 0.25 * x[d];
	}
	*y = t + ((double)(s & 0xffff) / 65536.0 - 0.5) * 0.01;
}

/* Fixed-point gradient of samples [lo, hi) at weights w (w[DIM] bias). */
static void gradient(const double *w, int lo, int hi, int64_t *g)
{
	double x[DIM], y, err;

	memset(g, 0, (DIM + 1) * sizeof(*g));
	for (int i = lo; i < hi; i++) {
		sample(i, x, &y);
		err = w[DIM] - y;
		for (int d = 0; d < DIM; d++)
			err += w[d] * x[d];
		for (int d = 0; d < DIM; d++)
			g[d] += llround(err * x[d] * SCALE);
		g[DIM] += llround(err * SCALE);
	}
}

static void step(double *w, const int64_t *g)
{
	for (int d = 0; d <= DIM; d++)
		w[d] -= LR * ((double)g[d] / SCALE / SAMPLES);
}

/* The single process: the whole data set, the same arithmetic. */
static void train_serial(int steps, double *w)
{
	int64_t g[DIM + 1];

	memset(w, 0, (DIM + 1) * sizeof(*w));
	for (int s = 0; s < steps; s++) {
		gradient(w, 0, SAMPLES, g);
		step(w, g);
	}
}

/* ---- fabric -------------------------------------------------------------- */

static int wait_comp(struct rank *R, void *ctx)
{
	struct fi_cq_entry e;
	struct fi_cq_err_entry err;
	ssize_t n;

	for (;;) {
		n = fi_cq_read(R->cq, &e, 1);
		if (n == 1 && e.op_context == ctx)
			return 0;
		if (n == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			fi_cq_readerr(R->cq, &err, 0);
			fprintf(stderr, "rank %d: completion error: %s\n", R->me,
				fi_strerror(err.err));
			return -1;
		}
		if (n < 0 && n != -FI_EAGAIN)
			return -1;
	}
}

static int open_fabric(struct rank *R, const char *prov)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_NONE };

	if (!hints)
		return -1;
	hints->caps = FI_COLLECTIVE | FI_MSG;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup(prov);
	CHECK(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &R->info));
	fi_freeinfo(hints);
	CHECK(fi_fabric(R->info->fabric_attr, &R->fabric, NULL));
	CHECK(fi_domain(R->fabric, R->info, &R->domain, NULL));
	CHECK(fi_cq_open(R->domain, &cq_attr, &R->cq, NULL));
	CHECK(fi_av_open(R->domain, &av_attr, &R->av, NULL));
	CHECK(fi_eq_open(R->fabric, &eq_attr, &R->eq, NULL));
	CHECK(fi_endpoint(R->domain, R->info, &R->ep, NULL));
	CHECK(fi_ep_bind(R->ep, &R->av->fid, 0));
	CHECK(fi_ep_bind(R->ep, &R->cq->fid, FI_TRANSMIT | FI_RECV));
	CHECK(fi_ep_bind(R->ep, &R->eq->fid, 0));
	CHECK(fi_enable(R->ep));
	return 0;
}

/* Names out to the parent, everyone's back, into the AV in rank order. */
static int exchange_names(struct rank *R)
{
	char name[NAME_MAX_LEN] = { 0 }, all[MAX_RANKS][NAME_MAX_LEN];
	size_t len = sizeof(name);

	CHECK(fi_getname(&R->ep->fid, name, &len));
	if (write(R->to_parent, name, sizeof(name)) != sizeof(name) ||
	    read(R->from_parent, all, (size_t)R->n * NAME_MAX_LEN) !=
	    (ssize_t)R->n * NAME_MAX_LEN)
		return -1;
	for (int i = 0; i < R->n; i++)
		if (fi_av_insert(R->av, all[i], 1, &R->peers[i], 0, NULL) != 1)
			return -1;
	return 0;
}

static int join_all(struct rank *R)
{
	struct fi_av_set_attr attr = {
		.count = (size_t)R->n, .start_addr = FI_ADDR_NOTAVAIL,
		.end_addr = FI_ADDR_NOTAVAIL,
	};
	struct fi_eq_entry e;
	uint32_t event;
	fi_addr_t set_addr;
	ssize_t rd;

	CHECK(fi_av_set(R->av, &attr, &R->set, NULL));
	for (int i = 0; i < R->n; i++)
		CHECK(fi_av_set_insert(R->set, R->peers[i]));
	CHECK(fi_av_set_addr(R->set, &set_addr));
	CHECK(fi_join_collective(R->ep, set_addr, R->set, 0, &R->mc, R));
	for (;;) {
		struct fi_cq_entry c;

		rd = fi_eq_read(R->eq, &event, &e, sizeof(e), 0);
		if (rd > 0 && event == FI_JOIN_COMPLETE)
			break;
		if (rd < 0 && rd != -FI_EAGAIN)
			return -1;
		(void)fi_cq_read(R->cq, &c, 1);	/* progress */
	}
	R->coll = fi_mc_addr(R->mc);
	return 0;
}

/* ---- one rank ------------------------------------------------------------ */

static int train(struct rank *R, int steps, double *w)
{
	int lo = R->me * SAMPLES / R->n, hi = (R->me + 1) * SAMPLES / R->n;
	int64_t g[DIM + 1], sum[DIM + 1];
	struct fi_context2 ctx;
	ssize_t ret;

	memset(w, 0, (DIM + 1) * sizeof(*w));
	for (int s = 0; s < steps; s++) {
		gradient(w, lo, hi, g);
		do {
			ret = fi_allreduce(R->ep, g, DIM + 1, NULL, sum, NULL,
					   R->coll, FI_INT64, FI_SUM, 0, &ctx);
		} while (ret == -FI_EAGAIN);
		if (ret || wait_comp(R, &ctx))
			return -1;
		step(w, sum);
	}
	return 0;
}

/* Every replica the same bits: gather them all. */
static int check_replicas(struct rank *R, const double *w)
{
	double all[MAX_RANKS][DIM + 1];
	struct fi_context2 ctx;
	ssize_t ret;

	do {
		ret = fi_allgather(R->ep, w, DIM + 1, NULL, all, NULL, R->coll,
				   FI_DOUBLE, 0, &ctx);
	} while (ret == -FI_EAGAIN);
	if (ret || wait_comp(R, &ctx))
		return -1;
	for (int r = 0; r < R->n; r++)
		if (memcmp(all[r], w, sizeof(all[r]))) {
			fprintf(stderr, "rank %d: replica %d differs\n", R->me,
				r);
			return -1;
		}
	return 0;
}

/* No member may close its endpoint while another still needs what it
 * sent (a completed send says the buffer is free, not that the message
 * arrived): tell the launcher we are done, and keep the fabric
 * progressing until it says everyone is. */
static int leave_together(struct rank *R)
{
	struct pollfd pfd = { .fd = R->from_parent, .events = POLLIN };
	struct fi_cq_entry c;
	char b = 'd';

	if (write(R->to_parent, &b, 1) != 1)
		return -1;
	while (poll(&pfd, 1, 0) == 0)
		(void)fi_cq_read(R->cq, &c, 1);
	return read(R->from_parent, &b, 1) == 1 ? 0 : -1;
}

static int rank_main(struct rank *R, const char *prov, int steps)
{
	double w[DIM + 1], serial[DIM + 1];
	int rc = -1;

	if (open_fabric(R, prov) || exchange_names(R) || join_all(R) ||
	    train(R, steps, w) || check_replicas(R, w))
		goto out;
	train_serial(steps, serial);
	if (memcmp(w, serial, sizeof(w))) {
		fprintf(stderr, "rank %d: parameters differ from the single "
			"process's (w[0] %.17g vs %.17g)\n", R->me, w[0],
			serial[0]);
		goto out;
	}
	if (R->me == 0) {
		printf("%d ranks, %d steps: every replica equals the single "
		       "process (w[0] = %.6f, bias = %.6f)\n", R->n, steps,
		       w[0], w[DIM]);
		fflush(stdout);
	}
	rc = leave_together(R);
out:
	if (R->mc)
		fi_close(&R->mc->fid);
	if (R->set)
		fi_close(&R->set->fid);
	if (R->ep)
		fi_close(&R->ep->fid);
	if (R->eq)
		fi_close(&R->eq->fid);
	if (R->av)
		fi_close(&R->av->fid);
	if (R->cq)
		fi_close(&R->cq->fid);
	if (R->domain)
		fi_close(&R->domain->fid);
	if (R->fabric)
		fi_close(&R->fabric->fid);
	fi_freeinfo(R->info);
	return rc;
}

/* ---- launcher ------------------------------------------------------------ */

int main(int argc, char **argv)
{
	int n = 4, steps = 50, up[MAX_RANKS][2], down[MAX_RANKS][2], opt;
	char names[MAX_RANKS][NAME_MAX_LEN];
	const char *prov = "shm";
	int rc = 0, status;

	while ((opt = getopt(argc, argv, "p:n:s:")) != -1) {
		if (opt == 'p')
			prov = optarg;
		else if (opt == 'n')
			n = atoi(optarg);
		else if (opt == 's')
			steps = atoi(optarg);
		else
			return 2;
	}
	if (n < 1 || n > MAX_RANKS || steps < 1) {
		fprintf(stderr, "train_allreduce: 1 to %d ranks, 1 step or more\n",
			MAX_RANKS);
		return 2;
	}
	for (int r = 0; r < n; r++) {
		if (pipe(up[r]) || pipe(down[r]))
			return 1;
		if (fork() == 0) {
			struct rank R = { .me = r, .n = n, .to_parent = up[r][1],
					  .from_parent = down[r][0] };

			close(up[r][0]);
			close(down[r][1]);
			_exit(rank_main(&R, prov, steps) ? 1 : 0);
		}
		/* a rank that dies closes its ends: reads see EOF */
		close(up[r][1]);
		close(down[r][0]);
	}
	/* relay the names: everyone's to everyone */
	for (int r = 0; r < n; r++)
		if (read(up[r][0], names[r], NAME_MAX_LEN) != NAME_MAX_LEN)
			rc = 1;
	for (int r = 0; !rc && r < n; r++)
		if (write(down[r][1], names, (size_t)n * NAME_MAX_LEN) !=
		    (ssize_t)n * NAME_MAX_LEN)
			rc = 1;
	/* everyone done (or gone): let them close */
	for (int r = 0; r < n; r++) {
		char b;

		if (read(up[r][0], &b, 1) != 1)
			rc = 1;
	}
	for (int r = 0; r < n; r++) {
		if (write(down[r][1], "b", 1) != 1)
			rc = 1;
		close(down[r][1]);
	}
	for (int r = 0; r < n; r++) {
		if (wait(&status) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			rc = 1;
	}
	printf("train_allreduce over %s: %s\n", prov, rc ? "FAIL" : "PASS");
	return rc;
}
