/* SPDX-License-Identifier: MIT */
/*
 * MPI_THREAD_MULTIPLE: two threads per rank send and receive at the same
 * time on the same communicator. Thread 0 exchanges with the pair partner
 * (r ^ 1), thread 1 around a ring (to r + 1, from r - 1); each thread uses
 * its own tag, so matching must keep the two streams apart while both
 * threads drive progress concurrently. Sizes cycle through the small,
 * medium and large paths of the transport. Run with an even number of ranks.
 */
#include "mpi_check.h"

#include <pthread.h>

#define ITERS 40
#define NTHREADS 2

static const size_t sizes[] = { 0, 8, 200, 4097, 65536, 300001, 1u << 20 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

struct worker {
	int id;
	int to, from;
	long errors;
	char detail[160];
};

static uint32_t seed_of(int sender, int thread, int iter)
{
	return (uint32_t)sender * 7919u + (uint32_t)thread * 104729u + (uint32_t)iter;
}

/* Records the first failure of a thread; printing and counting happen on
 * the main thread, since mc_fail is not meant for concurrent callers. */
static void worker_fail(struct worker *w, const char *what, size_t size, long at)
{
	if (!w->errors++)
		snprintf(w->detail, sizeof(w->detail), "thread %d: %s, %zu bytes, at %ld",
			 w->id, what, size, at);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint8_t *sbuf = mc_alloc(1u << 20), *rbuf = mc_alloc(1u << 20);

	for (int it = 0; it < ITERS; it++) {
		size_t size = sizes[(it + w->id) % NSIZES];
		MPI_Request req[2];
		MPI_Status st[2];
		int count = -1;
		long bad;

		mc_fill(sbuf, size, seed_of(mc.rank, w->id, it));
		memset(rbuf, 0xEE, size);
		MPI_Irecv(rbuf, (int)size, MPI_BYTE, w->from, w->id, MPI_COMM_WORLD, &req[0]);
		MPI_Isend(sbuf, (int)size, MPI_BYTE, w->to, w->id, MPI_COMM_WORLD, &req[1]);
		MPI_Waitall(2, req, st);
		MPI_Get_count(&st[0], MPI_BYTE, &count);
		if (count != (int)size || st[0].MPI_SOURCE != w->from || st[0].MPI_TAG != w->id)
			worker_fail(w, "count, source or tag wrong", size, count);
		bad = mc_verify(rbuf, size, seed_of(w->from, w->id, it));
		if (bad >= 0)
			worker_fail(w, "data differs", size, bad);
	}
	free(sbuf);
	free(rbuf);
	return NULL;
}

static void test_two_threads(void)
{
	struct worker w[NTHREADS] = {
		{ .id = 0, .to = mc.rank ^ 1, .from = mc.rank ^ 1 },
		{ .id = 1, .to = (mc.rank + 1) % mc.size,
		  .from = (mc.rank + mc.size - 1) % mc.size },
	};
	pthread_t tid[NTHREADS];

	mc_begin("MPI_THREAD_MULTIPLE, 2 threads per rank sending and receiving");
	for (int t = 0; t < NTHREADS; t++) {
		if (pthread_create(&tid[t], NULL, worker_main, &w[t])) {
			fprintf(stderr, "# rank %d: pthread_create failed\n", mc.rank);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	for (int t = 0; t < NTHREADS; t++) {
		pthread_join(tid[t], NULL);
		if (w[t].errors)
			mc_fail("%s (%ld errors)", w[t].detail, w[t].errors);
	}
	mc_end();
}

int main(int argc, char **argv)
{
	int provided = MPI_THREAD_SINGLE;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	mc_init();
	if (mc.size % 2) {
		if (mc.rank == 0)
			fprintf(stderr, "mpi_threads: needs an even number of ranks\n");
		MPI_Finalize();
		return 2;
	}
	mc_begin("MPI_Init_thread provides MPI_THREAD_MULTIPLE");
	MC_CHECK(provided == MPI_THREAD_MULTIPLE, "provided thread level %d", provided);
	mc_end();
	if (provided == MPI_THREAD_MULTIPLE)
		test_two_threads();
	return mc_finish();
}
