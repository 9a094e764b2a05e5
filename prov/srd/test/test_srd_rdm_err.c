/* SPDX-License-Identifier: MIT */
/*
 * Error completions a user can act on: toward a closed endpoint, toward an
 * address that names no endpoint, and a write with CQ data that the target
 * (not progressing, its receives used up) refuses with RNR. Each entry's
 * err_data is srd's record of the peer, and fi_cq_strerror names the peer
 * (its srd:// address and fi_addr) and the cause; err_data comes back in
 * the caller's buffer when one is given (API >= 1.5), else in CQ memory.
 */
#include "test_srd_rma_common.h"
#include "../src/rdm/srd_rma.h"

#include <stdlib.h>
#include <string.h>

#define ERR_POLLS 20000000L

/* Read a's CQ only (the peer is closed, or must not progress) until an
 * error entry; successes are counted. user_buf: err_data buffer offered. */
static struct fi_cq_err_entry read_err(struct fid_cq *cq, void *user_buf,
				       size_t user_size, int *ok)
{
	struct fi_cq_tagged_entry ent;
	struct fi_cq_err_entry err;
	ssize_t ret;
	long i;

	for (i = 0; i < ERR_POLLS; i++) {
		ret = fi_cq_read(cq, &ent, 1);
		if (ret == 1 && ok)
			(*ok)++;
		if (ret == -FI_EAVAIL)
			break;
		assert_true(ret == 1 || ret == -FI_EAGAIN);
	}
	assert_true(i < ERR_POLLS);
	memset(&err, 0, sizeof(err));
	err.err_data = user_buf;
	err.err_data_size = user_size;
	assert_int_equal(fi_cq_readerr(cq, &err, 0), 1);
	return err;
}

/* The srd:// form of an endpoint name, as srd_peer_report logs it. */
static void name_str(const void *name, size_t len, char *out, size_t n)
{
	struct srd_ep_name nm;

	assert_int_equal(srd_ep_name_parse(name, len, &nm), 0);
	assert_int_equal(srd_ep_name_str(&nm, out, n), 0);
}

/* err_data is srd's record for peer/fi_addr, and strerror (into a buffer
 * and without one) names both and holds want (the cause). */
static void check_named(struct fid_cq *cq, const struct fi_cq_err_entry *e,
			const char *peer, fi_addr_t addr, const char *want)
{
	const struct srd_err_data *d = e->err_data;
	char buf[512], at[48];
	const char *s;

	assert_non_null(d);
	assert_int_equal(sizeof(*d), 64);	/* as fi_srd(7) documents */
	assert_int_equal(e->err_data_size, sizeof(*d));
	assert_int_equal(d->magic, SRD_ERR_DATA_MAGIC);
	assert_int_equal(d->err, e->err);
	assert_int_equal(d->prov_errno, e->prov_errno);
	assert_true(d->flags & SRD_ERR_DATA_F_PEER);
	assert_true(d->flags & SRD_ERR_DATA_F_ADDR);
	assert_true(d->fi_addr == addr);
	snprintf(at, sizeof(at), "(fi_addr %llu)", (unsigned long long)addr);

	s = fi_cq_strerror(cq, e->prov_errno, e->err_data, buf, sizeof(buf));
	print_message("# err %d (%s) prov_errno %d: %s\n", e->err,
		      fi_strerror(e->err), e->prov_errno, s);
	assert_ptr_equal(s, buf);
	assert_non_null(strstr(s, peer));
	assert_non_null(strstr(s, at));
	assert_non_null(strstr(s, want));
	/* fabtests' way: no buffer, text owned by the provider */
	s = fi_cq_strerror(cq, e->prov_errno, e->err_data, NULL, 0);
	assert_non_null(s);
	assert_string_equal(s, buf);
	/* without err_data: the cause alone, never a libc errno text */
	s = fi_cq_strerror(cq, e->prov_errno, NULL, buf, sizeof(buf));
	assert_null(strstr(s, "srd://"));
	assert_string_equal(s, srd_dev_err_format(e->prov_errno, NULL, buf,
						  sizeof(buf)));
}

/* b's endpoint closes; a's next send fails naming b: "remote endpoint
 * gone". err_data in CQ memory (no buffer offered). */
static void test_closed_peer(void **state)
{
	struct tfab f;
	struct fi_cq_err_entry e;
	char peer[128], msg[16] = "late";
	int ctx;

	(void)state;
	tfab_open(&f, 0, true);
	tfab_hello(&f);
	name_str(f.b.name, f.b.namelen, peer, sizeof(peer));
	assert_int_equal(fi_close(&f.b.ep->fid), 0);
	f.b.ep = NULL;
	assert_int_equal(fi_send(f.a.ep, msg, sizeof(msg), NULL, f.a.peer,
				 &ctx), 0);
	e = read_err(f.a.cq, NULL, 0, NULL);
	assert_ptr_equal(e.op_context, &ctx);
	assert_int_equal(e.err, FI_ENOTCONN);
	assert_int_equal(e.prov_errno, SRD_EFA_IO_REMOTE_BAD_DEST_QPN);
	check_named(f.a.cq, &e, peer, f.a.peer, "remote endpoint gone");
	tfab_close(&f);
}

/* An address whose QPN names no endpoint: the handshake fails and the
 * queued send with it; err_data copied into the caller's buffer. */
static void test_unknown_peer(void **state)
{
	struct tfab f;
	struct fi_cq_err_entry e;
	struct srd_ep_name bogus;
	uint8_t user[80];	/* more than err_data needs */
	char peer[128], msg[16] = "nobody";
	fi_addr_t addr;
	int ctx;

	(void)state;
	tfab_open(&f, 0, true);
	assert_int_equal(srd_ep_name_parse(f.b.name, f.b.namelen, &bogus), 0);
	bogus.qpn += 1000;
	assert_int_equal(srd_ep_name_str(&bogus, peer, sizeof(peer)), 0);
	assert_int_equal(fi_av_insert(f.a.av, &bogus, 1, &addr, 0, NULL), 1);
	assert_true(addr != f.a.peer);
	assert_int_equal(fi_send(f.a.ep, msg, sizeof(msg), NULL, addr, &ctx),
			 0);
	memset(user, 0xa5, sizeof(user));
	e = read_err(f.a.cq, user, sizeof(user), NULL);
	assert_ptr_equal(e.op_context, &ctx);
	assert_ptr_equal(e.err_data, user);
	/* softsrd: nobody answers for that QPN (EFA may say "unreachable") */
	assert_true(e.err == FI_ETIMEDOUT || e.err == FI_EHOSTUNREACH ||
		    e.err == FI_ENOTCONN);
	check_named(f.a.cq, &e, peer, addr,
		    srd_dev_prov_strerror(e.prov_errno));
	/* the buffer past what was copied is untouched */
	assert_int_equal(user[sizeof(user) - 1], 0xa5);
	tfab_close(&f);
}

/* Writes with CQ data each take a receive at b; b does not progress, so
 * after its posted receives are used the device answers RNR, retries,
 * and the write fails "receiver had no buffer posted (RNR)". */
static void test_rnr(void **state)
{
	struct trma t;
	struct fi_cq_err_entry e;
	struct fi_cq_tagged_entry ent;
	uint8_t src[64];
	char peer[128];
	int ctx, ok = 0, posted = 0, n;
	ssize_t ret;

	(void)state;
	/* device RDMA (this also links the RMA layer into the program) */
	srd_rma_force_emulation = false;
	trma_open(&t, FI_REMOTE_READ | FI_REMOTE_WRITE);
	if (!to_srd_ep(t.f.a.ep)->rma->hw_write) {
		print_message("# no device RDMA write: no RNR on writes\n");
		trma_close(&t);
		skip();
	}
	name_str(t.f.b.name, t.f.b.namelen, peer, sizeof(peer));
	tfab_fill(src, sizeof(src), 3);
	/* one more than b has receives posted, and a few */
	n = (int)to_srd_ep(t.f.b.ep)->rx_count + 8;
	while (posted < n) {
		ret = fi_writedata(t.f.a.ep, src, sizeof(src), NULL,
				   (uint64_t)posted, t.f.a.peer, t.base, t.key,
				   &ctx);
		if (ret == -FI_EAGAIN) {
			ret = fi_cq_read(t.f.a.cq, &ent, 1);
			if (ret == -FI_EAVAIL)
				break;
			if (ret == 1)
				ok++;
			continue;
		}
		assert_int_equal(ret, 0);
		posted++;
	}
	e = read_err(t.f.a.cq, NULL, 0, &ok);
	print_message("# %d writes posted, %d completed before the RNR\n",
		      posted, ok);
	assert_int_equal(e.err, FI_ENORX);
	assert_int_equal(e.prov_errno, SRD_EFA_IO_REMOTE_RNR);
	check_named(t.f.a.cq, &e, peer, t.f.a.peer,
		    "receiver had no buffer posted (RNR)");
	trma_close(&t);
}

/* fi_av_straddr prints the same srd:// form the error texts use, so a
 * user can match a failing peer against the addresses it inserted. */
static void test_av_straddr(void **state)
{
	struct tfab f;
	char peer[128], buf[128], small[12];
	size_t len = sizeof(buf);
	const char *s;

	(void)state;
	tfab_open(&f, 0, true);
	name_str(f.b.name, f.b.namelen, peer, sizeof(peer));
	s = fi_av_straddr(f.a.av, f.b.name, buf, &len);
	assert_ptr_equal(s, buf);
	assert_string_equal(buf, peer);
	assert_int_equal(len, strlen(peer) + 1);
	/* a short buffer: cut, terminated, and the size it needs */
	len = sizeof(small);
	fi_av_straddr(f.a.av, f.b.name, small, &len);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_memory_equal(small, peer, sizeof(small) - 1);
	assert_int_equal(len, strlen(peer) + 1);
	tfab_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_closed_peer),
		cmocka_unit_test(test_unknown_peer),
		cmocka_unit_test(test_rnr),
		cmocka_unit_test(test_av_straddr),
	};

	setenv("FI_SRD_LONG_PROBE_MS", "0", 1);
	/* Errors of the device path between two endpoints of one process,
	 * which shm would otherwise carry. */
	setenv("FI_SRD_USE_SHM", "0", 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
