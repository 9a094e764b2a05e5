/* SPDX-License-Identifier: MIT */
/*
 * The verbs table filled from rdma-core. weft does not link libibverbs: it
 * opens libibverbs.so.1 and libefa.so.1 at first use and binds each symbol
 * to the version its signature belongs to (dlvsym), so a host without
 * rdma-core still loads weft, and srd there simply has no EFA device.
 *
 * Where rdma-core's API is a header inline (query_device_ex, query_port,
 * create_cq_ex), the wrapper repeats what the inline does, calling the
 * library through the resolved pointers: the inline itself would make weft
 * link the legacy symbols it falls back to.
 */
#include "weft/compat.h"
#include "srd_dev.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#define SRD_IBVERBS_SONAME "libibverbs.so.1"
#define SRD_EFA_SONAME "libefa.so.1"

/* The library entry points the wrappers below need beyond the table. */
struct srd_rdma_legacy {
	int (*query_device)(struct ibv_context *context,
			    struct ibv_device_attr *attr);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct _compat_ibv_port_attr *attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*efadv_query_device)(struct ibv_context *ctx,
				  struct efadv_device_attr *attr,
				  uint32_t inlen);
};

static struct {
	pthread_mutex_t lock;
	bool tried;
	bool ok;
	void *ibverbs;
	void *efa;
	const char *ibverbs_soname;
	const char *efa_soname;
	struct srd_rdma_legacy legacy;
	struct srd_verbs_ops ops;
} srd_rdma = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.ibverbs_soname = SRD_IBVERBS_SONAME,
	.efa_soname = SRD_EFA_SONAME,
};

static int srd_rdma_query_device_ex(struct ibv_context *context,
				    const struct ibv_query_device_ex_input *input,
				    struct ibv_device_attr_ex *attr)
{
	struct verbs_context *vctx;
	int ret;

	if (input && input->comp_mask)
		return EINVAL;
	vctx = verbs_get_ctx_op(context, query_device_ex);
	if (vctx) {
		ret = vctx->query_device_ex(context, input, attr, sizeof(*attr));
		if (ret != EOPNOTSUPP && ret != ENOSYS)
			return ret;
	}
	memset(attr, 0, sizeof(*attr));
	return srd_rdma.legacy.query_device(context, &attr->orig_attr);
}

static int srd_rdma_query_port(struct ibv_context *context, uint8_t port_num,
			       struct ibv_port_attr *port_attr)
{
	struct verbs_context *vctx = verbs_get_ctx_op(context, query_port);

	if (vctx)
		return vctx->query_port(context, port_num, port_attr,
					sizeof(*port_attr));
	memset(port_attr, 0, sizeof(*port_attr));
	return srd_rdma.legacy.query_port(context, port_num,
			(struct _compat_ibv_port_attr *)port_attr);
}

static struct ibv_cq_ex *srd_rdma_create_cq_ex(struct ibv_context *context,
					       struct ibv_cq_init_attr_ex *attr)
{
	struct verbs_context *vctx = verbs_get_ctx_op(context, create_cq_ex);

	if (!vctx) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return vctx->create_cq_ex(context, attr);
}

/*
 * The table promises RETURN_CAPS answers. A library built from headers
 * without that flag would refuse it, so ask the old way: 1 means the whole
 * message lands in order, which covers every 128-byte line too.
 */
static int srd_rdma_query_qp_data_in_order(struct ibv_qp *qp,
					   enum ibv_wr_opcode op,
					   uint32_t flags)
{
#if WEFT_HAVE_IN_ORDER_RETURN_CAPS
	return srd_rdma.legacy.query_qp_data_in_order(qp, op, flags);
#else
	return srd_dev_in_order_from_legacy(
		srd_rdma.legacy.query_qp_data_in_order(qp, op, 0), flags);
#endif
}

int srd_dev_in_order_from_legacy(int legacy, uint32_t flags)
{
	if (!(flags & SRD_IN_ORDER_RETURN_CAPS) || legacy < 0)
		return legacy;
	return legacy == 1 ? (int)(SRD_IN_ORDER_WHOLE_MSG | SRD_IN_ORDER_ALIGNED_128)
			   : 0;
}

/* Hide caps bits this build cannot act on: the library would refuse the QP
 * attributes that go with them. */
static int srd_rdma_efadv_query_device(struct ibv_context *ctx,
				       struct efadv_device_attr *attr,
				       uint32_t inlen)
{
	int ret = srd_rdma.legacy.efadv_query_device(ctx, attr, inlen);

#if !WEFT_HAVE_CAPS_RDMA_WRITE
	if (!ret)
		attr->device_caps &= ~(uint32_t)SRD_EFADV_CAPS_RDMA_WRITE;
#endif
	return ret;
}

struct srd_rdma_sym {
	bool efa;		/* in libefa, else libibverbs */
	const char *name;
	const char *version;
	size_t offset;		/* in struct srd_verbs_ops, or SIZE_MAX */
	void **legacy;		/* or here */
};

#define SRD_OPS(member) offsetof(struct srd_verbs_ops, member), NULL
#define SRD_LEGACY(member) SIZE_MAX, (void **)&srd_rdma.legacy.member

static const struct srd_rdma_sym srd_rdma_syms[] = {
	{ false, "ibv_get_device_list", "IBVERBS_1.1", SRD_OPS(get_device_list) },
	{ false, "ibv_free_device_list", "IBVERBS_1.1", SRD_OPS(free_device_list) },
	{ false, "ibv_get_device_name", "IBVERBS_1.1", SRD_OPS(get_device_name) },
	{ false, "ibv_open_device", "IBVERBS_1.1", SRD_OPS(open_device) },
	{ false, "ibv_close_device", "IBVERBS_1.1", SRD_OPS(close_device) },
	{ false, "ibv_query_device", "IBVERBS_1.1", SRD_LEGACY(query_device) },
	{ false, "ibv_query_port", "IBVERBS_1.1", SRD_LEGACY(query_port) },
	{ false, "ibv_query_gid", "IBVERBS_1.1", SRD_OPS(query_gid) },
	{ false, "ibv_alloc_pd", "IBVERBS_1.1", SRD_OPS(alloc_pd) },
	{ false, "ibv_dealloc_pd", "IBVERBS_1.1", SRD_OPS(dealloc_pd) },
	{ false, "ibv_reg_mr", "IBVERBS_1.1", SRD_OPS(reg_mr) },
	{ false, "ibv_dereg_mr", "IBVERBS_1.1", SRD_OPS(dereg_mr) },
	{ false, "ibv_destroy_cq", "IBVERBS_1.1", SRD_OPS(destroy_cq) },
	{ false, "ibv_qp_to_qp_ex", "IBVERBS_1.6", SRD_OPS(qp_to_qp_ex) },
	{ false, "ibv_modify_qp", "IBVERBS_1.1", SRD_OPS(modify_qp) },
	{ false, "ibv_query_qp", "IBVERBS_1.1", SRD_OPS(query_qp) },
	{ false, "ibv_query_qp_data_in_order", "IBVERBS_1.14",
	  SRD_LEGACY(query_qp_data_in_order) },
	{ false, "ibv_destroy_qp", "IBVERBS_1.1", SRD_OPS(destroy_qp) },
	{ false, "ibv_create_ah", "IBVERBS_1.1", SRD_OPS(create_ah) },
	{ false, "ibv_destroy_ah", "IBVERBS_1.1", SRD_OPS(destroy_ah) },
	{ true, "efadv_query_device", "EFA_1.1", SRD_LEGACY(efadv_query_device) },
	{ true, "efadv_create_qp_ex", "EFA_1.1", SRD_OPS(efadv_create_qp_ex) },
	{ true, "efadv_query_ah", "EFA_1.1", SRD_OPS(efadv_query_ah) },
};

static int srd_rdma_bind(const struct srd_rdma_sym *sym)
{
	void *fn = dlvsym(sym->efa ? srd_rdma.efa : srd_rdma.ibverbs,
			  sym->name, sym->version);

	if (!fn) {
		FI_WARN(&srd_prov, FI_LOG_CORE,
			"rdma-core lacks %s@%s: no EFA device\n",
			sym->name, sym->version);
		return -FI_ENOSYS;
	}
	if (sym->legacy)
		*sym->legacy = fn;
	else
		memcpy((char *)&srd_rdma.ops + sym->offset, &fn, sizeof(fn));
	return 0;
}

/*
 * Forget the table but never dlclose: libibverbs loads provider plugins and
 * allocates at load time, and is not meant to be unloaded (what it holds
 * would leak, and any object still open would dangle). A later dlopen of
 * the same soname just takes another reference.
 */
static void srd_rdma_unload(void)
{
	srd_rdma.efa = NULL;
	srd_rdma.ibverbs = NULL;
	memset(&srd_rdma.ops, 0, sizeof(srd_rdma.ops));
	memset(&srd_rdma.legacy, 0, sizeof(srd_rdma.legacy));
}

static int srd_rdma_load(void)
{
	size_t i;

	srd_rdma.ibverbs = dlopen(srd_rdma.ibverbs_soname, RTLD_NOW | RTLD_LOCAL);
	if (!srd_rdma.ibverbs)
		goto err_ibverbs;
	srd_rdma.efa = dlopen(srd_rdma.efa_soname, RTLD_NOW | RTLD_LOCAL);
	if (!srd_rdma.efa)
		goto err_efa;
	for (i = 0; i < WEFT_ARRAY_SIZE(srd_rdma_syms); i++)
		if (srd_rdma_bind(&srd_rdma_syms[i]))
			goto err_sym;

	srd_rdma.ops.name = "rdma-core";
	srd_rdma.ops.query_device_ex = srd_rdma_query_device_ex;
	srd_rdma.ops.query_port = srd_rdma_query_port;
	srd_rdma.ops.create_cq_ex = srd_rdma_create_cq_ex;
	srd_rdma.ops.query_qp_data_in_order = srd_rdma_query_qp_data_in_order;
	srd_rdma.ops.efadv_query_device = srd_rdma_efadv_query_device;
	return 0;

err_sym:
	srd_rdma_unload();
	return -FI_ENOSYS;
err_efa:
	FI_INFO(&srd_prov, FI_LOG_CORE, "cannot load %s (%s): no EFA device\n",
		srd_rdma.efa_soname, dlerror());
	srd_rdma_unload();
	return -FI_ENOSYS;
err_ibverbs:
	FI_INFO(&srd_prov, FI_LOG_CORE, "cannot load %s (%s): no EFA device\n",
		srd_rdma.ibverbs_soname, dlerror());
	return -FI_ENOSYS;
}

const struct srd_verbs_ops *srd_dev_verbs_rdma_ops(void)
{
	pthread_mutex_lock(&srd_rdma.lock);
	if (!srd_rdma.tried) {
		srd_rdma.tried = true;
		srd_rdma.ok = srd_rdma_load() == 0;
	}
	pthread_mutex_unlock(&srd_rdma.lock);
	return srd_rdma.ok ? &srd_rdma.ops : NULL;
}

void srd_dev_verbs_rdma_reset(void)
{
	pthread_mutex_lock(&srd_rdma.lock);
	srd_rdma_unload();
	srd_rdma.tried = false;
	srd_rdma.ok = false;
	pthread_mutex_unlock(&srd_rdma.lock);
}

void srd_dev_verbs_rdma_set_sonames(const char *ibverbs, const char *efa)
{
	srd_dev_verbs_rdma_reset();
	srd_rdma.ibverbs_soname = ibverbs ? ibverbs : SRD_IBVERBS_SONAME;
	srd_rdma.efa_soname = efa ? efa : SRD_EFA_SONAME;
}
