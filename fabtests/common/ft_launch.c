/* SPDX-License-Identifier: MIT */
/*
 * Launcher and out-of-band hub: the parent process parses options, listens
 * on a loopback TCP socket, forks the ranks and serves their allgathers.
 * It never calls libfabric, so no provider state is inherited across fork.
 */
#define _GNU_SOURCE
#include "ft.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <unistd.h>

static struct ft_opts ft_opts;
static pid_t ft_children[FT_MAX_RANKS];
static int ft_nchildren;

static void ft_usage(const struct ft_test *t)
{
	printf("usage: %s [options]\n  %s\n"
	       "  -p PROV     provider (FI_PROVIDER syntax, e.g. shm or 'tcp;ofi_rxm')\n"
	       "  -n N        number of processes (default %d)\n"
	       "  -m SIZE     largest message size (K/M suffix)\n"
	       "  -M SIZE     smallest message size (benchmarks)\n"
	       "  -I N        iterations per measurement\n"
	       "  -W N        warm-up iterations\n"
	       "  -r N        repetitions (median and spread over them)\n"
	       "  -w N        window of outstanding operations\n"
	       "  -f FMT      output: table, csv or json\n"
	       "  -q          quick: smaller sizes and counts\n"
	       "  -T          tagged variant (fi_tsend/fi_trecv)\n"
	       "  -a TYPE     AV type: map or table\n"
	       "  -A MODE     address exchange: oob (default) or node[:ADDR] (fi_getinfo node/service)\n"
	       "  -x MODE     program-specific mode\n"
	       "  -t SEC      timeout of the whole run (default 120)\n"
	       "  -C LIST     pin rank i to the i-th CPU of LIST (e.g. 0,1)\n"
	       "  -N LIST     rank i joins the i-th network namespace of LIST\n"
	       "              (names of ip netns, e.g. nsA,nsB; needs CAP_SYS_ADMIN)\n"
	       "  -v          verbose\n",
	       t->name, t->desc ? t->desc : "", t->nranks);
}

static size_t ft_parse_size(const char *s)
{
	char *end;
	size_t v = strtoull(s, &end, 0);

	switch (*end) {
	case 'k': case 'K': return v << 10;
	case 'm': case 'M': return v << 20;
	case 'g': case 'G': return v << 30;
	default: return v;
	}
}

static int ft_parse_opts(int argc, char **argv, const struct ft_test *t)
{
	int c;

	ft_opts.nranks = t->nranks;
	ft_opts.timeout_s = 120;
	ft_opts.op_timeout_ms = 20000;
	ft_opts.av_type = FI_AV_UNSPEC;
	ft_opts.prov = getenv("FT_PROVIDER");
	while ((c = getopt(argc, argv, "p:n:m:M:I:W:r:w:f:qTa:A:x:t:C:N:vh")) != -1) {
		switch (c) {
		case 'p': ft_opts.prov = optarg; break;
		case 'n': ft_opts.nranks = atoi(optarg); break;
		case 'm': ft_opts.max_size = ft_parse_size(optarg); break;
		case 'M': ft_opts.min_size = ft_parse_size(optarg); break;
		case 'I': ft_opts.iters = atoi(optarg); break;
		case 'W': ft_opts.warmup = atoi(optarg); break;
		case 'r': ft_opts.reps = atoi(optarg); break;
		case 'w': ft_opts.window = atoi(optarg); break;
		case 'f':
			if (!strcmp(optarg, "csv"))
				ft_opts.out = FT_OUT_CSV;
			else if (!strcmp(optarg, "json"))
				ft_opts.out = FT_OUT_JSON;
			else
				ft_opts.out = FT_OUT_TABLE;
			break;
		case 'q': ft_opts.quick = true; break;
		case 'T': ft_opts.tagged = true; break;
		case 'a':
			ft_opts.av_type = !strcmp(optarg, "table") ? FI_AV_TABLE : FI_AV_MAP;
			break;
		case 'A':
			if (!strncmp(optarg, "node", 4)) {
				ft_opts.addr_mode = FT_ADDR_NODE;
				ft_opts.node = optarg[4] == ':' ? optarg + 5 : "127.0.0.1";
			}
			break;
		case 'x': ft_opts.xopt = optarg; break;
		case 't': ft_opts.timeout_s = atoi(optarg); break;
		case 'C': ft_opts.cpus = optarg; break;
		case 'N': ft_opts.netns = optarg; break;
		case 'v': ft_opts.verbose = true; break;
		case 'h': ft_usage(t); exit(0);
		default: ft_usage(t); return -1;
		}
	}
	if (ft_opts.nranks < (t->min_ranks ? t->min_ranks : 2) ||
	    ft_opts.nranks > FT_MAX_RANKS) {
		fprintf(stderr, "%s: -n must be between %d and %d\n", t->name,
			t->min_ranks ? t->min_ranks : 2, FT_MAX_RANKS);
		return -1;
	}
	if (ft_opts.addr_mode == FT_ADDR_NODE && ft_opts.nranks != 2) {
		fprintf(stderr, "%s: -A node needs exactly 2 processes\n", t->name);
		return -1;
	}
	return 0;
}

void ft_log(struct ft_ctx *ctx, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "[%s rank %d] %s\n", ctx->test_name, ctx->rank, buf);
}

void ft_dbg(struct ft_ctx *ctx, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (!ctx->opts->verbose)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "[%s rank %d] %s\n", ctx->test_name, ctx->rank, buf);
}

static int ft_full_io(int fd, void *buf, size_t len, bool wr)
{
	char *p = buf;

	while (len) {
		ssize_t n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static char ft_watchdog_msg[256];

static void ft_watchdog_fire(int sig)
{
	ssize_t r = write(2, ft_watchdog_msg, strlen(ft_watchdog_msg));

	(void)r;
	_exit(FT_FAIL);
}

void ft_watchdog(struct ft_ctx *ctx, int seconds, const char *what)
{
	snprintf(ft_watchdog_msg, sizeof(ft_watchdog_msg),
		 "[%s rank %d] ERROR %s did not return within %d s\n", ctx->test_name, ctx->rank,
		 what, seconds);
	signal(SIGALRM, ft_watchdog_fire);
	alarm((unsigned)seconds);
}

void ft_watchdog_off(void)
{
	alarm(0);
}

/* ---- rank side of the collectives ---------------------------------------- */

static int ft_oob_send(struct ft_ctx *ctx, const void *in, size_t len)
{
	uint32_t l = (uint32_t)len;

	if (ft_full_io(ctx->oob_fd, &l, sizeof(l), true) ||
	    (len && ft_full_io(ctx->oob_fd, (void *)in, len, true))) {
		FT_ERR(ctx, "out-of-band send failed: launcher or a peer is gone");
		return -1;
	}
	return 0;
}

static int ft_oob_recv_all(struct ft_ctx *ctx, size_t len, void *out)
{
	for (int i = 0; i < ctx->nranks; i++) {
		uint32_t l;

		if (ft_full_io(ctx->oob_fd, &l, sizeof(l), false)) {
			FT_ERR(ctx, "out-of-band receive failed: a peer is gone");
			return -1;
		}
		if (l != len) {
			FT_ERR(ctx, "allgather: rank %d gave %u bytes, expected %zu", i, l, len);
			return -1;
		}
		if (len && ft_full_io(ctx->oob_fd, (char *)out + (size_t)i * len, len, false))
			return -1;
	}
	return 0;
}

int ft_allgather(struct ft_ctx *ctx, const void *in, size_t len, void *out)
{
	if (ft_oob_send(ctx, in, len))
		return -1;
	return ft_oob_recv_all(ctx, len, out);
}

int ft_barrier(struct ft_ctx *ctx)
{
	return ft_allgather(ctx, NULL, 0, NULL);
}

int ft_barrier_progress(struct ft_ctx *ctx)
{
	struct pollfd pfd = { .fd = ctx->oob_fd, .events = POLLIN };
	unsigned spins = 0;

	if (ft_oob_send(ctx, NULL, 0))
		return -1;
	while (poll(&pfd, 1, 0) == 0) {
		if (ctx->cq)
			ft_progress(ctx);
		ft_relax(&spins);
	}
	return ft_oob_recv_all(ctx, 0, NULL);
}

/* ---- launcher side --------------------------------------------------------- */

struct ft_hub_peer {
	int fd;
	bool gone;
	bool have;       /* contributed to the current round */
	uint32_t len;
	size_t got;      /* bytes of header + payload received */
	char *buf;
};

static void ft_kill_children(int sig)
{
	for (int i = 0; i < ft_nchildren; i++)
		if (ft_children[i] > 0)
			kill(ft_children[i], sig);
}

static void ft_on_signal(int sig)
{
	static const char alrm[] = "FAIL: run timeout (-t), ranks killed\n";
	static const char term[] = "FAIL: terminated by a signal, ranks killed\n";
	ssize_t r;

	ft_kill_children(SIGKILL);
	r = sig == SIGALRM ? write(2, alrm, sizeof(alrm) - 1) : write(2, term, sizeof(term) - 1);
	(void)r;
	_exit(FT_FAIL);
}

/* read what is available of one rank's message; returns -1 on EOF */
static int ft_hub_read(struct ft_hub_peer *p)
{
	for (;;) {
		ssize_t n;

		if (p->got < sizeof(uint32_t)) {
			n = recv(p->fd, (char *)&p->len + p->got, sizeof(uint32_t) - p->got,
				 MSG_DONTWAIT);
		} else {
			size_t off = p->got - sizeof(uint32_t);

			if (off == p->len) {
				p->have = true;
				return 0;
			}
			if (!p->buf)
				p->buf = malloc(p->len ? p->len : 1);
			n = recv(p->fd, p->buf + off, p->len - off, MSG_DONTWAIT);
		}
		if (n == 0)
			return -1;
		if (n < 0)
			return (errno == EAGAIN || errno == EINTR) ? 0 : -1;
		p->got += (size_t)n;
		if (p->got == sizeof(uint32_t) && p->len == 0) {
			p->have = true;
			return 0;
		}
	}
}

static int ft_hub_broadcast(struct ft_hub_peer *peers, int n)
{
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			if (ft_full_io(peers[i].fd, &peers[j].len, sizeof(uint32_t), true) ||
			    (peers[j].len &&
			     ft_full_io(peers[i].fd, peers[j].buf, peers[j].len, true)))
				return -1;
		}
	}
	for (int j = 0; j < n; j++) {
		free(peers[j].buf);
		peers[j].buf = NULL;
		peers[j].got = 0;
		peers[j].len = 0;
		peers[j].have = false;
	}
	return 0;
}

static bool ft_sigkill_ok;

static int ft_status_merge(int cur, int status)
{
	int code;

	if (ft_sigkill_ok && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		return cur;
	if (!WIFEXITED(status))
		return FT_FAIL;
	code = WEXITSTATUS(status);
	if (code == FT_FAIL || (code != FT_PASS && code != FT_SKIP) || cur == FT_FAIL)
		return FT_FAIL;
	if (code == FT_SKIP || cur == FT_SKIP)
		return FT_SKIP;
	return FT_PASS;
}

/* serve rounds until every rank has exited; abort all on a failure */
static int ft_hub_serve(struct ft_hub_peer *peers, int n, const char *name)
{
	int result = FT_PASS, alive = n;

	if (n <= 0 || n > FT_MAX_RANKS)
		return FT_FAIL;
	while (alive) {
		struct pollfd pfd[FT_MAX_RANKS];
		int have = 0, gone = 0, status;
		pid_t pid;

		for (int i = 0; i < n; i++) {
			pfd[i].fd = peers[i].gone ? -1 : peers[i].fd;
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
		}
		poll(pfd, (unsigned)n % (FT_MAX_RANKS + 1), 100);
		for (int i = 0; i < n; i++) {
			if (!peers[i].gone && pfd[i].revents && !peers[i].have &&
			    ft_hub_read(&peers[i])) {
				peers[i].gone = true;
				close(peers[i].fd);
			}
			have += peers[i].have;
			gone += peers[i].gone;
		}
		if (have == n && ft_hub_broadcast(peers, n))
			have = 0;
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			alive--;
			for (int i = 0; i < n; i++)
				if (ft_children[i] == pid)
					ft_children[i] = 0;
			result = ft_status_merge(result, status);
			if (result == FT_FAIL) {
				fprintf(stderr, "%s: a rank failed (status 0x%x); stopping the others\n",
					name, status);
				ft_kill_children(SIGKILL);
			}
		}
		/* a rank waiting in a collective that an exited rank will never join */
		if (have && gone && have + gone >= n && alive < n && result != FT_FAIL) {
			fprintf(stderr, "%s: rank exited while others wait in a collective\n", name);
			ft_kill_children(SIGKILL);
			result = FT_FAIL;
		}
	}
	return result;
}

static int ft_listen(int *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, FT_MAX_RANKS) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		perror("fabtests: out-of-band socket");
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

static int ft_connect(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* the rank-th entry of a comma-separated CPU list, cycling */
static void ft_pin(int rank)
{
	int cpus[FT_MAX_RANKS], n = 0;
	const char *p = ft_opts.cpus;
	cpu_set_t set;

	while (p && *p && n < FT_MAX_RANKS) {
		cpus[n++] = atoi(p);
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	if (!n)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpus[rank % n], &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("fabtests: sched_setaffinity");
}

/* Join the rank-th network namespace of -N (an ip netns name), so that
 * ranks stand in for hosts. The launcher's socket, already connected,
 * stays in the launcher's namespace. */
static int ft_join_netns(int rank)
{
	char name[256], path[512];
	const char *p = ft_opts.netns, *end;
	int n = 0, i, fd;

	if (!p || !*p)
		return 0;
	for (end = p; end; end = strchr(end + 1, ','))
		n++;
	for (i = 0; i < rank % n; i++)
		p = strchr(p, ',') + 1;
	end = strchr(p, ',');
	snprintf(name, sizeof(name), "%.*s", end ? (int)(end - p) : (int)strlen(p), p);
	snprintf(path, sizeof(path), "/var/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "fabtests: rank %d cannot join netns %s: %s\n", rank,
			name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static int ft_rank_main(const struct ft_test *t, int rank, int port)
{
	static struct ft_ctx ctx;
	int rc, fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	ft_pin(rank);
	fd = ft_connect(port);
	if (fd < 0) {
		perror("fabtests: connect to launcher");
		return FT_FAIL;
	}
	if (ft_join_netns(rank))
		return FT_FAIL;
	/* the hub needs to know which socket is which rank */
	if (ft_full_io(fd, &rank, sizeof(rank), true))
		return FT_FAIL;
	ctx.test = t;
	ctx.rank = rank;
	ctx.nranks = ft_opts.nranks;
	ctx.oob_fd = fd;
	ctx.opts = &ft_opts;
	ctx.cq_format = FI_CQ_FORMAT_TAGGED;
	ctx.cq_wait = FI_WAIT_NONE;
	ctx.next_key = 1;
	snprintf(ctx.test_name, sizeof(ctx.test_name), "%s", t->name);
	rc = t->run(&ctx);
	if (rc == FT_SKIP && rank == 0)
		printf("SKIP: %s\n", ctx.skip_reason[0] ? ctx.skip_reason : "not supported");
	fflush(stdout);
	close(fd);
	return rc;
}

int ft_main(int argc, char **argv, const struct ft_test *t)
{
	struct ft_hub_peer peers[FT_MAX_RANKS] = { 0 };
	int lfd, port, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (ft_parse_opts(argc, argv, t))
		return FT_FAIL;
	ft_sigkill_ok = t->rank_may_die;
	lfd = ft_listen(&port);
	if (lfd < 0)
		return FT_FAIL;
	signal(SIGTERM, ft_on_signal);
	signal(SIGINT, ft_on_signal);
	signal(SIGALRM, ft_on_signal);
	signal(SIGPIPE, SIG_IGN);
	fflush(NULL);
	for (int i = 0; i < ft_opts.nranks; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			ft_kill_children(SIGKILL);
			return FT_FAIL;
		}
		if (pid == 0) {
			close(lfd);
			signal(SIGTERM, SIG_DFL);
			signal(SIGINT, SIG_DFL);
			signal(SIGALRM, SIG_DFL);
			_exit(ft_rank_main(t, i, port));
		}
		ft_children[i] = pid;
		ft_nchildren = i + 1;
	}
	alarm((unsigned)ft_opts.timeout_s);
	for (int i = 0; i < ft_opts.nranks; i++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC), r, one = 1;

		if (fd < 0 || ft_full_io(fd, &r, sizeof(r), false) || r < 0 ||
		    r >= ft_opts.nranks || peers[r].fd) {
			fprintf(stderr, "%s: bad rank connection\n", t->name);
			ft_kill_children(SIGKILL);
			return FT_FAIL;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		peers[r].fd = fd;
	}
	close(lfd);
	rc = ft_hub_serve(peers, ft_opts.nranks, t->name);
	if (!t->bench)
		printf("%s: %s\n", t->name,
		       rc == FT_PASS ? "PASS" : rc == FT_SKIP ? "SKIP" : "FAIL");
	return rc;
}
