/* SPDX-License-Identifier: MIT */
/*
 * Receiver-not-ready backoff, per peer. The device already retried; what
 * reaches us means the receiver is behind. Hammering it makes an RNR storm,
 * so new sends to that peer get -FI_EAGAIN for a while: a random 40-120 us
 * first (so senders that hit the same receiver spread out), doubling on
 * each further RNR up to 1 s, back to small after a send gets through.
 * The caller passes the time, so the logic is testable without clocks.
 */
#include "weft/compat.h"
#include "srd_dev.h"

uint64_t srd_dev_rng_next(uint64_t *state)
{
	/* xorshift64*: cheap, no libc state, good enough for jitter. */
	uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ULL;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static uint32_t srd_dev_rnr_first_wait_us(uint64_t *rng)
{
	uint32_t span = SRD_RNR_START_MAX_US - SRD_RNR_START_MIN_US + 1;

	return SRD_RNR_START_MIN_US + (uint32_t)(srd_dev_rng_next(rng) % span);
}

void srd_dev_rnr_on_rnr(struct srd_dev_rnr *r, uint64_t now_ns, uint64_t *rng)
{
	uint32_t wait;

	if (!r->wait_us)
		wait = srd_dev_rnr_first_wait_us(rng);
	else if (r->wait_us >= SRD_RNR_MAX_US / 2)
		wait = SRD_RNR_MAX_US;
	else
		wait = r->wait_us * 2;
	r->wait_us = wait;
	r->until_ns = now_ns + (uint64_t)wait * 1000;
	r->events++;
}

int srd_dev_rnr_check(const struct srd_dev_rnr *r, uint64_t now_ns)
{
	return now_ns < r->until_ns ? -FI_EAGAIN : 0;
}

void srd_dev_rnr_on_success(struct srd_dev_rnr *r)
{
	r->wait_us = 0;
	r->until_ns = 0;
}
