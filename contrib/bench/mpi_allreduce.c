/* SPDX-License-Identifier: MIT */
/*
 * MPI_Allreduce (float, MPI_SUM) with the method and columns of weft's
 * ft_bench_coll, to run beside it (coll_vs_mpi.sh): sizes MIN..MAX bytes
 * in powers of two, per size 3 warm-up operations, then REPS repetitions
 * of ITERS operations, each repetition's time per operation being the
 * slowest rank's; the median repetition is printed as CSV:
 * coll,provider,ranks,bytes,iters,usec,usec_p10,usec_p90,algbw_gbs,busbw_gbs
 *
 *   mpirun -np N mpi_allreduce [MIN [MAX [REPS]]]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	size_t min = argc > 1 ? strtoull(argv[1], NULL, 0) : 8;
	size_t max = argc > 2 ? strtoull(argv[2], NULL, 0) : 16u << 20;
	int reps = argc > 3 ? atoi(argv[3]) : 5, rank, n;
	float *in, *out;
	double t[64];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (reps < 1 || reps > 64)
		reps = 5;
	in = malloc(max);
	out = malloc(max);
	for (size_t i = 0; i < max / sizeof(float); i++)
		in[i] = out[i] = (float)(i % 13);
	if (!rank)
		printf("coll,provider,ranks,bytes,iters,usec,usec_p10,usec_p90,"
		       "algbw_gbs,busbw_gbs\n");
	for (size_t b = min; b <= max; b *= 2) {
		int cnt = (int)(b / sizeof(float));
		int it = b >= (1u << 20) ? 20 : b >= 65536 ? 200 : 1000;
		double med, alg;

		for (int w = 0; w < 3; w++)
			MPI_Allreduce(in, out, cnt, MPI_FLOAT, MPI_SUM,
				      MPI_COMM_WORLD);
		for (int r = 0; r < reps; r++) {
			double t0, mine;

			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
			for (int i = 0; i < it; i++)
				MPI_Allreduce(in, out, cnt, MPI_FLOAT, MPI_SUM,
					      MPI_COMM_WORLD);
			mine = (MPI_Wtime() - t0) / it * 1e6;
			MPI_Allreduce(&mine, &t[r], 1, MPI_DOUBLE, MPI_MAX,
				      MPI_COMM_WORLD);
		}
		qsort(t, (size_t)reps, sizeof(t[0]), cmp);
		med = t[reps / 2];
		alg = (double)b / (med / 1e6) / 1e9;
		if (!rank)
			printf("allreduce,ompi,%d,%zu,%d,%.3f,%.3f,%.3f,%.3f,%.3f\n",
			       n, b, it, med, t[reps / 10], t[(reps * 9) / 10],
			       alg, alg * 2.0 * (n - 1) / n);
		fflush(stdout);
	}
	free(in);
	free(out);
	MPI_Finalize();
	return 0;
}
