/* SPDX-License-Identifier: MIT */
/*
 * Collectives with checked results: MPI_Allreduce (integer and floating
 * point sums, maximum), MPI_Alltoall and MPI_Bcast from every root, from one
 * element to several MiB, so both the eager and the large-message paths of
 * the transport below carry them.
 */
#include "mpi_check.h"

/* Element counts: one, a few cache lines, and 4 MiB of int64 or double. */
static const int counts[] = { 1, 1000, 1 << 19 };
#define NCOUNTS (int)(sizeof(counts) / sizeof(counts[0]))

static int64_t ival(int rank, int i)
{
	return (int64_t)rank * 1000003 + i;
}

/* Doubles that are exact small integers sum exactly in any order. */
static double dval(int rank, int i)
{
	return (double)((rank + 1) * ((i % 977) + 1));
}

static void allreduce_count(int n)
{
	int64_t *is = mc_alloc(n * sizeof(*is)), *ir = mc_alloc(n * sizeof(*ir));
	double *ds = mc_alloc(n * sizeof(*ds)), *dr = mc_alloc(n * sizeof(*dr));
	int64_t rsum = (int64_t)mc.size * (mc.size - 1) / 2;

	for (int i = 0; i < n; i++) {
		is[i] = ival(mc.rank, i);
		ds[i] = dval(mc.rank, i);
	}
	MPI_Allreduce(is, ir, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0, bad = 0; i < n && bad < MC_MAX_DETAILS; i++) {
		int64_t want = rsum * 1000003 + (int64_t)mc.size * i;

		if (ir[i] != want) {
			mc_fail("int64 sum of %d: [%d] = %lld, expected %lld", n, i,
				(long long)ir[i], (long long)want);
			bad++;
		}
	}
	MPI_Allreduce(ds, dr, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0, bad = 0; i < n && bad < MC_MAX_DETAILS; i++) {
		double want = (double)mc.size * (mc.size + 1) / 2 * ((i % 977) + 1);

		if (dr[i] != want) {
			mc_fail("double sum of %d: [%d] = %g, expected %g", n, i, dr[i], want);
			bad++;
		}
	}
	/* in place, and an operation where the largest rank's value wins */
	MPI_Allreduce(MPI_IN_PLACE, is, n, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
	for (int i = 0, bad = 0; i < n && bad < MC_MAX_DETAILS; i++) {
		if (is[i] != ival(mc.size - 1, i)) {
			mc_fail("int64 max of %d in place: [%d] = %lld, expected %lld", n, i,
				(long long)is[i], (long long)ival(mc.size - 1, i));
			bad++;
		}
	}
	free(is);
	free(ir);
	free(ds);
	free(dr);
}

static void test_allreduce(void)
{
	mc_begin("MPI_Allreduce int64/double sum, int64 max in place");
	for (int c = 0; c < NCOUNTS; c++)
		allreduce_count(counts[c]);
	mc_end();
}

/* Block j of rank r's send buffer is for rank j: element i is ival(r*N+j, i),
 * so every received element names its sender, its destination and its place. */
static void alltoall_count(int n)
{
	size_t total = (size_t)n * mc.size;
	int64_t *s = mc_alloc(total * sizeof(*s)), *r = mc_alloc(total * sizeof(*r));

	for (int j = 0; j < mc.size; j++)
		for (int i = 0; i < n; i++)
			s[(size_t)j * n + i] = ival(mc.rank * mc.size + j, i);
	memset(r, 0xEE, total * sizeof(*r));
	MPI_Alltoall(s, n, MPI_INT64_T, r, n, MPI_INT64_T, MPI_COMM_WORLD);
	for (int j = 0, bad = 0; j < mc.size; j++) {
		for (int i = 0; i < n && bad < MC_MAX_DETAILS; i++) {
			int64_t want = ival(j * mc.size + mc.rank, i);

			if (r[(size_t)j * n + i] != want) {
				mc_fail("alltoall of %d: block %d [%d] = %lld, expected %lld", n,
					j, i, (long long)r[(size_t)j * n + i], (long long)want);
				bad++;
			}
		}
	}
	free(s);
	free(r);
}

/* Blocks up to 512 KiB: a rank's buffers then hold 4 MiB at 8 ranks. */
static void test_alltoall(void)
{
	static const int bcounts[] = { 1, 1000, 1 << 16 };

	mc_begin("MPI_Alltoall int64, 8 B to 512 KiB blocks");
	for (int c = 0; c < (int)(sizeof(bcounts) / sizeof(bcounts[0])); c++)
		alltoall_count(bcounts[c]);
	mc_end();
}

static void test_bcast(void)
{
	static const size_t sizes[] = { 1, 4096, 65537, 4u << 20 };
	uint8_t *buf = mc_alloc(4u << 20);

	mc_begin("MPI_Bcast from every root, 1 B to 4 MiB");
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		for (int root = 0; root < mc.size; root++) {
			uint32_t seed = (uint32_t)(root * 31 + (int)k);
			char what[48];

			if (mc.rank == root)
				mc_fill(buf, sizes[k], seed);
			else
				memset(buf, 0xEE, sizes[k]);
			MPI_Bcast(buf, (int)sizes[k], MPI_BYTE, root, MPI_COMM_WORLD);
			snprintf(what, sizeof(what), "bcast from %d", root);
			mc_check_pattern(buf, sizes[k], seed, what);
		}
	}
	mc_end();
	free(buf);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	mc_init();
	test_allreduce();
	test_alltoall();
	test_bcast();
	return mc_finish();
}
