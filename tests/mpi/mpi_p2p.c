/* SPDX-License-Identifier: MIT */
/*
 * Point-to-point MPI over whatever the command line selects (pml cm + mtl
 * ofi in make check): ping-pong from 0 B to 4 MiB with checked data,
 * synchronous sends, probes from any source, and cancelled receives.
 * Ranks work in pairs (r, r ^ 1); run with an even number of ranks.
 */
#include "mpi_check.h"

#include <time.h>
#include <unistd.h>

#define GUARD 64           /* bytes past the message that must stay untouched */
#define GUARD_BYTE 0xEE
#define MAX_MSG (4u << 20)

static int partner(void)
{
	return mc.rank ^ 1;
}

static uint32_t seed_of(int sender, size_t size, int iter)
{
	return (uint32_t)sender * 1000003u + (uint32_t)size * 7u + (uint32_t)iter;
}

/* Receives one message of `size` bytes from `src` into a poisoned buffer
 * and checks its length, source, tag, payload and the bytes after it. */
static void recv_checked(uint8_t *buf, size_t size, int src, int tag, uint32_t seed,
			 const char *what)
{
	MPI_Status st;
	int count = -1;

	memset(buf, GUARD_BYTE, size + GUARD);
	MPI_Recv(buf, (int)size, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, MPI_BYTE, &count);
	MC_CHECK(count == (int)size, "%s: count %d, expected %zu", what, count, size);
	MC_CHECK(st.MPI_SOURCE == src && st.MPI_TAG == tag,
		 "%s: status source %d tag %d, expected %d %d", what, st.MPI_SOURCE,
		 st.MPI_TAG, src, tag);
	mc_check_pattern(buf, size, seed, what);
	for (size_t i = size; i < size + GUARD; i++) {
		if (buf[i] != GUARD_BYTE) {
			mc_fail("%s: %zu-byte message overwrote byte %zu", what, size, i);
			break;
		}
	}
}

static void pingpong_size(uint8_t *sbuf, uint8_t *rbuf, size_t size, int iters)
{
	char what[64];

	snprintf(what, sizeof(what), "pingpong %zu B", size);
	for (int it = 0; it < iters; it++) {
		if (mc.rank % 2 == 0) {
			mc_fill(sbuf, size, seed_of(mc.rank, size, it));
			MPI_Send(sbuf, (int)size, MPI_BYTE, partner(), 1, MPI_COMM_WORLD);
			recv_checked(rbuf, size, partner(), 2, seed_of(partner(), size, it), what);
		} else {
			recv_checked(rbuf, size, partner(), 1, seed_of(partner(), size, it), what);
			mc_fill(sbuf, size, seed_of(mc.rank, size, it));
			MPI_Send(sbuf, (int)size, MPI_BYTE, partner(), 2, MPI_COMM_WORLD);
		}
	}
}

/* Every power of two from 0 to 4 MiB, and sizes one off the boundaries
 * where providers switch protocols (inline, eager, segmented, rendezvous). */
static void test_pingpong(void)
{
	static const size_t odd[] = { 3, 17, 1000, 4095, 4097, 8191, 65535, 65537,
				      131073, 1000003, 3145733 };
	uint8_t *sbuf = mc_alloc(MAX_MSG + GUARD);
	uint8_t *rbuf = mc_alloc(MAX_MSG + GUARD);

	mc_begin("pingpong 0 B to 4 MiB, data checked");
	pingpong_size(sbuf, rbuf, 0, 2);
	for (size_t s = 1; s <= MAX_MSG; s *= 2)
		pingpong_size(sbuf, rbuf, s, 2);
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
		pingpong_size(sbuf, rbuf, odd[i], 2);
	mc_end();
	free(sbuf);
	free(rbuf);
}

/* An MPI_Issend may not complete before the receiver posts its receive: the
 * receiver posts it only after a second message says the sender has seen
 * the synchronous send stay incomplete for a while. */
static void ssend_size(size_t size)
{
	uint8_t *buf = mc_alloc(size + GUARD);
	char what[64];
	int go = 1, flag = 0;

	snprintf(what, sizeof(what), "Issend %zu B", size);
	if (mc.rank % 2 == 0) {
		MPI_Request req;

		mc_fill(buf, size, seed_of(mc.rank, size, 100));
		MPI_Issend(buf, (int)size, MPI_BYTE, partner(), 10, MPI_COMM_WORLD, &req);
		for (int i = 0; i < 20 && !flag; i++) {
			MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
			usleep(1000);
		}
		MC_CHECK(!flag, "%s completed before the receive was posted", what);
		MPI_Send(&go, 1, MPI_INT, partner(), 11, MPI_COMM_WORLD);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
		/* the blocking form, once the receiver is already waiting */
		mc_fill(buf, size, seed_of(mc.rank, size, 101));
		MPI_Ssend(buf, (int)size, MPI_BYTE, partner(), 12, MPI_COMM_WORLD);
	} else {
		MPI_Recv(&go, 1, MPI_INT, partner(), 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		recv_checked(buf, size, partner(), 10, seed_of(partner(), size, 100), what);
		recv_checked(buf, size, partner(), 12, seed_of(partner(), size, 101),
			     "Ssend");
	}
	free(buf);
}

static void test_ssend(void)
{
	mc_begin("MPI_Issend/MPI_Ssend wait for the receiver, 8 B and 1 MiB");
	ssend_size(8);
	ssend_size(1u << 20);
	mc_end();
}

static size_t probe_size(int src, int tag)
{
	return tag == 5 ? 16 + (size_t)src : 200000 + (size_t)src * 4099;
}

/* Rank 0 takes one message of each sender, in whatever order they come,
 * through MPI_Iprobe + MPI_Recv (tag 5) or MPI_Improbe + MPI_Mrecv (tag 6). */
static void probe_collect(int tag, int matched)
{
	int seen[256] = { 0 };
	uint8_t *buf = mc_alloc(probe_size(mc.size, 6) + GUARD);

	for (int got = 0; got < mc.size - 1; got++) {
		MPI_Message msg = MPI_MESSAGE_NULL;
		MPI_Status st;
		int flag = 0, count = -1, src;

		while (!flag) {
			if (matched)
				MPI_Improbe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &msg, &st);
			else
				MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &st);
		}
		src = st.MPI_SOURCE;
		MPI_Get_count(&st, MPI_BYTE, &count);
		if (src <= 0 || src >= mc.size || src >= 256 || seen[src]++) {
			mc_fail("tag %d: probe returned source %d (seen before or invalid)", tag, src);
			MPI_Abort(MPI_COMM_WORLD, 3);
		}
		MC_CHECK(count == (int)probe_size(src, tag), "tag %d from %d: probe count %d, expected %zu",
			 tag, src, count, probe_size(src, tag));
		if (matched) {
			memset(buf, GUARD_BYTE, probe_size(src, tag));
			MPI_Mrecv(buf, count, MPI_BYTE, &msg, &st);
			MC_CHECK(msg == MPI_MESSAGE_NULL, "MPI_Mrecv left the message handle set");
			MC_CHECK(st.MPI_SOURCE == src, "Mrecv source %d, expected %d", st.MPI_SOURCE, src);
			mc_check_pattern(buf, probe_size(src, tag), seed_of(src, 0, tag), "Mrecv data");
		} else {
			recv_checked(buf, probe_size(src, tag), src, tag, seed_of(src, 0, tag),
				     "Recv after Iprobe");
		}
	}
	free(buf);
}

static void test_probe(void)
{
	int flag = 1;

	mc_begin("MPI_Iprobe, MPI_Improbe + MPI_Mrecv from MPI_ANY_SOURCE");
	MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
	MC_CHECK(!flag, "MPI_Iprobe found a message with a tag nobody sent");
	MPI_Barrier(MPI_COMM_WORLD);
	if (mc.rank == 0) {
		probe_collect(5, 0);
		probe_collect(6, 1);
	} else {
		for (int tag = 5; tag <= 6; tag++) {
			size_t len = probe_size(mc.rank, tag);
			uint8_t *buf = mc_alloc(len);

			mc_fill(buf, len, seed_of(mc.rank, 0, tag));
			MPI_Send(buf, (int)len, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
			free(buf);
		}
	}
	mc_end();
}

static void cancel_unmatched(int src, int tag)
{
	uint8_t buf[64];
	MPI_Request req;
	MPI_Status st;
	int cancelled = 0;

	MPI_Irecv(buf, sizeof(buf), MPI_BYTE, src, tag, MPI_COMM_WORLD, &req);
	MPI_Cancel(&req);
	MPI_Wait(&req, &st);
	MPI_Test_cancelled(&st, &cancelled);
	MC_CHECK(cancelled, "receive (source %d, tag %d) not cancelled", src, tag);
}

/* Cancelled receives complete as cancelled and leave later messages with
 * their tag to later receives; a receive that already matched is not
 * cancelled and keeps its data. */
static void test_cancel(void)
{
	uint8_t buf[64], out[64], in[64 + GUARD];
	MPI_Request req;
	MPI_Status st;
	int cancelled = 1;

	mc_begin("MPI_Cancel of posted receives, MPI_Test_cancelled");
	cancel_unmatched(partner(), 77);
	cancel_unmatched(MPI_ANY_SOURCE, 78);
	MPI_Barrier(MPI_COMM_WORLD);
	mc_fill(out, sizeof(out), seed_of(mc.rank, 64, 77));
	MPI_Send(out, sizeof(out), MPI_BYTE, partner(), 77, MPI_COMM_WORLD);
	recv_checked(in, 64, partner(), 77, seed_of(partner(), 64, 77),
		     "message after a cancelled receive");

	/* Once every synchronous send has completed (the barrier), every
	 * receive below has matched: cancelling it must fail. */
	MPI_Irecv(buf, sizeof(buf), MPI_BYTE, partner(), 79, MPI_COMM_WORLD, &req);
	mc_fill(out, sizeof(out), seed_of(mc.rank, 64, 79));
	MPI_Ssend(out, sizeof(out), MPI_BYTE, partner(), 79, MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Cancel(&req);
	MPI_Wait(&req, &st);
	MPI_Test_cancelled(&st, &cancelled);
	MC_CHECK(!cancelled, "a receive whose message had arrived was cancelled");
	if (!cancelled)
		mc_check_pattern(buf, sizeof(buf), seed_of(partner(), 64, 79),
				 "matched receive after MPI_Cancel");
	mc_end();
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	mc_init();
	if (mc.size % 2) {
		if (mc.rank == 0)
			fprintf(stderr, "mpi_p2p: needs an even number of ranks\n");
		MPI_Finalize();
		return 2;
	}
	test_pingpong();
	test_ssend();
	test_probe();
	test_cancel();
	return mc_finish();
}
