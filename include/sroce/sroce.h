/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce: software RoCEv2 HCA.  Objects shared by the verbs layer, the
 * transport engines and the network glue.
 */
#ifndef SROCE_H
#define SROCE_H

#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/sizes.h>
#include <linux/xarray.h>
#include <linux/interrupt.h>
#include <linux/refcount.h>
#include <linux/completion.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_umem.h>
#include <net/dst_cache.h>

#include "sroce/compat.h"
#include "sroce/wire/hdr.h"
#include "sroce/wire/opcode.h"
#include "sroce/wire/psn.h"
#include "uapi/rdma/sroce-abi.h"

#define SROCE_DRV_NAME		"sroce"

/* Device limits: what query_device reports and every verb enforces. */
#define SROCE_MAX_QP		0x10000
#define SROCE_MAX_QP_WR		0x4000
#define SROCE_MAX_SGE		32
#define SROCE_MAX_INLINE	512
#define SROCE_MAX_CQ		0x10000
#define SROCE_MAX_CQE		0x8000
#define SROCE_MAX_MR		0x10000
#define SROCE_MAX_MW		0x10000
#define SROCE_MW_INDEX_BASE	0x800000	/* key >> 8 at or above: a memory window */
#define SROCE_MAX_PD		0x10000
#define SROCE_MAX_AH		0x10000
#define SROCE_MAX_RD_ATOMIC	128
#define SROCE_MAX_SRQ		0x4000
#define SROCE_MAX_MCAST_GRP	8192
#define SROCE_MAX_MCAST_QP_ATTACH 16
#define SROCE_MCG_HASH_SIZE	256	/* buckets; a power of 2 */
#define SROCE_MCAST_QPN		0xffffff
#define SROCE_MAX_SRQ_WR	0x4000
#define SROCE_MAX_MR_SIZE	(1ULL << 40)
#define SROCE_MAX_FAST_REG_PAGES 512	/* page list of one fast-reg MR */
#define SROCE_PAGE_SIZE_CAP	(~(SZ_4K - 1) & 0xffffffffULL)	/* 4 KiB..2 GiB */
#define SROCE_GID_TBL_LEN	1024
#define SROCE_PKEY_DEFAULT	0xffff
#define SROCE_FIRST_QPN		16
#define SROCE_GSI_QPN		1
#define SROCE_MAX_UNACKED_PSNS	256
#define SROCE_READ_OOO_WINDOW	256	/* READ responses placed past a gap */
#define SROCE_ZCOPY_MIN		512	/* smaller payloads: a copy is cheaper than references */
#define SROCE_TRAIN_PKTS	16	/* loopback: packets one skb may carry ... */
#define SROCE_TRAIN_BYTES	SZ_16K	/* ... and their payload */
#define SROCE_ACKREQ_EVERY	16	/* request an ACK at least this often */
#define SROCE_CWND_MIN		16	/* window right after a go-back */
#define SROCE_ENGINE_BUDGET	64	/* packets handled per engine pass */
#define SROCE_HANDOFF_HOPS	4	/* loopback peers one context runs in turn */
#define SROCE_KICK_PASSES	4	/* passes one lock hold runs for kicks */
#define SROCE_FLUSH_BUDGET	256	/* WQEs flushed per engine pass */
#define SROCE_FETCH_BUDGET	64	/* user WQEs copied per engine pass */
/* a QP queues this much payload at its path MTU before it drops ... */
#define SROCE_RXQ_BYTES		(2 << 20)
#define SROCE_RXQ_MIN		512	/* ... but at least this many packets */
#define SROCE_RXQ_MAX		2048	/* ... and at most this many (MTU 1024) */
#define SROCE_DUP_PEEK		32	/* requests looked at past a waiting one */
#define SROCE_QP_SKB_MAX	256	/* transmitted, not yet freed, per QP */
#define SROCE_DEV_SKB_MAX	4096	/* the same, per device */
#define SROCE_MIN_RETRANS_MS	100	/* TCG guests are slow: floor for the ACK timer */
#define SROCE_ALIVE_MAX_MS	30000	/* responses without progress hold the ACK timer off this long */
#define SROCE_ALIVE_PSNS	0x10000	/* ... if at most this far behind the oldest unacked PSN */

/* Drop/packet counters, exported through rdma statistics. */
enum sroce_counter {
	SROCE_CNT_TX_PKTS,
	SROCE_CNT_RX_PKTS,
	SROCE_CNT_RX_DROP_MALFORMED,
	SROCE_CNT_RX_DROP_ICRC,
	SROCE_CNT_RX_DROP_NO_QP,
	SROCE_CNT_RX_DROP_QP_STATE,
	SROCE_CNT_RX_DROP_PKEY,
	SROCE_CNT_RX_DROP_OPCODE,
	SROCE_CNT_RX_DUP_REQ,
	SROCE_CNT_RX_OOS_REQ,
	SROCE_CNT_RX_OOS_RESP,
	SROCE_CNT_TX_NAK_SEQ,
	SROCE_CNT_TX_RNR_NAK,
	SROCE_CNT_TX_NAK_OTHER,
	SROCE_CNT_RETRANS_TIMEOUT,
	SROCE_CNT_RETRANS_NAK,
	SROCE_CNT_RNR_RETRY,
	SROCE_CNT_CQ_OVERFLOW,
	SROCE_CNT_LOOPBACK,
	SROCE_CNT_TX_ERR,
	SROCE_CNT_RX_DROP_QKEY,
	SROCE_CNT_RX_DROP_NO_RWQE,
	SROCE_CNT_RX_DROP_PEER,
	SROCE_CNT_RX_DROP_BACKLOG,
	SROCE_CNT_RX_STALE_ACK,
	SROCE_CNT_TX_STALL,
	SROCE_CNT_TX_READ_RESP_START,
	SROCE_CNT_RX_READ_AHEAD,
	SROCE_CNT_RX_DROP_LENGTH,
	SROCE_CNT_RX_DROP_UC_MSG,
	SROCE_CNT_ENGINE_BUSY,
	SROCE_CNT_WORKER_PASS,
	SROCE_CNT_LOOPBACK_ZCOPY,
	SROCE_CNT_ACKREQ_PROBE,
	SROCE_CNT_LOOPBACK_TRAIN,
	SROCE_CNT_SQ_POLL_START,
	SROCE_CNT_SQ_POLL_DOORBELL,
	SROCE_CNT_SQ_POLL_BACKOFF,
	SROCE_CNT_RX_READ_LATER,
	SROCE_CNT_SQ_POLL_CHAINED,
	SROCE_CNT_FLUSH_WAIT,
	SROCE_CNT_RX_DROP_LOCAL,
	SROCE_NUM_COUNTERS,
};

struct sroce_counters {
	u64			v[SROCE_NUM_COUNTERS];
};

/*
 * Where counts go: the device's set, or the set of the rdma_counter a QP
 * is bound to (`rdma statistic qp`), whose counts the core adds to the
 * link's.  Per CPU: a packet counted on two CPUs must not bounce a line.
 */
struct sroce_counter_set {
	struct sroce_counters __percpu *pc;
};

struct sroce_dev {
	struct ib_device	ib_dev;
	struct net_device	*ndev;		/* bound netdev; a reference is held */
	struct net		*net;		/* ndev's namespace when added */
	bool			registered;	/* rtnl: the notifier unregisters */
	bool			unreg_seen;	/* rtnl: ndev left while registering */
	struct list_head	list;		/* sroce_devs, RCU */

	struct xarray		qp_xa;		/* qpn -> qp */
	u32			qp_next;
	atomic64_t		qp_serial;	/* sroce_qp.serial */
	struct xarray		mr_xa;		/* key >> 8 -> mr */
	u32			mr_next;
	struct xarray		mw_xa;		/* key >> 8 -> mw */
	u32			mw_next;
	struct xarray		ah_xa;		/* ah_num -> ah */
	u32			ah_next;

	atomic_t		n_pd, n_cq, n_qp, n_mr, n_mw, n_ah, n_srq;
	atomic_t		srq_next;
	enum ib_port_state	port_state;
	enum ib_mtu		port_mtu;	/* active MTU derived from netdev */

	/* multicast groups: the mutex orders attach/detach (which sleep in
	 * dev_mc_add), the spinlock guards the hash against the receive path
	 */
	struct mutex		mcast_mutex;
	spinlock_t		mcast_lock;
	struct hlist_head	mcg_hash[SROCE_MCG_HASH_SIZE];
	u32			mcg_seed;	/* of the hash, random */
	u32			n_mcg;

	atomic_t		skb_out;	/* transmitted, not yet freed */
	spinlock_t		stall_lock;
	struct list_head	stalled;	/* QPs waiting for skb_out to drop */

	struct sroce_counter_set cnt;		/* what no bound QP counted */
	struct xarray		counter_xa;	/* rdma_counter id -> set */
};

static inline struct sroce_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sroce_dev, ib_dev);
}

static inline void sroce_count(struct sroce_dev *sdev, enum sroce_counter c)
{
	this_cpu_inc(sdev->cnt.pc->v[c]);
}

static inline void sroce_count_n(struct sroce_dev *sdev, enum sroce_counter c,
				 u32 n)
{
	this_cpu_add(sdev->cnt.pc->v[c], n);
}

struct sroce_ucontext {
	struct ib_ucontext	ibuc;
};

struct sroce_pd {
	struct ib_pd		ibpd;
};

static inline struct sroce_pd *to_spd(struct ib_pd *pd)
{
	return container_of(pd, struct sroce_pd, ibpd);
}

/* Resolved address vector: enough to build IP/UDP headers. */
struct sroce_av {
	u8			net_type;	/* SROCE_NET_TYPE_IPV4/6 */
	u8			hop_limit;
	u8			traffic_class;
	u32			flow_label;
	u8			sgid_index;
	union ib_gid		dgid;
	union ib_gid		sgid;
	union {
		struct in_addr	v4;
		struct in6_addr	v6;
	} saddr, daddr;
};

/* What a user UD WQE's ah_num resolves to; freed after an RCU grace period. */
struct sroce_ah_entry {
	struct rcu_head		rcu;
	struct ib_pd		*pd;
	struct sroce_av		av;
};

struct sroce_ah {
	struct ib_ah		ibah;
	u32			ah_num;
	struct sroce_ah_entry	*ent;
};

static inline struct sroce_ah *to_sah(struct ib_ah *ah)
{
	return container_of(ah, struct sroce_ah, ibah);
}

/*
 * A queue that may be shared with user space.  The kernel owns one index
 * (kept here, in kernel memory); it only ever reads the other, masks it and
 * bounds it.
 */
struct sroce_queue {
	struct sroce_abi_queue_buf *buf;	/* vmalloc_user memory */
	size_t			buf_size;
	u32			slots;		/* power of two */
	u32			mask;
	u32			log2_elem;
	u32			elem_size;
	struct rdma_user_mmap_entry *mmap;	/* non-NULL when user mapped */
};

static inline void *sroce_queue_slot(struct sroce_queue *q, u32 idx)
{
	return q->buf->data + ((size_t)(idx & q->mask) << q->log2_elem);
}

struct sroce_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	void			*vaddr;
};

/* Completion queue. */
struct sroce_cq {
	struct ib_cq		ibcq;
	struct sroce_queue	q;		/* ib_uverbs_wc (user) or ib_wc (kernel) */
	spinlock_t		lock;
	struct mutex		resize_mutex;	/* one resize at a time */
	u32			prod;		/* kernel-owned producer */
	u32			cons;		/* kernel CQs only */
	u8			notify;		/* 0, IB_CQ_NEXT_COMP or IB_CQ_SOLICITED */
	bool			user;
	bool			overflow;
	/* kernel CQs: slots promised to flushes, and QPs waiting for room */
	u32			reserved;
	struct list_head	waiters;	/* struct sroce_cq_wait, under lock */
};

/* A kernel QP in Error whose flush waits for room in a CQ (sroce_cq_reserve) */
struct sroce_cq_wait {
	struct list_head	node;
	struct sroce_qp		*qp;
};

static inline struct sroce_cq *to_scq(struct ib_cq *cq)
{
	return container_of(cq, struct sroce_cq, ibcq);
}

/* Memory region: a page list of kernel virtual addresses. */
enum sroce_mr_kind {
	SROCE_MR_DMA,		/* all of kernel memory, iova == kva */
	SROCE_MR_USER,		/* pinned user pages */
	SROCE_MR_FAST,		/* filled by map_mr_sg */
};

/*
 * Key states (IBA 10.6.3.7, 10.6.5): only a VALID key reaches memory.  A
 * fast-registration MR starts FREE; REG_MR takes it FREE -> BUSY -> VALID,
 * invalidation VALID -> FREE.
 */
enum sroce_mr_state {
	SROCE_MR_FREE,
	SROCE_MR_VALID,
	SROCE_MR_BUSY,
};

/* What map_mr_sg prepared for the next REG_MR of a fast-registration MR. */
struct sroce_mr_map {
	u32			page_shift;
	u32			offset;		/* of iova within the first page */
	u32			npages;
	void			*pages[];	/* kva of each page, max_pages */
};

struct sroce_mr {
	struct ib_mr		ibmr;
	struct sroce_dev	*sdev;
	enum sroce_mr_kind	kind;
	refcount_t		ref;
	struct completion	done;
	u8			state;		/* enum sroce_mr_state */
	/* the key packets and WQEs must name; ibmr's keys belong to the consumer */
	u32			key;
	spinlock_t		lock;		/* fast reg: key + state changes; n_mw, dead */
	atomic_t		active;		/* fast reg, MW_BIND: accesses under way */
	u32			n_mw;		/* windows bound to it */
	bool			dead;		/* deregistering: no new binds */
	u32			access;
	u64			iova;
	u64			length;
	u32			page_shift;
	u32			offset;		/* of iova within the first page */
	u32			npages;
	u32			max_pages;
	void			**pages;	/* kva of each page */
	struct sroce_mr_map	*map;		/* fast registration only */
	struct ib_umem		*umem;
	struct rcu_head		rcu;	/* packets look MRs up under RCU */
};

static inline struct sroce_mr *to_smr(struct ib_mr *mr)
{
	return container_of(mr, struct sroce_mr, ibmr);
}

/* Keys of windows and regions share one 24-bit index space (10.6.7.2). */
static inline bool sroce_key_is_mw(u32 key)
{
	return (key >> 8) >= SROCE_MW_INDEX_BASE;
}

/*
 * Memory window (10.6.7.2).  Type 1 is always VALID, bound or not (mr
 * NULL); type 2B is FREE, or VALID bound to the QP qpn.  Packets look it
 * up under RCU and use it only under lock.
 */
struct sroce_mw {
	struct ib_mw		ibmw;
	spinlock_t		lock;		/* everything below */
	u8			state;		/* SROCE_MR_FREE or SROCE_MR_VALID */
	u32			key;
	struct sroce_mr		*mr;		/* bound region, a reference held */
	u32			access;
	u64			va;
	u64			length;
	u64			qp_serial;	/* type 2B: the QP it is bound to */
	atomic_t		active;		/* remote accesses under way */
	atomic_t		hold;		/* unbinds waiting on active */
};

static inline struct sroce_mw *to_smw(struct ib_mw *mw)
{
	return container_of(mw, struct sroce_mw, ibmw);
}

struct sroce_sge {
	u64	addr;
	u32	length;
	u32	lkey;
};

/* Work requests the requester executes itself: no packets, no PSNs. */
static inline bool sroce_wr_is_local(u32 opcode)
{
	return opcode == IB_WR_REG_MR || opcode == IB_WR_LOCAL_INV ||
	       opcode == IB_WR_BIND_MW;
}

/* Kernel copy of a send WQE: validated once, never re-read from user memory. */
enum sroce_wqe_state {
	SROCE_WQE_PENDING,	/* not fully transmitted */
	SROCE_WQE_SENT,		/* all packets out, waiting for ACK/response */
	SROCE_WQE_DONE,		/* acknowledged (or failed), ready to complete */
};

struct sroce_swqe {
	u64	wr_id;
	u32	opcode;		/* IB_WR_* */
	u32	send_flags;
	u32	imm_data;	/* network order, as carried in ImmDt */
	u32	inv_rkey;	/* SEND_WITH_INV, LOCAL_INV */
	/* REG_MR: the MR's index, new key and access, iova and length at post */
	u32	reg_key;
	u32	reg_access;
	u64	reg_iova;
	u64	reg_length;
	/* BIND_MW (user QPs only): as librxe wrote them */
	u32	bind_mw_key;	/* the window's current R_Key */
	u32	bind_new_key;	/* its R_Key once bound */
	u32	bind_mr_lkey;
	u32	bind_access;
	u64	bind_va;
	u64	bind_length;
	u64	remote_addr;
	u32	rkey;
	u64	compare_add;
	u64	swap;
	/* FLUSH: the remote range's length, placement type, selectivity level */
	u32	flush_len;
	u8	flush_type;
	u8	flush_level;
	u32	remote_qpn;
	u32	remote_qkey;
	struct sroce_av av;	/* UD: resolved at post/fetch time */
	u32	length;
	u32	num_sge;

	/* transport state */
	u8	state;
	u8	status;		/* enum ib_wc_status */
	bool	is_inline;
	u32	first_psn;
	u32	last_psn;
	u32	npkts;
	u32	sent;		/* bytes segmented so far */
	u32	cur_sge;
	u32	sge_off;
	u32	rcvd;		/* read response bytes placed */
	bool	rd_counted;	/* holds one of max_rd_atomic's slots */
	bool	no_train;	/* its payload does not go by reference in trains */
	union {
		struct sroce_sge sge[SROCE_MAX_SGE];
		u8	inline_data[SROCE_MAX_INLINE];
	};
};

struct sroce_rwqe {
	u64	wr_id;
	u32	num_sge;
	u32	length;
	struct sroce_sge sge[SROCE_MAX_SGE];
};

struct sroce_sq {
	struct sroce_queue	q;		/* user QPs: the ring librxe fills */
	struct sroce_swqe	*kwqe;		/* kernel copies, slots entries */
	u32			slots;		/* power of two */
	u32			max_wr;
	u32			max_sge;
	u32			max_inline;
	/* free-running counters; slot = counter & (slots - 1) */
	u32			head;		/* kernel posts / user ring fetched up to here */
	u32			req;		/* next WQE the requester works on */
	u32			comp;		/* oldest WQE not yet completed */
	spinlock_t		lock;		/* kernel posters against each other */
};

struct sroce_rq {
	struct sroce_queue	q;		/* user QPs */
	struct sroce_rwqe	*krwqe;		/* kernel QPs */
	u32			slots;
	u32			max_wr;
	u32			max_sge;
	u32			prod;		/* kernel QPs: producer */
	u32			cons;		/* kernel-owned consumer */
	spinlock_t		lock;		/* engine (consumer) + post_recv */
};

/* Shared receive queue: a receive queue that several QPs take WQEs from. */
struct sroce_srq {
	struct ib_srq		ibsrq;
	struct sroce_dev	*sdev;
	struct sroce_rq		rq;
	struct mutex		resize_mutex;	/* one resize at a time */
	bool			user;
	u32			srq_num;
	u32			limit;		/* armed limit, 0 when disarmed */
};

static inline struct sroce_srq *to_ssrq(struct ib_srq *srq)
{
	return container_of(srq, struct sroce_srq, ibsrq);
}

/* RDMA READ / atomic request kept so a duplicate can be replayed. */
struct sroce_rd_res {
	bool	valid;
	bool	pending;	/* READ responses from next_psn still to go */
	bool	no_train;	/* its responses could not go in a train */
	u8	opcode;
	u32	first_psn;
	u32	last_psn;
	u64	first64;	/* first_psn on the responder's epsn64 scale */
	u32	start_psn;	/* where the (re)play began: FIRST/ONLY */
	u32	next_psn;
	u32	msn;		/* the MSN its responses carry */
	u64	va;
	u32	rkey;
	u32	length;
	u64	atomic_orig;
};

struct sroce_req_state {
	u32	psn;		/* next PSN to send */
	u32	max_psn;	/* one past the highest PSN ever sent */
	u32	ssn;
	u32	rd_outstanding;	/* read/atomic requests in flight */
	u32	pkts_since_ackreq;
	/*
	 * The last request packet went without AckReq (an unsignaled
	 * message's tail): no ACK need come for it until asked (probe).
	 */
	bool	ackreq_owed;
	bool	probed;		/* a probe since the last progress */
	/*
	 * The local ACK timer runs from ack_wait_at.  Stopping it and pushing
	 * it back only set these; the timer itself is left armed and, when it
	 * fires early or idle, re-armed or ignored (sroce_req_retrans_expired),
	 * so a message costs no mod_timer and del_timer pair.
	 */
	bool	ack_wait;
	unsigned long ack_wait_at;
	struct sroce_swqe *tail_wqe;	/* the WQE that sent that packet */
	u32	cwnd;		/* PSNs that may be unacknowledged; 0: all */
	bool	need_retry;
	bool	rnr_wait;
	bool	halted;		/* a WQE failed: nothing after it starts */
	u32	halt_next;	/* the SQ index after the failed WQE */
	u8	retry_cnt;
	u8	rnr_retry;
};

struct sroce_comp_state {
	u32	psn;		/* oldest PSN not acknowledged */
	unsigned long progress_at;	/* jiffies: last progress, or wait start */
	bool	rewound;	/* went back to rewound_psn, no progress since */
	u32	rewound_psn;
	/*
	 * READ responses placed ahead of a gap, bit (psn - first_psn) %
	 * SROCE_READ_OOO_WINDOW, for the open READ ooo_wqe only.
	 */
	const struct sroce_swqe *ooo_wqe;
	u32	ooo_first_psn;
	DECLARE_BITMAP(ooo, SROCE_READ_OOO_WINDOW);
	/* the WQE at sq.comp failed: its own status, after zc_out drains */
	bool	fail_pending;
	/* a WQE failed or was flushed: every later one is flushed */
	bool	flush_err;
	/* READ responses were placed past the oldest open WQE, up to later_psn */
	bool	later;
	u32	later_psn;
};

struct sroce_resp_state {
	u32	epsn;		/* expected request PSN */
	u64	epsn64;		/* epsn counting wraps: a re-request is never
				 * matched to a READ/atomic 2^24 PSNs older
				 */
	u32	msn;
	bool	nak_seq_sent;	/* one NAK per sequence error */
	bool	in_send;	/* multi-packet send in progress */
	bool	in_write;	/* multi-packet write in progress */
	bool	have_rwqe;
	struct sroce_rwqe rwqe;
	u32	rcv_len;	/* bytes of the current send placed */
	u32	rcv_sge;
	u32	rcv_sge_off;
	u32	wr_rkey;	/* current RDMA WRITE target, looked up per packet */
	u64	wr_va;
	u32	wr_resid;
	u32	wr_imm;
	bool	wr_has_imm;
	struct sroce_rd_res *res;	/* max_dest_rd_atomic entries */
	u32	res_head;
	bool	ack_pending;	/* coalesced ACK for ack_psn not sent yet */
	u32	ack_psn;
	struct sroce_rd_res *rd_cur;	/* oldest READ with responses to send */
	enum ib_event_type fail_ev;	/* for sroce_qp_fail(); 0: none */
};

/* Events raised from other contexts, handled by the engine's next pass. */
enum {
	SROCE_QPEV_RETRANS,	/* local ACK timeout expired */
	SROCE_QPEV_RNR,		/* RNR wait over */
	SROCE_QPEV_FLUSH,	/* new WQEs while in ERR */
	SROCE_QPEV_KICK,	/* a pass is due: whoever holds eng_lock runs it */
	SROCE_QPEV_DOORBELL,	/* user WQEs rung: the next pass fetches them */
	SROCE_QPEV_RQ_WATCH,	/* ERR: the RQ watch found user receives */
};

/* Consumer callbacks due, raised by the engine after it drops its lock. */
struct sroce_notify {
	bool			scq;
	bool			rcq;
	bool			scq_err;
	bool			rcq_err;
	bool			srq_limit;
	bool			last_wqe;	/* IB_EVENT_QP_LAST_WQE_REACHED */
	bool			sq_drained;	/* IB_EVENT_SQ_DRAINED */
	enum ib_event_type	qp_event;	/* 0: none */
};

struct sroce_qp {
	struct ib_qp		ibqp;
	struct sroce_dev	*sdev;
	refcount_t		ref;
	struct completion	done;
	bool			user;
	kuid_t			owner;		/* user QP: its creator's euid */
	u64			serial;		/* never reused, unlike the QPN */
	bool			dying;
	enum ib_qp_type		type;
	bool			block_mc_loop;	/* its own multicast not looped back */
	enum ib_qp_state	state;		/* written under eng_lock */
	/*
	 * The engine: a pass does all requester, responder and completer
	 * work of the QP, in the work item or inline (engine.c); eng_lock
	 * serialises passes with each other and with modify, query and
	 * destroy.  Everything below that is not a queue or an
	 * atomic belongs to whoever holds eng_lock.
	 */
	struct mutex		eng_lock;
	struct work_struct	work;
	unsigned long		events;		/* SROCE_QPEV_* */
	struct sk_buff_head	req_rxq;	/* requests, for the responder */
	struct sk_buff_head	resp_rxq;	/* ACKs/responses, for the completer */
	atomic_t		skb_out;	/* our transmitted skbs not yet freed */
	/* our skbs whose payload references user pages (sroce_pkt_zc_hold) */
	atomic_t		zc_out;
	bool			zc_wait;	/* someone waits for zc_out to drain */
	bool			tx_stalled;	/* on sdev->stalled or waiting on skb_out */
	bool			last_wqe_sent;	/* LAST_WQE_REACHED raised in this ERR */
	struct list_head	stall_node;
	wait_queue_head_t	skb_wait;
	struct sroce_notify	nt;
	/* [0] the send CQ, [1] the receive CQ: a flush's slot, or its wait */
	struct sroce_cq_wait	cq_wait[2];
	bool			cq_reserved[2];
	u32			qpn;
	struct sroce_pd		*pd;
	struct sroce_pd		*recv_pd;	/* the SRQ's PD when there is one */
	struct sroce_cq		*scq;
	struct sroce_cq		*rcq;
	struct sroce_srq	*srq;
	enum ib_sig_type	sq_sig_type;

	/* attributes */
	u32			dest_qpn;
	u32			qkey;
	u16			pkey_index;
	u32			access;		/* qp_access_flags */
	enum ib_mtu		path_mtu;
	u32			mtu;		/* bytes */
	u8			timeout;
	u8			retry_cnt;
	u8			rnr_retry;
	u8			min_rnr_timer;
	u8			max_rd_atomic;
	u8			max_dest_rd_atomic;
	u16			sport;		/* UDP source port */
	struct sroce_av		av;		/* primary path (RC/UC) */
	struct dst_cache	dst_cache;	/* its route */
	bool			av_valid;
	bool			sq_draining;
	bool			sqd_notify;	/* en_sqd_async_notify */

	struct sroce_sq		sq;
	struct sroce_rq		rq;

	struct sroce_req_state	req;
	struct sroce_comp_state	comp;
	struct sroce_resp_state	resp;

	struct timer_list	retrans_timer;
	struct timer_list	rnr_timer;	/* in ERR: the user RQ watch */
	unsigned long		rq_watch;	/* its period in ERR, jiffies */
	unsigned long		err_since;	/* jiffies of the first ERR pass */
	int			cpu;		/* where the work item runs */
	/* a loopback peer to run right after this pass (holds a ref) */
	struct sroce_qp		*handoff;
	bool			in_pass;	/* an engine pass holds eng_lock */
	bool			no_fetch;	/* a peer's syscall runs this pass */
	bool			pass_rung;	/* this pass owes a doorbell its fetch */
	bool			sq_fetch_owed;	/* rung WQEs wait for SQ room */
	/* the opt-in send queue poller (poll.c) */
	struct work_struct	poll_work;
	unsigned long		poll_active;	/* bit 0: a poller watches the QP */
	u64			poll_seen;	/* local_clock() of its last look; 0: none yet */
	unsigned int		poll_taken;	/* doorbells this poller took */
	bool			poll_renew;	/* the last one ran its full time */
	u64			last_doorbell;
	unsigned long		poll_backoff;	/* jiffies: no poller before this */
	unsigned int		poll_backoff_ms;	/* the last such wait */
	int			idle_cpu;	/* a poller's CPU, its idle time at */
	u64			idle_us;	/* idle_wall (get_cpu_idle_time_us) */
	u64			idle_wall;
	u64			idle_look;	/* local_clock() of that look */
	/* what this QP's engine counted (rdma resource show qp -dd) */
	struct {
		u32		retry_timeout;
		u32		retry_nak;
		u32		rnr_retry;	/* RNR NAKs received */
		u32		rnr_nak_sent;
		u32		nak_seq_sent;
	} stats;
	/* &sdev->cnt, or its rdma_counter's set while bound (stats.c) */
	struct sroce_counter_set __rcu *cnt;
};

static inline struct sroce_qp *to_sqp(struct ib_qp *qp)
{
	return container_of(qp, struct sroce_qp, ibqp);
}

static inline void sroce_qp_count(struct sroce_qp *qp, enum sroce_counter c)
{
	rcu_read_lock();
	this_cpu_inc(rcu_dereference(qp->cnt)->pc->v[c]);
	rcu_read_unlock();
}

static inline void sroce_qp_count_n(struct sroce_qp *qp, enum sroce_counter c,
				    u32 n)
{
	rcu_read_lock();
	this_cpu_add(rcu_dereference(qp->cnt)->pc->v[c], n);
	rcu_read_unlock();
}

/* Dynamic debug (`module sroce +p`), rate-limited, prefixed by the device. */
#define sroce_qp_dbg(qp, fmt, ...)					\
	ibdev_dbg_ratelimited(&(qp)->sdev->ib_dev, "qp %#x: " fmt,	\
			      (qp)->qpn, ##__VA_ARGS__)

/*
 * Packets a QP's receive queue may hold.  The bound is memory, so small
 * MTUs get more packets: a slow UC receiver then absorbs the same burst.
 */
static inline u32 sroce_rxq_cap(const struct sroce_qp *qp)
{
	return clamp_t(u32, SROCE_RXQ_BYTES / max(READ_ONCE(qp->mtu), 1U),
		       SROCE_RXQ_MIN, SROCE_RXQ_MAX);
}

static inline bool sroce_qp_is_ud(const struct sroce_qp *qp)
{
	return qp->type == IB_QPT_UD || qp->type == IB_QPT_GSI;
}

/*
 * A loopback train (skb->cb): one skb that carries @pkts consecutive
 * packets of one RC SEND or WRITE or of one READ's responses, each with
 * @seg bytes of payload by reference, none of them the message's last.  Only its first packet's
 * headers are in the skb; the others are that packet's MIDDLE successors
 * (sroce_train_hdrs), and the engine takes them one by one through the
 * same code as any packet.  @pkts 0 or 1: an ordinary packet.
 */
struct sroce_train {
	u16	pkts;
	u16	seg;
	u16	ackreq;		/* bit i: packet i asks for an ACK */
	u16	done;		/* packets the engine has taken (it may stop midway) */
	bool	dropped;	/* one of them was dropped */
};

/* skb->cb of the skbs we make (a NIC's carry the stack's) */
struct sroce_skb_cb {
	struct sroce_mr		*zc_mr;	/* a payload by reference holds it (drivers/net/tx.c) */
	struct sroce_train	train;
};

static inline struct sroce_skb_cb *sroce_skb_cb(const struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct sroce_skb_cb) > sizeof(skb->cb));
	return (struct sroce_skb_cb *)skb->cb;
}

static inline struct sroce_train *sroce_train(const struct sk_buff *skb)
{
	return &sroce_skb_cb(skb)->train;
}

/* The packets @skb stands for: its train's, or 1. */
static inline u32 sroce_skb_pkts(const struct sk_buff *skb)
{
	return max_t(u32, sroce_train(skb)->pkts, 1);
}

/* Per-packet state on the engine's receive path (lives on the stack). */
struct sroce_pkt {
	struct sroce_dev	*sdev;
	struct sroce_qp		*qp;
	struct sk_buff		*skb;
	struct sroce_pkt_hdrs	h;
	u32			payload_off;	/* from skb->data */
	u8			net_type;
	bool			dropped;	/* freed as a drop, not consumed */
	union ib_gid		sgid;		/* source GID of the packet */
	union ib_gid		dgid;
};

/* The engine drops @pkt (counted as @c): kfree_skb, not a consume, frees it. */
static inline void sroce_pkt_drop(struct sroce_pkt *pkt, enum sroce_counter c)
{
	pkt->dropped = true;
	sroce_qp_count(pkt->qp, c);
}

/* drivers/core */
extern struct workqueue_struct *sroce_wq;
extern struct workqueue_struct *sroce_poll_wq;
struct sroce_dev *sroce_dev_by_netdev(struct net_device *ndev);
int sroce_dev_add(const char *ibdev_name, struct net_device *ndev);
void sroce_dev_port_event(struct sroce_dev *sdev, bool up);
void sroce_dev_mtu_changed(struct sroce_dev *sdev);
void sroce_dev_remove_all(void);
void sroce_dev_netdev_unregister(struct net_device *ndev);
enum ib_mtu sroce_mtu_from_netdev(unsigned int mtu);

/* drivers/verbs */
extern const struct ib_device_ops sroce_verbs_ops;
extern const struct ib_device_ops sroce_stats_ops;
int sroce_stats_init(struct sroce_dev *sdev);
void sroce_stats_fini(struct sroce_dev *sdev);
int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void sroce_mmap_free(struct rdma_user_mmap_entry *re);
int sroce_queue_init(struct sroce_dev *sdev, struct sroce_queue *q,
		     u32 nelem, u32 elem_size);
int sroce_queue_map(struct sroce_queue *q, struct ib_ucontext *uctx,
		    struct sroce_abi_mmap_info *mi);
void sroce_queue_free(struct sroce_queue *q);
u32 sroce_queue_user_prod(struct sroce_queue *q);
u32 sroce_queue_user_cons(struct sroce_queue *q);
void sroce_queue_publish_prod(struct sroce_queue *q, u32 prod);
void sroce_queue_publish_cons(struct sroce_queue *q, u32 cons);

/* A user receive ring with nothing past our consumer index. */
static inline bool sroce_rq_user_empty(struct sroce_rq *rq)
{
	return (READ_ONCE(rq->cons) & rq->q.mask) ==
	       sroce_queue_user_prod(&rq->q);
}

/* sroce_cq_post() results: what the caller must raise after its locks */
#define SROCE_CQ_NOTIFY		1
#define SROCE_CQ_OVERFLOW	2
#define SROCE_CQ_LOST		3
int sroce_cq_post(struct sroce_cq *cq, const struct ib_wc *wc, bool solicited,
		  bool reserved);
bool sroce_cq_reserve(struct sroce_cq *cq, struct sroce_cq_wait *w,
		      bool *queued);
void sroce_cq_unwait(struct sroce_cq *cq, struct sroce_cq_wait *w);
u32 sroce_cq_fill(struct sroce_cq *cq);
void sroce_cq_raise(struct sroce_cq *cq, bool comp, bool err);

struct sroce_qp *sroce_qp_get(struct sroce_dev *sdev, u32 qpn);
void sroce_qp_put(struct sroce_qp *qp);
int sroce_wqe_from_user(struct sroce_qp *qp, struct sroce_swqe *wqe,
			const struct sroce_abi_send_wqe *slot);
int sroce_sge_total(const struct sroce_sge *sge, u32 n, u32 *total);
int sroce_rq_post_kernel(struct sroce_rq *rq, const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr);
bool sroce_srq_check_limit(struct sroce_srq *srq);

void sroce_mcast_qp_gone(struct sroce_qp *qp);
bool sroce_mcast_attached(struct sroce_dev *sdev, const union ib_gid *mgid);
int sroce_mcast_qps(struct sroce_dev *sdev, const union ib_gid *mgid,
		    struct sroce_qp **qps, int max);

struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key);
void sroce_mr_put(struct sroce_mr *mr);
void sroce_mr_unref(struct sroce_mr *mr);
int sroce_mr_fast_reg(struct sroce_qp *qp, const struct sroce_swqe *wqe);
int sroce_mr_invalidate(struct sroce_qp *qp, u32 key);
int sroce_mw_bind(struct sroce_qp *qp, const struct sroce_swqe *wqe);
int sroce_mw_invalidate(struct sroce_qp *qp, u32 key);
struct sroce_mr *sroce_mr_ref(struct sroce_dev *sdev, u32 key);
void sroce_mr_quiesce(struct sroce_mr *mr);
int sroce_mr_check(struct sroce_mr *mr, struct sroce_pd *pd, u64 va, u32 len,
		   u32 access);
struct sroce_mr *sroce_mw_get(struct sroce_qp *qp, u32 key, u64 va, u32 len,
			      u32 access, struct sroce_mw **mwp);
void sroce_mw_put(struct sroce_mr *mr, struct sroce_mw *mw);
int sroce_mr_copy(struct sroce_mr *mr, u64 va, void *buf, u32 len, bool to_mr);
u64 *sroce_mr_atomic_ptr(struct sroce_mr *mr, u64 va);
int sroce_mr_ref_skb(struct sroce_mr *mr, u64 va, u32 len, struct sk_buff *skb);
int sroce_mr_from_skb(struct sroce_mr *mr, u64 va, const struct sk_buff *skb,
		      u32 off, u32 len);
int sroce_ah_lookup_av(struct sroce_dev *sdev, u32 ah_num, struct ib_pd *pd,
		       struct sroce_av *av);
int sroce_av_from_attr(struct sroce_dev *sdev, struct sroce_av *av,
		       const struct rdma_ah_attr *attr);
void sroce_av_to_attr(const struct sroce_av *av, struct rdma_ah_attr *attr);

/* drivers/transport: the engine's entry points for the other layers */
void sroce_qp_engine_init(struct sroce_qp *qp);
void sroce_qp_sched(struct sroce_qp *qp);
void sroce_qp_sched_here(struct sroce_qp *qp);
void sroce_qp_kick(struct sroce_qp *qp);
void sroce_sq_poll_init(struct sroce_qp *qp);
void sroce_sq_poll_stop(struct sroce_qp *qp);
bool sroce_sq_poll_doorbell(struct sroce_qp *qp);
bool sroce_sq_poll_take_pass(struct sroce_qp *qp);
void sroce_qp_unlock(struct sroce_qp *qp);
void sroce_qp_engine_stop(struct sroce_qp *qp);
void sroce_qp_reset_engine(struct sroce_qp *qp);
void sroce_qp_rtr_engine(struct sroce_qp *qp);
void sroce_qp_fail(struct sroce_qp *qp, enum ib_event_type ev);
void sroce_qp_sq_error(struct sroce_qp *qp);
void sroce_qp_sqe_flush(struct sroce_qp *qp);
void sroce_resp_reset(struct sroce_qp *qp);
void sroce_req_timeout_set(struct sroce_qp *qp);
void sroce_rcv(struct sroce_dev *sdev, struct sk_buff *skb,
	       struct sroce_qp *from);
void sroce_train_hdrs(const struct sroce_pkt_hdrs *h0,
		      const struct sroce_train *t, u32 i,
		      struct sroce_pkt_hdrs *h);
void sroce_trace_pkts(struct sroce_dev *sdev, const struct sroce_pkt_hdrs *h0,
		      const struct sroce_train *t, u32 len, bool tx);

/* drivers/net */
int sroce_net_init(void);
void sroce_net_exit(void);
int sroce_txbuf_init(void);
void sroce_txbuf_exit(void);
struct sk_buff *sroce_txbuf_skb(unsigned int size);
void sroce_skb_consume(struct sk_buff *skb);
int sroce_txbuf_trailer(struct sk_buff *skb, unsigned int n);
bool sroce_av_is_local(const struct sroce_av *av);
void sroce_pkt_zc_hold(struct sk_buff *skb, struct sroce_mr *mr);
struct sroce_mr *sroce_pkt_zc_mr(const struct sk_buff *skb);
bool sroce_qp_zc_busy(struct sroce_qp *qp);
void sroce_qp_zc_drain(struct sroce_qp *qp);
int sroce_net_get(struct net *net);
void sroce_net_put(struct net *net);
struct sk_buff *sroce_pkt_alloc(struct sroce_qp *qp, const struct sroce_av *av,
				u32 bth_len, u32 payload_len, u8 **bth);
bool sroce_tx_room(struct sroce_qp *qp);
int sroce_pkt_send(struct sroce_dev *sdev, const struct sroce_av *av,
		   struct dst_cache *dc, u16 sport, struct sk_buff *skb);
struct sroce_qp *sroce_rx_runner(const struct sk_buff *skb, u32 dqpn);

#endif /* SROCE_H */
