/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the shm provider tests between processes (fork-based).
 * Children report through their exit status (they never run cmocka
 * asserts: a failing assert in a child would resume the test runner
 * there); the parent checks data and completions with cmocka. Names and
 * keys are exchanged through a MAP_SHARED page (the board).
 */
#ifndef SHM_PROC_TEST_H
#define SHM_PROC_TEST_H

#include "shm_prov_test.h"

#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define NPROC 8
#define BIG (16u << 20)

struct board {
	atomic_int ready;
	atomic_int go;
	atomic_int done;
	char names[NPROC + 1][T_ADDR_LEN];
	/* A target's registered region, for RMA tests. */
	uint64_t key;
	uint64_t addr;
	size_t len;
};

static struct board *B;

#define C_CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "child %d: %s:%d: %s\n",	\
				(int)getpid(), __FILE__, __LINE__,	\
				#cond);					\
			_exit(1);					\
		}							\
	} while (0)

/* ---- a small non-cmocka client for children --------------------------- */

struct cctx {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	char name[T_ADDR_LEN];
};

/* An endpoint with caps (with FI_RMA, the mr_mode of shm_prov_test.h). */
static inline void c_open_caps(struct cctx *c, uint64_t caps)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED,
				      .size = 4096 };
	size_t len = T_ADDR_LEN;

	C_CHECK(hints);
	hints->caps = caps;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup("shm");
	if (caps & FI_RMA)
		hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR |
					      FI_MR_PROV_KEY |
					      FI_MR_ALLOCATED;
	C_CHECK(!fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
			    &c->info));
	fi_freeinfo(hints);
	C_CHECK(!fi_fabric(c->info->fabric_attr, &c->fabric, NULL));
	C_CHECK(!fi_domain(c->fabric, c->info, &c->domain, NULL));
	C_CHECK(!fi_av_open(c->domain, &av_attr, &c->av, NULL));
	C_CHECK(!fi_cq_open(c->domain, &cq_attr, &c->cq, NULL));
	C_CHECK(!fi_endpoint(c->domain, c->info, &c->ep, NULL));
	C_CHECK(!fi_ep_bind(c->ep, &c->av->fid, 0));
	C_CHECK(!fi_ep_bind(c->ep, &c->cq->fid, FI_TRANSMIT | FI_RECV));
	C_CHECK(!fi_enable(c->ep));
	C_CHECK(!fi_getname(&c->ep->fid, c->name, &len));
}

static inline void c_open(struct cctx *c)
{
	c_open_caps(c, FI_MSG | FI_TAGGED | FI_DIRECTED_RECV);
}

static inline void c_close(struct cctx *c)
{
	C_CHECK(!fi_close(&c->ep->fid));
	C_CHECK(!fi_close(&c->cq->fid));
	C_CHECK(!fi_close(&c->av->fid));
	C_CHECK(!fi_close(&c->domain->fid));
	C_CHECK(!fi_close(&c->fabric->fid));
	fi_freeinfo(c->info);
}

/* Wait for n successful completions; any error fails the child. */
static inline void c_wait(struct cctx *c, int n)
{
	struct fi_cq_tagged_entry e[16];
	uint64_t deadline = t_now_s() + T_DEADLINE_S;

	while (n > 0) {
		ssize_t r = fi_cq_read(c->cq, e, 16);

		if (r == -FI_EAGAIN) {
			C_CHECK(t_now_s() <= deadline);
			continue;
		}
		C_CHECK(r > 0);
		n -= (int)r;
	}
}

static inline void c_post(struct cctx *c,
			  ssize_t (*fn)(struct cctx *, void *), void *arg)
{
	uint64_t deadline = t_now_s() + T_DEADLINE_S;
	struct fi_cq_tagged_entry e;
	ssize_t r;

	while ((r = fn(c, arg)) == -FI_EAGAIN) {
		C_CHECK(t_now_s() <= deadline);
		(void)fi_cq_read(c->cq, &e, 0);
	}
	if (r)
		fprintf(stderr, "child post: %s\n", fi_strerror((int)-r));
	C_CHECK(r == 0);
}

static inline void board_wait(atomic_int *v, int n)
{
	uint64_t deadline = t_now_s() + T_DEADLINE_S;

	while (atomic_load(v) < n) {
		if (t_now_s() > deadline) {
			fprintf(stderr, "board wait timed out\n");
			_exit(2);
		}
		usleep(100);
	}
}

static inline int setup(void **state)
{
	(void)state;
	B = mmap(NULL, sizeof(*B), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(B != MAP_FAILED);
	memset(B, 0, sizeof(*B));
	return 0;
}

static inline int teardown(void **state)
{
	(void)state;
	munmap(B, sizeof(*B));
	return 0;
}

static inline int reap(pid_t pid)
{
	int status = 0;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#endif /* SHM_PROC_TEST_H */
