// SPDX-License-Identifier: GPL-2.0
/*
 * Ring scribbler for the robust VM suite: a hostile user process writes
 * garbage into its own mmapped SQ, RQ, SRQ and CQ rings (producer and
 * consumer indices, opcodes, flags, num_sge, lengths, inline sizes) from a
 * thread that races the posting thread, for -t seconds.  The kernel must
 * neither crash nor stall: every destroy succeeds quickly, a fresh QP pair
 * in the same process moves verified data afterwards, and another process
 * moving verified data all along is unaffected.
 *
 *   ring_scribble [-d DEV] [-g GID_INDEX] [-t SECONDS] [-s SEED]
 *
 * The rings are found as this process's mappings of /dev/infiniband/uverbs*
 * (every mmapped queue is one).  The first 8 bytes of each ring (element
 * size and index mask) are left alone and indices stay within the mask:
 * librxe, not the kernel, trusts them, and breaking that would only crash
 * this process (the kernel keeps its own mask and masks what it reads).
 *
 * Build: gcc -O2 -Wall -pthread -o build/robust/ring_scribble \
 *            tests/vm/robust/ring_scribble.c -libverbs
 * Prints "PASS name" / "FAIL name: why" per case, then "N passed, N failed".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define BUF		65536
#define MAX_RINGS	64
#define RING_PROD	128	/* offsetof(struct rxe_queue_buf, producer_index) */
#define RING_CONS	256	/* offsetof(struct rxe_queue_buf, consumer_index) */
#define RING_DATA	384	/* offsetof(struct rxe_queue_buf, data) */
#define ROUND_SECS	2

static int n_pass, n_fail;
static const char *devname = "sroce0";
static int gid_index = -1;
static int seconds = 20;
static uint64_t seed = 1;

static void pass(const char *name)
{
	printf("PASS %s\n", name);
	fflush(stdout);
	n_pass++;
}

static void failf(const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("FAIL %s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	n_fail++;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static struct ibv_context *open_dev(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	union ibv_gid gid;
	int i, n;

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), devname))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (ctx && gid_index < 0) {
		for (i = 0; i < 16; i++)
			if (!ibv_query_gid(ctx, 1, i, &gid) &&
			    gid.raw[10] == 0xff && gid.raw[11] == 0xff) {
				gid_index = i;
				break;
			}
	}
	return ctx;
}

/* ---------------------------------------------------------------------- */
/* Loopback RC pair; b may receive through an SRQ. */
struct pair {
	struct ibv_pd *pd;
	struct ibv_cq *cqa, *cqb;
	struct ibv_srq *srq;
	struct ibv_qp *a, *b;
	char *bufa, *bufb;
	struct ibv_mr *mra, *mrb;
};

static int qp_connect(struct ibv_context *ctx, struct ibv_qp *qp, uint32_t dqpn,
		      uint32_t rq_psn, uint32_t sq_psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	union ibv_gid gid;
	int rc;

	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (rc || ibv_query_gid(ctx, 1, gid_index, &gid))
		return rc ?: EINVAL;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (rc)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 10;
	a.retry_cnt = 2;
	a.rnr_retry = 2;
	a.sq_psn = sq_psn;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int pair_up(struct ibv_context *ctx, struct pair *p, int use_srq)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 2,
			 .max_recv_sge = 2, .max_inline_data = 64 },
	};
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = 64, .max_sge = 2 },
	};

	memset(p, 0, sizeof(*p));
	p->pd = ibv_alloc_pd(ctx);
	p->cqa = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	p->cqb = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (!p->pd || !p->cqa || !p->cqb)
		return -1;
	if (use_srq && !(p->srq = ibv_create_srq(p->pd, &sa)))
		return -1;
	ia.send_cq = ia.recv_cq = p->cqa;
	p->a = ibv_create_qp(p->pd, &ia);
	ia.send_cq = ia.recv_cq = p->cqb;
	ia.srq = p->srq;
	p->b = ibv_create_qp(p->pd, &ia);
	p->bufa = aligned_alloc(4096, BUF);
	p->bufb = aligned_alloc(4096, BUF);
	if (!p->a || !p->b || !p->bufa || !p->bufb)
		return -1;
	memset(p->bufa, 0xaa, BUF);
	memset(p->bufb, 0xbb, BUF);
	p->mra = ibv_reg_mr(p->pd, p->bufa, BUF, acc);
	p->mrb = ibv_reg_mr(p->pd, p->bufb, BUF, acc);
	if (!p->mra || !p->mrb)
		return -1;
	if (qp_connect(ctx, p->a, p->b->qp_num, 0x100, 0x200) ||
	    qp_connect(ctx, p->b, p->a->qp_num, 0x200, 0x100))
		return -1;
	return 0;
}

/* Every destroy must succeed: returns the number that did not. */
static int pair_down(struct pair *p)
{
	int bad = 0;

	if (p->a && ibv_destroy_qp(p->a))
		bad++;
	if (p->b && ibv_destroy_qp(p->b))
		bad++;
	if (p->srq && ibv_destroy_srq(p->srq))
		bad++;
	if (p->mra && ibv_dereg_mr(p->mra))
		bad++;
	if (p->mrb && ibv_dereg_mr(p->mrb))
		bad++;
	if (p->cqa && ibv_destroy_cq(p->cqa))
		bad++;
	if (p->cqb && ibv_destroy_cq(p->cqb))
		bad++;
	if (p->pd && ibv_dealloc_pd(p->pd))
		bad++;
	free(p->bufa);
	free(p->bufb);
	return bad;
}

static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc, double tmo)
{
	double end = now() + tmo;
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0 && now() < end)
		;
	return n;
}

/*
 * Verified traffic on a clean pair: a WRITE of a pattern, a READ of it
 * back and a SEND of it, every byte and completion checked.  0 = all good.
 */
static int verified_round(struct pair *p, unsigned int round, char *why,
			  size_t whylen)
{
	uint32_t len = 1 + (round * 2654435761u) % (BUF / 2 - 1);
	struct ibv_sge sge = { (uintptr_t)p->bufa, len, p->mra->lkey };
	struct ibv_sge rsge = { (uintptr_t)p->bufb + BUF / 2, len, p->mrb->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 3, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	struct ibv_recv_wr *rbad;
	struct ibv_wc wc;
	uint32_t i;

	for (i = 0; i < len; i++)
		p->bufa[i] = (char)(round * 31 + i * 7);
	/* WRITE a -> b[0..len) */
	wr.wr_id = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)p->bufb;
	wr.wr.rdma.rkey = p->mrb->rkey;
	if (ibv_post_send(p->a, &wr, &bad) || poll_one(p->cqa, &wc, 10) != 1 ||
	    wc.status != IBV_WC_SUCCESS || wc.wr_id != 1) {
		snprintf(why, whylen, "round %u: WRITE of %u bytes did not complete", round, len);
		return -1;
	}
	if (memcmp(p->bufa, p->bufb, len)) {
		snprintf(why, whylen, "round %u: WRITE of %u bytes landed wrong", round, len);
		return -1;
	}
	/* READ b[0..len) back into a[BUF/2..] */
	sge.addr = (uintptr_t)p->bufa + BUF / 2;
	wr.wr_id = 2;
	wr.opcode = IBV_WR_RDMA_READ;
	if (ibv_post_send(p->a, &wr, &bad) || poll_one(p->cqa, &wc, 10) != 1 ||
	    wc.status != IBV_WC_SUCCESS || wc.wr_id != 2) {
		snprintf(why, whylen, "round %u: READ of %u bytes did not complete", round, len);
		return -1;
	}
	if (memcmp(p->bufa + BUF / 2, p->bufb, len)) {
		snprintf(why, whylen, "round %u: READ of %u bytes returned wrong data", round, len);
		return -1;
	}
	/* SEND a[0..len) -> b[BUF/2..] */
	sge.addr = (uintptr_t)p->bufa;
	wr.wr_id = 4;
	wr.opcode = IBV_WR_SEND;
	if (ibv_post_recv(p->b, &rwr, &rbad) || ibv_post_send(p->a, &wr, &bad) ||
	    poll_one(p->cqa, &wc, 10) != 1 || wc.status != IBV_WC_SUCCESS ||
	    wc.wr_id != 4 || poll_one(p->cqb, &wc, 10) != 1 ||
	    wc.status != IBV_WC_SUCCESS || wc.wr_id != 3 || wc.byte_len != len) {
		snprintf(why, whylen, "round %u: SEND of %u bytes did not complete", round, len);
		return -1;
	}
	if (memcmp(p->bufa, p->bufb + BUF / 2, len)) {
		snprintf(why, whylen, "round %u: SEND of %u bytes landed wrong", round, len);
		return -1;
	}
	return 0;
}

/* The other process: verified traffic for the whole run. Exit 0 iff clean. */
static int bystander(double secs)
{
	struct ibv_context *ctx = open_dev();
	double end = now() + secs;
	unsigned int round = 0;
	struct pair p;
	char why[160];

	if (!ctx || pair_up(ctx, &p, 0)) {
		printf("# bystander: setup failed: %s\n", strerror(errno));
		return 1;
	}
	while (now() < end) {
		if (verified_round(&p, round++, why, sizeof(why))) {
			printf("# bystander: %s\n", why);
			return 1;
		}
	}
	printf("# bystander: %u verified rounds\n", round);
	if (pair_down(&p)) {
		printf("# bystander: a destroy failed\n");
		return 1;
	}
	ibv_close_device(ctx);
	return 0;
}

/* ---------------------------------------------------------------------- */
struct ring {
	unsigned char *base;
	size_t len;
};

static struct ring rings[MAX_RINGS];
static int n_rings;
static volatile int stop;
static unsigned long scribbles;

static int find_rings(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long lo, hi;

	n_rings = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && n_rings < MAX_RINGS) {
		if (!strstr(line, "/dev/infiniband/uverbs") ||
		    sscanf(line, "%lx-%lx", &lo, &hi) != 2 || !strstr(line, "rw"))
			continue;
		if (hi - lo <= RING_DATA)
			continue;
		rings[n_rings].base = (unsigned char *)lo;
		rings[n_rings].len = hi - lo;
		n_rings++;
	}
	fclose(f);
	return n_rings;
}

/* A value a validator must reject or bound: extremes and near-misses. */
static uint32_t nasty(uint64_t *s)
{
	static const uint32_t v[] = {
		0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 63, 64, 255, 256, 4095,
		4096, 65535, 65536, 0x7fffffff, 0x80000000, 0x80000001,
		0xfffffffe, 0xffffffff,
	};
	uint64_t r = xorshift(s);

	return r & 1 ? v[(r >> 1) % (sizeof(v) / sizeof(v[0]))] : (uint32_t)(r >> 8);
}

static void *scribbler(void *arg)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ull | 1;

	(void)arg;
	while (!stop) {
		struct ring *r = &rings[xorshift(&s) % n_rings];
		uint64_t what = xorshift(&s) % 16;
		size_t off;

		/*
		 * Indices within the index mask: librxe uses them unmasked as
		 * slot addresses (it would crash this process, not test the
		 * kernel), and the kernel masks whatever it reads anyway.
		 */
		if (what < 3) {
			*(volatile uint32_t *)(r->base + RING_PROD) =
				nasty(&s) & *(volatile uint32_t *)(r->base + 4);
		} else if (what < 6) {
			*(volatile uint32_t *)(r->base + RING_CONS) =
				nasty(&s) & *(volatile uint32_t *)(r->base + 4);
		} else if (what < 14) {
			/* a 32-bit field somewhere in the slots */
			off = RING_DATA + (xorshift(&s) % ((r->len - RING_DATA) / 4)) * 4;
			*(volatile uint32_t *)(r->base + off) = nasty(&s);
		} else {
			/* a run of bytes: whole headers and SGE lists */
			size_t n = 1 + xorshift(&s) % 256, i;

			off = RING_DATA + xorshift(&s) % (r->len - RING_DATA);
			if (off + n > r->len)
				n = r->len - off;
			for (i = 0; i < n; i++)
				((volatile unsigned char *)r->base)[off + i] =
					(unsigned char)xorshift(&s);
		}
		__atomic_fetch_add(&scribbles, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Posts a little of everything at the victims while the rings are shredded. */
static unsigned long victim_posts(struct pair *p, struct ibv_qp *ud,
				  struct ibv_cq *udcq, struct ibv_ah *ah,
				  uint64_t *s)
{
	struct ibv_sge sge = { (uintptr_t)p->bufa, 64, p->mra->lkey };
	struct ibv_sge rsge = { (uintptr_t)p->bufb, 4096, p->mrb->lkey };
	struct ibv_send_wr wr, *bad;
	struct ibv_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 }, *rbad;
	struct ibv_wc wc[16];
	unsigned long n = 0;
	int i;

	for (i = 0; i < 8; i++) {
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = xorshift(s);
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_SIGNALED |
				(i == 3 ? IBV_SEND_INLINE : 0);
		wr.wr.rdma.remote_addr = (uintptr_t)p->bufb;
		wr.wr.rdma.rkey = p->mrb->rkey;
		switch (xorshift(s) % 5) {
		case 0: wr.opcode = IBV_WR_SEND; break;
		case 1: wr.opcode = IBV_WR_RDMA_WRITE; break;
		case 2: wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM; break;
		case 3: wr.opcode = IBV_WR_RDMA_READ; wr.send_flags &= ~IBV_SEND_INLINE; break;
		default:
			wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			wr.send_flags &= ~IBV_SEND_INLINE;
			sge.length = 8;
			wr.wr.atomic.remote_addr = (uintptr_t)p->bufb;
			wr.wr.atomic.rkey = p->mrb->rkey;
			wr.wr.atomic.compare_add = 1;
			break;
		}
		n += !ibv_post_send(p->a, &wr, &bad);
		n += !ibv_post_send(p->b, &wr, &bad);
		sge.length = 64;
		rwr.wr_id = xorshift(s);
		n += !ibv_post_srq_recv(p->srq, &rwr, &rbad);
		n += !ibv_post_recv(p->a, &rwr, &rbad);
		n += !ibv_post_recv(ud, &rwr, &rbad);
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = xorshift(s);
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = ud->qp_num;
		wr.wr.ud.remote_qkey = 0x11111111;
		n += !ibv_post_send(ud, &wr, &bad);
	}
	/* what comes back may be garbage too: only drain it */
	ibv_poll_cq(p->cqa, 16, wc);
	ibv_poll_cq(p->cqb, 16, wc);
	ibv_poll_cq(udcq, 16, wc);
	return n;
}

static struct ibv_qp *ud_qp(struct ibv_context *ctx, struct ibv_pd *pd,
			    struct ibv_cq *cq, struct ibv_ah **ah)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = 64 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = 0x11111111 };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_QKEY))
		return NULL;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return NULL;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return NULL;
	if (ibv_query_gid(ctx, 1, gid_index, &aa.grh.dgid))
		return NULL;
	aa.grh.sgid_index = gid_index;
	aa.grh.hop_limit = 1;
	*ah = ibv_create_ah(pd, &aa);
	return *ah ? qp : NULL;
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct pair victim, fresh;
	struct ibv_cq *udcq;
	struct ibv_ah *ah = NULL;
	struct ibv_qp *ud;
	unsigned long posts = 0;
	double t0, end, slowest = 0;
	int rounds = 0, in_err = 0;
	pthread_t th;
	pid_t child;
	uint64_t s;
	char why[160];
	int o, st, bad = 0, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((o = getopt(argc, argv, "d:g:t:s:")) != -1) {
		switch (o) {
		case 'd': devname = optarg; break;
		case 'g': gid_index = atoi(optarg); break;
		case 't': seconds = atoi(optarg); break;
		case 's': seed = strtoull(optarg, NULL, 0) ?: 1; break;
		default:
			fprintf(stderr, "usage: %s [-d DEV] [-g GID_INDEX] [-t SECONDS] [-s SEED]\n",
				argv[0]);
			return 2;
		}
	}
	s = seed;
	printf("# seed %" PRIu64 ", %d s\n", seed, seconds);

	/* the bystander runs in its own process with its own context */
	child = fork();
	if (child == 0)
		_exit(bystander(seconds + 2));

	ctx = open_dev();
	if (!ctx) {
		failf("setup", "cannot open %s", devname);
		goto out;
	}
	/*
	 * Rounds of ROUND_SECS: fresh victims in RTS each time (a victim soon
	 * ends in ERR, and the RTS paths deserve the garbage too), torn down
	 * after the scribbler stopped (their rings are unmapped then).
	 */
	end = now() + seconds;
	do {
		if (pair_up(ctx, &victim, 1)) {
			failf("setup", "victim pair, round %d: %s", rounds, strerror(errno));
			goto out;
		}
		udcq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
		ud = udcq ? ud_qp(ctx, victim.pd, udcq, &ah) : NULL;
		if (!ud) {
			failf("setup", "UD QP, round %d: %s", rounds, strerror(errno));
			goto out;
		}
		/* 3 CQs, SQ+RQ of a, SQ of b, the SRQ, SQ+RQ of the UD QP */
		if (find_rings() < 8) {
			failf("setup", "found %d mmapped rings in /proc/self/maps, expected at least 8",
			      n_rings);
			goto out;
		}
		stop = 0;
		pthread_create(&th, NULL, scribbler, NULL);
		t0 = now();
		while (now() < t0 + ROUND_SECS)
			posts += victim_posts(&victim, ud, udcq, ah, &s);
		stop = 1;
		pthread_join(th, NULL);
		/* a garbage WQE the kernel consumed moves its QP to ERR */
		in_err += qp_state(victim.a) == IBV_QPS_ERR ||
			  qp_state(victim.b) == IBV_QPS_ERR;
		/* every destroy succeeds, quickly (no chase of moving indices) */
		t0 = now();
		bad += ibv_destroy_qp(ud) ? 1 : 0;
		bad += ibv_destroy_ah(ah) ? 1 : 0;
		bad += ibv_destroy_cq(udcq) ? 1 : 0;
		bad += pair_down(&victim);
		if (now() - t0 > slowest)
			slowest = now() - t0;
		rounds++;
	} while (now() < end);
	printf("# %d rounds, %lu posts accepted by librxe, %lu scribbles\n",
	       rounds, posts, scribbles);
	if (in_err)
		pass("ring_scribble_victim_in_err");
	else
		failf("ring_scribble_victim_in_err",
		      "no RC victim ended in ERR in %d rounds (%lu scribbles)",
		      rounds, scribbles);
	if (bad)
		failf("ring_scribble_teardown", "%d destroy calls failed", bad);
	else if (slowest > 5)
		failf("ring_scribble_teardown", "a teardown took %.1f s", slowest);
	else
		pass("ring_scribble_teardown");
	printf("# RC victim in ERR in %d of %d rounds; slowest teardown %.2f s\n",
	       in_err, rounds, slowest);

	/* the same process, fresh objects: verified data again */
	if (pair_up(ctx, &fresh, 0)) {
		failf("ring_scribble_fresh_pair", "setup: %s", strerror(errno));
	} else {
		for (i = 0; i < 50; i++)
			if (verified_round(&fresh, i, why, sizeof(why)))
				break;
		if (i < 50)
			failf("ring_scribble_fresh_pair", "%s", why);
		else
			pass("ring_scribble_fresh_pair");
		if (pair_down(&fresh))
			failf("ring_scribble_fresh_pair_teardown", "a destroy failed");
	}
	ibv_close_device(ctx);
out:
	if (waitpid(child, &st, 0) == child && WIFEXITED(st) && !WEXITSTATUS(st))
		pass("ring_scribble_other_process");
	else
		failf("ring_scribble_other_process",
		      "the verifying process next to the scribbler failed (status %#x)", st);
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
