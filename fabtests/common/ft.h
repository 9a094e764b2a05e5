/* SPDX-License-Identifier: MIT */
/*
 * weft fabtests common helpers. Public libfabric API only: the programs built
 * on this run unchanged on Debian's libfabric and on weft.
 *
 * Model: a launcher process (never touches libfabric) forks N ranks and
 * serves as the out-of-band hub for allgathers and barriers over TCP
 * loopback. Each rank opens its own fabric objects.
 */
#ifndef FT_H
#define FT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#define FT_PASS 0
#define FT_FAIL 1
#define FT_SKIP 77

#define FT_MAX_RANKS 64
#define FT_STASH_SIZE 4096
#define FT_MIB (1024UL * 1024UL)

enum ft_out { FT_OUT_TABLE, FT_OUT_CSV, FT_OUT_JSON };
enum ft_addr_mode { FT_ADDR_OOB, FT_ADDR_NODE };

struct ft_opts {
	const char *prov;
	int nranks;
	size_t max_size;       /* largest message size, 0 = program default */
	size_t min_size;
	int iters;             /* 0 = program default */
	int warmup;
	int reps;
	int window;
	enum ft_out out;
	bool quick;
	bool verbose;
	bool tagged;           /* -T: tagged variant of a message test */
	enum fi_av_type av_type;
	enum ft_addr_mode addr_mode;
	int timeout_s;         /* whole run */
	int op_timeout_ms;     /* one completion */
	const char *xopt;      /* -x: program-specific mode */
	const char *node;      /* -A node: address fi_getinfo resolves */
	const char *cpus;      /* -C: rank i runs on the i-th CPU of this list */
	const char *netns;     /* -N: rank i joins the i-th network namespace */
};

/* One completion, error or not, in the widest format. */
struct ft_comp {
	struct fi_cq_tagged_entry e;
	fi_addr_t src;
	bool is_err;
	struct fi_cq_err_entry err;
};

struct ft_ctx {
	const struct ft_test *test;
	int rank, nranks;
	int oob_fd;
	struct ft_opts *opts;
	char test_name[64];

	struct fi_info *hints;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct fid_eq *eq;            /* opened by tests that need one */

	/* set by a test before ft_open() */
	enum fi_cq_format cq_format;
	enum fi_wait_obj cq_wait;
	bool cq_readfrom;             /* use fi_cq_readfrom (needs FI_SOURCE) */
	int (*pre_enable)(struct ft_ctx *ctx); /* bind counters, set options */
	void (*after_ep_close)(struct ft_ctx *ctx); /* close what was bound to the ep */

	void *name;
	size_t namelen;
	fi_addr_t peers[FT_MAX_RANKS];
	void *peer_names;             /* nranks * namelen */

	struct ft_comp stash[FT_STASH_SIZE];
	int stash_n;
	uint64_t next_key;
	char skip_reason[256];
};

struct ft_test {
	const char *name;
	const char *desc;
	int nranks;                  /* default rank count */
	int min_ranks;
	uint64_t caps;
	uint64_t mode;               /* extra mode bits the test accepts */
	void (*hints)(struct ft_ctx *ctx, struct fi_info *hints);
	int (*run)(struct ft_ctx *ctx);
	bool bench;
	/* a rank may end by SIGKILL (a test that kills one on purpose):
	 * that rank's death is not a failure */
	bool rank_may_die;
};

/* program entry: parses options, forks ranks, runs test->run in each */
int ft_main(int argc, char **argv, const struct ft_test *test);

/* logging */
void ft_log(struct ft_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ft_dbg(struct ft_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define FT_ERR(ctx, fmt, ...) \
	ft_log(ctx, "ERROR %s:%d: " fmt, __func__, __LINE__, ##__VA_ARGS__)
#define FT_CHECK(ctx, call) ({ \
	int ft_rc__ = (int)(call); \
	if (ft_rc__) FT_ERR(ctx, "%s: %d (%s)", #call, ft_rc__, fi_strerror(-ft_rc__)); \
	ft_rc__; })

/* out-of-band collectives through the launcher */
int ft_allgather(struct ft_ctx *ctx, const void *in, size_t len, void *out);
int ft_barrier(struct ft_ctx *ctx);
/* barrier that keeps the fabric progressing (manual-progress providers
 * need the target of RMA or of a rendezvous to poll) */
int ft_barrier_progress(struct ft_ctx *ctx);

/* fabric setup */
int ft_open(struct ft_ctx *ctx);
void ft_close(struct ft_ctx *ctx);
int ft_skip(struct ft_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool ft_need_mr_local(struct ft_ctx *ctx);
int ft_mr_reg(struct ft_ctx *ctx, void *buf, size_t len, uint64_t access,
	      struct fid_mr **mr, void **desc);
/* what a peer needs to reach a registered buffer */
struct ft_rma_key {
	uint64_t addr;
	uint64_t key;
	uint64_t len;
};
int ft_rma_key_exchange(struct ft_ctx *ctx, void *buf, size_t len, struct fid_mr *mr,
			struct ft_rma_key *keys /* nranks */);

/* a buffer, registered when the provider needs local descriptors or when
 * access asks for remote access */
struct ft_buf {
	char *p;
	size_t len;
	struct fid_mr *mr;
	void *desc;
};
int ft_buf_alloc(struct ft_ctx *ctx, struct ft_buf *b, size_t len, uint64_t access);
void ft_buf_free(struct ft_buf *b);

/* send/recv honouring -T (tagged) */
ssize_t ft_send(struct ft_ctx *ctx, const struct ft_buf *b, size_t off, size_t len,
		int peer, uint64_t tag, void *fctx);
ssize_t ft_recv(struct ft_ctx *ctx, const struct ft_buf *b, size_t off, size_t len,
		int peer, uint64_t tag, void *fctx);

/* completions */
void ft_progress(struct ft_ctx *ctx);
int ft_get_comp(struct ft_ctx *ctx, struct ft_comp *c, int timeout_ms);
int ft_wait_ctx(struct ft_ctx *ctx, void *op_context, struct ft_comp *c);
int ft_wait_n(struct ft_ctx *ctx, int n);
/* expect no completion to show up within ms (returns 0 when none came) */
int ft_expect_none(struct ft_ctx *ctx, int ms);
int ft_poll_once(struct fid_cq *cq, void *buf, size_t count);

/* retry a post while it returns -FI_EAGAIN, progressing in between */
#define FT_POST(ctx, call) ({ \
	ssize_t ft_prc__; \
	uint64_t ft_t0__ = ft_now_ns(); \
	while ((ft_prc__ = (call)) == -FI_EAGAIN) { \
		ft_progress(ctx); \
		if (ft_now_ns() - ft_t0__ > (uint64_t)(ctx)->opts->op_timeout_ms * 1000000ULL) \
			break; \
	} \
	if (ft_prc__) FT_ERR(ctx, "%s: %zd (%s)", #call, ft_prc__, fi_strerror((int)-ft_prc__)); \
	ft_prc__; })

/* data patterns */
void ft_fill(void *buf, size_t len, uint32_t seed);
/* returns 0 when buf holds the pattern, else logs the first mismatch */
int ft_verify(struct ft_ctx *ctx, const void *buf, size_t len, uint32_t seed, const char *what);
void *ft_alloc(size_t len);

/* sizes: 0, 1, powers of two with neighbours up to max, plus thresholds */
size_t ft_sizes(struct ft_ctx *ctx, size_t max, size_t *out, size_t cap);

/* a blocking libfabric call that may never return: a watchdog turns a hang
 * into a clear failure */
void ft_watchdog(struct ft_ctx *ctx, int seconds, const char *what);
void ft_watchdog_off(void);

/* time */
uint64_t ft_now_ns(void);
void ft_relax(unsigned *spins);

/* benchmark statistics and output */
struct ft_stat {
	double median, min, max, p10, p90;
};
void ft_stat_compute(double *v, int n, struct ft_stat *s);
struct ft_report_row {
	size_t size;
	int iters;
	struct ft_stat usec;   /* per operation (latency: half round trip) */
	double mbps;           /* MB/s (1e6 bytes) from median */
	double mmsgs;          /* million messages per second from median */
};
void ft_report_begin(struct ft_ctx *ctx, const char *bench);
void ft_report_row(struct ft_ctx *ctx, const char *bench, const struct ft_report_row *r);
void ft_report_end(struct ft_ctx *ctx, const char *bench);

const char *ft_caps_str(uint64_t caps, char *buf, size_t len);

#endif
