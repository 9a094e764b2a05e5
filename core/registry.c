/* SPDX-License-Identifier: MIT */
/*
 * The provider registry: built-in providers in preference order, then
 * those added by weft_prov_register (tests).
 */
#include "weft/compat.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <utlist.h>
#include "core_priv.h"

struct weft_prov_entry {
	struct fi_provider *prov;
	int builtin;
	struct weft_prov_entry *prev, *next;
};

static const struct {
	const char *name;
	struct fi_provider *(*init)(void);
} builtin_provs[] = {
	/* Preference order: fi_getinfo lists results in this order. */
	{ "srd", srd_prov_init },
	{ "shm", shm_prov_init },
	{ "tcp", tcp_prov_init },
};

static struct weft_prov_entry *prov_list;
static pthread_mutex_t prov_lock = PTHREAD_MUTEX_INITIALIZER;

/* Called with prov_lock held. */
static struct weft_prov_entry *prov_find_locked(const char *name)
{
	struct weft_prov_entry *entry;

	DL_FOREACH(prov_list, entry) {
		if (!strcasecmp(entry->prov->name, name))
			return entry;
	}
	return NULL;
}

static int prov_valid(const struct fi_provider *prov)
{
	if (!prov || !prov->name || !*prov->name || !prov->getinfo) {
		FI_WARN(&weft_core_prov, FI_LOG_CORE,
			"provider %s lacks a name or getinfo; ignored\n",
			prov && prov->name ? prov->name : "(null)");
		return 0;
	}
	if (FI_MAJOR(prov->fi_version) != FI_MAJOR_VERSION) {
		FI_WARN(&weft_core_prov, FI_LOG_CORE,
			"provider %s implements API %u.%u, not 1.x; ignored\n",
			prov->name, FI_MAJOR(prov->fi_version),
			FI_MINOR(prov->fi_version));
		return 0;
	}
	return 1;
}

static int prov_add(struct fi_provider *prov, int builtin)
{
	struct weft_prov_entry *entry;

	if (!prov_valid(prov))
		return -FI_EINVAL;
	entry = calloc(1, sizeof(*entry));
	if (!entry)
		return -FI_ENOMEM;
	entry->prov = prov;
	entry->builtin = builtin;

	pthread_mutex_lock(&prov_lock);
	if (prov_find_locked(prov->name)) {
		pthread_mutex_unlock(&prov_lock);
		FI_WARN(&weft_core_prov, FI_LOG_CORE,
			"provider %s is already registered\n", prov->name);
		free(entry);
		return -FI_EALREADY;
	}
	DL_APPEND(prov_list, entry);
	pthread_mutex_unlock(&prov_lock);
	FI_INFO(&weft_core_prov, FI_LOG_CORE, "registered provider %s %u.%u\n",
		prov->name, FI_MAJOR(prov->version), FI_MINOR(prov->version));
	return 0;
}

void weft_prov_init_builtin(void)
{
	struct fi_provider *prov;

	for (size_t i = 0; i < WEFT_ARRAY_SIZE(builtin_provs); i++) {
		prov = builtin_provs[i].init();
		if (!prov) {
			FI_INFO(&weft_core_prov, FI_LOG_CORE,
				"provider %s cannot run here\n", builtin_provs[i].name);
			continue;
		}
		prov_add(prov, 1);
	}
}

int weft_prov_register(struct fi_provider *prov)
{
	weft_init();
	return prov_add(prov, 0);
}

static void prov_entry_release(struct weft_prov_entry *entry)
{
	if (entry->prov->cleanup)
		entry->prov->cleanup();
	free(entry);
}

void weft_prov_unregister_all_extra(void)
{
	struct weft_prov_entry *entry, *tmp, *dropped = NULL;

	pthread_mutex_lock(&prov_lock);
	DL_FOREACH_SAFE(prov_list, entry, tmp) {
		if (entry->builtin)
			continue;
		DL_DELETE(prov_list, entry);
		DL_APPEND(dropped, entry);
	}
	pthread_mutex_unlock(&prov_lock);

	/* Cleanup hooks run unlocked: they may log or read params. */
	DL_FOREACH_SAFE(dropped, entry, tmp) {
		DL_DELETE(dropped, entry);
		prov_entry_release(entry);
	}
}

void weft_prov_cleanup_all(void)
{
	struct weft_prov_entry *entry, *tmp, *all;

	pthread_mutex_lock(&prov_lock);
	all = prov_list;
	prov_list = NULL;
	pthread_mutex_unlock(&prov_lock);

	DL_FOREACH_SAFE(all, entry, tmp) {
		DL_DELETE(all, entry);
		prov_entry_release(entry);
	}
}

int weft_prov_snapshot(struct fi_provider ***provs, size_t *count)
{
	struct weft_prov_entry *entry;
	struct fi_provider **array;
	size_t n = 0;

	pthread_mutex_lock(&prov_lock);
	DL_FOREACH(prov_list, entry)
		n++;
	array = calloc(n ? n : 1, sizeof(*array));
	if (!array) {
		pthread_mutex_unlock(&prov_lock);
		return -FI_ENOMEM;
	}
	n = 0;
	DL_FOREACH(prov_list, entry)
		array[n++] = entry->prov;
	pthread_mutex_unlock(&prov_lock);

	*provs = array;
	*count = n;
	return 0;
}

struct fi_provider *weft_prov_find(const char *name)
{
	struct weft_prov_entry *entry;
	struct fi_provider *prov;

	pthread_mutex_lock(&prov_lock);
	entry = prov_find_locked(name);
	prov = entry ? entry->prov : NULL;
	pthread_mutex_unlock(&prov_lock);
	return prov;
}
