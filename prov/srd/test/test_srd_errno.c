/* SPDX-License-Identifier: MIT */
/*
 * Every ibv_wc_status and every EFA vendor error -> fi errno, prov_errno
 * and a text that says what happened and names the peer.
 */
#include "weft/compat.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../src/dev/srd_dev.h"

/* The contract, written out independently of srd_errno.c's tables. */
static const int want_wc_err[] = {
	[IBV_WC_SUCCESS] = 0,
	[IBV_WC_LOC_LEN_ERR] = FI_EMSGSIZE,
	[IBV_WC_LOC_QP_OP_ERR] = FI_EIO,
	[IBV_WC_LOC_EEC_OP_ERR] = FI_EIO,
	[IBV_WC_LOC_PROT_ERR] = FI_EACCES,
	[IBV_WC_WR_FLUSH_ERR] = FI_ECANCELED,
	[IBV_WC_MW_BIND_ERR] = FI_EACCES,
	[IBV_WC_BAD_RESP_ERR] = FI_EREMOTEIO,
	[IBV_WC_LOC_ACCESS_ERR] = FI_EACCES,
	[IBV_WC_REM_INV_REQ_ERR] = FI_EREMOTEIO,
	[IBV_WC_REM_ACCESS_ERR] = FI_EACCES,
	[IBV_WC_REM_OP_ERR] = FI_EREMOTEIO,
	[IBV_WC_RETRY_EXC_ERR] = FI_ETIMEDOUT,
	[IBV_WC_RNR_RETRY_EXC_ERR] = FI_ENORX,
	[IBV_WC_LOC_RDD_VIOL_ERR] = FI_EIO,
	[IBV_WC_REM_INV_RD_REQ_ERR] = FI_EREMOTEIO,
	[IBV_WC_REM_ABORT_ERR] = FI_ECONNABORTED,
	[IBV_WC_INV_EECN_ERR] = FI_EIO,
	[IBV_WC_INV_EEC_STATE_ERR] = FI_EIO,
	[IBV_WC_FATAL_ERR] = FI_EIO,
	[IBV_WC_RESP_TIMEOUT_ERR] = FI_ETIMEDOUT,
	[IBV_WC_GENERAL_ERR] = FI_EOTHER,
	[IBV_WC_TM_ERR] = FI_EIO,
	[IBV_WC_TM_RNDV_INCOMPLETE] = FI_EIO,
};

static const struct {
	int err;
	const char *words;	/* must appear in the text */
} want_vendor[SRD_EFA_IO_MAX] = {
	[SRD_EFA_IO_FLUSHED] = { FI_ECANCELED, "flushed" },
	[SRD_EFA_IO_LOCAL_QP_INTERNAL] = { FI_EIO, "internal" },
	[SRD_EFA_IO_LOCAL_UNSUPPORTED_OP] = { FI_EOPNOTSUPP, "not supported" },
	[SRD_EFA_IO_LOCAL_INVALID_AH] = { FI_EINVAL, "address handle" },
	[SRD_EFA_IO_LOCAL_INVALID_LKEY] = { FI_EACCES, "not registered" },
	[SRD_EFA_IO_LOCAL_BAD_LENGTH] = { FI_EMSGSIZE, "longer" },
	[SRD_EFA_IO_REMOTE_BAD_ADDRESS] = { FI_EACCES, "remote refused the RDMA access" },
	[SRD_EFA_IO_REMOTE_ABORT] = { FI_ECONNABORTED, "aborted" },
	[SRD_EFA_IO_REMOTE_BAD_DEST_QPN] = { FI_ENOTCONN, "endpoint gone" },
	[SRD_EFA_IO_REMOTE_RNR] = { FI_ENORX, "receiver had no buffer posted (RNR)" },
	[SRD_EFA_IO_REMOTE_BAD_LENGTH] = { FI_ETRUNC, "too short" },
	[SRD_EFA_IO_REMOTE_BAD_STATUS] = { FI_EREMOTEIO, "unexpected status" },
	[SRD_EFA_IO_LOCAL_UNRESP_REMOTE] = { FI_ETIMEDOUT, "remote unresponsive" },
	[SRD_EFA_IO_REMOTE_UNKNOWN_PEER] = { FI_ENOTCONN, "does not know us" },
	[SRD_EFA_IO_LOCAL_UNREACH_REMOTE] = { FI_EHOSTUNREACH, "never answered" },
	[SRD_EFA_IO_REMOTE_FEATURE_MISMATCH] = { FI_EOPNOTSUPP, "feature" },
};

static void test_every_wc_status(void **state)
{
	int s;

	for (s = 0; s <= IBV_WC_TM_RNDV_INCOMPLETE; s++) {
		struct srd_dev_wc_err e;
		const char *text;

		srd_dev_wc_err_map((enum ibv_wc_status)s, 0, &e);
		print_message("# status %d (%s)\n", s,
			      srd_dev_prov_strerror(e.prov_errno));
		assert_int_equal(e.err, want_wc_err[s]);
		assert_int_equal(e.prov_errno, SRD_PROV_ERRNO_WC_BASE + s);
		text = srd_dev_prov_strerror(e.prov_errno);
		assert_non_null(text);
		assert_string_not_equal(text, "unknown device error");
	}
}

static void test_every_vendor_err(void **state)
{
	int v;

	for (v = 1; v < SRD_EFA_IO_MAX; v++) {
		struct srd_dev_wc_err e;

		/* the vendor code wins over the generic status */
		srd_dev_wc_err_map(IBV_WC_GENERAL_ERR, (uint32_t)v, &e);
		print_message("# vendor %d (%s)\n", v,
			      srd_dev_prov_strerror(v));
		assert_int_equal(e.err, want_vendor[v].err);
		assert_int_equal(e.prov_errno, v);
		assert_non_null(strstr(srd_dev_prov_strerror(v),
				       want_vendor[v].words));
	}
}

/* A failure handed on without its device completion (a packet queued
 * toward a peer that failed) reads as the completion it came from. */
static void test_unmap_round_trip(void **state)
{
	struct srd_dev_wc_err a, b;
	struct srd_dev_wc wc;
	int s, v;

	for (s = 1; s <= IBV_WC_TM_RNDV_INCOMPLETE; s++) {
		srd_dev_wc_err_map((enum ibv_wc_status)s, 0, &a);
		srd_dev_wc_err_unmap(a.prov_errno, &wc);
		srd_dev_wc_err_map(wc.status, wc.vendor_err, &b);
		assert_int_equal(b.err, a.err);
		assert_int_equal(b.prov_errno, a.prov_errno);
	}
	for (v = 1; v < SRD_EFA_IO_MAX; v++) {
		srd_dev_wc_err_map(IBV_WC_RESP_TIMEOUT_ERR, (uint32_t)v, &a);
		srd_dev_wc_err_unmap(a.prov_errno, &wc);
		srd_dev_wc_err_map(wc.status, wc.vendor_err, &b);
		assert_int_equal(b.err, a.err);
		assert_int_equal(b.prov_errno, v);
	}
	/* the peer's death: its cause, not an unspecified error */
	srd_dev_wc_err_unmap(SRD_EFA_IO_LOCAL_UNRESP_REMOTE, &wc);
	srd_dev_wc_err_map(wc.status, wc.vendor_err, &b);
	assert_int_equal(b.err, FI_ETIMEDOUT);
	/* what no completion gives stays an error */
	srd_dev_wc_err_unmap(SRD_PROV_ERRNO_PEER_LOST, &wc);
	assert_int_not_equal(wc.status, IBV_WC_SUCCESS);
	srd_dev_wc_err_unmap(0, &wc);
	assert_int_not_equal(wc.status, IBV_WC_SUCCESS);
}

static void test_texts_tell_causes_apart(void **state)
{
	int a, b;

	/* each vendor code reads differently: a user can act on it */
	for (a = 1; a < SRD_EFA_IO_MAX; a++)
		for (b = a + 1; b < SRD_EFA_IO_MAX; b++)
			assert_string_not_equal(srd_dev_prov_strerror(a),
						srd_dev_prov_strerror(b));
}

static void test_unknown_codes(void **state)
{
	struct srd_dev_wc_err e;

	/* an unknown vendor code falls back to the status */
	srd_dev_wc_err_map(IBV_WC_REM_ACCESS_ERR, 200, &e);
	assert_int_equal(e.err, FI_EACCES);
	assert_int_equal(e.prov_errno, SRD_PROV_ERRNO_WC_BASE + IBV_WC_REM_ACCESS_ERR);
	/* an unknown status too */
	srd_dev_wc_err_map((enum ibv_wc_status)99, 0, &e);
	assert_int_equal(e.err, FI_EOTHER);
	assert_string_equal(srd_dev_prov_strerror(e.prov_errno),
			    "unknown device error");
	assert_string_equal(srd_dev_prov_strerror(-5), "unknown device error");
	assert_string_equal(srd_dev_prov_strerror(SRD_EFA_IO_MAX),
			    "unknown device error");
}

static void test_format_names_peer(void **state)
{
	char buf[256];
	const char *s;

	s = srd_dev_err_format(SRD_EFA_IO_REMOTE_RNR, "srd://fe80::1/qpn=7",
			       buf, sizeof(buf));
	assert_ptr_equal(s, buf);
	assert_non_null(strstr(buf, "peer srd://fe80::1/qpn=7"));
	assert_non_null(strstr(buf, "receiver had no buffer posted (RNR)"));
	assert_non_null(strstr(buf, "prov_errno 10"));

	s = srd_dev_err_format(SRD_EFA_IO_LOCAL_UNREACH_REMOTE, "peer-b", buf,
			       sizeof(buf));
	assert_non_null(strstr(buf, "peer peer-b: remote unreachable"));

	/* no peer known: the text alone */
	srd_dev_err_format(SRD_PROV_ERRNO_WC_BASE + IBV_WC_WR_FLUSH_ERR, NULL,
			   buf,
			   sizeof(buf));
	assert_null(strstr(buf, "peer "));
	assert_non_null(strstr(buf, "flushed"));

	/* truncation is safe, and no buffer gives the static text */
	srd_dev_err_format(SRD_EFA_IO_REMOTE_RNR, "x", buf, 8);
	assert_int_equal(strlen(buf), 7);
	assert_string_equal(srd_dev_err_format(SRD_EFA_IO_REMOTE_RNR, "x", NULL,
					       0),
			    srd_dev_prov_strerror(SRD_EFA_IO_REMOTE_RNR));
}

static void test_is_rnr(void **state)
{
	assert_true(srd_dev_wc_err_is_rnr(IBV_WC_RNR_RETRY_EXC_ERR, 0));
	assert_true(srd_dev_wc_err_is_rnr(IBV_WC_GENERAL_ERR,
					  SRD_EFA_IO_REMOTE_RNR));
	/* the vendor code says it was something else */
	assert_false(srd_dev_wc_err_is_rnr(IBV_WC_RNR_RETRY_EXC_ERR,
					   SRD_EFA_IO_LOCAL_UNRESP_REMOTE));
	assert_false(srd_dev_wc_err_is_rnr(IBV_WC_RETRY_EXC_ERR, 0));
	assert_false(srd_dev_wc_err_is_rnr(IBV_WC_SUCCESS, 0));
}

static void test_cq_err_entry(void **state)
{
	struct srd_dev_wc wc = {
		.wr_id = 5, .status = IBV_WC_RESP_TIMEOUT_ERR,
		.vendor_err = SRD_EFA_IO_LOCAL_UNRESP_REMOTE, .qp_num = 3,
	};
	struct fi_cq_err_entry e;
	char user_err_data[8];
	int ctx;

	memset(&e, 0xff, sizeof(e));
	e.err_data = user_err_data;
	e.err_data_size = sizeof(user_err_data);
	srd_dev_cq_err_fill(&wc, &ctx, FI_SEND | FI_MSG, &e);
	assert_ptr_equal(e.op_context, &ctx);
	assert_true(e.flags == (FI_SEND | FI_MSG));
	assert_int_equal(e.err, FI_ETIMEDOUT);
	assert_int_equal(e.prov_errno, SRD_EFA_IO_LOCAL_UNRESP_REMOTE);
	assert_int_equal(e.len, 0);
	assert_null(e.buf);
	assert_int_equal(e.olen, 0);
	/* the application's err_data buffer is left alone */
	assert_ptr_equal(e.err_data, user_err_data);
	assert_int_equal(e.err_data_size, sizeof(user_err_data));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_wc_status),
		cmocka_unit_test(test_every_vendor_err),
		cmocka_unit_test(test_unmap_round_trip),
		cmocka_unit_test(test_texts_tell_causes_apart),
		cmocka_unit_test(test_unknown_codes),
		cmocka_unit_test(test_format_names_peer),
		cmocka_unit_test(test_is_rnr),
		cmocka_unit_test(test_cq_err_entry),
	};

	return cmocka_run_group_tests_name("srd_errno", tests, NULL, NULL);
}
