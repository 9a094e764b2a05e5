/* SPDX-License-Identifier: MIT */
#include "test_srd_rma_common.h"

#include <stdlib.h>
#include <string.h>

#define TRMA_POLLS 4000000

/* tfab_open, plus the mr_mode RMA needs (FI_MR_PROV_KEY|VIRT_ADDR|
 * ALLOCATED, as srd offers): core refuses RMA infos to applications that
 * support no mr_mode. */
static void trma_ep_open(struct tfab *f, struct tep *e,
			 struct fid_cntr *rw, struct fid_cntr *rr)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED, .size = 1024 };
	struct fi_av_attr aa = { .type = FI_AV_TABLE };

	memset(e, 0, sizeof(*e));
	assert_int_equal(fi_endpoint(f->domain, f->info, &e->ep, NULL), 0);
	assert_int_equal(fi_cq_open(f->domain, &ca, &e->cq, NULL), 0);
	assert_int_equal(fi_av_open(f->domain, &aa, &e->av, NULL), 0);
	assert_int_equal(fi_ep_bind(e->ep, &e->cq->fid,
				    FI_TRANSMIT | FI_RECV), 0);
	assert_int_equal(fi_ep_bind(e->ep, &e->av->fid, 0), 0);
	if (rw)
		assert_int_equal(fi_ep_bind(e->ep, &rw->fid, FI_REMOTE_WRITE),
				 0);
	if (rr)
		assert_int_equal(fi_ep_bind(e->ep, &rr->fid, FI_REMOTE_READ),
				 0);
	assert_int_equal(fi_enable(e->ep), 0);
	e->namelen = sizeof(e->name);
	assert_int_equal(fi_getname(&e->ep->fid, e->name, &e->namelen), 0);
}

static void trma_fab_open(struct trma *t, uint64_t caps)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_cntr_attr ca = { .events = FI_CNTR_EVENTS_COMP };
	struct tfab *f = &t->f;

	memset(f, 0, sizeof(*f));
	tfab_env();
	assert_non_null(hints);
	hints->caps = FI_MSG | FI_RMA | caps;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->mr_mode = FI_MR_PROV_KEY | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_LOCAL;
	hints->fabric_attr->prov_name = strdup("srd");
	assert_int_equal(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				    &f->info), 0);
	fi_freeinfo(hints);
	f->eager_max = f->info->tx_attr->inject_size;
	f->mtu = f->eager_max + 64;
	assert_int_equal(fi_fabric(f->info->fabric_attr, &f->fabric, NULL), 0);
	assert_int_equal(fi_domain(f->fabric, f->info, &f->domain, NULL), 0);
	if (caps & FI_RMA_EVENT) {
		assert_true(f->info->caps & FI_RMA_EVENT);
		assert_int_equal(fi_cntr_open(f->domain, &ca, &t->rw_cntr,
					      NULL), 0);
		assert_int_equal(fi_cntr_open(f->domain, &ca, &t->rr_cntr,
					      NULL), 0);
	}
	trma_ep_open(f, &f->a, NULL, NULL);
	trma_ep_open(f, &f->b, t->rw_cntr, t->rr_cntr);
	f->b.extra_cntr[0] = t->rw_cntr;	/* closed after b */
	f->b.extra_cntr[1] = t->rr_cntr;
	assert_int_equal(fi_av_insert(f->a.av, f->b.name, 1, &f->a.peer, 0,
				      NULL), 1);
	assert_int_equal(fi_av_insert(f->b.av, f->a.name, 1, &f->b.peer, 0,
				      NULL), 1);
}

static void trma_open_caps(struct trma *t, uint64_t access, uint64_t caps)
{
	uint8_t msg[8] = { 1, 2, 3 }, got[8];
	struct tent e;

	memset(t, 0, sizeof(*t));
	trma_fab_open(t, caps);
	t->mem = malloc(TRMA_REGION + 2 * TRMA_GUARD);
	assert_non_null(t->mem);
	t->region = t->mem + TRMA_GUARD;
	assert_int_equal(fi_mr_reg(t->f.domain, t->region, TRMA_REGION, access,
				   0, 0, 0, &t->mr, NULL), 0);
	t->key = fi_mr_key(t->mr);
	t->base = t->f.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ?
		  (uintptr_t)t->region : 0;
	/* One message a -> b: the handshake is over afterwards. */
	assert_int_equal(fi_recv(t->f.b.ep, got, sizeof(got), NULL,
				 FI_ADDR_UNSPEC, got), 0);
	assert_int_equal(fi_send(t->f.a.ep, msg, sizeof(msg), NULL,
				 t->f.a.peer, msg), 0);
	tfab_wait(&t->f, &t->f.b, 1);
	tfab_wait(&t->f, &t->f.a, 1);
	e = tfab_take(&t->f.b);
	assert_int_equal(e.err, 0);
	e = tfab_take(&t->f.a);
	assert_int_equal(e.err, 0);
}

void trma_open(struct trma *t, uint64_t access)
{
	trma_open_caps(t, access, 0);
}

void trma_open_rma_event(struct trma *t, uint64_t access)
{
	trma_open_caps(t, access, FI_RMA_EVENT);
}

void trma_close(struct trma *t)
{
	assert_int_equal(fi_close(&t->mr->fid), 0);
	tfab_close(&t->f);
	free(t->mem);
}

void trma_fill_target(struct trma *t, unsigned int seed)
{
	tfab_fill(t->mem, TRMA_REGION + 2 * TRMA_GUARD, seed);
}

void trma_check_target(struct trma *t, unsigned int seed)
{
	tfab_check(t->mem, TRMA_REGION + 2 * TRMA_GUARD, seed);
}

static int trma_poll_a(struct trma *t)
{
	struct fi_cq_tagged_entry ent;
	struct fi_cq_err_entry err;
	struct tent *e = &t->f.a.ents[t->f.a.n];
	ssize_t ret;

	ret = fi_cq_read(t->f.a.cq, &ent, 1);
	if (ret == -FI_EAGAIN)
		return 0;
	memset(e, 0, sizeof(*e));
	if (ret == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		assert_int_equal(fi_cq_readerr(t->f.a.cq, &err, 0), 1);
		e->e.op_context = err.op_context;
		e->e.flags = err.flags;
		e->err = err.err;
		e->prov_errno = err.prov_errno;
	} else {
		assert_int_equal(ret, 1);
		e->e = ent;
	}
	t->f.a.n++;
	return 1;
}

struct tent trma_wait_a(struct trma *t, bool only_a)
{
	long i;

	for (i = 0; i < TRMA_POLLS && !t->f.a.n; i++) {
		if (only_a)
			trma_poll_a(t);
		else
			tfab_poll(&t->f);
	}
	if (!t->f.a.n)
		fail_msg("no completion at the initiator");
	return tfab_take(&t->f.a);
}

void trma_wait_b(struct trma *t, int n)
{
	tfab_wait(&t->f, &t->f.b, n);
}
