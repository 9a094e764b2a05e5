/* SPDX-License-Identifier: MIT */
/*
 * The shm provider's entry points: the struct fi_provider the core registry
 * calls, the settings, and fi_getinfo. Core filters and narrows the info we
 * return against the hints; here we only resolve addresses, which only the
 * provider understands.
 */
#include "weft/compat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "weft/core.h"
#include "weft/settings.h"
#include "weft/util_host.h"
#include "shm.h"

/* Set from shm_setting_table at provider init. */
struct shm_env shm_env;

static int shm_getinfo(uint32_t version, const char *node, const char *service,
		       uint64_t flags, const struct fi_info *hints,
		       struct fi_info **info);
static void shm_cleanup(void);

struct fi_provider shm_prov = {
	.version = SHM_PROV_VERSION,
	.fi_version = FI_VERSION(1, 17),
	.name = SHM_PROV_NAME,
	.getinfo = shm_getinfo,
	.fabric = shm_fabric_open,
	.cleanup = shm_cleanup,
};

/* FI_RMA_EVENT: every RMA and atomic runs in the target's progress
 * (shm_rma_handle, shm_atomic_handle, shm_rma_bounce.c), which counts it
 * on the FI_REMOTE_WRITE / FI_REMOTE_READ counters and reports remote CQ
 * data (shm_rma_target_events). */
#define SHM_CAPS (FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_READ | \
		  FI_WRITE | FI_SEND | FI_RECV | FI_REMOTE_READ | \
		  FI_REMOTE_WRITE | FI_DIRECTED_RECV | FI_MULTI_RECV | \
		  FI_SOURCE | FI_LOCAL_COMM | FI_RMA_EVENT | FI_COLLECTIVE)
/* Each context carries only the bits fi_endpoint(3) lists for it. */
#define SHM_TX_CAPS (FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_READ | \
		     FI_WRITE | FI_SEND | FI_COLLECTIVE)
#define SHM_RX_CAPS (FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_RECV | \
		     FI_REMOTE_READ | FI_REMOTE_WRITE | FI_DIRECTED_RECV | \
		     FI_MULTI_RECV | FI_SOURCE | FI_RMA_EVENT | FI_COLLECTIVE)

/* Every operation toward one target runs in its single inbound queue, in
 * order, and the target finishes each one (copy included) before it reads
 * the next, so all the orders below hold. */
#define SHM_MSG_ORDER (FI_ORDER_SAS | FI_ORDER_RAR | FI_ORDER_RAW | \
		       FI_ORDER_RAS | FI_ORDER_WAR | FI_ORDER_WAW | \
		       FI_ORDER_WAS | FI_ORDER_SAR | FI_ORDER_SAW | \
		       FI_ORDER_RMA_RAR | FI_ORDER_RMA_RAW | FI_ORDER_RMA_WAR | \
		       FI_ORDER_RMA_WAW | FI_ORDER_ATOMIC_RAR | \
		       FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_WAR | \
		       FI_ORDER_ATOMIC_WAW)

static void shm_info_fill(struct fi_info *fi)
{
	uint64_t caps = SHM_CAPS | (shm_env.remote_comm ? FI_REMOTE_COMM : 0);

	fi->caps = caps;
	fi->mode = 0;
	fi->addr_format = FI_ADDR_STR;

	fi->tx_attr->caps = SHM_TX_CAPS;
	fi->tx_attr->op_flags = 0;
	fi->tx_attr->msg_order = SHM_MSG_ORDER;
	fi->tx_attr->comp_order = FI_ORDER_NONE;
	fi->tx_attr->inject_size = shm_inject_max(shm_env.cell_size);
	fi->tx_attr->size = shm_env.tx_size;
	fi->tx_attr->iov_limit = SHM_IOV_LIMIT;
	fi->tx_attr->rma_iov_limit = SHM_IOV_LIMIT;

	fi->rx_attr->caps = SHM_RX_CAPS;
	fi->rx_attr->op_flags = 0;
	fi->rx_attr->msg_order = SHM_MSG_ORDER;
	fi->rx_attr->comp_order = FI_ORDER_NONE;
	fi->rx_attr->total_buffered_recv = 0;
	fi->rx_attr->size = shm_env.rx_size;
	fi->rx_attr->iov_limit = SHM_IOV_LIMIT;

	fi->ep_attr->type = FI_EP_RDM;
	fi->ep_attr->protocol = FI_PROTO_SHM;
	fi->ep_attr->protocol_version = SHM_PROTO_VERSION;
	fi->ep_attr->max_msg_size = SHM_MAX_MSG_SIZE;
	fi->ep_attr->msg_prefix_size = 0;
	fi->ep_attr->max_order_raw_size = SHM_MAX_MSG_SIZE;
	fi->ep_attr->max_order_war_size = SHM_MAX_MSG_SIZE;
	fi->ep_attr->max_order_waw_size = SHM_MAX_MSG_SIZE;
	/* All 64 bits are tag; the top bit set is what MPI checks for. */
	fi->ep_attr->mem_tag_format = SHM_TAG_FORMAT;
	fi->ep_attr->tx_ctx_cnt = 1;
	fi->ep_attr->rx_ctx_cnt = 1;

	fi->domain_attr->threading = FI_THREAD_SAFE;
	fi->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->resource_mgmt = FI_RM_ENABLED;
	fi->domain_attr->av_type = FI_AV_UNSPEC;
	/* Nothing is required: keys and offsets work as the application
	 * chooses, and local buffers need no registration. */
	fi->domain_attr->mr_mode = 0;
	fi->domain_attr->mr_key_size = sizeof(uint64_t);
	fi->domain_attr->cq_data_size = sizeof(uint64_t);
	fi->domain_attr->cq_cnt = 1024;
	fi->domain_attr->ep_cnt = 1024;
	fi->domain_attr->tx_ctx_cnt = 1024;
	fi->domain_attr->rx_ctx_cnt = 1024;
	fi->domain_attr->max_ep_tx_ctx = 1;
	fi->domain_attr->max_ep_rx_ctx = 1;
	fi->domain_attr->mr_iov_limit = 1;
	fi->domain_attr->caps = FI_LOCAL_COMM |
				(shm_env.remote_comm ? FI_REMOTE_COMM : 0);
	fi->domain_attr->mode = 0;
	fi->domain_attr->mr_cnt = 1 << 16;
	fi->domain_attr->tclass = FI_TC_UNSPEC;

	fi->fabric_attr->prov_version = SHM_PROV_VERSION;
	fi->fabric_attr->api_version = FI_VERSION(1, 17);
}

static int shm_info_set_str(char **dst, const char *src)
{
	*dst = strdup(src);
	return *dst ? 0 : -FI_ENOMEM;
}

/* Addresses are SHM_ADDR_LEN bytes, NUL padded, so that an application
 * may fi_av_insert info->dest_addr as it is. */
static int shm_info_set_addr(void **dst, size_t *dstlen, const char *addr)
{
	char *buf = calloc(1, SHM_ADDR_LEN);

	if (!buf)
		return -FI_ENOMEM;
	snprintf(buf, SHM_ADDR_LEN, "%s", addr);
	*dst = buf;
	*dstlen = SHM_ADDR_LEN;
	return 0;
}

/* Validated copy of an address the application handed us in hints. */
static int shm_info_copy_hint_addr(void **dst, size_t *dstlen,
				   const void *addr, size_t len, const char *what)
{
	char buf[SHM_ADDR_MAX];
	int n = shm_addr_name_len(addr, len);

	if (n < 0) {
		FI_INFO(&shm_prov, FI_LOG_CORE,
			"hints %s is not an fi_shm:// address\n", what);
		return -FI_ENODATA;
	}
	memcpy(buf, addr, SHM_ADDR_PREFIX_LEN + (size_t)n);
	buf[SHM_ADDR_PREFIX_LEN + (size_t)n] = '\0';
	return shm_info_set_addr(dst, dstlen, buf);
}

/* A node names a host (unless it is an fi_shm:// address), and shm
 * reaches this one only: any other is refused now rather than at the
 * first send. */
static int shm_info_check_node(const char *node, uint64_t flags)
{
	if (!node || !strncmp(node, SHM_ADDR_PREFIX, SHM_ADDR_PREFIX_LEN))
		return 0;
	if (util_host_is_local(node, !!(flags & FI_NUMERICHOST)))
		return 0;
	FI_INFO(&shm_prov, FI_LOG_CORE,
		"node '%s' is not this host; shm reaches peers on this host only\n",
		node);
	return -FI_ENODATA;
}

static int shm_info_from_node(struct fi_info *fi, const char *node,
			      const char *service, uint64_t flags)
{
	char addr[SHM_ADDR_MAX];
	int ret;

	ret = shm_info_check_node(node, flags);
	if (ret)
		return ret;
	ret = shm_addr_from_node(node, service, addr, sizeof(addr));
	/* A host alone names no endpoint: nothing to return for it. */
	if (ret == -FI_ENOENT)
		return 0;
	if (ret) {
		FI_INFO(&shm_prov, FI_LOG_CORE,
			"node '%s' service '%s' give no shm name\n",
			node ? node : "", service ? service : "");
		return -FI_ENODATA;
	}
	return (flags & FI_SOURCE) ?
	       shm_info_set_addr(&fi->src_addr, &fi->src_addrlen, addr) :
	       shm_info_set_addr(&fi->dest_addr, &fi->dest_addrlen, addr);
}

static int shm_info_resolve(struct fi_info *fi, const char *node,
			    const char *service, uint64_t flags,
			    const struct fi_info *hints)
{
	char addr[SHM_ADDR_MAX];
	int ret;

	if (node || service) {
		ret = shm_info_from_node(fi, node, service, flags);
		if (ret)
			return ret;
	}
	if (hints && hints->src_addr && !fi->src_addr) {
		ret = shm_info_copy_hint_addr(&fi->src_addr, &fi->src_addrlen,
					      hints->src_addr,
					      hints->src_addrlen, "src_addr");
		if (ret)
			return ret;
	}
	if (hints && hints->dest_addr && !fi->dest_addr) {
		ret = shm_info_copy_hint_addr(&fi->dest_addr, &fi->dest_addrlen,
					      hints->dest_addr,
					      hints->dest_addrlen, "dest_addr");
		if (ret)
			return ret;
	}
	if (fi->src_addr)
		return 0;
	/* Nothing named the source: the endpoint will be named under this
	 * process's stem, which is what the application learns here. */
	ret = shm_addr_process(addr, sizeof(addr));
	return ret ? ret : shm_info_set_addr(&fi->src_addr, &fi->src_addrlen,
					     addr);
}

static int shm_getinfo(uint32_t version, const char *node, const char *service,
		       uint64_t flags, const struct fi_info *hints,
		       struct fi_info **info)
{
	struct fi_info *fi;
	int ret;

	(void)version;
	if (hints && hints->addr_format != FI_FORMAT_UNSPEC &&
	    hints->addr_format != FI_ADDR_STR) {
		FI_INFO(&shm_prov, FI_LOG_CORE,
			"addr_format %u: shm speaks FI_ADDR_STR only\n",
			hints->addr_format);
		return -FI_ENODATA;
	}

	fi = fi_dupinfo(NULL);
	if (!fi)
		return -FI_ENOMEM;
	shm_info_fill(fi);
	ret = shm_info_set_str(&fi->fabric_attr->name, SHM_PROV_NAME);
	if (!ret)
		ret = shm_info_set_str(&fi->fabric_attr->prov_name, SHM_PROV_NAME);
	if (!ret)
		ret = shm_info_set_str(&fi->domain_attr->name, SHM_PROV_NAME);
	if (!ret)
		ret = shm_info_resolve(fi, node, service, flags, hints);
	if (ret) {
		fi_freeinfo(fi);
		return ret;
	}
	*info = fi;
	return 0;
}

static void shm_cleanup(void)
{
}

#define SHM_FIELD(m) WEFT_SETTING_FIELD(struct shm_env, m)

/* FI_SHM_*, each stated once, in the order weft_info -e lists them. */
static const struct weft_setting shm_setting_table[] = {
	{ .name = "tx_size", .type = WEFT_SETTING_SIZE, SHM_FIELD(tx_size),
	  .def = 1024, .min = 16, .max = SHM_MAX_TX_SIZE,
	  .help = "Transmit operations an endpoint keeps outstanding" },
	{ .name = "rx_size", .type = WEFT_SETTING_SIZE, SHM_FIELD(rx_size),
	  .def = 1024, .min = 16,
	  .help = "Posted receives an endpoint accepts" },
	{ .name = "disable_cma", .type = WEFT_SETTING_BOOL,
	  SHM_FIELD(disable_cma), .def = 0,
	  .help = "Never use process_vm_readv/writev; move large messages "
		  "and RMA through bounce buffers" },
	{ .name = "remote_comm", .type = WEFT_SETTING_BOOL,
	  SHM_FIELD(remote_comm), .def = 0,
	  .help = "Also advertise FI_REMOTE_COMM, for single-host jobs of "
		  "clients that insist on it" },
	{ .name = "cell_size", .type = WEFT_SETTING_SIZE, SHM_FIELD(cell_size),
	  .def = SHM_DEF_CELL_SIZE, .min = SHM_MIN_CELL_SIZE,
	  .max = SHM_MAX_CELL_SIZE, .multiple = SHM_CACHELINE,
	  .help = "Bytes per inbound queue cell; messages up to cell_size - "
		  "48 bytes travel inline" },
	{ .name = "cell_count", .type = WEFT_SETTING_SIZE,
	  SHM_FIELD(cell_count), .def = SHM_DEF_CELL_COUNT, .min = 2,
	  .max = SHM_MAX_CELL_COUNT, .flags = WEFT_SETTING_POW2,
	  .help = "Cells in an endpoint's inbound queue" },
	{ .name = "max_peers", .type = WEFT_SETTING_SIZE, SHM_FIELD(max_peers),
	  .def = SHM_DEF_MAX_PEERS, .min = 1, .max = SHM_MAX_PEERS,
	  .help = "Distinct endpoints that may send to one endpoint" },
	{ .name = "bounce_seg_size", .type = WEFT_SETTING_SIZE,
	  SHM_FIELD(bounce_seg_size), .def = SHM_DEF_BOUNCE_SEG_SIZE,
	  .min = SHM_PAGE, .max = SHM_MAX_BOUNCE_SEG_SIZE, .multiple = SHM_PAGE,
	  .help = "Bytes per bounce segment, used where CMA is refused" },
	{ .name = "bounce_seg_count", .type = WEFT_SETTING_SIZE,
	  SHM_FIELD(bounce_seg_count), .def = SHM_DEF_BOUNCE_SEGS, .min = 1,
	  .max = SHM_MAX_BOUNCE_SEGS,
	  .help = "Bounce segments per endpoint" },
	{ .name = "bounce_peer_segs", .type = WEFT_SETTING_SIZE,
	  SHM_FIELD(bounce_peer_segs), .def = 0, .max = SHM_MAX_BOUNCE_SEGS,
	  .help = "Bounce segments the transfers toward one peer may hold at "
		  "once, so a peer that does not drain leaves the rest to "
		  "others; 0 = half of bounce_seg_count" },
	{ .name = "peer_timeout_ms", .type = WEFT_SETTING_SIZE,
	  SHM_FIELD(peer_timeout_ms), .def = 1000, .min = 1,
	  .help = "Milliseconds an operation waits on a peer before the "
		  "peer's liveness is checked" },
	{ .name = "unexp_count", .type = WEFT_SETTING_SIZE,
	  SHM_FIELD(unexp_count), .def = 1024, .min = 1,
	  .help = "Unexpected small messages an endpoint buffers before it "
		  "stops draining its queue" },
	{ .name = "split_size", .type = WEFT_SETTING_SIZE,
	  SHM_FIELD(split_size), .def = SHM_DEF_SPLIT_SIZE,
	  .help = "Messages of at least this many bytes moved by CMA are "
		  "copied by both sides at once (the receiver pulls the first "
		  "half while the sender pushes the second); 0 never splits" },
	{ .name = "job", .type = WEFT_SETTING_STRING, SHM_FIELD(job),
	  .def_text = "the launcher's job, else none",
	  .help = "Job this process belongs to: endpoint names chosen "
		  "through node/service are taken in that job's namespace, so "
		  "that two jobs of one user may use the same service and "
		  "only processes of one job find each other by it. Unset: "
		  "the launcher's (PMIX_NAMESPACE, OMPI_MCA_ess_base_jobid, "
		  "OMPI_MCA_orte_ess_jobid, FLUX_JOB_ID, or SLURM_JOB_ID with "
		  "SLURM_STEP_ID); none: no namespace, as processes started "
		  "by hand" },
};

/* Chosen names of this process go into the namespace of its job; what
 * names the job, for the log and the hint of shm_conn_open_peer. */
static char shm_job_desc[160] = "none";

const char *shm_job_described(void)
{
	return shm_job_desc;
}

static void shm_job_namespace(void)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a 64 */
	char id[1024], ns[SHM_NS_MAX + 1];
	const char *src, *p;

	if (shm_env.job && !strcasecmp(shm_env.job, "none"))
		return;
	if (shm_env.job) {
		snprintf(id, sizeof(id), "%s", shm_env.job);
		src = "FI_SHM_JOB";
	} else {
		src = weft_job_identity(id, sizeof(id));
		if (!src)
			return;
	}
	/* A hash: job names may hold any character and be long (PMIx
	 * namespaces up to 255 bytes); 64 bits keep two jobs apart. */
	for (p = id; *p; p++) {
		h ^= (uint8_t)*p;
		h *= 0x100000001b3ull;
	}
	snprintf(ns, sizeof(ns), "j%016llx", (unsigned long long)h);
	(void)shm_region_set_namespace(ns);
	snprintf(shm_job_desc, sizeof(shm_job_desc), "%s (%s=%.100s)", ns, src,
		 id);
	FI_INFO(&shm_prov, FI_LOG_CORE,
		"names chosen through node/service are in job namespace %s\n",
		shm_job_desc);
}

void shm_env_region_attr(struct shm_region_attr *attr)
{
	shm_region_attr_default(attr);
	attr->cell_size = shm_env.cell_size;
	attr->cell_count = shm_env.cell_count;
	attr->max_peers = shm_env.max_peers;
	attr->bounce_seg_size = shm_env.bounce_seg_size;
	attr->bounce_seg_count = shm_env.bounce_seg_count;
	attr->cma_mode = shm_env.disable_cma ? SHM_CMA_OFF : SHM_CMA_AUTO;
	/* What a sender may have here unconsumed: a queue's worth, so that
	 * one sender still streams through the whole ring, and half of our
	 * unexpected buffers. One that floods us with messages nobody
	 * receives then holds at most cell_count + unexp_count / 2 of them
	 * (768 of 1024 by default), and the rest go to the others, instead
	 * of the pool filling up and our queue stopping for everyone. */
	attr->peer_credits = (uint32_t)(shm_env.cell_count +
					shm_env.unexp_count / 2 < UINT32_MAX ?
					shm_env.cell_count +
						shm_env.unexp_count / 2 :
					UINT32_MAX);
}

/* Each setting is in its own range (the table checked it), but together
 * they may still describe a region the transport refuses (over its size
 * limit): then the five fall back to their defaults, once, after the
 * transport's own log line. */
static void shm_params_check(void)
{
	struct shm_region_attr attr;

	shm_env_region_attr(&attr);
	if (!shm_region_attr_check(&attr))
		return;
	FI_WARN(&shm_prov, FI_LOG_CORE,
		"FI_SHM_CELL_*/MAX_PEERS/BOUNCE_* out of range, using defaults\n");
	shm_env.cell_size = SHM_DEF_CELL_SIZE;
	shm_env.cell_count = SHM_DEF_CELL_COUNT;
	shm_env.max_peers = SHM_DEF_MAX_PEERS;
	shm_env.bounce_seg_size = SHM_DEF_BOUNCE_SEG_SIZE;
	shm_env.bounce_seg_count = SHM_DEF_BOUNCE_SEGS;
}

struct fi_provider *shm_prov_init(void)
{
	shm_xport_prov = &shm_prov;
	weft_settings_define(&shm_prov, shm_setting_table,
			     WEFT_ARRAY_SIZE(shm_setting_table));
	weft_settings_read(&shm_prov, shm_setting_table,
			   WEFT_ARRAY_SIZE(shm_setting_table), &shm_env);
	util_coll_params_init();
	shm_params_check();
	shm_job_namespace();
	return &shm_prov;
}
