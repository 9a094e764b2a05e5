/* SPDX-License-Identifier: MIT */
/*
 * srd provider, device layer (prefix srd_dev_): one verbs device (EFA
 * through rdma-core, softsrd, or the tests' mock), what it can do, its SRD
 * queue pairs and address handles, registration and posting, the in-order
 * answer that picks the poll mode, the mapping of completion statuses to
 * fi_errno, per-peer RNR backoff, and the CQ poller of the progress engine.
 * This is the only code that calls the verbs table (weft/srd_verbs.h) or
 * rdma-core's data-path inlines; the RDM layer (rdm/) builds on it.
 */
#ifndef SRD_DEV_H
#define SRD_DEV_H

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

/* FI_SRD_USE_SHM: peers on this host through shm. */
enum srd_use_shm {
	SRD_USE_SHM_AUTO,	/* when shm opens; else the device */
	SRD_USE_SHM_OFF,
	SRD_USE_SHM_ON,		/* fi_enable fails when shm cannot open */
};

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
	enum srd_use_shm use_shm;
	uint32_t rails;			/* devices an endpoint stripes over */
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
const struct srd_verbs_ops *srd_dev_verbs_rdma_ops(void);
/* Tests: load these sonames instead (NULL restores the defaults) and forget
 * what was resolved. Not thread safe; tests only. */
void srd_dev_verbs_rdma_set_sonames(const char *ibverbs, const char *efa);
void srd_dev_verbs_rdma_reset(void);
/* A flags-0 in-order answer (1 = whole message) as the RETURN_CAPS bits
 * the table promises, for rdma-core builds without RETURN_CAPS. */
int srd_dev_in_order_from_legacy(int legacy, uint32_t flags);
/* The table FI_SRD_DEVICE means, or NULL. */
const struct srd_verbs_ops *srd_dev_verbs_select(enum srd_device_sel sel);
/* softsrd defines its FI_SRD_SOFT_* settings and logs under prov. */
void srd_dev_soft_init(struct fi_provider *prov);

/* ---- device and capabilities --------------------------------------------- */

struct srd_dev_caps {
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

struct srd_dev_ah;
struct srd_dev_inorder;

struct srd_dev {
	const struct srd_verbs_ops *verbs;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct srd_dev_caps caps;
	char name[64];
	/* Domains (and their AVs and endpoints, each under its own lock)
	 * share the device, so its AH table needs one of its own. */
	pthread_mutex_t ah_lock;
	struct srd_dev_ah *ah_by_gid;		/* uthash, shared per GID */
	struct srd_dev_inorder *inorder;	/* cached answers per QP type */
};

int srd_dev_open(const struct srd_verbs_ops *verbs, const char *name,
		 struct srd_dev **dev_out);
void srd_dev_close(struct srd_dev *dev);
/* Fill caps from an open context (exposed for tests). */
int srd_dev_query_caps(const struct srd_verbs_ops *verbs,
		       struct ibv_context *ctx, struct srd_dev_caps *caps);

/* ---- address handles, shared per GID -------------------------------------- */

struct srd_dev_ah {
	union ibv_gid gid;		/* hash key */
	struct ibv_ah *ibv_ah;
	uint16_t ahn;			/* efadv AH number, for reverse lookup */
	unsigned int refcnt;
	UT_hash_handle hh;
};

int srd_dev_ah_get(struct srd_dev *dev, const union ibv_gid *gid,
		   struct srd_dev_ah **ah_out);
void srd_dev_ah_put(struct srd_dev *dev, struct srd_dev_ah *ah);

/* ---- queue pairs ----------------------------------------------------------- */

struct srd_dev_qp_attr {
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

#define SRD_QKEY_MASK 0x7fffffffu	/* the top bit marks privileged qkeys */
#define SRD_QPN_MASK 0xffffffu		/* QP numbers are 24 bits */

struct srd_dev_qp {
	struct srd_dev *dev;
	struct ibv_qp *ibv_qp;
	struct ibv_qp_ex *qpx;
	uint32_t qkey;
	uint32_t sq_depth;
	uint32_t rq_depth;
	uint64_t send_ops_flags;
	bool unsolicited_write_recv;
	bool low_latency_sl;		/* created with the low-latency SL */
};

int srd_dev_qp_create(struct srd_dev *dev, const struct srd_settings *s,
		      const struct srd_dev_qp_attr *attr,
		      struct srd_dev_qp **qp_out);
void srd_dev_qp_destroy(struct srd_dev_qp *qp);
/* "state RTS, qpn 12, qkey 0x..." for error reports and weft_info -v. */
int srd_dev_qp_describe(struct srd_dev_qp *qp, char *buf, size_t len);
uint64_t srd_dev_qp_send_ops_flags(const struct srd_dev_caps *caps);

/* ---- registration and posting ---------------------------------------------
 * The RDM layer registers memory and posts work requests only through
 * these, so the device layer is the one place that calls the verbs table
 * or rdma-core's ibv_wr_* inlines. The send post is inline: it is the
 * message path's one device call. */

/* NULL with errno set when the device refuses (the caller logs why it
 * wanted the registration). */
struct ibv_mr *srd_dev_reg_mr(struct srd_dev *dev, void *buf, size_t len,
			      int access);
/* mr NULL: nothing to do. */
void srd_dev_dereg_mr(struct srd_dev *dev, struct ibv_mr *mr);

/* Where work requests to one remote QP go. */
struct srd_dev_dest {
	struct ibv_ah *ah;	/* of a struct srd_dev_ah the owner holds */
	uint32_t qpn;
	uint32_t qkey;
};

/* One signaled send of len bytes at buf (lkey) to dest. 0 or the
 * device's errno. dest by pointer: its fields are read after the first
 * device call, so that fewer values live across those calls. */
static inline int srd_dev_qp_post_send(struct srd_dev_qp *qp, uint64_t wr_id,
				       uint32_t lkey, const void *buf,
				       uint32_t len,
				       const struct srd_dev_dest *dest)
{
	struct ibv_qp_ex *qpx = qp->qpx;

	ibv_wr_start(qpx);
	qpx->wr_id = wr_id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, lkey, (uintptr_t)buf, len);
	ibv_wr_set_ud_addr(qpx, dest->ah, dest->qpn, dest->qkey);
	return ibv_wr_complete(qpx);
}

enum srd_dev_rdma_op {
	SRD_DEV_RDMA_READ,
	SRD_DEV_RDMA_WRITE,
	SRD_DEV_RDMA_WRITE_IMM,
};

/* One RDMA operation between local [laddr, +len) (lkey) and the peer's
 * raddr (rkey). */
struct srd_dev_rdma {
	enum srd_dev_rdma_op op;
	uint32_t imm;			/* WRITE_IMM, host order */
	uint32_t lkey;
	uint32_t rkey;
	void *laddr;
	uint64_t raddr;
	size_t len;
};

/* 0 or the device's errno. */
int srd_dev_qp_post_rdma(struct srd_dev_qp *qp, uint64_t wr_id,
			 const struct srd_dev_rdma *r,
			 const struct srd_dev_dest *dest);
const char *srd_dev_rdma_op_str(enum srd_dev_rdma_op op);

#define SRD_DEV_RECV_BATCH 64		/* receives per srd_dev_qp_post_recv */

struct srd_dev_recv {
	uint64_t wr_id;
	void *addr;
};

/* n (<= SRD_DEV_RECV_BATCH) receive buffers of len bytes each (lkey).
 * 0 or the device's errno. */
int srd_dev_qp_post_recv(struct srd_dev_qp *qp, uint32_t lkey, uint32_t len,
			 const struct srd_dev_recv *r, uint32_t n);

/* ---- in-order delivery and the poll mode ------------------------------------ */

enum srd_dev_inorder_caps {
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

struct srd_dev_poll_choice {
	enum srd_poll_mode mode;
	enum srd_ring_flavour ring;
	/* What applications may rely on (endpoint options): the device's
	 * answer, or none for relaxed-ordering memory. */
	int send_inorder;		/* enum srd_dev_inorder_caps */
	int write_inorder;
};

struct srd_dev_inorder {
	struct srd_dev_inorder *next;
	enum ibv_qp_type qp_type;
	uint32_t driver_qp_type;
	int send;			/* enum srd_dev_inorder_caps */
	int rdma_write;
};

/* Ask the device once per (device, QP type); later calls return the cache. */
int srd_dev_inorder_get(struct srd_dev *dev, struct srd_dev_qp *qp,
			const struct srd_dev_inorder **out);
void srd_dev_inorder_free(struct srd_dev *dev);
/* The decision. relaxed_mr: the target memory is registered with relaxed
 * ordering, which voids what the device promised. Data mode forced where it
 * cannot work falls back to completion mode with a warning. */
void srd_dev_poll_choose(enum srd_poll_req req,
			 const struct srd_dev_inorder *io,
			 const struct srd_dev_caps *caps, bool relaxed_mr,
			 struct srd_dev_poll_choice *out);
const char *srd_dev_poll_mode_str(enum srd_poll_mode mode);

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

struct srd_dev_wc_err {
	int err;		/* positive FI_E* */
	int prov_errno;
};

void srd_dev_wc_err_map(enum ibv_wc_status status, uint32_t vendor_err,
			struct srd_dev_wc_err *out);
bool srd_dev_wc_err_is_rnr(enum ibv_wc_status status, uint32_t vendor_err);
struct srd_dev_wc;
/* The inverse: the status and vendor_err of an error completion that
 * srd_dev_wc_err_map turns into prov_errno and its err (a prov_errno it
 * cannot give, GENERAL_ERR: FI_EOTHER). For a failure handed on without
 * its device completion. */
void srd_dev_wc_err_unmap(int prov_errno, struct srd_dev_wc *wc);
/* An error completion as fi_cq_readerr reports it (err_data untouched:
 * the application may own that buffer). */
void srd_dev_cq_err_fill(const struct srd_dev_wc *wc, void *op_context,
			 uint64_t flags, struct fi_cq_err_entry *entry);
/* Static text for a prov_errno ("unknown device error" when unknown). */
const char *srd_dev_prov_strerror(int prov_errno);
/* "peer <peer>: <text> (<wc status>, vendor <n>)" into buf; returns buf. */
const char *srd_dev_err_format(int prov_errno, const char *peer, char *buf,
			       size_t len);

/* Errors the provider finds itself (no device status behind them). */
#define SRD_PROV_ERRNO_PROV_BASE 0x2000
#define SRD_PROV_ERRNO_PEER_LOST (SRD_PROV_ERRNO_PROV_BASE + 1)
#define SRD_PROV_ERRNO_WITHDRAWN (SRD_PROV_ERRNO_PROV_BASE + 2)

/* ---- RNR backoff, per peer --------------------------------------------------- */

#define SRD_RNR_START_MIN_US 40
#define SRD_RNR_START_MAX_US 120
#define SRD_RNR_MAX_US 1000000

struct srd_dev_rnr {
	uint64_t until_ns;		/* backed off while now < until_ns */
	uint32_t wait_us;		/* last wait; 0 = never backed off */
	uint32_t events;
};

/* The peer refused for lack of a receive buffer: back off. */
void srd_dev_rnr_on_rnr(struct srd_dev_rnr *r, uint64_t now_ns, uint64_t *rng);
/* 0 when the peer may be sent to, -FI_EAGAIN while backed off. */
int srd_dev_rnr_check(const struct srd_dev_rnr *r, uint64_t now_ns);
/* A send to the peer completed: next RNR starts small again. */
void srd_dev_rnr_on_success(struct srd_dev_rnr *r);
uint64_t srd_dev_rng_next(uint64_t *state);

/* ---- CQ poller of the progress engine -------------------------------------- */

struct srd_dev_cq;

/* What a poll hands to a completion callback; only wr_id, status, qp_num,
 * vendor_err are valid when status != IBV_WC_SUCCESS. */
struct srd_dev_wc {
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

typedef void (*srd_dev_wc_cb)(struct srd_dev_cq *cq,
			      const struct srd_dev_wc *wc, void *arg);
typedef void (*srd_dev_batch_cb)(struct srd_dev_cq *cq, int n, void *arg);

#define SRD_WC_OPCODE_SLOTS 256	/* IBV_WC_RECV = 128, RECV_RDMA_WITH_IMM = 129 */

struct srd_dev_cq_ops {
	srd_dev_wc_cb on_wc[SRD_WC_OPCODE_SLOTS];	/* NULL: on_unknown */
	srd_dev_wc_cb on_unknown;
	srd_dev_wc_cb on_error;			/* any status != SUCCESS */
	srd_dev_batch_cb on_batch_end;		/* after each non-empty poll */
};

struct srd_dev_cq_attr {
	uint32_t depth;			/* from srd_dev_cq_depth() */
	unsigned int batch;
	bool force_legacy;		/* tests: poll with ibv_poll_cq */
	void *arg;
};

struct srd_dev_cq {
	struct srd_dev *dev;
	struct ibv_cq_ex *cqx;		/* NULL for a legacy CQ */
	struct ibv_cq *cq;
	const struct srd_dev_cq_ops *ops;
	void *arg;
	unsigned int batch;
	uint32_t depth;
	int (*poll)(struct srd_dev_cq *cq);	/* chosen once at open */
	struct ibv_wc *wc;		/* batch array, legacy path only */
};

/* For callback tables that do not care about some events. */
extern const srd_dev_wc_cb srd_dev_cq_wc_ignore;
extern const srd_dev_batch_cb srd_dev_cq_batch_ignore;

/* Every work request that can be outstanding at once, each able to make one
 * completion, plus the unsolicited ones (RDMA write with immediate data). */
uint32_t srd_dev_cq_depth(uint32_t sq_depth, uint32_t rq_depth, uint32_t n_qps,
			  uint32_t unsolicited, uint32_t max_cqe);

int srd_dev_cq_open(struct srd_dev *dev, const struct srd_dev_cq_attr *attr,
		    const struct srd_dev_cq_ops *ops,
		    struct srd_dev_cq **cq_out);
/* Wrap a CQ created elsewhere (tests, softsrd-created CQs). */
int srd_dev_cq_init(struct srd_dev_cq *cq, struct ibv_cq_ex *cqx,
		    struct ibv_cq *legacy, const struct srd_dev_cq_attr *attr,
		    const struct srd_dev_cq_ops *ops);
void srd_dev_cq_fini(struct srd_dev_cq *cq);
void srd_dev_cq_close(struct srd_dev_cq *cq);

/* One batch: returns completions handled (0 when empty) or a negative error. */
static inline int srd_dev_cq_poll(struct srd_dev_cq *cq)
{
	return cq->poll(cq);
}

#endif /* SRD_DEV_H */
