/* SPDX-License-Identifier: MIT */
/*
 * Striping over several devices: softsrd with FI_SRD_SOFT_DEVICES=3 on
 * 127.0.0.1, endpoints on the first device with rails on the others
 * (FI_SRD_RAILS or FI_OPT_WEFT_RAILS). Long messages are read over every
 * rail both ends have, with their data checked and their order kept;
 * small ones stay on rail 0; a peer with fewer rails gets fewer; a rail
 * that cannot reach its peer ends the message with an error at both ends.
 * test_srd_stripe_faults.sh runs the same under softsrd's loss, duplicate
 * and reorder injection.
 */
#include "test_srd_rdm_common.h"
#include "../src/rdm/srd_rdm.h"
#include "../src/rdm/proto/srd_stripe.h"
#include "weft/fi_ext_weft.h"

#include <stdlib.h>
#include <string.h>

#define MIB (1024ul * 1024ul)

static void ep_open_rails(struct tfab *f, struct tep *e, int rails)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_TAGGED, .size = 1024 };
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	size_t len = sizeof(int);
	int got = 0;

	memset(e, 0, sizeof(*e));
	assert_int_equal(fi_endpoint(f->domain, f->info, &e->ep, NULL), 0);
	assert_int_equal(fi_cq_open(f->domain, &ca, &e->cq, NULL), 0);
	assert_int_equal(fi_av_open(f->domain, &aa, &e->av, NULL), 0);
	assert_int_equal(fi_ep_bind(e->ep, &e->cq->fid,
				    FI_TRANSMIT | FI_RECV), 0);
	assert_int_equal(fi_ep_bind(e->ep, &e->av->fid, 0), 0);
	if (rails)
		assert_int_equal(fi_setopt(&e->ep->fid, FI_OPT_ENDPOINT,
					   FI_OPT_WEFT_RAILS, &rails,
					   sizeof(rails)), 0);
	assert_int_equal(fi_enable(e->ep), 0);
	assert_int_equal(fi_getopt(&e->ep->fid, FI_OPT_ENDPOINT,
				   FI_OPT_WEFT_RAILS, &got, &len), 0);
	if (rails)
		assert_int_equal(got, rails);
	e->namelen = sizeof(e->name);
	assert_int_equal(fi_getname(&e->ep->fid, e->name, &e->namelen), 0);
}

/* a (sender) and b (receiver) on the first device; rails 0: the
 * FI_SRD_RAILS default, else set by option. */
static void fab_open(struct tfab *f, int rails_a, int rails_b)
{
	struct fi_info *hints = fi_allocinfo();

	memset(f, 0, sizeof(*f));
	assert_non_null(hints);
	hints->caps = FI_MSG | FI_TAGGED;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup("srd");
	hints->domain_attr->name = strdup("softsrd_lo_0");
	assert_int_equal(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				    &f->info), 0);
	fi_freeinfo(hints);
	f->eager_max = f->info->tx_attr->inject_size;
	assert_int_equal(fi_fabric(f->info->fabric_attr, &f->fabric, NULL), 0);
	assert_int_equal(fi_domain(f->fabric, f->info, &f->domain, NULL), 0);
	ep_open_rails(f, &f->a, rails_a);
	ep_open_rails(f, &f->b, rails_b);
	assert_int_equal(fi_av_insert(f->a.av, f->b.name, 1, &f->a.peer, 0,
				      NULL), 1);
	assert_int_equal(fi_av_insert(f->b.av, f->a.name, 1, &f->b.peer, 0,
				      NULL), 1);
	/* the rails are learned in the handshake; before it a long message
	 * goes by credits */
	tfab_hello(f);
}

static struct srd_ep *srd_of(struct tep *e)
{
	return to_srd_ep(e->ep);
}

static uint64_t rail_reads(struct tep *e, uint32_t k)
{
	struct srd_ep *ep = srd_of(e);

	return ep->stripe && k < ep->stripe->count ?
	       ep->stripe->rail[k - 1].reads : 0;
}

/* n tagged messages of lens[] a -> b, all receives with one tag posted
 * first: message i must land whole in receive i (FI_ORDER_SAS), whatever
 * order they complete in. */
static void xfer_check(struct tfab *f, const size_t *lens, int n)
{
	uint8_t *src[8], *dst[8];

	assert_true(n <= 8);
	for (int i = 0; i < n; i++) {
		src[i] = malloc(lens[i]);
		dst[i] = calloc(1, lens[i]);
		assert_non_null(src[i]);
		assert_non_null(dst[i]);
		tfab_fill(src[i], lens[i], (unsigned int)i + 11);
		tfab_recv(f, dst[i], lens[i], 7, true, dst[i]);
	}
	for (int i = 0; i < n; i++)
		tfab_send(f, src[i], lens[i], 7, true, src[i]);
	tfab_wait(f, &f->b, n);
	tfab_wait(f, &f->a, n);
	for (int k = 0; k < n; k++) {
		struct tent t = tfab_take(&f->b);
		int i = 0;

		assert_int_equal(t.err, 0);
		while (i < n && t.e.op_context != dst[i])
			i++;
		assert_true(i < n);
		assert_int_equal(t.e.len, lens[i]);
		tfab_check(dst[i], lens[i], (unsigned int)i + 11);
		assert_int_equal(tfab_take(&f->a).err, 0);
	}
	for (int i = 0; i < n; i++) {
		free(src[i]);
		free(dst[i]);
	}
}

/* 64 MiB over two rails: rail 1 carries its share, the data is whole. */
static void test_striped_64m(void **state)
{
	static const size_t lens[1] = { 64 * MIB };
	struct tfab f;

	(void)state;
	fab_open(&f, 0, 0);		/* FI_SRD_RAILS=2 */
	xfer_check(&f, lens, 1);
	/* one share per rail: half of it read on rail 1 */
	assert_int_equal(rail_reads(&f.b, 1), 1);
	assert_int_equal(rail_reads(&f.a, 1), 0);
	tfab_close(&f);
}

/* Long, small and long again with one tag: order kept, small ones on
 * rail 0, a message of one chunk on rail 0. */
static void test_striped_order(void **state)
{
	static const size_t lens[5] = { 3 * MIB + 5, 100, SRD_STRIPE_MIN,
					8 * MIB, 70 * 1024 };
	struct tfab f;
	uint64_t before;

	(void)state;
	fab_open(&f, 3, 3);
	assert_int_equal(srd_of(&f.a)->stripe->count, 3);
	xfer_check(&f, lens, 5);
	assert_true(rail_reads(&f.b, 1) > 0);
	assert_true(rail_reads(&f.b, 2) > 0);
	/* at most the striping threshold: rail 0 alone */
	before = rail_reads(&f.b, 1) + rail_reads(&f.b, 2);
	xfer_check(&f, &lens[2], 1);
	assert_int_equal(rail_reads(&f.b, 1) + rail_reads(&f.b, 2), before);
	tfab_close(&f);
}

/* Rail counts differ: the lower one is used, in either direction. */
static void test_rail_mismatch(void **state)
{
	static const size_t lens[2] = { 16 * MIB, 2 * MIB + 3 };
	struct tfab f;

	(void)state;
	fab_open(&f, 3, 2);
	xfer_check(&f, lens, 2);
	assert_true(rail_reads(&f.b, 1) > 0);
	assert_int_equal(srd_of(&f.b)->stripe->count, 2);
	tfab_close(&f);

	fab_open(&f, 2, 1);
	assert_null(srd_of(&f.b)->stripe);
	xfer_check(&f, lens, 2);
	tfab_close(&f);

	fab_open(&f, 1, 3);
	assert_null(srd_of(&f.a)->stripe);
	xfer_check(&f, lens, 2);
	assert_int_equal(rail_reads(&f.b, 1) + rail_reads(&f.b, 2), 0);
	tfab_close(&f);
}

static void test_rails_option(void **state)
{
	struct tfab f;
	int rails = 5;

	(void)state;
	fab_open(&f, 2, 2);
	/* out of range, and after fi_enable: refused, rails unchanged */
	assert_int_equal(fi_setopt(&f.a.ep->fid, FI_OPT_ENDPOINT,
				   FI_OPT_WEFT_RAILS, &rails, sizeof(rails)),
			 -FI_EINVAL);
	rails = 1;
	assert_int_equal(fi_setopt(&f.a.ep->fid, FI_OPT_ENDPOINT,
				   FI_OPT_WEFT_RAILS, &rails, sizeof(rails)),
			 -FI_EOPNOTSUPP);
	assert_int_equal(srd_of(&f.a)->stripe->count, 2);
	tfab_close(&f);
}

/* Rail 1 of the sender, as the receiver knows it, names a QP that does
 * not exist: the reads there fail, and the message ends with an error
 * at both ends instead of waiting. */
static void test_rail_failure(void **state)
{
	static const size_t lens[1] = { 4 * MIB };
	struct srd_peer *peer;
	uint8_t *src = malloc(4 * MIB), *dst = malloc(4 * MIB);
	struct tfab f;
	struct tent t;

	(void)state;
	assert_non_null(src);
	assert_non_null(dst);
	fab_open(&f, 2, 2);
	xfer_check(&f, lens, 1);	/* handshake done, rails known */
	peer = srd_of(&f.b)->peers[0];
	assert_non_null(peer->stripe);
	peer->stripe->dest[0].qpn ^= 0x7f;	/* another slot, unused */
	tfab_recv(&f, dst, 4 * MIB, 7, true, dst);
	tfab_send(&f, src, 4 * MIB, 7, true, src);
	tfab_wait(&f, &f.b, 1);
	tfab_wait(&f, &f.a, 1);
	t = tfab_take(&f.b);
	assert_int_not_equal(t.err, 0);
	t = tfab_take(&f.a);
	assert_int_not_equal(t.err, 0);
	tfab_close(&f);
	free(src);
	free(dst);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest all[] = {
		cmocka_unit_test(test_striped_64m),
		cmocka_unit_test(test_striped_order),
		cmocka_unit_test(test_rail_mismatch),
		cmocka_unit_test(test_rails_option),
		cmocka_unit_test(test_rail_failure),
	};
	/* --faults (test_srd_stripe_faults.sh): the data tests only; the
	 * rail failure test counts on a prompt error answer */
	bool faults = argc > 1 && !strcmp(argv[1], "--faults");

	setenv("FI_SRD_DEVICE", "soft", 1);
	setenv("FI_SRD_SOFT_ADDR", "127.0.0.1", 1);
	setenv("FI_SRD_SOFT_DEVICES", "3", 1);
	setenv("FI_SRD_RAILS", "2", 1);
	/* one process is one host: without this its peers go through shm */
	setenv("FI_SRD_USE_SHM", "0", 1);
	return _cmocka_run_group_tests(faults ? "srd_stripe_faults" :
				       "srd_stripe", all,
				       faults ? 3 : WEFT_ARRAY_SIZE(all),
				       NULL, NULL);
}
