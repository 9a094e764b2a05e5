/* SPDX-License-Identifier: MIT */
/*
 * Per-thread scratch buffers for the API calls that return a string they
 * own (fi_tostr, fi_cq_strerror with no buffer). They live on the heap
 * behind a pthread key, not in __thread arrays: the library is dlopen()ed
 * by Open MPI and Python, and glibc refuses to load a library whose static
 * TLS block does not fit the few hundred bytes it keeps spare.
 */
#include "weft/compat.h"
#include "weft/core.h"

#include <pthread.h>
#include <stdlib.h>

struct weft_thread_bufs {
	char buf[WEFT_TBUF_COUNT][WEFT_TBUF_SIZE];
};

static pthread_key_t weft_tbuf_key;
static pthread_once_t weft_tbuf_once = PTHREAD_ONCE_INIT;
static int weft_tbuf_key_err;

/* Shared fallback when a thread's buffers cannot be allocated: callers
 * still get a string (possibly overwritten by another thread's) rather
 * than NULL, which no caller of fi_tostr checks for. */
static char weft_tbuf_fallback[WEFT_TBUF_COUNT][WEFT_TBUF_SIZE];

static void weft_tbuf_key_init(void)
{
	weft_tbuf_key_err = pthread_key_create(&weft_tbuf_key, free);
}

char *weft_thread_buf(enum weft_tbuf which)
{
	struct weft_thread_bufs *b;

	pthread_once(&weft_tbuf_once, weft_tbuf_key_init);
	if (weft_tbuf_key_err)
		return weft_tbuf_fallback[which];
	b = pthread_getspecific(weft_tbuf_key);
	if (b)
		return b->buf[which];
	b = malloc(sizeof(*b));
	if (!b || pthread_setspecific(weft_tbuf_key, b)) {
		free(b);
		return weft_tbuf_fallback[which];
	}
	return b->buf[which];
}
