/* SPDX-License-Identifier: MIT */
/*
 * Does data land in order within one message? SRD reorders messages, but a
 * device may still write each message front to back (WHOLE_MSG) or at least
 * each aligned 128-byte line at once (ALIGNED_128_BYTES). If it does for
 * RDMA writes, a receiver can poll a flag in memory instead of waiting for
 * a completion: that is the "data" poll mode. The answer is per device and
 * QP type, so it is asked once and cached.
 */
#include "weft/compat.h"
#include "srd_dev.h"

#include <stdlib.h>

static int srd_dev_inorder_query_op(struct srd_dev *dev, struct srd_dev_qp *qp,
				    enum ibv_wr_opcode op, const char *op_name)
{
	int ret, caps = SRD_INORDER_NONE;

	/* The table answers RETURN_CAPS style whatever the rdma-core version:
	 * its rdma-core filler translates for libraries without the flag. */
	ret = dev->verbs->query_qp_data_in_order(qp->ibv_qp, op,
						 SRD_IN_ORDER_RETURN_CAPS);
	if (ret < 0) {
		FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
			"%s: in-order query for %s failed (%d): assuming no order\n",
			dev->name, op_name, ret);
		return SRD_INORDER_NONE;
	}
	/* A whole message in order is every 128-byte line in order too. */
	if (ret & SRD_IN_ORDER_WHOLE_MSG)
		caps |= SRD_INORDER_WHOLE | SRD_INORDER_128;
	if (ret & SRD_IN_ORDER_ALIGNED_128)
		caps |= SRD_INORDER_128;
	return caps;
}

static struct srd_dev_inorder *srd_dev_inorder_find(struct srd_dev *dev,
						    enum ibv_qp_type type,
						    uint32_t driver_type)
{
	struct srd_dev_inorder *io;

	for (io = dev->inorder; io; io = io->next)
		if (io->qp_type == type && io->driver_qp_type == driver_type)
			return io;
	return NULL;
}

int srd_dev_inorder_get(struct srd_dev *dev, struct srd_dev_qp *qp,
			const struct srd_dev_inorder **out)
{
	struct srd_dev_inorder *io;

	io = srd_dev_inorder_find(dev, IBV_QPT_DRIVER,
				  EFADV_QP_DRIVER_TYPE_SRD);
	if (io)
		goto done;
	io = calloc(1, sizeof(*io));
	if (!io)
		return -FI_ENOMEM;
	io->qp_type = IBV_QPT_DRIVER;
	io->driver_qp_type = EFADV_QP_DRIVER_TYPE_SRD;
	io->send = srd_dev_inorder_query_op(dev, qp, IBV_WR_SEND, "SEND");
	/* Without RDMA write there are no writes to land in order. */
	io->rdma_write = dev->caps.rdma_write ?
			 srd_dev_inorder_query_op(dev, qp, IBV_WR_RDMA_WRITE,
						  "RDMA_WRITE") :
			 SRD_INORDER_NONE;
	io->next = dev->inorder;
	dev->inorder = io;
done:
	*out = io;
	return 0;
}

void srd_dev_inorder_free(struct srd_dev *dev)
{
	struct srd_dev_inorder *io, *next;

	for (io = dev->inorder; io; io = next) {
		next = io->next;
		free(io);
	}
	dev->inorder = NULL;
}

static enum srd_ring_flavour srd_ring_for(int write_caps)
{
	if (write_caps & SRD_INORDER_WHOLE)
		return SRD_RING_SEQ;
	if (write_caps & SRD_INORDER_128)
		return SRD_RING_LINE128;
	return SRD_RING_NONE;
}

void srd_dev_poll_choose(enum srd_poll_req req,
			 const struct srd_dev_inorder *io,
			 const struct srd_dev_caps *caps, bool relaxed_mr,
			 struct srd_dev_poll_choice *out)
{
	/* The device's promise holds only for CPU reads of memory that is not
	 * registered with relaxed ordering. */
	int write = relaxed_mr || !caps->rdma_write ? SRD_INORDER_NONE :
		    io->rdma_write;
	enum srd_ring_flavour ring = srd_ring_for(write);

	out->send_inorder = relaxed_mr ? SRD_INORDER_NONE : io->send;
	out->write_inorder = write;
	out->mode = SRD_POLL_COMPLETION;
	out->ring = SRD_RING_NONE;

	if (req == SRD_POLL_REQ_COMPLETION)
		return;
	if (ring == SRD_RING_NONE) {
		FI_INFO(&srd_prov, FI_LOG_EP_CTRL,
			"poll mode completion: RDMA writes %s\n",
			!caps->rdma_write ? "not supported by the device" :
			relaxed_mr ? "to relaxed-ordering memory have no order" :
			"do not land in order (whole message or 128-byte lines)");
		if (req == SRD_POLL_REQ_DATA)
			FI_WARN(&srd_prov, FI_LOG_EP_CTRL,
				"FI_SRD_POLL_MODE=data needs RDMA write landing in order "
				"(whole message or 128-byte lines)%s; polling completions\n",
				relaxed_mr ? " and memory without relaxed ordering" : "");
		return;
	}
	out->mode = SRD_POLL_DATA;
	out->ring = ring;
}

const char *srd_dev_poll_mode_str(enum srd_poll_mode mode)
{
	return mode == SRD_POLL_DATA ? "data" : "completion";
}
