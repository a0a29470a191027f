/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Helpers shared by the requester, responder and completer. */
#ifndef SROCE_TRANSPORT_H
#define SROCE_TRANSPORT_H

#include "sroce/sroce.h"
#include "sroce/wire/aeth.h"

/* Opcode base of a QP's transport (RC 0x00, UC 0x20, UD 0x60). */
static inline u8 sroce_qp_opbase(const struct sroce_qp *qp)
{
	switch (qp->type) {
	case IB_QPT_UC:
		return SROCE_OP_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return SROCE_OP_UD;
	default:
		return SROCE_OP_RC;
	}
}

/*
 * Build a packet of @h->bth.opcode with @payload_len payload bytes (pad
 * added here).  Returns the skb and where the payload goes.
 */
struct sk_buff *sroce_build_pkt(struct sroce_qp *qp, const struct sroce_av *av,
				struct sroce_pkt_hdrs *h, u32 payload_len,
				u8 **payload);

bool sroce_pkt_ref_ok(const struct sroce_qp *qp, const struct sroce_av *av,
		      u32 len);
struct sk_buff *sroce_build_pkt_ref(struct sroce_qp *qp,
				    const struct sroce_av *av,
				    struct sroce_pkt_hdrs *h, u32 payload_len);
int sroce_pkt_ref_end(struct sk_buff *skb, const struct sroce_pkt_hdrs *h);
int sroce_pkt_ref_mr(struct sk_buff *skb, struct sroce_mr *mr, u64 va, u32 n);

/* ACK/NAK on behalf of the responder. */
int sroce_send_ack(struct sroce_qp *qp, u32 psn, u8 syndrome);

/* Gather/scatter against a list of local SGEs through the MR table. */
int sroce_sge_copy_out(struct sroce_qp *qp, const struct sroce_sge *sge,
		       u32 num_sge, u32 *cur_sge, u32 *sge_off, u8 *dst,
		       u32 len);
int sroce_sge_ref_out(struct sroce_qp *qp, const struct sroce_sge *sge,
		      u32 num_sge, u32 *cur_sge, u32 *sge_off,
		      struct sk_buff *skb, u32 len);
int sroce_sge_copy_in(struct sroce_qp *qp, struct sroce_pd *pd,
		      const struct sroce_sge *sge, u32 num_sge, u32 *cur_sge,
		      u32 *sge_off, const struct sk_buff *skb, u32 off, u32 len);
int sroce_sge_write(struct sroce_qp *qp, struct sroce_pd *pd,
		    const struct sroce_sge *sge, u32 num_sge, u32 *cur_sge,
		    u32 *sge_off, const void *buf, u32 len);
void sroce_sge_seek(const struct sroce_sge *sge, u32 num_sge, u32 off,
		    u32 *cur_sge, u32 *sge_off);

u32 sroce_retrans_jiffies(const struct sroce_qp *qp);

/*
 * The engines.  Everything here runs in the QP's engine pass, with
 * qp->eng_lock held; each function that relies on it asserts it.
 */
static inline void sroce_assert_engine(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->eng_lock);
}

/* passes outside engine.c: the send queue poller (poll.c) */
struct sroce_qp *sroce_engine_run_owed(struct sroce_qp *qp, bool *owed);
void sroce_engine_chain(struct sroce_qp *next, bool syscall,
			struct sroce_qp **rest);

/* requester (req.c) */
bool sroce_req_run(struct sroce_qp *qp, int *budget);
void sroce_req_rewind(struct sroce_qp *qp, u32 psn);
bool sroce_req_probe(struct sroce_qp *qp);
void sroce_req_reread(struct sroce_qp *qp, struct sroce_swqe *wqe);
void sroce_req_timer_update(struct sroce_qp *qp, bool progress);
void sroce_req_wait_end(struct sroce_qp *qp);
void sroce_req_retrans_expired(struct sroce_qp *qp);
bool sroce_req_outstanding(struct sroce_qp *qp);
u32 sroce_req_sent_end(struct sroce_qp *qp);
void sroce_retrans_timer_fn(struct timer_list *t);
void sroce_rnr_timer_fn(struct timer_list *t);

/* completer (comp.c) */
void sroce_comp_rcv(struct sroce_pkt *pkt);
void sroce_comp_complete(struct sroce_qp *qp);
void sroce_comp_rd_done(struct sroce_qp *qp, struct sroce_swqe *wqe);
bool sroce_comp_flush_sq(struct sroce_qp *qp);
struct sroce_swqe *sroce_comp_first_open(struct sroce_qp *qp, u32 *idx);

/* responder (resp.c) */
bool sroce_resp_rcv(struct sroce_pkt *pkt);
bool sroce_resp_is_dup(struct sroce_pkt *pkt);
bool sroce_resp_read_run(struct sroce_qp *qp, int *budget);
void sroce_resp_ack_flush(struct sroce_qp *qp);
bool sroce_resp_busy(struct sroce_qp *qp);

/* ring consumers (wqe.c) */
bool sroce_sq_fetch(struct sroce_qp *qp, u32 max);
int sroce_rq_fetch(struct sroce_qp *qp, struct sroce_rwqe *out);
bool sroce_qp_flush_rq(struct sroce_qp *qp);

/* completions, with the consumer callbacks deferred (engine.c) */
bool sroce_flush_room(struct sroce_qp *qp, bool rcq);
void sroce_post_scq(struct sroce_qp *qp, const struct ib_wc *wc);
void sroce_post_rcq(struct sroce_qp *qp, const struct ib_wc *wc,
		    bool solicited);

bool sroce_train_ok(const struct sroce_train *t,
		    const struct sroce_pkt_hdrs *h0);

/* receive pipeline: header parse for a queued packet (rx.c) */
int sroce_pkt_init(struct sroce_pkt *pkt, struct sroce_qp *qp,
		   struct sk_buff *skb);

static inline bool sroce_wqe_is_read(const struct sroce_swqe *wqe)
{
	return wqe->opcode == IB_WR_RDMA_READ;
}

static inline bool sroce_wqe_is_atomic(const struct sroce_swqe *wqe)
{
	return wqe->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       wqe->opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/* ATOMIC WRITE and FLUSH (IBA 1.5 A19): one packet, answered by a READ response. */
static inline bool sroce_wqe_is_placement(const struct sroce_swqe *wqe)
{
	return SROCE_HAVE_MEM_PLACEMENT &&
	       (wqe->opcode == SROCE_WR_ATOMIC_WRITE ||
		wqe->opcode == SROCE_WR_FLUSH);
}

/*
 * Requests only their own answer completes: they hold a responder
 * resource, so they count against max_rd_atomic.
 */
static inline bool sroce_wqe_is_rd_atomic(const struct sroce_swqe *wqe)
{
	return sroce_wqe_is_read(wqe) || sroce_wqe_is_atomic(wqe) ||
	       sroce_wqe_is_placement(wqe);
}

/* Does a successful @wqe complete with a CQE? */
static inline bool sroce_wqe_signaled(const struct sroce_qp *qp,
				      const struct sroce_swqe *wqe)
{
	return (wqe->send_flags & IB_SEND_SIGNALED) ||
	       qp->sq_sig_type == IB_SIGNAL_ALL_WR;
}

#endif /* SROCE_TRANSPORT_H */
