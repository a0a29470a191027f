// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Build-time proof that uapi/rdma/sroce-abi.h is byte-identical to the rxe
 * user ABI of the kernel we build against, which librxe speaks.
 */
#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <rdma/ib_verbs.h>
#include <uapi/rdma/rdma_user_rxe.h>

#include "sroce/sroce.h"

#define SAME_SIZE(a, b) static_assert(sizeof(struct a) == sizeof(struct b))
#define SAME_OFF(a, fa, b, fb) \
	static_assert(offsetof(struct a, fa) == offsetof(struct b, fb))

SAME_SIZE(sroce_abi_av, rxe_av);
SAME_SIZE(sroce_abi_send_wr, rxe_send_wr);
SAME_SIZE(sroce_abi_send_wqe, rxe_send_wqe);
SAME_SIZE(sroce_abi_recv_wqe, rxe_recv_wqe);
SAME_SIZE(sroce_abi_sge, rxe_sge);
SAME_SIZE(sroce_abi_dma, rxe_dma_info);
SAME_SIZE(sroce_abi_mmap_info, mminfo);
SAME_SIZE(sroce_abi_create_ah_resp, rxe_create_ah_resp);
SAME_SIZE(sroce_abi_create_cq_resp, rxe_create_cq_resp);
SAME_SIZE(sroce_abi_create_qp_resp, rxe_create_qp_resp);
SAME_SIZE(sroce_abi_create_srq_resp, rxe_create_srq_resp);
SAME_SIZE(sroce_abi_modify_srq_cmd, rxe_modify_srq_cmd);
SAME_SIZE(sroce_abi_queue_buf, rxe_queue_buf);
SAME_OFF(sroce_abi_send_wqe, dma, rxe_send_wqe, dma);
SAME_OFF(sroce_abi_send_wqe, iova, rxe_send_wqe, iova);
SAME_OFF(sroce_abi_send_wr, wr.ud.ah_num, rxe_send_wr, wr.ud.ah_num);
SAME_OFF(sroce_abi_send_wr, wr.ud.av, rxe_send_wr, wr.ud.av);
SAME_OFF(sroce_abi_send_wr, wr.atomic.rkey, rxe_send_wr, wr.atomic.rkey);
SAME_OFF(sroce_abi_recv_wqe, dma, rxe_recv_wqe, dma);
#if SROCE_HAVE_MEM_PLACEMENT
SAME_OFF(sroce_abi_send_wr, wr.flush.rkey, rxe_send_wr, wr.flush.rkey);
SAME_OFF(sroce_abi_send_wr, wr.flush.level, rxe_send_wr, wr.flush.level);
SAME_OFF(sroce_abi_dma, atomic_wr, rxe_dma_info, atomic_wr);
#endif
SAME_OFF(sroce_abi_dma, sge, rxe_dma_info, sge);
SAME_OFF(sroce_abi_queue_buf, producer_index, rxe_queue_buf, producer_index);
SAME_OFF(sroce_abi_queue_buf, consumer_index, rxe_queue_buf, consumer_index);
SAME_OFF(sroce_abi_queue_buf, data, rxe_queue_buf, data);
static_assert(sizeof(struct sroce_abi_send_wqe) == 208);
/* kernel SGEs are copied straight from the ring */
static_assert(sizeof(struct sroce_sge) == sizeof(struct sroce_abi_sge));
/* the wire codec's QP state and type numbers are the kernel's */
static_assert(IB_QPS_ERR == 6 && IB_QPT_XRC_TGT == 10);
