/* SPDX-License-Identifier: MIT */
/*
 * dlopen_probe LIB [PROV]: what Open MPI and Python do with libfabric.
 * Loads LIB with dlopen() (this program does not link libfabric), resolves
 * the entry points by name, lists the providers fi_getinfo returns, checks
 * that PROV (default shm) is one of them, and that fi_tostr gives each
 * thread its own buffer. Exit 0 on success; prints why otherwise.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <rdma/fabric.h>

typedef uint32_t (*version_fn)(void);
typedef int (*getinfo_fn)(uint32_t, const char *, const char *, uint64_t,
			  const struct fi_info *, struct fi_info **);
typedef void (*freeinfo_fn)(struct fi_info *);
typedef char *(*tostr_fn)(const void *, enum fi_type);

static tostr_fn tostr;
static char *other_str;
static char other_copy[32];

/* The thread's buffer goes with the thread: read it before returning, and
 * keep only its address (compared, never read) for afterwards. */
static void *other_thread(void *arg)
{
	static const enum fi_ep_type t = FI_EP_DGRAM;

	(void)arg;
	other_str = tostr(&t, FI_TYPE_EP_TYPE);
	if (other_str)
		snprintf(other_copy, sizeof(other_copy), "%s", other_str);
	return NULL;
}

/* Two threads' strings must not share storage. */
static int check_tostr_per_thread(void)
{
	static const enum fi_ep_type t = FI_EP_RDM;
	pthread_t th;
	char *mine = tostr(&t, FI_TYPE_EP_TYPE);

	if (pthread_create(&th, NULL, other_thread, NULL) ||
	    pthread_join(th, NULL))
		return -1;
	if (!mine || !other_str || mine == other_str ||
	    strcmp(mine, "FI_EP_RDM") || strcmp(other_copy, "FI_EP_DGRAM")) {
		printf("fi_tostr: threads share a buffer (\"%s\", \"%s\")\n",
		       mine ? mine : "(null)", other_copy);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *want = argc > 2 ? argv[2] : "shm";
	struct fi_info *info, *cur;
	version_fn version;
	getinfo_fn getinfo;
	freeinfo_fn freeinfo;
	void *lib;
	int ret, found = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s LIB [PROV]\n", argv[0]);
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		printf("dlopen: %s\n", dlerror());
		return 1;
	}
	version = (version_fn)dlsym(lib, "fi_version");
	getinfo = (getinfo_fn)dlsym(lib, "fi_getinfo");
	freeinfo = (freeinfo_fn)dlsym(lib, "fi_freeinfo");
	tostr = (tostr_fn)dlsym(lib, "fi_tostr");
	if (!version || !getinfo || !freeinfo || !tostr) {
		printf("dlsym: a libfabric entry point is missing\n");
		return 1;
	}
	ret = getinfo(version(), NULL, NULL, 0, NULL, &info);
	if (ret) {
		printf("fi_getinfo: %d\n", ret);
		return 1;
	}
	for (cur = info; cur; cur = cur->next) {
		printf("provider %s\n", cur->fabric_attr->prov_name);
		found |= !strcmp(cur->fabric_attr->prov_name, want);
	}
	freeinfo(info);
	if (!found) {
		printf("provider %s not listed\n", want);
		return 1;
	}
	if (check_tostr_per_thread())
		return 1;
	return dlclose(lib) ? 1 : 0;
}
