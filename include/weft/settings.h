/* SPDX-License-Identifier: MIT */
/*
 * Settings tables. A provider (and core) states each of its settings once,
 * in a const table of struct weft_setting: name, type, default, accepted
 * range, help, and the field of its settings struct the value goes to.
 * Everything else comes from the table:
 *
 *   weft_settings_define  fi_param_define's each one (FI_<PROV>_<NAME>)
 *                         with its help text ending in "(default: ...; range)",
 *                         which is what weft_info -e lists;
 *   weft_settings_read    fills the struct: each default, replaced by the
 *                         environment's value when that is valid. A bad value
 *                         is a warning naming the setting and what it accepts,
 *                         and the default stays.
 *
 * Checks that involve more than one setting or the device (shm's region
 * size, srd's CTS window against the MTU) stay with the caller.
 */
#ifndef WEFT_SETTINGS_H
#define WEFT_SETTINGS_H

#include "weft/compat.h"
#include <stddef.h>
#include <stdint.h>
#include <rdma/fabric.h>
#include <rdma/providers/fi_prov.h>

enum weft_setting_type {
	WEFT_SETTING_BOOL,	/* 0/1, yes/no, on/off, true/false: 0 or 1 */
	WEFT_SETTING_INT,	/* fi_param type int: in min..max */
	WEFT_SETTING_SIZE,	/* fi_param type size_t: in min..max */
	WEFT_SETTING_ENUM,	/* one of names[], any case: its index */
	WEFT_SETTING_STRING,	/* const char * into the environment, NULL
				 * when unset or empty */
	WEFT_SETTING_STRBUF,	/* copied into a char array ("" when unset);
				 * a value that does not fit is refused */
};

/* INT and SIZE: the value must also be a power of two. */
#define WEFT_SETTING_POW2 0x1u

struct weft_setting {
	const char *name;		/* lower case: srd's "cq_batch" is
					 * FI_SRD_CQ_BATCH */
	enum weft_setting_type type;
	/* The field, set with WEFT_SETTING_FIELD. BOOL, INT, SIZE and ENUM
	 * fields are unsigned integers (or bool, or an enum whose values are
	 * the indexes of names[]) of 1, 2, 4 or 8 bytes. size 0: no field,
	 * the owner reads the variable itself (core's FI_LOG_*, needed
	 * before logging works); the table still defines and documents it. */
	size_t offset, size;
	uint64_t def;			/* BOOL, INT, SIZE: the default;
					 * ENUM: index of the default name */
	const char *def_text;		/* STRING, STRBUF: what unset means */
	uint64_t min, max;		/* INT, SIZE; max 0 = the type's max */
	uint64_t multiple;		/* INT, SIZE: 0, or a required factor */
	unsigned flags;			/* WEFT_SETTING_POW2 */
	const char *const *names;	/* ENUM: accepted values, NULL-ended */
	const char *help;		/* what it does; the default and range
					 * are added from the fields above */
};

#define WEFT_SETTING_FIELD(type, member)				\
	.offset = offsetof(type, member),				\
	.size = sizeof(((type *)0)->member)

/* 0, or -FI_EINVAL (with a warning naming the entry) when the table
 * contradicts itself: a default out of its own range, a field too narrow
 * for the range, an enum default past its names. Tests run it on every
 * table; weft_settings_define skips the entries it refuses. */
int weft_settings_check(const struct weft_setting *table, size_t count);

/* fi_param_define every setting of the table for prov. */
void weft_settings_define(const struct fi_provider *prov,
			  const struct weft_setting *table, size_t count);

/* Every field of the table set to its default. */
void weft_settings_default(const struct weft_setting *table, size_t count,
			   void *base);

/* Every field of the table: its default, or the environment's valid value
 * (warnings are logged under prov). */
void weft_settings_read(const struct fi_provider *prov,
			const struct weft_setting *table, size_t count,
			void *base);

/* One setting, by name (for those read again when an object opens):
 * 0, or -FI_ENOENT when the table has no such setting. */
int weft_setting_read(const struct fi_provider *prov,
		      const struct weft_setting *table, size_t count,
		      const char *name, void *base);

const struct weft_setting *weft_setting_find(const struct weft_setting *table,
					     size_t count, const char *name);

/* The index str names among an ENUM setting's names (any case; NULL or ""
 * is the default), or -FI_EINVAL. */
int weft_setting_parse_enum(const struct weft_setting *s, const char *str);

#endif /* WEFT_SETTINGS_H */
