// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The per-QP engine.  A pass runs the completer, the responder and the
 * requester of a QP in turn, a bounded number of packets each, with
 * qp->eng_lock held, so a QP's transport state has exactly one writer at
 * a time; consumer callbacks are raised only after that lock is dropped.
 * Passes run in the QP's work item, queued on its CPU by the receive path,
 * the timers, kernel post_send and the skb-free path; a user doorbell runs
 * one in its own process context (waiting for the lock) or leaves it to
 * the opt-in send queue poller (poll.c), and a loopback sender runs its
 * peer's when that lock is free, which saves a worker wakeup per hop.
 */
#include <linux/skbuff.h>
#include <linux/cred.h>

#include "sroce/transport.h"
#include "sroce/trace.h"

void sroce_qp_sched(struct sroce_qp *qp)
{
	queue_work_on(qp->cpu, sroce_wq, &qp->work);
}

/*
 * The worker on the CPU of the softirq that received a packet: that CPU
 * runs now, while the QP's may be busy with another task, or (a vCPU)
 * not running at all, and a wakeup there waits for it.  A work item
 * still running elsewhere is queued there instead (non-reentrant).
 */
void sroce_qp_sched_here(struct sroce_qp *qp)
{
	if (!in_serving_softirq()) {
		sroce_qp_sched(qp);
		return;
	}
	queue_work_on(smp_processor_id(), sroce_wq, &qp->work);
}

/*
 * A completion its CQ could not take: the CQ's error is an affiliated
 * asynchronous error of the QP too, which stops there (C10-144, C10-150,
 * C10-155); what it had outstanding is flushed, into a CQ that takes it.
 * A responder error whose completion this was keeps its own event.
 */
static void sroce_cqe_lost(struct sroce_qp *qp)
{
	sroce_qp_fail(qp, qp->resp.fail_ev ?: IB_EVENT_QP_FATAL);
}

/*
 * Room for a flush completion into the send (@rcq false) or receive CQ.
 * Only a kernel QP in Error waits for it (sroce_cq_reserve): the flush
 * stops there and goes on from the consumer's poll.  Anything else posts
 * as it always does, and a full CQ loses the completion.
 */
bool sroce_flush_room(struct sroce_qp *qp, bool rcq)
{
	struct sroce_cq *cq = rcq ? qp->rcq : qp->scq;
	bool queued;

	sroce_assert_engine(qp);
	if (cq->user || qp->state != IB_QPS_ERR || qp->cq_reserved[rcq])
		return true;
	qp->cq_reserved[rcq] = sroce_cq_reserve(cq, &qp->cq_wait[rcq],
						&queued);
	if (queued)
		sroce_qp_count(qp, SROCE_CNT_FLUSH_WAIT);
	return qp->cq_reserved[rcq];
}

/* Completion into the send/receive CQ; the handler is called after the pass. */
void sroce_post_scq(struct sroce_qp *qp, const struct ib_wc *wc)
{
	int r = sroce_cq_post(qp->scq, wc, false, qp->cq_reserved[0]);

	sroce_assert_engine(qp);
	qp->cq_reserved[0] = false;
	if (wc->status != IB_WC_SUCCESS)
		trace_sroce_cqe_err(qp, wc, true);
	qp->nt.scq |= r == SROCE_CQ_NOTIFY;
	qp->nt.scq_err |= r == SROCE_CQ_OVERFLOW;
	if (r >= SROCE_CQ_OVERFLOW)
		sroce_cqe_lost(qp);
}

void sroce_post_rcq(struct sroce_qp *qp, const struct ib_wc *wc,
		    bool solicited)
{
	int r = sroce_cq_post(qp->rcq, wc, solicited, qp->cq_reserved[1]);

	sroce_assert_engine(qp);
	qp->cq_reserved[1] = false;
	if (wc->status != IB_WC_SUCCESS)
		trace_sroce_cqe_err(qp, wc, false);
	qp->nt.rcq |= r == SROCE_CQ_NOTIFY;
	qp->nt.rcq_err |= r == SROCE_CQ_OVERFLOW;
	if (r >= SROCE_CQ_OVERFLOW)
		sroce_cqe_lost(qp);
}

/*
 * The one way a QP fails: ERR now, everything outstanding flushed by the
 * engine, and @ev (0 for none: a completion already reports the cause)
 * raised to the consumer once the engine drops its lock.
 */
void sroce_qp_fail(struct sroce_qp *qp, enum ib_event_type ev)
{
	sroce_assert_engine(qp);
	if (qp->state == IB_QPS_ERR)
		return;
	trace_sroce_qp_state(qp, qp->state, IB_QPS_ERR);
	sroce_qp_dbg(qp, "state %d to ERR%s%s\n", qp->state,
		     ev ? ": " : "", ev ? ib_event_msg(ev) : "");
	WRITE_ONCE(qp->state, IB_QPS_ERR);
	qp->sq_draining = false;
	if (ev && !qp->nt.qp_event)
		qp->nt.qp_event = ev;
	sroce_qp_sched(qp);
}

static void sroce_raise(struct sroce_qp *qp, const struct sroce_notify *nt)
{
	struct ib_event ev = { .device = qp->ibqp.device };

	if (qp->scq == qp->rcq) {
		if (nt->scq || nt->rcq || nt->scq_err || nt->rcq_err)
			sroce_cq_raise(qp->scq, nt->scq || nt->rcq,
				       nt->scq_err || nt->rcq_err);
	} else {
		if (nt->scq || nt->scq_err)
			sroce_cq_raise(qp->scq, nt->scq, nt->scq_err);
		if (nt->rcq || nt->rcq_err)
			sroce_cq_raise(qp->rcq, nt->rcq, nt->rcq_err);
	}
	if (nt->srq_limit && qp->srq && qp->srq->ibsrq.event_handler) {
		ev.event = IB_EVENT_SRQ_LIMIT_REACHED;
		ev.element.srq = &qp->srq->ibsrq;
		qp->srq->ibsrq.event_handler(&ev, qp->srq->ibsrq.srq_context);
	}
	if (nt->last_wqe && qp->ibqp.event_handler) {
		ev.event = IB_EVENT_QP_LAST_WQE_REACHED;
		ev.element.qp = &qp->ibqp;
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	}
	if (nt->sq_drained && qp->ibqp.event_handler) {
		ev.event = IB_EVENT_SQ_DRAINED;
		ev.element.qp = &qp->ibqp;
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	}
	if (nt->qp_event && qp->ibqp.event_handler) {
		ev.event = nt->qp_event;
		ev.element.qp = &qp->ibqp;
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	}
}

/*
 * A UC/UD send error (10.3.1.6): SQE, not Error.  The failed WQE's
 * completion reports it; the send queue flushes, the receive side goes on.
 */
void sroce_qp_sq_error(struct sroce_qp *qp)
{
	sroce_assert_engine(qp);
	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD)
		return;
	qp->sq_draining = false;
	trace_sroce_qp_state(qp, qp->state, IB_QPS_SQE);
	WRITE_ONCE(qp->state, IB_QPS_SQE);
	sroce_qp_sched(qp);
}

/* Leaving SQE: what was posted in it completes in error first, not after. */
void sroce_qp_sqe_flush(struct sroce_qp *qp)
{
	u32 n = qp->sq.max_wr / SROCE_FLUSH_BUDGET + 2;

	sroce_assert_engine(qp);
	while (n-- && sroce_comp_flush_sq(qp))
		;
}

/*
 * The next queued packet.  Most looks find the queue empty (a pass tries
 * both queues, often more than once): see that without the queue's
 * irq-off lock.  A packet queued after the look kicks the engine again.
 */
static struct sk_buff *sroce_rxq_next(struct sk_buff_head *q)
{
	return skb_queue_empty_lockless(q) ? NULL : skb_dequeue(q);
}

static void sroce_rxq_purge(struct sroce_qp *qp)
{
	skb_queue_purge(&qp->req_rxq);
	skb_queue_purge(&qp->resp_rxq);
}

/* Drop what a QP in this state cannot take, one count per packet. */
static void sroce_rxq_drop(struct sroce_qp *qp)
{
	struct sk_buff *skb;
	u32 n = 2 * SROCE_RXQ_MAX;	/* what the queues hold, not what arrives meanwhile */

	while (n-- && ((skb = skb_dequeue(&qp->req_rxq)) ||
		       (skb = skb_dequeue(&qp->resp_rxq)))) {
		sroce_qp_count_n(qp, SROCE_CNT_RX_DROP_QP_STATE,
				 sroce_skb_pkts(skb) - sroce_train(skb)->done);
		kfree_skb(skb);
	}
}

/*
 * Handle one queued packet, or a train's packets in turn, each taken from
 * @budget.  Returns false when the responder cannot take the next one yet
 * (a READ response is still going out): the skb stays at the head, a
 * train with its place kept.
 */
static bool sroce_engine_rx(struct sroce_qp *qp, struct sk_buff *skb,
			    bool req, bool dup_only, int *budget)
{
	struct sroce_train *t = sroce_train(skb);
	u32 i, n = sroce_skb_pkts(skb), start = t->done;
	struct sroce_pkt_hdrs h0;
	struct sroce_pkt pkt;

	if (sroce_pkt_init(&pkt, qp, skb)) {
		sroce_qp_count_n(qp, SROCE_CNT_RX_DROP_MALFORMED, n - start);
		goto bad;
	}
	/* a connected QP talks to one peer: anything else is spoofed */
	if (qp->type == IB_QPT_RC || qp->type == IB_QPT_UC) {
		if (!qp->av_valid || memcmp(&pkt.sgid, &qp->av.dgid,
					    sizeof(pkt.sgid))) {
			sroce_qp_count_n(qp, SROCE_CNT_RX_DROP_PEER, n - start);
			goto bad;
		}
	}
	if (n > 1)	/* each packet's headers derive from the first's */
		h0 = pkt.h;
	for (i = start; i < n; i++) {
		if (n > 1) {
			/* what is left of a train when the QP failed midway */
			if (i > start && qp->state == IB_QPS_ERR) {
				sroce_qp_count_n(qp, SROCE_CNT_RX_DROP_QP_STATE,
						 n - i);
				t->dropped = true;
				break;
			}
			sroce_train_hdrs(&h0, t, i, &pkt.h);
			pkt.payload_off = h0.hdr_len + i * t->seg;
			pkt.dropped = false;
		}
		if (req) {
			if ((dup_only && !sroce_resp_is_dup(&pkt)) ||
			    !sroce_resp_rcv(&pkt)) {
				t->done = i;
				*budget -= i - start;
				return false;
			}
		} else {
			sroce_comp_rcv(&pkt);
		}
		t->dropped |= pkt.dropped;
	}
	*budget -= n - start;
	if (t->dropped)
		goto drop;
	sroce_skb_consume(skb);
	return true;
bad:
	*budget -= n - start;
drop:
	kfree_skb(skb);
	return true;
}

/*
 * The head of the request queue waits for READ responses.  Copies of
 * requests already taken behind it (a requester going back for lost
 * responses) are answered now: waiting for them would stall recovery
 * for as long as the responses ahead take.
 */
static void sroce_engine_rx_dups(struct sroce_qp *qp, int *budget)
{
	struct sk_buff_head keep;
	struct sk_buff *skb;
	unsigned long flags;
	int n = SROCE_DUP_PEEK;

	__skb_queue_head_init(&keep);
	while (n-- > 0 && *budget > 0 && (skb = skb_dequeue(&qp->req_rxq))) {
		if (!sroce_engine_rx(qp, skb, true, true, budget))
			__skb_queue_tail(&keep, skb);
	}
	spin_lock_irqsave(&qp->req_rxq.lock, flags);
	skb_queue_splice(&keep, &qp->req_rxq);
	spin_unlock_irqrestore(&qp->req_rxq.lock, flags);
}

/*
 * Responder part of a pass: take requests until one has to wait for the
 * READ responses ahead of it, then send those responses.  Requests come
 * first so that a re-request or a new READ is seen while a long READ is
 * still going out.  Returns true when it stopped with work left that no
 * event will schedule.
 */
static bool sroce_engine_responder(struct sroce_qp *qp, int *budget)
{
	/* at most half for requests: a flood of them must not starve the
	 * READ responses (nor the other way round)
	 */
	int intake = *budget / 2, before;
	bool peeked = false, waiting;
	struct sk_buff *skb;

	while (*budget > 0 && qp->state != IB_QPS_ERR) {
		waiting = false;
		while (intake > 0 && *budget > 0 && qp->state != IB_QPS_ERR &&
		       (skb = sroce_rxq_next(&qp->req_rxq))) {
			before = *budget;
			if (!sroce_engine_rx(qp, skb, true, false, budget)) {
				skb_queue_head(&qp->req_rxq, skb);
				if (!peeked && skb_queue_len(&qp->req_rxq) > 1) {
					peeked = true;
					sroce_engine_rx_dups(qp, budget);
				}
				waiting = true;
				break;
			}
			intake -= before - *budget;
		}
		if (!sroce_resp_busy(qp) || *budget <= 0 ||
		    qp->state == IB_QPS_ERR)
			break;
		if (!sroce_resp_read_run(qp, budget))
			/* no skb room (the destructor requeues us) or memory */
			return !READ_ONCE(qp->tx_stalled);
		if (sroce_resp_busy(qp) && *budget > 0)
			return true;	/* stopped on memory: next pass */
		if (!waiting)
			break;
	}
	if (qp->state == IB_QPS_ERR || READ_ONCE(qp->tx_stalled))
		return false;
	/* stopped on a share with work left: nothing else will queue us */
	return (!intake && !skb_queue_empty(&qp->req_rxq)) ||
	       (*budget <= 0 && (!skb_queue_empty(&qp->req_rxq) ||
				 sroce_resp_busy(qp)));
}

#define SROCE_RQ_WATCH_MIN	msecs_to_jiffies(4)
#define SROCE_RQ_WATCH_MAX	HZ

/*
 * A user QP's own receive queue in ERR.  librxe posts receives with no
 * system call, so a receive posted after the QP failed reaches the
 * kernel by no event, yet must complete with a flush error (C10-42): the
 * RNR timer, idle in ERR, looks at the ring now and then instead.  A
 * drain comes soon after the failure: for a second the watch looks every
 * SROCE_RQ_WATCH_MIN while receives come, then backs off to once a
 * second; each look flushes one budget's worth, so a process that keeps
 * moving its producer index costs the kernel little that it does not pay
 * for in a system call.
 */
static bool sroce_rq_watched(const struct sroce_qp *qp)
{
	return qp->user && !qp->srq && !qp->dying;
}

/* Error state: drop what arrives, flush both queues.  Returns "more". */
static bool sroce_engine_flush(struct sroce_qp *qp)
{
	bool more, watch;

	sroce_rxq_drop(qp);
	sroce_timer_delete(&qp->retrans_timer);
	sroce_timer_delete(&qp->rnr_timer);
	qp->resp.rd_cur = NULL;
	clear_bit(SROCE_QPEV_FLUSH, &qp->events);
	watch = test_and_clear_bit(SROCE_QPEV_RQ_WATCH, &qp->events);
	more = sroce_comp_flush_sq(qp);
	/* a look of the watch flushes one budget; the next look the rest */
	more |= sroce_qp_flush_rq(qp) && !watch;
	if (sroce_rq_watched(qp)) {
		if (!qp->rq_watch) {
			qp->err_since = jiffies;
			WRITE_ONCE(qp->rq_watch, SROCE_RQ_WATCH_MIN);
		}
		mod_timer(&qp->rnr_timer, jiffies + READ_ONCE(qp->rq_watch));
	}
	/*
	 * An SRQ consumer learns that no more receives will complete here:
	 * not before the WQE the responder held (ib_drain_qp() polls once
	 * more after the event, then frees what its WRs point to).
	 */
	if (qp->srq && !qp->last_wqe_sent && !qp->resp.have_rwqe) {
		qp->last_wqe_sent = true;
		qp->nt.last_wqe = true;
	}
	return more;
}

/*
 * Every WQE that was started has retired: the oldest left, if any, never
 * started.  Not sq->req: after a rewind it may rest on a WQE answered
 * since, with started ones after it still to be sent again.
 */
static bool sroce_sq_drained(struct sroce_qp *qp)
{
	struct sroce_sq *sq = &qp->sq;
	struct sroce_swqe *wqe = &sq->kwqe[sq->comp & (sq->slots - 1)];

	/* acquire: a kernel poster's WQE is visible once head shows it */
	return sq->comp == smp_load_acquire(&sq->head) ||
	       (!wqe->npkts && wqe->state != SROCE_WQE_DONE);
}

/* One bounded pass.  Returns true when work is left that nothing else
 * will schedule (budget exhausted).
 */
static bool sroce_engine_pass(struct sroce_qp *qp)
{
	/* each part has its own share: a busy one never starves the others */
	int budget = SROCE_ENGINE_BUDGET, rbudget, qbudget;
	bool more = false;
	struct sk_buff *skb;

	if (qp->dying) {
		sroce_rxq_purge(qp);
		return false;
	}
	switch (qp->state) {
	case IB_QPS_RESET:
	case IB_QPS_INIT:
		/* a QP before RTR accepts nothing */
		sroce_rxq_drop(qp);
		return false;
	case IB_QPS_ERR:
		return sroce_engine_flush(qp);
	default:
		break;
	}

	if (test_and_clear_bit(SROCE_QPEV_RNR, &qp->events))
		qp->req.rnr_wait = false;
	if (test_and_clear_bit(SROCE_QPEV_RETRANS, &qp->events))
		sroce_req_retrans_expired(qp);

	/* completer first: ACKs open the window and free send queue room */
	while (budget > 0 && qp->state != IB_QPS_ERR &&
	       (skb = sroce_rxq_next(&qp->resp_rxq)))
		sroce_engine_rx(qp, skb, false, false, &budget);

	if (budget <= 0)
		more |= !skb_queue_empty(&qp->resp_rxq);

	rbudget = SROCE_ENGINE_BUDGET;
	more |= sroce_engine_responder(qp, &rbudget);
	sroce_resp_ack_flush(qp);

	/*
	 * Retire first: a WQE failed by a NAK or the retry timer moves the QP
	 * to ERR before the requester could send the next WQE at its PSNs.
	 */
	sroce_comp_complete(qp);
	qbudget = SROCE_ENGINE_BUDGET;
	if (qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD)
		more |= sroce_req_run(qp, &qbudget);
	sroce_comp_complete(qp);
	sroce_req_wait_end(qp);
	if (qp->state == IB_QPS_SQE)
		more |= sroce_comp_flush_sq(qp);
	/* SQD: every message started before it has completed (C10-36) */
	if (qp->state == IB_QPS_SQD && qp->sq_draining) {
		sroce_req_probe(qp);	/* an unasked tail must not wait */
		if (sroce_sq_drained(qp)) {
			qp->sq_draining = false;
			qp->nt.sq_drained = qp->sqd_notify;
		}
	}

	if (qp->state == IB_QPS_ERR)
		return sroce_engine_flush(qp);
	return more;
}

/*
 * Take @qp's engine here, or leave the pass to whoever holds it: the KICK
 * bit is set before the try and tested by every holder after its unlock
 * (sroce_engine_run, sroce_qp_unlock), so one of the two always sees the
 * other and no pass is lost.  A busy engine then costs no worker wakeup.
 */
static bool sroce_engine_trylock(struct sroce_qp *qp)
{
	smp_mb__before_atomic();	/* what we posted, then the bit */
	set_bit(SROCE_QPEV_KICK, &qp->events);
	smp_mb__after_atomic();		/* pairs with the holder's smp_mb() */
	if (mutex_trylock(&qp->eng_lock))
		return true;
	sroce_qp_count(qp, SROCE_CNT_ENGINE_BUSY);
	return false;
}

/*
 * The holder's side of sroce_engine_trylock(), after its unlock: true if a
 * pass is owed and no one else holds the engine (who would check in turn).
 */
static bool sroce_engine_kicked(struct sroce_qp *qp)
{
	smp_mb();	/* the unlock before the test */
	if (!test_bit(SROCE_QPEV_KICK, &qp->events))
		return false;
	smp_rmb();	/* the bit, then the lock */
	return !mutex_is_locked(&qp->eng_lock);
}

/* Drop eng_lock held by a verb; a pass kicked meanwhile goes to the worker. */
void sroce_qp_unlock(struct sroce_qp *qp)
{
	mutex_unlock(&qp->eng_lock);
	if (sroce_engine_kicked(qp))
		sroce_qp_sched(qp);
}

/*
 * Passes with eng_lock held by the caller; it is dropped here.  A pass
 * that stopped on its budget, or a kick that landed during it (a doorbell,
 * a loopback sender), gets another one under the same hold, a bounded
 * number of times: a 64 KiB message is one pass's budget, and requeueing
 * the work after each cost a worker wakeup per message.  Returns the
 * loopback peer the passes handed packets to, with a reference, or NULL.
 * A pass still owed at the end is queued, or reported in @owed.
 */
struct sroce_qp *sroce_engine_run_owed(struct sroce_qp *qp, bool *owed)
{
	int passes = SROCE_KICK_PASSES;
	struct sroce_notify nt;
	struct sroce_qp *next;
	bool more;

	lockdep_assert_held(&qp->eng_lock);
	for (;;) {
		/* fully ordered: this pass sees what the kicker posted */
		test_and_clear_bit(SROCE_QPEV_KICK, &qp->events);
		qp->pass_rung = test_and_clear_bit(SROCE_QPEV_DOORBELL,
						   &qp->events);
		qp->in_pass = true;
		more = sroce_engine_pass(qp);
		qp->in_pass = false;
		if (--passes <= 0 ||
		    (!more && !test_bit(SROCE_QPEV_KICK, &qp->events)))
			break;
		/* a doorbell storm must not hog this CPU: passes are bounded */
		cond_resched();
	}
	next = qp->handoff;
	qp->handoff = NULL;
	WRITE_ONCE(qp->no_fetch, false);
	nt = qp->nt;
	memset(&qp->nt, 0, sizeof(qp->nt));
	mutex_unlock(&qp->eng_lock);

	sroce_raise(qp, &nt);
	more |= sroce_engine_kicked(qp);
	if (owed)
		*owed = more;	/* the caller comes back for it */
	else if (more && !sroce_sq_poll_take_pass(qp))
		sroce_qp_sched(qp);
	return next;
}

static struct sroce_qp *sroce_engine_run(struct sroce_qp *qp)
{
	return sroce_engine_run_owed(qp, NULL);
}

/*
 * May a user's syscall run @qp's pass?  Only a user QP of the caller's
 * own euid: a task that SCHED_IDLE or a cgroup quota slows down would
 * otherwise hold another owner's QP, and the verbs that wait for its
 * lock, with it, and charge that owner's work to itself.
 */
static bool sroce_syscall_may_run(const struct sroce_qp *qp)
{
	return qp->user && uid_eq(qp->owner, current_euid());
}

/*
 * Loopback: run the peer a pass sent to, then the peer that one sent to,
 * here and now, as the wire would have delivered them.  A request and its
 * response then cost no worker wakeup.  The chain is bounded; a peer that
 * is busy elsewhere, past the bound, or not ours to run from a syscall
 * (@syscall) is queued instead.  With @rest, the peer past the bound is
 * left there, with its reference, for the caller to run next.
 */
void sroce_engine_chain(struct sroce_qp *next, bool syscall,
			struct sroce_qp **rest)
{
	int hops = SROCE_HANDOFF_HOPS;

	while (next) {
		struct sroce_qp *qp = next;

		if (hops-- <= 0 && rest) {
			*rest = qp;
			return;
		}
		if (hops < 0 || (syscall && !sroce_syscall_may_run(qp))) {
			sroce_qp_sched(qp);
			sroce_qp_put(qp);
			return;
		}
		if (!sroce_engine_trylock(qp)) {
			sroce_qp_put(qp);
			return;
		}
		/*
		 * The owner of a user QP rings its own doorbell for what it
		 * posts, which runs its requester in parallel with this.
		 */
		WRITE_ONCE(qp->no_fetch, syscall && qp->user);
		next = sroce_engine_run(qp);
		sroce_qp_put(qp);
	}
}

static void sroce_engine_work(struct work_struct *work)
{
	struct sroce_qp *qp = container_of(work, struct sroce_qp, work);

	sroce_qp_count(qp, SROCE_CNT_WORKER_PASS);
	mutex_lock(&qp->eng_lock);
	sroce_engine_chain(sroce_engine_run(qp), false, NULL);
}

/*
 * A user doorbell (process context, no lock held): run one bounded pass
 * right here when no one else runs the engine, as a worker would; a
 * wakeup per post is most of a small message's latency.  Whoever holds
 * eng_lock runs the pass if we cannot, and fetches our WQEs (DOORBELL) --
 * except a loopback peer's syscall (no_fetch), which leaves them to us: we
 * wait for its bounded pass and send them here, in parallel, and the
 * peer's process gets back to its CQ sooner.
 */
void sroce_qp_kick(struct sroce_qp *qp)
{
	might_sleep();
	if (sroce_sq_poll_doorbell(qp))
		return;
	if (mutex_trylock(&qp->eng_lock))
		goto run;
	if (READ_ONCE(qp->no_fetch)) {
		sroce_qp_count(qp, SROCE_CNT_ENGINE_BUSY);
		mutex_lock(&qp->eng_lock);
		goto run;
	}
	/*
	 * The ring's producer index (stored by user space before this
	 * syscall), then DOORBELL, then (in the trylock) KICK: a pass that
	 * consumes either bit sees the WQEs.
	 */
	smp_mb__before_atomic();
	set_bit(SROCE_QPEV_DOORBELL, &qp->events);
	if (!sroce_engine_trylock(qp))
		return;
run:
	sroce_engine_chain(sroce_engine_run(qp), true, NULL);
}

void sroce_retrans_timer_fn(struct timer_list *t)
{
	struct sroce_qp *qp = sroce_from_timer(qp, t, retrans_timer);

	set_bit(SROCE_QPEV_RETRANS, &qp->events);
	sroce_qp_sched(qp);
}

void sroce_rnr_timer_fn(struct timer_list *t)
{
	struct sroce_qp *qp = sroce_from_timer(qp, t, rnr_timer);
	unsigned long next;

	if (READ_ONCE(qp->state) == IB_QPS_ERR && sroce_rq_watched(qp)) {
		next = clamp_t(unsigned long, 2 * READ_ONCE(qp->rq_watch),
			       SROCE_RQ_WATCH_MIN, SROCE_RQ_WATCH_MAX);
		/* the consumer index is ours, the producer index the user's */
		if (sroce_rq_user_empty(&qp->rq)) {
			WRITE_ONCE(qp->rq_watch, next);
			mod_timer(&qp->rnr_timer, jiffies + next);
			return;
		}
		if (time_before(jiffies, qp->err_since + HZ))
			next = SROCE_RQ_WATCH_MIN;
		WRITE_ONCE(qp->rq_watch, next);
		set_bit(SROCE_QPEV_RQ_WATCH, &qp->events);
		sroce_qp_sched(qp);	/* the pass flushes and re-arms */
		return;
	}
	set_bit(SROCE_QPEV_RNR, &qp->events);
	sroce_qp_sched(qp);
}

void sroce_qp_engine_init(struct sroce_qp *qp)
{
	static atomic_t next_cpu = ATOMIC_INIT(0);

	mutex_init(&qp->eng_lock);
	INIT_WORK(&qp->work, sroce_engine_work);
	skb_queue_head_init(&qp->req_rxq);
	skb_queue_head_init(&qp->resp_rxq);
	atomic_set(&qp->skb_out, 0);
	atomic_set(&qp->zc_out, 0);
	qp->zc_wait = false;
	INIT_LIST_HEAD(&qp->stall_node);
	init_waitqueue_head(&qp->skb_wait);
	timer_setup(&qp->retrans_timer, sroce_retrans_timer_fn, 0);
	timer_setup(&qp->rnr_timer, sroce_rnr_timer_fn, 0);
	sroce_sq_poll_init(qp);
	INIT_LIST_HEAD(&qp->cq_wait[0].node);
	INIT_LIST_HEAD(&qp->cq_wait[1].node);
	qp->cq_wait[0].qp = qp;
	qp->cq_wait[1].qp = qp;
	/* spread QPs over the CPUs; a QP's engine then stays on its CPU */
	qp->cpu = cpumask_local_spread(atomic_inc_return(&next_cpu) %
				       num_online_cpus(), NUMA_NO_NODE);
}

/*
 * Init -> RTR: what arrived before RTR is not to be taken (a QP in Init
 * drops everything), even if no pass ran to drop it meanwhile.
 */
void sroce_qp_rtr_engine(struct sroce_qp *qp)
{
	sroce_assert_engine(qp);
	sroce_rxq_drop(qp);
}

/* RESET: the engine's state starts over.  Caller holds eng_lock. */
void sroce_qp_reset_engine(struct sroce_qp *qp)
{
	sroce_assert_engine(qp);
	sroce_timer_delete(&qp->retrans_timer);
	/* sync: in ERR the RQ watch re-arms itself (its callback never locks) */
	sroce_timer_delete_sync(&qp->rnr_timer);
	sroce_rxq_purge(qp);
	/* the WQEs go without completions: no peer may still read their pages */
	sroce_qp_zc_drain(qp);
	/* atomic: doorbells set bits without the lock */
	xchg(&qp->events, 0);
	/* a flush waiting for CQ room: there is none to do any more */
	WARN_ON_ONCE(qp->cq_reserved[0] || qp->cq_reserved[1]);
	sroce_cq_unwait(qp->scq, &qp->cq_wait[0]);
	sroce_cq_unwait(qp->rcq, &qp->cq_wait[1]);
	/* what a loopback peer queued meanwhile: its KICK went with the bits */
	sroce_rxq_purge(qp);
	qp->sq_fetch_owed = false;
	qp->last_wqe_sent = false;
	WRITE_ONCE(qp->rq_watch, 0);
	memset(&qp->req, 0, sizeof(qp->req));
	memset(&qp->comp, 0, sizeof(qp->comp));
	sroce_resp_reset(qp);
}

/*
 * Destroy: no packet, timer or skb destructor may reach the QP after
 * this returns.  Caller has unpublished the QP (xa_erase) and waited for
 * its lookup references.
 */
void sroce_qp_engine_stop(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = qp->sdev;
	unsigned long flags;

	sroce_sq_poll_stop(qp);	/* it may queue the work */
	/* so may a poll of a CQ whose room a flush waited for (dying: no more) */
	sroce_cq_unwait(qp->scq, &qp->cq_wait[0]);
	sroce_cq_unwait(qp->rcq, &qp->cq_wait[1]);
	sroce_timer_delete_sync(&qp->retrans_timer);
	sroce_timer_delete_sync(&qp->rnr_timer);
	cancel_work_sync(&qp->work);
	sroce_rxq_purge(qp);

	/* our skbs may sit in a qdisc or in a peer's receive queue */
	while (!wait_event_timeout(qp->skb_wait, !atomic_read(&qp->skb_out),
				   10 * HZ))
		pr_warn_ratelimited("sroce: QP %u waits for %d transmitted packets to be freed\n",
				    qp->qpn, atomic_read(&qp->skb_out));
	sroce_qp_zc_drain(qp);
	spin_lock_irqsave(&sdev->stall_lock, flags);
	list_del_init(&qp->stall_node);
	spin_unlock_irqrestore(&sdev->stall_lock, flags);
	/* destructors and lookups run under RCU: let them finish */
	synchronize_rcu();
	sroce_timer_delete_sync(&qp->retrans_timer);
	sroce_timer_delete_sync(&qp->rnr_timer);
	cancel_work_sync(&qp->work);
	sroce_rxq_purge(qp);
}
