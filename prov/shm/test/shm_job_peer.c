/* SPDX-License-Identifier: MIT */
/*
 * One side of a named shm pair, as fabtests-style programs make one: the
 * server takes an endpoint name from a service (fi_getinfo with FI_SOURCE),
 * the client reaches it through the same service. test_shm_job.sh starts
 * pairs of them in several "jobs" (FI_SHM_JOB, launcher variables) at once.
 *
 *   shm_job_peer server SERVICE MARK READYFILE
 *     creates the endpoint, then READYFILE; takes one message (the
 *     client's address and mark), answers with "MARK/<client's mark>";
 *     exit 3 when the endpoint cannot be created.
 *   shm_job_peer client SERVICE MARK
 *     sends its address and MARK to the service's endpoint, prints the
 *     answer; exit 4 when that endpoint cannot be reached.
 * Every wait is bounded (WAIT_S); anything else that fails exits 1.
 */
#include "weft/compat.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#define ADDR_LEN 64
#define MARK_LEN 32
#define MSG_LEN (ADDR_LEN + MARK_LEN)
#define WAIT_S 30

struct peer {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	char name[ADDR_LEN];
};

static void die(const char *what, int ret, int code)
{
	fprintf(stderr, "shm_job_peer: %s: %s\n", what, fi_strerror(-ret));
	exit(code);
}

static void peer_open(struct peer *p, const char *service, bool server)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
	size_t len = sizeof(p->name);
	int ret;

	if (!hints)
		die("fi_allocinfo", -FI_ENOMEM, 1);
	hints->caps = FI_MSG;
	hints->ep_attr->type = FI_EP_RDM;
	hints->fabric_attr->prov_name = strdup("shm");
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, service,
			 server ? FI_SOURCE : 0, hints, &p->info);
	fi_freeinfo(hints);
	if (ret)
		die("fi_getinfo", ret, 1);
	ret = fi_fabric(p->info->fabric_attr, &p->fabric, NULL);
	if (!ret)
		ret = fi_domain(p->fabric, p->info, &p->domain, NULL);
	if (!ret)
		ret = fi_av_open(p->domain, &av_attr, &p->av, NULL);
	if (!ret)
		ret = fi_cq_open(p->domain, &cq_attr, &p->cq, NULL);
	if (ret)
		die("opening fabric, domain, AV, CQ", ret, 1);
	ret = fi_endpoint(p->domain, p->info, &p->ep, NULL);
	if (ret)
		die("fi_endpoint", ret, 3);
	ret = fi_ep_bind(p->ep, &p->av->fid, 0);
	if (!ret)
		ret = fi_ep_bind(p->ep, &p->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_enable(p->ep);
	if (!ret)
		ret = fi_getname(&p->ep->fid, p->name, &len);
	if (ret)
		die("enabling the endpoint", ret, 1);
}

static void peer_close(struct peer *p)
{
	fi_close(&p->ep->fid);
	fi_close(&p->cq->fid);
	fi_close(&p->av->fid);
	fi_close(&p->domain->fid);
	fi_close(&p->fabric->fid);
	fi_freeinfo(p->info);
}

/* The completion of ctx; an error completion exits with code. */
static void peer_wait(struct peer *p, void *ctx, int code)
{
	time_t end = time(NULL) + WAIT_S;
	struct fi_cq_err_entry err = { 0 };
	struct fi_cq_entry e;
	ssize_t r;

	for (;;) {
		r = fi_cq_read(p->cq, &e, 1);
		if (r == 1 && e.op_context == ctx)
			return;
		if (r == -FI_EAVAIL) {
			(void)fi_cq_readerr(p->cq, &err, 0);
			die("completion", -(int)err.err, code);
		}
		if (r != -FI_EAGAIN && r != 1)
			die("fi_cq_read", (int)r, 1);
		if (time(NULL) > end)
			die("waiting for a completion", -FI_ETIMEDOUT, 1);
	}
}

static void peer_send(struct peer *p, const void *buf, size_t len,
		      fi_addr_t dest, void *ctx, int code)
{
	time_t end = time(NULL) + WAIT_S;
	struct fi_cq_entry e;
	ssize_t r;

	while ((r = fi_send(p->ep, buf, len, NULL, dest, ctx)) == -FI_EAGAIN) {
		if (time(NULL) > end)
			die("fi_send", -FI_ETIMEDOUT, 1);
		(void)fi_cq_read(p->cq, &e, 0);
	}
	if (r)
		die("fi_send", (int)r, code);
	peer_wait(p, ctx, code);
}

static int server(const char *service, const char *mark, const char *ready)
{
	char msg[MSG_LEN + 1] = { 0 }, reply[2 * MARK_LEN + 2];
	struct fi_context rctx, sctx;
	struct peer p;
	fi_addr_t client;
	FILE *f;

	peer_open(&p, service, true);
	if (fi_recv(p.ep, msg, MSG_LEN, NULL, FI_ADDR_UNSPEC, &rctx))
		die("fi_recv", -FI_EIO, 1);
	f = fopen(ready, "w");
	if (!f || fprintf(f, "%.*s\n", ADDR_LEN, p.name) < 0 || fclose(f))
		die("writing the ready file", -FI_EIO, 1);
	peer_wait(&p, &rctx, 1);
	if (fi_av_insert(p.av, msg, 1, &client, 0, NULL) != 1)
		die("fi_av_insert of the client", -FI_EINVAL, 1);
	snprintf(reply, sizeof(reply), "%s/%.*s", mark, MARK_LEN,
		 msg + ADDR_LEN);
	peer_send(&p, reply, sizeof(reply), client, &sctx, 1);
	peer_close(&p);
	return 0;
}

static int client(const char *service, const char *mark)
{
	char msg[MSG_LEN] = { 0 }, reply[2 * MARK_LEN + 3] = { 0 };
	struct fi_context rctx, sctx;
	struct peer p;
	fi_addr_t srv;

	peer_open(&p, service, false);
	if (!p.info->dest_addr)
		die("fi_getinfo gave no dest_addr", -FI_EINVAL, 1);
	if (fi_av_insert(p.av, p.info->dest_addr, 1, &srv, 0, NULL) != 1)
		die("fi_av_insert of the server", -FI_EINVAL, 1);
	if (fi_recv(p.ep, reply, sizeof(reply) - 1, NULL, FI_ADDR_UNSPEC,
		    &rctx))
		die("fi_recv", -FI_EIO, 1);
	memcpy(msg, p.name, ADDR_LEN);
	snprintf(msg + ADDR_LEN, MARK_LEN, "%s", mark);
	peer_send(&p, msg, sizeof(msg), srv, &sctx, 4);
	peer_wait(&p, &rctx, 1);
	printf("reply %s\n", reply);
	peer_close(&p);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "server"))
		return server(argv[2], argv[3], argv[4]);
	if (argc == 4 && !strcmp(argv[1], "client"))
		return client(argv[2], argv[3]);
	fprintf(stderr, "usage: %s server SERVICE MARK READYFILE | "
		"client SERVICE MARK\n", argv[0]);
	return 1;
}
