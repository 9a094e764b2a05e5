/* SPDX-License-Identifier: MIT */
/*
 * Provider-name filters: the syntax of FI_PROVIDER, FI_LOG_PROV,
 * FI_LOG_SUBSYS and hints->fabric_attr->prov_name.
 */
#include "weft/compat.h"
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "core_priv.h"

static void filter_free_names(struct weft_filter *filter)
{
	for (size_t i = 0; i < filter->count; i++)
		free(filter->names[i]);
	free(filter->names);
	filter->names = NULL;
	filter->count = 0;
}

/* A malformed spec must not fall back to "everything": the user asked for
 * a restriction, so serving them an unasked provider would be worse. */
static int filter_set_malformed(struct weft_filter *filter)
{
	filter_free_names(filter);
	filter->exclude = 0;
	filter->malformed = 1;
	return -FI_EINVAL;
}

static int filter_add(struct weft_filter *filter, const char *start, size_t len)
{
	char **names;

	if (!len || memchr(start, '^', len))
		return filter_set_malformed(filter);

	names = realloc(filter->names, (filter->count + 1) * sizeof(*names));
	if (!names)
		return -FI_ENOMEM;
	filter->names = names;
	names[filter->count] = strndup(start, len);
	if (!names[filter->count])
		return -FI_ENOMEM;
	filter->count++;
	return 0;
}

int weft_filter_init(struct weft_filter *filter, const char *spec)
{
	const char *p, *comma;
	int ret;

	memset(filter, 0, sizeof(*filter));
	if (!spec || !*spec)
		return 0;

	p = spec;
	if (*p == '^') {
		filter->exclude = 1;
		p++;
	}
	for (;;) {
		comma = strchr(p, ',');
		ret = filter_add(filter, p, comma ? (size_t)(comma - p) : strlen(p));
		if (ret) {
			if (ret == -FI_ENOMEM)
				filter_free_names(filter);
			return ret;
		}
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

int weft_filter_match(const struct weft_filter *filter, const char *name)
{
	size_t i;

	if (filter->malformed)
		return 0;
	if (!filter->count)
		return 1;
	if (!name)
		return filter->exclude;
	for (i = 0; i < filter->count; i++) {
		if (!strcasecmp(filter->names[i], name))
			return !filter->exclude;
	}
	return filter->exclude;
}

void weft_filter_fini(struct weft_filter *filter)
{
	filter_free_names(filter);
	filter->exclude = 0;
	filter->malformed = 0;
}
