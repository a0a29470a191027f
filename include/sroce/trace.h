/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Tracepoints (events/sroce/): packets each way with their headers
 * decoded, QP state changes, retransmissions, RNR waits and completions
 * in error.  Off, each costs one static branch.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sroce

#if !defined(_SROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SROCE_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>

#include "sroce/sroce.h"
#include "sroce/compat.h"
#include "sroce/wire/hdr.h"
#include "sroce/wire/opcode.h"

DECLARE_EVENT_CLASS(sroce_pkt_class,
	TP_PROTO(const struct sroce_dev *sdev, const struct sroce_pkt_hdrs *h,
		 u32 len),
	TP_ARGS(sdev, h, len),
	TP_STRUCT__entry(
		__string(dev, dev_name(&sdev->ib_dev.dev))
		__string(op, h->info ? h->info->name : "UNKNOWN")
		__field(u8, opcode)
		__field(u32, dqpn)
		__field(u32, psn)
		__field(bool, se)
		__field(bool, ackreq)
		__field(u16, pkey)
		__field(u32, len)
		__field(u32, payload)
		__field(u64, va)
		__field(u32, rkey)
		__field(u32, dmalen)
		__field(u8, syndrome)
		__field(u32, msn)
	),
	TP_fast_assign(
		u32 mask = h->info ? h->info->mask : 0;

		sroce_assign_str(dev, dev_name(&sdev->ib_dev.dev));
		sroce_assign_str(op, h->info ? h->info->name : "UNKNOWN");
		__entry->opcode = h->bth.opcode;
		__entry->dqpn = h->bth.dqpn;
		__entry->psn = h->bth.psn;
		__entry->se = h->bth.se;
		__entry->ackreq = h->bth.ackreq;
		__entry->pkey = h->bth.pkey;
		__entry->len = len;
		__entry->payload = h->payload_len;
		__entry->va = mask & SROCE_M_RETH ? h->reth.va :
			      mask & SROCE_M_ATMETH ? h->atmeth.va : 0;
		__entry->rkey = mask & SROCE_M_RETH ? h->reth.rkey :
				mask & SROCE_M_ATMETH ? h->atmeth.rkey : 0;
		__entry->dmalen = mask & SROCE_M_RETH ? h->reth.len : 0;
		__entry->syndrome = mask & SROCE_M_AETH ? h->aeth.syndrome : 0;
		__entry->msn = mask & SROCE_M_AETH ? h->aeth.msn : 0;
	),
	TP_printk("%s %s(%#x) dqpn %#x psn %#x se %d ackreq %d pkey %#x len %u payload %u reth va %#llx rkey %#x dmalen %u aeth syndrome %#x msn %u",
		  __get_str(dev), __get_str(op), __entry->opcode, __entry->dqpn,
		  __entry->psn, __entry->se, __entry->ackreq, __entry->pkey,
		  __entry->len, __entry->payload, __entry->va, __entry->rkey,
		  __entry->dmalen, __entry->syndrome, __entry->msn)
);

DEFINE_EVENT(sroce_pkt_class, sroce_pkt_tx,
	TP_PROTO(const struct sroce_dev *sdev, const struct sroce_pkt_hdrs *h,
		 u32 len),
	TP_ARGS(sdev, h, len));

DEFINE_EVENT(sroce_pkt_class, sroce_pkt_rx,
	TP_PROTO(const struct sroce_dev *sdev, const struct sroce_pkt_hdrs *h,
		 u32 len),
	TP_ARGS(sdev, h, len));

/* enum ib_qp_state, by name */
#define sroce_show_qp_state(s)						\
	__print_symbolic(s, { IB_QPS_RESET, "RESET" }, { IB_QPS_INIT, "INIT" }, \
			 { IB_QPS_RTR, "RTR" }, { IB_QPS_RTS, "RTS" },	\
			 { IB_QPS_SQD, "SQD" }, { IB_QPS_SQE, "SQE" },	\
			 { IB_QPS_ERR, "ERR" })

TRACE_EVENT(sroce_qp_state,
	TP_PROTO(const struct sroce_qp *qp, int from, int to),
	TP_ARGS(qp, from, to),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(int, from)
		__field(int, to)
	),
	TP_fast_assign(
		__entry->qpn = qp->qpn;
		__entry->from = from;
		__entry->to = to;
	),
	TP_printk("qpn %#x %s -> %s", __entry->qpn,
		  sroce_show_qp_state(__entry->from),
		  sroce_show_qp_state(__entry->to))
);

/* A go-back-N restart: @nak for a sequence NAK or READ gap, else timeout. */
TRACE_EVENT(sroce_retrans,
	TP_PROTO(const struct sroce_qp *qp, u32 psn, bool nak),
	TP_ARGS(qp, psn, nak),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, next_psn)
		__field(u8, retry_left)
		__field(bool, nak)
	),
	TP_fast_assign(
		__entry->qpn = qp->qpn;
		__entry->psn = psn;
		__entry->next_psn = qp->req.psn;
		__entry->retry_left = qp->req.retry_cnt;
		__entry->nak = nak;
	),
	TP_printk("qpn %#x from psn %#x (next %#x) after %s, %u retries left",
		  __entry->qpn, __entry->psn, __entry->next_psn,
		  __entry->nak ? "NAK" : "ACK timeout", __entry->retry_left)
);

TRACE_EVENT(sroce_rnr_wait,
	TP_PROTO(const struct sroce_qp *qp, u32 psn, u32 usecs),
	TP_ARGS(qp, psn, usecs),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, usecs)
		__field(u8, rnr_left)
	),
	TP_fast_assign(
		__entry->qpn = qp->qpn;
		__entry->psn = psn;
		__entry->usecs = usecs;
		__entry->rnr_left = qp->req.rnr_retry;
	),
	TP_printk("qpn %#x psn %#x waits %u us, rnr_retry %u%s", __entry->qpn,
		  __entry->psn, __entry->usecs, __entry->rnr_left,
		  __entry->rnr_left == 7 ? " (infinite)" : "")
);

/* in the event's format, not a pointer into ib_core (the trace reader checks) */
#define sroce_show_wc_status(s)						\
	__print_symbolic(s,						\
		{ IB_WC_SUCCESS, "success" },				\
		{ IB_WC_LOC_LEN_ERR, "local length error" },		\
		{ IB_WC_LOC_QP_OP_ERR, "local QP operation error" },	\
		{ IB_WC_LOC_EEC_OP_ERR, "local EE context operation error" }, \
		{ IB_WC_LOC_PROT_ERR, "local protection error" },	\
		{ IB_WC_WR_FLUSH_ERR, "WR flushed" },			\
		{ IB_WC_MW_BIND_ERR, "memory window bind error" },	\
		{ IB_WC_BAD_RESP_ERR, "bad response error" },		\
		{ IB_WC_LOC_ACCESS_ERR, "local access error" },	\
		{ IB_WC_REM_INV_REQ_ERR, "remote invalid request error" }, \
		{ IB_WC_REM_ACCESS_ERR, "remote access error" },	\
		{ IB_WC_REM_OP_ERR, "remote operation error" },		\
		{ IB_WC_RETRY_EXC_ERR, "transport retry counter exceeded" }, \
		{ IB_WC_RNR_RETRY_EXC_ERR, "RNR retry counter exceeded" }, \
		{ IB_WC_LOC_RDD_VIOL_ERR, "local RDD violation error" }, \
		{ IB_WC_REM_INV_RD_REQ_ERR, "remote invalid RD request" }, \
		{ IB_WC_REM_ABORT_ERR, "operation aborted" },		\
		{ IB_WC_INV_EECN_ERR, "invalid EECN" },			\
		{ IB_WC_INV_EEC_STATE_ERR, "invalid EEC state" },	\
		{ IB_WC_FATAL_ERR, "fatal error" },			\
		{ IB_WC_RESP_TIMEOUT_ERR, "response timeout error" },	\
		{ IB_WC_GENERAL_ERR, "general error" })

TRACE_EVENT(sroce_cqe_err,
	TP_PROTO(const struct sroce_qp *qp, const struct ib_wc *wc, bool send),
	TP_ARGS(qp, wc, send),
	TP_STRUCT__entry(
		__field(u32, qpn)
		__field(u64, wr_id)
		__field(int, status)
		__field(int, opcode)
		__field(u32, vendor_err)
		__field(bool, send)
	),
	TP_fast_assign(
		__entry->qpn = qp->qpn;
		__entry->wr_id = wc->wr_id;
		__entry->status = wc->status;
		__entry->opcode = wc->opcode;
		__entry->vendor_err = wc->vendor_err;
		__entry->send = send;
	),
	TP_printk("qpn %#x %s wr_id %#llx status %d (%s) opcode %d vendor_err %#x",
		  __entry->qpn, __entry->send ? "send" : "recv", __entry->wr_id,
		  __entry->status, sroce_show_wc_status(__entry->status),
		  __entry->opcode, __entry->vendor_err)
);

#endif /* _SROCE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH sroce
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
