/* SPDX-License-Identifier: MIT */
#include "test_srd_rdm_common.h"

#include <stdlib.h>
#include <string.h>

#include <rdma/fi_cm.h>

#define TWAIT_POLLS 4000000

void tfab_env(void)
{
	setenv("FI_SRD_DEVICE", "soft", 1);
	setenv("FI_SRD_SOFT_ADDR", "127.0.0.1", 0);
	/* These tests drive the device protocols between two endpoints of
	 * one process, which shm would otherwise carry (test_srd_shm
	 * tests that path). */
	setenv("FI_SRD_USE_SHM", "0", 0);
}

static void tep_open(struct tfab *f, struct tep *e, uint64_t flags_cntr)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED, .size = 1024 };
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	struct fi_cntr_attr na = { .events = FI_CNTR_EVENTS_COMP };

	memset(e, 0, sizeof(*e));
	assert_int_equal(fi_endpoint(f->domain, f->info, &e->ep, NULL), 0);
	assert_int_equal(fi_cq_open(f->domain, &ca, &e->cq, NULL), 0);
	assert_int_equal(fi_av_open(f->domain, &aa, &e->av, NULL), 0);
	assert_int_equal(fi_ep_bind(e->ep, &e->cq->fid,
				    FI_TRANSMIT | FI_RECV), 0);
	assert_int_equal(fi_ep_bind(e->ep, &e->av->fid, 0), 0);
	if (flags_cntr) {
		assert_int_equal(fi_cntr_open(f->domain, &na, &e->rx_cntr,
					      NULL), 0);
		assert_int_equal(fi_ep_bind(e->ep, &e->rx_cntr->fid, FI_RECV),
				 0);
	}
	assert_int_equal(fi_enable(e->ep), 0);
	e->namelen = sizeof(e->name);
	assert_int_equal(fi_getname(&e->ep->fid, e->name, &e->namelen), 0);
	e->peer = FI_ADDR_NOTAVAIL;
}

void tfab_open(struct tfab *f, uint64_t caps, bool insert_b)
{
	struct fi_info *hints = fi_allocinfo();

	memset(f, 0, sizeof(*f));
	tfab_env();
	assert_non_null(hints);
	hints->caps = caps ? caps : FI_MSG | FI_TAGGED;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup("srd");
	assert_int_equal(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				    &f->info), 0);
	fi_freeinfo(hints);
	tfab_open_info(f, caps, insert_b);
}

void tfab_open_info(struct tfab *f, uint64_t caps, bool insert_b)
{
	f->eager_max = f->info->tx_attr->inject_size;
	f->mtu = f->eager_max + 64;
	if (f->fabric)
		f->fabric_shared = true;
	else
		assert_int_equal(fi_fabric(f->info->fabric_attr, &f->fabric,
					   NULL), 0);
	assert_int_equal(fi_domain(f->fabric, f->info, &f->domain, NULL), 0);
	tep_open(f, &f->a, 0);
	tep_open(f, &f->b, caps & FI_SOURCE);
	assert_int_equal(fi_av_insert(f->a.av, f->b.name, 1, &f->a.peer, 0,
				      NULL), 1);
	if (insert_b)
		assert_int_equal(fi_av_insert(f->b.av, f->a.name, 1,
					      &f->b.peer, 0, NULL), 1);
}

static void tep_close(struct tep *e)
{
	if (e->ep)
		assert_int_equal(fi_close(&e->ep->fid), 0);
	if (e->rx_cntr)
		assert_int_equal(fi_close(&e->rx_cntr->fid), 0);
	for (int i = 0; i < 2; i++)
		if (e->extra_cntr[i])
			assert_int_equal(fi_close(&e->extra_cntr[i]->fid), 0);
	assert_int_equal(fi_close(&e->cq->fid), 0);
	assert_int_equal(fi_close(&e->av->fid), 0);
}

void tfab_close(struct tfab *f)
{
	tep_close(&f->a);
	tep_close(&f->b);
	assert_int_equal(fi_close(&f->domain->fid), 0);
	if (!f->fabric_shared)
		assert_int_equal(fi_close(&f->fabric->fid), 0);
	fi_freeinfo(f->info);
}

static int tep_poll(struct tep *e)
{
	struct fi_cq_tagged_entry ent;
	struct fi_cq_err_entry err;
	fi_addr_t src;
	ssize_t ret;

	if (!e->cq)
		return 0;
	ret = fi_cq_readfrom(e->cq, &ent, 1, &src);
	if (ret == -FI_EAGAIN)
		return 0;
	assert_true(e->n < TCQ_MAX);
	if (ret == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		assert_int_equal(fi_cq_readerr(e->cq, &err, 0), 1);
		memset(&e->ents[e->n], 0, sizeof(e->ents[e->n]));
		e->ents[e->n].e.op_context = err.op_context;
		e->ents[e->n].e.flags = err.flags;
		e->ents[e->n].e.len = err.len;
		e->ents[e->n].e.tag = err.tag;
		e->ents[e->n].e.data = err.data;
		e->ents[e->n].err = err.err;
		e->ents[e->n].olen = err.olen;
		e->ents[e->n].prov_errno = err.prov_errno;
		e->ents[e->n].src = FI_ADDR_NOTAVAIL;
		e->n++;
		return 1;
	}
	assert_int_equal(ret, 1);
	memset(&e->ents[e->n], 0, sizeof(e->ents[e->n]));
	e->ents[e->n].e = ent;
	e->ents[e->n].src = src;
	e->n++;
	return 1;
}

int tfab_poll(struct tfab *f)
{
	return tep_poll(&f->a) + tep_poll(&f->b);
}

void tfab_wait(struct tfab *f, struct tep *e, int n)
{
	long i;

	for (i = 0; i < TWAIT_POLLS && e->n < n; i++)
		tfab_poll(f);
	if (e->n < n)
		fail_msg("waited for %d completions, have %d", n, e->n);
}

struct tent tfab_take(struct tep *e)
{
	struct tent t;

	assert_true(e->n > 0);
	t = e->ents[0];
	memmove(&e->ents[0], &e->ents[1], (size_t)(e->n - 1) * sizeof(t));
	e->n--;
	return t;
}

void tfab_fill(uint8_t *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)((i * 131u + seed * 7u + (i >> 8)) ^ seed);
}

void tfab_check(const uint8_t *buf, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != (uint8_t)((i * 131u + seed * 7u + (i >> 8)) ^ seed))
			fail_msg("byte %zu of %zu: 0x%02x, want 0x%02x", i, len,
				 buf[i],
				 (uint8_t)((i * 131u + seed * 7u + (i >> 8)) ^ seed));
}

void tfab_send(struct tfab *f, const void *buf, size_t len, uint64_t tag,
	       bool tagged, void *ctx)
{
	TFAB_POST(f, tagged ? fi_tsend(f->a.ep, buf, len, NULL, f->a.peer, tag,
				       ctx) :
			      fi_send(f->a.ep, buf, len, NULL, f->a.peer, ctx));
}

void tfab_recv(struct tfab *f, void *buf, size_t len, uint64_t tag,
	       bool tagged, void *ctx)
{
	TFAB_POST(f, tagged ? fi_trecv(f->b.ep, buf, len, NULL, FI_ADDR_UNSPEC,
				       tag, 0, ctx) :
			      fi_recv(f->b.ep, buf, len, NULL, FI_ADDR_UNSPEC,
				      ctx));
}

void tfab_hello(struct tfab *f)
{
	char s[8] = "hi", d[8];
	int sctx, rctx;
	struct tent t;

	tfab_recv(f, d, sizeof(d), 0, false, &rctx);
	tfab_send(f, s, sizeof(s), 0, false, &sctx);
	tfab_wait(f, &f->b, 1);
	tfab_wait(f, &f->a, 1);
	t = tfab_take(&f->b);
	assert_int_equal(t.err, 0);
	assert_ptr_equal(t.e.op_context, &rctx);
	t = tfab_take(&f->a);
	assert_int_equal(t.err, 0);
	assert_ptr_equal(t.e.op_context, &sctx);
}
