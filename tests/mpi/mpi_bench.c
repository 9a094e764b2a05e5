/* SPDX-License-Identifier: MIT */
/*
 * mpi_bench KIND SIZE [ITERS]: one MPI figure, printed by rank 0 as
 * "KIND SIZE VALUE UNIT", for contrib/bench/mpi_compare.sh.
 *   latency    2 ranks ping-pong; half a round trip, usec (mean over ITERS)
 *   bw         2 ranks; rank 0 streams windows of 64 MPI_Isend to rank 1,
 *              which acknowledges each window; MB/s (10^6 bytes)
 *   allreduce  every rank; MPI_Allreduce of SIZE bytes of floats (sum),
 *              usec per call (mean over ITERS, then over ranks)
 * Each measurement follows ITERS / 10 (at least 2) untimed rounds, as
 * osu_latency and osu_bw do, so connection setup and first-touch page
 * faults stay out of the figure.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64

static double pingpong(char *buf, size_t size, int iters, int rank)
{
	double t0 = 0;

	for (int i = -(iters / 10 + 2); i < iters; i++) {
		if (i == 0)
			t0 = MPI_Wtime();
		if (rank == 0) {
			MPI_Send(buf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, (int)size, MPI_CHAR, 1, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(buf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			MPI_Send(buf, (int)size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
		}
	}
	return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

static double bandwidth(char *buf, size_t size, int iters, int rank)
{
	MPI_Request req[WINDOW];
	double t0 = 0;
	char ack = 0;

	for (int i = -(iters / 10 + 2); i < iters; i++) {
		if (i == 0)
			t0 = MPI_Wtime();
		for (int w = 0; w < WINDOW && rank < 2; w++) {
			if (rank == 0)
				MPI_Isend(buf, (int)size, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &req[w]);
			else
				MPI_Irecv(buf, (int)size, MPI_CHAR, 0, 2, MPI_COMM_WORLD, &req[w]);
		}
		if (rank < 2)
			MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
		if (rank == 0)
			MPI_Recv(&ack, 1, MPI_CHAR, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		else if (rank == 1)
			MPI_Send(&ack, 1, MPI_CHAR, 0, 3, MPI_COMM_WORLD);
	}
	return (double)size * WINDOW * iters / ((MPI_Wtime() - t0) * 1e6);
}

static double allreduce(size_t size, int iters)
{
	int n = (int)(size / sizeof(float));
	float *in = malloc(size), *out = malloc(size);
	double t0 = 0, mine, sum = 0;
	int nranks;

	if (!in || !out)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (int i = 0; i < n; i++)
		in[i] = (float)(i % 100);
	for (int i = -(iters / 10 + 2); i < iters; i++) {
		if (i == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	}
	mine = (MPI_Wtime() - t0) * 1e6 / iters;
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	free(in);
	free(out);
	return sum / nranks;
}

int main(int argc, char **argv)
{
	int rank, nranks, iters;
	size_t size;
	double v;
	char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (argc < 3 || nranks < 2) {
		if (rank == 0)
			fprintf(stderr, "usage: mpi_bench latency|bw|allreduce SIZE [ITERS] "
				"(2 ranks or more)\n");
		MPI_Finalize();
		return 2;
	}
	size = strtoull(argv[2], NULL, 0);
	iters = argc > 3 ? atoi(argv[3]) : 1000;
	if (iters < 1)
		iters = 1;
	buf = malloc(size ? size : 1);
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 2);
	memset(buf, 1, size);
	if (!strcmp(argv[1], "latency")) {
		v = pingpong(buf, size, iters, rank);
		if (rank == 0)
			printf("latency %zu %.3f usec\n", size, v);
	} else if (!strcmp(argv[1], "bw")) {
		v = bandwidth(buf, size, iters, rank);
		if (rank == 0)
			printf("bw %zu %.1f MB/s\n", size, v);
	} else if (!strcmp(argv[1], "allreduce")) {
		v = allreduce(size, iters);
		if (rank == 0)
			printf("allreduce %zu %.1f usec\n", size, v);
	} else {
		if (rank == 0)
			fprintf(stderr, "mpi_bench: unknown kind %s\n", argv[1]);
		MPI_Finalize();
		return 2;
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
