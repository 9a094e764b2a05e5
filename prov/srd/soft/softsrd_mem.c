/* SPDX-License-Identifier: MIT */
/*
 * Protection domains, memory regions and address handles. MR keys are the
 * only thing a remote peer names, so they are looked up in a hash and never
 * trusted as pointers.
 */
#include "weft/compat.h"
#include "softsrd_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void softsrd_gid_from_ip(union ibv_gid *gid, struct in_addr ip)
{
	/* IPv4-mapped IPv6: ::ffff:a.b.c.d */
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], &ip.s_addr, 4);
}

int softsrd_ip_from_gid(const union ibv_gid *gid, struct in_addr *ip)
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	if (memcmp(gid->raw, prefix, sizeof(prefix)))
		return -1;
	memcpy(&ip->s_addr, &gid->raw[12], 4);
	return 0;
}

struct ibv_pd *softsrd_alloc_pd(struct ibv_context *context)
{
	struct softsrd_pd *pd = calloc(1, sizeof(*pd));

	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->ibv_pd.context = context;
	pd->ibv_pd.handle = (uint32_t)(uintptr_t)pd;
	return &pd->ibv_pd;
}

int softsrd_dealloc_pd(struct ibv_pd *pd)
{
	free(to_softsrd_pd(pd));
	return 0;
}

#define SOFTSRD_ACCESS_KNOWN (IBV_ACCESS_LOCAL_WRITE | \
	IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
	IBV_ACCESS_RELAXED_ORDERING)

struct ibv_mr *softsrd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			      int access)
{
	struct softsrd_ctx *ctx = to_softsrd_ctx(pd->context);
	struct softsrd_mr *mr, *dup;

	if (!length || (uintptr_t)addr + length < (uintptr_t)addr ||
	    (access & ~SOFTSRD_ACCESS_KNOWN)) {
		FI_WARN(softsrd_prov, FI_LOG_MR,
			"reg_mr: bad range %p+%zu or access 0x%x\n", addr,
			length, access);
		errno = EINVAL;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	mr->ibv_mr.context = pd->context;
	mr->ibv_mr.pd = pd;
	mr->ibv_mr.addr = addr;
	mr->ibv_mr.length = length;
	mr->access = access;
	pthread_mutex_lock(&ctx->lock);
	/* Keys are not guessable from each other, and never 0. */
	do {
		ctx->key_gen = ctx->key_gen * 1103515245u + 12345u;
		mr->ibv_mr.lkey = ctx->key_gen | 1;
		HASH_FIND(hh, ctx->mrs, &mr->ibv_mr.lkey, sizeof(uint32_t), dup);
	} while (dup);
	mr->ibv_mr.rkey = mr->ibv_mr.lkey;
	mr->ibv_mr.handle = mr->ibv_mr.lkey;
	HASH_ADD(hh, ctx->mrs, ibv_mr.rkey, sizeof(uint32_t), mr);
	pthread_mutex_unlock(&ctx->lock);
	return &mr->ibv_mr;
}

int softsrd_dereg_mr(struct ibv_mr *ibv_mr)
{
	struct softsrd_ctx *ctx = to_softsrd_ctx(ibv_mr->context);
	struct softsrd_mr *mr = to_softsrd_mr(ibv_mr);

	pthread_mutex_lock(&ctx->lock);
	HASH_DEL(ctx->mrs, mr);
	if (ctx->mr_cache[softsrd_mr_slot(mr->ibv_mr.rkey)] == mr)
		ctx->mr_cache[softsrd_mr_slot(mr->ibv_mr.rkey)] = NULL;
	pthread_mutex_unlock(&ctx->lock);
	free(mr);
	return 0;
}

/* A direct-mapped cache in front of the hash: a consumer alternates
 * between a few MRs (srd: its send and its receive buffers), and each
 * hash lookup costs ~70 instructions. */
struct softsrd_mr *softsrd_mr_find(struct softsrd_ctx *ctx, uint32_t key)
{
	struct softsrd_mr **slot = &ctx->mr_cache[softsrd_mr_slot(key)];
	struct softsrd_mr *mr = *slot;

	if (mr && mr->ibv_mr.rkey == key)
		return mr;
	HASH_FIND(hh, ctx->mrs, &key, sizeof(key), mr);
	if (mr)
		*slot = mr;
	return mr;
}

bool softsrd_sge_valid(struct softsrd_ctx *ctx, const struct ibv_sge *sge)
{
	struct softsrd_mr *mr;
	uintptr_t start, end;

	if (!sge->length)
		return true;
	mr = softsrd_mr_find(ctx, sge->lkey);
	if (!mr)
		return false;
	start = (uintptr_t)mr->ibv_mr.addr;
	end = start + mr->ibv_mr.length;
	return sge->addr >= start && sge->addr <= end &&
	       sge->length <= end - sge->addr;
}

uint16_t softsrd_ahn_lookup(struct softsrd_ctx *ctx, const union ibv_gid *gid)
{
	struct softsrd_ahn *a;

	HASH_FIND(hh, ctx->ahns, gid, sizeof(*gid), a);
	return a ? a->ahn : 0xffff;
}

/* The receiver's AH number for a peer's GID, looked up again only when
 * AHs came or went since. */
uint16_t softsrd_peer_slid(struct softsrd_ctx *ctx, struct softsrd_peer *peer)
{
	union ibv_gid gid;

	if (peer->slid_gen != ctx->ahn_gen) {
		softsrd_gid_from_ip(&gid, peer->sin.sin_addr);
		peer->slid = softsrd_ahn_lookup(ctx, &gid);
		peer->slid_gen = ctx->ahn_gen;
	}
	return peer->slid;
}

static struct softsrd_ahn *softsrd_ahn_get(struct softsrd_ctx *ctx,
					   const union ibv_gid *gid)
{
	struct softsrd_ahn *a;

	HASH_FIND(hh, ctx->ahns, gid, sizeof(*gid), a);
	if (a) {
		a->refs++;
		return a;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->gid = *gid;
	a->refs = 1;
	/* 0xffff is "unknown sender" in completions */
	a->ahn = ctx->next_ahn++;
	if (ctx->next_ahn == 0xffff)
		ctx->next_ahn = 0;
	HASH_ADD(hh, ctx->ahns, gid, sizeof(a->gid), a);
	ctx->ahn_gen++;
	return a;
}

struct ibv_ah *softsrd_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct softsrd_ctx *ctx = to_softsrd_ctx(pd->context);
	struct softsrd_ah *ah;
	struct in_addr ip;

	if (!attr || !attr->is_global || attr->port_num != 1 ||
	    softsrd_ip_from_gid(&attr->grh.dgid, &ip)) {
		FI_WARN(softsrd_prov, FI_LOG_AV, "create_ah: needs a global "
			"route to an IPv4-mapped GID on port 1\n");
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	ah->ibv_ah.context = pd->context;
	ah->ibv_ah.pd = pd;
	ah->sin.sin_family = AF_INET;
	ah->sin.sin_addr = ip;
	pthread_mutex_lock(&ctx->lock);
	ah->ahn = softsrd_ahn_get(ctx, &attr->grh.dgid);
	pthread_mutex_unlock(&ctx->lock);
	if (!ah->ahn) {
		free(ah);
		errno = ENOMEM;
		return NULL;
	}
	ah->ibv_ah.handle = ah->ahn->ahn;
	return &ah->ibv_ah;
}

int softsrd_efadv_query_ah(struct ibv_ah *ibv_ah, struct efadv_ah_attr *attr,
			   uint32_t inlen)
{
	if (inlen < offsetof(struct efadv_ah_attr, ahn) + sizeof(attr->ahn))
		return EINVAL;
	memset(attr, 0, inlen);
	attr->ahn = to_softsrd_ah(ibv_ah)->ahn->ahn;
	return 0;
}

int softsrd_destroy_ah(struct ibv_ah *ibv_ah)
{
	struct softsrd_ctx *ctx = to_softsrd_ctx(ibv_ah->context);
	struct softsrd_ah *ah = to_softsrd_ah(ibv_ah);

	pthread_mutex_lock(&ctx->lock);
	if (!--ah->ahn->refs) {
		HASH_DEL(ctx->ahns, ah->ahn);
		ctx->ahn_gen++;
		free(ah->ahn);
	}
	pthread_mutex_unlock(&ctx->lock);
	free(ah);
	return 0;
}
