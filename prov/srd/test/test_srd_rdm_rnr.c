/* SPDX-License-Identifier: MIT */
/*
 * Receiver not ready: b has only 16 receive buffers (softsrd's receive
 * queue limit) and does not progress while a sends many messages, so a's
 * sends come back RNR; a backs off per peer and resends. Every message
 * arrives, in order, once b progresses.
 */
#include "test_srd_rdm_common.h"

#include <stdlib.h>
#include <string.h>

#define N 300

static void test_rnr_backoff_resend(void **state)
{
	struct tfab f;
	uint32_t out[N], in[N];
	int ctx[N], i, posted = 0, sent = 0;
	long spins;
	ssize_t ret;

	tfab_open(&f, 0, true);
	for (i = 0; i < N; i++)
		out[i] = 0x1000u + (uint32_t)i;
	/* a only: b's buffers fill and further sends are refused */
	while (sent < N) {
		ret = fi_tsend(f.a.ep, &out[sent], sizeof(out[0]), NULL,
			       f.a.peer, 1, &ctx[sent]);
		if (ret == -FI_EAGAIN) {
			fi_cq_read(f.a.cq, NULL, 0);
			continue;
		}
		assert_int_equal(ret, 0);
		sent++;
	}
	for (spins = 0; spins < 20000; spins++)
		fi_cq_read(f.a.cq, NULL, 0);
	memset(in, 0, sizeof(in));
	/* b may hold fewer posted receives than N: post as it drains */
	for (i = 0; i < N; i++) {
		while ((ret = fi_trecv(f.b.ep, &in[i], sizeof(in[i]), NULL,
				       FI_ADDR_UNSPEC, 1, 0, &ctx[i])) ==
		       -FI_EAGAIN)
			tfab_poll(&f);
		assert_int_equal(ret, 0);
		posted++;
	}
	tfab_wait(&f, &f.b, N);
	tfab_wait(&f, &f.a, N);
	for (i = 0; i < N; i++) {
		assert_int_equal(tfab_take(&f.b).err, 0);
		assert_int_equal(tfab_take(&f.a).err, 0);
		assert_int_equal(in[i], out[i]);
	}
	assert_int_equal(posted, N);
	tfab_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rnr_backoff_resend),
	};

	tfab_env();
	setenv("FI_SRD_SOFT_MAX_RQ_WR", "16", 1);
	return cmocka_run_group_tests_name("srd_rdm_rnr", tests, NULL, NULL);
}
