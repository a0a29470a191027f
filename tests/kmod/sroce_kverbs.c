// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel-consumer verbs test: what only a kernel ULP can post (fast
 * registration, local invalidate) and remote invalidation, between two RC
 * QPs of one device in loopback, and what only a kernel ULP can ask for
 * (a UD QP blocking its own multicast loopback).  Each case prints
 * "sroce_kverbs: PASS <name>" or "FAIL <name>: why", then a tally; loading
 * fails (-EIO) if any case failed.
 */
#include <linux/module.h>
#include <linux/version.h>
#include <linux/slab.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/scatterlist.h>
#include <net/ipv6.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_cache.h>

static char *kv_dev_name = "sroce0";
module_param_named(dev, kv_dev_name, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device to test");

#define NPAGES		4
#define BUF_LEN		(NPAGES * PAGE_SIZE)
#define REMOTE_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_WRITE)

struct kv_qp {
	struct ib_cq	*cq;
	struct ib_qp	*qp;
};

struct kv_ctx {
	struct ib_device	*dev;
	struct ib_pd		*pd;
	struct ib_pd		*pd2;
	u32			sgid_index;
	union ib_gid		gid;
	struct kv_qp		a, b;		/* a owns the MR, b is the peer */
	bool			sig_req;	/* kv_pair: IB_SIGNAL_REQ_WR */
	struct ib_pd		*pair_pd;	/* kv_pair: this PD, not pd */
	struct ib_srq		*srq;		/* kv_pair: a receives here */
	struct page		*pages[NPAGES];	/* the registered buffer */
	struct scatterlist	sgl[NPAGES];
	u8			*src, *dst;	/* b's buffers (local_dma_lkey) */
	int			fails;
	int			passes;
};

#define kv_fail(c, name, fmt, ...) do {					\
	pr_err("sroce_kverbs: FAIL %s: " fmt "\n", name, ##__VA_ARGS__);	\
	(c)->fails++;							\
} while (0)

static void kv_pass(struct kv_ctx *c, const char *name)
{
	pr_info("sroce_kverbs: PASS %s\n", name);
	c->passes++;
}

static int kv_find_gid(struct kv_ctx *c)
{
	u32 i;

	for (i = 0; i < c->dev->port_data[1].immutable.gid_tbl_len; i++) {
		const struct ib_gid_attr *attr = rdma_get_gid_attr(c->dev, 1, i);
		bool ok;

		if (IS_ERR(attr))
			continue;
		ok = attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP &&
		     ipv6_addr_v4mapped((const struct in6_addr *)attr->gid.raw);
		if (ok) {
			c->gid = attr->gid;
			c->sgid_index = i;
		}
		rdma_put_gid_attr(attr);
		if (ok)
			return 0;
	}
	return -ENOENT;
}

static int kv_poll_ms(struct kv_qp *q, struct ib_wc *wc, unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	int n;

	do {
		n = ib_poll_cq(q->cq, 1, wc);
		if (n)
			return n < 0 ? n : 0;
		usleep_range(200, 1000);
	} while (time_before(jiffies, end));
	return -ETIMEDOUT;
}

static int kv_poll(struct kv_qp *q, struct ib_wc *wc)
{
	return kv_poll_ms(q, wc, 5000);
}

/* Expect exactly the completion (@wr_id, @status, @opcode) next on @q. */
static int kv_expect(struct kv_ctx *c, const char *name, struct kv_qp *q,
		     u64 wr_id, enum ib_wc_status status,
		     enum ib_wc_opcode opcode, struct ib_wc *out)
{
	struct ib_wc wc;

	if (kv_poll(q, &wc)) {
		kv_fail(c, name, "no completion for wr_id %llu (want %s)",
			wr_id, ib_wc_status_msg(status));
		return -EIO;
	}
	if (wc.wr_id != wr_id || wc.status != status ||
	    (status == IB_WC_SUCCESS && wc.opcode != opcode)) {
		kv_fail(c, name, "wr_id %llu status %s opcode %d, want wr_id %llu %s opcode %d",
			wc.wr_id, ib_wc_status_msg(wc.status), wc.opcode,
			wr_id, ib_wc_status_msg(status), opcode);
		return -EIO;
	}
	if (out)
		*out = wc;
	return 0;
}

static void kv_qp_destroy(struct kv_qp *q)
{
	if (q->qp)
		ib_destroy_qp(q->qp);
	if (q->cq)
		ib_free_cq(q->cq);
	q->qp = NULL;
	q->cq = NULL;
}

static void kv_pair_destroy(struct kv_ctx *c)
{
	kv_qp_destroy(&c->a);
	kv_qp_destroy(&c->b);
}

static int kv_qp_create(struct kv_ctx *c, struct ib_pd *pd, struct kv_qp *q)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = c->sig_req ? IB_SIGNAL_REQ_WR : IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2 },
	};
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE,
	};

	q->cq = ib_alloc_cq(c->dev, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(q->cq)) {
		int err = PTR_ERR(q->cq);

		q->cq = NULL;
		return err;
	}
	init.send_cq = q->cq;
	init.recv_cq = q->cq;
	if (q == &c->a && c->srq) {
		init.srq = c->srq;
		init.cap.max_recv_wr = 0;
		init.cap.max_recv_sge = 0;
	}
	q->qp = ib_create_qp(pd, &init);
	if (IS_ERR(q->qp)) {
		int err = PTR_ERR(q->qp);

		q->qp = NULL;
		return err;
	}
	return ib_modify_qp(q->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			    IB_QP_PORT | IB_QP_ACCESS_FLAGS);
}

static int kv_qp_connect(struct kv_ctx *c, struct kv_qp *q, u32 dqpn)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTR,
		.path_mtu = IB_MTU_1024,
		.dest_qp_num = dqpn,
		.rq_psn = 100,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 1,
	};
	int err;

	attr.ah_attr.type = rdma_ah_find_type(c->dev, 1);
	rdma_ah_set_port_num(&attr.ah_attr, 1);
	rdma_ah_set_grh(&attr.ah_attr, &c->gid, 0, c->sgid_index, 64, 0);
	err = ib_modify_qp(q->qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = 100;
	attr.max_rd_atomic = 4;
	return ib_modify_qp(q->qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

/*
 * A fresh connected pair: a case that ends a QP in error starts over.  Both
 * QPs are of pd, or of pair_pd when a case sets it.
 */
static int kv_pair(struct kv_ctx *c)
{
	struct ib_pd *pd = c->pair_pd ?: c->pd;
	int err;

	kv_pair_destroy(c);
	err = kv_qp_create(c, pd, &c->a) ?:
	      kv_qp_create(c, pd, &c->b) ?:
	      kv_qp_connect(c, &c->a, c->b.qp->qp_num) ?:
	      kv_qp_connect(c, &c->b, c->a.qp->qp_num);
	if (err)
		pr_err("sroce_kverbs: cannot set up a connected QP pair: %d\n", err);
	return err;
}

static int kv_post_send(struct kv_qp *q, struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad;

	return ib_post_send(q->qp, wr, &bad);
}

/* Post @wr on @q and expect exactly its completion next, with @status. */
static int kv_post_expect(struct kv_ctx *c, const char *name, struct kv_qp *q,
			  struct ib_send_wr *wr, enum ib_wc_status status,
			  enum ib_wc_opcode opcode)
{
	int err = kv_post_send(q, wr);

	if (err) {
		kv_fail(c, name, "post of wr_id %llu (opcode %d): %d", wr->wr_id,
			wr->opcode, err);
		return err;
	}
	return kv_expect(c, name, q, wr->wr_id, status, opcode, NULL);
}

/* A fast-registration key of @pd for @pages pages; NULL (a failure) if none. */
static struct ib_mr *kv_alloc_mr(struct kv_ctx *c, const char *name,
				 struct ib_pd *pd, u32 pages)
{
	struct ib_mr *mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, pages);

	if (IS_ERR(mr)) {
		kv_fail(c, name, "ib_alloc_mr: %ld", PTR_ERR(mr));
		return NULL;
	}
	return mr;
}

/* Map the buffer's pages into @mr and register it with a new key on a. */
static int kv_fast_reg(struct kv_ctx *c, const char *name, struct ib_mr *mr,
		       int access, u64 wr_id)
{
	struct ib_reg_wr reg = {
		.wr = { .opcode = IB_WR_REG_MR, .wr_id = wr_id },
		.mr = mr,
		.access = access,
	};
	int n;

	n = ib_map_mr_sg(mr, c->sgl, NPAGES, NULL, PAGE_SIZE);
	if (n != NPAGES) {
		kv_fail(c, name, "ib_map_mr_sg mapped %d of %d", n, NPAGES);
		return -EIO;
	}
	/* as NFS/RDMA does: the consumer owns the iova's upper bits */
	mr->iova = (mr->iova & 0xffffffffULL) | (0x5a5aULL << 32);
	ib_update_fast_reg_key(mr, (mr->rkey & 0xff) + 1);
	reg.key = mr->rkey;
	return kv_post_expect(c, name, &c->a, &reg.wr, IB_WC_SUCCESS,
			      IB_WC_REG_MR);
}

/* b reads or writes [off, off + len) of the region through @mr's rkey. */
static int kv_rdma(struct kv_ctx *c, const char *name, struct ib_mr *mr,
		   enum ib_wr_opcode op, u32 off, u32 len, u64 wr_id,
		   enum ib_wc_status want)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)(op == IB_WR_RDMA_WRITE ? c->src : c->dst),
		.length = len,
		.lkey = c->b.qp->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .opcode = op, .wr_id = wr_id, .sg_list = &sge,
			.num_sge = 1 },
		.remote_addr = mr->iova + off,
		.rkey = mr->rkey,
	};

	return kv_post_expect(c, name, &c->b, &wr.wr, want,
			      op == IB_WR_RDMA_WRITE ? IB_WC_RDMA_WRITE :
			      IB_WC_RDMA_READ);
}

static u8 kv_region_byte(struct kv_ctx *c, u32 off)
{
	return ((u8 *)page_address(c->pages[off / PAGE_SIZE]))[off % PAGE_SIZE];
}

static void kv_region_fill(struct kv_ctx *c, u8 v)
{
	int i;

	for (i = 0; i < NPAGES; i++)
		memset(page_address(c->pages[i]), v, PAGE_SIZE);
}

/* WRITE through the fast-registered key lands in the right pages; READ returns it. */
static void kv_case_write_read(struct kv_ctx *c, struct ib_mr *mr)
{
	const char *name = "frwr_write_read";
	struct ib_send_wr inv = { .wr_id = 4, .opcode = IB_WR_LOCAL_INV };
	u32 off = 100, len = BUF_LEN - 300, i;

	if (kv_pair(c) || kv_fast_reg(c, name, mr, REMOTE_ACCESS, 1))
		return;
	kv_region_fill(c, 0);
	for (i = 0; i < BUF_LEN; i++)
		c->src[i] = (u8)(i * 7 + 3);
	if (kv_rdma(c, name, mr, IB_WR_RDMA_WRITE, off, len, 2, IB_WC_SUCCESS))
		return;
	for (i = 0; i < BUF_LEN; i++) {
		u8 want = i >= off && i < off + len ? (u8)((i - off) * 7 + 3) : 0;

		if (kv_region_byte(c, i) != want) {
			kv_fail(c, name, "byte %u of the region is %#x, want %#x",
				i, kv_region_byte(c, i), want);
			return;
		}
	}
	memset(c->dst, 0, BUF_LEN);
	if (kv_rdma(c, name, mr, IB_WR_RDMA_READ, off, len, 3, IB_WC_SUCCESS))
		return;
	if (memcmp(c->dst, c->src, len)) {
		kv_fail(c, name, "READ back differs from what was written");
		return;
	}
	/* FREE again for the next case's registration */
	inv.ex.invalidate_rkey = mr->rkey;
	if (kv_post_expect(c, name, &c->a, &inv, IB_WC_SUCCESS,
			   IB_WC_LOCAL_INV))
		return;
	kv_pass(c, name);
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
/*
 * IBA A19 ATOMIC WRITE from a kernel consumer, where advertised: the 8
 * bytes of the SGE land at the aligned address, nothing else changes, the
 * completion says ATOMIC_WRITE.
 */
static void kv_case_atomic_write(struct kv_ctx *c, struct ib_mr *mr)
{
	const char *name = "atomic_write_kernel";
	struct ib_send_wr inv = { .wr_id = 84, .opcode = IB_WR_LOCAL_INV };
	u32 off = PAGE_SIZE + 8, i;
	struct ib_sge sge = {
		.addr = (uintptr_t)c->src, .length = 8,
		.lkey = c->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .opcode = IB_WR_ATOMIC_WRITE, .wr_id = 82,
			.sg_list = &sge, .num_sge = 1 },
	};

	if (!(c->dev->attrs.device_cap_flags & IB_DEVICE_ATOMIC_WRITE)) {
		pr_info("sroce_kverbs: SKIP %s: not advertised\n", name);
		return;
	}
	if (kv_pair(c) || kv_fast_reg(c, name, mr, REMOTE_ACCESS, 81))
		return;
	kv_region_fill(c, 0x5a);
	for (i = 0; i < 8; i++)
		c->src[i] = 0xa0 + i;
	wr.remote_addr = mr->iova + off;
	wr.rkey = mr->rkey;
	if (kv_post_expect(c, name, &c->b, &wr.wr, IB_WC_SUCCESS,
			   IB_WC_ATOMIC_WRITE))
		return;
	for (i = 0; i < BUF_LEN; i++) {
		u8 want = i >= off && i < off + 8 ? 0xa0 + (i - off) : 0x5a;

		if (kv_region_byte(c, i) != want) {
			kv_fail(c, name, "byte %u of the region is %#x, want %#x",
				i, kv_region_byte(c, i), want);
			return;
		}
	}
	inv.ex.invalidate_rkey = mr->rkey;
	if (kv_post_expect(c, name, &c->a, &inv, IB_WC_SUCCESS,
			   IB_WC_LOCAL_INV))
		return;
	kv_pass(c, name);
}
#else
static void kv_case_atomic_write(struct kv_ctx *c, struct ib_mr *mr)
{
	pr_info("sroce_kverbs: SKIP atomic_write_kernel: no IB_WR_ATOMIC_WRITE before 6.2\n");
}
#endif

/* SEND with Invalidate: the receive reports the key, the key no longer works. */
static void kv_case_send_inv(struct kv_ctx *c, struct ib_mr *mr)
{
	const char *name = "send_with_invalidate";
	struct ib_sge rsge = { .addr = (uintptr_t)c->dst, .length = 256,
			       .lkey = c->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 10, .sg_list = &rsge, .num_sge = 1 };
	struct ib_sge ssge = { .addr = (uintptr_t)c->src, .length = 200,
			       .lkey = c->pd->local_dma_lkey };
	struct ib_send_wr swr = { .wr_id = 11, .opcode = IB_WR_SEND_WITH_INV,
				  .sg_list = &ssge, .num_sge = 1 };
	const struct ib_recv_wr *bad;
	struct ib_wc wc;

	if (kv_pair(c) || kv_fast_reg(c, name, mr, REMOTE_ACCESS, 1))
		return;
	if (ib_post_recv(c->a.qp, &rwr, &bad)) {
		kv_fail(c, name, "post_recv");
		return;
	}
	swr.ex.invalidate_rkey = mr->rkey;
	if (kv_post_send(&c->b, &swr)) {
		kv_fail(c, name, "post SEND_WITH_INV");
		return;
	}
	if (kv_expect(c, name, &c->b, 11, IB_WC_SUCCESS, IB_WC_SEND, NULL) ||
	    kv_expect(c, name, &c->a, 10, IB_WC_SUCCESS, IB_WC_RECV, &wc))
		return;
	if (!(wc.wc_flags & IB_WC_WITH_INVALIDATE) ||
	    wc.ex.invalidate_rkey != mr->rkey || wc.byte_len != 200) {
		kv_fail(c, name, "receive wc_flags %#x rkey %#x len %u, want invalidate of %#x, 200 bytes",
			wc.wc_flags, wc.ex.invalidate_rkey, wc.byte_len,
			mr->rkey);
		return;
	}
	/* o10-37.2.18: the invalidated key is a remote access error now */
	if (kv_rdma(c, name, mr, IB_WR_RDMA_WRITE, 0, 64, 12,
		    IB_WC_REM_ACCESS_ERR))
		return;
	kv_pass(c, name);
}

/* LOCAL_INV frees the key; fast registration works again after it. */
static void kv_case_local_inv(struct kv_ctx *c, struct ib_mr *mr)
{
	const char *name = "local_invalidate";
	struct ib_send_wr inv = { .wr_id = 21, .opcode = IB_WR_LOCAL_INV };

	if (kv_pair(c) || kv_fast_reg(c, name, mr, REMOTE_ACCESS, 20))
		return;
	if (kv_rdma(c, name, mr, IB_WR_RDMA_WRITE, 0, 64, 22, IB_WC_SUCCESS))
		return;
	inv.ex.invalidate_rkey = mr->rkey;
	if (kv_post_expect(c, name, &c->a, &inv, IB_WC_SUCCESS,
			   IB_WC_LOCAL_INV))
		return;
	if (kv_rdma(c, name, mr, IB_WR_RDMA_READ, 0, 64, 23,
		    IB_WC_REM_ACCESS_ERR))
		return;
	kv_pass(c, name);
}

#define KV_MID_PAGES	512	/* SROCE_MAX_FAST_REG_PAGES: the longest page list */
#define KV_MID_LEN	(KV_MID_PAGES * PAGE_SIZE)

static bool kv_mid_bytes_are(struct page **pages, u8 v, int *bad_page,
			     int *bad_off)
{
	int i, k;

	for (i = 0; i < KV_MID_PAGES; i++) {
		const u8 *p = page_address(pages[i]);

		for (k = 0; k < PAGE_SIZE; k++)
			if (p[k] != v) {
				*bad_page = i;
				*bad_off = k;
				return false;
			}
	}
	return true;
}

/*
 * o10-37.2.14: a's fast-registered region of 512 pages is invalidated
 * (LOCAL_INV) while b's 2 MiB WRITE into it is landing.  If the region's
 * last byte was not there when the invalidation completed, the WRITE fails
 * REM_ACCESS_ERR and nothing lands after it (the region is refilled with
 * 0xcc then and looked at after b's completion and 20 ms).  A WRITE that
 * landed whole first proves nothing: up to 8 tries.
 */
static void kv_case_inv_midway(struct kv_ctx *c)
{
	const char *name = "local_inv_midway_write_fails";
	struct page **pages = kcalloc(KV_MID_PAGES, sizeof(*pages), GFP_KERNEL);
	struct sg_table sgt = {};
	struct page *src = NULL;
	struct ib_mr *mr = NULL;
	int i, try, n, bad_page, bad_off;
	bool mapped = false;
	struct scatterlist *sg;
	unsigned long end;
	struct ib_wc wc;
	u8 last;

	if (!pages || sg_alloc_table(&sgt, KV_MID_PAGES, GFP_KERNEL)) {
		kv_fail(c, name, "no memory");
		goto out;
	}
	for_each_sg(sgt.sgl, sg, KV_MID_PAGES, i) {
		pages[i] = alloc_page(GFP_KERNEL);
		if (!pages[i]) {
			kv_fail(c, name, "no memory");
			goto out;
		}
		sg_set_page(sg, pages[i], PAGE_SIZE, 0);
	}
	if (ib_dma_map_sg(c->dev, sgt.sgl, KV_MID_PAGES,
			  DMA_BIDIRECTIONAL) != KV_MID_PAGES) {
		kv_fail(c, name, "ib_dma_map_sg");
		goto out;
	}
	mapped = true;
	src = alloc_pages(GFP_KERNEL, get_order(KV_MID_LEN));
	if (!src) {
		kv_fail(c, name, "no memory for a %lu byte source",
			(unsigned long)KV_MID_LEN);
		goto out;
	}
	memset(page_address(src), 0x5a, KV_MID_LEN);
	mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, KV_MID_PAGES);
	if (IS_ERR(mr)) {
		kv_fail(c, name, "ib_alloc_mr of %d pages: %ld", KV_MID_PAGES,
			PTR_ERR(mr));
		mr = NULL;
		goto out;
	}
	for (try = 0; try < 8; try++) {
		struct ib_reg_wr reg = {
			.wr = { .opcode = IB_WR_REG_MR, .wr_id = 30 },
			.mr = mr,
			.access = REMOTE_ACCESS,
		};
		struct ib_send_wr inv = { .wr_id = 31,
					  .opcode = IB_WR_LOCAL_INV };
		struct ib_sge sge = {
			.addr = (uintptr_t)page_address(src),
			.length = KV_MID_LEN,
			.lkey = c->pd->local_dma_lkey,
		};
		struct ib_rdma_wr wr = {
			.wr = { .opcode = IB_WR_RDMA_WRITE, .wr_id = 32,
				.sg_list = &sge, .num_sge = 1 },
		};
		const u8 *mid, *tail;
		int landed;

		if (kv_pair(c)) {
			kv_fail(c, name, "setup");
			goto out;
		}
		for (i = 0; i < KV_MID_PAGES; i++)
			memset(page_address(pages[i]), 0xbb, PAGE_SIZE);
		n = ib_map_mr_sg(mr, sgt.sgl, KV_MID_PAGES, NULL, PAGE_SIZE);
		if (n != KV_MID_PAGES) {
			kv_fail(c, name, "ib_map_mr_sg mapped %d of %d", n,
				KV_MID_PAGES);
			goto out;
		}
		ib_update_fast_reg_key(mr, (mr->rkey & 0xff) + 1);
		reg.key = mr->rkey;
		if (kv_post_send(&c->a, &reg.wr)) {
			kv_fail(c, name, "post REG_MR");
			goto out;
		}
		if (kv_expect(c, name, &c->a, 30, IB_WC_SUCCESS,
			      IB_WC_REG_MR, NULL))
			goto out;
		wr.remote_addr = mr->iova;
		wr.rkey = mr->rkey;
		if (kv_post_send(&c->b, &wr.wr)) {
			kv_fail(c, name, "post WRITE");
			goto out;
		}
		/* under way: its first 64 pages are there */
		mid = page_address(pages[63]);
		end = jiffies + msecs_to_jiffies(5000);
		while (READ_ONCE(mid[PAGE_SIZE - 1]) != 0x5a) {
			if (time_after(jiffies, end)) {
				kv_fail(c, name, "the WRITE's first 64 pages did not land in 5 s");
				goto out;
			}
			usleep_range(20, 50);
		}
		inv.ex.invalidate_rkey = mr->rkey;
		if (kv_post_send(&c->a, &inv)) {
			kv_fail(c, name, "post LOCAL_INV");
			goto out;
		}
		if (kv_expect(c, name, &c->a, 31, IB_WC_SUCCESS,
			      IB_WC_LOCAL_INV, NULL))
			goto out;
		tail = page_address(pages[KV_MID_PAGES - 1]);
		last = READ_ONCE(tail[PAGE_SIZE - 1]);
		for (landed = 0; landed < KV_MID_PAGES; landed++)
			if (READ_ONCE(((u8 *)page_address(pages[landed]))[0]) != 0x5a)
				break;
		for (i = 0; i < KV_MID_PAGES; i++)
			memset(page_address(pages[i]), 0xcc, PAGE_SIZE);
		if (kv_poll(&c->b, &wc)) {
			kv_fail(c, name, "no completion of the WRITE");
			goto out;
		}
		if (last == 0x5a && wc.status == IB_WC_SUCCESS) {
			pr_info("sroce_kverbs: %s: try %d: the WRITE had landed whole, again\n",
				name, try + 1);
			continue;
		}
		if (wc.wr_id != 32 || wc.status != IB_WC_REM_ACCESS_ERR) {
			kv_fail(c, name, "WRITE: wr_id %llu %s, want 32 %s (its last byte %s when the invalidation completed)",
				wc.wr_id, ib_wc_status_msg(wc.status),
				ib_wc_status_msg(IB_WC_REM_ACCESS_ERR),
				last == 0x5a ? "landed" : "had not landed");
			goto out;
		}
		msleep(20);
		if (!kv_mid_bytes_are(pages, 0xcc, &bad_page, &bad_off)) {
			kv_fail(c, name, "page %d byte %d of the region changed after the invalidation",
				bad_page, bad_off);
			goto out;
		}
		pr_info("sroce_kverbs: %s: invalidated with %d of %d pages landed\n",
			name, landed, KV_MID_PAGES);
		kv_pass(c, name);
		goto out;
	}
	kv_fail(c, name, "the WRITE landed whole before the invalidation, 8 times: never caught midway");
out:
	/* nothing may point into the region once it is freed */
	kv_pair_destroy(c);
	if (mr)
		ib_dereg_mr(mr);
	if (mapped)
		ib_dma_unmap_sg(c->dev, sgt.sgl, KV_MID_PAGES,
				DMA_BIDIRECTIONAL);
	if (src)
		__free_pages(src, get_order(KV_MID_LEN));
	for (i = 0; pages && i < KV_MID_PAGES; i++)
		if (pages[i])
			__free_page(pages[i]);
	sg_free_table(&sgt);
	kfree(pages);
}

/* A second REG_MR on a VALID key fails and the QP flushes what follows (o10-37.2.5). */
static void kv_case_reg_valid(struct kv_ctx *c, struct ib_mr *mr)
{
	const char *name = "reg_mr_on_valid_key";
	struct ib_reg_wr reg = {
		.wr = { .opcode = IB_WR_REG_MR, .wr_id = 31 },
		.mr = mr,
		.access = REMOTE_ACCESS,
	};
	struct ib_send_wr inv = { .wr_id = 32, .opcode = IB_WR_LOCAL_INV };

	if (kv_pair(c) || kv_fast_reg(c, name, mr, REMOTE_ACCESS, 30))
		return;
	reg.key = mr->rkey;
	reg.wr.next = &inv;
	inv.ex.invalidate_rkey = mr->rkey;
	if (kv_post_send(&c->a, &reg.wr)) {
		kv_fail(c, name, "post REG_MR");
		return;
	}
	if (kv_expect(c, name, &c->a, 31, IB_WC_LOC_QP_OP_ERR, IB_WC_REG_MR,
		      NULL) ||
	    kv_expect(c, name, &c->a, 32, IB_WC_WR_FLUSH_ERR, IB_WC_LOCAL_INV,
		      NULL))
		return;
	/* the failed REG_MR changed nothing: the first registration still works */
	if (kv_pair(c) ||
	    kv_rdma(c, name, mr, IB_WR_RDMA_WRITE, 0, 64, 33, IB_WC_SUCCESS))
		return;
	kv_pass(c, name);
}

/* Post @mr's page list for the next REG_MR, with a new key byte. */
static int kv_map(struct kv_ctx *c, const char *name, struct ib_mr *mr)
{
	int n = ib_map_mr_sg(mr, c->sgl, NPAGES, NULL, PAGE_SIZE);

	if (n != NPAGES) {
		kv_fail(c, name, "ib_map_mr_sg mapped %d of %d", n, NPAGES);
		return -EIO;
	}
	ib_update_fast_reg_key(mr, (mr->rkey & 0xff) + 1);
	return 0;
}

/*
 * An unsignaled REG_MR and, chained behind it, a WRITE through the new key
 * it registers: the WRITE may only start once the registration took
 * effect (o10-37.2.6), and the key it replaced is refused after.
 */
static void kv_case_reg_chain(struct kv_ctx *c, struct ib_mr *mr)
{
	const char *name = "reg_mr_chained_write";
	struct ib_reg_wr reg = {
		.wr = { .opcode = IB_WR_REG_MR, .wr_id = 70 },
		.mr = mr,
		.access = REMOTE_ACCESS,
	};
	struct ib_sge sge = { .addr = (uintptr_t)c->src, .length = 3000,
			      .lkey = c->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = { .opcode = IB_WR_RDMA_WRITE, .wr_id = 71, .sg_list = &sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
	};
	struct ib_send_wr inv = { .wr_id = 73, .opcode = IB_WR_LOCAL_INV,
				  .send_flags = IB_SEND_SIGNALED };
	struct ib_wc wc;
	u32 old_rkey = mr->rkey, i;
	int err;

	c->sig_req = true;
	err = kv_pair(c);
	c->sig_req = false;
	if (err)
		return;
	/* VALID from the cases before: FREE it first */
	inv.ex.invalidate_rkey = mr->rkey;
	if (kv_post_expect(c, name, &c->a, &inv, IB_WC_SUCCESS,
			   IB_WC_LOCAL_INV) ||
	    kv_map(c, name, mr))
		return;
	kv_region_fill(c, 0);
	for (i = 0; i < 3000; i++)
		c->src[i] = (u8)(i + 11);
	reg.key = mr->rkey;
	reg.wr.next = &wr.wr;
	wr.remote_addr = mr->iova + 50;
	wr.rkey = mr->rkey;
	/* a posts to itself through b: the WRITE leaves a, lands via b */
	err = kv_post_send(&c->a, &reg.wr);
	if (err) {
		kv_fail(c, name, "post REG_MR + WRITE: %d", err);
		return;
	}
	if (kv_expect(c, name, &c->a, 71, IB_WC_SUCCESS, IB_WC_RDMA_WRITE, NULL))
		return;
	if (kv_poll_ms(&c->a, &wc, 300) != -ETIMEDOUT) {
		kv_fail(c, name, "a completion for the unsignaled REG_MR (wr_id %llu)",
			wc.wr_id);
		return;
	}
	for (i = 0; i < 3000; i++) {
		if (kv_region_byte(c, 50 + i) != (u8)(i + 11)) {
			kv_fail(c, name, "byte %u of the WRITE is %#x, want %#x",
				i, kv_region_byte(c, 50 + i), (u8)(i + 11));
			return;
		}
	}
	mr->rkey = old_rkey;
	err = kv_rdma(c, name, mr, IB_WR_RDMA_READ, 0, 64, 72,
		      IB_WC_REM_ACCESS_ERR);
	mr->rkey = reg.key;
	mr->lkey = reg.key;
	if (!err)
		kv_pass(c, name);
}

/*
 * A REG_MR that fails while the SEND before it is still unanswered (the
 * peer has no receive yet: RNR NAKs, infinite rnr_retry, resends): the
 * SEND chained after the REG_MR never starts, not even during those
 * resends, and is flushed once the first SEND completes.
 */
static void kv_case_reg_fail_halts(struct kv_ctx *c, struct ib_mr *mr)
{
	const char *name = "reg_mr_failure_halts_sq";
	struct ib_sge ssge = { .addr = (uintptr_t)c->src, .length = 32,
			       .lkey = c->pd->local_dma_lkey };
	struct ib_send_wr s1 = { .wr_id = 80, .opcode = IB_WR_SEND,
				 .sg_list = &ssge, .num_sge = 1 };
	struct ib_reg_wr reg = {
		.wr = { .opcode = IB_WR_REG_MR, .wr_id = 81 },
		.mr = mr,
		.access = REMOTE_ACCESS,
	};
	struct ib_send_wr s2 = { .wr_id = 82, .opcode = IB_WR_SEND,
				 .sg_list = &ssge, .num_sge = 1 };
	struct ib_sge rsge = { .addr = (uintptr_t)c->dst, .length = 256,
			       .lkey = c->pd->local_dma_lkey };
	struct ib_recv_wr rwr[2] = {
		{ .wr_id = 83, .sg_list = &rsge, .num_sge = 1, .next = &rwr[1] },
		{ .wr_id = 84, .sg_list = &rsge, .num_sge = 1 },
	};
	const struct ib_recv_wr *rbad;
	struct ib_wc wc;

	/* the MR is VALID from the previous case: this REG_MR must fail */
	if (kv_pair(c))
		return;
	reg.key = mr->rkey;
	s1.next = &reg.wr;
	reg.wr.next = &s2;
	if (kv_post_send(&c->a, &s1)) {
		kv_fail(c, name, "post SEND + REG_MR + SEND");
		return;
	}
	msleep(200);
	if (ib_post_recv(c->b.qp, rwr, &rbad)) {
		kv_fail(c, name, "post_recv");
		return;
	}
	if (kv_expect(c, name, &c->a, 80, IB_WC_SUCCESS, IB_WC_SEND, NULL) ||
	    kv_expect(c, name, &c->a, 81, IB_WC_LOC_QP_OP_ERR, IB_WC_REG_MR,
		      NULL) ||
	    kv_expect(c, name, &c->a, 82, IB_WC_WR_FLUSH_ERR, IB_WC_SEND, NULL) ||
	    kv_expect(c, name, &c->b, 83, IB_WC_SUCCESS, IB_WC_RECV, NULL))
		return;
	if (kv_poll_ms(&c->b, &wc, 500) != -ETIMEDOUT) {
		kv_fail(c, name, "the peer got wr_id %llu status %s: the SEND after the failed REG_MR ran",
			wc.wr_id, ib_wc_status_msg(wc.status));
		return;
	}
	kv_pass(c, name);
}

/*
 * Only a fast-registration key may be invalidated (o10-37.2.13), and the
 * reserved one may be neither registered nor invalidated (o10-37.2.8):
 * a REG_MR of the PD's local_dma_lkey region is refused at post.
 */
static void kv_case_inv_not_fast(struct kv_ctx *c)
{
	const char *name = "local_inv_of_dma_key";
	struct ib_send_wr inv = { .wr_id = 41, .opcode = IB_WR_LOCAL_INV };
	struct ib_reg_wr reg = {
		.wr = { .opcode = IB_WR_REG_MR, .wr_id = 40 },
		.access = REMOTE_ACCESS,
	};
	int err;

	if (kv_pair(c))
		return;
	reg.mr = c->pd->__internal_mr;
	if (!reg.mr || reg.mr->lkey != c->pd->local_dma_lkey) {
		kv_fail(c, name, "the PD's local_dma_lkey %#x has no region of ib_core's",
			c->pd->local_dma_lkey);
		return;
	}
	reg.key = reg.mr->lkey;
	err = kv_post_send(&c->a, &reg.wr);
	if (err != -EINVAL) {
		kv_fail(c, name, "post REG_MR of the reserved key: %d, want -EINVAL", err);
		return;
	}
	inv.ex.invalidate_rkey = c->pd->local_dma_lkey;
	if (kv_post_expect(c, name, &c->a, &inv, IB_WC_LOC_QP_OP_ERR,
			   IB_WC_LOCAL_INV))
		return;
	kv_pass(c, name);
}

/* kv_pair, of pd2 */
static int kv_pair_pd2(struct kv_ctx *c)
{
	int err;

	c->pair_pd = c->pd2;
	err = kv_pair(c);
	c->pair_pd = NULL;
	return err;
}

/* Every byte of the region is @v but [off, off + len), which holds @w. */
static int kv_region_check(struct kv_ctx *c, const char *name, u32 off,
			   u32 len, u8 w, u8 v)
{
	u32 i;

	for (i = 0; i < BUF_LEN; i++) {
		u8 want = i >= off && i - off < len ? w : v;

		if (kv_region_byte(c, i) != want) {
			kv_fail(c, name, "byte %u of the region is %#x, want %#x",
				i, kv_region_byte(c, i), want);
			return -EIO;
		}
	}
	return 0;
}

/*
 * Remote invalidation of another PD's key fails both ends and leaves the
 * key as it was (o10-37.2.24): mr2 is VALID in pd2 when a SEND with
 * Invalidate of it reaches a QP of pd; a WRITE through it lands after.
 */
static void kv_case_remote_inv_other_pd(struct kv_ctx *c)
{
	const char *name = "send_inv_other_pd";
	struct ib_sge rsge = { .addr = (uintptr_t)c->dst, .length = 256,
			       .lkey = c->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 50, .sg_list = &rsge, .num_sge = 1 };
	struct ib_sge ssge = { .addr = (uintptr_t)c->src, .length = 16,
			       .lkey = c->pd->local_dma_lkey };
	struct ib_send_wr swr = { .wr_id = 51, .opcode = IB_WR_SEND_WITH_INV,
				  .sg_list = &ssge, .num_sge = 1 };
	const struct ib_recv_wr *bad;
	struct ib_mr *mr2;

	mr2 = kv_alloc_mr(c, name, c->pd2, NPAGES);
	if (!mr2)
		return;
	if (kv_pair_pd2(c) || kv_fast_reg(c, name, mr2, REMOTE_ACCESS, 49) ||
	    kv_pair(c))
		goto out;
	if (ib_post_recv(c->a.qp, &rwr, &bad)) {
		kv_fail(c, name, "post_recv");
		goto out;
	}
	swr.ex.invalidate_rkey = mr2->rkey;
	if (kv_post_send(&c->b, &swr)) {
		kv_fail(c, name, "post SEND_WITH_INV");
		goto out;
	}
	if (kv_expect(c, name, &c->b, 51, IB_WC_REM_INV_REQ_ERR, IB_WC_SEND,
		      NULL) ||
	    kv_expect(c, name, &c->a, 50, IB_WC_REM_INV_REQ_ERR, IB_WC_RECV,
		      NULL))
		goto out;
	/* the refused key is still VALID: pd2's pair writes through it */
	if (kv_pair_pd2(c))
		goto out;
	kv_region_fill(c, 0);
	memset(c->src, 0x3c, 64);
	if (kv_rdma(c, name, mr2, IB_WR_RDMA_WRITE, 128, 64, 52,
		    IB_WC_SUCCESS) ||
	    kv_region_check(c, name, 128, 64, 0x3c, 0))
		goto out;
	kv_pass(c, name);
out:
	kv_pair_destroy(c);
	ib_dereg_mr(mr2);
}

/*
 * Fast registration of a key of another PD fails and leaves it FREE
 * (o10-37.2.5): a REG_MR of pd2's key on a QP of pd completes in error,
 * the key names no memory for pd2's pair, and the same REG_MR on pd2's QP
 * then works.
 */
static void kv_case_reg_other_pd(struct kv_ctx *c)
{
	const char *name = "reg_mr_other_pd";
	struct ib_reg_wr reg = {
		.wr = { .opcode = IB_WR_REG_MR, .wr_id = 90 },
		.access = REMOTE_ACCESS,
	};
	struct ib_mr *mr2;

	mr2 = kv_alloc_mr(c, name, c->pd2, NPAGES);
	if (!mr2)
		return;
	if (kv_pair(c) || kv_map(c, name, mr2))
		goto out;
	reg.mr = mr2;
	reg.key = mr2->rkey;
	if (kv_post_expect(c, name, &c->a, &reg.wr, IB_WC_LOC_QP_OP_ERR,
			   IB_WC_REG_MR))
		goto out;
	kv_region_fill(c, 0);
	memset(c->src, 0x77, 64);
	if (kv_pair_pd2(c) ||
	    kv_rdma(c, name, mr2, IB_WR_RDMA_WRITE, 0, 64, 91,
		    IB_WC_REM_ACCESS_ERR) ||
	    kv_region_check(c, name, 0, 0, 0, 0))
		goto out;
	if (kv_pair_pd2(c) || kv_fast_reg(c, name, mr2, REMOTE_ACCESS, 92) ||
	    kv_rdma(c, name, mr2, IB_WR_RDMA_WRITE, 0, 64, 93, IB_WC_SUCCESS) ||
	    kv_region_check(c, name, 0, 64, 0x77, 0))
		goto out;
	kv_pass(c, name);
out:
	kv_pair_destroy(c);
	ib_dereg_mr(mr2);
}

/*
 * A region no larger than the page list allocated for its key (o10-37.2.5):
 * a key of 2 pages maps 2 of 4, a REG_MR claiming 4 fails, and the region
 * registered from the 2 is refused a WRITE past them.
 */
static void kv_case_reg_past_list(struct kv_ctx *c)
{
	const char *name = "reg_mr_past_page_list";
	struct ib_reg_wr reg = {
		.wr = { .opcode = IB_WR_REG_MR, .wr_id = 95 },
		.access = REMOTE_ACCESS,
	};
	struct ib_mr *mr3;
	int n;

	mr3 = kv_alloc_mr(c, name, c->pd, 2);
	if (!mr3)
		return;
	n = ib_map_mr_sg(mr3, c->sgl, NPAGES, NULL, PAGE_SIZE);
	if (n != 2 || mr3->length != 2 * PAGE_SIZE) {
		kv_fail(c, name, "a 2-page key mapped %d of %d pages, %llu bytes",
			n, NPAGES, mr3->length);
		goto out;
	}
	ib_update_fast_reg_key(mr3, (mr3->rkey & 0xff) + 1);
	if (kv_pair(c))
		goto out;
	reg.mr = mr3;
	reg.key = mr3->rkey;
	/* a REG_MR takes the length the consumer left in the MR at post */
	mr3->length = BUF_LEN;
	if (kv_post_expect(c, name, &c->a, &reg.wr, IB_WC_LOC_QP_OP_ERR,
			   IB_WC_REG_MR))
		goto out;
	mr3->length = 2 * PAGE_SIZE;
	reg.wr.wr_id = 96;
	if (kv_pair(c) ||
	    kv_post_expect(c, name, &c->a, &reg.wr, IB_WC_SUCCESS,
			   IB_WC_REG_MR))
		goto out;
	kv_region_fill(c, 0);
	memset(c->src, 0x66, PAGE_SIZE);
	/* its 64 bytes end 32 past the region's: nothing lands */
	if (kv_rdma(c, name, mr3, IB_WR_RDMA_WRITE, 2 * PAGE_SIZE - 32, 64,
		    97, IB_WC_REM_ACCESS_ERR) ||
	    kv_region_check(c, name, 0, 0, 0, 0))
		goto out;
	if (kv_pair(c) ||
	    kv_rdma(c, name, mr3, IB_WR_RDMA_WRITE, PAGE_SIZE, PAGE_SIZE, 98,
		    IB_WC_SUCCESS) ||
	    kv_region_check(c, name, PAGE_SIZE, PAGE_SIZE, 0x66, 0))
		goto out;
	kv_pass(c, name);
out:
	kv_pair_destroy(c);
	ib_dereg_mr(mr3);
}

/*
 * The key byte a consumer chose for a fast registration is the L_Key's
 * too (o10-37.2.1, o10-37.2.2): a SEND gathers from the region through the
 * new L_Key, and the L_Key of the registration before it is refused.
 */
static void kv_case_lkey_new_byte(struct kv_ctx *c)
{
	const char *name = "reg_mr_new_key_as_lkey";
	struct ib_send_wr inv = { .wr_id = 111, .opcode = IB_WR_LOCAL_INV };
	struct ib_sge rsge = { .addr = (uintptr_t)c->dst, .length = 4096,
			       .lkey = c->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 112, .sg_list = &rsge,
				  .num_sge = 1 };
	struct ib_sge ssge = { .length = 3000 };
	struct ib_send_wr swr = { .wr_id = 113, .opcode = IB_WR_SEND,
				  .sg_list = &ssge, .num_sge = 1 };
	const struct ib_recv_wr *bad;
	struct ib_mr *mr4;
	struct ib_wc wc;
	u32 old_lkey, i;

	mr4 = kv_alloc_mr(c, name, c->pd, NPAGES);
	if (!mr4)
		return;
	if (kv_pair(c) || kv_fast_reg(c, name, mr4, REMOTE_ACCESS, 110))
		goto out;
	old_lkey = mr4->lkey;
	inv.ex.invalidate_rkey = mr4->rkey;
	if (kv_post_expect(c, name, &c->a, &inv, IB_WC_SUCCESS,
			   IB_WC_LOCAL_INV) ||
	    kv_fast_reg(c, name, mr4, REMOTE_ACCESS, 110))
		goto out;
	if (mr4->lkey == old_lkey || (mr4->lkey >> 8) != (old_lkey >> 8)) {
		kv_fail(c, name, "L_Key %#x after %#x: want a new key byte, the same index",
			mr4->lkey, old_lkey);
		goto out;
	}
	for (i = 0; i < BUF_LEN; i++)
		((u8 *)page_address(c->pages[i / PAGE_SIZE]))[i % PAGE_SIZE] =
			(u8)(i * 5 + 1);
	memset(c->dst, 0, 4096);
	ssge.addr = mr4->iova + 700;
	ssge.lkey = mr4->lkey;
	if (ib_post_recv(c->b.qp, &rwr, &bad) || kv_post_send(&c->a, &swr)) {
		kv_fail(c, name, "post");
		goto out;
	}
	if (kv_expect(c, name, &c->a, 113, IB_WC_SUCCESS, IB_WC_SEND, NULL) ||
	    kv_expect(c, name, &c->b, 112, IB_WC_SUCCESS, IB_WC_RECV, &wc))
		goto out;
	for (i = 0; i < 3000; i++) {
		if (c->dst[i] != (u8)((700 + i) * 5 + 1)) {
			kv_fail(c, name, "received byte %u is %#x, want %#x",
				i, c->dst[i], (u8)((700 + i) * 5 + 1));
			goto out;
		}
	}
	if (wc.byte_len != 3000 || c->dst[3000]) {
		kv_fail(c, name, "received %u bytes, want 3000", wc.byte_len);
		goto out;
	}
	/* the previous key byte names no memory now */
	memset(c->dst, 0, 4096);
	ssge.lkey = old_lkey;
	swr.wr_id = 114;
	rwr.wr_id = 115;
	if (ib_post_recv(c->b.qp, &rwr, &bad) || kv_post_send(&c->a, &swr)) {
		kv_fail(c, name, "post");
		goto out;
	}
	if (kv_expect(c, name, &c->a, 114, IB_WC_LOC_PROT_ERR, IB_WC_SEND,
		      NULL))
		goto out;
	if (kv_poll_ms(&c->b, &wc, 300) != -ETIMEDOUT) {
		kv_fail(c, name, "the peer got wr_id %llu %s: the SEND left through a stale L_Key",
			wc.wr_id, ib_wc_status_msg(wc.status));
		goto out;
	}
	if (c->dst[0]) {
		kv_fail(c, name, "the receive buffer changed: the SEND left through a stale L_Key");
		goto out;
	}
	kv_pass(c, name);
out:
	kv_pair_destroy(c);
	ib_dereg_mr(mr4);
}

/* ib_map_mr_sg of 3 pages of @c, the first @len0 long, the second from @off1. */
static int kv_map3(struct kv_ctx *c, struct ib_mr *mr, u32 len0, u32 off1,
		   unsigned int page_size)
{
	struct scatterlist sg[3];
	int n;

	sg_init_table(sg, 3);
	sg_set_page(&sg[0], c->pages[0], len0, 0);
	sg_set_page(&sg[1], c->pages[1], PAGE_SIZE - off1, off1);
	sg_set_page(&sg[2], c->pages[2], PAGE_SIZE, 0);
	if (ib_dma_map_sg(c->dev, sg, 3, DMA_BIDIRECTIONAL) != 3)
		return -ENOMEM;
	n = ib_map_mr_sg(mr, sg, 3, NULL, page_size);
	ib_dma_unmap_sg(c->dev, sg, 3, DMA_BIDIRECTIONAL);
	return n;
}

/*
 * A fast-registration page list takes only whole pages (C10-53.2.1): an
 * element that starts past a page boundary, or one that ends before it
 * with another behind, ends the list there, and a page size the device
 * does not support is refused.  Whole pages map whole.
 */
static void kv_case_map_misaligned(struct kv_ctx *c)
{
	const char *name = "map_mr_sg_page_boundaries";
	struct ib_mr *m;
	int n;

	m = kv_alloc_mr(c, name, c->pd, NPAGES);
	if (!m)
		return;
	n = kv_map3(c, m, PAGE_SIZE, 256, PAGE_SIZE);
	if (n != 1 || m->length != PAGE_SIZE) {
		kv_fail(c, name, "an element starting 256 bytes into its page: mapped %d of 3, %llu bytes; want 1, one page",
			n, m->length);
		goto out;
	}
	n = kv_map3(c, m, 2048, 0, PAGE_SIZE);
	if (n != 1 || m->length != 2048) {
		kv_fail(c, name, "a first element ending mid-page: mapped %d of 3, %llu bytes; want 1, 2048 bytes",
			n, m->length);
		goto out;
	}
	n = kv_map3(c, m, PAGE_SIZE, 0, 2048);
	if (n != -EINVAL) {
		kv_fail(c, name, "a 2048-byte page size: %d, want -EINVAL", n);
		goto out;
	}
	n = kv_map3(c, m, PAGE_SIZE, 0, PAGE_SIZE);
	if (n != 3 || m->length != 3 * PAGE_SIZE) {
		kv_fail(c, name, "3 whole pages: mapped %d, %llu bytes", n,
			m->length);
		goto out;
	}
	kv_pass(c, name);
out:
	ib_dereg_mr(m);
}

/*
 * Two regions over the same pages are invalidated one at a time
 * (o10-37.2.13): LOCAL_INV of one refuses its key and leaves the other's
 * working, over the same bytes.
 */
static void kv_case_inv_overlap(struct kv_ctx *c)
{
	const char *name = "local_inv_overlapping_regions";
	struct ib_send_wr inv = { .wr_id = 131, .opcode = IB_WR_LOCAL_INV };
	struct ib_mr *m1, *m2;

	m1 = kv_alloc_mr(c, name, c->pd, NPAGES);
	if (!m1)
		return;
	m2 = kv_alloc_mr(c, name, c->pd, NPAGES);
	if (!m2) {
		ib_dereg_mr(m1);
		return;
	}
	if (kv_pair(c) || kv_fast_reg(c, name, m1, REMOTE_ACCESS, 130) ||
	    kv_fast_reg(c, name, m2, REMOTE_ACCESS, 130))
		goto out;
	inv.ex.invalidate_rkey = m1->rkey;
	if (kv_post_expect(c, name, &c->a, &inv, IB_WC_SUCCESS,
			   IB_WC_LOCAL_INV))
		goto out;
	kv_region_fill(c, 0);
	memset(c->src, 0x4d, 256);
	if (kv_rdma(c, name, m2, IB_WR_RDMA_WRITE, 300, 256, 132,
		    IB_WC_SUCCESS) ||
	    kv_region_check(c, name, 300, 256, 0x4d, 0))
		goto out;
	memset(c->src, 0x4e, 256);
	if (kv_rdma(c, name, m1, IB_WR_RDMA_WRITE, 300, 256, 133,
		    IB_WC_REM_ACCESS_ERR) ||
	    kv_region_check(c, name, 300, 256, 0x4d, 0))
		goto out;
	kv_pass(c, name);
out:
	kv_pair_destroy(c);
	ib_dereg_mr(m2);
	ib_dereg_mr(m1);
}

/*
 * A QP on a shared receive queue of another PD (o10-37.2.12): its receive
 * SGEs are checked against the SRQ's PD, its send SGEs against its own.
 */
static void kv_case_srq_pd(struct kv_ctx *c)
{
	const char *name = "srq_recv_pd";
	struct ib_srq_init_attr sattr = {
		.srq_type = IB_SRQT_BASIC,
		.attr = { .max_wr = 8, .max_sge = 1 },
	};
	struct ib_sge rsge = { .addr = (uintptr_t)c->dst, .length = 256,
			       .lkey = c->pd2->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 120, .sg_list = &rsge,
				  .num_sge = 1 };
	struct ib_sge ssge = { .addr = (uintptr_t)c->src, .length = 200,
			       .lkey = c->pd->local_dma_lkey };
	struct ib_send_wr swr = { .wr_id = 121, .opcode = IB_WR_SEND,
				  .sg_list = &ssge, .num_sge = 1 };
	const struct ib_recv_wr *bad;
	struct ib_srq *srq;
	struct ib_wc wc;
	int err, i;

	srq = ib_create_srq(c->pd2, &sattr);
	if (IS_ERR(srq)) {
		kv_fail(c, name, "ib_create_srq: %ld", PTR_ERR(srq));
		return;
	}
	c->srq = srq;
	err = kv_pair(c);
	c->srq = NULL;
	if (err)
		goto out;
	for (i = 0; i < 200; i++)
		c->src[i] = (u8)(i ^ 0x5a);
	memset(c->dst, 0, 2048);
	/* a receive SGE of the SRQ's PD: the SEND lands */
	if (ib_post_srq_recv(srq, &rwr, &bad) || kv_post_send(&c->b, &swr)) {
		kv_fail(c, name, "post");
		goto out;
	}
	if (kv_expect(c, name, &c->b, 121, IB_WC_SUCCESS, IB_WC_SEND, NULL) ||
	    kv_expect(c, name, &c->a, 120, IB_WC_SUCCESS, IB_WC_RECV, &wc))
		goto out;
	if (wc.byte_len != 200 || memcmp(c->dst, c->src, 200)) {
		kv_fail(c, name, "received %u bytes, not the 200 sent", wc.byte_len);
		goto out;
	}
	/* the send queue gathers through the QP's own PD */
	rsge.addr = (uintptr_t)c->dst + 1024;
	rsge.lkey = c->pd->local_dma_lkey;
	rwr.wr_id = 122;
	swr.wr_id = 123;
	ssge.length = 100;
	if (ib_post_recv(c->b.qp, &rwr, &bad) || kv_post_send(&c->a, &swr)) {
		kv_fail(c, name, "post");
		goto out;
	}
	if (kv_expect(c, name, &c->a, 123, IB_WC_SUCCESS, IB_WC_SEND, NULL) ||
	    kv_expect(c, name, &c->b, 122, IB_WC_SUCCESS, IB_WC_RECV, NULL))
		goto out;
	if (memcmp(c->dst + 1024, c->src, 100)) {
		kv_fail(c, name, "a's SEND did not land");
		goto out;
	}
	/* a receive SGE of the QP's PD, not the SRQ's: refused, nothing lands */
	rsge.addr = (uintptr_t)c->dst + 512;
	rwr.wr_id = 124;
	swr.wr_id = 125;
	if (ib_post_srq_recv(srq, &rwr, &bad) || kv_post_send(&c->b, &swr)) {
		kv_fail(c, name, "post");
		goto out;
	}
	if (kv_expect(c, name, &c->a, 124, IB_WC_LOC_PROT_ERR, IB_WC_RECV,
		      NULL) ||
	    kv_expect(c, name, &c->b, 125, IB_WC_REM_OP_ERR, IB_WC_SEND, NULL))
		goto out;
	for (i = 512; i < 1024; i++) {
		if (c->dst[i]) {
			kv_fail(c, name, "byte %d of the refused receive buffer changed", i - 512);
			goto out;
		}
	}
	/* a send SGE of the SRQ's PD: refused */
	c->srq = srq;
	err = kv_pair(c);
	c->srq = NULL;
	if (err)
		goto out;
	ssge.lkey = c->pd2->local_dma_lkey;
	swr.wr_id = 126;
	if (kv_post_expect(c, name, &c->a, &swr, IB_WC_LOC_PROT_ERR,
			   IB_WC_SEND))
		goto out;
	kv_pass(c, name);
out:
	kv_pair_destroy(c);
	ib_destroy_srq(srq);
}

/* The new key may differ in its low 8 bits only: post_send refuses it. */
static void kv_case_reg_bad_key(struct kv_ctx *c, struct ib_mr *mr)
{
	const char *name = "reg_mr_foreign_key";
	struct ib_reg_wr reg = {
		.wr = { .opcode = IB_WR_REG_MR, .wr_id = 61 },
		.mr = mr,
		.access = REMOTE_ACCESS,
	};

	if (kv_pair(c))
		return;
	reg.key = mr->rkey + 0x100;
	if (kv_post_send(&c->a, &reg.wr) != -EINVAL) {
		kv_fail(c, name, "post_send took a key of another MR");
		return;
	}
	kv_pass(c, name);
}

/*
 * A kernel CQ resized while the engine is still adding completions to it
 * (10.2.6.3): each round posts 16 WRITEs, resizes b's CQ at once (to a
 * size that still holds them), then every completion must come, in order.
 */
static void kv_case_cq_resize(struct kv_ctx *c, struct ib_mr *mr)
{
	static const int sizes[] = { 16, 64, 24, 256, 17, 32 };
	const char *name = "kernel_cq_resize_in_flight";
	struct ib_send_wr inv = { .wr_id = 9, .opcode = IB_WR_LOCAL_INV };
	struct ib_sge sge = { .addr = (uintptr_t)c->src, .length = 64,
			      .lkey = c->pd->local_dma_lkey };
	struct ib_rdma_wr wr = {
		.wr = { .opcode = IB_WR_RDMA_WRITE, .sg_list = &sge,
			.num_sge = 1 },
	};
	int round, i, err;

	if (kv_pair(c) || kv_fast_reg(c, name, mr, REMOTE_ACCESS, 1))
		return;
	for (round = 0; round < 12; round++) {
		int size = sizes[round % ARRAY_SIZE(sizes)];

		for (i = 0; i < 16; i++) {
			wr.wr.wr_id = 1000 + round * 16 + i;
			wr.remote_addr = mr->iova + i * 64;
			wr.rkey = mr->rkey;
			err = kv_post_send(&c->b, &wr.wr);
			if (err) {
				kv_fail(c, name, "round %d: post WRITE %d: %d", round, i, err);
				return;
			}
		}
		err = ib_resize_cq(c->b.cq, size);
		if (err || c->b.cq->cqe < size) {
			kv_fail(c, name, "round %d: resize to %d: %d (cqe %d)",
				round, size, err, c->b.cq->cqe);
			return;
		}
		for (i = 0; i < 16; i++)
			if (kv_expect(c, name, &c->b, 1000 + round * 16 + i,
				      IB_WC_SUCCESS, IB_WC_RDMA_WRITE, NULL))
				return;
	}
	inv.ex.invalidate_rkey = mr->rkey;
	if (kv_post_expect(c, name, &c->a, &inv, IB_WC_SUCCESS,
			   IB_WC_LOCAL_INV))
		return;
	kv_pass(c, name);
}

/* A UD QP from Reset through INIT and RTR to RTS. */
static int kv_ud_up(struct ib_qp *qp)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT, .port_num = 1, .qkey = 0x11111111,
	};
	int err;

	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	if (err)
		return err;
	attr.qp_state = IB_QPS_RTR;
	err = ib_modify_qp(qp, &attr, IB_QP_STATE);
	if (err)
		return err;
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = 7;
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN);
}

/* A UD QP of its own CQ, in RTS. */
static int kv_ud_create(struct kv_ctx *c, struct kv_qp *q, u32 flags)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_UD,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.create_flags = flags,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int err;

	q->cq = ib_alloc_cq(c->dev, NULL, 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(q->cq)) {
		err = PTR_ERR(q->cq);
		q->cq = NULL;
		return err;
	}
	init.send_cq = q->cq;
	init.recv_cq = q->cq;
	q->qp = ib_create_qp(c->pd, &init);
	if (IS_ERR(q->qp)) {
		err = PTR_ERR(q->qp);
		q->qp = NULL;
		return err;
	}
	return kv_ud_up(q->qp);
}

/*
 * The datagrams @q receives: up to @want within 5 s, then any more within
 * 0.5 s; each must be the 64 bytes of @v from QP @src_qpn.  Returns their
 * number, or -1 (failed).
 */
static int kv_ud_count(struct kv_ctx *c, const char *name, struct kv_qp *q,
		       u8 *buf, u32 src_qpn, u8 v, int want)
{
	struct ib_wc wc;
	int n = 0;

	while (!kv_poll_ms(q, &wc, n < want ? 5000 : 500)) {
		u8 *got = buf + (wc.wr_id & 1) * 256 + sizeof(struct ib_grh);

		if (wc.status != IB_WC_SUCCESS || wc.opcode != IB_WC_RECV ||
		    wc.byte_len != 64 + sizeof(struct ib_grh) ||
		    wc.src_qp != src_qpn || memchr_inv(got, v, 64)) {
			kv_fail(c, name, "datagram wr_id %llu: status %s opcode %d byte_len %u src_qp %u, want 104 bytes of 0x%x from %u",
				wc.wr_id, ib_wc_status_msg(wc.status), wc.opcode,
				wc.byte_len, wc.src_qp, v, src_qpn);
			return -1;
		}
		n++;
	}
	return n;
}

/* Only UD takes IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK: an RC QP gets -EINVAL. */
static noinline int kv_mcast_block_rc_refused(struct kv_ctx *c, const char *name)
{
	struct ib_qp_init_attr rc = {
		.qp_type = IB_QPT_RC,
		.create_flags = IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_qp *qp;

	rc.send_cq = rc.recv_cq = ib_alloc_cq(c->dev, NULL, 4, 0, IB_POLL_DIRECT);
	if (IS_ERR(rc.send_cq)) {
		kv_fail(c, name, "CQ: %ld", PTR_ERR(rc.send_cq));
		return -1;
	}
	qp = ib_create_qp(c->pd, &rc);
	if (!IS_ERR(qp) || PTR_ERR(qp) != -EINVAL) {
		kv_fail(c, name, "RC QP with the flag: %ld, want -EINVAL",
			IS_ERR(qp) ? PTR_ERR(qp) : 0L);
		if (!IS_ERR(qp))
			ib_destroy_qp(qp);
		ib_free_cq(rc.send_cq);
		return -1;
	}
	ib_free_cq(rc.send_cq);
	return 0;
}

/*
 * One round of kv_case_mcast_block_self: QP @round of @q sends a datagram
 * to the group; @want[i] copies of it must reach QP i.  Both QPs end the
 * round in Reset.  Returns 0, or -1 (failed).
 */
static noinline int kv_mcast_block_round(struct kv_ctx *c, const char *name,
					 struct kv_qp *q, struct ib_ah *ah,
					 int round, const int *want)
{
	u8 v = 0x60 + round;
	struct ib_sge sge = { .addr = (uintptr_t)c->src, .length = 64,
			      .lkey = c->pd->local_dma_lkey };
	struct ib_ud_wr wr = {
		.wr = { .wr_id = 50 + round, .opcode = IB_WR_SEND,
			.sg_list = &sge, .num_sge = 1 },
		.ah = ah, .remote_qpn = 0xffffff,
		.remote_qkey = 0x11111111,
	};
	struct ib_qp_attr ra = { .qp_state = IB_QPS_RESET };
	const struct ib_recv_wr *rbad;
	int i, k, n, err;

	memset(c->dst, 0, 1024);
	for (i = 0; i < 2; i++) {
		for (k = 0; k < 2; k++) {
			struct ib_sge rs = {
				.addr = (uintptr_t)c->dst + i * 512 + k * 256,
				.length = 256,
				.lkey = c->pd->local_dma_lkey,
			};
			struct ib_recv_wr rwr = { .wr_id = k, .sg_list = &rs,
						  .num_sge = 1 };

			err = ib_post_recv(q[i].qp, &rwr, &rbad);
			if (err) {
				kv_fail(c, name, "post_recv: %d", err);
				return -1;
			}
		}
	}
	memset(c->src, v, 64);
	if (kv_post_send(&q[round], &wr.wr) ||
	    kv_expect(c, name, &q[round], 50 + round, IB_WC_SUCCESS,
		      IB_WC_SEND, NULL))
		return -1;
	for (i = 0; i < 2; i++) {
		n = kv_ud_count(c, name, &q[i], c->dst + i * 512,
				q[round].qp->qp_num, v, want[i]);
		if (n < 0)
			return -1;
		if (n != want[i]) {
			kv_fail(c, name, "QP %d (%s) sent; QP %d (%s) received %d copies, want %d",
				round, round ? "not blocked" : "blocked", i,
				i ? "not blocked" : "blocked", n, want[i]);
			return -1;
		}
	}
	/* the receive WQE left over by a one-copy round */
	for (i = 0; i < 2; i++) {
		ib_modify_qp(q[i].qp, &ra, IB_QP_STATE);
		while (ib_poll_cq(q[i].cq, 1, &(struct ib_wc){}) > 0)
			;
	}
	return 0;
}

/* The blocked QP was created so and says so when queried. */
static noinline int kv_mcast_block_queried(struct kv_ctx *c, const char *name,
					   struct ib_qp *qp)
{
	struct ib_qp_init_attr qia;
	struct ib_qp_attr qa;
	int err;

	err = ib_query_qp(qp, &qa, 0, &qia);
	if (err || qia.create_flags != IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK) {
		kv_fail(c, name, "query: %d, create_flags 0x%x", err, qia.create_flags);
		return -1;
	}
	return 0;
}

/*
 * IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK (a kernel ULP's flag; librxe
 * passes no create flags): a UD QP created with it gets none of its own
 * datagrams to a group it is attached to, while the other attached QP
 * does; without it, the sender gets its own (o10-36).  Only UD takes it.
 */
static void kv_case_mcast_block_self(struct kv_ctx *c)
{
	const char *name = "kernel_mcast_block_self_loopback";
	union ib_gid mgid = { .raw = { [10] = 0xff, [11] = 0xff,
				       239, 7, 7, 9 } };
	/* round 0: the blocked QP 0 sends; round 1: QP 1, not blocked */
	static const int want[2][2] = { { 0, 1 }, { 1, 1 } };
	struct kv_qp q[2] = {};
	struct rdma_ah_attr ah_attr = {};
	struct ib_ah *ah = NULL;
	bool att[2] = {};
	int i, round, err;

	if (!(c->dev->attrs.kernel_cap_flags & IBK_BLOCK_MULTICAST_LOOPBACK)) {
		kv_fail(c, name, "IBK_BLOCK_MULTICAST_LOOPBACK not advertised");
		return;
	}
	if (kv_mcast_block_rc_refused(c, name))
		return;
	err = kv_ud_create(c, &q[0], IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK) ?:
	      kv_ud_create(c, &q[1], 0);
	if (err) {
		kv_fail(c, name, "UD QPs: %d", err);
		goto out;
	}
	if (kv_mcast_block_queried(c, name, q[0].qp))
		goto out;
	for (i = 0; i < 2; i++) {
		err = ib_attach_mcast(q[i].qp, &mgid, 0);
		if (err) {
			kv_fail(c, name, "attach QP %d: %d", i, err);
			goto out;
		}
		att[i] = true;
	}
	ah_attr.type = rdma_ah_find_type(c->dev, 1);
	rdma_ah_set_port_num(&ah_attr, 1);
	rdma_ah_set_grh(&ah_attr, &mgid, 0, c->sgid_index, 1, 0);
	ah = rdma_create_ah(c->pd, &ah_attr, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ah)) {
		kv_fail(c, name, "AH: %ld", PTR_ERR(ah));
		ah = NULL;
		goto out;
	}
	for (round = 0; round < 2; round++) {
		if (kv_mcast_block_round(c, name, q, ah, round, want[round]))
			goto out;
		for (i = 0; i < 2 && round == 0; i++) {
			err = kv_ud_up(q[i].qp);
			if (err) {
				kv_fail(c, name, "QP %d back to RTS: %d", i, err);
				goto out;
			}
		}
	}
	kv_pass(c, name);
out:
	if (ah)
		rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
	for (i = 0; i < 2; i++) {
		if (att[i])
			ib_detach_mcast(q[i].qp, &mgid, 0);
		kv_qp_destroy(&q[i]);
	}
}

/* WRs after the one whose completion is lost: before a fails, and after */
#define KV_OVF_EARLY	8
#define KV_OVF_LATE	4

/* What a's CQ gave ib_drain_qp()'s direct polling, in order. */
static struct {
	struct ib_cqe *cqes;
	int n, k[256];
	enum ib_wc_status st[256];
} kv_ovf;

static void kv_ovf_done(struct ib_cq *cq, struct ib_wc *wc)
{
	if (kv_ovf.n < ARRAY_SIZE(kv_ovf.k)) {
		kv_ovf.k[kv_ovf.n] = wc->wr_cqe - kv_ovf.cqes;
		kv_ovf.st[kv_ovf.n] = wc->status;
	}
	kv_ovf.n++;
}

/* a's WR @i; @wait: a full send queue is waited out, not an error */
static int kv_ovf_post(struct kv_ctx *c, struct ib_rdma_wr *wr, int i,
		       bool wait)
{
	int tries, err;

	kv_ovf.cqes[i].done = kv_ovf_done;
	wr->wr.wr_cqe = &kv_ovf.cqes[i];
	for (tries = 0; tries < 1000; tries++) {
		err = kv_post_send(&c->a, &wr->wr);
		if (err != -ENOMEM || !wait)
			break;
		usleep_range(500, 1000);
	}
	return err;
}

/*
 * A kernel consumer's CQ that overflows (C10-144): a's CQ, never polled,
 * takes signaled zero-length WRITEs until it is full.  The QP whose
 * completion was lost goes to Error.  The consumer then drains before it
 * polls, as a ULP tearing down does: the flushes of the later WRs, and of
 * the drain's own, wait for room rather than be lost, so ib_drain_qp()
 * returns, and its polling finds the first cqe WRs' successes, then every
 * later WR's completion, each once, in order: all but the one lost.  Those
 * the responder had acknowledged may report success, the rest (at least
 * the KV_OVF_LATE posted after the QP failed) are flushed.  Every WR
 * carries a wr_cqe, as the drain's polling calls ->done on what it finds.
 */
static void kv_case_cq_overflow_drain(struct kv_ctx *c)
{
	const char *name = "cq_overflow_qp_err_drain";
	struct ib_rdma_wr wr = {
		.wr = { .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED },
	};
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	int i, cqe, want, posted, tries, nwr, err = 0;
	bool flushed, ok;
	struct ib_wc wc;

	if (kv_pair(c)) {
		kv_fail(c, name, "setup");
		return;
	}
	cqe = c->a.cq->cqe;
	/* the WRs after the lost one fit a's send queue while they wait */
	nwr = cqe + KV_OVF_EARLY + KV_OVF_LATE;
	memset(&kv_ovf, 0, sizeof(kv_ovf));
	kv_ovf.cqes = kcalloc(nwr, sizeof(*kv_ovf.cqes), GFP_KERNEL);
	if (!kv_ovf.cqes) {
		kv_fail(c, name, "no memory");
		goto free;
	}
	if (nwr > ARRAY_SIZE(kv_ovf.k)) {
		kv_fail(c, name, "%d WRs, more than the %zu the log holds",
			nwr, ARRAY_SIZE(kv_ovf.k));
		goto free;
	}
	for (i = 0; i < nwr - KV_OVF_LATE; i++) {
		err = kv_ovf_post(c, &wr, i, true);
		if (err)
			break;
	}
	posted = i;
	/* the QP went to Error at the completion its CQ had no room for */
	for (tries = 0; tries < 500; tries++) {
		if (ib_query_qp(c->a.qp, &attr, IB_QP_STATE, &init) ||
		    attr.qp_state == IB_QPS_ERR)
			break;
		usleep_range(5000, 10000);
	}
	if (posted != nwr - KV_OVF_LATE || attr.qp_state != IB_QPS_ERR) {
		kv_fail(c, name, "a in state %d after %d of %d WRITEs into a CQ of %d (post: %d), want ERR",
			attr.qp_state, posted, nwr - KV_OVF_LATE, cqe, err);
		goto destroy;
	}
	/* posted in Error: these are flushed */
	for (; i < nwr; i++) {
		err = kv_ovf_post(c, &wr, i, false);
		if (err) {
			kv_fail(c, name, "post in ERR: %d", err);
			goto destroy;
		}
	}
	/* returns only if the drain WRs' flush completions land */
	ib_drain_qp(c->a.qp);
	if (ib_poll_cq(c->a.cq, 1, &wc)) {
		kv_fail(c, name, "a completion after the drain: %s",
			ib_wc_status_msg(wc.status));
		goto free;
	}
	if (kv_ovf.n != nwr - 1) {
		kv_fail(c, name, "the drain polled %d completions of %d WRITEs into a CQ of %d, want %d",
			kv_ovf.n, nwr, cqe, nwr - 1);
		goto free;
	}
	for (i = 0, flushed = false; i < kv_ovf.n; i++) {
		/* WR cqe found the CQ full: its completion is the lost one */
		want = i < cqe ? i : i + 1;
		/* a later WR the responder had acknowledged may report success */
		ok = kv_ovf.st[i] == IB_WC_SUCCESS ?
		     !flushed && want < nwr - KV_OVF_LATE :
		     kv_ovf.st[i] == IB_WC_WR_FLUSH_ERR && i >= cqe;
		if (kv_ovf.k[i] != want || !ok) {
			kv_fail(c, name, "completion %d: WR %d %s, want WR %d %s",
				i, kv_ovf.k[i], ib_wc_status_msg(kv_ovf.st[i]),
				want, i < cqe ? "success" :
				flushed || want >= nwr - KV_OVF_LATE ? "flushed" :
				"success or flushed");
			goto free;
		}
		flushed |= kv_ovf.st[i] != IB_WC_SUCCESS;
	}

	kv_pass(c, name);
	goto free;
destroy:
	/* nothing may point into the cqes once they are freed */
	kv_qp_destroy(&c->a);
free:
	kfree(kv_ovf.cqes);
	kv_ovf.cqes = NULL;
}

static int kv_buffers(struct kv_ctx *c)
{
	int i;

	sg_init_table(c->sgl, NPAGES);
	/* separate pages, in reverse order: the page list must keep them apart */
	for (i = NPAGES - 1; i >= 0; i--) {
		c->pages[i] = alloc_page(GFP_KERNEL);
		if (!c->pages[i])
			return -ENOMEM;
		sg_set_page(&c->sgl[i], c->pages[i], PAGE_SIZE, 0);
	}
	if (ib_dma_map_sg(c->dev, c->sgl, NPAGES, DMA_BIDIRECTIONAL) != NPAGES)
		return -EIO;
	c->src = kzalloc(BUF_LEN, GFP_KERNEL);
	c->dst = kzalloc(BUF_LEN, GFP_KERNEL);
	return c->src && c->dst ? 0 : -ENOMEM;
}

static void kv_cleanup(struct kv_ctx *c)
{
	int i;

	kv_pair_destroy(c);
	if (c->pages[0])
		ib_dma_unmap_sg(c->dev, c->sgl, NPAGES, DMA_BIDIRECTIONAL);
	for (i = 0; i < NPAGES; i++)
		if (c->pages[i])
			__free_page(c->pages[i]);
	kfree(c->src);
	kfree(c->dst);
	if (c->pd2)
		ib_dealloc_pd(c->pd2);
	if (c->pd)
		ib_dealloc_pd(c->pd);
	ib_device_put(c->dev);
}

static int __init sroce_kverbs_init(void)
{
	struct kv_ctx *c;
	struct ib_mr *mr;
	int err;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->dev = ib_device_get_by_name(kv_dev_name, RDMA_DRIVER_UNKNOWN);
	if (!c->dev) {
		pr_err("sroce_kverbs: no RDMA device %s\n", kv_dev_name);
		kfree(c);
		return -ENODEV;
	}
	err = kv_find_gid(c);
	if (err) {
		pr_err("sroce_kverbs: %s has no RoCE v2 IPv4 GID\n", kv_dev_name);
		goto out;
	}
	if (!(c->dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS)) {
		kv_fail(c, "caps", "IB_DEVICE_MEM_MGT_EXTENSIONS not advertised");
		err = -EIO;
		goto out;
	}
	c->pd = ib_alloc_pd(c->dev, 0);
	c->pd2 = ib_alloc_pd(c->dev, 0);
	if (IS_ERR(c->pd) || IS_ERR(c->pd2)) {
		err = IS_ERR(c->pd) ? PTR_ERR(c->pd) : PTR_ERR(c->pd2);
		if (IS_ERR(c->pd))
			c->pd = NULL;
		if (IS_ERR(c->pd2))
			c->pd2 = NULL;
		goto out;
	}
	err = kv_buffers(c);
	if (err)
		goto out;
	mr = ib_alloc_mr(c->pd, IB_MR_TYPE_MEM_REG, NPAGES);
	if (IS_ERR(mr)) {
		err = PTR_ERR(mr);
		goto out;
	}
	kv_case_write_read(c, mr);
	kv_case_atomic_write(c, mr);
	kv_case_cq_resize(c, mr);
	kv_case_send_inv(c, mr);
	kv_case_local_inv(c, mr);
	kv_case_inv_midway(c);
	kv_case_reg_valid(c, mr);
	kv_case_reg_fail_halts(c, mr);
	kv_case_reg_chain(c, mr);
	kv_case_inv_not_fast(c);
	kv_case_remote_inv_other_pd(c);
	kv_case_reg_other_pd(c);
	kv_case_reg_past_list(c);
	kv_case_lkey_new_byte(c);
	kv_case_srq_pd(c);
	kv_case_inv_overlap(c);
	kv_case_map_misaligned(c);
	kv_case_reg_bad_key(c, mr);
	kv_case_mcast_block_self(c);
	kv_case_cq_overflow_drain(c);
	kv_pair_destroy(c);
	ib_dereg_mr(mr);
	pr_info("sroce_kverbs: %d passed, %d failed\n", c->passes, c->fails);
	err = c->fails ? -EIO : 0;
out:
	kv_cleanup(c);
	kfree(c);
	return err;
}

/* everything was released by init: the test leaves nothing behind */
static void __exit sroce_kverbs_exit(void)
{
}

module_init(sroce_kverbs_init);
module_exit(sroce_kverbs_exit);
MODULE_LICENSE("Dual BSD/GPL");
MODULE_DESCRIPTION("sroce kernel-consumer verbs test");
