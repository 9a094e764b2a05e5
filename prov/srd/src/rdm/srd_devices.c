/* SPDX-License-Identifier: MIT */
/*
 * The devices srd offers: every device of the selected verbs table (or the
 * one FI_SRD_DEVICE_NAME names), opened once at the first fi_getinfo and
 * kept until the provider's cleanup. Each is one fi_info and one domain
 * name; domains on different devices are independent (their own PD, AHs,
 * QPs and CQs). A device that does not open is not offered. With
 * FI_SRD_DEVICE unset and no EFA there is none and fi_getinfo answers
 * -FI_ENODATA (shm stays the default).
 */
#include "weft/compat.h"
#include "srd_rdm.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t srd_devs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct srd_dev *srd_devs[SRD_DEV_MAX];
static int srd_devs_count;
static bool srd_devs_scanned;	/* sticky until cleanup, even when empty */

/* The names the table lists, in its order (the first one reaches other
 * hosts first, softsrd_device.c). */
static int srd_devices_names(const struct srd_verbs_ops *verbs,
			     char names[][SRD_DEV_NAME_MAX])
{
	struct ibv_device **list;
	int n = 0, count = 0;

	list = verbs->get_device_list(&n);
	if (!list) {
		FI_INFO(&srd_prov, FI_LOG_CORE, "%s: no device list (%s)\n",
			verbs->name, strerror(errno));
		return 0;
	}
	if (n > SRD_DEV_MAX) {
		FI_WARN(&srd_prov, FI_LOG_CORE,
			"%s lists %d devices: only the first %d are offered\n",
			verbs->name, n, SRD_DEV_MAX);
		n = SRD_DEV_MAX;
	}
	for (int i = 0; i < n; i++) {
		const char *name = verbs->get_device_name(list[i]);

		if (srd_settings.device_name && *srd_settings.device_name &&
		    strcmp(name, srd_settings.device_name))
			continue;
		snprintf(names[count++], SRD_DEV_NAME_MAX, "%s", name);
	}
	verbs->free_device_list(list);
	if (!count && srd_settings.device_name && *srd_settings.device_name)
		FI_WARN(&srd_prov, FI_LOG_CORE,
			"FI_SRD_DEVICE_NAME=%s: %s has no such device\n",
			srd_settings.device_name, verbs->name);
	return count;
}

static void srd_devices_scan(void)
{
	char names[SRD_DEV_MAX][SRD_DEV_NAME_MAX];
	const struct srd_verbs_ops *verbs;
	int n;

	srd_devs_scanned = true;
	verbs = srd_dev_verbs_select(srd_settings.device);
	if (!verbs)
		return;
	n = srd_devices_names(verbs, names);
	for (int i = 0; i < n; i++) {
		/* srd_dev_open says why a device does not open */
		if (!srd_dev_open(verbs, names[i], &srd_devs[srd_devs_count]))
			srd_devs_count++;
	}
}

int srd_devices_get(struct srd_dev **devs, int max)
{
	int n;

	pthread_mutex_lock(&srd_devs_lock);
	if (!srd_devs_scanned)
		srd_devices_scan();
	n = srd_devs_count < max ? srd_devs_count : max;
	memcpy(devs, srd_devs, (size_t)n * sizeof(*devs));
	pthread_mutex_unlock(&srd_devs_lock);
	return n;
}

struct srd_dev *srd_device_find(const char *name, int *err)
{
	struct srd_dev *devs[SRD_DEV_MAX];
	int n = srd_devices_get(devs, SRD_DEV_MAX);

	*err = 0;
	if (!n) {
		*err = -FI_ENODATA;
		return NULL;
	}
	/* An info built by hand may leave the domain unnamed. */
	if (!name)
		return devs[0];
	for (int i = 0; i < n; i++)
		if (!strcmp(devs[i]->name, name))
			return devs[i];
	FI_WARN(&srd_prov, FI_LOG_DOMAIN, "no srd device named %s\n", name);
	*err = -FI_ENODEV;
	return NULL;
}

void srd_devices_close(void)
{
	pthread_mutex_lock(&srd_devs_lock);
	for (int i = 0; i < srd_devs_count; i++)
		srd_dev_close(srd_devs[i]);
	srd_devs_count = 0;
	srd_devs_scanned = false;
	pthread_mutex_unlock(&srd_devs_lock);
}
