/* SPDX-License-Identifier: MIT */
/*
 * The collective engine's settings, FI_COLL_* (fi_coll(7) documents them
 * and says how the defaults were measured), one table read once, when the
 * first provider that offers collectives starts.
 */
#include "weft/compat.h"
#include "weft/log.h"
#include "weft/settings.h"
#include "util_coll_priv.h"
#include <pthread.h>

/* The settings' owner: FI_COLL_<NAME>; log lines say "coll". */
static struct fi_provider util_coll_prov = {
	.name = "coll",
	.version = FI_VERSION(1, 0),
	.fi_version = FI_VERSION(1, 17),
};

static const char *const uc_alg_names[] = {
	"auto", "rd", "rabenseifner", "ring", NULL,
};
static const char *const uc_hier_names[] = { "auto", "on", "off", NULL };

#define UC_FIELD(m) WEFT_SETTING_FIELD(struct util_coll_params, m)

static const struct weft_setting uc_setting_table[] = {
	{ .name = "rd_max", .type = WEFT_SETTING_SIZE, UC_FIELD(rd_max),
	  .def = 2048,
	  .help = "allreduce of at most this many bytes: recursive doubling" },
	{ .name = "ring_min", .type = WEFT_SETTING_SIZE, UC_FIELD(ring_min),
	  .def = 256 * 1024,
	  .help = "allreduce and reduce of at least this many bytes: rings "
		  "(between rd_max and this, recursive halving and "
		  "doubling)" },
	{ .name = "bcast_scatter_min", .type = WEFT_SETTING_SIZE,
	  UC_FIELD(bcast_scatter_min), .def = 64 * 1024,
	  .help = "broadcast of at least this many bytes: scatter and ring "
		  "allgather, else a binomial tree" },
	{ .name = "allgather_ring_min", .type = WEFT_SETTING_SIZE,
	  UC_FIELD(allgather_ring_min), .def = 64 * 1024,
	  .help = "allgather of at least this many result bytes: a ring, "
		  "else Bruck's algorithm" },
	{ .name = "tree_max", .type = WEFT_SETTING_SIZE, UC_FIELD(tree_max),
	  .def = 8192,
	  .help = "scatter and gather of at most this many bytes per member: "
		  "binomial trees, else direct" },
	{ .name = "chunk", .type = WEFT_SETTING_SIZE, UC_FIELD(chunk),
	  .def = 256 * 1024,
	  .help = "bytes per message of the pipelined algorithms; 0: whole "
		  "blocks" },
	{ .name = "window", .type = WEFT_SETTING_SIZE, UC_FIELD(window),
	  .def = 4, .min = 1, .max = UC_WIN_MAX,
	  .help = "messages of one pipelined operation in flight" },
	{ .name = "allreduce_alg", .type = WEFT_SETTING_ENUM,
	  UC_FIELD(allreduce_alg), .def = UC_AUTO, .names = uc_alg_names,
	  .help = "one allreduce algorithm for every size (auto: by size)" },
	{ .name = "hier", .type = WEFT_SETTING_ENUM, UC_FIELD(hier), .def = 0,
	  .names = uc_hier_names,
	  .help = "allreduce first within each host, then across hosts (auto: "
		  "when a host holds several members)" },
	{ .name = "host_ranks", .type = WEFT_SETTING_SIZE, UC_FIELD(host_ranks),
	  .def = 0, .max = UC_MAX_MEMBERS,
	  .help = "take every this many consecutive members of a group as one "
		  "host; 0: the provider's hosts" },
	{ .name = "liveness_ms", .type = WEFT_SETTING_SIZE,
	  UC_FIELD(liveness_ms), .def = 500, .min = 1,
	  .help = "how often the members operations wait for are checked; a "
		  "gone member fails its groups' operations" },
};

struct util_coll_params util_coll_params;

static pthread_once_t util_coll_params_once = PTHREAD_ONCE_INIT;

static void uc_params_once(void)
{
	weft_settings_define(&util_coll_prov, uc_setting_table,
			     WEFT_ARRAY_SIZE(uc_setting_table));
	weft_settings_read(&util_coll_prov, uc_setting_table,
			   WEFT_ARRAY_SIZE(uc_setting_table),
			   &util_coll_params);
	util_coll_params.liveness_ns =
		(uint64_t)util_coll_params.liveness_ms * 1000000ull;
}

void util_coll_params_init(void)
{
	pthread_once(&util_coll_params_once, uc_params_once);
}
