// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Counters: the link's (`rdma statistic show link`) and those of the
 * rdma_counters that QPs are bound to (`rdma statistic qp`).  A bound QP
 * counts into its counter's set only, and the core adds every counter's
 * counts, and those of counters gone, to the link's: nothing is counted
 * twice or lost.
 */
#include <linux/percpu.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_counter.h>

#include "sroce/sroce.h"

static const struct rdma_stat_desc sroce_counter_desc[SROCE_NUM_COUNTERS] = {
	[SROCE_CNT_TX_PKTS].name = "sent_pkts",
	[SROCE_CNT_RX_PKTS].name = "rcvd_pkts",
	[SROCE_CNT_RX_DROP_MALFORMED].name = "rcvd_malformed",
	[SROCE_CNT_RX_DROP_ICRC].name = "rcvd_icrc_err",
	[SROCE_CNT_RX_DROP_NO_QP].name = "rcvd_no_qp",
	[SROCE_CNT_RX_DROP_QP_STATE].name = "rcvd_qp_state_drop",
	[SROCE_CNT_RX_DROP_PKEY].name = "rcvd_pkey_mismatch",
	[SROCE_CNT_RX_DROP_OPCODE].name = "rcvd_bad_opcode",
	[SROCE_CNT_RX_DUP_REQ].name = "duplicate_request",
	[SROCE_CNT_RX_OOS_REQ].name = "out_of_seq_request",
	[SROCE_CNT_RX_OOS_RESP].name = "out_of_seq_response",
	[SROCE_CNT_TX_NAK_SEQ].name = "send_nak_seq_err",
	[SROCE_CNT_TX_RNR_NAK].name = "send_rnr_nak",
	[SROCE_CNT_TX_NAK_OTHER].name = "send_nak_other",
	[SROCE_CNT_RETRANS_TIMEOUT].name = "retry_timeout",
	[SROCE_CNT_RETRANS_NAK].name = "retry_nak",
	[SROCE_CNT_RNR_RETRY].name = "rnr_retry",
	[SROCE_CNT_CQ_OVERFLOW].name = "cq_overflow",
	[SROCE_CNT_LOOPBACK].name = "loopback_pkts",
	[SROCE_CNT_TX_ERR].name = "send_err",
	[SROCE_CNT_RX_DROP_QKEY].name = "rcvd_qkey_mismatch",
	[SROCE_CNT_RX_DROP_NO_RWQE].name = "rcvd_no_recv_wqe",
	[SROCE_CNT_RX_DROP_PEER].name = "rcvd_not_from_peer",
	[SROCE_CNT_RX_DROP_BACKLOG].name = "rcvd_backlog_drop",
	[SROCE_CNT_RX_STALE_ACK].name = "rcvd_stale_ack",
	[SROCE_CNT_TX_STALL].name = "send_stall",
	[SROCE_CNT_TX_READ_RESP_START].name = "read_resp_start",
	[SROCE_CNT_RX_READ_AHEAD].name = "rcvd_read_ahead",
	[SROCE_CNT_RX_DROP_LENGTH].name = "rcvd_ud_too_long",
	[SROCE_CNT_RX_DROP_UC_MSG].name = "rcvd_uc_msg_drop",
	[SROCE_CNT_ENGINE_BUSY].name = "engine_busy",
	[SROCE_CNT_WORKER_PASS].name = "worker_passes",
	[SROCE_CNT_LOOPBACK_ZCOPY].name = "loopback_zcopy_pkts",
	[SROCE_CNT_ACKREQ_PROBE].name = "ackreq_probes",
	[SROCE_CNT_LOOPBACK_TRAIN].name = "loopback_trains",
	[SROCE_CNT_SQ_POLL_START].name = "sq_poll_starts",
	[SROCE_CNT_SQ_POLL_DOORBELL].name = "sq_poll_doorbells",
	[SROCE_CNT_SQ_POLL_BACKOFF].name = "sq_poll_backoffs",
	[SROCE_CNT_RX_READ_LATER].name = "rcvd_read_later",
	[SROCE_CNT_SQ_POLL_CHAINED].name = "sq_poll_chained",
	[SROCE_CNT_FLUSH_WAIT].name = "flush_cq_wait",
	[SROCE_CNT_RX_DROP_LOCAL].name = "rcvd_local_drop",
};

/*
 * The core reads a counter's values outside its lock (to keep them when
 * the counter goes): store each total once, never a partial sum.
 */
static void sroce_stats_sum(const struct sroce_counter_set *cs,
			    struct rdma_hw_stats *stats)
{
	int cpu, i;

	for (i = 0; i < SROCE_NUM_COUNTERS; i++) {
		u64 sum = 0;

		for_each_possible_cpu(cpu)
			sum += READ_ONCE(per_cpu_ptr(cs->pc, cpu)->v[i]);
		WRITE_ONCE(stats->value[i], sum);
	}
}

static struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
							u32 port)
{
	return rdma_alloc_hw_stats_struct(sroce_counter_desc,
					  SROCE_NUM_COUNTERS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int sroce_get_hw_stats(struct ib_device *ibdev,
			      struct rdma_hw_stats *stats, u32 port, int index)
{
	sroce_stats_sum(&to_sdev(ibdev)->cnt, stats);
	return SROCE_NUM_COUNTERS;
}

static struct rdma_hw_stats *sroce_counter_alloc_stats(struct rdma_counter *counter)
{
	return sroce_alloc_hw_port_stats(counter->device, counter->port);
}

/*
 * Under counter->lock.  The counter's first QP gives it an id (the core
 * files it under that) and its set.  The core checks qp->counter without
 * a lock that covers two counters: claim the QP here.  Sets are charged
 * to the user whose QP made them (auto mode binds in modify_qp).
 */
static int sroce_counter_bind_qp(struct rdma_counter *counter,
				 struct ib_qp *ibqp)
{
	struct sroce_dev *sdev = to_sdev(counter->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_counter_set *cs;
	u32 id;
	int err;

	if (cmpxchg(&ibqp->counter, NULL, counter))
		return -EBUSY;
	if (!counter->id) {
		err = -ENOMEM;
		cs = kzalloc(sizeof(*cs), GFP_KERNEL_ACCOUNT);
		if (!cs)
			goto out_unclaim;
		cs->pc = alloc_percpu_gfp(struct sroce_counters, GFP_KERNEL_ACCOUNT);
		if (cs->pc)
			err = xa_alloc(&sdev->counter_xa, &id, cs, xa_limit_31b,
				       GFP_KERNEL);
		if (err) {
			free_percpu(cs->pc);
			kfree(cs);
			goto out_unclaim;
		}
		counter->id = id;
	}
	err = -EINVAL;
	cs = xa_load(&sdev->counter_xa, counter->id);
	if (WARN_ON_ONCE(!cs))
		goto out_unclaim;
	rcu_assign_pointer(qp->cnt, cs);
	return 0;

out_unclaim:
	WRITE_ONCE(ibqp->counter, NULL);
	return err;
}

static int sroce_counter_unbind_qp(struct ib_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	rcu_assign_pointer(qp->cnt, &qp->sdev->cnt);
	/*
	 * No count lands in the counter's set after this, so the totals the
	 * core keeps when the counter goes are final, and the set may go.
	 */
	synchronize_rcu();
	ibqp->counter = NULL;
	return 0;
}

static int sroce_counter_update_stats(struct rdma_counter *counter)
{
	struct sroce_dev *sdev = to_sdev(counter->device);
	struct sroce_counter_set *cs = xa_load(&sdev->counter_xa, counter->id);

	if (!cs)
		return -EINVAL;
	sroce_stats_sum(cs, counter->stats);
	return 0;
}

/* Every QP is unbound by now (the core holds a reference per QP). */
static int sroce_counter_dealloc(struct rdma_counter *counter)
{
	struct sroce_dev *sdev = to_sdev(counter->device);
	struct sroce_counter_set *cs;

	if (!counter->id)
		return 0;
	cs = xa_erase(&sdev->counter_xa, counter->id);
	if (cs) {
		free_percpu(cs->pc);
		kfree(cs);
	}
	return 0;
}

const struct ib_device_ops sroce_stats_ops = {
	.alloc_hw_port_stats = sroce_alloc_hw_port_stats,
	.get_hw_stats = sroce_get_hw_stats,
	.counter_alloc_stats = sroce_counter_alloc_stats,
	.counter_bind_qp = sroce_counter_bind_qp,
	.counter_unbind_qp = sroce_counter_unbind_qp,
	.counter_update_stats = sroce_counter_update_stats,
	.counter_dealloc = sroce_counter_dealloc,
};

int sroce_stats_init(struct sroce_dev *sdev)
{
	sdev->cnt.pc = alloc_percpu(struct sroce_counters);
	if (!sdev->cnt.pc)
		return -ENOMEM;
	xa_init_flags(&sdev->counter_xa, XA_FLAGS_ALLOC1);
	return 0;
}

void sroce_stats_fini(struct sroce_dev *sdev)
{
	WARN_ON(!xa_empty(&sdev->counter_xa));
	xa_destroy(&sdev->counter_xa);
	free_percpu(sdev->cnt.pc);
}
