/* SPDX-License-Identifier: MIT */
/*
 * srd provider, device layer: one verbs device (EFA through rdma-core,
 * softsrd, or the tests' mock), what it can do, its SRD queue pairs, the
 * in-order answer that picks the poll mode, and the CQ poller of the
 * progress engine. The RDM protocol builds on these objects.
 */
#ifndef SRD_H
#define SRD_H

#include "weft/compat.h"
#include "weft/log.h"
#include "weft/srd_verbs.h"

#include <pthread.h>
#include <rdma/fi_eq.h>
#include <stdbool.h>
#include <stdint.h>
#include <uthash.h>

extern struct fi_provider srd_prov;

/* ---- settings (FI_SRD_*), read once in srd_init.c ---------------------- */

enum srd_device_sel {
	SRD_DEVICE_AUTO,	/* rdma-core EFA when present, never softsrd */
	SRD_DEVICE_EFA,
	SRD_DEVICE_SOFT,
};

enum srd_poll_req {
	SRD_POLL_REQ_AUTO,
	SRD_POLL_REQ_DATA,
	SRD_POLL_REQ_COMPLETION,
};

#define SRD_CQ_BATCH_DEFAULT 32
#define SRD_CQ_BATCH_MAX 256
#define SRD_CTS_THRESHOLD_DEFAULT (64 * 1024)
#define SRD_CTS_WINDOW_DEFAULT (2 * 1024 * 1024)
#define SRD_LONG_PROBE_MS_DEFAULT 1000

/* FI_SRD_*, described once in srd_init.c's table. */
struct srd_settings {
	enum srd_device_sel device;
	enum srd_poll_req poll_mode;
	unsigned int cq_batch;		/* 1..SRD_CQ_BATCH_MAX */
	uint8_t low_latency_sl;		/* efadv SL for FI_TC_LOW_LATENCY */
	uint8_t rnr_retry;		/* device RNR retries, 0..7 (7 = infinite) */
	const char *device_name;	/* NULL or "" = first device */
	/* read again at each endpoint open (srd_settings_read_one) */
	uint32_t ring_slots;		/* data mode ring slots per peer */
	size_t cts_threshold;		/* CTS above it (no RDMA read) */
	size_t cts_window;		/* bytes granted ahead per message */
	uint32_t long_probe_ms;		/* probes of long transfers' peers */
};

extern struct srd_settings srd_settings;

void srd_settings_default(struct srd_settings *s);
/* Defaults overridden by FI_SRD_* (bad values: warning, default kept). */
void srd_settings_read(struct srd_settings *s);
/* The one setting name ("ring_slots") into s, as srd_settings_read would. */
void srd_settings_read_one(const char *name, struct srd_settings *s);
struct fi_provider *srd_prov_init_device_only(void);
int srd_settings_parse_device(const char *str, enum srd_device_sel *out);
int srd_settings_parse_poll_mode(const char *str, enum srd_poll_req *out);

/* ---- verbs tables --------------------------------------------------------- */

/* rdma-core through dlopen/dlvsym, resolved at first call. NULL when the
 * libraries or one of the symbols are missing: srd then has no EFA device. */
const struct srd_verbs_ops *srd_verbs_rdma_ops(void);
/* Tests: load these sonames instead (NULL restores the defaults) and forget
 * what was resolved. Not thread safe; tests only. */
void srd_verbs_rdma_set_sonames(const char *ibverbs, const char *efa);
void srd_verbs_rdma_reset(void);
/* A flags-0 in-order answer (1 = whole message) as the RETURN_CAPS bits
 * the table promises, for rdma-core builds without RETURN_CAPS. */
int srd_in_order_from_legacy(int legacy, uint32_t flags);
/* The table FI_SRD_DEVICE means, or NULL. */
const struct srd_verbs_ops *srd_verbs_select(enum srd_device_sel sel);

/* ---- device and capabilities --------------------------------------------- */

struct srd_device_caps {
	/* ibv_query_device_ex */
	uint64_t max_mr_size;
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	uint32_t max_qp;
	uint32_t max_qp_wr;
	uint32_t max_sge;
	uint32_t max_cq;
	uint32_t max_cqe;
	uint32_t max_mr;
	uint32_t max_pd;
	uint32_t max_ah;
	uint8_t phys_port_cnt;
	uint64_t device_cap_flags_ex;
	uint64_t odp_general_caps;
	uint32_t odp_ud_caps;
	uint16_t pci_atomic_fetch_add;
	uint16_t pci_atomic_swap;
	uint16_t pci_atomic_compare_swap;
	uint64_t completion_timestamp_mask;
	uint16_t cq_mod_max_count;
	uint16_t cq_mod_max_period;

	/* efadv_query_device */
	uint32_t max_sq_wr;
	uint32_t max_rq_wr;
	uint16_t max_sq_sge;
	uint16_t max_rq_sge;
	uint16_t inline_buf_size;
	uint32_t max_rdma_size;		/* 0 without RDMA or without the field */
	uint32_t efadv_caps;		/* raw device_caps */
	bool rdma_read;
	bool rdma_write;
	bool rnr_retry;
	bool cq_with_sgid;
	bool unsolicited_write_recv;

	/* ibv_query_port, ibv_query_gid */
	uint8_t port_num;
	enum ibv_port_state port_state;
	uint32_t mtu;			/* bytes: the largest SRD payload */
	uint32_t max_msg_sz;
	union ibv_gid gid;
};

struct srd_ah;
struct srd_inorder;

struct srd_device {
	const struct srd_verbs_ops *verbs;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct srd_device_caps caps;
	char name[64];
	/* Domains (and their AVs and endpoints, each under its own lock)
	 * share the device, so its AH table needs one of its own. */
	pthread_mutex_t ah_lock;
	struct srd_ah *ah_by_gid;		/* uthash, shared per GID */
	struct srd_inorder *inorder;		/* cached answers per QP type */
};

int srd_device_open(const struct srd_verbs_ops *verbs, const char *name,
		    struct srd_device **dev_out);
void srd_device_close(struct srd_device *dev);
/* Fill caps from an open context (exposed for tests). */
int srd_device_query_caps(const struct srd_verbs_ops *verbs,
			  struct ibv_context *ctx, struct srd_device_caps *caps);

/* ---- caps -> fi_info template --------------------------------------------- */

enum srd_long_proto {
	SRD_LONG_CTS,		/* receiver grants credits, data by sends */
	SRD_LONG_READ,		/* receiver pulls with RDMA read */
};

struct srd_proto_caps {
	size_t tx_size;
	size_t rx_size;
	size_t tx_iov_limit;
	size_t rx_iov_limit;
	size_t inject_size;
	size_t max_msg_size;
	size_t max_rma_size;		/* 0 without hardware RMA */
	size_t eager_max;		/* payload of one packet */
	bool hw_rma;
	enum srd_long_proto long_proto;
};

#define SRD_PKT_HDR_MAX 64	/* room kept in each packet for protocol headers */
#define SRD_MAX_MSG_SIZE ((size_t)1 << 32)

void srd_proto_caps_from_dev(const struct srd_device_caps *caps,
			     struct srd_proto_caps *pc);
/* Fill an fi_info allocated with all its attribute structs. */
void srd_info_fill(const struct srd_device_caps *caps, const char *dev_name,
		   struct fi_info *info);

size_t srd_rounddown_pow2(size_t v);

/* ---- address handles, shared per GID -------------------------------------- */

struct srd_ah {
	union ibv_gid gid;		/* hash key */
	struct ibv_ah *ibv_ah;
	uint16_t ahn;			/* efadv AH number, for reverse lookup */
	unsigned int refcnt;
	UT_hash_handle hh;
};

int srd_ah_get(struct srd_device *dev, const union ibv_gid *gid,
	       struct srd_ah **ah_out);
void srd_ah_put(struct srd_device *dev, struct srd_ah *ah);

/* ---- queue pairs ----------------------------------------------------------- */

struct srd_qp_attr {
	uint32_t sq_depth;
	uint32_t rq_depth;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline;
	uint32_t tclass;		/* FI_TC_* */
	bool want_unsolicited_write_recv;
	struct ibv_cq *send_cq;
	struct ibv_cq *recv_cq;
	void *qp_context;
};

struct srd_qp {
	struct srd_device *dev;
	struct ibv_qp *ibv_qp;
	struct ibv_qp_ex *qpx;
	uint32_t qkey;
	uint32_t sq_depth;
	uint32_t rq_depth;
	uint64_t send_ops_flags;
	bool unsolicited_write_recv;
	bool low_latency_sl;		/* created with the low-latency SL */
};

int srd_qp_create(struct srd_device *dev, const struct srd_settings *s,
		  const struct srd_qp_attr *attr, struct srd_qp **qp_out);
void srd_qp_destroy(struct srd_qp *qp);
/* "state RTS, qpn 12, qkey 0x..." for error reports and weft_info -v. */
int srd_qp_describe(struct srd_qp *qp, char *buf, size_t len);
uint64_t srd_qp_send_ops_flags(const struct srd_device_caps *caps);

#define SRD_EP_NAME_VERSION 1

/* The endpoint name on the wire and in the AV: packed, versioned. */
struct srd_ep_name {
	uint8_t version;
	uint8_t reserved[3];
	uint32_t qpn;
	uint32_t qkey;
	uint8_t gid[16];
} __attribute__((packed));

void srd_ep_name_build(const struct srd_qp *qp, struct srd_ep_name *name);
/* Validates untrusted bytes: -FI_EINVAL with a log line when malformed. */
int srd_ep_name_parse(const void *buf, size_t len, struct srd_ep_name *name);
int srd_ep_name_str(const struct srd_ep_name *name, char *buf, size_t len);

/* ---- in-order delivery and the poll mode ------------------------------------ */

enum srd_inorder_caps {
	SRD_INORDER_NONE = 0,
	SRD_INORDER_WHOLE = 1 << 0,	/* whole message lands in order */
	SRD_INORDER_128 = 1 << 1,	/* each aligned 128-byte line does */
};

enum srd_poll_mode {
	SRD_POLL_COMPLETION,
	SRD_POLL_DATA,
};

enum srd_ring_flavour {
	SRD_RING_NONE,		/* no data ring: sends into posted receives */
	SRD_RING_SEQ,		/* one sequence word at the end of each slot */
	SRD_RING_LINE128,	/* a flag word in every 128-byte line */
};

struct srd_poll_choice {
	enum srd_poll_mode mode;
	enum srd_ring_flavour ring;
	/* What applications may rely on (endpoint options): the device's
	 * answer, or none for relaxed-ordering memory. */
	int send_inorder;		/* enum srd_inorder_caps */
	int write_inorder;
};

struct srd_inorder {
	struct srd_inorder *next;
	enum ibv_qp_type qp_type;
	uint32_t driver_qp_type;
	int send;			/* enum srd_inorder_caps */
	int rdma_write;
};

/* Ask the device once per (device, QP type); later calls return the cache. */
int srd_inorder_get(struct srd_device *dev, struct srd_qp *qp,
		    const struct srd_inorder **out);
void srd_inorder_free(struct srd_device *dev);
/* The decision. relaxed_mr: the target memory is registered with relaxed
 * ordering, which voids what the device promised. Data mode forced where it
 * cannot work falls back to completion mode with a warning. */
void srd_poll_choose(enum srd_poll_req req, const struct srd_inorder *io,
		     const struct srd_device_caps *caps, bool relaxed_mr,
		     struct srd_poll_choice *out);
const char *srd_poll_mode_str(enum srd_poll_mode mode);

/* ---- error completions ------------------------------------------------------- */

/* rdma-core EFA's completion status codes (vendor_err); softsrd reports the
 * same numbers. */
enum srd_efa_io_status {
	SRD_EFA_IO_OK = 0,
	SRD_EFA_IO_FLUSHED = 1,
	SRD_EFA_IO_LOCAL_QP_INTERNAL = 2,
	SRD_EFA_IO_LOCAL_UNSUPPORTED_OP = 3,
	SRD_EFA_IO_LOCAL_INVALID_AH = 4,
	SRD_EFA_IO_LOCAL_INVALID_LKEY = 5,
	SRD_EFA_IO_LOCAL_BAD_LENGTH = 6,
	SRD_EFA_IO_REMOTE_BAD_ADDRESS = 7,
	SRD_EFA_IO_REMOTE_ABORT = 8,
	SRD_EFA_IO_REMOTE_BAD_DEST_QPN = 9,
	SRD_EFA_IO_REMOTE_RNR = 10,
	SRD_EFA_IO_REMOTE_BAD_LENGTH = 11,
	SRD_EFA_IO_REMOTE_BAD_STATUS = 12,
	SRD_EFA_IO_LOCAL_UNRESP_REMOTE = 13,
	SRD_EFA_IO_REMOTE_UNKNOWN_PEER = 14,
	SRD_EFA_IO_LOCAL_UNREACH_REMOTE = 15,
	SRD_EFA_IO_REMOTE_FEATURE_MISMATCH = 16,
	SRD_EFA_IO_MAX,
};

/* prov_errno: the vendor code when the device gave a known one, else this
 * base + the ibv_wc_status. */
#define SRD_PROV_ERRNO_WC_BASE 0x1000

struct srd_wc_err {
	int err;		/* positive FI_E* */
	int prov_errno;
};

void srd_wc_err_map(enum ibv_wc_status status, uint32_t vendor_err,
		    struct srd_wc_err *out);
bool srd_wc_err_is_rnr(enum ibv_wc_status status, uint32_t vendor_err);
struct srd_wc;
/* An error completion as fi_cq_readerr reports it (err_data untouched:
 * the application may own that buffer). */
void srd_cq_err_fill(const struct srd_wc *wc, void *op_context,
		     uint64_t flags, struct fi_cq_err_entry *entry);
/* Static text for a prov_errno ("unknown device error" when unknown). */
const char *srd_prov_strerror(int prov_errno);
/* "peer <peer>: <text> (<wc status>, vendor <n>)" into buf; returns buf. */
const char *srd_err_format(int prov_errno, const char *peer, char *buf,
			   size_t len);

/* Errors the provider finds itself (no device status behind them). */
#define SRD_PROV_ERRNO_PROV_BASE 0x2000
#define SRD_PROV_ERRNO_PEER_LOST (SRD_PROV_ERRNO_PROV_BASE + 1)

/*
 * fi_cq_err_entry.err_data of srd error completions (fi_srd(7)): the peer
 * and the cause, so that fi_cq_strerror can name both. Binary, versioned
 * by size; at most UTIL_CQ_ERR_DATA_MAX bytes.
 */
#define SRD_ERR_DATA_MAGIC 0x45445253u	/* "SRDE" in little endian */
#define SRD_ERR_DATA_F_PEER 0x1u	/* peer is the remote endpoint */
#define SRD_ERR_DATA_F_ADDR 0x2u	/* fi_addr is its address in the AV */

struct srd_err_data {
	uint32_t magic;
	uint16_t size;			/* sizeof(struct srd_err_data) */
	uint16_t flags;			/* SRD_ERR_DATA_F_* */
	int32_t err;			/* the entry's err (positive FI_E*) */
	int32_t prov_errno;
	uint64_t fi_addr;
	struct srd_ep_name peer;
};

void srd_err_data_init(struct srd_err_data *d, int err, int prov_errno,
		       const struct srd_ep_name *peer, uint64_t fi_addr);
/* The domain's strerror (fi_cq_strerror): err_data, when it is ours,
 * names the peer. buf NULL: text in thread-local storage, valid until the
 * thread's next call. */
const char *srd_strerror(int prov_errno, const void *err_data, char *buf,
			 size_t len);

/* ---- RNR backoff, per peer --------------------------------------------------- */

#define SRD_RNR_START_MIN_US 40
#define SRD_RNR_START_MAX_US 120
#define SRD_RNR_MAX_US 1000000

struct srd_rnr {
	uint64_t until_ns;		/* backed off while now < until_ns */
	uint32_t wait_us;		/* last wait; 0 = never backed off */
	uint32_t events;
};

/* The peer refused for lack of a receive buffer: back off. */
void srd_rnr_on_rnr(struct srd_rnr *r, uint64_t now_ns, uint64_t *rng);
/* 0 when the peer may be sent to, -FI_EAGAIN while backed off. */
int srd_rnr_check(const struct srd_rnr *r, uint64_t now_ns);
/* A send to the peer completed: next RNR starts small again. */
void srd_rnr_on_success(struct srd_rnr *r);
uint64_t srd_rng_next(uint64_t *state);

/* ---- CQ poller of the progress engine -------------------------------------- */

struct srd_cq;

/* What a poll hands to a completion callback; only wr_id, status, qp_num,
 * vendor_err are valid when status != IBV_WC_SUCCESS. */
struct srd_wc {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t imm_data;		/* host order */
	unsigned int wc_flags;
};

typedef void (*srd_wc_cb)(struct srd_cq *cq, const struct srd_wc *wc,
			  void *arg);
typedef void (*srd_batch_cb)(struct srd_cq *cq, int n, void *arg);

#define SRD_WC_OPCODE_SLOTS 256	/* IBV_WC_RECV = 128, RECV_RDMA_WITH_IMM = 129 */

struct srd_cq_ops {
	srd_wc_cb on_wc[SRD_WC_OPCODE_SLOTS];	/* NULL: on_unknown */
	srd_wc_cb on_unknown;
	srd_wc_cb on_error;			/* any status != SUCCESS */
	srd_batch_cb on_batch_end;		/* after each non-empty poll */
};

struct srd_cq_attr {
	uint32_t depth;			/* from srd_cq_depth() */
	unsigned int batch;
	bool force_legacy;		/* tests: poll with ibv_poll_cq */
	void *arg;
};

struct srd_cq {
	struct srd_device *dev;
	struct ibv_cq_ex *cqx;		/* NULL for a legacy CQ */
	struct ibv_cq *cq;
	const struct srd_cq_ops *ops;
	void *arg;
	unsigned int batch;
	uint32_t depth;
	int (*poll)(struct srd_cq *cq);	/* chosen once at open */
	struct ibv_wc *wc;		/* batch array, legacy path only */
};

/* For callback tables that do not care about some events. */
extern const srd_wc_cb srd_cq_wc_ignore;
extern const srd_batch_cb srd_cq_batch_ignore;

/* Every work request that can be outstanding at once, each able to make one
 * completion, plus the unsolicited ones (RDMA write with immediate data). */
uint32_t srd_cq_depth(uint32_t sq_depth, uint32_t rq_depth, uint32_t n_qps,
		      uint32_t unsolicited, uint32_t max_cqe);

int srd_cq_open(struct srd_device *dev, const struct srd_cq_attr *attr,
		const struct srd_cq_ops *ops, struct srd_cq **cq_out);
/* Wrap a CQ created elsewhere (tests, softsrd-created CQs). */
int srd_cq_init(struct srd_cq *cq, struct ibv_cq_ex *cqx, struct ibv_cq *legacy,
		const struct srd_cq_attr *attr, const struct srd_cq_ops *ops);
void srd_cq_fini(struct srd_cq *cq);
void srd_cq_close(struct srd_cq *cq);

/* One batch: returns completions handled (0 when empty) or a negative error. */
static inline int srd_cq_poll(struct srd_cq *cq)
{
	return cq->poll(cq);
}

#endif /* SRD_H */
