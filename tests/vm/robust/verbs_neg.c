// SPDX-License-Identifier: GPL-2.0
/*
 * Verbs negative tests for the robust VM suite: every bad argument must be
 * refused with the precise errno, every remote/local protection problem must
 * complete with the precise work-completion status.
 *
 *   verbs_neg [-d DEV] [-g GID_INDEX]
 *
 * Build: gcc -O2 -Wall -o build/robust/verbs_neg tests/vm/robust/verbs_neg.c -libverbs
 * Prints "PASS name" or "FAIL name: got ... expected ..." per case and
 * closes with "N passed, N failed". Exit status 0 iff nothing failed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>

#include "../../common/rxe_flush_wqe.h"

static int n_pass, n_fail;
static struct ibv_context *ctx;
static struct ibv_device_attr dattr;
static int gid_index = -1;
static union ibv_gid gid;

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

static const char *errname(int e)
{
	static char buf[32];

	switch (e) {
	case 0: return "0 (success)";
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case ENOMEM: return "ENOMEM";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EFAULT: return "EFAULT";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOSPC: return "ENOSPC";
	case ENOENT: return "ENOENT";
	case ENOSYS: return "ENOSYS";
	}
	snprintf(buf, sizeof(buf), "errno %d", e);
	return buf;
}

/* A create-style call returned ptr (NULL on failure, errno set). */
static void expect_null(const char *name, void *ptr, int want)
{
	int e = errno;

	if (ptr) {
		failf(name, "got success, expected failure with %s", errname(want));
		return;
	}
	if (e != want) {
		failf(name, "got %s, expected %s", errname(e), errname(want));
		return;
	}
	pass(name);
}

/* A call returning 0 or an errno value. */
static void expect_rc(const char *name, int rc, int want)
{
	if (rc != want) {
		failf(name, "got %s, expected %s", errname(rc), errname(want));
		return;
	}
	pass(name);
}

static struct ibv_qp *mk_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			    struct ibv_qp_cap cap, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .srq = srq,
		.cap = cap, .qp_type = IBV_QPT_RC,
	};

	return ibv_create_qp(pd, &ia);
}

static const struct ibv_qp_cap cap_ok = {
	.max_send_wr = 16, .max_recv_wr = 16,
	.max_send_sge = 1, .max_recv_sge = 1, .max_inline_data = 0,
};

static int to_init(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = access,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static int to_rtr(struct ibv_qp *qp, uint32_t dqpn, uint32_t rq_psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn, .rq_psn = rq_psn,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 1,
		.ah_attr = {
			.is_global = 1, .port_num = 1,
			.grh = { .dgid = gid, .sgid_index = gid_index,
				 .hop_limit = 64 },
		},
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
}

/* RTR -> RTS with local ACK timeout @timeout (4.096 us * 2^timeout) */
static int to_rts_timeout(struct ibv_qp *qp, uint32_t sq_psn, int rnr_retry,
			  uint8_t timeout)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .timeout = timeout, .retry_cnt = 7,
		.rnr_retry = rnr_retry, .sq_psn = sq_psn, .max_rd_atomic = 1,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int to_rts(struct ibv_qp *qp, uint32_t sq_psn, int rnr_retry)
{
	return to_rts_timeout(qp, sq_psn, rnr_retry, 14);
}

/*
 * a and b, both in INIT, connected to each other through RTR to RTS: a
 * receives from psn_a on, b from psn_b on. 0 or the first error.
 */
static int connect_pair(struct ibv_qp *a, struct ibv_qp *b, uint32_t psn_a,
			uint32_t psn_b, int rnr_retry)
{
	return to_rtr(a, b->qp_num, psn_a) ?: to_rtr(b, a->qp_num, psn_b) ?:
	       to_rts(a, psn_b, rnr_retry) ?: to_rts(b, psn_a, rnr_retry);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

/* Poll one completion from cq, up to ms milliseconds. 1 = got, 0 = none. */
static int poll1(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	struct timespec t0, t;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			return -1;
		if (n == 1)
			return 1;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 +
		    (t.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return 0;
		usleep(1000);
	}
}

/* ---------------------------------------------------------------------- */
/* A connected loopback RC pair on the same device. */
struct pair {
	struct ibv_pd *pd;
	struct ibv_cq *cqa, *cqb;
	struct ibv_qp *a, *b;
	char *bufa, *bufb;
	struct ibv_mr *mra, *mrb;
};

#define BUF 65536

/*
 * PD, CQs, two RC QPs in INIT, buffers (a: 0xaa, b: 0xbb) and their MRs.
 * With mk_srq, b takes its receive WQEs from an SRQ of max_wr mk_srq made
 * on the pair's PD.
 */
static struct ibv_srq *(*pair_srq_fn)(struct ibv_pd *pd);
static struct ibv_srq *pair_srq;
/* nonzero: a is an extended QP (ibv_wr_*) with these send ops */
static uint64_t pair_send_ops;
/* set: a's receive CQ, the caller's (a's send CQ stays cqa) */
static struct ibv_cq *pair_a_rcq;

static struct ibv_qp *mk_qp_ex(struct ibv_pd *pd, struct ibv_cq *cq,
			       struct ibv_qp_cap cap, uint64_t ops)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RC, .cap = cap, .pd = pd,
		.send_cq = cq, .recv_cq = cq,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = ops,
	};

	return ibv_create_qp_ex(ctx, &ia);
}

static int pair_alloc_cap(const char *name, struct pair *p,
			  struct ibv_qp_cap cap)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ;
	int rc;

	memset(p, 0, sizeof(*p));
	p->pd = ibv_alloc_pd(ctx);
	p->cqa = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	p->cqb = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!p->pd || !p->cqa || !p->cqb) {
		failf(name, "setup: pd/cq creation failed: %s", strerror(errno));
		return -1;
	}
	pair_srq = NULL;
	if (pair_srq_fn) {
		pair_srq = pair_srq_fn(p->pd);
		if (!pair_srq) {
			failf(name, "setup: srq creation failed: %s", strerror(errno));
			return -1;
		}
	}
	if (pair_a_rcq) {
		struct ibv_qp_init_attr ia = {
			.send_cq = p->cqa, .recv_cq = pair_a_rcq,
			.cap = cap, .qp_type = IBV_QPT_RC,
		};

		p->a = ibv_create_qp(p->pd, &ia);
	} else {
		p->a = pair_send_ops ?
		       mk_qp_ex(p->pd, p->cqa, cap, pair_send_ops) :
		       mk_qp(p->pd, p->cqa, cap, NULL);
	}
	p->b = mk_qp(p->pd, p->cqb, cap, pair_srq);
	p->bufa = aligned_alloc(4096, BUF);
	p->bufb = aligned_alloc(4096, BUF);
	if (!p->a || !p->b || !p->bufa || !p->bufb) {
		failf(name, "setup: qp creation failed: %s", strerror(errno));
		return -1;
	}
	memset(p->bufa, 0xaa, BUF);
	memset(p->bufb, 0xbb, BUF);
	p->mra = ibv_reg_mr(p->pd, p->bufa, BUF, acc);
	p->mrb = ibv_reg_mr(p->pd, p->bufb, BUF, acc);
	if (!p->mra || !p->mrb) {
		failf(name, "setup: reg_mr failed: %s", strerror(errno));
		return -1;
	}
	rc = to_init(p->a, acc) ?: to_init(p->b, acc);
	if (rc) {
		failf(name, "setup: to INIT failed: %s", errname(rc));
		return -1;
	}
	return 0;
}

static int pair_alloc(const char *name, struct pair *p)
{
	return pair_alloc_cap(name, p, cap_ok);
}

/* pair_alloc_cap(), then the loopback pair connected and in RTS. */
static int pair_up_cap(const char *name, struct pair *p, int rnr_retry,
		       struct ibv_qp_cap cap)
{
	int rc;

	if (pair_alloc_cap(name, p, cap))
		return -1;
	rc = connect_pair(p->a, p->b, 0x1000, 0x2000, rnr_retry);
	if (rc) {
		failf(name, "setup: connecting the loopback pair failed: %s",
		      errname(rc));
		return -1;
	}
	return 0;
}

static int pair_up(const char *name, struct pair *p, int rnr_retry)
{
	return pair_up_cap(name, p, rnr_retry, cap_ok);
}

/*
 * a and b connected as connect_pair() does, but a reaches RTS with the
 * attributes in @rts (timeout, retry counts): 0 or the first error.
 */
static int connect_pair_rts(struct pair *p, struct ibv_qp_attr *rts)
{
	return to_rtr(p->a, p->b->qp_num, 0x1000) ?:
	       to_rtr(p->b, p->a->qp_num, 0x2000) ?:
	       ibv_modify_qp(p->a, rts, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) ?:
	       to_rts(p->b, 0x1000, 7);
}

static void pair_down(struct pair *p)
{
	if (p->a)
		ibv_destroy_qp(p->a);
	if (p->b)
		ibv_destroy_qp(p->b);
	if (p->mra)
		ibv_dereg_mr(p->mra);
	if (p->mrb)
		ibv_dereg_mr(p->mrb);
	if (p->cqa)
		ibv_destroy_cq(p->cqa);
	if (p->cqb)
		ibv_destroy_cq(p->cqb);
	if (pair_srq)
		ibv_destroy_srq(pair_srq);
	pair_srq = NULL;
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	free(p->bufa);
	free(p->bufb);
}

static const char *st(enum ibv_wc_status s)
{
	return ibv_wc_status_str(s);
}

static const char *qps(enum ibv_qp_state s)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS", "SQD",
					 "SQE", "ERR" };

	return (unsigned)s < 7 ? n[s] : "unknown";
}

/* ---------------------------------------------------------------------- */
static void t_cq(void)
{
	struct ibv_cq *cq;

	errno = 0;
	cq = ibv_create_cq(ctx, 0, NULL, NULL, 0);
	expect_null("create_cq_cqe_0", cq, EINVAL);
	if (cq)
		ibv_destroy_cq(cq);

	errno = 0;
	cq = ibv_create_cq(ctx, dattr.max_cqe + 1, NULL, NULL, 0);
	expect_null("create_cq_cqe_above_max", cq, EINVAL);
	if (cq)
		ibv_destroy_cq(cq);

	errno = 0;
	cq = ibv_create_cq(ctx, -1, NULL, NULL, 0);
	expect_null("create_cq_cqe_negative", cq, EINVAL);
	if (cq)
		ibv_destroy_cq(cq);

	/* boundary: exactly max_cqe must work */
	cq = ibv_create_cq(ctx, dattr.max_cqe, NULL, NULL, 0);
	if (!cq)
		failf("create_cq_cqe_max_ok", "got %s, expected success (cqe = max_cqe = %d)",
		      errname(errno), dattr.max_cqe);
	else {
		pass("create_cq_cqe_max_ok");
		ibv_destroy_cq(cq);
	}
}

static void t_qp_caps(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_cap c;
	struct ibv_qp *qp;

	c = cap_ok;
	c.max_send_wr = dattr.max_qp_wr + 1;
	errno = 0;
	qp = mk_qp(pd, cq, c, NULL);
	expect_null("create_qp_send_wr_above_max", qp, EINVAL);
	if (qp)
		ibv_destroy_qp(qp);

	c = cap_ok;
	c.max_recv_wr = dattr.max_qp_wr + 1;
	errno = 0;
	qp = mk_qp(pd, cq, c, NULL);
	expect_null("create_qp_recv_wr_above_max", qp, EINVAL);
	if (qp)
		ibv_destroy_qp(qp);

	c = cap_ok;
	c.max_send_sge = dattr.max_sge + 1;
	errno = 0;
	qp = mk_qp(pd, cq, c, NULL);
	expect_null("create_qp_send_sge_above_max", qp, EINVAL);
	if (qp)
		ibv_destroy_qp(qp);

	c = cap_ok;
	c.max_recv_sge = dattr.max_sge + 1;
	errno = 0;
	qp = mk_qp(pd, cq, c, NULL);
	expect_null("create_qp_recv_sge_above_max", qp, EINVAL);
	if (qp)
		ibv_destroy_qp(qp);

	c = cap_ok;
	c.max_inline_data = 1 << 20;
	errno = 0;
	qp = mk_qp(pd, cq, c, NULL);
	expect_null("create_qp_inline_1MiB", qp, EINVAL);
	if (qp)
		ibv_destroy_qp(qp);

	/* boundary: exactly the device maxima must work */
	c = cap_ok;
	c.max_send_wr = dattr.max_qp_wr;
	c.max_send_sge = dattr.max_sge;
	qp = mk_qp(pd, cq, c, NULL);
	if (!qp)
		failf("create_qp_at_max_ok", "got %s, expected success (max_send_wr %d, max_send_sge %d)",
		      errname(errno), dattr.max_qp_wr, dattr.max_sge);
	else {
		pass("create_qp_at_max_ok");
		ibv_destroy_qp(qp);
	}
}

/* Is @mac (12 hex digits) on some netdev's multicast list? */
static int mc_listed(const char *mac)
{
	char line[256];
	FILE *f = fopen("/proc/net/dev_mcast", "r");
	int hit = 0;

	if (!f)
		return -1;
	while (!hit && fgets(line, sizeof(line), f))
		hit = strstr(line, mac) != NULL;
	fclose(f);
	return hit;
}

static void mgid_v6(union ibv_gid *g, unsigned int i)
{
	/* ff0e::<i>:0:e1:e2: every one maps to the Ethernet address 33:33:00:e1:00:e2 */
	memset(g, 0, sizeof(*g));
	g->raw[0] = 0xff;
	g->raw[1] = 0x0e;
	g->raw[8] = i >> 8;
	g->raw[9] = i;
	g->raw[13] = 0xe1;
	g->raw[15] = 0xe2;
}

/* Multicast attach/detach: errnos, limits, and the netdev's filter. */
static void t_mcast(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .cap = cap_ok, .qp_type = IBV_QPT_UD,
	};
	union ibv_gid g4 = { .raw = { [10] = 0xff, [11] = 0xff, 239, 9, 9, 9 } }, g;
	struct ibv_qp *ud[64], *rc;
	int nq = dattr.max_mcast_qp_attach + 1, i, rc_err, n;

	if (nq > 64 || dattr.max_mcast_grp < 1) {
		failf("mcast_limits", "max_mcast_qp_attach %d max_mcast_grp %d",
		      dattr.max_mcast_qp_attach, dattr.max_mcast_grp);
		return;
	}
	for (i = 0; i < nq; i++) {
		ud[i] = ibv_create_qp(pd, &ia);
		if (!ud[i]) {
			failf("mcast_setup", "create UD QP %d: %s", i, errname(errno));
			while (i--)
				ibv_destroy_qp(ud[i]);
			return;
		}
	}
	rc = mk_qp(pd, cq, cap_ok, NULL);
	if (rc) {
		expect_rc("mcast_attach_rc_qp", ibv_attach_mcast(rc, &g4, 0), EINVAL);
		ibv_destroy_qp(rc);
	}
	expect_rc("mcast_attach_unicast_gid", ibv_attach_mcast(ud[0], &gid, 0), EINVAL);
	expect_rc("mcast_detach_not_attached", ibv_detach_mcast(ud[0], &g4, 0), EINVAL);

	expect_rc("mcast_attach", ibv_attach_mcast(ud[0], &g4, 0), 0);
	if (mc_listed("01005e090909") == 1)
		pass("mcast_attach_mac_on_netdev");
	else
		failf("mcast_attach_mac_on_netdev", "01:00:5e:09:09:09 not in /proc/net/dev_mcast");
	expect_rc("mcast_attach_twice_ok", ibv_attach_mcast(ud[0], &g4, 0), 0);
	for (i = 1, rc_err = 0; i < nq - 1 && !rc_err; i++)
		rc_err = ibv_attach_mcast(ud[i], &g4, 0);
	expect_rc("mcast_attach_qps_to_max", rc_err, 0);
	expect_rc("mcast_attach_qp_above_max", ibv_attach_mcast(ud[nq - 1], &g4, 0), ENOMEM);
	for (i = 0, rc_err = 0; i < nq - 1 && !rc_err; i++)
		rc_err = ibv_detach_mcast(ud[i], &g4, 0);
	expect_rc("mcast_detach_all", rc_err, 0);
	if (mc_listed("01005e090909") == 0)
		pass("mcast_detach_mac_off_netdev");
	else
		failf("mcast_detach_mac_off_netdev", "01:00:5e:09:09:09 still in /proc/net/dev_mcast");

	/* groups up to max_mcast_grp, then ENOMEM; a destroyed QP leaves them all */
	n = dattr.max_mcast_grp > 65536 ? 65536 : dattr.max_mcast_grp;
	for (i = 0, rc_err = 0; i < n && !rc_err; i++) {
		mgid_v6(&g, i);
		rc_err = ibv_attach_mcast(ud[0], &g, 0);
	}
	expect_rc("mcast_attach_groups_to_max", rc_err, 0);
	if (n == dattr.max_mcast_grp) {
		mgid_v6(&g, n);
		expect_rc("mcast_attach_group_above_max", ibv_attach_mcast(ud[0], &g, 0), ENOMEM);
	}
	/* the core refuses to destroy an attached QP */
	expect_rc("mcast_destroy_attached_qp", ibv_destroy_qp(ud[0]), EBUSY);
	for (i = 0, rc_err = 0; i < n && !rc_err; i++) {
		mgid_v6(&g, i);
		rc_err = ibv_detach_mcast(ud[0], &g, 0);
	}
	expect_rc("mcast_detach_groups", rc_err, 0);
	expect_rc("mcast_destroy_detached_qp", ibv_destroy_qp(ud[0]), 0);
	mgid_v6(&g, n);
	expect_rc("mcast_groups_freed", ibv_attach_mcast(ud[1], &g, 0), 0);
	if (mc_listed("333300e100e2") == 1)
		pass("mcast_v6_mac_on_netdev");
	else
		failf("mcast_v6_mac_on_netdev", "33:33:00:e1:00:e2 not in /proc/net/dev_mcast");
	expect_rc("mcast_detach_v6", ibv_detach_mcast(ud[1], &g, 0), 0);
	for (i = 1; i < nq; i++)
		ibv_destroy_qp(ud[i]);
	if (mc_listed("333300e100e2") == 0)
		pass("mcast_v6_mac_off_netdev");
	else
		failf("mcast_v6_mac_off_netdev", "33:33:00:e1:00:e2 still in /proc/net/dev_mcast");
}

static void t_mr(struct ibv_pd *pd)
{
	static char buf[8192] __attribute__((aligned(4096)));
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE);
	expect_null("reg_mr_remote_write_without_local_write", mr, EINVAL);
	if (mr)
		ibv_dereg_mr(mr);

	errno = 0;
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_ATOMIC);
	expect_null("reg_mr_remote_atomic_without_local_write", mr, EINVAL);
	if (mr)
		ibv_dereg_mr(mr);
}

static void t_modify(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp *qp;
	struct ibv_qp_attr a;

	qp = mk_qp(pd, cq, cap_ok, NULL);
	if (!qp) {
		failf("modify_qp_setup", "create_qp failed: %s", errname(errno));
		return;
	}
	/* RESET -> RTS with every RTS attribute: an illegal transition */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	expect_rc("modify_qp_reset_to_rts", ibv_modify_qp(qp, &a,
		  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
		  EINVAL);
	if (qp_state(qp) != IBV_QPS_RESET)
		failf("modify_qp_reset_to_rts_state", "got %s, expected RESET (failed modify must not change the state)",
		      qps(qp_state(qp)));
	else
		pass("modify_qp_reset_to_rts_state");

	/* RESET -> INIT without the required attributes */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	expect_rc("modify_qp_reset_to_init_missing_attrs",
		  ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);

	/* post_send in RESET: the doorbell is refused */
	{
		struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED };
		struct ibv_send_wr *bad = NULL;

		expect_rc("post_send_in_reset",
			  ibv_post_send(qp, &wr, &bad), EINVAL);
	}

	if (to_init(qp, IBV_ACCESS_LOCAL_WRITE)) {
		failf("modify_qp_to_init", "RESET->INIT with the required attributes failed");
		ibv_destroy_qp(qp);
		return;
	}
	pass("modify_qp_to_init");

	/* post_send in INIT */
	{
		struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED };
		struct ibv_send_wr *bad = NULL;

		expect_rc("post_send_in_init",
			  ibv_post_send(qp, &wr, &bad), EINVAL);
	}

	/* INIT -> RTR with only the state: AV, path MTU, dest QPN, RQ PSN,
	 * max_dest_rd_atomic and min_rnr_timer are required (IBA table 91) */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	expect_rc("modify_qp_init_to_rtr_missing_attrs",
		  ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
	if (qp_state(qp) != IBV_QPS_INIT)
		failf("modify_qp_init_to_rtr_state", "got %s, expected INIT",
		      qps(qp_state(qp)));
	else
		pass("modify_qp_init_to_rtr_state");

	/* INIT -> RTS (skipping RTR) */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	expect_rc("modify_qp_init_to_rts", ibv_modify_qp(qp, &a,
		  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
		  EINVAL);
	ibv_destroy_qp(qp);
}

/*
 * C10-121: the port's P_Key table has 1 to 65535 entries (here 1, holding
 * 0xFFFF; an index past it reads nothing).  C10-125: a QP takes a P_Key
 * index on Reset -> Init: leaving out only PKEY_INDEX, or naming index 1,
 * is refused (EINVAL) and the QP stays in Reset.
 */
static void t_pkey_table(struct ibv_pd *pd, struct ibv_cq *cq)
{
	const char *name = "pkey_table_and_qp_index";
	struct ibv_port_attr pa;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE };
	struct ibv_qp *qp = NULL;
	__be16 pk = 0;
	int r;

	if (ibv_query_port(ctx, 1, &pa)) {
		failf(name, "query_port: %s", strerror(errno));
		return;
	}
	/* a u16: 65535 at most */
	if (pa.pkey_tbl_len < 1) {
		failf(name, "pkey_tbl_len %u, expected 1..65535", pa.pkey_tbl_len);
		return;
	}
	if (ibv_query_pkey(ctx, 1, 0, &pk) || pk != htons(0xffff)) {
		failf(name, "P_Key index 0: %#x (%s), expected 0xffff", ntohs(pk), strerror(errno));
		return;
	}
	if (!ibv_query_pkey(ctx, 1, pa.pkey_tbl_len, &pk)) {
		failf(name, "P_Key index %u (past the table) read %#x, expected an error",
		      pa.pkey_tbl_len, ntohs(pk));
		return;
	}
	qp = mk_qp(pd, cq, cap_ok, NULL);
	if (!qp) {
		failf(name, "create_qp: %s", strerror(errno));
		return;
	}
	r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (r != EINVAL || qp_state(qp) != IBV_QPS_RESET) {
		failf(name, "Reset -> Init without PKEY_INDEX: got %s, state %s, expected EINVAL and RESET",
		      errname(r), qps(qp_state(qp)));
		goto out;
	}
	a.pkey_index = 1;
	r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS);
	if (r != EINVAL || qp_state(qp) != IBV_QPS_RESET) {
		failf(name, "Reset -> Init with P_Key index 1: got %s, state %s, expected EINVAL and RESET",
		      errname(r), qps(qp_state(qp)));
		goto out;
	}
	a.pkey_index = 0;
	r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS);
	if (r || qp_state(qp) != IBV_QPS_INIT) {
		failf(name, "Reset -> Init with P_Key index 0: got %s, state %s, expected 0 and INIT",
		      errname(r), qps(qp_state(qp)));
		goto out;
	}
	pass(name);
out:
	ibv_destroy_qp(qp);
}

static void t_srq(struct ibv_pd *pd)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 0, .max_sge = 1 } };
	struct ibv_srq *srq;

	errno = 0;
	srq = ibv_create_srq(pd, &sa);
	expect_null("create_srq_max_wr_0", srq, EINVAL);
	if (srq)
		ibv_destroy_srq(srq);

	sa.attr.max_wr = dattr.max_srq_wr + 1;
	errno = 0;
	srq = ibv_create_srq(pd, &sa);
	expect_null("create_srq_max_wr_above_max", srq, EINVAL);
	if (srq)
		ibv_destroy_srq(srq);

	/* o10-10.2.2: a resize below the SRQ limit fails and changes nothing */
	sa.attr.max_wr = 32;
	srq = ibv_create_srq(pd, &sa);
	if (!srq) {
		failf("srq_resize_below_limit_einval", "create_srq: %s", strerror(errno));
		return;
	}
	{
		struct ibv_srq_attr a = { .srq_limit = 20 }, q;
		int r = ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT);

		a = (struct ibv_srq_attr){ .max_wr = 10 };
		r = r ?: ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR);
		if (r != EINVAL)
			failf("srq_resize_below_limit_einval", "got %s, expected EINVAL (limit 20, max_wr 10)",
			      errname(r));
		else if (ibv_query_srq(srq, &q) || q.max_wr < 32 || q.srq_limit != 20)
			failf("srq_resize_below_limit_einval", "after the refused resize: max_wr %u limit %u, expected >= 32 and 20",
			      q.max_wr, q.srq_limit);
		else
			pass("srq_resize_below_limit_einval");
	}
	ibv_destroy_srq(srq);
}

static void t_busy(void)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *qp;
	static char buf[4096] __attribute__((aligned(4096)));
	struct ibv_mr *mr;

	if (!pd || !cq) {
		failf("destroy_busy_setup", "pd/cq: %s", errname(errno));
		return;
	}
	qp = mk_qp(pd, cq, cap_ok, NULL);
	if (!qp) {
		failf("destroy_busy_setup", "create_qp: %s", errname(errno));
		return;
	}
	expect_rc("destroy_cq_in_use_by_qp", ibv_destroy_cq(cq), EBUSY);
	ibv_destroy_qp(qp);
	expect_rc("destroy_cq_after_qp_gone", ibv_destroy_cq(cq), 0);

	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		failf("dealloc_pd_in_use_by_mr", "setup reg_mr: %s", errname(errno));
	} else {
		expect_rc("dealloc_pd_in_use_by_mr", ibv_dealloc_pd(pd), EBUSY);
		ibv_dereg_mr(mr);
	}
	expect_rc("dealloc_pd_after_mr_gone", ibv_dealloc_pd(pd), 0);
}

static struct ibv_srq *srq16(struct ibv_pd *pd)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };

	return ibv_create_srq(pd, &sa);
}

/* (i) RDMA WRITE with a wrong R_Key -> REM_ACCESS_ERR, QP -> ERR, the next
 * WRs flush. */
/* The object an async event names: a CQ, an SRQ or a QP, as its type says. */
static const void *async_elem(const struct ibv_async_event *ev)
{
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		return ev->element.cq;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return ev->element.srq;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return ev->element.qp;
	default:
		return NULL;
	}
}

/*
 * Wait up to ms for an async event of type on elem (a QP, CQ or SRQ);
 * acks every event it reads (destroy waits for the acks).  1 = seen, 0 = not.
 */
static int wait_async(enum ibv_event_type type, const void *elem, int ms,
		      char *seen, size_t len)
{
	struct ibv_async_event ev;
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	int fl = fcntl(ctx->async_fd, F_GETFL), hit = 0;
	size_t off = 0;

	seen[0] = 0;
	fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	while (!hit && poll(&pfd, 1, ms) == 1) {
		if (ibv_get_async_event(ctx, &ev))
			break;
		if (off < len)
			off += snprintf(seen + off, len - off, "%s ",
					ibv_event_type_str(ev.event_type));
		hit = ev.event_type == type && async_elem(&ev) == elem;
		ibv_ack_async_event(&ev);
	}
	fcntl(ctx->async_fd, F_SETFL, fl);
	return hit;
}

static int wait_qp_event(struct ibv_qp *qp, enum ibv_event_type type, int ms,
			 char *seen, size_t len)
{
	return wait_async(type, qp, ms, seen, len);
}

static void t_write_bad_rkey(void)
{
	const char *name = "wc_write_bad_rkey";
	struct pair p;
	struct ibv_sge sge;
	struct ibv_send_wr wr[3], *bad;
	struct ibv_wc wc;
	int i, r;

	if (pair_up(name, &p, 7))
		goto out;
	sge = (struct ibv_sge){ (uintptr_t)p.bufa, 256, p.mra->lkey };
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 3; i++) {
		wr[i].wr_id = 100 + i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].wr.rdma.remote_addr = (uintptr_t)p.bufb;
		wr[i].wr.rdma.rkey = p.mrb->rkey;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[0].wr.rdma.rkey = p.mrb->rkey ^ 0x00f0f000; /* nobody's R_Key */
	r = ibv_post_send(p.a, &wr[0], &bad);
	if (r) {
		failf(name, "post_send: got %s, expected 0", errname(r));
		goto out;
	}
	r = poll1(p.cqa, &wc, 20000);
	if (r != 1) {
		failf(name, "got no completion within 20s, expected %s",
		      st(IBV_WC_REM_ACCESS_ERR));
		goto out;
	}
	if (wc.wr_id != 100 || wc.status != IBV_WC_REM_ACCESS_ERR)
		failf(name, "got wr_id %llu status %s, expected wr_id 100 status %s",
		      (unsigned long long)wc.wr_id, st(wc.status),
		      st(IBV_WC_REM_ACCESS_ERR));
	else
		pass(name);
	for (i = 1; i < 3; i++) {
		char n2[64];

		snprintf(n2, sizeof(n2), "wc_write_bad_rkey_flush_%d", i);
		r = poll1(p.cqa, &wc, 10000);
		if (r != 1)
			failf(n2, "got no completion within 10s, expected %s",
			      st(IBV_WC_WR_FLUSH_ERR));
		else if (wc.wr_id != (uint64_t)(100 + i) ||
			 wc.status != IBV_WC_WR_FLUSH_ERR)
			failf(n2, "got wr_id %llu status %s, expected wr_id %d status %s",
			      (unsigned long long)wc.wr_id, st(wc.status), 100 + i,
			      st(IBV_WC_WR_FLUSH_ERR));
		else
			pass(n2);
	}
	if (qp_state(p.a) != IBV_QPS_ERR)
		failf("wc_write_bad_rkey_qp_err", "requester QP state got %s, expected ERR",
		      qps(qp_state(p.a)));
	else
		pass("wc_write_bad_rkey_qp_err");
	/* a WR posted in ERR completes with a flush error too */
	{
		struct ibv_send_wr w = wr[2];

		w.wr_id = 200;
		w.next = NULL;
		r = ibv_post_send(p.a, &w, &bad);
		if (r == 0 && poll1(p.cqa, &wc, 10000) == 1 &&
		    wc.wr_id == 200 && wc.status == IBV_WC_WR_FLUSH_ERR)
			pass("wc_post_in_err_flushes");
		else
			failf("wc_post_in_err_flushes", "post rc %s, completion %s, expected post 0 and %s",
			      errname(r), r ? "-" : st(wc.status),
			      st(IBV_WC_WR_FLUSH_ERR));
	}
	/* the target buffer must be untouched */
	for (i = 0; i < BUF; i++)
		if ((unsigned char)p.bufb[i] != 0xbb)
			break;
	if (i != BUF)
		failf("wc_write_bad_rkey_no_data", "target byte %d changed to 0x%02x by a write with a bad R_Key",
		      i, (unsigned char)p.bufb[i]);
	else
		pass("wc_write_bad_rkey_no_data");
	/* 10.10: the responder's R_Key violation is an affiliated async error */
	{
		char seen[256];

		if (wait_qp_event(p.b, IBV_EVENT_QP_ACCESS_ERR, 5000, seen, sizeof(seen)))
			pass("async_responder_access_err");
		else
			failf("async_responder_access_err", "got events [%s], expected %s on the responder QP",
			      seen, ibv_event_type_str(IBV_EVENT_QP_ACCESS_ERR));
		if (qp_state(p.b) != IBV_QPS_ERR)
			failf("responder_access_err_qp_err", "responder QP state got %s, expected ERR",
			      qps(qp_state(p.b)));
		else
			pass("responder_access_err_qp_err");
	}
out:
	pair_down(&p);
}

/* (ii) SEND with no receive posted and rnr_retry 0 -> RNR_RETRY_EXC_ERR */
static void t_rnr(void)
{
	const char *name = "wc_send_rnr_retry_exceeded";
	struct pair p;
	struct ibv_sge sge;
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_wc wc;
	int r;

	if (pair_up(name, &p, 0))
		goto out;
	sge = (struct ibv_sge){ (uintptr_t)p.bufa, 64, p.mra->lkey };
	wr.wr_id = 300;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	r = ibv_post_send(p.a, &wr, &bad);
	if (r) {
		failf(name, "post_send: got %s, expected 0", errname(r));
		goto out;
	}
	r = poll1(p.cqa, &wc, 20000);
	if (r != 1)
		failf(name, "got no completion within 20s, expected %s",
		      st(IBV_WC_RNR_RETRY_EXC_ERR));
	else if (wc.wr_id != 300 || wc.status != IBV_WC_RNR_RETRY_EXC_ERR)
		failf(name, "got wr_id %llu status %s, expected wr_id 300 status %s",
		      (unsigned long long)wc.wr_id, st(wc.status),
		      st(IBV_WC_RNR_RETRY_EXC_ERR));
	else
		pass(name);
out:
	pair_down(&p);
}

/* Every byte of b[0, n) is v. */
static int bytes_are(const char *b, int n, unsigned char v)
{
	while (n--)
		if ((unsigned char)b[n] != v)
			return 0;
	return 1;
}

/*
 * SQD (10.3.1.5): a SEND held up by RNR NAKs keeps the send queue draining,
 * so no SQ_DRAINED event comes and SQD -> RTS is refused (C10-36); a WRITE
 * posted in SQD is accepted (C10-33) but not processed (C10-37).  Once the
 * receive is posted the SEND completes, SQ_DRAINED is raised, and back in
 * RTS the WRITE runs.  With @len over the MTU the SEND is a multi-packet
 * message started before SQD: all of it arrives in SQD (C10-35).
 */
static void t_sqd_drain(const char *name, uint32_t len)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_SQD,
				  .en_sqd_async_notify = 1 };
	struct ibv_qp_init_attr ia;
	struct ibv_sge sge, wsge, rsge;
	struct ibv_send_wr wr = {}, wwr = {}, *bad;
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_wc wc;
	struct pair p;
	char seen[256];
	int r;

	if (pair_up(name, &p, 7))
		goto out;
	memset(p.bufa, 0x4e, len);
	sge = (struct ibv_sge){ (uintptr_t)p.bufa, len, p.mra->lkey };
	wr.wr_id = 700;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	r = ibv_post_send(p.a, &wr, &bad);
	if (r) {
		failf(name, "post SEND: got %s, expected 0", errname(r));
		goto out;
	}
	/* let it start (and draw RNR NAKs): SQD must not start it (C10-35) */
	usleep(200000);
	r = ibv_modify_qp(p.a, &qa, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY);
	if (r) {
		failf(name, "RTS -> SQD: got %s, expected 0", errname(r));
		goto out;
	}
	memset(p.bufa + 40960, 0x5c, 2048);
	wsge = (struct ibv_sge){ (uintptr_t)p.bufa + 40960, 2048, p.mra->lkey };
	wwr.wr_id = 701;
	wwr.sg_list = &wsge;
	wwr.num_sge = 1;
	wwr.opcode = IBV_WR_RDMA_WRITE;
	wwr.send_flags = IBV_SEND_SIGNALED;
	wwr.wr.rdma.remote_addr = (uintptr_t)p.bufb + 40960;
	wwr.wr.rdma.rkey = p.mrb->rkey;
	r = ibv_post_send(p.a, &wwr, &bad);
	if (r) {
		failf(name, "post WRITE in SQD: got %s, expected 0 (C10-33)",
		      errname(r));
		goto out;
	}
	if (wait_qp_event(p.a, IBV_EVENT_SQ_DRAINED, 500, seen, sizeof(seen))) {
		failf(name, "SQ_DRAINED while the SEND still waits for a receive");
		goto out;
	}
	qa.qp_state = IBV_QPS_RTS;
	r = ibv_modify_qp(p.a, &qa, IBV_QP_STATE);
	if (!r || qp_state(p.a) != IBV_QPS_SQD) {
		failf(name, "SQD -> RTS while draining: got %s, state %s; expected an error, SQD",
		      errname(r), qps(qp_state(p.a)));
		goto out;
	}
	rsge = (struct ibv_sge){ (uintptr_t)p.bufb, 32768, p.mrb->lkey };
	rwr.wr_id = 702;
	rwr.sg_list = &rsge;
	rwr.num_sge = 1;
	if (ibv_post_recv(p.b, &rwr, &rbad)) {
		failf(name, "post_recv on the peer failed");
		goto out;
	}
	if (!wait_qp_event(p.a, IBV_EVENT_SQ_DRAINED, 10000, seen, sizeof(seen))) {
		failf(name, "no SQ_DRAINED within 10 s after the receive was posted (events: %s)",
		      seen);
		goto out;
	}
	r = poll1(p.cqa, &wc, 1000);
	if (r != 1 || wc.wr_id != 700 || wc.status != IBV_WC_SUCCESS) {
		failf(name, "SEND: got %s, expected wr_id 700 success before SQ_DRAINED",
		      r == 1 ? st(wc.status) : "no completion");
		goto out;
	}
	/* the whole message, every packet of it, arrived in SQD */
	r = poll1(p.cqb, &wc, 1000);
	if (r != 1 || wc.wr_id != 702 || wc.status != IBV_WC_SUCCESS ||
	    wc.byte_len != len || !bytes_are(p.bufb, len, 0x4e) ||
	    !bytes_are(p.bufb + len, 32768 - len, 0xbb)) {
		failf(name, "receive: %s, byte_len %u; expected wr_id 702 success, %u bytes of 0x4e",
		      r == 1 ? st(wc.status) : "no completion", r == 1 ? wc.byte_len : 0, len);
		goto out;
	}
	if (poll1(p.cqa, &wc, 300) != 0) {
		failf(name, "wr_id %llu completed in SQD, expected the WRITE to wait (C10-37)",
		      (unsigned long long)wc.wr_id);
		goto out;
	}
	if (ibv_query_qp(p.a, &qa, IBV_QP_STATE, &ia) || qa.sq_draining) {
		failf(name, "query_qp after SQ_DRAINED: sq_draining %d, expected 0",
		      qa.sq_draining);
		goto out;
	}
	qa.qp_state = IBV_QPS_RTS;
	r = ibv_modify_qp(p.a, &qa, IBV_QP_STATE);
	if (r) {
		failf(name, "SQD -> RTS after SQ_DRAINED: got %s, expected 0",
		      errname(r));
		goto out;
	}
	r = poll1(p.cqa, &wc, 10000);
	if (r != 1 || wc.wr_id != 701 || wc.status != IBV_WC_SUCCESS)
		failf(name, "WRITE after SQD -> RTS: got %s, expected wr_id 701 success",
		      r == 1 ? st(wc.status) : "no completion");
	else if ((unsigned char)p.bufb[40959] != 0xbb ||
		 !bytes_are(p.bufb + 40960, 2048, 0x5c) ||
		 (unsigned char)p.bufb[43008] != 0xbb)
		failf(name, "WRITE after SQD -> RTS: wrong bytes at the target");
	else
		pass(name);
out:
	pair_down(&p);
}

/* A UC QP connected to dqpn, through RTR to RTS. */
static int uc_connect(struct ibv_qp *qp, uint32_t dqpn, uint32_t psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn, .rq_psn = psn,
		.ah_attr = {
			.is_global = 1, .port_num = 1,
			.grh = { .dgid = gid, .sgid_index = gid_index,
				 .hop_limit = 64 },
		},
	};
	int rc;

	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
	if (rc)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = psn;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static int post_send1(struct ibv_qp *qp, uint64_t id, void *buf, uint32_t len,
		      uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static int post_recv1(struct ibv_qp *qp, uint64_t id, void *buf, uint32_t len,
		      uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* Next completion on cq is (id, status), within ms. */
static int want_wc(const char *name, struct ibv_cq *cq, uint64_t id,
		   enum ibv_wc_status status, int ms)
{
	struct ibv_wc wc;
	int r = poll1(cq, &wc, ms);

	if (r == 1 && wc.wr_id == id && wc.status == status)
		return 0;
	if (r == 1)
		failf(name, "got wr_id %llu status %s, expected wr_id %llu %s",
		      (unsigned long long)wc.wr_id, st(wc.status),
		      (unsigned long long)id, st(status));
	else
		failf(name, "no completion within %d ms, expected wr_id %llu %s",
		      ms, (unsigned long long)id, st(status));
	return -1;
}

/*
 * C10-42, C10-97.2.1: a receive posted to a QP already in Error completes
 * with a flush error, without any other traffic to prompt it: a consumer
 * that drains its receive queue that way must see the completion.  Two
 * receives posted before the transition flush first, then the one posted
 * after it, each once.
 */
static void t_recv_posted_in_err(void)
{
	const char *name = "recv_posted_in_err_flushes";
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;
	struct pair p;

	if (pair_up(name, &p, 7))
		goto out;
	if (post_recv1(p.b, 70, p.bufb, 256, p.mrb->lkey) ||
	    post_recv1(p.b, 71, p.bufb + 256, 256, p.mrb->lkey) ||
	    ibv_modify_qp(p.b, &qa, IBV_QP_STATE) ||
	    want_wc(name, p.cqb, 70, IBV_WC_WR_FLUSH_ERR, 10000) ||
	    want_wc(name, p.cqb, 71, IBV_WC_WR_FLUSH_ERR, 10000))
		goto out;
	if (post_recv1(p.b, 72, p.bufb + 512, 256, p.mrb->lkey)) {
		failf(name, "post_recv in ERR: %s, expected 0", strerror(errno));
		goto out;
	}
	if (want_wc(name, p.cqb, 72, IBV_WC_WR_FLUSH_ERR, 5000))
		goto out;
	if (poll1(p.cqb, &wc, 300) != 0) {
		failf(name, "a further completion (wr_id %llu, %s)",
		      (unsigned long long)wc.wr_id, st(wc.status));
		goto out;
	}
	pass(name);
out:
	pair_down(&p);
}

/*
 * The same past one flush budget: a QP moved from Init to Error, then
 * 600 receives posted at once; the watch flushes a budget per look, and
 * all 600 complete WR_FLUSH_ERR, in order, each once (each within 20 s).
 */
static void t_recv_posted_in_err_many(void)
{
	const char *name = "recv_posted_in_err_past_a_budget";
	struct ibv_qp_cap cap = cap_ok;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	struct ibv_recv_wr wr[600], *bad;
	struct ibv_sge sge;
	struct ibv_cq *cq2 = NULL;
	struct ibv_qp *q = NULL;
	struct ibv_wc wc;
	struct pair p;
	int i, n;

	cap.max_recv_wr = 600;
	if (pair_up(name, &p, 7))
		goto out;
	cq2 = ibv_create_cq(ctx, 1024, NULL, NULL, 0);
	q = cq2 ? mk_qp(p.pd, cq2, cap, NULL) : NULL;
	if (!q || to_init(q, IBV_ACCESS_LOCAL_WRITE) ||
	    ibv_modify_qp(q, &qa, IBV_QP_STATE)) {
		failf(name, "setup: a QP of 600 receives in ERR: %s", strerror(errno));
		goto out;
	}
	sge = (struct ibv_sge){ (uintptr_t)p.bufb, 64, p.mrb->lkey };
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 600; i++) {
		wr[i].wr_id = 1000 + i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].next = i < 599 ? &wr[i + 1] : NULL;
	}
	if (ibv_post_recv(q, wr, &bad)) {
		failf(name, "post_recv of 600 in ERR: %s", strerror(errno));
		goto out;
	}
	for (n = 0; n < 600; n++) {
		memset(&wc, 0, sizeof(wc));
		if (poll1(cq2, &wc, 20000) != 1 || wc.wr_id != 1000u + n ||
		    wc.status != IBV_WC_WR_FLUSH_ERR) {
			failf(name, "completion %d: wr_id %llu %s, expected %d flushed",
			      n, (unsigned long long)wc.wr_id, st(wc.status), 1000 + n);
			goto out;
		}
	}
	if (poll1(cq2, &wc, 300) != 0)
		failf(name, "a completion past the 600");
	else
		pass(name);
out:
	if (q)
		ibv_destroy_qp(q);
	if (cq2)
		ibv_destroy_cq(cq2);
	pair_down(&p);
}

/*
 * C10-143, Table 82: a receive WQE whose buffer the responder may not write
 * (an L_Key without local write) fails locally: that WQE completes
 * LOC_PROT_ERR, the QP goes to Error, the receive posted after it is
 * flushed, and the requester's SEND is NAKed (REM_OP_ERR).  Nothing lands.
 */
static void t_recv_local_prot_err(void)
{
	const char *name = "recv_local_prot_err_qp_err_flush";
	struct ibv_mr *ro = NULL;
	struct pair p;
	int r;

	if (pair_up(name, &p, 7))
		goto out;
	ro = ibv_reg_mr(p.pd, p.bufb + 32768, 4096, 0);
	if (!ro) {
		failf(name, "setup: read-only reg_mr: %s", strerror(errno));
		goto out;
	}
	r = post_recv1(p.b, 10, p.bufb + 32768, 256, ro->lkey) ?:
	    post_recv1(p.b, 11, p.bufb, 256, p.mrb->lkey);
	if (r) {
		failf(name, "post_recv: got %s, expected 0", errname(r));
		goto out;
	}
	memset(p.bufa, 0x5c, 64);
	r = post_send1(p.a, 1, p.bufa, 64, p.mra->lkey);
	if (r) {
		failf(name, "post_send: got %s, expected 0", errname(r));
		goto out;
	}
	if (want_wc(name, p.cqb, 10, IBV_WC_LOC_PROT_ERR, 10000) ||
	    want_wc(name, p.cqb, 11, IBV_WC_WR_FLUSH_ERR, 10000) ||
	    want_wc(name, p.cqa, 1, IBV_WC_REM_OP_ERR, 10000))
		goto out;
	if (qp_state(p.b) != IBV_QPS_ERR)
		failf(name, "responder QP in %s, expected ERR", qps(qp_state(p.b)));
	else if (!bytes_are(p.bufb, BUF, 0xbb))
		failf(name, "receive buffers changed");
	else
		pass(name);
out:
	if (ro)
		ibv_dereg_mr(ro);
	pair_down(&p);
}

/*
 * p: a PD, a CQ each and two QPs of @type, each with a buffer (a: 0xaa,
 * b: 0xbb) registered with @acc; the QPs still in Reset.  0, or -1 after
 * failf() when the PD, a CQ or a buffer failed; a QP or MR that failed is
 * left NULL for the caller's check.  pair_down() frees what was made.
 */
static int pair_make(const char *name, struct pair *p, enum ibv_qp_type type,
		     int acc)
{
	struct ibv_qp_init_attr ia = { .cap = cap_ok, .qp_type = type };

	memset(p, 0, sizeof(*p));
	p->pd = ibv_alloc_pd(ctx);
	p->cqa = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	p->cqb = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	p->bufa = aligned_alloc(4096, BUF);
	p->bufb = aligned_alloc(4096, BUF);
	if (!p->pd || !p->cqa || !p->cqb || !p->bufa || !p->bufb) {
		failf(name, "setup: %s", strerror(errno));
		return -1;
	}
	ia.send_cq = p->cqa;
	ia.recv_cq = pair_a_rcq ?: p->cqa;
	p->a = ibv_create_qp(p->pd, &ia);
	ia.send_cq = ia.recv_cq = p->cqb;
	p->b = ibv_create_qp(p->pd, &ia);
	memset(p->bufa, 0xaa, BUF);
	memset(p->bufb, 0xbb, BUF);
	p->mra = ibv_reg_mr(p->pd, p->bufa, BUF, acc);
	p->mrb = ibv_reg_mr(p->pd, p->bufb, BUF, acc);
	return 0;
}

/*
 * p: a PD, a CQ each and two UC QPs connected in RTS (PSN 0x3000), each
 * with a buffer (a: 0xaa, b: 0xbb) registered for local and remote write.
 * 0, or -1 after failf(); pair_down() frees what was made either way.
 */
static int uc_pair_up(const char *name, struct pair *p)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

	if (pair_make(name, p, IBV_QPT_UC, acc))
		return -1;
	if (!p->a || !p->b || !p->mra || !p->mrb || to_init(p->a, acc) ||
	    to_init(p->b, acc) || uc_connect(p->a, p->b->qp_num, 0x3000) ||
	    uc_connect(p->b, p->a->qp_num, 0x3000)) {
		failf(name, "setup: UC pair: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * UC send error (10.3.1.6, C10-96): the failed SEND completes with its
 * error, the QP goes to SQE (not Error), what follows and what is posted
 * in SQE is flushed, the receive queue keeps working, and SQE -> RTS
 * brings the send queue back.
 */
static void t_uc_sqe(void)
{
	const char *name = "uc_send_error_sqe";
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_RTS };
	struct pair p = {};

	if (uc_pair_up(name, &p))
		goto out;
	/* a SEND through a key that does not exist, and one behind it */
	if (post_send1(p.a, 900, p.bufa, 64, p.mra->lkey ^ 0x5a5a00) ||
	    post_send1(p.a, 901, p.bufa, 64, p.mra->lkey)) {
		failf(name, "post_send failed");
		goto out;
	}
	if (want_wc(name, p.cqa, 900, IBV_WC_LOC_PROT_ERR, 10000) ||
	    want_wc(name, p.cqa, 901, IBV_WC_WR_FLUSH_ERR, 10000))
		goto out;
	if (qp_state(p.a) != IBV_QPS_SQE) {
		failf(name, "QP state %s after the send error, expected SQE",
		      qps(qp_state(p.a)));
		goto out;
	}
	/* the receive side of a QP in SQE still works */
	memset(p.bufb + 8192, 0x3c, 100);
	if (post_recv1(p.a, 920, p.bufa + 4096, 256, p.mra->lkey) ||
	    post_send1(p.b, 910, p.bufb + 8192, 100, p.mrb->lkey) ||
	    want_wc(name, p.cqb, 910, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqa, 920, IBV_WC_SUCCESS, 10000))
		goto out;
	if ((unsigned char)p.bufa[4096] != 0x3c ||
	    (unsigned char)p.bufa[4195] != 0x3c ||
	    (unsigned char)p.bufa[4196] != 0xaa) {
		failf(name, "the receive in SQE placed the wrong bytes");
		goto out;
	}
	/* posted in SQE: completed in error, never sent */
	if (post_send1(p.a, 902, p.bufa, 64, p.mra->lkey) ||
	    want_wc(name, p.cqa, 902, IBV_WC_WR_FLUSH_ERR, 10000))
		goto out;
	if (ibv_modify_qp(p.a, &qa, IBV_QP_STATE) || qp_state(p.a) != IBV_QPS_RTS) {
		failf(name, "SQE -> RTS failed: %s, state %s", strerror(errno),
		      qps(qp_state(p.a)));
		goto out;
	}
	memset(p.bufa + 12288, 0x7e, 50);
	if (post_recv1(p.b, 930, p.bufb, 256, p.mrb->lkey) ||
	    post_send1(p.a, 903, p.bufa + 12288, 50, p.mra->lkey) ||
	    want_wc(name, p.cqa, 903, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqb, 930, IBV_WC_SUCCESS, 10000))
		goto out;
	if ((unsigned char)p.bufb[0] != 0x7e || (unsigned char)p.bufb[49] != 0x7e) {
		failf(name, "the SEND after SQE -> RTS placed the wrong bytes");
		goto out;
	}
	pass(name);
out:
	pair_down(&p);
}

/*
 * o10-46: atomics only on RC.  On an RC pair a FETCH_ADD lands (the old
 * value comes back, the target grows by the add); the same WR on a UC QP
 * completes LOC_QP_OP_ERR, sends nothing (the peer's memory keeps its
 * value) and puts the QP in SQE.
 */
static int fetch_add1(struct ibv_qp *qp, uint64_t id, void *buf, uint32_t lkey,
		      void *raddr, uint32_t rkey, uint64_t add)
{
	struct ibv_sge sge = { (uintptr_t)buf, 8, lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.atomic.remote_addr = (uintptr_t)raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = add;
	return ibv_post_send(qp, &wr, &bad);
}

/*
 * b as a target: an MR over [addr, addr + len) of its PD with @mr_acc, and
 * b's QP access flags set to @qp_acc.  NULL after failf() if either fails.
 */
static struct ibv_mr *b_target(const char *name, struct pair *p, void *addr,
			       size_t len, int mr_acc, int qp_acc)
{
	struct ibv_qp_attr qa = { .qp_access_flags = qp_acc };
	struct ibv_mr *mr = ibv_reg_mr(p->pd, addr, len, mr_acc);

	if (!mr || ibv_modify_qp(p->b, &qa, IBV_QP_ACCESS_FLAGS)) {
		failf(name, "setup: target MR or access flags: %s", strerror(errno));
		if (mr)
			ibv_dereg_mr(mr);
		return NULL;
	}
	return mr;
}

/*
 * o10-48: atomics of one HCA at one address appear serialized.  Two
 * threads, each with its own RC pair into the same PD, run 2000
 * FETCH_ADDs of 1 each at the same word at once, one outstanding at a
 * time: the word ends at 4000 and the old values returned are 0..3999,
 * each exactly once.
 */
#define FADD_N 2000

struct fadd_run {
	struct ibv_qp *a, *b;
	struct ibv_cq *cqa, *cqb;
	struct ibv_mr *lmr;
	uint64_t *res, *word;
	uint32_t rkey;
	uint64_t old[FADD_N];
	char err[160];
};

static void *fadd_thread(void *arg)
{
	struct fadd_run *r = arg;
	struct ibv_sge sge = { (uintptr_t)r->res, 8, r->lmr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	int i, n;

	wr.wr.atomic.remote_addr = (uintptr_t)r->word;
	wr.wr.atomic.compare_add = 1;
	wr.wr.atomic.rkey = r->rkey;
	for (i = 0; i < FADD_N; i++) {
		wr.wr_id = i;
		if (ibv_post_send(r->a, &wr, &bad)) {
			snprintf(r->err, sizeof(r->err), "post #%d: %s", i, strerror(errno));
			return NULL;
		}
		n = poll1(r->cqa, &wc, 10000);
		if (n != 1 || wc.status != IBV_WC_SUCCESS || wc.wr_id != (uint64_t)i) {
			snprintf(r->err, sizeof(r->err), "FETCH_ADD #%d: %s", i,
				 n == 1 ? st(wc.status) : "no completion within 10 s");
			return NULL;
		}
		r->old[i] = *(volatile uint64_t *)r->res;
	}
	return NULL;
}

static void t_atomic_two_qps_serialized(void)
{
	const char *name = "atomic_two_qps_one_word_serialized";
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_ATOMIC;
	static struct fadd_run run[2];
	unsigned char *seen = calloc(2 * FADD_N, 1);
	uint64_t *word = aligned_alloc(4096, 4096);
	uint64_t *res = aligned_alloc(4096, 4096);
	struct ibv_mr *tmr = NULL, *lmr = NULL;
	struct ibv_pd *pd0 = ibv_alloc_pd(ctx);
	pthread_t th[2];
	int i, k, started = 0;

	memset(run, 0, sizeof(run));
	if (!seen || !word || !res || !pd0) {
		failf(name, "setup: %s", strerror(errno));
		goto out;
	}
	memset(word, 0, 4096);
	memset(res, 0, 4096);
	tmr = ibv_reg_mr(pd0, word, 4096, acc);
	lmr = ibv_reg_mr(pd0, res, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!tmr || !lmr) {
		failf(name, "setup: reg_mr: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < 2; i++) {
		struct fadd_run *r = &run[i];

		r->cqa = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		r->cqb = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		r->a = r->cqa ? mk_qp(pd0, r->cqa, cap_ok, NULL) : NULL;
		r->b = r->cqb ? mk_qp(pd0, r->cqb, cap_ok, NULL) : NULL;
		k = !r->a || !r->b ? errno : to_init(r->a, acc) ?:
		    to_init(r->b, acc) ?:
		    connect_pair(r->a, r->b, 0x100 * (i + 1), 0x900 * (i + 1), 7);
		if (k) {
			failf(name, "setup: pair %d: %s", i, strerror(k));
			goto out;
		}
		r->lmr = lmr;
		r->res = res + 8 * i;	/* a cache line each */
		r->word = word;
		r->rkey = tmr->rkey;
	}
	for (i = 0; i < 2; i++) {
		int e = pthread_create(&th[i], NULL, fadd_thread, &run[i]);

		if (e) {
			failf(name, "pthread_create: %s", strerror(e));
			break;
		}
		started++;
	}
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (started < 2)
		goto out;
	for (i = 0; i < 2; i++)
		if (run[i].err[0]) {
			failf(name, "thread %d: %s", i, run[i].err);
			goto out;
		}
	for (i = 0; i < 2; i++)
		for (k = 0; k < FADD_N; k++) {
			uint64_t v = run[i].old[k];

			if (v >= 2 * FADD_N || seen[v]++) {
				failf(name, "thread %d, FETCH_ADD #%d returned %llu: %s",
				      i, k, (unsigned long long)v,
				      v >= 2 * FADD_N ? "out of range" : "twice");
				goto out;
			}
		}
	if (*word != 2 * FADD_N)
		failf(name, "the word is %llu after %d FETCH_ADDs of 1",
		      (unsigned long long)*word, 2 * FADD_N);
	else
		pass(name);
out:
	for (i = 0; i < 2; i++) {
		if (run[i].a)
			ibv_destroy_qp(run[i].a);
		if (run[i].b)
			ibv_destroy_qp(run[i].b);
		if (run[i].cqa)
			ibv_destroy_cq(run[i].cqa);
		if (run[i].cqb)
			ibv_destroy_cq(run[i].cqb);
	}
	if (tmr)
		ibv_dereg_mr(tmr);
	if (lmr)
		ibv_dereg_mr(lmr);
	if (pd0)
		ibv_dealloc_pd(pd0);
	free(word);
	free(res);
	free(seen);
}

static void t_atomic_rc_only(void)
{
	const char *name = "atomic_rc_lands_uc_refused";
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_mr *amr = NULL, *umr = NULL;
	uint64_t old, now;
	struct pair p, u = {};
	int r;

	if (pair_up(name, &p, 7))
		goto out;
	*(uint64_t *)(p.bufb + 64) = 1000;
	amr = b_target(name, &p, p.bufb, BUF, acc, acc | IBV_ACCESS_REMOTE_READ);
	if (!amr)
		goto out;
	r = fetch_add1(p.a, 1, p.bufa, p.mra->lkey, p.bufb + 64, amr->rkey, 5);
	if (r) {
		failf(name, "RC FETCH_ADD: post got %s, expected 0", errname(r));
		goto out;
	}
	if (want_wc(name, p.cqa, 1, IBV_WC_SUCCESS, 20000))
		goto out;
	memcpy(&old, p.bufa, 8);
	memcpy(&now, p.bufb + 64, 8);
	if (old != 1000 || now != 1005) {
		failf(name, "RC FETCH_ADD: returned %llu and left %llu, expected 1000 and 1005",
		      (unsigned long long)old, (unsigned long long)now);
		goto out;
	}

	/* the same on UC, whose peer's MR would allow it */
	if (uc_pair_up(name, &u))
		goto out;
	umr = ibv_reg_mr(u.pd, u.bufb + 4096, 4096, acc);
	if (!umr) {
		failf(name, "setup: UC atomic MR: %s", strerror(errno));
		goto out;
	}
	*(uint64_t *)(u.bufb + 4096) = 2000;
	r = fetch_add1(u.a, 2, u.bufa + 8, u.mra->lkey, u.bufb + 4096, umr->rkey, 7);
	if (r) {
		failf(name, "UC FETCH_ADD: post got %s, expected 0 and an error completion",
		      errname(r));
		goto out;
	}
	if (want_wc(name, u.cqa, 2, IBV_WC_LOC_QP_OP_ERR, 20000))
		goto out;
	memcpy(&now, u.bufb + 4096, 8);
	if (now != 2000 || !bytes_are(u.bufa + 8, 8, 0xaa)) {
		failf(name, "UC FETCH_ADD: the target holds %llu (expected 2000) or the local buffer changed",
		      (unsigned long long)now);
		goto out;
	}
	if (qp_state(u.a) != IBV_QPS_SQE) {
		failf(name, "UC QP state %s after the refused atomic, expected SQE",
		      qps(qp_state(u.a)));
		goto out;
	}
	pass(name);
out:
	if (umr)
		ibv_dereg_mr(umr);
	pair_down(&u);
	if (amr)
		ibv_dereg_mr(amr);
	pair_down(&p);
}

/*
 * Completion events on @ch, the first within @ms and each next within
 * @more_ms, each acknowledged and counted in @seen by its CQ's place in
 * @cqs (@n of them): how many, or -1 for an event on a CQ not in @cqs.
 */
static int cq_events(struct ibv_comp_channel *ch, struct ibv_cq **cqs, int n,
		     int *seen, int ms, int more_ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int ev = 0, i;

	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	while (poll(&pfd, 1, ev ? more_ms : ms) == 1 &&
	       !ibv_get_cq_event(ch, &ev_cq, &ev_ctx)) {
		ibv_ack_cq_events(ev_cq, 1);
		for (i = 0; i < n && cqs[i] != ev_cq; i++)
			;
		if (i == n)
			return -1;
		seen[i]++;
		ev++;
	}
	return ev;
}

/*
 * C10-102 and C10-114: each QP with a send CQ and a receive CQ of its own,
 * all four armed on one completion channel.  A SEND's completion goes to
 * the sender's send CQ and the receive's to the receiver's receive CQ,
 * the other two stay empty, and the channel reports exactly those two
 * CQs, once each.
 */
static void t_cq_split_events(void)
{
	const char *name = "cq_split_send_recv_events";
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq[4] = {};	/* a send, a recv, b send, b recv */
	struct ibv_qp_init_attr ia = { .cap = cap_ok, .qp_type = IBV_QPT_RC };
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	int seen[4] = {}, i, n;
	struct ibv_wc wc;
	struct pair p = {};

	p.pd = ibv_alloc_pd(ctx);
	for (i = 0; i < 4 && ch; i++)
		cq[i] = ibv_create_cq(ctx, 16, NULL, ch, 0);
	p.bufa = aligned_alloc(4096, BUF);
	p.bufb = aligned_alloc(4096, BUF);
	if (!ch || !p.pd || !cq[3] || !p.bufa || !p.bufb) {
		failf(name, "setup: %s", strerror(errno));
		goto out;
	}
	ia.send_cq = cq[0];
	ia.recv_cq = cq[1];
	p.a = ibv_create_qp(p.pd, &ia);
	ia.send_cq = cq[2];
	ia.recv_cq = cq[3];
	p.b = ibv_create_qp(p.pd, &ia);
	memset(p.bufa, 0x6d, 256);
	memset(p.bufb, 0xbb, 512);
	p.mra = ibv_reg_mr(p.pd, p.bufa, BUF, acc);
	p.mrb = ibv_reg_mr(p.pd, p.bufb, BUF, acc);
	if (!p.a || !p.b || !p.mra || !p.mrb || to_init(p.a, acc) || to_init(p.b, acc) ||
	    connect_pair(p.a, p.b, 0x1000, 0x2000, 7)) {
		failf(name, "setup: QPs: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < 4; i++)
		if (ibv_req_notify_cq(cq[i], 0)) {
			failf(name, "req_notify_cq %d: %s", i, strerror(errno));
			goto out;
		}
	if (post_recv1(p.b, 2, p.bufb, 512, p.mrb->lkey) ||
	    post_send1(p.a, 1, p.bufa, 256, p.mra->lkey)) {
		failf(name, "posting: %s", strerror(errno));
		goto out;
	}
	if (want_wc(name, cq[0], 1, IBV_WC_SUCCESS, 20000) ||
	    want_wc(name, cq[3], 2, IBV_WC_SUCCESS, 20000))
		goto out;
	if (!bytes_are(p.bufb, 256, 0x6d) || !bytes_are(p.bufb + 256, 256, 0xbb)) {
		failf(name, "the SEND placed the wrong bytes");
		goto out;
	}
	for (i = 0; i < 4; i++) {
		n = ibv_poll_cq(cq[i], 1, &wc);
		if (n) {
			failf(name, "CQ %d (%s %s) holds another completion (wr_id %llu)", i,
			      i < 2 ? "a's" : "b's", i % 2 ? "receive" : "send",
			      n > 0 ? (unsigned long long)wc.wr_id : 0ULL);
			goto out;
		}
	}
	/* the events: a's send CQ and b's receive CQ, once each, no more */
	if (cq_events(ch, cq, 4, seen, 5000, 2000) < 0) {
		failf(name, "an event for a CQ that is none of the four");
		goto out;
	}
	if (seen[0] != 1 || seen[3] != 1 || seen[1] || seen[2]) {
		failf(name, "events per CQ (a send, a recv, b send, b recv): %d %d %d %d, expected 1 0 0 1",
		      seen[0], seen[1], seen[2], seen[3]);
		goto out;
	}
	pass(name);
out:
	if (p.a)
		ibv_destroy_qp(p.a);
	if (p.b)
		ibv_destroy_qp(p.b);
	p.a = p.b = NULL;
	for (i = 0; i < 4; i++)
		if (cq[i])
			ibv_destroy_cq(cq[i]);
	if (ch)
		ibv_destroy_comp_channel(ch);
	pair_down(&p);
}

/*
 * C10-113: arming a CQ that already holds a completion raises no event
 * for it.  C10-111: arming it twice more leaves one request, and C10-112:
 * the three completions that follow raise exactly one event; the two
 * after that event raise none (the CQ is no longer armed).
 */
static void t_cq_arm_once(void)
{
	const char *name = "cq_arm_once_one_event";
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_qp_init_attr ia = { .cap = cap_ok, .qp_type = IBV_QPT_RC };
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_cq *scq = NULL;
	struct pair p = {};
	int i, n, seen[1] = {};

	p.pd = ibv_alloc_pd(ctx);
	p.cqb = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (ch)
		scq = ibv_create_cq(ctx, 16, NULL, ch, 0);
	p.bufa = aligned_alloc(4096, BUF);
	p.bufb = aligned_alloc(4096, BUF);
	if (!ch || !p.pd || !scq || !p.cqb || !p.bufa || !p.bufb) {
		failf(name, "setup: %s", strerror(errno));
		goto out;
	}
	ia.send_cq = ia.recv_cq = scq;
	p.a = ibv_create_qp(p.pd, &ia);
	ia.send_cq = ia.recv_cq = p.cqb;
	p.b = ibv_create_qp(p.pd, &ia);
	p.mra = ibv_reg_mr(p.pd, p.bufa, BUF, acc);
	p.mrb = ibv_reg_mr(p.pd, p.bufb, BUF, acc);
	if (!p.a || !p.b || !p.mra || !p.mrb || to_init(p.a, acc) || to_init(p.b, acc) ||
	    connect_pair(p.a, p.b, 0x1000, 0x2000, 7)) {
		failf(name, "setup: QPs: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < 6; i++)
		if (post_recv1(p.b, 100 + i, p.bufb + 64 * i, 64, p.mrb->lkey)) {
			failf(name, "post_recv: %s", strerror(errno));
			goto out;
		}
	/* a completion on the CQ before it is armed, left there */
	if (post_send1(p.a, 1, p.bufa, 16, p.mra->lkey) ||
	    want_wc(name, p.cqb, 100, IBV_WC_SUCCESS, 20000))
		goto out;
	usleep(100000);		/* the sender's CQE follows the ACK */
	if (ibv_req_notify_cq(scq, 0)) {
		failf(name, "req_notify_cq: %s", strerror(errno));
		goto out;
	}
	n = cq_events(ch, &scq, 1, seen, 300, 300);
	if (n) {
		failf(name, "arming a CQ that holds a completion raised %d event(s), expected none", n);
		goto out;
	}
	if (ibv_req_notify_cq(scq, 0) || ibv_req_notify_cq(scq, 0)) {
		failf(name, "arming again: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < 3; i++)
		if (post_send1(p.a, 2 + i, p.bufa, 16, p.mra->lkey) ||
		    want_wc(name, p.cqb, 101 + i, IBV_WC_SUCCESS, 20000))
			goto out;
	n = cq_events(ch, &scq, 1, seen, 2000, 2000);
	if (n != 1) {
		failf(name, "three completions after three arms raised %d event(s), expected 1", n);
		goto out;
	}
	for (i = 0; i < 2; i++)
		if (post_send1(p.a, 5 + i, p.bufa, 16, p.mra->lkey) ||
		    want_wc(name, p.cqb, 104 + i, IBV_WC_SUCCESS, 20000))
			goto out;
	n = cq_events(ch, &scq, 1, seen, 300, 300);
	if (n) {
		failf(name, "completions after the event, not armed again, raised %d event(s), expected none", n);
		goto out;
	}
	for (i = 0; i < 6; i++)
		if (want_wc(name, scq, 1 + i, IBV_WC_SUCCESS, 5000))
			goto out;
	pass(name);
out:
	if (p.a)
		ibv_destroy_qp(p.a);
	p.a = NULL;
	if (scq)
		ibv_destroy_cq(scq);
	if (ch)
		ibv_destroy_comp_channel(ch);
	pair_down(&p);
}

/* ---------------------------------------------------------------------- */
/* Incoming messages in each QP state (10.3.1). */

static int post_rdma1(struct ibv_qp *qp, uint64_t id, enum ibv_wr_opcode op,
		      void *buf, uint32_t len, uint32_t lkey, void *raddr,
		      uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

/* A port counter of this device (hw_counters), -1 if unreadable. */
static long hw_counter(const char *cname)
{
	char path[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		 ibv_get_device_name(ctx->device), cname);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/*
 * C10-27, C10-28: a QP in RTR takes receive posts and processes what
 * arrives (SEND and WRITE), acknowledging it, without leaving RTR.
 */
static void t_rtr_incoming(void)
{
	const char *name = "rtr_recv_posted_and_processed";
	struct pair p;
	int rc;

	if (pair_alloc(name, &p))
		goto out;
	rc = to_rtr(p.a, p.b->qp_num, 0x1000) ?:
	     to_rtr(p.b, p.a->qp_num, 0x2000) ?: to_rts(p.a, 0x2000, 7);
	if (rc) {
		failf(name, "setup: a to RTS, b to RTR: %s", errname(rc));
		goto out;
	}
	rc = post_recv1(p.b, 10, p.bufb, 256, p.mrb->lkey);
	if (rc) {
		failf(name, "post_recv in RTR: got %s, expected 0", errname(rc));
		goto out;
	}
	memset(p.bufa, 0x31, 100);
	memset(p.bufa + 4096, 0x32, 3000);
	if (post_send1(p.a, 11, p.bufa, 100, p.mra->lkey) ||
	    post_rdma1(p.a, 12, IBV_WR_RDMA_WRITE, p.bufa + 4096, 3000,
		       p.mra->lkey, p.bufb + 8192, p.mrb->rkey)) {
		failf(name, "post_send: %s", strerror(errno));
		goto out;
	}
	if (want_wc(name, p.cqa, 11, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqa, 12, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqb, 10, IBV_WC_SUCCESS, 10000))
		goto out;
	if (!bytes_are(p.bufb, 100, 0x31) || !bytes_are(p.bufb + 100, 156, 0xbb) ||
	    !bytes_are(p.bufb + 8192, 3000, 0x32) ||
	    !bytes_are(p.bufb + 8192 + 3000, 100, 0xbb)) {
		failf(name, "the SEND or WRITE into the QP in RTR placed the wrong bytes");
		goto out;
	}
	if (qp_state(p.b) != IBV_QPS_RTR) {
		failf(name, "receiver in %s, expected RTR", qps(qp_state(p.b)));
		goto out;
	}
	pass(name);
out:
	pair_down(&p);
}

/*
 * C10-34: a QP in SQD processes incoming SEND, WRITE and READ as in RTS
 * (the READ's responses go out from the responder, not the drained SQ).
 */
static void t_sqd_incoming(void)
{
	const char *name = "sqd_incoming_processed";
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_SQD };
	struct pair p;

	if (pair_up(name, &p, 7))
		goto out;
	if (ibv_modify_qp(p.b, &qa, IBV_QP_STATE)) {
		failf(name, "RTS -> SQD: %s", strerror(errno));
		goto out;
	}
	memset(p.bufa, 0x41, 200);
	memset(p.bufa + 4096, 0x42, 5000);
	memset(p.bufb + 32768, 0x43, 6000);
	if (post_recv1(p.b, 20, p.bufb, 256, p.mrb->lkey) ||
	    post_send1(p.a, 21, p.bufa, 200, p.mra->lkey) ||
	    post_rdma1(p.a, 22, IBV_WR_RDMA_WRITE, p.bufa + 4096, 5000,
		       p.mra->lkey, p.bufb + 8192, p.mrb->rkey) ||
	    post_rdma1(p.a, 23, IBV_WR_RDMA_READ, p.bufa + 16384, 6000,
		       p.mra->lkey, p.bufb + 32768, p.mrb->rkey)) {
		failf(name, "post: %s", strerror(errno));
		goto out;
	}
	if (want_wc(name, p.cqa, 21, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqa, 22, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqa, 23, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqb, 20, IBV_WC_SUCCESS, 10000))
		goto out;
	if (!bytes_are(p.bufb, 200, 0x41) || !bytes_are(p.bufb + 200, 56, 0xbb) ||
	    !bytes_are(p.bufb + 8192, 5000, 0x42) ||
	    !bytes_are(p.bufb + 8192 + 5000, 100, 0xbb) ||
	    !bytes_are(p.bufa + 16384, 6000, 0x43) ||
	    !bytes_are(p.bufa + 16384 + 6000, 100, 0xaa)) {
		failf(name, "SEND, WRITE or READ through the QP in SQD moved the wrong bytes");
		goto out;
	}
	if (qp_state(p.b) != IBV_QPS_SQD) {
		failf(name, "responder in %s, expected SQD", qps(qp_state(p.b)));
		goto out;
	}
	pass(name);
out:
	pair_down(&p);
}

/*
 * C10-23 (RESET) and C10-41.2.1 (ERR): what arrives for the QP is dropped
 * without an answer and without a completion: the sender runs out of
 * retries, the receiver's memory and CQ stay untouched, and every drop is
 * counted (rcvd_qp_state_drop: the first transmission and at most 7
 * retries).
 */
static void t_state_drops(int to_err)
{
	const char *name = to_err ? "err_incoming_dropped" : "reset_incoming_dropped";
	struct ibv_qp_attr qa = { .qp_state = to_err ? IBV_QPS_ERR : IBV_QPS_RESET };
	struct ibv_wc wc;
	struct pair p;
	long c0, c1;

	if (pair_up(name, &p, 7))
		goto out;
	if (to_err && post_recv1(p.b, 30, p.bufb, 256, p.mrb->lkey)) {
		failf(name, "post_recv: %s", strerror(errno));
		goto out;
	}
	if (ibv_modify_qp(p.b, &qa, IBV_QP_STATE)) {
		failf(name, "RTS -> %s: %s", qps(qa.qp_state), strerror(errno));
		goto out;
	}
	if (to_err && want_wc(name, p.cqb, 30, IBV_WC_WR_FLUSH_ERR, 10000))
		goto out;
	c0 = hw_counter("rcvd_qp_state_drop");
	memset(p.bufa, 0x51, 64);
	if (post_rdma1(p.a, 31, IBV_WR_RDMA_WRITE, p.bufa, 64, p.mra->lkey,
		       p.bufb + 4096, p.mrb->rkey)) {
		failf(name, "post_send: %s", strerror(errno));
		goto out;
	}
	/* 8 transmissions 67 ms apart at least */
	if (want_wc(name, p.cqa, 31, IBV_WC_RETRY_EXC_ERR, 30000))
		goto out;
	c1 = hw_counter("rcvd_qp_state_drop");
	if (c0 < 0 || c1 < 0 || c1 - c0 < 1 || c1 - c0 > 8) {
		failf(name, "rcvd_qp_state_drop moved by %ld (from %ld), expected 1..8",
		      c1 - c0, c0);
		goto out;
	}
	if (poll1(p.cqb, &wc, 100) != 0) {
		failf(name, "the receiver in %s reported a completion (wr_id %llu)",
		      qps(qa.qp_state), (unsigned long long)wc.wr_id);
		goto out;
	}
	if (!bytes_are(p.bufb + 4096, 64, 0xbb)) {
		failf(name, "the WRITE reached the memory of a QP in %s",
		      qps(qa.qp_state));
		goto out;
	}
	pass(name);
out:
	pair_down(&p);
}

/* A UD QP through INIT and RTR to RTS. */
static int ud_up(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = qkey };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x100;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/* An AH on @pd to this port's own GID: datagrams loop back to the device. */
static struct ibv_ah *ah_to_self(struct ibv_pd *pd)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = gid, .sgid_index = gid_index, .hop_limit = 64 },
	};

	return ibv_create_ah(pd, &aa);
}

/*
 * C10-11.2.2: a PD still used by a QP, an AH, an SRQ or a memory window
 * is not deallocated: ibv_dealloc_pd returns EBUSY, the object still
 * works (a query succeeds), and once it is gone the PD goes.
 */
static void t_dealloc_pd_in_use(void)
{
	static const char *const names[] = {
		"dealloc_pd_in_use_by_qp", "dealloc_pd_in_use_by_ah",
		"dealloc_pd_in_use_by_srq", "dealloc_pd_in_use_by_mw",
	};
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	int i, r;

	for (i = 0; i < 4; i++) {
		struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
		struct ibv_qp *qp = NULL;
		struct ibv_ah *ah = NULL;
		struct ibv_srq *srq = NULL;
		struct ibv_mw *mw = NULL;
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr qia;
		struct ibv_srq_attr sa;
		int ok;

		if (!pd2 || !cq) {
			failf(names[i], "setup: pd or cq: %s", strerror(errno));
			if (pd2)
				ibv_dealloc_pd(pd2);
			continue;
		}
		switch (i) {
		case 0:
			ok = !!(qp = mk_qp(pd2, cq, cap_ok, NULL));
			break;
		case 1:
			ok = !!(ah = ah_to_self(pd2));
			break;
		case 2:
			ok = !!(srq = srq16(pd2));
			break;
		default:
			ok = !!(mw = ibv_alloc_mw(pd2, IBV_MW_TYPE_2));
			break;
		}
		if (!ok) {
			failf(names[i], "setup: the object: %s", strerror(errno));
			ibv_dealloc_pd(pd2);
			continue;
		}
		r = ibv_dealloc_pd(pd2);
		if (!r)
			pd2 = NULL;	/* gone under its object: not twice */
		if (r != EBUSY)
			failf(names[i], "ibv_dealloc_pd: got %s, expected EBUSY", errname(r));
		else if ((qp && ibv_query_qp(qp, &qa, IBV_QP_STATE, &qia)) ||
			 (srq && ibv_query_srq(srq, &sa)))
			failf(names[i], "the object no longer answers a query: %s",
			      strerror(errno));
		else
			pass(names[i]);
		if (qp)
			ibv_destroy_qp(qp);
		if (ah)
			ibv_destroy_ah(ah);
		if (srq)
			ibv_destroy_srq(srq);
		if (mw)
			ibv_dealloc_mw(mw);
		r = pd2 ? ibv_dealloc_pd(pd2) : 0;
		if (r)
			failf(names[i], "ibv_dealloc_pd once the object is gone: %s", errname(r));
	}
	if (cq)
		ibv_destroy_cq(cq);
}

static int ud_send1(struct ibv_qp *qp, uint64_t id, struct ibv_ah *ah,
		    uint32_t dqpn, void *buf, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = dqpn;
	wr.wr.ud.remote_qkey = 0x11111111;
	return ibv_post_send(qp, &wr, &bad);
}

/*
 * p: a PD, a CQ each and two UD QPs in RTS (Q_Key 0x11111111), each with a
 * buffer (a: 0xaa, b: 0xbb) registered for local write.  0, or -1 after
 * failf(); pair_down() frees what was made either way.
 */
static int ud_pair_up(const char *name, struct pair *p)
{
	if (pair_make(name, p, IBV_QPT_UD, IBV_ACCESS_LOCAL_WRITE))
		return -1;
	if (!p->a || !p->b || !p->mra || !p->mrb ||
	    ud_up(p->a, 0x11111111) || ud_up(p->b, 0x11111111)) {
		failf(name, "setup: UD pair: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * C10-15: the Q_Key is a Post Send modifier the receiver checks, and one
 * with its high-order bit set means the sending QP's own.  a's QP Q_Key
 * is b's, 0x22222222: a datagram with WR Q_Key 0x80000001 arrives (it
 * went out with a's), one with 0x33333333 is dropped as a Q_Key mismatch
 * (the sender completes, rcvd_qkey_mismatch moves, nothing lands), one
 * with 0x22222222 arrives.
 */
static int ud_send_qkey(struct ibv_qp *qp, uint64_t id, struct ibv_ah *ah,
			uint32_t dqpn, uint32_t qkey, void *buf, uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)buf, 32, lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = dqpn;
	wr.wr.ud.remote_qkey = qkey;
	return ibv_post_send(qp, &wr, &bad);
}

static void t_ud_qkey(void)
{
	const char *name = "ud_qkey_checked_high_bit_means_qps";
	struct ibv_ah *ah = NULL;
	struct ibv_wc wc;
	struct pair p = {};
	long q0, q1;
	int i;

	if (pair_make(name, &p, IBV_QPT_UD, IBV_ACCESS_LOCAL_WRITE) ||
	    !p.a || !p.b || !p.mra || !p.mrb || ud_up(p.a, 0x22222222) ||
	    ud_up(p.b, 0x22222222) || !(ah = ah_to_self(p.pd))) {
		failf(name, "setup: UD pair and AH: %s", strerror(errno));
		goto out;
	}
	memset(p.bufa, 0x61, 32);
	memset(p.bufa + 64, 0x62, 32);
	memset(p.bufa + 128, 0x63, 32);
	q0 = hw_counter("rcvd_qkey_mismatch");
	if (post_recv1(p.b, 90, p.bufb, 32 + 40, p.mrb->lkey) ||
	    ud_send_qkey(p.a, 1, ah, p.b->qp_num, 0x80000001, p.bufa, p.mra->lkey) ||
	    want_wc(name, p.cqa, 1, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqb, 90, IBV_WC_SUCCESS, 10000))
		goto out;
	if (!bytes_are(p.bufb + 40, 32, 0x61)) {
		failf(name, "the datagram sent with Q_Key 0x80000001 carried other bytes");
		goto out;
	}
	if (post_recv1(p.b, 91, p.bufb + 256, 32 + 40, p.mrb->lkey) ||
	    ud_send_qkey(p.a, 2, ah, p.b->qp_num, 0x33333333, p.bufa + 64, p.mra->lkey) ||
	    want_wc(name, p.cqa, 2, IBV_WC_SUCCESS, 10000))
		goto out;
	if (poll1(p.cqb, &wc, 300) != 0) {
		failf(name, "a datagram with Q_Key 0x33333333 was received (wr_id %llu)",
		      (unsigned long long)wc.wr_id);
		goto out;
	}
	for (i = 0; i < 100 && (q1 = hw_counter("rcvd_qkey_mismatch")) == q0; i++)
		usleep(10000);
	if (q0 < 0 || q1 != q0 + 1) {
		failf(name, "rcvd_qkey_mismatch %ld -> %ld, expected one more", q0, q1);
		goto out;
	}
	if (ud_send_qkey(p.a, 3, ah, p.b->qp_num, 0x22222222, p.bufa + 128, p.mra->lkey) ||
	    want_wc(name, p.cqa, 3, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqb, 91, IBV_WC_SUCCESS, 10000))
		goto out;
	if (!bytes_are(p.bufb + 256 + 40, 32, 0x63))
		failf(name, "receive 91 does not hold the datagram sent with b's Q_Key");
	else
		pass(name);
out:
	if (ah)
		ibv_destroy_ah(ah);
	pair_down(&p);
}

/*
 * UD send error (10.3.1.6, C10-38..C10-40): as uc_send_error_sqe, for a
 * datagram QP: the failed SEND completes with its error, the QP goes to
 * SQE, later and newly posted sends are flushed, datagrams still arrive,
 * and SQE -> RTS brings the send queue back.
 */
static void t_ud_sqe(void)
{
	const char *name = "ud_send_error_sqe";
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_RTS };
	struct ibv_ah *ah = NULL;
	struct pair p = {};

	if (ud_pair_up(name, &p))
		goto out;
	ah = ah_to_self(p.pd);
	if (!ah) {
		failf(name, "setup: create_ah: %s", strerror(errno));
		goto out;
	}
	if (ud_send1(p.a, 900, ah, p.b->qp_num, p.bufa, 64,
		     p.mra->lkey ^ 0x5a5a00) ||
	    ud_send1(p.a, 901, ah, p.b->qp_num, p.bufa, 64, p.mra->lkey)) {
		failf(name, "post_send failed");
		goto out;
	}
	if (want_wc(name, p.cqa, 900, IBV_WC_LOC_PROT_ERR, 10000) ||
	    want_wc(name, p.cqa, 901, IBV_WC_WR_FLUSH_ERR, 10000))
		goto out;
	if (qp_state(p.a) != IBV_QPS_SQE) {
		failf(name, "QP state %s after the send error, expected SQE",
		      qps(qp_state(p.a)));
		goto out;
	}
	/* in SQE datagrams still arrive: 40 bytes of GRH, then the payload */
	memset(p.bufb + 8192, 0x3c, 100);
	if (post_recv1(p.a, 920, p.bufa + 4096, 40 + 256, p.mra->lkey) ||
	    ud_send1(p.b, 910, ah, p.a->qp_num, p.bufb + 8192, 100, p.mrb->lkey) ||
	    want_wc(name, p.cqb, 910, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqa, 920, IBV_WC_SUCCESS, 10000))
		goto out;
	if (!bytes_are(p.bufa + 4096 + 40, 100, 0x3c) ||
	    !bytes_are(p.bufa + 4096 + 140, 100, 0xaa)) {
		failf(name, "the datagram received in SQE placed the wrong bytes");
		goto out;
	}
	/* posted in SQE: completed in error, never sent */
	if (post_recv1(p.b, 931, p.bufb, 40 + 256, p.mrb->lkey) ||
	    ud_send1(p.a, 902, ah, p.b->qp_num, p.bufa, 64, p.mra->lkey) ||
	    want_wc(name, p.cqa, 902, IBV_WC_WR_FLUSH_ERR, 10000))
		goto out;
	if (ibv_modify_qp(p.a, &qa, IBV_QP_STATE) || qp_state(p.a) != IBV_QPS_RTS) {
		failf(name, "SQE -> RTS failed: %s, state %s", strerror(errno),
		      qps(qp_state(p.a)));
		goto out;
	}
	memset(p.bufa + 12288, 0x7e, 50);
	if (ud_send1(p.a, 903, ah, p.b->qp_num, p.bufa + 12288, 50, p.mra->lkey) ||
	    want_wc(name, p.cqa, 903, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqb, 931, IBV_WC_SUCCESS, 10000))
		goto out;
	if (!bytes_are(p.bufb + 40, 50, 0x7e) || !bytes_are(p.bufb + 90, 100, 0xbb)) {
		failf(name, "the datagram after SQE -> RTS placed the wrong bytes");
		goto out;
	}
	pass(name);
out:
	if (ah)
		ibv_destroy_ah(ah);
	pair_down(&p);
}

/*
 * The datagrams one QP received within ms: each must come from src_qp,
 * 40 bytes of GRH then len bytes of v.  -1 (after failf) on anything else.
 */
static int ud_received(const char *name, struct ibv_cq *cq, uint32_t src_qp,
		       const char *buf, uint32_t len, unsigned char v, int ms)
{
	struct ibv_wc wc;
	int n = 0, r;

	while ((r = poll1(cq, &wc, ms)) == 1) {
		if (wc.status != IBV_WC_SUCCESS || wc.src_qp != src_qp ||
		    wc.byte_len != 40 + len ||
		    !bytes_are(buf + (wc.wr_id & 0xff) * 512 + 40, len, v)) {
			failf(name, "datagram wr_id %llu: status %s src_qp %#x byte_len %u, expected success from %#x, %u bytes of %#x",
			      (unsigned long long)wc.wr_id, st(wc.status),
			      wc.src_qp, wc.byte_len, src_qp, 40 + len, v);
			return -1;
		}
		n++;
		ms = 300;	/* a second copy arrives right behind the first */
	}
	return r < 0 ? -1 : n;
}

/*
 * C10-151: an immediate error leaves a UD QP as it was.  A SEND with more
 * SGEs than the QP allows is refused at the post (EINVAL); the QP stays in
 * RTS, nothing completes for it, and the SEND posted next arrives with its
 * bytes and completes alone.  (A WRITE on UD is not refused at the post:
 * librxe writes it to the ring, and the kernel completes it
 * LOC_QP_OP_ERR when it fetches it.)
 */
static void t_ud_immediate_err(void)
{
	const char *name = "ud_immediate_error_no_effect";
	struct ibv_sge sge[2];
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_ah *ah = NULL;
	struct ibv_wc wc;
	struct pair p = {};
	int r, n;

	if (ud_pair_up(name, &p))
		goto out;
	ah = ah_to_self(p.pd);
	if (!ah || post_recv1(p.b, 0, p.bufb, 512, p.mrb->lkey)) {
		failf(name, "setup: AH or receive: %s", strerror(errno));
		goto out;
	}
	sge[0] = sge[1] = (struct ibv_sge){ (uintptr_t)p.bufa, 32, p.mra->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 800, .sg_list = sge, .num_sge = 2,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = p.b->qp_num;
	wr.wr.ud.remote_qkey = 0x11111111;
	r = ibv_post_send(p.a, &wr, &bad);
	if (r != EINVAL) {
		failf(name, "SEND with 2 SGEs (max 1): got %s, expected EINVAL", errname(r));
		goto out;
	}
	if (qp_state(p.a) != IBV_QPS_RTS) {
		failf(name, "QP state %s after the refused posts, expected RTS", qps(qp_state(p.a)));
		goto out;
	}
	memset(p.bufa, 0x42, 64);
	if (ud_send1(p.a, 802, ah, p.b->qp_num, p.bufa, 64, p.mra->lkey) ||
	    want_wc(name, p.cqa, 802, IBV_WC_SUCCESS, 10000))
		goto out;
	n = ud_received(name, p.cqb, p.a->qp_num, p.bufb, 64, 0x42, 10000);
	if (n != 1) {
		if (n >= 0)
			failf(name, "%d datagrams arrived, expected 1", n);
		goto out;
	}
	if (ibv_poll_cq(p.cqa, 1, &wc)) {
		failf(name, "a completion beyond the one SEND (wr_id %llu)",
		      (unsigned long long)wc.wr_id);
		goto out;
	}
	pass(name);
out:
	if (ah)
		ibv_destroy_ah(ah);
	pair_down(&p);
}

static int gid_is_v4(const union ibv_gid *g)
{
	static const unsigned char v4[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(g->raw, v4, 12);
}

/* Join (1) group @g on interface @ifindex, whose address is @ifa. */
static int ip_mc_join(int fd, const union ibv_gid *g, const union ibv_gid *ifa,
		      int ifindex)
{
	struct ipv6_mreq m6 = { .ipv6mr_interface = ifindex };
	struct ip_mreq m;

	if (!gid_is_v4(g)) {
		memcpy(&m6.ipv6mr_multiaddr, g->raw, 16);
		return setsockopt(fd, IPPROTO_IPV6, IPV6_ADD_MEMBERSHIP, &m6,
				  sizeof(m6));
	}
	memcpy(&m.imr_multiaddr.s_addr, g->raw + 12, 4);
	memcpy(&m.imr_interface.s_addr, ifa->raw + 12, 4);
	return setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof(m));
}

/*
 * o10-36 and o10-34: a datagram sent to a multicast group reaches each QP
 * of this node attached to it once, the sender's own included when it is
 * attached, and no QP that is not; with the host also an IP member of the
 * group (as an rdma_cm join makes it), still once; after a detach, none.
 * qp[0] sends (its completions on a CQ of their own), qp[1] is attached,
 * qp[2] never is.
 */
static void mcast_loopback(const char *name, const union ibv_gid *gp,
			   const struct ibv_gid_entry *src)
{
	const union ibv_gid g = *gp;
	struct ibv_qp_init_attr ia = { .cap = cap_ok, .qp_type = IBV_QPT_UD };
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = g, .sgid_index = src->gid_index, .hop_limit = 1 },
	};
	struct ibv_qp *qp[3] = {};
	struct ibv_cq *cq[4] = {};
	struct ibv_ah *ah = NULL;
	struct ibv_mr *mr = NULL;
	struct ibv_pd *pd;
	int i, round, fd = -1, att[3] = {}, want[3], n;
	char *buf = aligned_alloc(4096, 4 * 8192);
	long nq;

	pd = ibv_alloc_pd(ctx);
	if (!pd || !buf) {
		failf(name, "setup: %s", strerror(errno));
		goto out;
	}
	cq[3] = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	for (i = 0; i < 3; i++) {
		cq[i] = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		ia.recv_cq = cq[i];
		ia.send_cq = i ? cq[i] : cq[3];
		qp[i] = cq[i] && cq[3] ? ibv_create_qp(pd, &ia) : NULL;
		if (!qp[i] || ud_up(qp[i], 0x11111111)) {
			failf(name, "setup: UD QP %d: %s", i, strerror(errno));
			goto out;
		}
	}
	memset(buf, 0, 4 * 8192);
	mr = ibv_reg_mr(pd, buf, 4 * 8192, IBV_ACCESS_LOCAL_WRITE);
	ah = ibv_create_ah(pd, &aa);
	fd = socket(gid_is_v4(&g) ? AF_INET : AF_INET6, SOCK_DGRAM, 0);
	if (!mr || !ah || fd < 0) {
		failf(name, "setup: mr/ah/socket: %s", strerror(errno));
		goto out;
	}
	/*
	 * 0: qp[1] attached; 1: the sender too; 2: both, and the host an IP
	 * member of the group; 3: both detached, the host still a member.
	 */
	for (round = 0; round < 4; round++) {
		const unsigned char v = 0x40 + round;

		if ((round == 0 && !(att[1] = !ibv_attach_mcast(qp[1], &g, 0))) ||
		    (round == 1 && !(att[0] = !ibv_attach_mcast(qp[0], &g, 0))) ||
		    (round == 2 && ip_mc_join(fd, &g, &src->gid, src->ndev_ifindex)) ||
		    (round == 3 && ((att[0] = ibv_detach_mcast(qp[0], &g, 0)) ||
				    (att[1] = ibv_detach_mcast(qp[1], &g, 0))))) {
			failf(name, "round %d: attach/detach/IP join: %s", round,
			      strerror(errno));
			goto out;
		}
		for (i = 0; i < 3; i++) {
			char *rb = buf + i * 8192;

			memset(rb, 0, 8192);
			want[i] = att[i];
			/* two receive WQEs each: a second copy would complete */
			if (post_recv1(qp[i], 0x100 * round, rb, 512, mr->lkey) ||
			    post_recv1(qp[i], 0x100 * round + 1, rb + 512, 512,
				       mr->lkey)) {
				failf(name, "post_recv: %s", strerror(errno));
				goto out;
			}
		}
		memset(buf + 3 * 8192, v, 100);
		nq = hw_counter("rcvd_no_qp");
		if (ud_send1(qp[0], 7000 + round, ah, 0xffffff, buf + 3 * 8192,
			     100, mr->lkey) ||
		    want_wc(name, cq[3], 7000 + round, IBV_WC_SUCCESS, 10000))
			goto out;
		for (i = 0; i < 3; i++) {
			n = ud_received(name, cq[i], qp[0]->qp_num, buf + i * 8192,
					100, v, want[i] ? 10000 : 500);
			if (n < 0)
				goto out;
			if (n != want[i]) {
				failf(name, "round %d: QP %d (%s) received %d copies, expected %d",
				      round, i, att[i] ? "attached" : "not attached",
				      n, want[i]);
				goto out;
			}
		}
		/* with no QP attached the datagram is not looped back at all */
		if (round == 3 && hw_counter("rcvd_no_qp") != nq) {
			failf(name, "a datagram to a group no local QP is attached to moved rcvd_no_qp by %ld",
			      hw_counter("rcvd_no_qp") - nq);
			goto out;
		}
		/* the receive WQEs left over: out of the way of the next round */
		for (i = 0; i < 3; i++) {
			if (ibv_modify_qp(qp[i], &(struct ibv_qp_attr){ .qp_state = IBV_QPS_RESET },
					  IBV_QP_STATE) ||
			    ud_up(qp[i], 0x11111111)) {
				failf(name, "reset QP %d: %s", i, strerror(errno));
				goto out;
			}
		}
	}
	pass(name);
out:
	if (fd >= 0)
		close(fd);
	for (i = 0; i < 3; i++) {
		if (qp[i] && att[i])
			ibv_detach_mcast(qp[i], &g, 0);
		if (qp[i])
			ibv_destroy_qp(qp[i]);
		if (cq[i])
			ibv_destroy_cq(cq[i]);
	}
	if (cq[3])
		ibv_destroy_cq(cq[3]);
	if (ah)
		ibv_destroy_ah(ah);
	if (mr)
		ibv_dereg_mr(mr);
	if (pd)
		ibv_dealloc_pd(pd);
	free(buf);
}

/* mcast_loopback over IPv4 (a 239/8 group), then IPv6 (link-local source). */
static void t_mcast_loopback(void)
{
	union ibv_gid g4 = { .raw = { [10] = 0xff, [11] = 0xff, 239, 7, 7, 7 } };
	union ibv_gid g6 = { .raw = { 0xff, 0x12, [13] = 7, [14] = 7, [15] = 7 } };
	struct ibv_gid_entry e;
	int i;

	if (ibv_query_gid_ex(ctx, 1, gid_index, &e, 0))
		failf("mcast_loopback", "query GID %d: %s", gid_index, strerror(errno));
	else
		mcast_loopback("mcast_loopback", &g4, &e);
	for (i = 0; i < 16; i++) {
		if (ibv_query_gid_ex(ctx, 1, i, &e, 0) ||
		    e.gid_type != IBV_GID_TYPE_ROCE_V2 || gid_is_v4(&e.gid) ||
		    !(e.gid.raw[0] | e.gid.raw[1]))
			continue;
		mcast_loopback("mcast_loopback_ipv6", &g6, &e);
		return;
	}
	failf("mcast_loopback_ipv6", "no RoCE v2 IPv6 GID on the device");
}

/* ---------------------------------------------------------------------- */
/* MR protection: PD, byte bounds, deregistration (10.2.3, 10.6.4.5, 10.6.6). */

/*
 * On a fresh pair, a WRITE of len bytes from bufa to raddr through rkey
 * (or a SEND through lkey when rkey is 0) must complete with want; the
 * target bytes must then hold fill (the WRITE's 0x61 on success, else
 * what was there).
 */
static void mr_case(const char *name, int pd2_mr, int dereg, size_t off,
		    size_t mr_len, size_t woff, uint32_t len, int local,
		    enum ibv_wc_status want)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_pd *pd2 = NULL;
	struct ibv_mr *mr = NULL;
	uint32_t key;
	struct pair p;
	int rc;

	if (pair_up(name, &p, 7))
		goto out;
	if (pd2_mr) {
		pd2 = ibv_alloc_pd(ctx);
		if (!pd2) {
			failf(name, "alloc_pd: %s", strerror(errno));
			goto out;
		}
	}
	mr = ibv_reg_mr(pd2 ?: p.pd, (local ? p.bufa : p.bufb) + off, mr_len, acc);
	if (!mr) {
		failf(name, "reg_mr(+%zu, %zu): %s", off, mr_len, strerror(errno));
		goto out;
	}
	key = local ? mr->lkey : mr->rkey;
	if (dereg) {
		if (ibv_dereg_mr(mr)) {
			failf(name, "dereg_mr: %s", strerror(errno));
			goto out;
		}
		mr = NULL;
	}
	memset(p.bufa, 0x61, 8192);
	if (local) {
		/* a SEND out of [off+woff, +len) through the MR's L_Key */
		if (post_recv1(p.b, 40, p.bufb, 8192, p.mrb->lkey) ||
		    post_send1(p.a, 41, p.bufa + off + woff, len, key)) {
			failf(name, "post: %s", strerror(errno));
			goto out;
		}
	} else {
		rc = post_rdma1(p.a, 41, IBV_WR_RDMA_WRITE, p.bufa, len,
				p.mra->lkey, p.bufb + off + woff, key);
		if (rc) {
			failf(name, "post_send: %s", errname(rc));
			goto out;
		}
	}
	if (want_wc(name, p.cqa, 41, want, 10000))
		goto out;
	if (local) {
		if (want == IBV_WC_SUCCESS &&
		    (want_wc(name, p.cqb, 40, IBV_WC_SUCCESS, 10000) ||
		     !bytes_are(p.bufb, len, 0x61))) {
			failf(name, "the SEND did not deliver its bytes");
			goto out;
		}
	} else if (!bytes_are(p.bufb + off + woff, len,
			      want == IBV_WC_SUCCESS ? 0x61 : 0xbb) ||
		   !bytes_are(p.bufb + off + woff + len, 64, 0xbb) ||
		   (off + woff >= 64 && !bytes_are(p.bufb + off + woff - 64, 64, 0xbb))) {
		failf(name, want == IBV_WC_SUCCESS ?
		      "the WRITE placed the wrong bytes" :
		      "the refused WRITE changed the target memory");
		goto out;
	}
	pass(name);
out:
	if (mr)
		ibv_dereg_mr(mr);
	pair_down(&p);
	if (pd2)
		ibv_dealloc_pd(pd2);
}

static void t_mr_protection(void)
{
	/* C10-9.2.1: an MR of another PD, locally and remotely */
	mr_case("mr_other_pd_lkey_local_prot_err", 1, 0, 0, 8192, 0, 100, 1,
		IBV_WC_LOC_PROT_ERR);
	mr_case("mr_other_pd_rkey_remote_access_err", 1, 0, 0, 8192, 0, 100, 0,
		IBV_WC_REM_ACCESS_ERR);
	/* C10-50, C10-56: an MR at an odd address and length, byte-exact bounds */
	mr_case("mr_unaligned_write_exact_range", 0, 0, 4096 + 13, 1001, 0, 1001, 0,
		IBV_WC_SUCCESS);
	mr_case("mr_unaligned_write_one_byte_past_end", 0, 0, 4096 + 13, 1001, 1, 1001, 0,
		IBV_WC_REM_ACCESS_ERR);
	mr_case("mr_unaligned_send_one_byte_past_end", 0, 0, 4096 + 13, 1001, 1, 1001, 1,
		IBV_WC_LOC_PROT_ERR);
	/* C10-60: a deregistered region's keys */
	mr_case("mr_deregistered_rkey_remote_access_err", 0, 1, 0, 16384, 0, 100, 0,
		IBV_WC_REM_ACCESS_ERR);
	mr_case("mr_deregistered_lkey_local_prot_err", 0, 1, 0, 16384, 0, 100, 1,
		IBV_WC_LOC_PROT_ERR);
}

/* The first attribute in which a and b differ, or NULL. */
static const char *qp_attr_diff(const struct ibv_qp_attr *a,
				const struct ibv_qp_attr *b)
{
#define QP_ATTR_CMP(f) do { if (a->f != b->f) return #f; } while (0)
	QP_ATTR_CMP(qp_state);
	QP_ATTR_CMP(qkey);
	QP_ATTR_CMP(rq_psn);
	QP_ATTR_CMP(sq_psn);
	QP_ATTR_CMP(dest_qp_num);
	QP_ATTR_CMP(qp_access_flags);
	QP_ATTR_CMP(pkey_index);
	QP_ATTR_CMP(path_mtu);
	QP_ATTR_CMP(timeout);
	QP_ATTR_CMP(retry_cnt);
	QP_ATTR_CMP(rnr_retry);
	QP_ATTR_CMP(min_rnr_timer);
	QP_ATTR_CMP(max_rd_atomic);
	QP_ATTR_CMP(max_dest_rd_atomic);
	QP_ATTR_CMP(sq_draining);
	QP_ATTR_CMP(ah_attr.is_global);
	QP_ATTR_CMP(ah_attr.grh.sgid_index);
	QP_ATTR_CMP(ah_attr.grh.hop_limit);
#undef QP_ATTR_CMP
	if (memcmp(&a->ah_attr.grh.dgid, &b->ah_attr.grh.dgid, 16))
		return "ah_attr.grh.dgid";
	return NULL;
}

/*
 * C10-21: Reset gives a used QP's attributes the values a new QP has (a
 * QP created beside it is the reference), and the QP works again from new
 * PSNs: a SEND and a WRITE land, every byte checked, and the PSNs moved
 * on from the new ones.
 */
static void t_qp_reset_reuse(void)
{
	const char *name = "qp_reset_attrs_initial", *d;
	struct ibv_qp_attr ra, fa, rs = { .qp_state = IBV_QPS_RESET };
	struct ibv_qp_init_attr ia;
	struct ibv_qp *fresh = NULL;
	struct pair p;

	if (pair_up(name, &p, 7))
		goto out;
	memset(p.bufa, 0x11, 100);
	if (post_recv1(p.b, 80, p.bufb, 4096, p.mrb->lkey) ||
	    post_send1(p.a, 81, p.bufa, 100, p.mra->lkey) ||
	    want_wc(name, p.cqa, 81, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqb, 80, IBV_WC_SUCCESS, 10000))
		goto out;
	fresh = mk_qp(p.pd, p.cqa, cap_ok, NULL);
	if (!fresh || ibv_modify_qp(p.a, &rs, IBV_QP_STATE) ||
	    ibv_modify_qp(p.b, &rs, IBV_QP_STATE) ||
	    ibv_query_qp(p.a, &ra, 0x1fffff, &ia) ||
	    ibv_query_qp(fresh, &fa, 0x1fffff, &ia)) {
		failf(name, "new QP, to RESET, query: %s", strerror(errno));
		goto out;
	}
	d = qp_attr_diff(&ra, &fa);
	if (d)
		failf(name, "after Reset %s differs from a new QP's", d);
	else
		pass(name);

	name = "qp_reset_reuse_new_psns";
	memset(p.bufa, 0x22, 100);
	memset(p.bufa + 4096, 0x33, 200);
	memset(p.bufb, 0xbb, BUF);
	if (to_init(p.a, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) ||
	    to_init(p.b, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) ||
	    connect_pair(p.a, p.b, 0x654321, 0x123456, 7)) {
		failf(name, "RESET -> RTS again: %s", strerror(errno));
		goto out;
	}
	if (post_recv1(p.b, 82, p.bufb, 4096, p.mrb->lkey) ||
	    post_send1(p.a, 83, p.bufa, 100, p.mra->lkey) ||
	    post_rdma1(p.a, 84, IBV_WR_RDMA_WRITE, p.bufa + 4096, 200,
		       p.mra->lkey, p.bufb + 8192, p.mrb->rkey) ||
	    want_wc(name, p.cqa, 83, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqa, 84, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqb, 82, IBV_WC_SUCCESS, 10000))
		goto out;
	if (!bytes_are(p.bufb, 100, 0x22) || !bytes_are(p.bufb + 100, 64, 0xbb) ||
	    !bytes_are(p.bufb + 8192, 200, 0x33) ||
	    !bytes_are(p.bufb + 8392, 64, 0xbb)) {
		failf(name, "the SEND or WRITE after Reset placed the wrong bytes");
		goto out;
	}
	if (ibv_query_qp(p.a, &ra, IBV_QP_SQ_PSN, &ia) ||
	    ibv_query_qp(p.b, &fa, IBV_QP_RQ_PSN, &ia) ||
	    ra.sq_psn != 0x123458 || fa.rq_psn != 0x123458) {
		failf(name, "sq_psn %#x, rq_psn %#x after two messages from 0x123456",
		      ra.sq_psn, fa.rq_psn);
		goto out;
	}
	pass(name);
out:
	if (fresh)
		ibv_destroy_qp(fresh);
	pair_down(&p);
}

/*
 * o10-10.2.3 and o10-2.2.1: an SRQ that a QP still uses is not destroyed
 * (EBUSY) and goes on serving it; two SRQs and their QPs share one PD.
 */
static void t_srq_busy(void)
{
	const char *name = "destroy_srq_in_use_by_qp";
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq2 = NULL;
	struct ibv_qp *qp2 = NULL;
	struct ibv_wc wc;
	struct pair p;

	pair_srq_fn = srq16;
	if (pair_up(name, &p, 7))
		goto out;
	srq2 = ibv_create_srq(p.pd, &sa);
	qp2 = srq2 ? mk_qp(p.pd, p.cqb, cap_ok, srq2) : NULL;
	if (!qp2) {
		failf(name, "setup: a second SRQ and QP on the PD: %s", strerror(errno));
		goto out;
	}
	expect_rc(name, ibv_destroy_srq(pair_srq), EBUSY);
	/* the refused destroy left it whole: a SEND still lands through it */
	{
		struct ibv_sge sge = { (uintptr_t)p.bufb, 4096, p.mrb->lkey };
		struct ibv_recv_wr wr = { .wr_id = 70, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		memset(p.bufa, 0x3d, 100);
		if (ibv_post_srq_recv(pair_srq, &wr, &bad) ||
		    post_send1(p.a, 71, p.bufa, 100, p.mra->lkey)) {
			failf("srq_busy_still_serves", "post: %s", strerror(errno));
			goto out;
		}
		if (want_wc("srq_busy_still_serves", p.cqa, 71, IBV_WC_SUCCESS, 10000) ||
		    poll1(p.cqb, &wc, 10000) != 1)
			goto out;
		if (wc.wr_id != 70 || wc.status != IBV_WC_SUCCESS ||
		    wc.byte_len != 100 || !bytes_are(p.bufb, 100, 0x3d))
			failf("srq_busy_still_serves", "got wr_id %llu %s, %u bytes",
			      (unsigned long long)wc.wr_id, st(wc.status), wc.byte_len);
		else
			pass("srq_busy_still_serves");
	}
	expect_rc("destroy_srq_in_use_other_srq", ibv_destroy_srq(srq2), EBUSY);
	ibv_destroy_qp(qp2);
	qp2 = NULL;
	expect_rc("destroy_srq_after_qp_gone", ibv_destroy_srq(srq2), 0);
	srq2 = NULL;
out:
	if (qp2)
		ibv_destroy_qp(qp2);
	if (srq2)
		ibv_destroy_srq(srq2);
	pair_down(&p);
	pair_srq_fn = NULL;
}

/*
 * C10-13: the GSI QP belongs to the kernel's MAD layer; a user cannot
 * create one.  o10-2.1.1: an AH names the device's one port.
 */
static void t_special_qp_port(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .cap = cap_ok,
		.qp_type = (enum ibv_qp_type)1,	/* IB_QPT_GSI */
	};
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 2,
		.grh = { .dgid = gid, .sgid_index = gid_index, .hop_limit = 64 },
	};
	struct ibv_qp *qp;
	struct ibv_ah *ah;

	errno = 0;
	qp = ibv_create_qp(pd, &ia);
	expect_null("create_qp_gsi_from_user", qp, EINVAL);
	if (qp)
		ibv_destroy_qp(qp);
	errno = 0;
	ah = ibv_create_ah(pd, &aa);
	expect_null("create_ah_port_2", ah, EINVAL);
	if (ah)
		ibv_destroy_ah(ah);
}

/*
 * o10-2.2.2: b takes its receive WQEs from an SRQ of another PD than its
 * own.  A SEND lands through a receive buffer of the SRQ's PD, not of the
 * QP's (b's WQE then completes LOC_PROT_ERR, a's SEND REM_OP_ERR); an RDMA
 * WRITE lands through an R_Key of the QP's PD, not of the SRQ's.  The
 * target bytes change only on success.
 */
static struct ibv_pd *srq_other_pd;

/* pair_srq_fn: an SRQ on a PD of its own (srq_other_pd), not the pair's. */
static struct ibv_srq *srq16_other_pd(struct ibv_pd *pd)
{
	(void)pd;
	srq_other_pd = ibv_alloc_pd(ctx);
	return srq_other_pd ? srq16(srq_other_pd) : NULL;
}

static void srq_pd_case(const char *name, int send, int srq_pd_mr,
			enum ibv_wc_status want_a, enum ibv_wc_status want_b)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, rc;
	struct ibv_mr *mr2 = NULL, *mr;
	struct pair p;

	pair_srq_fn = srq16_other_pd;
	if (pair_up(name, &p, 7))
		goto out;
	memset(p.bufa, 0x5e, BUF);
	mr2 = ibv_reg_mr(srq_other_pd, p.bufb, BUF, acc);
	if (!mr2) {
		failf(name, "setup: reg_mr on the SRQ's PD: %s", strerror(errno));
		goto out;
	}
	mr = srq_pd_mr ? mr2 : p.mrb;
	if (send) {
		struct ibv_sge sge = { (uintptr_t)p.bufb, 4096, mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 50, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		rc = ibv_post_srq_recv(pair_srq, &wr, &bad) ?:
		     post_send1(p.a, 51, p.bufa, 100, p.mra->lkey);
	} else {
		rc = post_rdma1(p.a, 51, IBV_WR_RDMA_WRITE, p.bufa, 100,
				p.mra->lkey, p.bufb, mr->rkey);
	}
	if (rc) {
		failf(name, "post: %s", errname(rc));
		goto out;
	}
	if (want_wc(name, p.cqa, 51, want_a, 10000) ||
	    (send && want_wc(name, p.cqb, 50, want_b, 10000)))
		goto out;
	if (!bytes_are(p.bufb, 100, want_a == IBV_WC_SUCCESS ? 0x5e : 0xbb) ||
	    !bytes_are(p.bufb + 100, 64, 0xbb)) {
		failf(name, want_a == IBV_WC_SUCCESS ? "the wrong bytes landed" :
		      "the refused request changed the target memory");
		goto out;
	}
	pass(name);
out:
	if (mr2)
		ibv_dereg_mr(mr2);
	pair_down(&p);
	pair_srq_fn = NULL;
	if (srq_other_pd)
		ibv_dealloc_pd(srq_other_pd);
	srq_other_pd = NULL;
}

static void t_srq_pd(void)
{
	srq_pd_case("srq_other_pd_send_via_srq_pd_mr", 1, 1, IBV_WC_SUCCESS,
		    IBV_WC_SUCCESS);
	srq_pd_case("srq_other_pd_send_via_qp_pd_mr_refused", 1, 0,
		    IBV_WC_REM_OP_ERR, IBV_WC_LOC_PROT_ERR);
	srq_pd_case("srq_other_pd_write_via_qp_pd_mr", 0, 0, IBV_WC_SUCCESS, 0);
	srq_pd_case("srq_other_pd_write_via_srq_pd_mr_refused", 0, 1,
		    IBV_WC_REM_ACCESS_ERR, 0);
}

/*
 * C10-10: a UD QP may use only an AH of its own PD.  A user WQE naming an
 * AH of another PD completes LOC_QP_OP_ERR and sends nothing.
 */
static void t_ah_other_pd(void)
{
	const char *name = "ud_ah_other_pd_loc_qp_op_err";
	struct ibv_pd *pd2 = ibv_alloc_pd(ctx);
	struct ibv_ah *ah = pd2 ? ah_to_self(pd2) : NULL;
	struct ibv_wc wc;
	struct pair p = {};

	if (!ah) {
		failf(name, "setup: an AH on another PD: %s", strerror(errno));
		goto out;
	}
	if (ud_pair_up(name, &p))
		goto out;
	if (post_recv1(p.b, 60, p.bufb, 40 + 256, p.mrb->lkey) ||
	    ud_send1(p.a, 61, ah, p.b->qp_num, p.bufa, 64, p.mra->lkey)) {
		failf(name, "post: %s", strerror(errno));
		goto out;
	}
	if (want_wc(name, p.cqa, 61, IBV_WC_LOC_QP_OP_ERR, 10000))
		goto out;
	if (poll1(p.cqb, &wc, 500) != 0 || !bytes_are(p.bufb, 40 + 256, 0xbb)) {
		failf(name, "the WQE with another PD's AH delivered a datagram");
		goto out;
	}
	pass(name);
out:
	pair_down(&p);
	if (ah)
		ibv_destroy_ah(ah);
	if (pd2)
		ibv_dealloc_pd(pd2);
}

/*
 * C10-5.2.1: UD WRs whose AH is destroyed while they wait (posted in SQD,
 * the AH destroyed, then SQD -> RTS) each complete once, in order: a
 * success sends its datagram, a failure (LOC_QP_OP_ERR, those behind it
 * flushed) sends nothing.  The peer gets as many datagrams as succeeded.
 */
static void t_ah_destroyed_outstanding(void)
{
	const char *name = "ud_ah_destroyed_wrs_complete";
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_SQD };
	struct ibv_ah *ah = NULL;
	struct ibv_wc wc;
	struct pair p = {};
	int i, r, ok = 0, failed = 0, n;

	if (ud_pair_up(name, &p))
		goto out;
	memset(p.bufa, 0x50, BUF);
	ah = ah_to_self(p.pd);
	if (!ah) {
		failf(name, "setup: create_ah: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < 4; i++)
		if (post_recv1(p.b, i, p.bufb + i * 512, 512, p.mrb->lkey)) {
			failf(name, "post_recv: %s", strerror(errno));
			goto out;
		}
	if (ibv_modify_qp(p.a, &qa, IBV_QP_STATE)) {
		failf(name, "RTS -> SQD: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < 4; i++)
		if (ud_send1(p.a, 90 + i, ah, p.b->qp_num, p.bufa, 64,
			     p.mra->lkey)) {
			failf(name, "post_send in SQD: %s", strerror(errno));
			goto out;
		}
	r = ibv_destroy_ah(ah);
	ah = NULL;
	if (r) {
		failf(name, "destroy_ah with WRs outstanding: %s", errname(r));
		goto out;
	}
	qa.qp_state = IBV_QPS_RTS;
	for (i = 0; (r = ibv_modify_qp(p.a, &qa, IBV_QP_STATE)) && i < 100; i++)
		usleep(20000);	/* SQD -> RTS waits for the drain */
	if (r) {
		failf(name, "SQD -> RTS: %s", errname(r));
		goto out;
	}
	for (i = 0; i < 4; i++) {
		if (poll1(p.cqa, &wc, 10000) != 1) {
			failf(name, "%d of 4 WRs completed", i);
			goto out;
		}
		if (wc.wr_id != (uint64_t)(90 + i) ||
		    (wc.status == IBV_WC_SUCCESS && failed) ||
		    (wc.status != IBV_WC_SUCCESS &&
		     wc.status != (failed ? IBV_WC_WR_FLUSH_ERR :
				   IBV_WC_LOC_QP_OP_ERR))) {
			failf(name, "completion %d: wr_id %llu %s (%d succeeded before)",
			      i, (unsigned long long)wc.wr_id, st(wc.status), ok);
			goto out;
		}
		ok += wc.status == IBV_WC_SUCCESS;
		failed += wc.status != IBV_WC_SUCCESS;
	}
	n = ud_received(name, p.cqb, p.a->qp_num, p.bufb, 64, 0x50, ok ? 10000 : 500);
	if (n < 0)
		goto out;
	if (n != ok) {
		failf(name, "%d datagrams arrived for %d successful WRs", n, ok);
		goto out;
	}
	printf("# %s: %d of 4 sent\n", name, ok);
	pass(name);
out:
	if (ah)
		ibv_destroy_ah(ah);
	pair_down(&p);
}

/*
 * C10-58: overlapping regions deregister independently: after the first
 * of two overlapping MRs is gone, the second still serves the shared
 * bytes and the first's key is refused.
 */
static void t_mr_overlap(void)
{
	const char *name = "mr_overlapping_dereg_independent";
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_mr *m1 = NULL, *m2 = NULL;
	uint32_t k1;
	struct pair p;

	if (pair_up(name, &p, 7))
		goto out;
	m1 = ibv_reg_mr(p.pd, p.bufb, 32768, acc);
	m2 = ibv_reg_mr(p.pd, p.bufb + 16384, 32768, acc);
	if (!m1 || !m2) {
		failf(name, "reg_mr: %s", strerror(errno));
		goto out;
	}
	k1 = m1->rkey;
	if (ibv_dereg_mr(m1)) {
		failf(name, "dereg_mr of the first: %s", strerror(errno));
		goto out;
	}
	m1 = NULL;
	memset(p.bufa, 0x62, 4096);
	if (post_rdma1(p.a, 50, IBV_WR_RDMA_WRITE, p.bufa, 4096, p.mra->lkey,
		       p.bufb + 20480, m2->rkey) ||
	    want_wc(name, p.cqa, 50, IBV_WC_SUCCESS, 10000))
		goto out;
	if (!bytes_are(p.bufb + 20480, 4096, 0x62)) {
		failf(name, "the WRITE through the second MR placed the wrong bytes");
		goto out;
	}
	if (post_rdma1(p.a, 51, IBV_WR_RDMA_WRITE, p.bufa, 64, p.mra->lkey,
		       p.bufb + 1024, k1) ||
	    want_wc(name, p.cqa, 51, IBV_WC_REM_ACCESS_ERR, 10000))
		goto out;
	if (!bytes_are(p.bufb + 1024, 64, 0xbb)) {
		failf(name, "the WRITE through the deregistered MR changed memory");
		goto out;
	}
	pass(name);
out:
	if (m1)
		ibv_dereg_mr(m1);
	if (m2)
		ibv_dereg_mr(m2);
	pair_down(&p);
}

/* (iii) RDMA READ into a local range the L_Key does not cover -> LOC_PROT_ERR */
static void t_read_bad_lkey_range(void)
{
	const char *name = "wc_read_lkey_range";
	struct pair p;
	struct ibv_mr *small = NULL;
	struct ibv_sge sge;
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_wc wc;
	int r;

	if (pair_up(name, &p, 7))
		goto out;
	/* an MR over the first 4 KiB of bufa; the READ lands 4 KiB - 64 in
	 * and is 4 KiB long, so it runs past the MR */
	small = ibv_reg_mr(p.pd, p.bufa, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!small) {
		failf(name, "setup reg_mr: %s", errname(errno));
		goto out;
	}
	sge = (struct ibv_sge){ (uintptr_t)p.bufa + 4096 - 64, 4096, small->lkey };
	wr.wr_id = 400;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)p.bufb;
	wr.wr.rdma.rkey = p.mrb->rkey;
	r = ibv_post_send(p.a, &wr, &bad);
	if (r) {
		failf(name, "post_send: got %s, expected 0", errname(r));
		goto out;
	}
	r = poll1(p.cqa, &wc, 20000);
	if (r != 1)
		failf(name, "got no completion within 20s, expected %s",
		      st(IBV_WC_LOC_PROT_ERR));
	else if (wc.wr_id != 400 || wc.status != IBV_WC_LOC_PROT_ERR)
		failf(name, "got wr_id %llu status %s, expected wr_id 400 status %s",
		      (unsigned long long)wc.wr_id, st(wc.status),
		      st(IBV_WC_LOC_PROT_ERR));
	else
		pass(name);
	/* nothing may have been written past the MR */
	{
		int i;

		for (i = 4096; i < 4096 + 4096 - 64; i++)
			if ((unsigned char)p.bufa[i] != 0xaa)
				break;
		if (i != 4096 + 4096 - 64)
			failf("wc_read_lkey_range_no_overrun", "byte %d past the MR changed to 0x%02x",
			      i, (unsigned char)p.bufa[i]);
		else
			pass("wc_read_lkey_range_no_overrun");
	}
out:
	if (small)
		ibv_dereg_mr(small);
	pair_down(&p);
}

/* Sanity: the same loopback pair works for a good WRITE (so the failures
 * above are not a setup problem). */
static void t_write_ok(void)
{
	const char *name = "wc_write_good_rkey_ok";
	struct pair p;
	struct ibv_sge sge;
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_wc wc;
	int r;

	if (pair_up(name, &p, 7))
		goto out;
	memset(p.bufa, 0x5c, 2048);
	sge = (struct ibv_sge){ (uintptr_t)p.bufa, 2048, p.mra->lkey };
	wr.wr_id = 500;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)p.bufb + 1000;
	wr.wr.rdma.rkey = p.mrb->rkey;
	r = ibv_post_send(p.a, &wr, &bad);
	if (r) {
		failf(name, "post_send: got %s, expected 0", errname(r));
		goto out;
	}
	r = poll1(p.cqa, &wc, 20000);
	if (r != 1)
		failf(name, "got no completion within 20s, expected success");
	else if (wc.status != IBV_WC_SUCCESS)
		failf(name, "got status %s, expected success", st(wc.status));
	else if ((unsigned char)p.bufb[999] != 0xbb ||
		 (unsigned char)p.bufb[1000] != 0x5c ||
		 (unsigned char)p.bufb[3047] != 0x5c ||
		 (unsigned char)p.bufb[3048] != 0xbb)
		failf(name, "got wrong target bytes, expected 2048 bytes of 0x5c at offset 1000");
	else
		pass(name);
out:
	pair_down(&p);
}

/* Pieces of a buffer, as SGEs of one MR: the gathered or scattered bytes. */
struct piece {
	uint32_t off, len;
};

static uint32_t pieces_sge(struct ibv_sge *sge, const struct piece *pc, int n,
			   char *buf, uint32_t lkey)
{
	uint32_t total = 0;
	int i;

	for (i = 0; i < n; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)buf + pc[i].off, pc[i].len, lkey };
		total += pc[i].len;
	}
	return total;
}

/*
 * The stream @want (@len bytes) lies in @buf's pieces in order, and the
 * byte before and after each piece is still @fill; for a stream shorter
 * than the pieces, a piece's unused tail is @fill too.  0 or -1 (failed).
 */
static int pieces_hold(const char *name, const char *what, const char *buf,
		       const struct piece *pc, int n, const char *want,
		       uint32_t len, unsigned char fill)
{
	uint32_t at = 0, k, take;
	int i;

	for (i = 0; i < n; i++) {
		take = len - at < pc[i].len ? len - at : pc[i].len;
		if (memcmp(buf + pc[i].off, want + at, take)) {
			for (k = 0; k < take && buf[pc[i].off + k] == want[at + k]; k++)
				;
			failf(name, "%s: piece %d (offset %u) differs at its byte %u", what, i,
			      pc[i].off, k);
			return -1;
		}
		if (!bytes_are(buf + pc[i].off + take, pc[i].len - take, fill) ||
		    (unsigned char)buf[pc[i].off - 1] != fill ||
		    (unsigned char)buf[pc[i].off + pc[i].len] != fill) {
			failf(name, "%s: bytes around or past the data of piece %d (offset %u) changed",
			      what, i, pc[i].off);
			return -1;
		}
		at += take;
	}
	return 0;
}

/*
 * C10-95: a SEND and a WRITE gather their payload from three SGEs (one of
 * one byte, one across a page boundary), twice: 4001 bytes in four packets
 * (loopback takes such payloads by reference) and 301 bytes (copied), and
 * C10-94: the receive scatters each SEND over three SGEs and a READ
 * scatters its response over three: every byte lands in order in its
 * piece, nothing beside the pieces is touched, byte_len is the message's.
 */
static void t_sg_lists(void)
{
	const char *name = "sg_lists_send_write_recv_read";
	static const struct piece gathers[2][3] = {
		{ { 100, 1000 }, { 5000, 1 }, { 9000, 3000 } },
		{ { 200, 100 }, { 5001, 1 }, { 8100, 200 } },
	};
	static const struct piece scatter[] = { { 1, 7 }, { 2000, 2500 }, { 10000, 3000 } };
	static const struct piece rd[] = { { 20000, 10 }, { 24000, 3000 }, { 40000, 2000 } };
	const struct ibv_qp_cap cap = { .max_send_wr = 16, .max_recv_wr = 16,
					.max_send_sge = 3, .max_recv_sge = 3 };
	struct ibv_sge sge[3], rsge[3];
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_recv_wr rwr = {}, *rbad;
	char *stream = malloc(BUF);
	uint32_t len, at, i;
	struct ibv_wc wc;
	struct pair p = {};
	int r, g;

	if (!stream || pair_up_cap(name, &p, 7, cap))
		goto out;
	for (i = 0; i < BUF; i++) {
		p.bufa[i] = (char)(i * 7 + 3);
		if (i >= 30000)
			p.bufb[i] = (char)(i * 13 + 5);
	}
	for (g = 0; g < 2; g++) {
		const struct piece *gather = gathers[g];
		const struct piece whole = { 15000 + 5000 * g, 0 };
		struct piece w = whole;

		for (i = 0, at = 0; i < 3; i++) {
			memcpy(stream + at, p.bufa + gather[i].off, gather[i].len);
			at += gather[i].len;
		}
		/* SEND gathered, received scattered */
		len = pieces_sge(sge, gather, 3, p.bufa, p.mra->lkey);
		pieces_sge(rsge, scatter, 3, p.bufb, p.mrb->lkey);
		memset(p.bufb, 0xbb, 30000);
		rwr = (struct ibv_recv_wr){ .wr_id = 1, .sg_list = rsge, .num_sge = 3 };
		wr = (struct ibv_send_wr){ .wr_id = 2, .sg_list = sge, .num_sge = 3,
					   .opcode = IBV_WR_SEND,
					   .send_flags = IBV_SEND_SIGNALED };
		r = ibv_post_recv(p.b, &rwr, &rbad) ?: ibv_post_send(p.a, &wr, &bad);
		if (r) {
			failf(name, "posting the %u-byte SEND and its receive: got %s, expected 0",
			      len, errname(r));
			goto out;
		}
		if (want_wc(name, p.cqa, 2, IBV_WC_SUCCESS, 20000))
			goto out;
		r = poll1(p.cqb, &wc, 20000);
		if (r != 1 || wc.wr_id != 1 || wc.status != IBV_WC_SUCCESS || wc.byte_len != len) {
			failf(name, "receive: got %d completion(s), wr_id %llu status %s byte_len %u, expected wr_id 1 success %u",
			      r, r == 1 ? (unsigned long long)wc.wr_id : 0ULL,
			      r == 1 ? st(wc.status) : "-", r == 1 ? wc.byte_len : 0, len);
			goto out;
		}
		if (pieces_hold(name, g ? "301-byte SEND" : "SEND", p.bufb, scatter, 3,
				stream, len, 0xbb))
			goto out;

		/* WRITE gathered, into one contiguous range */
		wr = (struct ibv_send_wr){ .wr_id = 3, .sg_list = sge, .num_sge = 3,
					   .opcode = IBV_WR_RDMA_WRITE,
					   .send_flags = IBV_SEND_SIGNALED };
		wr.wr.rdma.remote_addr = (uintptr_t)p.bufb + whole.off;
		wr.wr.rdma.rkey = p.mrb->rkey;
		r = ibv_post_send(p.a, &wr, &bad);
		if (r || want_wc(name, p.cqa, 3, IBV_WC_SUCCESS, 20000)) {
			if (r)
				failf(name, "posting the %u-byte WRITE: got %s, expected 0",
				      len, errname(r));
			goto out;
		}
		w.len = len;
		if (pieces_hold(name, g ? "301-byte WRITE" : "WRITE", p.bufb, &w, 1,
				stream, len, 0xbb))
			goto out;
	}

	/* READ of 5010 contiguous bytes, scattered over three pieces */
	len = pieces_sge(rsge, rd, 3, p.bufa, p.mra->lkey);
	memset(p.bufa + 19000, 0xaa, BUF - 19000);
	wr = (struct ibv_send_wr){ .wr_id = 4, .sg_list = rsge, .num_sge = 3,
				   .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED };
	wr.wr.rdma.remote_addr = (uintptr_t)p.bufb + 30000;
	wr.wr.rdma.rkey = p.mrb->rkey;
	r = ibv_post_send(p.a, &wr, &bad);
	if (r || want_wc(name, p.cqa, 4, IBV_WC_SUCCESS, 20000)) {
		if (r)
			failf(name, "posting the READ: got %s, expected 0", errname(r));
		goto out;
	}
	if (pieces_hold(name, "READ", p.bufa, rd, 3, p.bufb + 30000, len, 0xaa))
		goto out;
	pass(name);
out:
	free(stream);
	pair_down(&p);
}

/*
 * A WRITE posted while the QP is in RTR is refused (EINVAL) and must never
 * run: not even once the QP reaches RTS (librxe left it in the ring).
 */
static void t_post_before_rts(void)
{
	const char *name = "post_send_rtr_refused_never_runs";
	struct ibv_send_wr wr = {}, *bad = NULL;
	struct ibv_sge sge;
	struct pair p;
	struct ibv_wc wc;
	int r, i;

	if (pair_alloc(name, &p))
		goto out;
	memset(p.bufa, 0x5c, BUF);
	if (to_rtr(p.a, p.b->qp_num, 0x1000)) {
		failf(name, "setup: to RTR: %s", strerror(errno));
		goto out;
	}
	sge = (struct ibv_sge){ (uintptr_t)p.bufa, 4096, p.mra->lkey };
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)p.bufb;
	wr.wr.rdma.rkey = p.mrb->rkey;
	for (i = 0, r = 0; i < 3 && r != EINVAL; i++)
		r = ibv_post_send(p.a, &wr, &bad);
	if (r != EINVAL) {
		failf(name, "post_send in RTR: got %s, expected EINVAL", errname(r));
		goto out;
	}
	if (to_rtr(p.b, p.a->qp_num, 0x2000) || to_rts(p.a, 0x2000, 7) ||
	    to_rts(p.b, 0x1000, 7)) {
		failf(name, "setup: to RTS: %s", strerror(errno));
		goto out;
	}
	/* a good WRITE elsewhere: it alone may complete */
	wr.wr_id = 2;
	wr.wr.rdma.remote_addr = (uintptr_t)p.bufb + 8192;
	r = ibv_post_send(p.a, &wr, &bad);
	if (r) {
		failf(name, "post_send in RTS: got %s, expected 0", errname(r));
		goto out;
	}
	r = poll1(p.cqa, &wc, 20000);
	if (r != 1 || wc.status != IBV_WC_SUCCESS || wc.wr_id != 2) {
		failf(name, "first completion: got %s wr_id %llu, expected success of wr_id 2",
		      r == 1 ? st(wc.status) : "none", r == 1 ? (unsigned long long)wc.wr_id : 0ULL);
		goto out;
	}
	if (poll1(p.cqa, &wc, 1000) == 1) {
		failf(name, "got a second completion (wr_id %llu %s): the refused WRITE ran",
		      (unsigned long long)wc.wr_id, st(wc.status));
		goto out;
	}
	for (i = 0; i < 4096; i++)
		if ((unsigned char)p.bufb[i] != 0xbb)
			break;
	if (i < 4096)
		failf(name, "target byte %d was written by the refused WRITE", i);
	else if ((unsigned char)p.bufb[8192] != 0x5c || (unsigned char)p.bufb[8192 + 4095] != 0x5c)
		failf(name, "the accepted WRITE did not land");
	else
		pass(name);
out:
	pair_down(&p);
}

/*
 * A one-deep send queue: the slot of a completed WQE must be free when its
 * completion is seen, so posting again from the poll loop never fails
 * (ibv_rc_pingpong's pattern; librxe checks the ring's consumer index).
 */
static void t_sq_depth1_repost(void)
{
	const char *name = "sq_depth1_repost_from_completion";
	struct ibv_qp_cap cap = cap_ok;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct pair p;
	long spins;
	int i, n, r = 0;

	cap.max_send_wr = 1;
	if (pair_up_cap(name, &p, 7, cap))
		goto out;
	if (ibv_query_qp(p.a, &qa, IBV_QP_CAP, &qia) || qia.cap.max_send_wr != 1) {
		failf(name, "setup: max_send_wr is %u, expected 1",
		      qia.cap.max_send_wr);
		goto out;
	}
	sge = (struct ibv_sge){ (uintptr_t)p.bufa, 64, p.mra->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)p.bufb;
	wr.wr.rdma.rkey = p.mrb->rkey;
	for (i = 0; i < 5000; i++) {
		wr.wr_id = i;
		r = ibv_post_send(p.a, &wr, &bad);
		if (r) {
			failf(name, "post %d right after completion %d: got %s, expected 0",
			      i, i - 1, errname(r));
			goto out;
		}
		/* spin: the race is between the completion and the slot */
		for (spins = 0; (n = ibv_poll_cq(p.cqa, 1, &wc)) == 0; spins++)
			if (spins > 100000 && poll1(p.cqa, &wc, 10000) == 1) {
				n = 1;
				break;
			} else if (spins > 100000) {
				failf(name, "completion %d: none within 10s", i);
				goto out;
			}
		if (n < 0 || wc.status != IBV_WC_SUCCESS || wc.wr_id != (uint64_t)i) {
			failf(name, "completion %d: n %d status %s wr_id %llu", i, n,
			      n < 0 ? "-" : st(wc.status),
			      (unsigned long long)wc.wr_id);
			goto out;
		}
	}
	pass(name);
out:
	pair_down(&p);
}

/* Byte i of message m in round r of wc_buffers_left_alone. */
static unsigned char wcb_pat(int r, int m, size_t i)
{
	return (unsigned char)(r * 37 + m * 11 + i * 7 + (i >> 8));
}

static void wcb_fill(unsigned char *p, size_t len, int r, int m)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = wcb_pat(r, m, i);
}

/* The first byte that is not message m's of round r, or -1. */
static long wcb_bad(const unsigned char *p, size_t len, int r, int m)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != wcb_pat(r, m, i))
			return (long)i;
	return -1;
}

/*
 * C10-107, C10-108: once a completion is retrieved, the CI touches no
 * buffer of its WR, nor of the unsignaled WRs before it on the same send
 * queue.  Each round a posts 4 unsignaled SENDs and 4 unsignaled WRITEs,
 * then a signaled WRITE or READ (every other pair of rounds), and
 * overwrites every source, and a READ's data once checked, as soon as it
 * polls that completion.  b must have received the original bytes: at
 * 4 KiB they go by reference to a's pages on loopback (loopback_zcopy_pkts
 * must move), so a completion before the peer copied them would show.
 * 20 ms later a READ's buffer and b's polled receive buffers must still
 * hold what their owners wrote there after polling, and no completion
 * may be left over.  Loss, and so late duplicates, are not part of it.
 * On a UC pair (@uc) every round ends in a signaled WRITE with immediate,
 * whose receive completion tells that b has everything: the UC sender
 * completes at transmit, so its copies must be taken by then.
 */
static void t_wc_buffers_left_alone(int uc, const char *name)
{
	enum { NM = 4, ROUNDS = 8, SLOT = 4096, WOFF = 16384, ROFF = 32768,
	       IOFF = 61440 };
	static const uint32_t lens[] = { 256, SLOT };
	struct ibv_send_wr wr[2 * NM + 1], *bad_wr;
	struct ibv_sge sge[2 * NM + 1];
	long bad, zc0 = hw_counter("loopback_zcopy_pkts"), zc1;
	unsigned char *a, *b;
	struct ibv_wc wc;
	struct pair p;
	int r, m, rc, read;

	if (uc ? uc_pair_up(name, &p) : pair_up(name, &p, 7))
		goto out;
	a = (unsigned char *)p.bufa;
	b = (unsigned char *)p.bufb;
	for (r = 0; r < ROUNDS; r++) {
		uint32_t len = lens[r % 2];

		read = !uc && r / 2 % 2;
		memset(wr, 0, sizeof(wr));
		for (m = 0; m < NM; m++) {
			wcb_fill(a + m * SLOT, len, r, m);
			wcb_fill(a + WOFF + m * SLOT, len, r, NM + m);
			memset(b + m * SLOT, 0xbb, len);
			memset(b + WOFF + m * SLOT, 0xbb, len);
			rc = post_recv1(p.b, 100 * r + m, b + m * SLOT, len,
					p.mrb->lkey);
			if (rc) {
				failf(name, "round %d: post_recv: %s", r, errname(rc));
				goto out;
			}
			sge[m] = (struct ibv_sge){ (uintptr_t)(a + m * SLOT), len,
						   p.mra->lkey };
			wr[m].opcode = IBV_WR_SEND;
			sge[NM + m] = (struct ibv_sge){
				(uintptr_t)(a + WOFF + m * SLOT), len, p.mra->lkey };
			wr[NM + m].opcode = IBV_WR_RDMA_WRITE;
			wr[NM + m].wr.rdma.remote_addr =
				(uintptr_t)(b + WOFF + m * SLOT);
			wr[NM + m].wr.rdma.rkey = p.mrb->rkey;
		}
		/* the last WR reads b's ROFF into a's, or writes a's there */
		wcb_fill((read ? b : a) + ROFF, len, r, 2 * NM);
		memset((read ? a : b) + ROFF, read ? 0xaa : 0xbb, len);
		sge[2 * NM] = (struct ibv_sge){ (uintptr_t)(a + ROFF), len,
						p.mra->lkey };
		wr[2 * NM].opcode = read ? IBV_WR_RDMA_READ : uc ?
			IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
		wr[2 * NM].send_flags = IBV_SEND_SIGNALED;
		if (uc && post_recv1(p.b, 100 * r + 50, b + IOFF, 16,
				     p.mrb->lkey)) {
			failf(name, "round %d: post_recv for the immediate", r);
			goto out;
		}
		wr[2 * NM].wr.rdma.remote_addr = (uintptr_t)(b + ROFF);
		wr[2 * NM].wr.rdma.rkey = p.mrb->rkey;
		for (m = 0; m <= 2 * NM; m++) {
			wr[m].wr_id = 1000 * r + m;
			wr[m].sg_list = &sge[m];
			wr[m].num_sge = 1;
			wr[m].next = m < 2 * NM ? &wr[m + 1] : NULL;
		}
		rc = ibv_post_send(p.a, wr, &bad_wr);
		if (rc) {
			failf(name, "round %d: post_send: %s", r, errname(rc));
			goto out;
		}
		if (want_wc(name, p.cqa, 1000 * r + 2 * NM, IBV_WC_SUCCESS,
			    10000))
			goto out;
		bad = read ? wcb_bad(a + ROFF, len, r, 2 * NM) : -1;
		if (bad >= 0) {
			failf(name, "round %d: READ of %u B: byte %ld is 0x%02x, want 0x%02x",
			      r, len, bad, a[ROFF + bad], wcb_pat(r, 2 * NM, bad));
			goto out;
		}
		/* every buffer of a's WRs is a's again */
		memset(a, 0xee, ROFF);
		memset(a + ROFF, read ? 0xdd : 0xee, len);
		bad = read || uc ? -1 : wcb_bad(b + ROFF, len, r, 2 * NM);
		if (bad >= 0) {
			failf(name, "round %d: signaled WRITE of %u B: byte %ld is 0x%02x, want 0x%02x (0xee: read after its completion)",
			      r, len, bad, b[ROFF + bad], wcb_pat(r, 2 * NM, bad));
			goto out;
		}
		for (m = 0; m < NM; m++) {
			if (want_wc(name, p.cqb, 100 * r + m, IBV_WC_SUCCESS,
				    10000))
				goto out;
			bad = wcb_bad(b + m * SLOT, len, r, m);
			if (bad >= 0) {
				failf(name, "round %d: SEND %d of %u B: byte %ld is 0x%02x, want 0x%02x (0xee: read after a's completion)",
				      r, m, len, bad, b[m * SLOT + bad],
				      wcb_pat(r, m, bad));
				goto out;
			}
			bad = wcb_bad(b + WOFF + m * SLOT, len, r, NM + m);
			if (bad >= 0) {
				failf(name, "round %d: WRITE %d of %u B: byte %ld is 0x%02x, want 0x%02x (0xee: read after a's completion)",
				      r, m, len, bad, b[WOFF + m * SLOT + bad],
				      wcb_pat(r, NM + m, bad));
				goto out;
			}
			memset(b + m * SLOT, 0xcc, len);
		}
		if (uc) {
			if (want_wc(name, p.cqb, 100 * r + 50, IBV_WC_SUCCESS,
				    10000))
				goto out;
			bad = wcb_bad(b + ROFF, len, r, 2 * NM);
			if (bad >= 0) {
				failf(name, "round %d: signaled WRITE with immediate of %u B: byte %ld is 0x%02x, want 0x%02x (0xee: read after its completion)",
				      r, len, bad, b[ROFF + bad],
				      wcb_pat(r, 2 * NM, bad));
				goto out;
			}
		}
		usleep(20000);
		if (read && !bytes_are((char *)a + ROFF, len, 0xdd)) {
			failf(name, "round %d: the READ buffer changed after its completion was polled, want all 0xdd",
			      r);
			goto out;
		}
		for (m = 0; m < NM; m++) {
			if (!bytes_are((char *)b + m * SLOT, len, 0xcc)) {
				failf(name, "round %d: receive buffer %d changed after its completion was polled, want all 0xcc",
				      r, m);
				goto out;
			}
		}
		if (ibv_poll_cq(p.cqa, 1, &wc) > 0 ||
		    ibv_poll_cq(p.cqb, 1, &wc) > 0) {
			failf(name, "round %d: a completion no WR asked for: wr_id %llu %s",
			      r, (unsigned long long)wc.wr_id, st(wc.status));
			goto out;
		}
	}
	/* each 4 KiB round's 9 messages: 4 packets of the 1024 B MTU each */
	zc1 = hw_counter("loopback_zcopy_pkts");
	if (!uc && (zc0 < 0 ||
		    zc1 - zc0 < ROUNDS / 2 * (2 * NM + 1) * (SLOT / 1024))) {
		failf(name, "loopback_zcopy_pkts moved %ld -> %ld: the 4 KiB payloads were not sent by reference",
		      zc0, zc1);
		goto out;
	}
	pass(name);
out:
	pair_down(&p);
}

/*
 * Collect completions from cq until want arrived (or ms passed), then
 * 300 ms more to catch any surplus. Returns how many arrived (at most max).
 */
static int collect(struct ibv_cq *cq, struct ibv_wc *wc, int max, int want, int ms)
{
	int n = 0;

	while (n < max && poll1(cq, &wc[n], n < want ? ms : 300) == 1)
		n++;
	return n;
}

/* Each of the n wr_ids lo..lo+n-1 exactly once among got completions. */
static int ids_once(const struct ibv_wc *wc, int got, uint64_t lo, int n,
		    char *why, size_t len)
{
	int i, j, c;

	if (got != n) {
		snprintf(why, len, "%d completions for %d posted WQEs", got, n);
		return 0;
	}
	for (i = 0; i < n; i++) {
		for (c = 0, j = 0; j < got; j++)
			c += wc[j].wr_id == lo + i;
		if (c != 1) {
			snprintf(why, len, "wr_id %llu completed %d times",
				 (unsigned long long)(lo + i), c);
			return 0;
		}
	}
	return 1;
}

static int post_recvs(struct pair *p, uint64_t lo, int n, uint32_t len)
{
	struct ibv_sge sge;
	struct ibv_recv_wr wr, *bad;
	int i, r;

	for (i = 0; i < n; i++) {
		sge = (struct ibv_sge){ (uintptr_t)p->bufb + i * len, len, p->mrb->lkey };
		wr = (struct ibv_recv_wr){ .wr_id = lo + i, .sg_list = &sge, .num_sge = 1 };
		r = ibv_post_recv(p->b, &wr, &bad);
		if (r)
			return r;
	}
	return 0;
}

/*
 * A WRITE with immediate whose R_Key fails at the responder: the requester
 * gets REM_ACCESS_ERR (and a flush for the SEND behind it); every receive
 * WQE of the responder completes exactly once, none of them successfully
 * (C10-42, 10.10.2: a consumed WQE completes in error, the rest flush).
 */
static void t_cqe_once_write_imm_bad_rkey(void)
{
	const char *name = "cqe_once_write_imm_bad_rkey";
	struct ibv_sge sge;
	struct ibv_send_wr wr[2], *bad;
	struct ibv_wc wc[8];
	struct pair p;
	char why[128];
	int i, n, r;

	if (pair_up(name, &p, 7))
		goto out;
	if ((r = post_recvs(&p, 10, 3, 256))) {
		failf(name, "post_recv: %s", errname(r));
		goto out;
	}
	sge = (struct ibv_sge){ (uintptr_t)p.bufa, 128, p.mra->lkey };
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 1;
	wr[0].sg_list = &sge;
	wr[0].num_sge = 1;
	wr[0].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].imm_data = htonl(0x1234);
	wr[0].wr.rdma.remote_addr = (uintptr_t)p.bufb + 32768;
	wr[0].wr.rdma.rkey = p.mrb->rkey ^ 0x00f0f000;
	wr[0].next = &wr[1];
	wr[1] = wr[0];
	wr[1].wr_id = 2;
	wr[1].opcode = IBV_WR_SEND;
	wr[1].next = NULL;
	if ((r = ibv_post_send(p.a, wr, &bad))) {
		failf(name, "post_send: %s", errname(r));
		goto out;
	}
	n = collect(p.cqa, wc, 8, 2, 20000);
	if (!ids_once(wc, n, 1, 2, why, sizeof(why)) ||
	    wc[0].wr_id != 1 || wc[0].status != IBV_WC_REM_ACCESS_ERR ||
	    wc[1].status != IBV_WC_WR_FLUSH_ERR) {
		failf(name, "requester: %s; first wr_id %llu status %s, expected 1 %s then a flush",
		      n == 2 ? "order or status" : why,
		      n ? (unsigned long long)wc[0].wr_id : 0ULL,
		      n ? st(wc[0].status) : "-", st(IBV_WC_REM_ACCESS_ERR));
		goto out;
	}
	n = collect(p.cqb, wc, 8, 3, 20000);
	if (!ids_once(wc, n, 10, 3, why, sizeof(why))) {
		failf(name, "responder: %s", why);
		goto out;
	}
	for (i = 0; i < n; i++)
		if (wc[i].status == IBV_WC_SUCCESS) {
			failf(name, "responder: wr_id %llu completed successfully for a refused WRITE with immediate",
			      (unsigned long long)wc[i].wr_id);
			goto out;
		}
	pass(name);
out:
	pair_down(&p);
}

/*
 * The responder QP moved to ERR while multi-packet SENDs arrive (at
 * varying points of the message): each receive WQE, the one being filled
 * included, completes exactly once, successes before flushes; each SEND
 * completes exactly once at the requester (C10-106.2.1, C10-42).
 */
static void t_cqe_once_err_mid_send(void)
{
	static const int delay_us[] = { 0, 100, 500, 2000, 10000 };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc[16];
	const uint32_t len = 16384;
	char name[64], why[128];
	struct pair p;
	int k, i, n, r, flushed;

	for (k = 0; k < (int)(sizeof(delay_us) / sizeof(delay_us[0])); k++) {
		snprintf(name, sizeof(name), "cqe_once_err_mid_send_%dus", delay_us[k]);
		if (pair_up(name, &p, 7))
			goto next;
		if ((r = post_recvs(&p, 10, 4, len))) {
			failf(name, "post_recv: %s", errname(r));
			goto next;
		}
		for (i = 0; i < 4; i++) {
			sge = (struct ibv_sge){ (uintptr_t)p.bufa, len, p.mra->lkey };
			memset(&wr, 0, sizeof(wr));
			wr.wr_id = 1 + i;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.opcode = IBV_WR_SEND;
			wr.send_flags = IBV_SEND_SIGNALED;
			if ((r = ibv_post_send(p.a, &wr, &bad))) {
				failf(name, "post_send: %s", errname(r));
				goto next;
			}
		}
		if (delay_us[k])
			usleep(delay_us[k]);
		if ((r = ibv_modify_qp(p.b, &qa, IBV_QP_STATE))) {
			failf(name, "modify responder to ERR: %s", errname(r));
			goto next;
		}
		n = collect(p.cqb, wc, 16, 4, 20000);
		if (!ids_once(wc, n, 10, 4, why, sizeof(why))) {
			failf(name, "responder: %s", why);
			goto next;
		}
		for (flushed = 0, i = 0; i < n; i++) {
			if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
				flushed = 1;
			else if (wc[i].status != IBV_WC_SUCCESS || flushed ||
				 wc[i].byte_len != len)
				break;
		}
		if (i < n) {
			failf(name, "responder: completion %d wr_id %llu status %s byte_len %u after %s",
			      i, (unsigned long long)wc[i].wr_id, st(wc[i].status),
			      wc[i].byte_len, flushed ? "a flush" : "successes");
			goto next;
		}
		/* the requester retries into a dead peer: retry exceeded, flushes */
		n = collect(p.cqa, wc, 16, 4, 30000);
		if (!ids_once(wc, n, 1, 4, why, sizeof(why))) {
			failf(name, "requester: %s", why);
			goto next;
		}
		pass(name);
next:
		pair_down(&p);
	}
}

/*
 * The first @len-byte window, every @stride bytes of this process's
 * mmapped uverbs queues (librxe's rings, which the kernel reads as they
 * are), that @match accepts.
 */
static unsigned char *ring_find(size_t stride, size_t len,
				int (*match)(const unsigned char *w, const void *arg),
				const void *arg)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned char *slot = NULL;
	unsigned long lo, hi, o;
	char line[512];

	if (!f)
		return NULL;
	while (!slot && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "/dev/infiniband/uverbs") ||
		    sscanf(line, "%lx-%lx", &lo, &hi) != 2 || !strstr(line, "rw"))
			continue;
		for (o = lo; o + len <= hi; o += stride) {
			if (match((const unsigned char *)o, arg)) {
				slot = (unsigned char *)o;
				break;
			}
		}
	}
	fclose(f);
	return slot;
}

static int wr_id_is(const unsigned char *w, const void *arg)
{
	uint64_t v;

	memcpy(&v, w, 8);
	return v == *(const uint64_t *)arg;
}

/*
 * The slot of the user ring WQE whose wr_id is @id (a value no other live
 * WQE or completion carries): the first 8-byte-aligned match.
 */
static unsigned char *ring_slot_of(uint64_t id)
{
	return ring_find(8, 8, wr_id_is, &id);
}

#define RWQE_NUM_SGE 28 /* struct rxe_recv_wqe: wr_id, 2 x u32, dma.{length,resid,cur_sge,num_sge} */
#define SWQE_SEND_FLAGS 16

/*
 * Inline user WQEs on a deep send queue (its kernel copies vmalloc'd):
 * an inline SEND whose num_sge says 4 billion delivers its 16 bytes, as
 * num_sge means nothing for inline data; an RDMA READ flagged inline,
 * with num_sge 65535, is refused with exactly one LOC_QP_OP_ERR
 * completion and the QP in ERR (no SGE array is ever walked).
 */
static void t_user_inline_num_sge(void)
{
	const char *name1 = "user_inline_send_num_sge_ignored";
	const char *name2 = "user_inline_read_refused";
	static const char msg[] = "0123456789abcdef";
	struct ibv_qp_cap cap = cap_ok;
	const uint64_t id1 = 0x5e1f1a7e00000001ull, id2 = 0x5e1f1a7e00000002ull;
	struct ibv_qp_ex *qpx;
	unsigned char *slot;
	uint32_t v;
	struct ibv_wc wc[8];
	struct pair p;
	int n, r;

	cap.max_send_wr = 4096;
	cap.max_inline_data = 64;
	pair_send_ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ;
	r = pair_up_cap(name1, &p, 7, cap);
	pair_send_ops = 0;
	if (r)
		goto out;
	if ((r = post_recvs(&p, 10, 1, 256))) {
		failf(name1, "post_recv: %s", errname(r));
		goto out;
	}
	qpx = ibv_qp_to_qp_ex(p.a);
	ibv_wr_start(qpx);
	qpx->wr_id = id1;
	qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, (void *)msg, 16);
	if (!(slot = ring_slot_of(id1))) {
		ibv_wr_abort(qpx);
		failf(name1, "the WQE is not in the mmapped send ring");
		goto out;
	}
	v = 0xffffffffu;
	memcpy(slot + SWQE_DMA + 12, &v, 4);
	if ((r = ibv_wr_complete(qpx))) {
		failf(name1, "ibv_wr_complete: %s", errname(r));
		goto out;
	}
	n = collect(p.cqa, wc, 8, 1, 20000);
	if (n != 1 || wc[0].wr_id != id1 || wc[0].status != IBV_WC_SUCCESS) {
		failf(name1, "requester: %d completions, first %s", n,
		      n ? st(wc[0].status) : "-");
		goto out;
	}
	n = collect(p.cqb, wc, 8, 1, 20000);
	if (n != 1 || wc[0].status != IBV_WC_SUCCESS || wc[0].byte_len != 16 ||
	    memcmp(p.bufb, msg, 16)) {
		failf(name1, "responder: %d completions, status %s, byte_len %u, data %s",
		      n, n ? st(wc[0].status) : "-", n ? wc[0].byte_len : 0,
		      memcmp(p.bufb, msg, 16) ? "wrong" : "right");
		goto out;
	}
	pass(name1);

	ibv_wr_start(qpx);
	qpx->wr_id = id2;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(qpx, p.mrb->rkey, (uintptr_t)p.bufb);
	ibv_wr_set_sge(qpx, p.mra->lkey, (uintptr_t)p.bufa, 64);
	if (!(slot = ring_slot_of(id2))) {
		ibv_wr_abort(qpx);
		failf(name2, "the WQE is not in the mmapped send ring");
		goto out;
	}
	memcpy(&v, slot + SWQE_SEND_FLAGS, 4);
	v |= IBV_SEND_INLINE;
	memcpy(slot + SWQE_SEND_FLAGS, &v, 4);
	v = 65535;
	memcpy(slot + SWQE_DMA + 12, &v, 4);
	if ((r = ibv_wr_complete(qpx))) {
		/* refused at the doorbell is as good, if nothing executes */
		printf("# %s: ibv_wr_complete: %s\n", name2, errname(r));
	}
	n = collect(p.cqa, wc, 8, 1, 20000);
	if (n != 1 || wc[0].wr_id != id2 || wc[0].status != IBV_WC_LOC_QP_OP_ERR) {
		failf(name2, "%d completions, first wr_id %#llx %s; expected one %s", n,
		      n ? (unsigned long long)wc[0].wr_id : 0ULL,
		      n ? st(wc[0].status) : "-", st(IBV_WC_LOC_QP_OP_ERR));
		goto out;
	}
	if (qp_state(p.a) != IBV_QPS_ERR) {
		failf(name2, "requester QP in %s after the refused WQE, expected ERR",
		      qps(qp_state(p.a)));
		goto out;
	}
	pass(name2);
out:
	pair_down(&p);
}

#define SWQE_REMOTE_ADDR 24 /* struct rxe_send_wr: wr_id, 4 x u32, then wr.{rdma,atomic}.remote_addr */
#define SWQE_UD_REMOTE_QPN 24 /* the same place: wr.ud.remote_qpn */
#define SWQE_UD_AH_NUM 36 /* wr.ud: remote_qpn, remote_qkey, pkey_index, reserved, ah_num */
#define SWQE_UD_AV 56 /* wr.ud.av: port_num, network_type, dmac[6], dgid[16], ... */
#define SWQE_UD_AV_LEN 88 /* to the end of its two sockaddr unions */

/*
 * A signaled 32-byte UD SEND @id started on @qpx but not yet rung: its
 * ring slot, to be written before ibv_wr_complete(), or NULL (aborted).
 */
static unsigned char *ud_send_slot(const char *name, struct ibv_qp_ex *qpx,
				   uint64_t id, struct ibv_ah *ah,
				   uint32_t dqpn, void *buf, uint32_t lkey)
{
	unsigned char *slot;

	ibv_wr_start(qpx);
	qpx->wr_id = id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_ud_addr(qpx, ah, dqpn, 0x11111111);
	ibv_wr_set_sge(qpx, lkey, (uintptr_t)buf, 32);
	slot = ring_slot_of(id);
	if (!slot) {
		ibv_wr_abort(qpx);
		failf(name, "WQE %#llx is not in the mmapped send ring",
		      (unsigned long long)id);
	}
	return slot;
}

/*
 * C10-5: a UD WR's destination is its Address Handle.  Through the
 * extended API, the whole address vector embedded in a SEND's ring slot
 * (port, MAC, GID, addresses) is overwritten with another destination's
 * GID and 0xee elsewhere before the doorbell: the datagram still reaches
 * the AH's destination.  A SEND whose slot's AH number is then
 * zeroed (no AH) completes in error and nothing arrives.
 */
static void t_ud_dest_is_ah(void)
{
	const char *name = "ud_destination_is_the_ah";
	const uint64_t id1 = 0xad0ad0ad00000001ull, id2 = 0xad0ad0ad00000002ull;
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_UD, .cap = cap_ok,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND,
	};
	static const uint8_t other[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					   0xff, 0xff, 10, 99, 99, 99 };
	struct ibv_qp *x = NULL;
	struct ibv_ah *ah = NULL;
	struct ibv_qp_ex *qpx;
	unsigned char *slot;
	struct ibv_wc wc;
	struct pair p = {};
	uint32_t zero = 0;

	if (ud_pair_up(name, &p))
		goto out;
	ia.pd = p.pd;
	ia.send_cq = ia.recv_cq = p.cqa;
	x = ibv_create_qp_ex(ctx, &ia);
	ah = ah_to_self(p.pd);
	if (!x || !ah || ud_up(x, 0x11111111)) {
		failf(name, "setup: an extended UD QP and an AH: %s", strerror(errno));
		goto out;
	}
	qpx = ibv_qp_to_qp_ex(x);
	memset(p.bufa, 0x6a, 32);
	if (post_recv1(p.b, 95, p.bufb, 32 + 40, p.mrb->lkey)) {
		failf(name, "post_recv: %s", strerror(errno));
		goto out;
	}
	if (!(slot = ud_send_slot(name, qpx, id1, ah, p.b->qp_num, p.bufa,
				  p.mra->lkey)))
		goto out;
	memset(slot + SWQE_UD_AV, 0xee, SWQE_UD_AV_LEN);
	memcpy(slot + SWQE_UD_AV + 8, other, sizeof(other));
	if (ibv_wr_complete(qpx) ||
	    want_wc(name, p.cqa, id1, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqb, 95, IBV_WC_SUCCESS, 10000))
		goto out;
	if (!bytes_are(p.bufb + 40, 32, 0x6a)) {
		failf(name, "the datagram's bytes are not in b's receive");
		goto out;
	}
	if (post_recv1(p.b, 96, p.bufb + 256, 32 + 40, p.mrb->lkey)) {
		failf(name, "post_recv: %s", strerror(errno));
		goto out;
	}
	if (!(slot = ud_send_slot(name, qpx, id2, ah, p.b->qp_num, p.bufa,
				  p.mra->lkey)))
		goto out;
	memcpy(slot + SWQE_UD_AH_NUM, &zero, 4);
	if (ibv_wr_complete(qpx)) {
		failf(name, "ibv_wr_complete: %s", strerror(errno));
		goto out;
	}
	memset(&wc, 0, sizeof(wc));
	if (poll1(p.cqa, &wc, 10000) != 1 || wc.wr_id != id2 ||
	    wc.status == IBV_WC_SUCCESS) {
		failf(name, "a SEND with no AH: wr_id %#llx %s, expected an error completion",
		      (unsigned long long)wc.wr_id, st(wc.status));
		goto out;
	}
	if (poll1(p.cqb, &wc, 300) != 0 || !bytes_are(p.bufb + 256, 72, 0xbb)) {
		failf(name, "a datagram arrived for the SEND with no AH");
		goto out;
	}
	pass(name);
out:
	if (x)
		ibv_destroy_qp(x);
	if (ah)
		ibv_destroy_ah(ah);
	pair_down(&p);
}

/*
 * C10-4: a connected QP's destination is its QP context's, set by Modify
 * QP alone.  An RC SEND from a whose WR names another QP c (an AH and
 * remote_qpn, as a UD WR would) still goes to b: b's receive takes it
 * with its bytes, c, ready to accept from a at that PSN, gets nothing,
 * and a's destination QP is still b.  librxe leaves a UD field out of an
 * RC WQE, so a second SEND has c's QPN written into its ring slot's
 * wr.ud.remote_qpn before the doorbell: it goes to b too.
 */
static void t_rc_dest_from_qp_only(void)
{
	const char *name = "rc_destination_ignores_wr_address";
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr ia;
	struct ibv_cq *cqc = NULL;
	struct ibv_qp *c = NULL;
	struct ibv_ah *ah = NULL;
	const uint64_t id = 0xde57de57de570002ull;
	struct ibv_qp_ex *qpx;
	unsigned char *slot;
	struct ibv_wc wc;
	struct pair p;
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, r;

	pair_send_ops = IBV_QP_EX_WITH_SEND;
	r = pair_up(name, &p, 7);
	pair_send_ops = 0;
	if (r)
		goto out;
	cqc = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	c = cqc ? mk_qp(p.pd, cqc, cap_ok, NULL) : NULL;
	ah = ah_to_self(p.pd);
	/* c takes a's packets at a's next PSN (connect_pair: 0x2000) */
	if (!c || !ah || to_init(c, acc) || to_rtr(c, p.a->qp_num, 0x2000) ||
	    to_rts(c, 0x5000, 7)) {
		failf(name, "setup: a third QP and an AH: %s", strerror(errno));
		goto out;
	}
	memset(p.bufa, 0x5e, 64);
	sge = (struct ibv_sge){ (uintptr_t)p.bufa, 64, p.mra->lkey };
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = c->qp_num;
	wr.wr.ud.remote_qkey = 0x11111111;
	if (post_recv1(p.b, 80, p.bufb, 256, p.mrb->lkey) ||
	    post_recv1(c, 81, p.bufb + 4096, 256, p.mrb->lkey) ||
	    ibv_post_send(p.a, &wr, &bad)) {
		failf(name, "post: %s", strerror(errno));
		goto out;
	}
	if (want_wc(name, p.cqa, 1, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqb, 80, IBV_WC_SUCCESS, 10000))
		goto out;
	if (poll1(cqc, &wc, 300) != 0) {
		failf(name, "c got a completion (wr_id %llu, %s)",
		      (unsigned long long)wc.wr_id, st(wc.status));
		goto out;
	}
	if (!bytes_are(p.bufb, 64, 0x5e) || !bytes_are(p.bufb + 4096, 256, 0xbb)) {
		failf(name, "b's buffer lacks the SEND, or c's was written");
		goto out;
	}
	qpx = ibv_qp_to_qp_ex(p.a);
	ibv_wr_start(qpx);
	qpx->wr_id = id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, p.mra->lkey, (uintptr_t)p.bufa + 64, 64);
	if (!(slot = ring_slot_of(id))) {
		ibv_wr_abort(qpx);
		failf(name, "the WQE is not in the mmapped send ring");
		goto out;
	}
	memcpy(slot + SWQE_UD_REMOTE_QPN, &c->qp_num, 4);
	memset(p.bufa + 64, 0x5f, 64);
	if (post_recv1(p.b, 82, p.bufb + 256, 256, p.mrb->lkey) ||
	    ibv_wr_complete(qpx)) {
		failf(name, "post the patched SEND: %s", strerror(errno));
		goto out;
	}
	if (want_wc(name, p.cqa, id, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqb, 82, IBV_WC_SUCCESS, 10000))
		goto out;
	if (poll1(cqc, &wc, 300) != 0 || !bytes_are(p.bufb + 256, 64, 0x5f) ||
	    !bytes_are(p.bufb + 4096, 256, 0xbb)) {
		failf(name, "the SEND with c's QPN in its slot reached c, or not b");
		goto out;
	}
	if (ibv_query_qp(p.a, &qa, IBV_QP_DEST_QPN, &ia) ||
	    qa.dest_qp_num != p.b->qp_num) {
		failf(name, "a's destination QP is %u, expected b's %u",
		      qa.dest_qp_num, p.b->qp_num);
		goto out;
	}
	pass(name);
out:
	if (c)
		ibv_destroy_qp(c);
	if (cqc)
		ibv_destroy_cq(cqc);
	if (ah)
		ibv_destroy_ah(ah);
	pair_down(&p);
}

/*
 * o10-43: an atomic whose remote address is not 8-byte aligned fails.
 * librxe checks that at ibv_post_send, so the test writes the address
 * into the ring slot of an aligned FETCH_ADD before ringing: the responder
 * must refuse it (Invalid Request NAK), not add at the address.  The
 * requester completes REM_INV_REQ_ERR, neither the target nor the local
 * buffer changes, the responder QP gets IBV_EVENT_QP_REQ_ERR and is in
 * Error; an aligned FETCH_ADD on a fresh pair still lands.
 */
static void t_atomic_unaligned(void)
{
	const char *name = "atomic_unaligned_inv_req";
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_ATOMIC;
	const uint64_t id = 0xa11a11a1a11a11a1ull;
	struct ibv_mr *amr = NULL;
	struct ibv_qp_ex *qpx;
	unsigned char *slot;
	uint64_t bad, t0, t1;
	char seen[256];
	struct pair p;
	int r, i;

	pair_send_ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	r = pair_up(name, &p, 7);
	pair_send_ops = 0;
	if (r)
		goto out;
	amr = b_target(name, &p, p.bufb, BUF, acc, acc | IBV_ACCESS_REMOTE_READ);
	if (!amr)
		goto out;
	for (i = 0; i < 4; i++)
		((uint64_t *)(p.bufb + 64))[i] = 1000 + i;
	qpx = ibv_qp_to_qp_ex(p.a);
	ibv_wr_start(qpx);
	qpx->wr_id = id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_fetch_add(qpx, amr->rkey, (uintptr_t)p.bufb + 72, 5);
	ibv_wr_set_sge(qpx, p.mra->lkey, (uintptr_t)p.bufa, 8);
	if (!(slot = ring_slot_of(id))) {
		ibv_wr_abort(qpx);
		failf(name, "the WQE is not in the mmapped send ring");
		goto out;
	}
	bad = (uintptr_t)p.bufb + 76;
	memcpy(slot + SWQE_REMOTE_ADDR, &bad, 8);
	if ((r = ibv_wr_complete(qpx))) {
		failf(name, "ibv_wr_complete: %s", errname(r));
		goto out;
	}
	if (want_wc(name, p.cqa, id, IBV_WC_REM_INV_REQ_ERR, 20000))
		goto out;
	for (i = 0; i < 4; i++) {
		if (((uint64_t *)(p.bufb + 64))[i] != 1000 + (uint64_t)i) {
			failf(name, "target word %d is %llu, expected %d (the unaligned add landed)",
			      i, (unsigned long long)((uint64_t *)(p.bufb + 64))[i], 1000 + i);
			goto out;
		}
	}
	if (!bytes_are(p.bufa, 8, 0xaa)) {
		failf(name, "the local buffer changed: a value came back for a refused atomic");
		goto out;
	}
	if (!wait_qp_event(p.b, IBV_EVENT_QP_REQ_ERR, 5000, seen, sizeof(seen))) {
		failf(name, "got events [%s], expected %s on the responder QP",
		      seen, ibv_event_type_str(IBV_EVENT_QP_REQ_ERR));
		goto out;
	}
	if (qp_state(p.b) != IBV_QPS_ERR) {
		failf(name, "responder QP state %s, expected ERR", qps(qp_state(p.b)));
		goto out;
	}
	/* the aligned form of the same WR, on a fresh pair, does land */
	ibv_dereg_mr(amr);
	amr = NULL;
	pair_down(&p);
	if (pair_up(name, &p, 7))
		goto out;
	amr = b_target(name, &p, p.bufb, BUF, acc, acc | IBV_ACCESS_REMOTE_READ);
	if (!amr)
		goto out;
	*(uint64_t *)(p.bufb + 72) = 1001;
	if ((r = fetch_add1(p.a, 2, p.bufa, p.mra->lkey, p.bufb + 72, amr->rkey, 5))) {
		failf(name, "aligned FETCH_ADD: post got %s", errname(r));
		goto out;
	}
	if (want_wc(name, p.cqa, 2, IBV_WC_SUCCESS, 20000))
		goto out;
	memcpy(&t0, p.bufa, 8);
	memcpy(&t1, p.bufb + 72, 8);
	if (t0 != 1001 || t1 != 1006) {
		failf(name, "aligned FETCH_ADD returned %llu and left %llu, expected 1001 and 1006",
		      (unsigned long long)t0, (unsigned long long)t1);
		goto out;
	}
	pass(name);
out:
	if (amr)
		ibv_dereg_mr(amr);
	pair_down(&p);
}

/*
 * C10-93: a SEND whose SGEs add up to more than the maximum message size
 * (2^31) is an error: refused at the post (EINVAL) or completed once with
 * LOC_QP_OP_ERR and the QP in Error.  Nothing reaches the responder,
 * whose receive WQE stays unconsumed and buffer untouched.  The SGEs are
 * never walked, so their lengths need no memory behind them.
 */
static void t_sge_sum_over_max_msg(void)
{
	const char *name = "send_sge_sum_over_max_msg_refused";
	struct ibv_qp_cap cap = cap_ok;
	struct ibv_sge sge[2];
	struct ibv_send_wr wr = {}, *bad = NULL;
	struct ibv_port_attr pa = {};
	struct ibv_wc wc[4];
	struct pair p;
	int r, n;

	cap.max_send_sge = 2;
	if (pair_up_cap(name, &p, 7, cap))
		goto out;
	if (ibv_query_port(ctx, 1, &pa) || pa.max_msg_sz != 1u << 31) {
		failf(name, "port max_msg_sz %u, expected 2^31", pa.max_msg_sz);
		goto out;
	}
	if (post_recv1(p.b, 10, p.bufb, 4096, p.mrb->lkey)) {
		failf(name, "post_recv: %s", strerror(errno));
		goto out;
	}
	sge[0] = (struct ibv_sge){ (uintptr_t)p.bufa, 1u << 31, p.mra->lkey };
	sge[1] = (struct ibv_sge){ (uintptr_t)p.bufa, 8, p.mra->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 7, .sg_list = sge, .num_sge = 2,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	r = ibv_post_send(p.a, &wr, &bad);
	if (r && r != EINVAL) {
		failf(name, "post_send: %s, expected 0 or EINVAL", errname(r));
		goto out;
	}
	if (r) {
		printf("# %s: refused at the post (EINVAL)\n", name);
		n = collect(p.cqa, wc, 4, 1, 500);
		if (n || bad != &wr || qp_state(p.a) != IBV_QPS_RTS) {
			failf(name, "%d completions for a refused post, bad_wr %s, QP in %s",
			      n, bad == &wr ? "it" : "other", qps(qp_state(p.a)));
			goto out;
		}
	} else {
		n = collect(p.cqa, wc, 4, 1, 20000);
		if (n != 1 || wc[0].wr_id != 7 || wc[0].status != IBV_WC_LOC_QP_OP_ERR) {
			failf(name, "%d completions, first wr_id %llu %s; expected one %s",
			      n, n ? (unsigned long long)wc[0].wr_id : 0ULL,
			      n ? st(wc[0].status) : "-", st(IBV_WC_LOC_QP_OP_ERR));
			goto out;
		}
		if (qp_state(p.a) != IBV_QPS_ERR) {
			failf(name, "requester QP in %s, expected ERR", qps(qp_state(p.a)));
			goto out;
		}
	}
	n = collect(p.cqb, wc, 4, 1, 500);
	if (n || !bytes_are(p.bufb, 4096, 0xbb)) {
		failf(name, "the responder got %d completions, its buffer %s",
		      n, bytes_are(p.bufb, 4096, 0xbb) ? "untouched" : "written");
		goto out;
	}
	pass(name);
out:
	pair_down(&p);
}

/*
 * C10-146: an immediate error leaves a UC QP as it was.  A SEND with more
 * SGEs than the QP allows is refused at the post (EINVAL); the QP stays in
 * RTS, nothing completes for it, and the SEND posted next arrives with its
 * bytes and completes alone.
 */
static void t_uc_immediate_err(void)
{
	const char *name = "uc_immediate_error_no_effect";
	struct ibv_sge sge[2];
	struct ibv_send_wr wr = {}, *bad = NULL;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qia;
	struct ibv_wc wc;
	struct pair p = {};
	int r;

	if (uc_pair_up(name, &p))
		goto out;
	if (post_recv1(p.b, 20, p.bufb, 512, p.mrb->lkey)) {
		failf(name, "setup: receive: %s", strerror(errno));
		goto out;
	}
	if (ibv_query_qp(p.a, &qa, IBV_QP_CAP, &qia) || qia.cap.max_send_sge != 1) {
		failf(name, "setup: max_send_sge %u, expected the 1 asked for",
		      qia.cap.max_send_sge);
		goto out;
	}
	sge[0] = sge[1] = (struct ibv_sge){ (uintptr_t)p.bufa, 32, p.mra->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 810, .sg_list = sge, .num_sge = 2,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	r = ibv_post_send(p.a, &wr, &bad);
	if (r != EINVAL || bad != &wr) {
		failf(name, "SEND with 2 SGEs (max 1): got %s, bad_wr %s; expected EINVAL at it",
		      errname(r), bad == &wr ? "it" : "other");
		goto out;
	}
	if (qp_state(p.a) != IBV_QPS_RTS) {
		failf(name, "QP state %s after the refused post, expected RTS", qps(qp_state(p.a)));
		goto out;
	}
	memset(p.bufa, 0x43, 64);
	if (post_send1(p.a, 812, p.bufa, 64, p.mra->lkey) ||
	    want_wc(name, p.cqa, 812, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqb, 20, IBV_WC_SUCCESS, 10000))
		goto out;
	if (!bytes_are(p.bufb, 64, 0x43) || !bytes_are(p.bufb + 64, 448, 0xbb)) {
		failf(name, "the SEND after the refused one placed the wrong bytes");
		goto out;
	}
	if (ibv_poll_cq(p.cqa, 1, &wc) || ibv_poll_cq(p.cqb, 1, &wc)) {
		failf(name, "a completion beyond the one SEND and its receive (wr_id %llu)",
		      (unsigned long long)wc.wr_id);
		goto out;
	}
	pass(name);
out:
	pair_down(&p);
}

/*
 * C10-148: a UC receive WQE that fails locally (an L_Key nobody has)
 * completes in error, the QP goes to Error and the receive behind it
 * flushes; nothing is written.  The sender, unacknowledged, completes
 * successfully.
 */
static void t_uc_recv_err(void)
{
	const char *name = "uc_recv_local_err_qp_err_flush";
	struct pair p = {};

	if (uc_pair_up(name, &p))
		goto out;
	if (post_recv1(p.b, 40, p.bufb, 256, p.mrb->lkey ^ 0x005a5a00) ||
	    post_recv1(p.b, 41, p.bufb + 4096, 256, p.mrb->lkey)) {
		failf(name, "post_recv: %s", strerror(errno));
		goto out;
	}
	memset(p.bufa, 0x44, 64);
	if (post_send1(p.a, 840, p.bufa, 64, p.mra->lkey) ||
	    want_wc(name, p.cqa, 840, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqb, 40, IBV_WC_LOC_PROT_ERR, 10000) ||
	    want_wc(name, p.cqb, 41, IBV_WC_WR_FLUSH_ERR, 10000))
		goto out;
	if (qp_state(p.b) != IBV_QPS_ERR) {
		failf(name, "receiver QP in %s, expected ERR", qps(qp_state(p.b)));
		goto out;
	}
	if (!bytes_are(p.bufb, BUF, 0xbb)) {
		failf(name, "the failed receive wrote into the buffer");
		goto out;
	}
	pass(name);
out:
	pair_down(&p);
}

/*
 * UC is unacknowledged: its sender completes when the packets leave, not
 * when the peer has taken them.  A zero-length SEND from a, received by
 * b, comes after everything a sent before it: then that has landed or
 * been dropped.
 */
static int uc_sync(const char *name, struct pair *p, uint64_t id)
{
	if (post_recv1(p->b, id, p->bufb, 0, p->mrb->lkey) ||
	    post_send1(p->a, id, p->bufa, 0, p->mra->lkey)) {
		failf(name, "the zero-length SEND behind: %s", strerror(errno));
		return -1;
	}
	return want_wc(name, p->cqa, id, IBV_WC_SUCCESS, 10000) ?:
	       want_wc(name, p->cqb, id, IBV_WC_SUCCESS, 10000);
}

/*
 * C10-149, Table 86: what a UC receiver drops, the sender having caused
 * it (UC has no NAK).  Into one 1500-byte receive: a 3-packet SEND of
 * 3072 bytes (FIRST fits, MIDDLE overflows: the message is dropped and so
 * is its LAST, which then continues no message), and a WRITE under an
 * R_Key nobody has.  Both senders complete successfully, no receive
 * completes, the WRITE's target keeps its bytes, rcvd_uc_msg_drop counts
 * the drops, the QP stays in RTS, and the same receive WQE then takes the
 * next SEND whole; a WRITE with the right key lands.
 */
static void t_uc_drops(void)
{
	const char *name = "uc_length_and_rkey_drops_qp_goes_on";
	long d0, d1;
	struct ibv_wc wc;
	struct pair p = {};

	if (uc_pair_up(name, &p))
		goto out;
	d0 = hw_counter("rcvd_uc_msg_drop");
	memset(p.bufa, 0x61, 3072);
	memset(p.bufa + 4096, 0x62, 64);
	if (post_recv1(p.b, 60, p.bufb, 1500, p.mrb->lkey) ||
	    post_send1(p.a, 860, p.bufa, 3072, p.mra->lkey) ||
	    want_wc(name, p.cqa, 860, IBV_WC_SUCCESS, 10000) ||
	    post_rdma1(p.a, 861, IBV_WR_RDMA_WRITE, p.bufa + 4096, 64,
		       p.mra->lkey, p.bufb + 8192, p.mrb->rkey ^ 0x00a5a500) ||
	    want_wc(name, p.cqa, 861, IBV_WC_SUCCESS, 10000))
		goto out;
	if (poll1(p.cqb, &wc, 300) != 0) {
		failf(name, "receive completion (wr_id %llu, %s) for a dropped message",
		      (unsigned long long)wc.wr_id, st(wc.status));
		goto out;
	}
	d1 = hw_counter("rcvd_uc_msg_drop");
	if (d0 < 0 || d1 - d0 < 2 || d1 - d0 > 4) {
		failf(name, "rcvd_uc_msg_drop moved by %ld, expected 2..4 (the SEND's MIDDLE and maybe LAST, the WRITE)",
		      d1 - d0);
		goto out;
	}
	if (!bytes_are(p.bufb + 8192, 64, 0xbb) || qp_state(p.b) != IBV_QPS_RTS) {
		failf(name, "the WRITE under a bad R_Key landed, or the receiver is in %s",
		      qps(qp_state(p.b)));
		goto out;
	}
	memset(p.bufa, 0x63, 1000);
	if (post_send1(p.a, 862, p.bufa, 1000, p.mra->lkey) ||
	    want_wc(name, p.cqa, 862, IBV_WC_SUCCESS, 10000))
		goto out;
	memset(&wc, 0, sizeof(wc));
	if (poll1(p.cqb, &wc, 10000) != 1 || wc.wr_id != 60 ||
	    wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
	    wc.byte_len != 1000 || !bytes_are(p.bufb, 1000, 0x63)) {
		failf(name, "the next SEND: wr_id %llu %s opcode %d byte_len %u, expected receive 60 with 1000 bytes of 0x63",
		      (unsigned long long)wc.wr_id, st(wc.status), wc.opcode,
		      wc.byte_len);
		goto out;
	}
	if (post_rdma1(p.a, 863, IBV_WR_RDMA_WRITE, p.bufa + 4096, 64,
		       p.mra->lkey, p.bufb + 8192, p.mrb->rkey) ||
	    want_wc(name, p.cqa, 863, IBV_WC_SUCCESS, 10000) ||
	    uc_sync(name, &p, 864))
		goto out;
	if (!bytes_are(p.bufb + 8192, 64, 0x62)) {
		failf(name, "a WRITE with the right R_Key after the drops did not land");
		goto out;
	}
	pass(name);
out:
	pair_down(&p);
}

/*
 * C10-55: the local MR's rights must allow the access.  An MR registered
 * with no rights (local read only) may be gathered from: a SEND from it
 * lands.  A READ into it is LOC_PROT_ERR and leaves it as it was.  (A
 * receive into such an MR: recv_local_prot_err_qp_err_flush.)
 */
static void t_read_into_ro_mr(void)
{
	const char *name = "read_into_mr_without_local_write";
	struct ibv_mr *ro = NULL;
	struct pair p;

	if (pair_up(name, &p, 7))
		goto out;
	memset(p.bufa + 32768, 0x3d, 4096);
	ro = ibv_reg_mr(p.pd, p.bufa + 32768, 4096, 0);
	if (!ro) {
		failf(name, "setup: reg_mr with no rights: %s", strerror(errno));
		goto out;
	}
	if (post_recv1(p.b, 10, p.bufb, 256, p.mrb->lkey) ||
	    post_send1(p.a, 1, p.bufa + 32768, 100, ro->lkey) ||
	    want_wc(name, p.cqa, 1, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqb, 10, IBV_WC_SUCCESS, 10000))
		goto out;
	if (!bytes_are(p.bufb, 100, 0x3d) || !bytes_are(p.bufb + 100, 156, 0xbb)) {
		failf(name, "the SEND gathered from the MR placed the wrong bytes");
		goto out;
	}
	if (post_rdma1(p.a, 2, IBV_WR_RDMA_READ, p.bufa + 32768, 64, ro->lkey,
		       p.bufb + 4096, p.mrb->rkey) ||
	    want_wc(name, p.cqa, 2, IBV_WC_LOC_PROT_ERR, 10000))
		goto out;
	if (!bytes_are(p.bufa + 32768, 4096, 0x3d)) {
		failf(name, "the READ wrote into an MR without local write");
		goto out;
	}
	pass(name);
out:
	if (ro)
		ibv_dereg_mr(ro);
	pair_down(&p);
}

/*
 * C10-88: no RDMA into a QP that does not enable it, whatever the MR
 * allows.  The target QP with remote READ only: a WRITE through an R_Key
 * with remote write fails (sroce: REM_ACCESS_ERR; rdma_rxe answers
 * Invalid Request, so either is taken) and the memory keeps its bytes;
 * with remote WRITE only, a READ fails alike and brings nothing back.
 */
static int want_rdma_refused(const char *name, struct ibv_cq *cq, uint64_t id)
{
	struct ibv_wc wc;
	int r = poll1(cq, &wc, 10000);

	if (r == 1 && wc.wr_id == id && (wc.status == IBV_WC_REM_ACCESS_ERR ||
					 wc.status == IBV_WC_REM_INV_REQ_ERR))
		return 0;
	failf(name, "%s wr_id %llu %s, expected REM_ACCESS_ERR or REM_INV_REQ_ERR",
	      r == 1 ? "got" : "no completion for", (unsigned long long)id,
	      r == 1 ? st(wc.status) : "-");
	return -1;
}

static void t_qp_rdma_disabled(void)
{
	const char *name = "rdma_needs_qp_access_flags";
	struct ibv_qp_attr qa = {};
	struct pair p;

	if (pair_up(name, &p, 7))
		goto out;
	qa.qp_access_flags = IBV_ACCESS_REMOTE_READ;
	if (ibv_modify_qp(p.b, &qa, IBV_QP_ACCESS_FLAGS)) {
		failf(name, "setup: access flags REMOTE_READ: %s", strerror(errno));
		goto out;
	}
	memset(p.bufa, 0x61, 512);
	if (post_rdma1(p.a, 1, IBV_WR_RDMA_WRITE, p.bufa, 512, p.mra->lkey,
		       p.bufb, p.mrb->rkey) ||
	    want_rdma_refused(name, p.cqa, 1))
		goto out;
	if (!bytes_are(p.bufb, BUF, 0xbb)) {
		failf(name, "a WRITE landed in a QP without remote write");
		goto out;
	}
	pair_down(&p);
	if (pair_up(name, &p, 7))
		goto out;
	qa.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(p.b, &qa, IBV_QP_ACCESS_FLAGS)) {
		failf(name, "setup: access flags REMOTE_WRITE: %s", strerror(errno));
		goto out;
	}
	if (post_rdma1(p.a, 2, IBV_WR_RDMA_READ, p.bufa, 512, p.mra->lkey,
		       p.bufb, p.mrb->rkey) ||
	    want_rdma_refused(name, p.cqa, 2))
		goto out;
	if (!bytes_are(p.bufa, BUF, 0xaa)) {
		failf(name, "a READ from a QP without remote read brought data back");
		goto out;
	}
	pass(name);
out:
	pair_down(&p);
}

/*
 * C10-57: the MR's remote rights must allow the access; the target QP
 * allows all three.  A WRITE through an R_Key with remote read only, a
 * READ through one with remote write only, a FETCH_ADD through one
 * without remote atomic: each completes REM_ACCESS_ERR and nothing moves
 * either way.
 */
static void mr_right_case(const char *name, enum ibv_wr_opcode op, int mr_acc)
{
	int qacc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_mr *mr = NULL;
	struct pair p;
	int r;

	if (pair_up(name, &p, 7))
		goto out;
	mr = b_target(name, &p, p.bufb + 16384, 4096,
		      IBV_ACCESS_LOCAL_WRITE | mr_acc, qacc);
	if (!mr)
		goto out;
	memset(p.bufa, 0x66, 64);
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD)
		r = fetch_add1(p.a, 1, p.bufa, p.mra->lkey, p.bufb + 16384, mr->rkey, 9);
	else
		r = post_rdma1(p.a, 1, op, p.bufa, 64, p.mra->lkey, p.bufb + 16384,
			       mr->rkey);
	if (r) {
		failf(name, "post: %s", errname(r));
		goto out;
	}
	if (want_wc(name, p.cqa, 1, IBV_WC_REM_ACCESS_ERR, 10000))
		goto out;
	if (!bytes_are(p.bufb, BUF, 0xbb) || !bytes_are(p.bufa, 64, 0x66)) {
		failf(name, "data moved: target %s, local %s",
		      bytes_are(p.bufb, BUF, 0xbb) ? "intact" : "written",
		      bytes_are(p.bufa, 64, 0x66) ? "intact" : "written");
		goto out;
	}
	pass(name);
out:
	if (mr)
		ibv_dereg_mr(mr);
	pair_down(&p);
}

static void t_mr_remote_rights(void)
{
	mr_right_case("mr_read_only_rkey_write_refused", IBV_WR_RDMA_WRITE,
		      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	mr_right_case("mr_write_only_rkey_read_refused", IBV_WR_RDMA_READ,
		      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	mr_right_case("mr_no_atomic_rkey_fetch_add_refused",
		      IBV_WR_ATOMIC_FETCH_AND_ADD,
		      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
}

/*
 * C10-54.1.1 and C10-54.1.2: no protection checks on zero-length data.
 * A SEND whose first SGE is zero bytes under a key nobody has (and an
 * address nobody mapped) delivers the second SGE's bytes; a zero-length
 * WRITE from and to unmapped addresses under keys nobody has succeeds; a
 * zero-length SEND is taken
 * by a receive WQE whose SGE has no valid key and completes successfully
 * with byte_len 0, the buffer untouched.
 */
static void t_zero_len_no_checks(void)
{
	const char *name = "zero_length_no_protection_checks";
	struct ibv_qp_cap cap = cap_ok;
	struct ibv_sge sge[2];
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	struct pair p;

	cap.max_send_sge = 2;
	if (pair_up_cap(name, &p, 7, cap))
		goto out;
	memset(p.bufa, 0x71, 64);
	sge[0] = (struct ibv_sge){ 0x10, 0, p.mra->lkey ^ 0x00a5a500 };
	sge[1] = (struct ibv_sge){ (uintptr_t)p.bufa, 64, p.mra->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 1, .sg_list = sge, .num_sge = 2,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	if (post_recv1(p.b, 10, p.bufb, 256, p.mrb->lkey) ||
	    ibv_post_send(p.a, &wr, &bad) ||
	    want_wc(name, p.cqa, 1, IBV_WC_SUCCESS, 10000) ||
	    poll1(p.cqb, &wc, 10000) != 1) {
		failf(name, "SEND with a zero-length SGE under a bad key: %s", strerror(errno));
		goto out;
	}
	if (wc.wr_id != 10 || wc.status != IBV_WC_SUCCESS || wc.byte_len != 64 ||
	    !bytes_are(p.bufb, 64, 0x71) || !bytes_are(p.bufb + 64, 192, 0xbb)) {
		failf(name, "receive: wr_id %llu %s byte_len %u, data %s",
		      (unsigned long long)wc.wr_id, st(wc.status), wc.byte_len,
		      bytes_are(p.bufb, 64, 0x71) ? "right" : "wrong");
		goto out;
	}
	if (post_rdma1(p.a, 2, IBV_WR_RDMA_WRITE, (void *)0x10, 0,
		       p.mra->lkey ^ 0x00a5a500, (void *)0x20,
		       p.mrb->rkey ^ 0x00f0f000) ||
	    want_wc(name, p.cqa, 2, IBV_WC_SUCCESS, 10000))
		goto out;
	if (post_recv1(p.b, 11, p.bufb + 16384, 256, p.mrb->lkey ^ 0x005a5a00) ||
	    post_send1(p.a, 3, p.bufa, 0, p.mra->lkey) ||
	    want_wc(name, p.cqa, 3, IBV_WC_SUCCESS, 10000) ||
	    poll1(p.cqb, &wc, 10000) != 1) {
		failf(name, "zero-length SEND into a receive with a bad key: %s", strerror(errno));
		goto out;
	}
	if (wc.wr_id != 11 || wc.status != IBV_WC_SUCCESS || wc.byte_len != 0) {
		failf(name, "receive: wr_id %llu %s byte_len %u, expected 11 success 0",
		      (unsigned long long)wc.wr_id, st(wc.status), wc.byte_len);
		goto out;
	}
	if (!bytes_are(p.bufb + 64, BUF - 64, 0xbb)) {
		failf(name, "the zero-length operations wrote into the buffer");
		goto out;
	}
	if (qp_state(p.a) != IBV_QPS_RTS || qp_state(p.b) != IBV_QPS_RTS) {
		failf(name, "QPs in %s and %s, expected RTS", qps(qp_state(p.a)),
		      qps(qp_state(p.b)));
		goto out;
	}
	pass(name);
out:
	pair_down(&p);
}

/*
 * C10-54.1.2 (UD with GRH) and C10-153: a UD receive always takes the
 * 40-byte GRH, so even a zero-length datagram checks the receive WQE's
 * SGE: one under a key nobody has completes LOC_PROT_ERR, the QP goes to
 * Error, the receive behind it flushes, nothing is written.  The same
 * datagram into a valid receive delivers the GRH alone (byte_len 40).
 */
static void t_ud_zero_len_grh_checked(void)
{
	const char *name = "ud_zero_length_grh_checked";
	struct ibv_ah *ah = NULL;
	struct ibv_wc wc;
	struct pair p = {};

	if (ud_pair_up(name, &p))
		goto out;
	ah = ah_to_self(p.pd);
	if (!ah || post_recv1(p.b, 30, p.bufb, 256, p.mrb->lkey)) {
		failf(name, "setup: AH or receive: %s", strerror(errno));
		goto out;
	}
	if (ud_send1(p.a, 930, ah, p.b->qp_num, p.bufa, 0, p.mra->lkey) ||
	    want_wc(name, p.cqa, 930, IBV_WC_SUCCESS, 10000) ||
	    poll1(p.cqb, &wc, 10000) != 1) {
		failf(name, "zero-length datagram into a valid receive: %s", strerror(errno));
		goto out;
	}
	if (wc.wr_id != 30 || wc.status != IBV_WC_SUCCESS || wc.byte_len != 40 ||
	    !(wc.wc_flags & IBV_WC_GRH) || !bytes_are(p.bufb + 40, 216, 0xbb)) {
		failf(name, "valid receive: wr_id %llu %s byte_len %u, expected 30 success 40 with GRH",
		      (unsigned long long)wc.wr_id, st(wc.status), wc.byte_len);
		goto out;
	}
	memset(p.bufb, 0xbb, 256);
	if (post_recv1(p.b, 31, p.bufb + 4096, 256, p.mrb->lkey ^ 0x005a5a00) ||
	    post_recv1(p.b, 32, p.bufb + 8192, 256, p.mrb->lkey) ||
	    ud_send1(p.a, 931, ah, p.b->qp_num, p.bufa, 0, p.mra->lkey) ||
	    want_wc(name, p.cqa, 931, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, p.cqb, 31, IBV_WC_LOC_PROT_ERR, 10000) ||
	    want_wc(name, p.cqb, 32, IBV_WC_WR_FLUSH_ERR, 10000))
		goto out;
	if (qp_state(p.b) != IBV_QPS_ERR) {
		failf(name, "receiver QP in %s, expected ERR", qps(qp_state(p.b)));
		goto out;
	}
	if (!bytes_are(p.bufb, BUF, 0xbb)) {
		failf(name, "the refused receive wrote into the buffer");
		goto out;
	}
	pass(name);
out:
	if (ah)
		ibv_destroy_ah(ah);
	pair_down(&p);
}

/*
 * C10-93.1.1: a UD SEND longer than the port's MTU emits no packet and is
 * no error: it completes successfully, nothing arrives and sent_pkts
 * does not move; a datagram of the MTU sent next arrives.
 */
static void t_ud_over_mtu(void)
{
	const char *name = "ud_over_mtu_silently_dropped";
	struct ibv_port_attr pa;
	struct ibv_ah *ah = NULL;
	struct ibv_wc wc = {};
	long sent0, sent1;
	struct pair p = {};
	uint32_t mtu;
	int n;

	if (ud_pair_up(name, &p))
		goto out;
	if (ibv_query_port(ctx, 1, &pa)) {
		failf(name, "query_port: %s", strerror(errno));
		goto out;
	}
	mtu = 128u << pa.active_mtu;
	ah = ah_to_self(p.pd);
	if (!ah || post_recv1(p.b, 0, p.bufb, mtu + 2048, p.mrb->lkey)) {
		failf(name, "setup: AH or receive: %s", strerror(errno));
		goto out;
	}
	memset(p.bufa, 0x29, mtu + 1);
	sent0 = hw_counter("sent_pkts");
	if (ud_send1(p.a, 900, ah, p.b->qp_num, p.bufa, mtu + 1, p.mra->lkey) ||
	    want_wc(name, p.cqa, 900, IBV_WC_SUCCESS, 10000))
		goto out;
	sent1 = hw_counter("sent_pkts");
	if (sent0 < 0 || sent1 != sent0) {
		failf(name, "sent_pkts %ld -> %ld for a datagram over the MTU (%u)",
		      sent0, sent1, mtu);
		goto out;
	}
	if (poll1(p.cqb, &wc, 500) != 0) {
		failf(name, "the receiver got a completion (%s, byte_len %u)",
		      st(wc.status), wc.byte_len);
		goto out;
	}
	if (ud_send1(p.a, 901, ah, p.b->qp_num, p.bufa, mtu, p.mra->lkey) ||
	    want_wc(name, p.cqa, 901, IBV_WC_SUCCESS, 10000))
		goto out;
	n = ud_received(name, p.cqb, p.a->qp_num, p.bufb, mtu, 0x29, 10000);
	if (n != 1) {
		if (n >= 0)
			failf(name, "%d datagrams of the MTU arrived, expected 1", n);
		goto out;
	}
	pass(name);
out:
	if (ah)
		ibv_destroy_ah(ah);
	pair_down(&p);
}

/*
 * A user receive WQE whose num_sge exceeds the QP's max_recv_sge, written
 * into the ring after ibv_post_recv: the SEND that takes it is NAKed
 * (remote operational error), the malformed WQE completes once with
 * LOC_QP_OP_ERR, the two behind it flush, the responder is in ERR
 * (C10-42, 10.10.2.4).
 */
static void t_recv_malformed_user_wqe(void)
{
	const char *name = "recv_malformed_user_wqe";
	const uint64_t id = 0x5e1f1a7e00000010ull;
	struct ibv_sge sge;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc[8];
	unsigned char *slot;
	char why[128];
	uint32_t v = 0x10000;
	struct pair p;
	int i, n, r;

	if (pair_up(name, &p, 7))
		goto out;
	for (i = 0; i < 3; i++) {
		sge = (struct ibv_sge){ (uintptr_t)p.bufb + i * 256, 256, p.mrb->lkey };
		rwr = (struct ibv_recv_wr){ .wr_id = id + i, .sg_list = &sge, .num_sge = 1 };
		if ((r = ibv_post_recv(p.b, &rwr, &rbad))) {
			failf(name, "post_recv: %s", errname(r));
			goto out;
		}
	}
	if (!(slot = ring_slot_of(id))) {
		failf(name, "the receive WQE is not in the mmapped receive ring");
		goto out;
	}
	memcpy(slot + RWQE_NUM_SGE, &v, 4);
	sge = (struct ibv_sge){ (uintptr_t)p.bufa, 16, p.mra->lkey };
	wr = (struct ibv_send_wr){ .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	if ((r = ibv_post_send(p.a, &wr, &bad))) {
		failf(name, "post_send: %s", errname(r));
		goto out;
	}
	n = collect(p.cqb, wc, 8, 3, 20000);
	if (!ids_once(wc, n, id, 3, why, sizeof(why))) {
		failf(name, "responder: %s", why);
		goto out;
	}
	for (i = 0; i < n; i++) {
		enum ibv_wc_status want = wc[i].wr_id == id ? IBV_WC_LOC_QP_OP_ERR :
							      IBV_WC_WR_FLUSH_ERR;

		if (wc[i].status != want) {
			failf(name, "responder: wr_id %#llx %s, expected %s",
			      (unsigned long long)wc[i].wr_id, st(wc[i].status), st(want));
			goto out;
		}
	}
	n = collect(p.cqa, wc, 8, 1, 20000);
	if (n != 1 || wc[0].status != IBV_WC_REM_OP_ERR) {
		failf(name, "requester: %d completions, first %s, expected one %s", n,
		      n ? st(wc[0].status) : "-", st(IBV_WC_REM_OP_ERR));
		goto out;
	}
	if (qp_state(p.b) != IBV_QPS_ERR) {
		failf(name, "responder QP in %s, expected ERR", qps(qp_state(p.b)));
		goto out;
	}
	pass(name);
out:
	pair_down(&p);
}

/* Post n signaled WRITEs of len bytes each from a into b, wr_id lo... */
static int post_writes(struct pair *p, uint64_t lo, int n, uint32_t len)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr, *bad;
	int i, r;

	for (i = 0; i < n; i++) {
		sge = (struct ibv_sge){ (uintptr_t)p->bufa + i * len, len, p->mra->lkey };
		wr = (struct ibv_send_wr){ .wr_id = lo + i, .sg_list = &sge, .num_sge = 1,
					   .opcode = IBV_WR_RDMA_WRITE,
					   .send_flags = IBV_SEND_SIGNALED };
		wr.wr.rdma.remote_addr = (uintptr_t)p->bufb + i * len;
		wr.wr.rdma.rkey = p->mrb->rkey;
		r = ibv_post_send(p->a, &wr, &bad);
		if (r)
			return r;
	}
	return 0;
}

/* The next n completions are wr_id lo..lo+n-1 in order, all successful. */
static int want_in_order(const char *name, struct ibv_cq *cq, uint64_t lo, int n)
{
	struct ibv_wc wc[64];
	int got, i;

	got = collect(cq, wc, 64, n, 20000);
	if (got != n) {
		failf(name, "got %d completions, expected %d", got, n);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (wc[i].wr_id != lo + i || wc[i].status != IBV_WC_SUCCESS) {
			failf(name, "completion %d: wr_id %llu %s, expected wr_id %llu success",
			      i, (unsigned long long)wc[i].wr_id, st(wc[i].status),
			      (unsigned long long)(lo + i));
			return -1;
		}
	}
	return 0;
}

/*
 * CQ resize (10.2.6.3: allowed with work outstanding, no error but the
 * verb's own): completions already in the CQ survive in order, a size
 * below them is refused, and the resized CQ keeps taking completions.
 */
static void t_cq_resize(void)
{
	struct ibv_qp_cap cap = cap_ok;
	struct pair p;
	int r;

	cap.max_send_wr = 48;
	if (pair_up_cap("cq_resize", &p, 7, cap))
		goto out;
	/* 40 completions waiting in a CQ of 64 */
	r = post_writes(&p, 1000, 40, 64);
	if (r) {
		failf("cq_resize", "post_send: %s", errname(r));
		goto out;
	}
	sleep(2);
	r = ibv_resize_cq(p.cqa, 16);
	if (r != EINVAL)
		failf("cq_resize_below_pending_einval", "got %s, expected EINVAL (40 completions pending)",
		      errname(r));
	else
		pass("cq_resize_below_pending_einval");
	r = ibv_resize_cq(p.cqa, 256);
	if (r || p.cqa->cqe < 256) {
		failf("cq_resize_keeps_pending_in_order", "resize to 256: %s, cqe %d",
		      errname(r), p.cqa->cqe);
		goto out;
	}
	if (!want_in_order("cq_resize_keeps_pending_in_order", p.cqa, 1000, 40))
		pass("cq_resize_keeps_pending_in_order");
	/* empty now: shrinking works, and the small CQ keeps working */
	r = ibv_resize_cq(p.cqa, 20);
	if (r) {
		failf("cq_resize_shrink_then_traffic", "resize to 20: %s", errname(r));
		goto out;
	}
	r = post_writes(&p, 2000, 20, 64);
	if (r) {
		failf("cq_resize_shrink_then_traffic", "post_send: %s", errname(r));
		goto out;
	}
	if (!want_in_order("cq_resize_shrink_then_traffic", p.cqa, 2000, 20))
		pass("cq_resize_shrink_then_traffic");
out:
	pair_down(&p);
}

static int post_srq_recvs(struct pair *p, struct ibv_srq *srq, uint64_t lo,
			  int n, uint32_t len)
{
	struct ibv_sge sge;
	struct ibv_recv_wr wr, *bad;
	int i, r;

	for (i = 0; i < n; i++) {
		sge = (struct ibv_sge){ (uintptr_t)p->bufb + ((lo + i) % 64) * len, len,
					p->mrb->lkey };
		wr = (struct ibv_recv_wr){ .wr_id = lo + i, .sg_list = &sge, .num_sge = 1 };
		r = ibv_post_srq_recv(srq, &wr, &bad);
		if (r)
			return r;
	}
	return 0;
}

/*
 * C10-100: a fenced WR does not start before the READs ahead of it have
 * completed.  Each round posts, in one list, a READ of 4 KiB from b into
 * a local buffer and a fenced SEND of that buffer: what b receives must be
 * what the READ brought (a SEND gathered before the READ's data landed
 * would carry the buffer's previous bytes).  20 rounds, a new pattern
 * each.
 */
static void t_fence_read_then_send(void)
{
	const char *name = "fence_send_waits_for_read";
	struct ibv_sge rs, ss;
	struct ibv_send_wr rd, sd, *bad;
	struct ibv_wc wc[4];
	char *l, *r_;
	struct pair p;
	int round, n;

	if (pair_up(name, &p, 7))
		goto out;
	l = p.bufa + 16384;
	r_ = p.bufb + 16384;
	for (round = 0; round < 20; round++) {
		unsigned char v = 0x20 + round, old = 0x90 + round;

		memset(r_, v, 4096);
		memset(l, old, 4096);
		memset(p.bufb, 0xbb, 4096);
		if (post_recv1(p.b, 100 + round, p.bufb, 4096, p.mrb->lkey)) {
			failf(name, "post_recv: %s", strerror(errno));
			goto out;
		}
		rs = (struct ibv_sge){ (uintptr_t)l, 4096, p.mra->lkey };
		ss = rs;
		rd = (struct ibv_send_wr){ .wr_id = 1, .sg_list = &rs, .num_sge = 1,
					   .opcode = IBV_WR_RDMA_READ, .next = &sd };
		rd.wr.rdma.remote_addr = (uintptr_t)r_;
		rd.wr.rdma.rkey = p.mrb->rkey;
		sd = (struct ibv_send_wr){ .wr_id = 2, .sg_list = &ss, .num_sge = 1,
					   .opcode = IBV_WR_SEND,
					   .send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE };
		if (ibv_post_send(p.a, &rd, &bad)) {
			failf(name, "post READ + fenced SEND: %s", strerror(errno));
			goto out;
		}
		if (want_wc(name, p.cqa, 2, IBV_WC_SUCCESS, 10000))
			goto out;
		n = collect(p.cqb, wc, 4, 1, 10000);
		if (n != 1 || wc[0].wr_id != 100u + round || wc[0].status ||
		    wc[0].byte_len != 4096) {
			failf(name, "round %d: %d receive completions", round, n);
			goto out;
		}
		if (!bytes_are(p.bufb, 4096, v)) {
			failf(name, "round %d: the fenced SEND carried %#x..., not the READ's %#x (it started before the READ completed)",
			      round, (unsigned char)p.bufb[0], v);
			goto out;
		}
	}
	pass(name);
out:
	pair_down(&p);
}

/*
 * o10-51.2.1: SRQ WQEs are accepted with no QP on the SRQ and wait there;
 * a QP in Init takes none (a SEND to it is dropped as for its state), one
 * in RTS takes them in order, one in Error takes none (its flush leaves
 * the SRQ alone), and another QP then takes the rest in order.  sroce's
 * SRQ has no error state.  o10-51.2.2: ibv_post_recv straight to a QP on
 * an SRQ is refused at once, and nothing of it ever completes.
 */
static void t_srq_states(void)
{
	const char *name = "srq_wqes_consumed_by_rts_qps_only";
	const char *name2 = "post_recv_to_srq_qp_refused";
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	struct ibv_cq *cqc = NULL, *cqd = NULL;
	struct ibv_qp *c = NULL, *d = NULL;
	struct ibv_srq *srq = NULL;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct pair p;
	long d0, d1;
	int i, r, refused = -1;

	if (pair_alloc(name, &p))
		goto out;
	srq = srq16(p.pd);
	if (!srq) {
		failf(name, "setup: srq: %s", strerror(errno));
		goto out;
	}
	if ((r = post_srq_recvs(&p, srq, 40, 4, 256))) {
		failf(name, "post_srq_recv with no QP on the SRQ: %s, expected 0", errname(r));
		goto out;
	}
	cqc = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	cqd = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	c = cqc ? mk_qp(p.pd, cqc, cap_ok, srq) : NULL;
	d = cqd ? mk_qp(p.pd, cqd, cap_ok, srq) : NULL;
	if (!c || !d || to_init(c, acc) || to_init(d, acc)) {
		failf(name, "setup: two QPs on the SRQ: %s", strerror(errno));
		goto out;
	}
	sge = (struct ibv_sge){ (uintptr_t)p.bufb + 8192, 256, p.mrb->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 99, .sg_list = &sge, .num_sge = 1 };
	refused = ibv_post_recv(c, &rwr, &rbad) != 0;
	if (!refused) {
		failf(name2, "ibv_post_recv to a QP on an SRQ returned 0");
		goto out;
	}
	/* a -> c: c in RTS takes 40 */
	if (to_rtr(p.a, c->qp_num, 0x1000) || to_rts(p.a, 0x2000, 7) ||
	    to_rtr(c, p.a->qp_num, 0x2000) || to_rts(c, 0x1000, 7)) {
		failf(name, "setup: connecting a and c: %s", strerror(errno));
		goto out;
	}
	memset(p.bufa, 0x41, 64);
	if (post_send1(p.a, 1, p.bufa, 64, p.mra->lkey) ||
	    want_wc(name, p.cqa, 1, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, cqc, 40, IBV_WC_SUCCESS, 10000))
		goto out;
	/* c in ERR: its flush takes nothing from the SRQ */
	if (ibv_modify_qp(c, &qa, IBV_QP_STATE)) {
		failf(name, "c to ERR: %s", strerror(errno));
		goto out;
	}
	if (poll1(cqc, &wc, 500) != 0) {
		failf(name, "c in ERR completed wr_id %llu (%s): it took an SRQ WQE",
		      (unsigned long long)wc.wr_id, st(wc.status));
		goto out;
	}
	/* b -> d while d is in Init: dropped, nothing taken; b's long ACK
	 * timeout (about 1 s, 7 retries) outlasts a slow guest's steps
	 */
	d0 = hw_counter("rcvd_qp_state_drop");
	if (to_rtr(p.b, d->qp_num, 0x3000) ||
	    to_rts_timeout(p.b, 0x4000, 7, 18)) {
		failf(name, "setup: b to RTS: %s", strerror(errno));
		goto out;
	}
	memset(p.bufa + 256, 0x42, 64);
	if (post_send1(p.b, 2, p.bufa + 256, 64, p.mra->lkey)) {
		failf(name, "post_send on b: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < 100 && (d1 = hw_counter("rcvd_qp_state_drop")) == d0; i++)
		usleep(10000);
	if (d0 < 0 || d1 == d0 || poll1(cqd, &wc, 100) != 0) {
		failf(name, "a SEND to d in Init: rcvd_qp_state_drop %ld -> %ld, or d completed something",
		      d0, d1);
		goto out;
	}
	/* d in RTS: the retry lands in 41, then 42; all in order */
	if (to_rtr(d, p.b->qp_num, 0x4000) || to_rts(d, 0x3000, 7)) {
		failf(name, "setup: d to RTS: %s", strerror(errno));
		goto out;
	}
	memset(p.bufa + 512, 0x43, 64);
	if (want_wc(name, p.cqb, 2, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, cqd, 41, IBV_WC_SUCCESS, 10000) ||
	    post_send1(p.b, 3, p.bufa + 512, 64, p.mra->lkey) ||
	    want_wc(name, p.cqb, 3, IBV_WC_SUCCESS, 10000) ||
	    want_wc(name, cqd, 42, IBV_WC_SUCCESS, 10000))
		goto out;
	if (!bytes_are(p.bufb + 40 * 256, 64, 0x41) ||
	    !bytes_are(p.bufb + 41 * 256, 64, 0x42) ||
	    !bytes_are(p.bufb + 42 * 256, 64, 0x43)) {
		failf(name, "the SENDs' bytes are not in WQEs 40, 41, 42");
		goto out;
	}
	pass(name);
out:
	/* the refused receive's buffer, after all the traffic there was */
	if (refused < 0)
		failf(name2, "not reached: the SRQ test's setup failed");
	else if (refused && !bytes_are(p.bufb + 8192, 256, 0xbb))
		failf(name2, "the refused receive's buffer was written");
	else if (refused)
		pass(name2);
	if (c)
		ibv_destroy_qp(c);
	if (d)
		ibv_destroy_qp(d);
	if (cqc)
		ibv_destroy_cq(cqc);
	if (cqd)
		ibv_destroy_cq(cqd);
	if (srq)
		ibv_destroy_srq(srq);
	pair_down(&p);
}

/*
 * o10-53.2.2 and o10-53.2.6: two RC QPs take their receives from one SRQ;
 * c's receive CQ differs from its send CQ.  Three SENDs from c's peer and
 * one from b's: each receive completion goes to the receive CQ of the QP
 * that got the message (none to c's send CQ), c's three in the order they
 * were sent; a WQE polled from the CQ is posted again at once (same wr_id,
 * same buffer) and takes the next SEND.
 */
static void t_srq_two_qps(void)
{
	const char *name = "srq_completion_to_receiving_qps_cq";
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ;
	struct ibv_cq *cqs = NULL, *cqr = NULL;
	struct ibv_qp *c = NULL, *d = NULL;
	struct ibv_qp_init_attr ia = { .cap = cap_ok, .qp_type = IBV_QPT_RC };
	struct ibv_sge sge;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_wc wc[4];
	struct pair p;
	int i, r, n;

	pair_srq_fn = srq16;
	r = pair_up(name, &p, 7);
	pair_srq_fn = NULL;
	if (r)
		goto out;
	cqs = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	cqr = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!cqs || !cqr) {
		failf(name, "setup: CQs: %s", strerror(errno));
		goto out;
	}
	ia.send_cq = cqs;
	ia.recv_cq = cqr;
	ia.srq = pair_srq;
	c = ibv_create_qp(p.pd, &ia);
	d = mk_qp(p.pd, p.cqa, cap_ok, NULL);
	if (!c || !d || to_init(c, acc) || to_init(d, acc) ||
	    connect_pair(d, c, 0x3000, 0x4000, 7)) {
		failf(name, "setup: the second QP pair: %s", strerror(errno));
		goto out;
	}
	if ((r = post_srq_recvs(&p, pair_srq, 40, 4, 256))) {
		failf(name, "post_srq_recv: %s", errname(r));
		goto out;
	}
	for (i = 0; i < 3; i++) {
		memset(p.bufa + 8192 + i * 256, 0x50 + i, 60 + i);
		if ((r = post_send1(d, 60 + i, p.bufa + 8192 + i * 256, 60 + i,
				    p.mra->lkey))) {
			failf(name, "post_send on c's peer: %s", errname(r));
			goto out;
		}
	}
	n = collect(p.cqa, wc, 4, 3, 10000);
	for (i = 0; i < n; i++)
		if (wc[i].wr_id != 60u + i || wc[i].status != IBV_WC_SUCCESS)
			break;
	if (n != 3 || i != 3) {
		failf(name, "c's peer: %d send completions, #%d not wr_id %d success", n, i, 60 + i);
		goto out;
	}
	n = collect(cqr, wc, 4, 3, 10000);
	for (i = 0; i < n; i++) {
		if (wc[i].wr_id != 40u + i || wc[i].status != IBV_WC_SUCCESS ||
		    wc[i].qp_num != c->qp_num || wc[i].byte_len != 60u + i ||
		    !bytes_are(p.bufb + (40 + i) * 256, 60 + i, 0x50 + i))
			break;
	}
	if (n != 3 || i != 3) {
		failf(name, "c's receive CQ: %d completions, #%d wr_id %llu %s qp %u byte_len %u; expected wr_ids 40..42 in order",
		      n, i, i < n ? (unsigned long long)wc[i].wr_id : 0ULL,
		      i < n ? st(wc[i].status) : "-", i < n ? wc[i].qp_num : 0,
		      i < n ? wc[i].byte_len : 0);
		goto out;
	}
	if (ibv_poll_cq(cqs, 1, wc) || ibv_poll_cq(p.cqb, 1, wc)) {
		failf(name, "a completion on c's send CQ or b's CQ (wr_id %llu)",
		      (unsigned long long)wc[0].wr_id);
		goto out;
	}
	/* the polled WQE 40 again, then b's peer sends: 43 first, then 40 */
	sge = (struct ibv_sge){ (uintptr_t)p.bufb + 40 * 256, 256, p.mrb->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 40, .sg_list = &sge, .num_sge = 1 };
	memset(p.bufb + 40 * 256, 0xbb, 256);
	if ((r = ibv_post_srq_recv(pair_srq, &rwr, &rbad))) {
		failf(name, "re-posting the polled WQE: %s", errname(r));
		goto out;
	}
	for (i = 0; i < 2; i++) {
		memset(p.bufa + i * 256, 0x70 + i, 80);
		if (post_send1(p.a, 70 + i, p.bufa + i * 256, 80, p.mra->lkey) ||
		    want_wc(name, p.cqa, 70 + i, IBV_WC_SUCCESS, 10000))
			goto out;
	}
	n = collect(p.cqb, wc, 4, 2, 10000);
	if (n != 2 || wc[0].wr_id != 43 || wc[1].wr_id != 40 ||
	    wc[0].qp_num != p.b->qp_num || wc[1].qp_num != p.b->qp_num ||
	    wc[0].status || wc[1].status ||
	    !bytes_are(p.bufb + 43 * 256, 80, 0x70) ||
	    !bytes_are(p.bufb + 40 * 256, 80, 0x71)) {
		failf(name, "b's CQ: %d completions, wr_ids %llu, %llu; expected 43 then the re-posted 40, on b, with their bytes",
		      n, n > 0 ? (unsigned long long)wc[0].wr_id : 0ULL,
		      n > 1 ? (unsigned long long)wc[1].wr_id : 0ULL);
		goto out;
	}
	if (ibv_poll_cq(cqr, 1, wc) || ibv_poll_cq(cqs, 1, wc)) {
		failf(name, "a completion for b's messages on c's CQs");
		goto out;
	}
	pass(name);
out:
	if (c)
		ibv_destroy_qp(c);
	if (d)
		ibv_destroy_qp(d);
	if (cqs)
		ibv_destroy_cq(cqs);
	if (cqr)
		ibv_destroy_cq(cqr);
	pair_down(&p);
}

/*
 * SRQ resize (10.2.9.3, IB_DEVICE_SRQ_RESIZE) under traffic: receive WQEs
 * posted before the resize are used in order while SENDs are arriving, a
 * size below them is refused, and the larger SRQ holds more than before.
 */
static void t_srq_resize(void)
{
	struct ibv_qp_cap cap = cap_ok;
	struct ibv_srq_attr sa;
	struct ibv_wc wc[64];
	struct pair p;
	char why[128];
	int r, i, got, bad_len = 0;

	cap.max_send_wr = 64;
	pair_srq_fn = srq16;
	r = pair_up_cap("srq_resize", &p, 7, cap);
	pair_srq_fn = NULL;
	if (r)
		goto out;
	if (!(dattr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE))
		failf("srq_resize_advertised", "device_cap_flags lacks SRQ_RESIZE");
	else
		pass("srq_resize_advertised");
	r = post_srq_recvs(&p, pair_srq, 0, 12, 256);
	if (r) {
		failf("srq_resize", "post_srq_recv: %s", errname(r));
		goto out;
	}
	sa = (struct ibv_srq_attr){ .max_wr = 4 };
	r = ibv_modify_srq(pair_srq, &sa, IBV_SRQ_MAX_WR);
	if (r != EINVAL)
		failf("srq_resize_below_posted_einval", "got %s, expected EINVAL (12 WQEs posted)",
		      errname(r));
	else
		pass("srq_resize_below_posted_einval");
	/* 12 SENDs in flight while the SRQ grows */
	for (i = 0; i < 12; i++) {
		memset(p.bufa + i * 256, 0x10 + i, 100 + i);
		r = post_send1(p.a, 500 + i, p.bufa + i * 256, 100 + i, p.mra->lkey);
		if (r) {
			failf("srq_resize", "post_send: %s", errname(r));
			goto out;
		}
	}
	sa = (struct ibv_srq_attr){ .max_wr = 60 };
	r = ibv_modify_srq(pair_srq, &sa, IBV_SRQ_MAX_WR);
	if (r) {
		failf("srq_resize_under_traffic_in_order", "resize to 60: %s", errname(r));
		goto out;
	}
	r = ibv_query_srq(pair_srq, &sa);
	if (r || sa.max_wr < 60) {
		failf("srq_resize_under_traffic_in_order", "query_srq: %s, max_wr %u",
		      errname(r), sa.max_wr);
		goto out;
	}
	/* 40 more than the old SRQ could hold, then 40 SENDs */
	r = post_srq_recvs(&p, pair_srq, 12, 40, 256);
	if (r) {
		failf("srq_resize_under_traffic_in_order", "post_srq_recv of 40 after resize: %s",
		      errname(r));
		goto out;
	}
	for (i = 12; i < 52; i++) {
		memset(p.bufa + (i % 64) * 256, 0x10 + i, 100 + i);
		r = post_send1(p.a, 500 + i, p.bufa + (i % 64) * 256, 100 + i, p.mra->lkey);
		if (r) {
			failf("srq_resize_under_traffic_in_order", "post_send: %s", errname(r));
			goto out;
		}
	}
	got = collect(p.cqb, wc, 64, 52, 20000);
	if (!ids_once(wc, got, 0, 52, why, sizeof(why))) {
		failf("srq_resize_under_traffic_in_order", "%s", why);
		goto out;
	}
	for (i = 0; i < got; i++) {
		int k = (int)wc[i].wr_id;

		if (wc[i].wr_id != (uint64_t)i || wc[i].status != IBV_WC_SUCCESS ||
		    wc[i].byte_len != 100u + k ||
		    (unsigned char)p.bufb[(k % 64) * 256] != 0x10 + k ||
		    (unsigned char)p.bufb[(k % 64) * 256 + 99 + k] != 0x10 + k)
			bad_len++;
	}
	if (bad_len)
		failf("srq_resize_under_traffic_in_order",
		      "%d of 52 receive completions out of order, failed or with wrong bytes",
		      bad_len);
	else
		pass("srq_resize_under_traffic_in_order");
out:
	pair_down(&p);
}

/*
 * librxe (rdma-core 44) posts IBV_WR_ATOMIC_WRITE whatever the device says;
 * sroce does not advertise it: the WQE must complete in error at once,
 * never hang the QP, and never touch the target.
 */
static void t_atomic_write_refused(void)
{
	const char *name = "atomic_write_unadvertised_completes_in_error";
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RC, .cap = cap_ok,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_ATOMIC_WRITE,
	};
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	uint8_t val[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct ibv_qp_ex *qpx;
	struct ibv_qp *qa;
	struct ibv_wc wc;
	struct pair p;
	int r, i;

	if (pair_up(name, &p, 7))
		goto out;
	{
		struct ibv_device_attr_ex ax = {};

		/* IB_UVERBS_DEVICE_ATOMIC_WRITE */
		if (ibv_query_device_ex(ctx, NULL, &ax)) {
			failf(name, "query_device_ex failed");
			goto out;
		}
		if (ax.device_cap_flags_ex & (1ULL << 40)) {
			/* advertised: the atomic_write_* cases must pass instead */
			printf("# %s: skipped, the device advertises atomic write\n",
			       name);
			goto out;
		}
	}
	ia.pd = p.pd;
	ia.send_cq = p.cqa;
	ia.recv_cq = p.cqa;
	qa = ibv_create_qp_ex(ctx, &ia);
	if (!qa) {
		/* a provider that refuses the QP is a clean error too */
		pass(name);
		goto out;
	}
	r = to_init(qa, acc) ?: to_rtr(qa, p.b->qp_num, 0x3000) ?: to_rts(qa, 0x1000, 7);
	if (r) {
		failf(name, "connecting the atomic-write QP: %s", errname(r));
		ibv_destroy_qp(qa);
		goto out;
	}
	qpx = ibv_qp_to_qp_ex(qa);
	ibv_wr_start(qpx);
	qpx->wr_id = 77;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qpx, p.mrb->rkey, (uintptr_t)p.bufb + 64, val);
	r = ibv_wr_complete(qpx);
	if (r) {
		pass(name);	/* refused at post: clean */
		ibv_destroy_qp(qa);
		goto out;
	}
	r = poll1(p.cqa, &wc, 10000);
	if (r != 1)
		failf(name, "no completion within 10 s: the QP hangs");
	else if (wc.wr_id != 77 || wc.status == IBV_WC_SUCCESS)
		failf(name, "got wr_id %llu status %s, expected wr_id 77 in error",
		      (unsigned long long)wc.wr_id, st(wc.status));
	else {
		for (i = 0; i < 8 && (unsigned char)p.bufb[64 + i] == 0xbb; i++)
			;
		if (i < 8)
			failf(name, "the target changed although the WQE failed");
		else
			pass(name);
	}
	ibv_destroy_qp(qa);
out:
	pair_down(&p);
}

/* ---------------------------------------------------------------------- */
/* Memory windows (IBA 10.6.7.2): b's region is the target, a accesses. */

#define MW_ACC_MR (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND)

static int rdma1(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t id,
		 void *buf, uint32_t len, uint32_t lkey, void *raddr,
		 uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

/* Completion (id, status) on cq; with want_op >= 0 also its opcode. */
static int want_wc_op(const char *name, struct ibv_cq *cq, uint64_t id,
		      enum ibv_wc_status status, int want_op, struct ibv_wc *out)
{
	struct ibv_wc wc;
	int r = poll1(cq, &wc, 10000);

	if (r != 1) {
		failf(name, "no completion within 10 s, expected wr_id %llu %s",
		      (unsigned long long)id, st(status));
		return -1;
	}
	if (wc.wr_id != id || wc.status != status ||
	    (want_op >= 0 && wc.status == IBV_WC_SUCCESS &&
	     (int)wc.opcode != want_op)) {
		failf(name, "got wr_id %llu status %s opcode %d, expected wr_id %llu %s opcode %d",
		      (unsigned long long)wc.wr_id, st(wc.status), wc.opcode,
		      (unsigned long long)id, st(status), want_op);
		return -1;
	}
	if (out)
		*out = wc;
	return 0;
}

/* A write/read through rkey, then its completion on a's CQ. */
static int mw_rdma(const char *name, struct pair *p, enum ibv_wr_opcode op,
		   uint64_t id, void *lbuf, uint32_t len, void *raddr,
		   uint32_t rkey, enum ibv_wc_status want)
{
	int r = rdma1(p->a, op, id, lbuf, len, p->mra->lkey, raddr, rkey);

	if (r) {
		failf(name, "post_send: got %s, expected 0", errname(r));
		return -1;
	}
	return want_wc_op(name, p->cqa, id, want, -1, NULL);
}

/*
 * A WRITE of 64 bytes of v from lbuf through rkey to raddr succeeds and v
 * is there; -1 after reporting (what: the message for wrong bytes).
 */
static int write_lands(const char *name, struct pair *p, uint64_t id,
		       char *lbuf, char *raddr, uint32_t rkey, unsigned char v,
		       const char *what)
{
	memset(lbuf, v, 64);
	if (mw_rdma(name, p, IBV_WR_RDMA_WRITE, id, lbuf, 64, raddr, rkey,
		    IBV_WC_SUCCESS))
		return -1;
	if (!bytes_are(raddr, 64, v)) {
		failf(name, "%s", what);
		return -1;
	}
	return 0;
}

/* Type 1 bind (ibv_bind_mw) posted on b; its completion status on b's CQ. */
static int mw_bind1(const char *name, struct pair *p, struct ibv_mw *mw,
		    struct ibv_mr *mr, void *addr, uint64_t len,
		    unsigned int acc, uint64_t id, enum ibv_wc_status want)
{
	struct ibv_mw_bind b = { .wr_id = id, .send_flags = IBV_SEND_SIGNALED };
	int r;

	b.bind_info.mr = mr;
	b.bind_info.addr = (uintptr_t)addr;
	b.bind_info.length = len;
	b.bind_info.mw_access_flags = acc;
	r = ibv_bind_mw(p->b, mw, &b);
	if (r) {
		failf(name, "ibv_bind_mw: got %s, expected 0", errname(r));
		return -1;
	}
	return want_wc_op(name, p->cqb, id, want, IBV_WC_BIND_MW, NULL);
}

/* Type 2 bind WR posted on b (the QP the window is bound to); *rkey: new key. */
static int mw_bind2(const char *name, struct pair *p, struct ibv_mw *mw,
		    struct ibv_mr *mr, void *addr, uint64_t len,
		    unsigned int acc, uint64_t id, enum ibv_wc_status want,
		    uint32_t *rkey)
{
	struct ibv_send_wr wr = { .wr_id = id, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	int r;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = acc;
	r = ibv_post_send(p->b, &wr, &bad);
	if (r) {
		failf(name, "post_send BIND_MW: got %s, expected 0", errname(r));
		return -1;
	}
	if (rkey)
		*rkey = wr.bind_mw.rkey;
	return want_wc_op(name, p->cqb, id, want, IBV_WC_BIND_MW, NULL);
}

static int local_inv_b(const char *name, struct pair *p, uint32_t rkey,
		       uint64_t id, enum ibv_wc_status want)
{
	struct ibv_send_wr wr = { .wr_id = id, .opcode = IBV_WR_LOCAL_INV,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	int r;

	wr.invalidate_rkey = rkey;
	r = ibv_post_send(p->b, &wr, &bad);
	if (r) {
		failf(name, "post_send LOCAL_INV: got %s, expected 0", errname(r));
		return -1;
	}
	return want_wc_op(name, p->cqb, id, want, IBV_WC_LOCAL_INV, NULL);
}

/* A pair, b's buffer registered again with MW_BIND, and a window of type. */
static int mw_setup(const char *name, struct pair *p, struct ibv_mr **mr,
		    struct ibv_mw **mw, enum ibv_mw_type type)
{
	*mr = NULL;
	*mw = NULL;
	if (pair_up(name, p, 7))
		return -1;
	*mr = ibv_reg_mr(p->pd, p->bufb, BUF, MW_ACC_MR);
	if (!*mr) {
		failf(name, "setup: reg_mr with MW_BIND: %s", strerror(errno));
		return -1;
	}
	*mw = ibv_alloc_mw(p->pd, type);
	if (!*mw) {
		failf(name, "ibv_alloc_mw(type %d): got %s, expected a window",
		      type, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Replace the pair's QPs (both in ERR after a test's error) with a fresh
 * connected pair in the same PD, CQs drained: windows and regions of the
 * PD can then be used again.
 */
static int pair_renew(const char *name, struct pair *p)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ;
	struct ibv_wc wc;
	int rc;

	ibv_destroy_qp(p->a);
	ibv_destroy_qp(p->b);
	while (ibv_poll_cq(p->cqa, 1, &wc) > 0)
		;
	while (ibv_poll_cq(p->cqb, 1, &wc) > 0)
		;
	p->a = mk_qp(p->pd, p->cqa, cap_ok, NULL);
	p->b = mk_qp(p->pd, p->cqb, cap_ok, NULL);
	if (!p->a || !p->b) {
		failf(name, "setup: new QPs: %s", strerror(errno));
		return -1;
	}
	rc = to_init(p->a, acc) ?: to_init(p->b, acc) ?:
	     connect_pair(p->a, p->b, 0x3000, 0x4000, 7);
	if (rc)
		failf(name, "setup: connecting the new pair: %s", errname(rc));
	return rc;
}

static void mw_down(struct pair *p, struct ibv_mr *mr, struct ibv_mw *mw)
{
	/* the QPs go first: nothing uses the window afterwards */
	if (p->a)
		ibv_destroy_qp(p->a);
	if (p->b)
		ibv_destroy_qp(p->b);
	p->a = p->b = NULL;
	if (mw)
		ibv_dealloc_mw(mw);
	if (mr)
		ibv_dereg_mr(mr);
	pair_down(p);
}

/* mw_down() of a pair with a second region of a's, @smr, to deregister */
static void mw_down_big(struct pair *p, struct ibv_mr *mr, struct ibv_mw *mw,
			struct ibv_mr *smr)
{
	if (p->a)
		ibv_destroy_qp(p->a);
	p->a = NULL;
	if (smr)
		ibv_dereg_mr(smr);
	mw_down(p, mr, mw);
}

/* query_device advertises memory windows, type 1 and 2B, not 2A (o10-37.2.31). */
static void t_mw_advertised(void)
{
	const char *name = "mw_advertised";

	if (dattr.max_mw <= 0 ||
	    !(dattr.device_cap_flags & IBV_DEVICE_MEM_WINDOW) ||
	    !(dattr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) ||
	    (dattr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2A))
		failf(name, "max_mw %d cap flags 0x%x, expected max_mw > 0, MEM_WINDOW and MEM_WINDOW_TYPE_2B (not 2A)",
		      dattr.max_mw, dattr.device_cap_flags);
	else
		pass(name);
}

/* C10-66.2.1, o10-37.2.28: both window types can be allocated; a key returned. */
static void t_mw_alloc(enum ibv_mw_type type, const char *name)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_mr *mr = NULL;
	struct ibv_mw *mw;
	char *buf = aligned_alloc(4096, 4096);

	if (!pd || !buf) {
		failf(name, "setup: pd: %s", strerror(errno));
		goto out;
	}
	mr = ibv_reg_mr(pd, buf, 4096, MW_ACC_MR);
	mw = ibv_alloc_mw(pd, type);
	if (!mw) {
		failf(name, "ibv_alloc_mw: got %s, expected a window", strerror(errno));
	} else {
		if (mw->type != type || !mw->rkey ||
		    (mr && (mw->rkey >> 8) == (mr->rkey >> 8)))
			failf(name, "got type %d rkey 0x%x (mr key 0x%x), expected type %d and an rkey of its own",
			      mw->type, mw->rkey, mr ? mr->rkey : 0, type);
		else
			pass(name);
		ibv_dealloc_mw(mw);
	}
out:
	if (mr)
		ibv_dereg_mr(mr);
	if (pd)
		ibv_dealloc_pd(pd);
	free(buf);
}

/*
 * C10-61, C10-77, C10-66.2.2: a type 1 window on part of b's region; a
 * WRITEs and READs through its new R_Key, bytes outside stay as they were.
 */
static void t_mw_type1_write_read(void)
{
	const char *name = "mw_bind_type1_write_read";
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;
	uint32_t old;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_1))
		goto out;
	old = mw->rkey;
	if (mw_bind1(name, &p, mw, mr, p.bufb + 4096, 8192,
		     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, 1,
		     IBV_WC_SUCCESS))
		goto out;
	if (mw->rkey == old) {
		failf(name, "rkey unchanged by the bind (0x%x)", old);
		goto out;
	}
	memset(p.bufa, 0x11, 8192);
	if (mw_rdma(name, &p, IBV_WR_RDMA_WRITE, 2, p.bufa, 8192,
		    p.bufb + 4096, mw->rkey, IBV_WC_SUCCESS))
		goto out;
	if (!bytes_are(p.bufb, 4096, 0xbb) ||
	    !bytes_are(p.bufb + 4096, 12288 - 4096, 0x11) ||
	    !bytes_are(p.bufb + 12288, BUF - 12288, 0xbb)) {
		failf(name, "write: wrong target bytes, expected 0x11 in [4096, 12288) only");
		goto out;
	}
	memset(p.bufb + 5000, 0x22, 3000);
	if (mw_rdma(name, &p, IBV_WR_RDMA_READ, 3, p.bufa + 16384, 8192,
		    p.bufb + 4096, mw->rkey, IBV_WC_SUCCESS))
		goto out;
	if (memcmp(p.bufa + 16384, p.bufb + 4096, 8192))
		failf(name, "read: got bytes different from the window's");
	else
		pass(name);
out:
	mw_down(&p, mr, mw);
}

/* C10-77: an access reaching past the window fails, nothing is written. */
static void t_mw_outside(void)
{
	const char *name = "mw_access_outside_window";
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_1) ||
	    mw_bind1(name, &p, mw, mr, p.bufb + 4096, 8192,
		     IBV_ACCESS_REMOTE_WRITE, 1, IBV_WC_SUCCESS))
		goto out;
	memset(p.bufa, 0x33, 64);
	if (mw_rdma(name, &p, IBV_WR_RDMA_WRITE, 2, p.bufa, 16,
		    p.bufb + 12288 - 8, mw->rkey, IBV_WC_REM_ACCESS_ERR))
		goto out;
	if (!bytes_are(p.bufb, BUF, 0xbb))
		failf(name, "target bytes changed by the refused write");
	else
		pass(name);
out:
	mw_down(&p, mr, mw);
}

/* C10-77: a window without remote write refuses a WRITE. */
static void t_mw_not_granted(void)
{
	const char *name = "mw_access_not_granted";
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_1) ||
	    mw_bind1(name, &p, mw, mr, p.bufb, 8192, IBV_ACCESS_REMOTE_READ,
		     1, IBV_WC_SUCCESS))
		goto out;
	memset(p.bufa, 0x44, 64);
	if (mw_rdma(name, &p, IBV_WR_RDMA_WRITE, 2, p.bufa, 64, p.bufb + 64,
		    mw->rkey, IBV_WC_REM_ACCESS_ERR))
		goto out;
	if (!bytes_are(p.bufb, BUF, 0xbb))
		failf(name, "target bytes changed by the refused write");
	else
		pass(name);
out:
	mw_down(&p, mr, mw);
}

/* C10-73: a region without MW_BIND access cannot take a window. */
static void t_mw_no_bind_access(void)
{
	const char *name = "mw_bind_mr_without_bind_access";
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_1))
		goto out;
	/* p.mrb has no IBV_ACCESS_MW_BIND */
	if (!mw_bind1(name, &p, mw, p.mrb, p.bufb, 4096,
		      IBV_ACCESS_REMOTE_READ, 1, IBV_WC_MW_BIND_ERR))
		pass(name);
out:
	mw_down(&p, mr, mw);
}

/* C10-66.2.2: after a rebind the previous R_Key no longer works. */
static void t_mw_rebind_old_key(void)
{
	const char *name = "mw_type1_rebind_old_rkey_fails";
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;
	uint32_t old;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_1) ||
	    mw_bind1(name, &p, mw, mr, p.bufb, 4096, IBV_ACCESS_REMOTE_WRITE,
		     1, IBV_WC_SUCCESS))
		goto out;
	old = mw->rkey;
	if (mw_bind1(name, &p, mw, mr, p.bufb, 4096, IBV_ACCESS_REMOTE_WRITE,
		     2, IBV_WC_SUCCESS))
		goto out;
	memset(p.bufa, 0x55, 64);
	if (mw_rdma(name, &p, IBV_WR_RDMA_WRITE, 3, p.bufa, 64, p.bufb,
		    old, IBV_WC_REM_ACCESS_ERR))
		goto out;
	if (!bytes_are(p.bufb, BUF, 0xbb))
		failf(name, "target bytes changed through the old rkey");
	else
		pass(name);
out:
	mw_down(&p, mr, mw);
}

/* o10-37.2.17 (by analogy): a region with a bound window stays registered. */
static void t_mw_dereg_busy(void)
{
	const char *name = "mw_dereg_mr_bound_ebusy";
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;
	int r;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_1) ||
	    mw_bind1(name, &p, mw, mr, p.bufb, 4096, IBV_ACCESS_REMOTE_READ,
		     1, IBV_WC_SUCCESS))
		goto out;
	r = ibv_dereg_mr(mr);
	if (r != EBUSY) {
		failf(name, "dereg_mr while bound: got %s, expected EBUSY", errname(r));
		if (!r)
			mr = NULL;
		goto out;
	}
	r = ibv_dealloc_mw(mw);
	mw = NULL;
	if (r) {
		failf(name, "dealloc_mw: got %s, expected 0", errname(r));
		goto out;
	}
	r = ibv_dereg_mr(mr);
	if (r) {
		failf(name, "dereg_mr after dealloc_mw: got %s, expected 0", errname(r));
		goto out;
	}
	mr = NULL;
	pass(name);
out:
	mw_down(&p, mr, mw);
}

/* o10-37.2.30, o10-37.2.33, o10-37.2.43: a type 2B window bound by a WR on b. */
static void t_mw_type2_write(void)
{
	const char *name = "mw_type2_bind_by_wr_and_write";
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;
	uint32_t rkey;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_2) ||
	    mw_bind2(name, &p, mw, mr, p.bufb, 4096,
		     IBV_ACCESS_REMOTE_WRITE, 1, IBV_WC_SUCCESS, &rkey))
		goto out;
	memset(p.bufa, 0x66, 64);
	if (mw_rdma(name, &p, IBV_WR_RDMA_WRITE, 2, p.bufa, 64, p.bufb + 100,
		    rkey, IBV_WC_SUCCESS))
		goto out;
	if (!bytes_are(p.bufb, 100, 0xbb) ||
	    !bytes_are(p.bufb + 100, 164 - 100, 0x66) ||
	    !bytes_are(p.bufb + 164, BUF - 164, 0xbb))
		failf(name, "wrong target bytes, expected 64 bytes of 0x66 at 100");
	else
		pass(name);
out:
	mw_down(&p, mr, mw);
}

/*
 * C10-89: bind on UC too.  A UC QP b binds a type 1 window (ibv_bind_mw)
 * and a type 2B one (a BIND_MW WR) over its buffer; a UC WRITE through
 * each key lands in its window, and one past the type 2 window's end is
 * dropped (UC has no NAK) and leaves the memory as it was.
 */
static void t_mw_uc_bind(void)
{
	const char *name = "mw_bind_type1_and_type2_on_uc";
	struct ibv_mw *mw1 = NULL, *mw2 = NULL;
	struct ibv_mr *mr = NULL;
	uint32_t rkey2;
	struct pair p = {};

	if (uc_pair_up(name, &p))
		goto out;
	mr = ibv_reg_mr(p.pd, p.bufb, BUF, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_MW_BIND);
	mw1 = mr ? ibv_alloc_mw(p.pd, IBV_MW_TYPE_1) : NULL;
	mw2 = mw1 ? ibv_alloc_mw(p.pd, IBV_MW_TYPE_2) : NULL;
	if (!mw2) {
		failf(name, "setup: MR with MW_BIND and two windows: %s", strerror(errno));
		goto out;
	}
	if (mw_bind1(name, &p, mw1, mr, p.bufb, 4096, IBV_ACCESS_REMOTE_WRITE,
		     1, IBV_WC_SUCCESS) ||
	    mw_bind2(name, &p, mw2, mr, p.bufb + 8192, 4096,
		     IBV_ACCESS_REMOTE_WRITE, 2, IBV_WC_SUCCESS, &rkey2))
		goto out;
	memset(p.bufa, 0x71, 64);
	memset(p.bufa + 64, 0x72, 64);
	if (mw_rdma(name, &p, IBV_WR_RDMA_WRITE, 3, p.bufa, 64, p.bufb + 100,
		    mw1->rkey, IBV_WC_SUCCESS) ||
	    mw_rdma(name, &p, IBV_WR_RDMA_WRITE, 4, p.bufa + 64, 64,
		    p.bufb + 8192 + 200, rkey2, IBV_WC_SUCCESS) ||
	    mw_rdma(name, &p, IBV_WR_RDMA_WRITE, 5, p.bufa + 64, 64,
		    p.bufb + 8192 + 4096 - 32, rkey2, IBV_WC_SUCCESS) ||
	    uc_sync(name, &p, 6))
		goto out;
	if (qp_state(p.b) != IBV_QPS_RTS) {
		failf(name, "b in %s after the WRITE past the window, expected RTS",
		      qps(qp_state(p.b)));
		goto out;
	}
	if (!bytes_are(p.bufb, 100, 0xbb) ||
	    !bytes_are(p.bufb + 100, 64, 0x71) ||
	    !bytes_are(p.bufb + 164, 8192 + 200 - 164, 0xbb) ||
	    !bytes_are(p.bufb + 8192 + 200, 64, 0x72) ||
	    !bytes_are(p.bufb + 8192 + 264, BUF - 8192 - 264, 0xbb))
		failf(name, "wrong target bytes: expected 0x71 at 100 and 0x72 at 8392, 64 each, nothing past the window");
	else
		pass(name);
out:
	if (mw1)
		ibv_dealloc_mw(mw1);
	mw_down(&p, mr, mw2);
}

/*
 * o10-37.2.32: a type 2 window's key keeps the index the CI gave it; a
 * bind WR may choose only its low 8 bits.  A bind WR of one window whose
 * new key has the index of a second window completes MW_BIND_ERR and ends
 * the QP; neither window was bound by it, and each binds by its own WR
 * after.
 */
static void t_mw_type2_other_index(void)
{
	const char *name = "mw_type2_bind_other_index_refused";
	struct ibv_send_wr wr = { .wr_id = 1, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_mw *mw2 = NULL;
	uint32_t bad_key, k1, k2;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;
	int r;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_2))
		goto out;
	mw2 = ibv_alloc_mw(p.pd, IBV_MW_TYPE_2);
	if (!mw2) {
		failf(name, "setup: a second window: %s", strerror(errno));
		goto out;
	}
	bad_key = (mw2->rkey & ~0xffu) | (ibv_inc_rkey(mw->rkey) & 0xff);
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = bad_key;
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)p.bufb;
	wr.bind_mw.bind_info.length = 4096;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	r = ibv_post_send(p.b, &wr, &bad);
	if (r) {
		failf(name, "post_send BIND_MW: got %s, expected 0 and an error completion",
		      errname(r));
		goto out;
	}
	if (want_wc_op(name, p.cqb, 1, IBV_WC_MW_BIND_ERR, IBV_WC_BIND_MW,
		       NULL))
		goto out;
	if (qp_state(p.b) != IBV_QPS_ERR) {
		failf(name, "b in %s after the failed bind, expected ERR",
		      qps(qp_state(p.b)));
		goto out;
	}
	/* both windows still FREE: each binds by its own WR, and works */
	if (pair_renew(name, &p) ||
	    mw_bind2(name, &p, mw2, mr, p.bufb + 8192, 4096,
		     IBV_ACCESS_REMOTE_WRITE, 2, IBV_WC_SUCCESS, &k2) ||
	    mw_bind2(name, &p, mw, mr, p.bufb, 4096, IBV_ACCESS_REMOTE_WRITE,
		     3, IBV_WC_SUCCESS, &k1) ||
	    write_lands(name, &p, 4, p.bufa, p.bufb + 8192 + 64, k2, 0x67,
			"a WRITE through the second window did not land") ||
	    write_lands(name, &p, 5, p.bufa + 128, p.bufb + 64, k1, 0x68,
			"a WRITE through the first window did not land"))
		goto out;
	pass(name);
out:
	if (mw2)
		ibv_dealloc_mw(mw2);
	mw_down(&p, mr, mw);
}

/*
 * o10-37.2.13: only a fast-registered region may be invalidated; a LOCAL_INV
 * of a region from ibv_reg_mr completes LOC_QP_OP_ERR and leaves it valid.
 */
static void t_local_inv_reg_mr(void)
{
	const char *name = "local_inv_of_reg_mr_refused";
	struct pair p;

	if (pair_up(name, &p, 7))
		goto out;
	if (local_inv_b(name, &p, p.mrb->rkey, 1, IBV_WC_LOC_QP_OP_ERR))
		goto out;
	/* refused, and left as it was: a WRITE through its R_Key lands */
	if (pair_renew(name, &p) ||
	    write_lands(name, &p, 2, p.bufa, p.bufb + 512, p.mrb->rkey, 0x3e,
			"a WRITE through the region's R_Key did not land after the refused LOCAL_INV"))
		goto out;
	pass(name);
out:
	pair_down(&p);
}

/*
 * o10-37.2.35: a type 2 window cannot be bound through the type 1 verb:
 * ibv_bind_mw refuses it at once, and the window stays unbound.
 */
static void t_mw_type2_bind_verb(void)
{
	const char *name = "mw_type2_ibv_bind_mw_refused";
	struct ibv_mw_bind b = { .wr_id = 1, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;
	int r;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_2))
		goto out;
	b.bind_info.mr = mr;
	b.bind_info.addr = (uintptr_t)p.bufb;
	b.bind_info.length = 4096;
	b.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	r = ibv_bind_mw(p.b, mw, &b);
	if (r != EINVAL) {
		failf(name, "ibv_bind_mw of a type 2 window: got %s, expected EINVAL",
		      errname(r));
		goto out;
	}
	if (poll1(p.cqb, &wc, 200) == 1) {
		failf(name, "a completion for the refused bind: wr_id %llu %s",
		      (unsigned long long)wc.wr_id, st(wc.status));
		goto out;
	}
	/* b is still in RTS, and the window binds by a WR as it should */
	if (mw_bind2(name, &p, mw, mr, p.bufb, 4096, IBV_ACCESS_REMOTE_WRITE,
		     2, IBV_WC_SUCCESS, NULL))
		goto out;
	pass(name);
out:
	mw_down(&p, mr, mw);
}

/* /proc/self/status VmPin: pages pinned by this process (ib_umem). */
static long vm_pin_kb(void)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmPin:", 6)) {
			v = strtol(line + 6, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/*
 * C10-45: a registration succeeds whole or fails whole.  A range of 64
 * pages with page 48 unmapped fails (EFAULT) once the 48 before it were
 * pinned: afterwards none stays pinned (VmPin) and nothing holds the PD;
 * the 48 pages alone register and pin 192 kB, and deregistration frees it.
 */
static void t_reg_mr_hole(void)
{
	const char *name = "reg_mr_hole_fails_whole";
	const size_t pg = 4096, n = 64, hole = 48;
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	long pin0, pin1, pin2;
	struct ibv_mr *mr;
	char *buf;
	int r;

	buf = mmap(NULL, n * pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!pd || buf == MAP_FAILED) {
		failf(name, "setup: %s", strerror(errno));
		if (pd)
			ibv_dealloc_pd(pd);
		return;
	}
	memset(buf, 0x31, n * pg);
	munmap(buf + hole * pg, pg);
	pin0 = vm_pin_kb();
	errno = 0;
	mr = ibv_reg_mr(pd, buf, n * pg, acc);
	pin1 = vm_pin_kb();
	if (mr) {
		failf(name, "a range with an unmapped page registered (lkey %#x)",
		      mr->lkey);
		ibv_dereg_mr(mr);
		goto out;
	}
	if (errno != EFAULT) {
		failf(name, "reg_mr over the hole: %s, expected EFAULT",
		      strerror(errno));
		goto out;
	}
	if (pin0 < 0 || pin1 != pin0) {
		failf(name, "VmPin %ld -> %ld kB across the failed registration: pages left pinned",
		      pin0, pin1);
		goto out;
	}
	mr = ibv_reg_mr(pd, buf, hole * pg, acc);
	pin2 = vm_pin_kb();
	if (!mr) {
		failf(name, "reg_mr of the %zu pages before the hole: %s", hole,
		      strerror(errno));
		goto out;
	}
	r = ibv_dereg_mr(mr);
	if (pin2 - pin0 != (long)(hole * pg / 1024) || r ||
	    vm_pin_kb() != pin0) {
		failf(name, "VmPin %ld kB, %ld registered, %ld after dereg (%s): want +%zu, then back",
		      pin0, pin2, vm_pin_kb(), errname(r), hole * pg / 1024);
		goto out;
	}
	r = ibv_dealloc_pd(pd);
	pd = NULL;
	if (r) {
		failf(name, "dealloc_pd after the registrations: %s", errname(r));
		goto out;
	}
	pass(name);
out:
	if (pd)
		ibv_dealloc_pd(pd);
	munmap(buf, hole * pg);
	munmap(buf + (hole + 1) * pg, (n - hole - 1) * pg);
}

/*
 * C10-45 where the failure is the driver's own, after the pages were
 * pinned: one page registered over and over until the device has no MR
 * left (max_mr, less the few ib_core holds).  A registration it refuses
 * leaves VmPin as it was (the driver released its pin) and takes no slot:
 * once one MR is deregistered exactly one more registers.  As root only:
 * otherwise RLIMIT_MEMLOCK refuses first, before anything is pinned.
 */
static int reg_refused(const char *name, struct ibv_pd *pd, void *page,
		       const char *when)
{
	long pin0 = vm_pin_kb(), pin1;
	struct ibv_mr *mr;
	int e;

	errno = 0;
	mr = ibv_reg_mr(pd, page, 4096, IBV_ACCESS_LOCAL_WRITE);
	e = errno;
	pin1 = vm_pin_kb();
	if (mr) {
		failf(name, "%s: a registration past max_mr succeeded", when);
		ibv_dereg_mr(mr);
		return -1;
	}
	if (e != ENOMEM) {
		failf(name, "%s: the refused registration: %s, expected ENOMEM",
		      when, strerror(e));
		return -1;
	}
	if (pin0 < 0 || pin1 != pin0) {
		failf(name, "%s: VmPin %ld -> %ld kB across the refused registration: its pin was kept",
		      when, pin0, pin1);
		return -1;
	}
	return 0;
}

static void t_reg_mr_limit(void)
{
	const char *name = "reg_mr_past_max_mr_unpins";
	struct ibv_device_attr da;
	struct ibv_mr **mrs = NULL;
	struct ibv_pd *pd = NULL;
	int i, n = 0, cap;
	char *page = NULL;

	if (geteuid() != 0) {
		printf("SKIP %s: not root (RLIMIT_MEMLOCK would refuse first)\n",
		       name);
		return;
	}
	pd = ibv_alloc_pd(ctx);
	page = aligned_alloc(4096, 4096);
	if (!pd || !page || ibv_query_device(ctx, &da)) {
		failf(name, "setup: %s", strerror(errno));
		goto out;
	}
	cap = da.max_mr + 16;
	mrs = calloc(cap, sizeof(*mrs));
	if (!mrs) {
		failf(name, "setup: no memory for %d MRs", cap);
		goto out;
	}
	memset(page, 0x42, 4096);
	for (n = 0; n < cap; n++) {
		mrs[n] = ibv_reg_mr(pd, page, 4096, IBV_ACCESS_LOCAL_WRITE);
		if (!mrs[n])
			break;
	}
	if (n > da.max_mr || n < da.max_mr - 64) {
		failf(name, "%d registrations of one page succeeded, max_mr is %d",
		      n, da.max_mr);
		goto out;
	}
	if (reg_refused(name, pd, page, "at the limit"))
		goto out;
	ibv_dereg_mr(mrs[n - 1]);
	mrs[n - 1] = ibv_reg_mr(pd, page, 4096, IBV_ACCESS_LOCAL_WRITE);
	if (!mrs[n - 1]) {
		failf(name, "after one of %d MRs was deregistered, registering again failed: %s",
		      n, strerror(errno));
		goto out;
	}
	if (reg_refused(name, pd, page, "one freed, one taken"))
		goto out;
	printf("# %s: %d registrations, then ENOMEM with VmPin unchanged\n",
	       name, n);
	pass(name);
out:
	for (i = 0; i < n; i++)
		if (mrs[i])
			ibv_dereg_mr(mrs[i]);
	free(mrs);
	if (pd)
		ibv_dealloc_pd(pd);
	free(page);
}

/*
 * C10-52.2.1: a registered region's pages stay in memory while it is
 * registered.  b's 16 pages of 0x5c are registered, then dropped from
 * the process (MADV_DONTNEED: b reads zeros); a READ through the R_Key
 * still returns 0x5c from the pinned pages.
 */
static void t_reg_mr_pages_pinned(void)
{
	const char *name = "reg_mr_pages_stay_pinned";
	const size_t len = 16 * 4096;
	struct ibv_mr *mr = NULL;
	struct pair p;
	char *reg;

	reg = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (reg == MAP_FAILED) {
		failf(name, "setup: mmap: %s", strerror(errno));
		return;
	}
	if (pair_up(name, &p, 7))
		goto out;
	memset(reg, 0x5c, len);
	mr = ibv_reg_mr(p.pd, reg, len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ);
	if (!mr) {
		failf(name, "setup: reg_mr: %s", strerror(errno));
		goto out;
	}
	if (madvise(reg, len, MADV_DONTNEED) || !bytes_are(reg, len, 0)) {
		failf(name, "setup: MADV_DONTNEED did not drop the process's pages");
		goto out;
	}
	memset(p.bufa, 0, len);
	if (mw_rdma(name, &p, IBV_WR_RDMA_READ, 1, p.bufa, len, reg, mr->rkey,
		    IBV_WC_SUCCESS))
		goto out;
	if (!bytes_are(p.bufa, len, 0x5c)) {
		failf(name, "the READ returned other bytes than the 0x5c registered: the region's pages were not kept");
		goto out;
	}
	pass(name);
out:
	if (mr)
		ibv_dereg_mr(mr);
	pair_down(&p);
	munmap(reg, len);
}

/* o10-37.2.40: a type 2 window cannot be bound with length 0. */
static void t_mw_type2_zero_len(void)
{
	const char *name = "mw_type2_bind_zero_length_refused";
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_2))
		goto out;
	if (!mw_bind2(name, &p, mw, mr, p.bufb, 0, IBV_ACCESS_REMOTE_WRITE,
		      1, IBV_WC_MW_BIND_ERR, NULL))
		pass(name);
out:
	mw_down(&p, mr, mw);
}

/* Zero-based windows are not supported (o10-36.2.2 is optional): refused. */
static void t_mw_type2_zero_based(void)
{
	const char *name = "mw_type2_zero_based_refused";
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_2))
		goto out;
	if (!mw_bind2(name, &p, mw, mr, p.bufb, 4096,
		      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED, 1,
		      IBV_WC_MW_BIND_ERR, NULL))
		pass(name);
out:
	mw_down(&p, mr, mw);
}

/* o10-37.2.30: LOCAL_INV by the bound QP frees the window; its key then fails. */
static void t_mw_type2_local_inv(void)
{
	const char *name = "mw_type2_local_inv_then_access";
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;
	uint32_t rkey;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_2) ||
	    mw_bind2(name, &p, mw, mr, p.bufb, 4096,
		     IBV_ACCESS_REMOTE_WRITE, 1, IBV_WC_SUCCESS, &rkey) ||
	    local_inv_b(name, &p, rkey, 2, IBV_WC_SUCCESS))
		goto out;
	memset(p.bufa, 0x77, 64);
	if (mw_rdma(name, &p, IBV_WR_RDMA_WRITE, 3, p.bufa, 64, p.bufb,
		    rkey, IBV_WC_REM_ACCESS_ERR))
		goto out;
	if (!bytes_are(p.bufb, BUF, 0xbb))
		failf(name, "target bytes changed through the invalidated rkey");
	else
		pass(name);
out:
	mw_down(&p, mr, mw);
}

/* o10-37.2.44: SEND with Invalidate to the bound QP frees the window. */
static void t_mw_type2_send_inv(void)
{
	const char *name = "mw_type2_send_with_inv";
	struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_sge sge;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	struct pair p;
	uint32_t rkey;
	int r;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_2) ||
	    mw_bind2(name, &p, mw, mr, p.bufb, 4096,
		     IBV_ACCESS_REMOTE_WRITE, 1, IBV_WC_SUCCESS, &rkey))
		goto out;
	r = post_recv1(p.b, 10, p.bufb + 32768, 256, p.mrb->lkey);
	if (r) {
		failf(name, "post_recv: got %s, expected 0", errname(r));
		goto out;
	}
	memset(p.bufa, 0x12, 16);
	sge = (struct ibv_sge){ (uintptr_t)p.bufa, 16, p.mra->lkey };
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.invalidate_rkey = rkey;
	r = ibv_post_send(p.a, &wr, &bad);
	if (r) {
		failf(name, "post_send SEND_WITH_INV: got %s, expected 0", errname(r));
		goto out;
	}
	if (want_wc_op(name, p.cqa, 2, IBV_WC_SUCCESS, IBV_WC_SEND, NULL) ||
	    want_wc_op(name, p.cqb, 10, IBV_WC_SUCCESS, IBV_WC_RECV, &wc))
		goto out;
	if (!(wc.wc_flags & IBV_WC_WITH_INV) || wc.invalidated_rkey != rkey) {
		failf(name, "recv wc_flags 0x%x rkey 0x%x, expected WITH_INV and 0x%x",
		      wc.wc_flags, wc.invalidated_rkey, rkey);
		goto out;
	}
	if (mw_rdma(name, &p, IBV_WR_RDMA_WRITE, 3, p.bufa, 64, p.bufb,
		    rkey, IBV_WC_REM_ACCESS_ERR))
		goto out;
	if (!bytes_are(p.bufb, 32768, 0xbb))
		failf(name, "target bytes changed through the invalidated rkey");
	else
		pass(name);
out:
	mw_down(&p, mr, mw);
}

/* o10-37.2.26: LOCAL_INV of a type 1 window completes in error. */
static void t_mw_type1_local_inv(void)
{
	const char *name = "mw_type1_invalidate_refused";
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	struct pair p;
	int r;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_1) ||
	    mw_bind1(name, &p, mw, mr, p.bufb, 4096, IBV_ACCESS_REMOTE_WRITE,
		     1, IBV_WC_SUCCESS))
		goto out;
	{
		struct ibv_send_wr w = { .wr_id = 2, .opcode = IBV_WR_LOCAL_INV,
					 .send_flags = IBV_SEND_SIGNALED }, *bad;

		w.invalidate_rkey = mw->rkey;
		r = ibv_post_send(p.b, &w, &bad);
	}
	if (r) {
		failf(name, "post_send LOCAL_INV: got %s, expected 0", errname(r));
		goto out;
	}
	r = poll1(p.cqb, &wc, 10000);
	if (r != 1 || wc.wr_id != 2 || wc.status == IBV_WC_SUCCESS) {
		failf(name, "LOCAL_INV of a type 1 window: got %s, expected an error completion",
		      r == 1 ? st(wc.status) : "no completion");
		goto out;
	}
	pass(name);
out:
	mw_down(&p, mr, mw);
}

/*
 * o10-37.2.27: SEND with Invalidate naming a type 1 window fails (both
 * QPs end in Error) and leaves the window as it was: bound, its R_Key
 * still writes through it from a new pair of QPs of the PD.
 */
static void t_mw_type1_send_inv(void)
{
	const char *name = "mw_type1_send_with_inv_refused";
	struct ibv_send_wr wr = { .wr_id = 2, .opcode = IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_sge sge;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;
	int r;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_1) ||
	    mw_bind1(name, &p, mw, mr, p.bufb, 4096, IBV_ACCESS_REMOTE_WRITE,
		     1, IBV_WC_SUCCESS))
		goto out;
	r = post_recv1(p.b, 10, p.bufb + 32768, 256, p.mrb->lkey);
	if (r) {
		failf(name, "post_recv: got %s, expected 0", errname(r));
		goto out;
	}
	sge = (struct ibv_sge){ (uintptr_t)p.bufa, 16, p.mra->lkey };
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.invalidate_rkey = mw->rkey;
	r = ibv_post_send(p.a, &wr, &bad);
	if (r) {
		failf(name, "post_send SEND_WITH_INV: got %s, expected 0", errname(r));
		goto out;
	}
	if (want_wc_op(name, p.cqa, 2, IBV_WC_REM_INV_REQ_ERR, -1, NULL) ||
	    pair_renew(name, &p))
		goto out;
	if (!write_lands(name, &p, 3, p.bufa, p.bufb + 128, mw->rkey, 0x4d,
			 "the write through the window after the refusal did not land"))
		pass(name);
out:
	mw_down(&p, mr, mw);
}

/* C10-62, C10-74: a remote-write window needs a region with local write. */
static void t_mw_write_needs_lw(void)
{
	const char *name = "mw_bind_write_needs_local_write";
	struct ibv_mr *mr, *ro = NULL;
	struct ibv_mw *mw;
	struct pair p;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_1))
		goto out;
	ro = ibv_reg_mr(p.pd, p.bufb, BUF,
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND);
	if (!ro) {
		failf(name, "setup: reg_mr without LOCAL_WRITE: %s", strerror(errno));
		goto out;
	}
	if (!mw_bind1(name, &p, mw, ro, p.bufb, 4096, IBV_ACCESS_REMOTE_WRITE,
		      1, IBV_WC_MW_BIND_ERR))
		pass(name);
out:
	if (ro)
		ibv_dereg_mr(ro);
	mw_down(&p, mr, mw);
}

/* C10-75: the window must lie inside the region. */
static void t_mw_bind_outside_mr(void)
{
	const char *name = "mw_bind_outside_mr_refused";
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_1))
		goto out;
	if (!mw_bind1(name, &p, mw, mr, p.bufb + BUF - 4096, 8192,
		      IBV_ACCESS_REMOTE_READ, 1, IBV_WC_MW_BIND_ERR))
		pass(name);
out:
	mw_down(&p, mr, mw);
}

/*
 * C10-75: the region under a window must be of the window's PD.  A type 2
 * window of the pair's PD, bound by a WR on b to a region of another PD,
 * completes MW_BIND_ERR; the same window then binds to a region of its
 * own PD.
 */
static void t_mw_bind_mr_other_pd(void)
{
	const char *name = "mw_bind_to_mr_of_other_pd_refused";
	struct ibv_mr *mr2 = NULL;
	struct ibv_pd *pd2;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;

	pd2 = ibv_alloc_pd(ctx);
	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_2))
		goto out;
	mr2 = pd2 ? ibv_reg_mr(pd2, p.bufb, BUF, MW_ACC_MR) : NULL;
	if (!mr2) {
		failf(name, "setup: a region of another PD: %s", strerror(errno));
		goto out;
	}
	if (mw_bind2(name, &p, mw, mr2, p.bufb, 4096, IBV_ACCESS_REMOTE_WRITE,
		     1, IBV_WC_MW_BIND_ERR, NULL))
		goto out;
	/* the failed bind ended b; a fresh pair binds the window as it is */
	if (pair_renew(name, &p) ||
	    mw_bind2(name, &p, mw, mr, p.bufb, 4096, IBV_ACCESS_REMOTE_WRITE,
		     2, IBV_WC_SUCCESS, NULL))
		goto out;
	pass(name);
out:
	if (mr2)
		ibv_dereg_mr(mr2);
	if (pd2)
		ibv_dealloc_pd(pd2);
	mw_down(&p, mr, mw);
}

/* C10-72, o10-37.2.30: the window and the binding QP share a PD. */
static void t_mw_bind_other_pd(void)
{
	const char *name = "mw_bind_other_pd_refused";
	struct ibv_mw *other = NULL;
	struct ibv_pd *pd2;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;

	pd2 = ibv_alloc_pd(ctx);
	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_1))
		goto out;
	/* a type 2 bind WR: libibverbs' ibv_bind_mw checks type 1 PDs itself */
	other = pd2 ? ibv_alloc_mw(pd2, IBV_MW_TYPE_2) : NULL;
	if (!other) {
		failf(name, "setup: alloc_mw on a second PD: %s", strerror(errno));
		goto out;
	}
	if (!mw_bind2(name, &p, other, mr, p.bufb, 4096,
		      IBV_ACCESS_REMOTE_READ, 1, IBV_WC_MW_BIND_ERR, NULL))
		pass(name);
out:
	mw_down(&p, mr, mw);
	if (other)
		ibv_dealloc_mw(other);
	if (pd2)
		ibv_dealloc_pd(pd2);
}

/* C10-66.2.4: a zero-length type 1 bind ends remote access through the window. */
static void t_mw_type1_zero_len(void)
{
	const char *name = "mw_type1_zero_length_unbinds";
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_1) ||
	    mw_bind1(name, &p, mw, mr, p.bufb, 4096, IBV_ACCESS_REMOTE_WRITE,
		     1, IBV_WC_SUCCESS) ||
	    mw_bind1(name, &p, mw, mr, p.bufb, 0, IBV_ACCESS_REMOTE_WRITE,
		     2, IBV_WC_SUCCESS))
		goto out;
	memset(p.bufa, 0x14, 64);
	if (mw_rdma(name, &p, IBV_WR_RDMA_WRITE, 3, p.bufa, 64, p.bufb,
		    mw->rkey, IBV_WC_REM_ACCESS_ERR))
		goto out;
	if (!bytes_are(p.bufb, BUF, 0xbb))
		failf(name, "target bytes changed through an unbound window");
	else
		pass(name);
out:
	mw_down(&p, mr, mw);
}

/*
 * Two more connected QPs, c -> d, in the pair's PD, each with its own CQ:
 * QPs of the PD other than the one a type 2B window is bound to.
 */
struct xqp {
	struct ibv_cq *cqc, *cqd;
	struct ibv_qp *c, *d;
};

static int xqp_up(const char *name, struct ibv_pd *pd, struct xqp *x)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ;
	int rc;

	x->cqc = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	x->cqd = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	x->c = x->cqc ? mk_qp(pd, x->cqc, cap_ok, NULL) : NULL;
	x->d = x->cqd ? mk_qp(pd, x->cqd, cap_ok, NULL) : NULL;
	if (!x->c || !x->d) {
		failf(name, "setup: second pair of the PD: %s", strerror(errno));
		return -1;
	}
	rc = to_init(x->c, acc) ?: to_init(x->d, acc) ?:
	     connect_pair(x->c, x->d, 0x5000, 0x6000, 7);
	if (rc)
		failf(name, "setup: connecting the second pair: %s", errname(rc));
	return rc;
}

static void xqp_down(struct xqp *x)
{
	if (x->c)
		ibv_destroy_qp(x->c);
	if (x->d)
		ibv_destroy_qp(x->d);
	if (x->cqc)
		ibv_destroy_cq(x->cqc);
	if (x->cqd)
		ibv_destroy_cq(x->cqd);
	memset(x, 0, sizeof(*x));
}

/*
 * C10-70: once ibv_dealloc_mw of a bound window returns, a WRITE through
 * its last R_Key completes REM_ACCESS_ERR and writes nothing (the key
 * worked just before).
 */
static void t_mw_dealloc_bound(enum ibv_mw_type type, const char *name)
{
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;
	uint32_t rkey;
	int r;

	if (mw_setup(name, &p, &mr, &mw, type))
		goto out;
	if (type == IBV_MW_TYPE_1) {
		if (mw_bind1(name, &p, mw, mr, p.bufb, 4096,
			     IBV_ACCESS_REMOTE_WRITE, 1, IBV_WC_SUCCESS))
			goto out;
		rkey = mw->rkey;
	} else if (mw_bind2(name, &p, mw, mr, p.bufb, 4096,
			    IBV_ACCESS_REMOTE_WRITE, 1, IBV_WC_SUCCESS, &rkey)) {
		goto out;
	}
	if (write_lands(name, &p, 2, p.bufa, p.bufb + 64, rkey, 0x21,
			"the write before dealloc_mw did not land"))
		goto out;
	memset(p.bufb, 0xbb, BUF);
	r = ibv_dealloc_mw(mw);
	mw = NULL;
	if (r) {
		failf(name, "dealloc_mw of a bound window: got %s, expected 0",
		      errname(r));
		goto out;
	}
	memset(p.bufa, 0x23, 64);
	if (mw_rdma(name, &p, IBV_WR_RDMA_WRITE, 3, p.bufa, 64, p.bufb + 64,
		    rkey, IBV_WC_REM_ACCESS_ERR))
		goto out;
	if (!bytes_are(p.bufb, BUF, 0xbb))
		failf(name, "target bytes changed through a deallocated window");
	else
		pass(name);
out:
	mw_down(&p, mr, mw);
}

/*
 * C10-59, C10-67, C10-69: b takes away the R_Key of a 64 MiB WRITE or READ
 * of a's while it is under way: it deregisters the region, deallocates
 * the window or rebinds it (type 1, over the same range: only the key
 * changes; done when its completion is polled).  If the message's last
 * byte was not yet there when that returned, the WRITE or READ must fail
 * REM_ACCESS_ERR, and nothing may touch the region after it returned: a
 * WRITE changes no byte past the page it had reached (those stay 0xbb)
 * nor any byte before it (refilled with 0xcc), and a READ brings into
 * a's buffer no byte of the 0xcc b writes over the region then (from the
 * page the READ had reached on, first).  A
 * message that finished first proves nothing: then another try, three
 * in all.
 */
#define UT_LEN (64u << 20)

enum ut_kind {
	UT_DEREG_MR, UT_DEREG_MR_READ, UT_DEALLOC_MW1, UT_DEALLOC_MW2,
	UT_REBIND_MW1
};

/* First page of @buf whose first byte is not @v: how far a message got. */
static size_t ut_frontier(volatile unsigned char *buf, unsigned char v)
{
	size_t off;

	for (off = 0; off < UT_LEN && buf[off] == v; off += 4096)
		;
	return off;
}

/* Offset of the first byte of buf[0, n) that is (@is) or is not v, or n. */
static size_t ut_find(const char *buf, size_t n, unsigned char v, int is)
{
	size_t k;

	for (k = 0; k < n; k++)
		if (((unsigned char)buf[k] == v) == !!is)
			break;
	return k;
}

static void t_access_taken_midway(enum ut_kind kind, const char *name)
{
	char *src = aligned_alloc(4096, UT_LEN), *dst = aligned_alloc(4096, UT_LEN);
	int rd = kind == UT_DEREG_MR_READ;
	/* a's buffer for a READ, b's region for a WRITE */
	volatile unsigned char *land = (volatile unsigned char *)(rd ? src : dst);
	struct ibv_mr *smr, *dmr;
	struct ibv_mw *mw;
	struct timespec t0, t;
	struct ibv_wc wc;
	unsigned char last;
	struct pair p;
	size_t front, k;
	uint32_t rkey;
	int try, r;

	if (!src || !dst) {
		failf(name, "setup: no memory for 2 x %u bytes", UT_LEN);
		goto out_mem;
	}
	for (try = 0; try < 3; try++) {
		smr = dmr = NULL;
		mw = NULL;
		if (pair_up(name, &p, 7))
			goto out;
		memset(src, rd ? 0x11 : 0x5a, UT_LEN);
		memset(dst, rd ? 0x5a : 0xbb, UT_LEN);
		smr = ibv_reg_mr(p.pd, src, UT_LEN, IBV_ACCESS_LOCAL_WRITE);
		dmr = ibv_reg_mr(p.pd, dst, UT_LEN, MW_ACC_MR);
		if (!smr || !dmr) {
			failf(name, "setup: reg_mr of %u bytes: %s", UT_LEN,
			      strerror(errno));
			goto out;
		}
		rkey = dmr->rkey;
		if (kind == UT_DEALLOC_MW1 || kind == UT_DEALLOC_MW2 ||
		    kind == UT_REBIND_MW1) {
			mw = ibv_alloc_mw(p.pd, kind == UT_DEALLOC_MW2 ?
					  IBV_MW_TYPE_2 : IBV_MW_TYPE_1);
			if (!mw) {
				failf(name, "setup: alloc_mw: %s", strerror(errno));
				goto out;
			}
			if (kind == UT_DEALLOC_MW2 ?
			    mw_bind2(name, &p, mw, dmr, dst, UT_LEN,
				     IBV_ACCESS_REMOTE_WRITE, 1, IBV_WC_SUCCESS,
				     &rkey) :
			    mw_bind1(name, &p, mw, dmr, dst, UT_LEN,
				     IBV_ACCESS_REMOTE_WRITE, 1, IBV_WC_SUCCESS))
				goto out;
			if (kind != UT_DEALLOC_MW2)
				rkey = mw->rkey;
		}
		r = rdma1(p.a, rd ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE, 2,
			  src, UT_LEN, smr->lkey, dst, rkey);
		if (r) {
			failf(name, "post_send: %s", errname(r));
			goto out;
		}
		/* under way: its first MiB is there */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (land[(1u << 20) - 1] != 0x5a) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec > 10) {
				failf(name, "the first MiB did not land in 10 s");
				goto out;
			}
			usleep(50);
		}
		switch (kind) {
		case UT_DEREG_MR:
		case UT_DEREG_MR_READ:
			r = ibv_dereg_mr(dmr);
			if (!r)
				dmr = NULL;
			break;
		case UT_DEALLOC_MW1:
		case UT_DEALLOC_MW2:
			r = ibv_dealloc_mw(mw);
			if (!r)
				mw = NULL;
			break;
		case UT_REBIND_MW1:
			r = mw_bind1(name, &p, mw, dmr, dst, UT_LEN,
				     IBV_ACCESS_REMOTE_WRITE, 3, IBV_WC_SUCCESS);
			if (r)
				goto out;
			break;
		}
		last = land[UT_LEN - 1];
		front = ut_frontier(land, 0x5a);
		if (rd) {
			/* what is still to be read first */
			memset(dst + front, 0xcc, UT_LEN - front);
			memset(dst, 0xcc, front);
		} else {
			memset(dst, 0xcc, front);
		}
		if (r) {
			failf(name, "taking the R_Key away midway: got %s, expected 0",
			      errname(r));
			goto out;
		}
		if (poll1(p.cqa, &wc, 20000) != 1) {
			failf(name, "no completion of the %s within 20 s",
			      rd ? "READ" : "WRITE");
			goto out;
		}
		if (wc.wr_id == 2 && last == 0x5a &&
		    wc.status == IBV_WC_SUCCESS) {
			printf("# %s: try %d: the message had landed whole, again\n",
			       name, try + 1);
			mw_down_big(&p, dmr, mw, smr);
			continue;
		}
		if (wc.wr_id != 2 || wc.status != IBV_WC_REM_ACCESS_ERR) {
			failf(name, "%s: got wr_id %llu %s, expected 2 %s (its last byte %s when the R_Key went)",
			      rd ? "READ" : "WRITE",
			      (unsigned long long)wc.wr_id, st(wc.status),
			      st(IBV_WC_REM_ACCESS_ERR),
			      last == 0x5a ? "landed" : "had not landed");
			goto out;
		}
		usleep(20000);
		if (rd) {
			k = ut_find(src, UT_LEN, 0xcc, 1);
			if (k < UT_LEN) {
				failf(name, "byte %zu of the READ's buffer came from the region after its R_Key went",
				      k);
				goto out;
			}
		} else {
			k = ut_find(dst, front, 0xcc, 0);
			if (k == front)
				k = front + ut_find(dst + front, UT_LEN - front,
						    0xbb, 0);
			if (k < UT_LEN) {
				failf(name, "byte %zu of the region changed after its R_Key went (it had reached byte %zu)",
				      k, front);
				goto out;
			}
		}
		printf("# %s: the R_Key went with %zu of %u KiB landed\n",
		       name, front >> 10, UT_LEN >> 10);
		pass(name);
		goto out;
	}
	failf(name, "the message landed whole before the R_Key went, 3 times: never caught midway");
	goto out_mem;
out:
	mw_down_big(&p, dmr, mw, smr);
out_mem:
	free(src);
	free(dst);
}

/*
 * C10-66.2.5, o10-37.2.41: three windows on one region, overlapping
 * ranges, independent rights: type 1 W1 on [0, 8192) with remote write
 * only, type 1 W3 on [2048, 6144) and type 2B W2 on [4096, 12288), both
 * remote read only.  A write through W1 lands in the overlap, reads
 * through W2 and W3 return the region's bytes; then, each on new QPs
 * (an error ends both), writes through W2 and W3 and a read through W1
 * fail REM_ACCESS_ERR and change nothing.
 */
static void t_mw_two_windows(void)
{
	const char *name = "mw_windows_overlap_own_rights";
	struct ibv_mw *mw2 = NULL, *mw3 = NULL;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;
	uint32_t rkey2;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_1))
		goto out;
	mw2 = ibv_alloc_mw(p.pd, IBV_MW_TYPE_2);
	mw3 = ibv_alloc_mw(p.pd, IBV_MW_TYPE_1);
	if (!mw2 || !mw3) {
		failf(name, "ibv_alloc_mw: %s", strerror(errno));
		goto out;
	}
	if (mw_bind1(name, &p, mw, mr, p.bufb, 8192, IBV_ACCESS_REMOTE_WRITE,
		     1, IBV_WC_SUCCESS) ||
	    mw_bind2(name, &p, mw2, mr, p.bufb + 4096, 8192,
		     IBV_ACCESS_REMOTE_READ, 2, IBV_WC_SUCCESS, &rkey2) ||
	    mw_bind1(name, &p, mw3, mr, p.bufb + 2048, 4096,
		     IBV_ACCESS_REMOTE_READ, 3, IBV_WC_SUCCESS))
		goto out;
	memset(p.bufa, 0x31, 4096);
	if (mw_rdma(name, &p, IBV_WR_RDMA_WRITE, 4, p.bufa, 4096,
		    p.bufb + 4096, mw->rkey, IBV_WC_SUCCESS))
		goto out;
	if (!bytes_are(p.bufb, 4096, 0xbb) ||
	    !bytes_are(p.bufb + 4096, 4096, 0x31) ||
	    !bytes_are(p.bufb + 8192, BUF - 8192, 0xbb)) {
		failf(name, "write through W1: wrong target bytes, expected 0x31 in [4096, 8192) only");
		goto out;
	}
	if (mw_rdma(name, &p, IBV_WR_RDMA_READ, 5, p.bufa + 16384, 8192,
		    p.bufb + 4096, rkey2, IBV_WC_SUCCESS))
		goto out;
	if (memcmp(p.bufa + 16384, p.bufb + 4096, 8192)) {
		failf(name, "read through W2: bytes differ from the region's");
		goto out;
	}
	if (mw_rdma(name, &p, IBV_WR_RDMA_READ, 6, p.bufa + 32768, 4096,
		    p.bufb + 2048, mw3->rkey, IBV_WC_SUCCESS))
		goto out;
	if (memcmp(p.bufa + 32768, p.bufb + 2048, 4096)) {
		failf(name, "read through W3: bytes differ from the region's");
		goto out;
	}
	memset(p.bufa, 0x33, 64);
	if (mw_rdma(name, &p, IBV_WR_RDMA_WRITE, 7, p.bufa, 64,
		    p.bufb + 4096, rkey2, IBV_WC_REM_ACCESS_ERR))
		goto out;
	if (pair_renew(name, &p) ||
	    mw_rdma(name, &p, IBV_WR_RDMA_WRITE, 8, p.bufa, 64,
		    p.bufb + 2048, mw3->rkey, IBV_WC_REM_ACCESS_ERR))
		goto out;
	if (!bytes_are(p.bufb, 4096, 0xbb) ||
	    !bytes_are(p.bufb + 4096, 4096, 0x31) ||
	    !bytes_are(p.bufb + 8192, BUF - 8192, 0xbb)) {
		failf(name, "target bytes changed by a refused write through a read-only window");
		goto out;
	}
	if (pair_renew(name, &p))
		goto out;
	memset(p.bufa + 49152, 0x5a, 4096);
	if (mw_rdma(name, &p, IBV_WR_RDMA_READ, 9, p.bufa + 49152, 4096,
		    p.bufb + 4096, mw->rkey, IBV_WC_REM_ACCESS_ERR))
		goto out;
	if (!bytes_are(p.bufa + 49152, 4096, 0x5a))
		failf(name, "the refused read through W1 placed bytes");
	else
		pass(name);
out:
	if (mw2)
		ibv_dealloc_mw(mw2);
	if (mw3)
		ibv_dealloc_mw(mw3);
	mw_down(&p, mr, mw);
}

/*
 * C10-76.2.1: a type 1 window of PD 1, accessed by a QP of PD 2 (a second
 * loopback pair, both QPs in PD 2): REM_ACCESS_ERR, nothing written; the
 * same R_Key works from the window's PD.
 */
static void t_mw_type1_other_pd(void)
{
	const char *name = "mw_type1_access_other_pd_refused";
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p, p2;

	memset(&p2, 0, sizeof(p2));
	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_1) ||
	    mw_bind1(name, &p, mw, mr, p.bufb, 4096, IBV_ACCESS_REMOTE_WRITE,
		     1, IBV_WC_SUCCESS))
		goto out;
	memset(p.bufa, 0x41, 64);
	if (mw_rdma(name, &p, IBV_WR_RDMA_WRITE, 2, p.bufa, 64, p.bufb,
		    mw->rkey, IBV_WC_SUCCESS))
		goto out;
	if (pair_up(name, &p2, 7))
		goto out;
	memset(p2.bufa, 0x42, 64);
	if (mw_rdma(name, &p2, IBV_WR_RDMA_WRITE, 3, p2.bufa, 64,
		    p.bufb + 1024, mw->rkey, IBV_WC_REM_ACCESS_ERR))
		goto out;
	if (!bytes_are(p.bufb, 64, 0x41) ||
	    !bytes_are(p.bufb + 64, BUF - 64, 0xbb))
		failf(name, "target bytes changed by the access from another PD");
	else
		pass(name);
out:
	pair_down(&p2);
	mw_down(&p, mr, mw);
}

/*
 * o10-37.2.43, o10-37.2.30: a type 2B window bound through b is accessed
 * by another QP of the PD (c -> d): REM_ACCESS_ERR, nothing written; the
 * window stays valid for b (a -> b writes through it before and after).
 */
static void t_mw_type2_other_qp(void)
{
	const char *name = "mw_type2_access_by_other_qp_refused";
	struct xqp x = { 0 };
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;
	uint32_t rkey;
	int r;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_2) ||
	    mw_bind2(name, &p, mw, mr, p.bufb, 4096, IBV_ACCESS_REMOTE_WRITE,
		     1, IBV_WC_SUCCESS, &rkey))
		goto out;
	memset(p.bufa, 0x43, 64);
	if (mw_rdma(name, &p, IBV_WR_RDMA_WRITE, 2, p.bufa, 64, p.bufb,
		    rkey, IBV_WC_SUCCESS) ||
	    xqp_up(name, p.pd, &x))
		goto out;
	memset(p.bufa + 4096, 0x44, 64);
	r = rdma1(x.c, IBV_WR_RDMA_WRITE, 3, p.bufa + 4096, 64, p.mra->lkey,
		  p.bufb + 1024, rkey);
	if (r) {
		failf(name, "post_send on c: got %s, expected 0", errname(r));
		goto out;
	}
	if (want_wc_op(name, x.cqc, 3, IBV_WC_REM_ACCESS_ERR, -1, NULL))
		goto out;
	if (!bytes_are(p.bufb, 64, 0x43) ||
	    !bytes_are(p.bufb + 64, BUF - 64, 0xbb)) {
		failf(name, "target bytes changed by the access through another QP");
		goto out;
	}
	if (!write_lands(name, &p, 4, p.bufa + 8192, p.bufb + 2048, rkey, 0x45,
			 "the write through the bound QP after the refusal did not land"))
		pass(name);
out:
	xqp_down(&x);
	mw_down(&p, mr, mw);
}

/*
 * o10-37.2.39, o10-37.2.44, o10-37.2.30: a SEND with Invalidate naming a
 * valid type 2B window bound to b, received by another QP of the PD (d):
 * the sender completes REM_INV_REQ_ERR, d's receive does not complete
 * successfully and d is in Error, and the window is not invalidated: a
 * write from a to b through the same R_Key lands.  (sroce places the
 * message before it invalidates, o10-37.2.21, so d's buffer may hold it.)
 */
static void t_mw_type2_send_inv_other_qp(void)
{
	const char *name = "mw_type2_send_with_inv_other_qp_refused";
	struct ibv_send_wr wr = { .wr_id = 3, .opcode = IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct xqp x = { 0 };
	struct ibv_sge sge;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	struct pair p;
	uint32_t rkey;
	int r;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_2) ||
	    mw_bind2(name, &p, mw, mr, p.bufb, 4096, IBV_ACCESS_REMOTE_WRITE,
		     1, IBV_WC_SUCCESS, &rkey) ||
	    xqp_up(name, p.pd, &x))
		goto out;
	r = post_recv1(x.d, 10, p.bufb + 32768, 256, p.mrb->lkey);
	if (r) {
		failf(name, "post_recv on d: got %s, expected 0", errname(r));
		goto out;
	}
	memset(p.bufa, 0x46, 16);
	sge = (struct ibv_sge){ (uintptr_t)p.bufa, 16, p.mra->lkey };
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.invalidate_rkey = rkey;
	r = ibv_post_send(x.c, &wr, &bad);
	if (r) {
		failf(name, "post_send SEND_WITH_INV on c: got %s, expected 0",
		      errname(r));
		goto out;
	}
	if (want_wc_op(name, x.cqc, 3, IBV_WC_REM_INV_REQ_ERR, -1, NULL))
		goto out;
	r = poll1(x.cqd, &wc, 10000);
	if (r != 1 || wc.wr_id != 10 || wc.status == IBV_WC_SUCCESS) {
		failf(name, "d's receive: got %s, expected an error completion",
		      r == 1 ? st(wc.status) : "no completion");
		goto out;
	}
	if (qp_state(x.d) != IBV_QPS_ERR) {
		failf(name, "d in %s after the refused invalidation, expected ERR",
		      qps(qp_state(x.d)));
		goto out;
	}
	/* d's buffer is not checked: the statement does not cover it */
	if (!write_lands(name, &p, 4, p.bufa + 4096, p.bufb + 128, rkey, 0x47,
			 "the write through the window after the refused invalidation did not land"))
		pass(name);
out:
	xqp_down(&x);
	mw_down(&p, mr, mw);
}

/*
 * C10-66.2.3, o10-37.2.25: ibv_bind_mw of a type 1 window on a, then at
 * once, without waiting for the bind's completion, a WRITE on a through
 * the new R_Key: the bind completes first, the WRITE succeeds and lands.
 */
static void t_mw_type1_bind_then_write(void)
{
	const char *name = "mw_type1_bind_then_write_back_to_back";
	struct ibv_mw_bind b = { .wr_id = 1, .send_flags = IBV_SEND_SIGNALED };
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;
	uint32_t old;
	int r;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_1))
		goto out;
	old = mw->rkey;
	b.bind_info.mr = mr;
	b.bind_info.addr = (uintptr_t)p.bufb + 4096;
	b.bind_info.length = 4096;
	b.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	memset(p.bufa, 0x51, 4096);
	r = ibv_bind_mw(p.a, mw, &b);
	if (r) {
		failf(name, "ibv_bind_mw on a: got %s, expected 0", errname(r));
		goto out;
	}
	if (mw->rkey == old) {
		failf(name, "ibv_bind_mw left the rkey unchanged (0x%x)", old);
		goto out;
	}
	r = rdma1(p.a, IBV_WR_RDMA_WRITE, 2, p.bufa, 4096, p.mra->lkey,
		  p.bufb + 4096, mw->rkey);
	if (r) {
		failf(name, "post_send WRITE: got %s, expected 0", errname(r));
		goto out;
	}
	if (want_wc_op(name, p.cqa, 1, IBV_WC_SUCCESS, IBV_WC_BIND_MW, NULL) ||
	    want_wc_op(name, p.cqa, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL))
		goto out;
	if (!bytes_are(p.bufb, 4096, 0xbb) ||
	    !bytes_are(p.bufb + 4096, 4096, 0x51) ||
	    !bytes_are(p.bufb + 8192, BUF - 8192, 0xbb))
		failf(name, "wrong target bytes, expected 0x51 in [4096, 8192) only");
	else
		pass(name);
out:
	mw_down(&p, mr, mw);
}

/*
 * o10-37.2.36: one ibv_post_send chain on a QP q connected to itself:
 * a BIND_MW of a type 2B window (bound to q), then a WRITE through its
 * new R_Key, which q also receives: the bind completes first, the WRITE
 * succeeds and lands.
 */
static void t_mw_type2_bind_then_write(void)
{
	const char *name = "mw_type2_bind_then_write_one_chain";
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ;
	struct ibv_send_wr bw = { .wr_id = 1, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr ww = { .wr_id = 2, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_qp *q = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_sge sge;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;
	int r;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_2))
		goto out;
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	q = cq ? mk_qp(p.pd, cq, cap_ok, NULL) : NULL;
	if (!q) {
		failf(name, "setup: qp: %s", strerror(errno));
		goto out;
	}
	r = to_init(q, acc) ?: to_rtr(q, q->qp_num, 0x7000) ?:
	    to_rts(q, 0x7000, 7);
	if (r) {
		failf(name, "setup: connecting q to itself: %s", errname(r));
		goto out;
	}
	bw.bind_mw.mw = mw;
	bw.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	bw.bind_mw.bind_info.mr = mr;
	bw.bind_mw.bind_info.addr = (uintptr_t)p.bufb + 4096;
	bw.bind_mw.bind_info.length = 4096;
	bw.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	memset(p.bufa, 0x52, 4096);
	sge = (struct ibv_sge){ (uintptr_t)p.bufa, 4096, p.mra->lkey };
	ww.sg_list = &sge;
	ww.num_sge = 1;
	ww.wr.rdma.remote_addr = (uintptr_t)p.bufb + 4096;
	ww.wr.rdma.rkey = bw.bind_mw.rkey;
	bw.next = &ww;
	r = ibv_post_send(q, &bw, &bad);
	if (r) {
		failf(name, "post_send BIND_MW + WRITE: got %s, expected 0",
		      errname(r));
		goto out;
	}
	if (want_wc_op(name, cq, 1, IBV_WC_SUCCESS, IBV_WC_BIND_MW, NULL) ||
	    want_wc_op(name, cq, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, NULL))
		goto out;
	if (!bytes_are(p.bufb, 4096, 0xbb) ||
	    !bytes_are(p.bufb + 4096, 4096, 0x52) ||
	    !bytes_are(p.bufb + 8192, BUF - 8192, 0xbb))
		failf(name, "wrong target bytes, expected 0x52 in [4096, 8192) only");
	else
		pass(name);
out:
	if (q)
		ibv_destroy_qp(q);
	if (cq)
		ibv_destroy_cq(cq);
	mw_down(&p, mr, mw);
}

/* SEND with Invalidate of rkey on a (to b); want: a's completion status. */
static int send_inv(const char *name, struct pair *p, uint64_t id,
		    uint32_t rkey, enum ibv_wc_status want)
{
	struct ibv_send_wr wr = { .wr_id = id, .opcode = IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_sge sge = { (uintptr_t)p->bufa, 16, p->mra->lkey };
	int r;

	r = post_recv1(p->b, id + 100, p->bufb + 32768, 256, p->mrb->lkey);
	if (r) {
		failf(name, "post_recv: got %s, expected 0", errname(r));
		return -1;
	}
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.invalidate_rkey = rkey;
	r = ibv_post_send(p->a, &wr, &bad);
	if (r) {
		failf(name, "post_send SEND_WITH_INV: got %s, expected 0", errname(r));
		return -1;
	}
	return want_wc_op(name, p->cqa, id, want,
			  want == IBV_WC_SUCCESS ? IBV_WC_SEND : -1, NULL);
}

/*
 * o10-37.2.30, o10-37.2.44: invalidating a Free type 2B window of the
 * QP's PD is a no-op that succeeds: LOCAL_INV on b, then a SEND with
 * Invalidate to b (b's receive reports WITH_INV and the key); the window
 * is still Free: a bind on b then succeeds and a write through it lands.
 */
static void t_mw_type2_inv_free(void)
{
	const char *name = "mw_type2_invalidate_free_window_noop";
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct ibv_wc wc;
	struct pair p;
	uint32_t rkey;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_2) ||
	    local_inv_b(name, &p, mw->rkey, 1, IBV_WC_SUCCESS) ||
	    send_inv(name, &p, 2, mw->rkey, IBV_WC_SUCCESS) ||
	    want_wc_op(name, p.cqb, 102, IBV_WC_SUCCESS, IBV_WC_RECV, &wc))
		goto out;
	if (!(wc.wc_flags & IBV_WC_WITH_INV) || wc.invalidated_rkey != mw->rkey) {
		failf(name, "recv wc_flags 0x%x rkey 0x%x, expected WITH_INV and 0x%x",
		      wc.wc_flags, wc.invalidated_rkey, mw->rkey);
		goto out;
	}
	if (mw_bind2(name, &p, mw, mr, p.bufb, 4096, IBV_ACCESS_REMOTE_WRITE,
		     3, IBV_WC_SUCCESS, &rkey))
		goto out;
	if (!write_lands(name, &p, 4, p.bufa, p.bufb + 64, rkey, 0x48,
			 "the write through the window bound after the invalidations did not land"))
		pass(name);
out:
	mw_down(&p, mr, mw);
}

/*
 * o10-37.2.44, o10-37.2.30: a SEND with Invalidate naming a Free type 2B
 * window of another PD than the receiving QP's is refused: the sender
 * completes REM_INV_REQ_ERR.
 */
static void t_mw_type2_inv_free_other_pd(void)
{
	const char *name = "mw_type2_send_with_inv_free_other_pd_refused";
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p, p2;

	memset(&p2, 0, sizeof(p2));
	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_2) ||
	    pair_up(name, &p2, 7))
		goto out;
	if (!send_inv(name, &p2, 2, mw->rkey, IBV_WC_REM_INV_REQ_ERR))
		pass(name);
out:
	pair_down(&p2);
	mw_down(&p, mr, mw);
}

/*
 * o10-37.2.30: a type 2B bind needs a Free window: a second bind WR of a
 * Valid window (on the QP it is bound to) completes MW_BIND_ERR.
 */
static void t_mw_type2_bind_valid(void)
{
	const char *name = "mw_type2_bind_valid_window_refused";
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;
	uint32_t rkey;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_2) ||
	    mw_bind2(name, &p, mw, mr, p.bufb, 4096, IBV_ACCESS_REMOTE_WRITE,
		     1, IBV_WC_SUCCESS, &rkey))
		goto out;
	mw->rkey = rkey;
	if (!mw_bind2(name, &p, mw, mr, p.bufb + 8192, 4096,
		      IBV_ACCESS_REMOTE_WRITE, 2, IBV_WC_MW_BIND_ERR, NULL))
		pass(name);
out:
	mw_down(&p, mr, mw);
}

/*
 * o10-37.2.30: the QP a type 2B window is bound to may be reset and
 * destroyed while the window stays bound: both succeed, and so does
 * ibv_dealloc_mw of the window afterwards.
 */
static void t_mw_type2_qp_gone(void)
{
	const char *name = "mw_type2_bound_qp_reset_and_destroy";
	struct ibv_qp_attr ra = { .qp_state = IBV_QPS_RESET };
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	struct pair p;
	uint32_t rkey;
	int r;

	if (mw_setup(name, &p, &mr, &mw, IBV_MW_TYPE_2) ||
	    mw_bind2(name, &p, mw, mr, p.bufb, 4096, IBV_ACCESS_REMOTE_WRITE,
		     1, IBV_WC_SUCCESS, &rkey))
		goto out;
	r = ibv_modify_qp(p.b, &ra, IBV_QP_STATE);
	if (r) {
		failf(name, "modify_qp to RESET with a window bound: got %s, expected 0",
		      errname(r));
		goto out;
	}
	r = ibv_destroy_qp(p.b);
	if (r) {
		failf(name, "destroy_qp with a window bound: got %s, expected 0",
		      errname(r));
		goto out;
	}
	p.b = NULL;
	r = ibv_dealloc_mw(mw);
	mw = NULL;
	if (r)
		failf(name, "dealloc_mw after its QP is gone: got %s, expected 0",
		      errname(r));
	else
		pass(name);
out:
	mw_down(&p, mr, mw);
}

/*
 * C10-138: every async error the device detects reaches the process's
 * handler.  A SEND longer than the receive buffer: the requester completes
 * REM_INV_REQ_ERR, the receive WQE LOC_LEN_ERR, and the responder QP gets
 * the affiliated IBV_EVENT_QP_REQ_ERR (Invalid Request) and goes to Error.
 */
static void t_async_inv_req(void)
{
	const char *name = "async_responder_inv_req";
	char seen[256];
	struct pair p;
	int r;

	if (pair_up(name, &p, 7))
		goto out;
	r = post_recv1(p.b, 10, p.bufb, 64, p.mrb->lkey);
	if (!r)
		r = post_send1(p.a, 1, p.bufa, 512, p.mra->lkey);
	if (r) {
		failf(name, "post: got %s, expected 0", errname(r));
		goto out;
	}
	if (want_wc(name, p.cqa, 1, IBV_WC_REM_INV_REQ_ERR, 10000) ||
	    want_wc(name, p.cqb, 10, IBV_WC_LOC_LEN_ERR, 10000))
		goto out;
	if (!wait_qp_event(p.b, IBV_EVENT_QP_REQ_ERR, 5000, seen, sizeof(seen)))
		failf(name, "got events [%s], expected %s on the responder QP",
		      seen, ibv_event_type_str(IBV_EVENT_QP_REQ_ERR));
	else if (qp_state(p.b) != IBV_QPS_ERR)
		failf(name, "responder QP state got %s, expected ERR",
		      qps(qp_state(p.b)));
	else
		pass(name);
out:
	pair_down(&p);
}

/*
 * C10-144: an affiliated error stops the responder's QP, and the WRs that
 * QP had outstanding as a requester complete too: its SEND, held in RNR
 * retries (the peer has no receive), flushes; its receive WQEs flush.
 * Each WQE completes exactly once.
 */
static void t_resp_err_flushes_own_wrs(void)
{
	const char *name = "responder_err_flushes_own_wrs";
	struct ibv_wc wc[8];
	struct pair p;
	char why[128];
	int i, n, r;

	if (pair_up(name, &p, 7))
		goto out;
	r = post_recvs(&p, 10, 2, 256);
	if (!r)
		r = post_send1(p.b, 12, p.bufb + 40000, 64, p.mrb->lkey);
	if (r) {
		failf(name, "post: got %s, expected 0", errname(r));
		goto out;
	}
	usleep(100000); /* b's SEND is RNR-NAKed and waits to retry */
	r = post_rdma1(p.a, 1, IBV_WR_RDMA_WRITE, p.bufa, 64, p.mra->lkey,
		       p.bufb, p.mrb->rkey ^ 0x00f0f000); /* nobody's R_Key */
	if (r) {
		failf(name, "post_send WRITE: got %s, expected 0", errname(r));
		goto out;
	}
	if (want_wc(name, p.cqa, 1, IBV_WC_REM_ACCESS_ERR, 10000))
		goto out;
	n = collect(p.cqb, wc, 8, 3, 10000);
	if (!ids_once(wc, n, 10, 3, why, sizeof(why))) {
		failf(name, "responder QP: %s", why);
		goto out;
	}
	for (i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_WR_FLUSH_ERR) {
			failf(name, "wr_id %llu completed %s, expected %s",
			      (unsigned long long)wc[i].wr_id, st(wc[i].status),
			      st(IBV_WC_WR_FLUSH_ERR));
			goto out;
		}
	if (qp_state(p.b) != IBV_QPS_ERR)
		failf(name, "responder QP state got %s, expected ERR",
		      qps(qp_state(p.b)));
	else
		pass(name);
out:
	pair_down(&p);
}

/*
 * C10-138 with an SRQ (10.2.9.4): armed at 2 with 4 receive WQEs, the limit
 * event is not raised while 2 remain, is raised once fewer do, and the
 * limit is then disarmed (query reads 0).  Moving a QP of the SRQ to Error
 * raises IBV_EVENT_QP_LAST_WQE_REACHED on it.
 */
static void t_async_srq(void)
{
	const char *name = "async_srq_limit_reached";
	struct ibv_srq_attr sa = { .srq_limit = 2 };
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	char seen[256];
	struct pair p;
	int i, r;

	pair_srq_fn = srq16;
	r = pair_up(name, &p, 7);
	pair_srq_fn = NULL;
	if (r)
		goto out;
	r = post_srq_recvs(&p, pair_srq, 10, 4, 256);
	if (!r)
		r = ibv_modify_srq(pair_srq, &sa, IBV_SRQ_LIMIT);
	if (r) {
		failf(name, "post_srq_recv/modify_srq: got %s, expected 0", errname(r));
		goto out;
	}
	for (i = 0; i < 3; i++) {
		if (i == 2) {
			if (wait_async(IBV_EVENT_SRQ_LIMIT_REACHED, pair_srq, 300,
				       seen, sizeof(seen))) {
				failf("async_srq_limit_not_early", "raised with 2 WQEs left, limit 2");
				goto out;
			}
			pass("async_srq_limit_not_early");
		}
		r = post_send1(p.a, 1 + i, p.bufa, 16, p.mra->lkey);
		if (r) {
			failf(name, "post_send: got %s, expected 0", errname(r));
			goto out;
		}
		if (want_wc(name, p.cqa, 1 + i, IBV_WC_SUCCESS, 10000) ||
		    want_wc(name, p.cqb, 10 + i, IBV_WC_SUCCESS, 10000))
			goto out;
	}
	if (!wait_async(IBV_EVENT_SRQ_LIMIT_REACHED, pair_srq, 5000, seen,
			sizeof(seen))) {
		failf(name, "got events [%s], expected %s on the SRQ", seen,
		      ibv_event_type_str(IBV_EVENT_SRQ_LIMIT_REACHED));
		goto out;
	}
	pass(name);
	memset(&sa, 0xff, sizeof(sa));
	r = ibv_query_srq(pair_srq, &sa);
	if (r || sa.srq_limit)
		failf("srq_limit_disarmed", "query: %s, srq_limit %u, expected 0 after the event",
		      errname(r), sa.srq_limit);
	else
		pass("srq_limit_disarmed");
	r = ibv_modify_qp(p.b, &qa, IBV_QP_STATE);
	if (r)
		failf("async_last_wqe_reached", "modify to ERR: got %s, expected 0", errname(r));
	else if (!wait_qp_event(p.b, IBV_EVENT_QP_LAST_WQE_REACHED, 5000, seen,
				sizeof(seen)))
		failf("async_last_wqe_reached", "got events [%s], expected %s on the QP",
		      seen, ibv_event_type_str(IBV_EVENT_QP_LAST_WQE_REACHED));
	else
		pass("async_last_wqe_reached");
out:
	pair_down(&p);
}

/*
 * The CQ overflow tests' message @i from a: a signaled 8 B UD SEND through
 * @ah, or an 8 B WRITE into b's buffer.  A full send queue is waited out.
 */
static int ovf_post(enum ibv_qp_type type, struct pair *p, struct ibv_ah *ah,
		    uint64_t id, int i)
{
	int r = 0, tries;

	for (tries = 0; tries < 1000; tries++) {
		r = type == IBV_QPT_UD ?
		    ud_send1(p->a, id, ah, p->b->qp_num, p->bufa, 8,
			     p->mra->lkey) :
		    post_rdma1(p->a, id, IBV_WR_RDMA_WRITE, p->bufa, 8,
			       p->mra->lkey, p->bufb + 8 * (i % 64),
			       p->mrb->rkey);
		if (r != ENOMEM)
			break;
		usleep(1000); /* the send queue is full: let it drain */
	}
	return r;
}

/*
 * C10-138, 10.10.2.3: a completion the CQ has no room for is lost and
 * raises IBV_EVENT_CQ_ERR on that CQ.  cq->cqe + 2 signaled WRITEs are
 * completed into the send CQ, which is never polled.  (ib_core caches a
 * counter read for 10 ms, and all this can take less.)
 */
static void t_async_cq_overflow(void)
{
	const char *name = "async_cq_err_overflow";
	long before = hw_counter("cq_overflow");
	char seen[256];
	struct pair p;
	int i, r = 0;

	if (pair_up(name, &p, 7))
		goto out;
	for (i = 0; i < p.cqa->cqe + 2; i++) {
		r = ovf_post(IBV_QPT_RC, &p, NULL, 100 + i, i);
		if (r) {
			failf(name, "post_send %d: got %s, expected 0", i, errname(r));
			goto out;
		}
	}
	if (!wait_async(IBV_EVENT_CQ_ERR, p.cqa, 10000, seen, sizeof(seen))) {
		failf(name, "got events [%s], expected %s on the send CQ (%d entries, %d completions)",
		      seen, ibv_event_type_str(IBV_EVENT_CQ_ERR), p.cqa->cqe,
		      p.cqa->cqe + 2);
		goto out;
	}
	usleep(50000);
	if (hw_counter("cq_overflow") <= before)
		failf(name, "counter cq_overflow did not move");
	else
		pass(name);
out:
	pair_down(&p);
}

/*
 * C10-144, C10-150, C10-155 (10.8.5.2): a completion its CQ cannot take is
 * an affiliated asynchronous error of the QP as well as of the CQ.  a, of
 * @type, sends p.cqa->cqe + 2 signaled 8 B messages into a send CQ that
 * is never polled.  Then: IBV_EVENT_CQ_ERR on that CQ and
 * IBV_EVENT_QP_FATAL on a; a is in Error; the receive a had outstanding
 * completes WR_FLUSH_ERR in its own receive CQ, which has room; the send
 * CQ holds the first completions, all successful and in order, and takes
 * nothing more once drained, not even the flush of a send posted then.
 */
static void t_cq_overflow_ends_qp(enum ibv_qp_type type, const char *name)
{
	long before = hw_counter("cq_overflow"), after;
	struct ibv_cq *rcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_ah *ah = NULL;
	struct pair p = {};
	struct ibv_wc wc;
	char seen[256];
	int i, n, r = 0, nsend, posted;

	if (!rcq) {
		failf(name, "setup: create_cq: %s", strerror(errno));
		return;
	}
	pair_a_rcq = rcq;
	r = type == IBV_QPT_RC ? pair_up(name, &p, 7) :
	    type == IBV_QPT_UC ? uc_pair_up(name, &p) : ud_pair_up(name, &p);
	pair_a_rcq = NULL;
	if (r)
		goto out;
	if (type == IBV_QPT_UD && !(ah = ah_to_self(p.pd))) {
		failf(name, "setup: create_ah: %s", strerror(errno));
		goto out;
	}
	if (post_recv1(p.a, 500, p.bufa + 32768, 512, p.mra->lkey)) {
		failf(name, "post_recv failed");
		goto out;
	}
	nsend = p.cqa->cqe + 2;
	for (i = 0; i < nsend; i++) {
		r = ovf_post(type, &p, ah, 100 + i, i);
		if (r && qp_state(p.a) == IBV_QPS_ERR)
			break;	/* ended already: the rest is not needed */
		if (r) {
			failf(name, "post_send %d: got %s, expected 0", i, errname(r));
			goto out;
		}
	}
	posted = i;
	if (!wait_async(IBV_EVENT_CQ_ERR, p.cqa, 10000, seen, sizeof(seen))) {
		failf(name, "got events [%s], expected %s on the send CQ",
		      seen, ibv_event_type_str(IBV_EVENT_CQ_ERR));
		goto out;
	}
	if (!wait_async(IBV_EVENT_QP_FATAL, p.a, 5000, seen, sizeof(seen))) {
		failf(name, "got events [%s] after the CQ's, expected %s on the QP",
		      seen, ibv_event_type_str(IBV_EVENT_QP_FATAL));
		goto out;
	}
	if (qp_state(p.a) != IBV_QPS_ERR) {
		failf(name, "QP state %s after its CQ overflowed, expected ERR",
		      qps(qp_state(p.a)));
		goto out;
	}
	if (want_wc(name, rcq, 500, IBV_WC_WR_FLUSH_ERR, 5000))
		goto out;
	for (n = 0; (r = poll1(p.cqa, &wc, 300)) == 1; n++) {
		if (wc.wr_id != (uint64_t)(100 + n) || wc.status != IBV_WC_SUCCESS) {
			failf(name, "send CQ entry %d: wr_id %llu %s, expected wr_id %d success",
			      n, (unsigned long long)wc.wr_id, st(wc.status), 100 + n);
			goto out;
		}
	}
	if (r < 0 || n != p.cqa->cqe) {
		failf(name, "%d completions in a send CQ of %d entries after %d sends",
		      n, p.cqa->cqe, posted);
		goto out;
	}
	/*
	 * Posted to the failed QP: its flush goes to the CQ in error, which
	 * has room now and must not take it.  The counter shows the flush
	 * ran (ib_core caches a counter read for 10 ms).
	 */
	r = ovf_post(type, &p, ah, 999, 0);
	if (r) {
		failf(name, "post_send to the QP in Error: %s", errname(r));
		goto out;
	}
	for (i = 0; i < 500; i++) {
		after = hw_counter("cq_overflow");
		if (before < 0 || after - before >= posted - n + 1)
			break;
		usleep(10000);
	}
	if (poll1(p.cqa, &wc, 100) == 1)
		failf(name, "the CQ in error took wr_id %llu %s after it was drained",
		      (unsigned long long)wc.wr_id, st(wc.status));
	else if (before < 0 || after - before != posted - n + 1)
		failf(name, "cq_overflow %ld -> %ld, expected %d more (the sends past the CQ's room and the flush of one posted after)",
		      before, after, posted - n + 1);
	else
		pass(name);
out:
	if (ah)
		ibv_destroy_ah(ah);
	pair_down(&p);
	ibv_destroy_cq(rcq);
}

/*
 * The receive side of the same (C10-144): b's CQ, never polled, takes
 * receive completions until it overflows.  The SEND whose completion was
 * lost ends b and is not acknowledged: a's copy of it completes in error
 * (the retries find b in Error), every SEND before it successfully, and
 * b's CQ holds exactly those receives, in order, and nothing more.
 */
static void t_cq_overflow_recv_not_acked(void)
{
	const char *name = "cq_overflow_recv_ends_qp_not_acked";
	struct ibv_qp_attr rts = { .qp_state = IBV_QPS_RTS, .timeout = 10,
				   .retry_cnt = 3, .rnr_retry = 7,
				   .sq_psn = 0x2000, .max_rd_atomic = 1 };
	struct ibv_wc wc;
	struct pair p = {};
	char seen[256];
	int i, n, r;

	if (pair_alloc(name, &p))
		goto out;
	if (connect_pair_rts(&p, &rts)) {
		failf(name, "setup: connect: %s", strerror(errno));
		goto out;
	}
	/* one receive per SEND, each taken before the next: the RQ never fills */
	for (i = 0; i < p.cqb->cqe + 2; i++) {
		r = post_recv1(p.b, 200 + i, p.bufb + 64 * (i % 512), 64,
			       p.mrb->lkey) ?:
		    post_send1(p.a, 100 + i, p.bufa, 64, p.mra->lkey);
		if (r) {
			failf(name, "post %d failed: %s", i, errname(r));
			goto out;
		}
		if (poll1(p.cqa, &wc, 5000) != 1) {
			failf(name, "no completion for SEND %d", 100 + i);
			goto out;
		}
		if (wc.wr_id != (uint64_t)(100 + i)) {
			failf(name, "completion wr_id %llu, expected %d",
			      (unsigned long long)wc.wr_id, 100 + i);
			goto out;
		}
		if (wc.status != IBV_WC_SUCCESS)
			break;
	}
	if (i == p.cqb->cqe + 2) {
		failf(name, "all %d SENDs completed successfully into a receive CQ of %d",
		      i, p.cqb->cqe);
		goto out;
	}
	/* not acknowledged, nor NAKed: b took it and then stopped */
	if (wc.status != IBV_WC_RETRY_EXC_ERR) {
		failf(name, "SEND %d completed %s, expected %s", 100 + i,
		      st(wc.status), st(IBV_WC_RETRY_EXC_ERR));
		goto out;
	}
	if (!wait_async(IBV_EVENT_CQ_ERR, p.cqb, 5000, seen, sizeof(seen)) ||
	    !wait_async(IBV_EVENT_QP_FATAL, p.b, 5000, seen, sizeof(seen))) {
		failf(name, "got events [%s], expected %s on b's CQ, then %s on b",
		      seen, ibv_event_type_str(IBV_EVENT_CQ_ERR),
		      ibv_event_type_str(IBV_EVENT_QP_FATAL));
		goto out;
	}
	if (qp_state(p.b) != IBV_QPS_ERR) {
		failf(name, "b in %s, expected ERR", qps(qp_state(p.b)));
		goto out;
	}
	for (n = 0; (r = poll1(p.cqb, &wc, 300)) == 1; n++) {
		if (wc.wr_id != (uint64_t)(200 + n) || wc.status != IBV_WC_SUCCESS ||
		    wc.byte_len != 64) {
			failf(name, "b's CQ entry %d: wr_id %llu %s len %u, expected wr_id %d success 64",
			      n, (unsigned long long)wc.wr_id, st(wc.status),
			      wc.byte_len, 200 + n);
			goto out;
		}
	}
	if (n != i)
		failf(name, "b's CQ held %d receives, expected the %d acknowledged SENDs'",
		      n, i);
	else
		pass(name);
out:
	pair_down(&p);
}

/*
 * o10-36.2.3: librxe has no Reregister MR, so ibv_rereg_mr must fail
 * cleanly (never 0), and the region must be exactly as before: its keys
 * unchanged and a WRITE through its R_Key still lands.
 */
static void t_rereg_mr(void)
{
	const char *name = "rereg_mr_refused_mr_intact";
	struct pair p;
	uint32_t lkey, rkey;
	int r;

	if (pair_up(name, &p, 7))
		goto out;
	lkey = p.mrb->lkey;
	rkey = p.mrb->rkey;
	r = ibv_rereg_mr(p.mrb, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			 IBV_ACCESS_LOCAL_WRITE);
	if (r == 0) {
		failf(name, "ibv_rereg_mr returned 0, but the provider has no rereg_mr");
		goto out;
	}
	if (p.mrb->lkey != lkey || p.mrb->rkey != rkey) {
		failf(name, "keys changed: lkey 0x%x -> 0x%x, rkey 0x%x -> 0x%x",
		      lkey, p.mrb->lkey, rkey, p.mrb->rkey);
		goto out;
	}
	if (!write_lands(name, &p, 1, p.bufa, p.bufb + 256, rkey, 0x5e,
			 "a WRITE through the R_Key after the refused rereg did not land"))
		pass(name);
out:
	pair_down(&p);
}

/*
 * C10-91: on a send queue created with sq_sig_all every WR completes,
 * flagged signaled or not: four WRITEs posted without IBV_SEND_SIGNALED
 * give four completions, in order, and all four land.
 */
static void t_sq_sig_all(void)
{
	const char *name = "sq_sig_all_every_wr_completes";
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ;
	struct ibv_qp_init_attr ia = { .cap = cap_ok, .qp_type = IBV_QPT_RC,
				       .sq_sig_all = 1 };
	struct ibv_send_wr wr[4], *bad;
	struct ibv_sge sge[4];
	struct ibv_qp *c = NULL, *d = NULL;
	struct ibv_wc wc[8];
	struct pair p;
	int i, n;

	if (pair_up(name, &p, 7))
		goto out;
	ia.send_cq = ia.recv_cq = p.cqa;
	c = ibv_create_qp(p.pd, &ia);
	d = mk_qp(p.pd, p.cqb, cap_ok, NULL);
	if (!c || !d || to_init(c, acc) || to_init(d, acc) ||
	    connect_pair(c, d, 0x5000, 0x6000, 7)) {
		failf(name, "setup: an sq_sig_all QP and its peer: %s", strerror(errno));
		goto out;
	}
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 4; i++) {
		memset(p.bufa + 4096 + i * 64, 0x30 + i, 64);
		sge[i] = (struct ibv_sge){ (uintptr_t)p.bufa + 4096 + i * 64, 64, p.mra->lkey };
		wr[i].wr_id = 20 + i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].wr.rdma.remote_addr = (uintptr_t)p.bufb + 4096 + i * 64;
		wr[i].wr.rdma.rkey = p.mrb->rkey;
		wr[i].next = i < 3 ? &wr[i + 1] : NULL;
	}
	if (ibv_post_send(c, wr, &bad)) {
		failf(name, "post_send: %s", strerror(errno));
		goto out;
	}
	n = collect(p.cqa, wc, 8, 4, 10000);
	for (i = 0; i < n && i < 4; i++)
		if (wc[i].wr_id != 20u + i || wc[i].status != IBV_WC_SUCCESS ||
		    wc[i].opcode != IBV_WC_RDMA_WRITE ||
		    !bytes_are(p.bufb + 4096 + i * 64, 64, 0x30 + i))
			break;
	if (n != 4 || i != 4 || poll1(p.cqa, wc, 300) == 1) {
		failf(name, "%d completions (#%d wrong or the data missing), expected 20..23 in order",
		      n, i);
		goto out;
	}
	pass(name);
out:
	if (c)
		ibv_destroy_qp(c);
	if (d)
		ibv_destroy_qp(d);
	pair_down(&p);
}

/*
 * An RC QP connected to itself: its packets come back to the pass that
 * sent them, which goes round again under the same hold.  Ten rounds of
 * one 16-WR chain (one doorbell): a 20-packet SEND into its own receive,
 * 12 unsignaled 64 B WRITEs and a signaled one, a READ of what the SEND
 * placed, a FETCH_ADD.  Each round: the four send completions in order,
 * the receive's with 20480 bytes, and every byte and the atomic right;
 * no retransmission timeout: nothing waited for a pass.
 */
static void t_self_loop(void)
{
	const char *name = "rc_self_loop_send_write_read_atomic";
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_send_wr wr[16], *bad;
	struct ibv_sge sge[16];
	struct ibv_mr *mr = NULL;
	struct ibv_wc wc[8];
	uint64_t *word, *old;
	int round, i, j, n, sends;
	long t0, t1;
	char *b;
	struct pair p;

	if (pair_alloc(name, &p))
		goto out;
	b = p.bufb;
	mr = b_target(name, &p, b, BUF, acc, acc & ~IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		goto out;
	/* a long ACK timeout: only a lost pass, not a slow guest, waits on it */
	if (to_rtr(p.b, p.b->qp_num, 0x3000) ||
	    to_rts_timeout(p.b, 0x3000, 7, 18)) {
		failf(name, "setup: connecting b to itself: %s", strerror(errno));
		goto out;
	}
	word = (uint64_t *)(b + 64000);
	old = (uint64_t *)(b + 64512);
	*word = 0x1000;
	t0 = hw_counter("retry_timeout");
	for (round = 0; round < 10; round++) {
		for (i = 0; i < 20480; i++)
			b[i] = (char)(i * 7 + round);
		memset(b + 32768, 0, 20480);
		memset(b + 57344, 0, 16 * 64);
		memset(b + 61440, 0, 2048);
		*old = 0;
		memset(wr, 0, sizeof(wr));
		for (i = 0; i < 16; i++) {
			wr[i].wr_id = i + 1;
			wr[i].sg_list = &sge[i];
			wr[i].num_sge = 1;
			wr[i].next = i < 15 ? &wr[i + 1] : NULL;
		}
		sge[0] = (struct ibv_sge){ (uintptr_t)b, 20480, mr->lkey };
		wr[0].opcode = IBV_WR_SEND;
		wr[0].send_flags = IBV_SEND_SIGNALED;
		for (i = 1; i <= 13; i++) {
			memset(b + 20480 + i * 64, 0x10 + i + round, 64);
			sge[i] = (struct ibv_sge){ (uintptr_t)b + 20480 + i * 64, 64, mr->lkey };
			wr[i].opcode = IBV_WR_RDMA_WRITE;
			wr[i].wr.rdma.remote_addr = (uintptr_t)b + 57344 + i * 64;
			wr[i].wr.rdma.rkey = mr->rkey;
		}
		wr[13].send_flags = IBV_SEND_SIGNALED;
		sge[14] = (struct ibv_sge){ (uintptr_t)b + 61440, 2048, mr->lkey };
		wr[14].opcode = IBV_WR_RDMA_READ;
		wr[14].send_flags = IBV_SEND_SIGNALED;
		wr[14].wr.rdma.remote_addr = (uintptr_t)b + 32768;
		wr[14].wr.rdma.rkey = mr->rkey;
		sge[15] = (struct ibv_sge){ (uintptr_t)old, 8, mr->lkey };
		wr[15].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr[15].send_flags = IBV_SEND_SIGNALED;
		wr[15].wr.atomic.remote_addr = (uintptr_t)word;
		wr[15].wr.atomic.compare_add = 5;
		wr[15].wr.atomic.rkey = mr->rkey;
		if (post_recv1(p.b, 100 + round, b + 32768, 20480, mr->lkey) ||
		    ibv_post_send(p.b, wr, &bad)) {
			failf(name, "round %d: post: %s", round, strerror(errno));
			goto out;
		}
		n = collect(p.cqb, wc, 8, 5, 10000);
		for (i = 0, sends = 0, j = -1; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				break;
			if (wc[i].wr_id == 100u + round) {
				if (wc[i].opcode != IBV_WC_RECV || wc[i].byte_len != 20480)
					break;
				continue;
			}
			if (sends >= 4 ||
			    wc[i].wr_id != (uint64_t[]){ 1, 14, 15, 16 }[sends++])
				break;
		}
		if (n != 5 || i != 5 || sends != 4) {
			failf(name, "round %d: %d completions (#%d wrong), expected SEND 1, WRITE 14, READ 15, FETCH_ADD 16 in order and receive %d",
			      round, n, i, 100 + round);
			goto out;
		}
		for (i = 0; i < 20480 && b[32768 + i] == (char)(i * 7 + round); i++)
			;
		for (j = 1; j <= 13 && bytes_are(b + 57344 + j * 64, 64, 0x10 + j + round); j++)
			;
		if (i != 20480 || j != 14 || memcmp(b + 61440, b, 2048) ||
		    *old != 0x1000 + 5 * (uint64_t)round ||
		    *word != 0x1000 + 5 * (uint64_t)(round + 1)) {
			failf(name, "round %d: SEND bytes right up to %d, WRITE %d wrong, READ %s, FETCH_ADD old 0x%llx word 0x%llx",
			      round, i, j, memcmp(b + 61440, b, 2048) ? "wrong" : "right",
			      (unsigned long long)*old, (unsigned long long)*word);
			goto out;
		}
	}
	/* a packet left in the queue until the timer found it: a lost pass */
	t1 = hw_counter("retry_timeout");
	if (t0 < 0 || t1 != t0)
		failf(name, "retry_timeout %ld -> %ld: the QP waited for its timer",
		      t0, t1);
	else
		pass(name);
out:
	if (mr)
		ibv_dereg_mr(mr);
	pair_down(&p);
}

/*
 * C10-90, C10-91, C10-92 on a QP without sq_sig_all: a successful
 * unsignaled WRITE makes no completion (only the signaled one behind it
 * does, and both land), and an unsignaled WRITE that fails completes
 * anyway, in error, with its wr_id.
 */
static void t_unsignaled(void)
{
	const char *name = "unsignaled_success_no_cqe";
	struct ibv_send_wr wr[2], *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct pair p;
	int r;

	if (pair_up(name, &p, 7))
		goto out;
	sge = (struct ibv_sge){ (uintptr_t)p.bufa, 64, p.mra->lkey };
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 1;
	wr[0].sg_list = &sge;
	wr[0].num_sge = 1;
	wr[0].opcode = IBV_WR_RDMA_WRITE;
	wr[0].wr.rdma.remote_addr = (uintptr_t)p.bufb;
	wr[0].wr.rdma.rkey = p.mrb->rkey;
	wr[0].next = &wr[1];
	wr[1] = wr[0];
	wr[1].wr_id = 2;
	wr[1].send_flags = IBV_SEND_SIGNALED;
	wr[1].wr.rdma.remote_addr = (uintptr_t)p.bufb + 64;
	wr[1].next = NULL;
	r = ibv_post_send(p.a, wr, &bad);
	if (r) {
		failf(name, "post_send: got %s, expected 0", errname(r));
		goto out;
	}
	if (want_wc(name, p.cqa, 2, IBV_WC_SUCCESS, 10000))
		goto out;
	if (poll1(p.cqa, &wc, 300) == 1)
		failf(name, "an extra completion: wr_id %llu status %s",
		      (unsigned long long)wc.wr_id, st(wc.status));
	else if (!bytes_are(p.bufb, 128, 0xaa))
		failf(name, "the two WRITEs did not both land");
	else
		pass(name);

	name = "unsignaled_error_completes";
	wr[0].wr_id = 3;
	wr[0].next = NULL;
	wr[0].wr.rdma.rkey = p.mrb->rkey ^ 0x00f0f000; /* nobody's R_Key */
	r = ibv_post_send(p.a, wr, &bad);
	if (r)
		failf(name, "post_send: got %s, expected 0", errname(r));
	else if (!want_wc(name, p.cqa, 3, IBV_WC_REM_ACCESS_ERR, 10000))
		pass(name);
out:
	pair_down(&p);
}

/* One 64 B RDMA WRITE from a's buffer at @off to b's at @off. */
static int ackreq_write(struct pair *p, int off, uint64_t id, int flags)
{
	struct ibv_sge sge = { (uintptr_t)p->bufa + off, 64, p->mra->lkey };
	struct ibv_send_wr wr = {}, *bad;

	memset(p->bufa + off, (unsigned char)(off / 64), 64);
	wr.wr_id = id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = flags;
	wr.wr.rdma.remote_addr = (uintptr_t)p->bufb + off;
	wr.wr.rdma.rkey = p->mrb->rkey;
	return ibv_post_send(p->a, &wr, &bad);
}

/* Did b's buffer get the WRITEs of ackreq_write() for [lo, hi) x 64 B? */
static int ackreq_landed(struct pair *p, int lo, int hi)
{
	int i;

	for (i = lo; i < hi; i++)
		if (!bytes_are(p->bufb + i * 64, 64, (unsigned char)i))
			return 0;
	return 1;
}

/* hw_counter() past the core's 10 ms cache of the counters */
static long ackreq_counter(const char *cname)
{
	usleep(20000);
	return hw_counter(cname);
}

/*
 * sroce asks for an ACK (AckReq) on the last packet of a signaled WQE, on
 * every 16th packet and on resends, not on each unsignaled message: a
 * stream of 48 unsignaled 64 B WRITEs and a signaled one draws a handful
 * of ACKs, not 49.  A tail that nothing asked about is probed: an SQD
 * drain does so at once (SQ_DRAINED well before the ACK timer), and the
 * ACK timer does so without counting a retry (ackreq_probes, not
 * retry_timeout).  a's ACK timer is 2.1 s (timeout 19) so that the two
 * cases cannot be confused.
 */
static void t_ackreq(void)
{
	const char *name = "ackreq_coalesced";
	struct ibv_qp_attr qa = {
		.qp_state = IBV_QPS_RTS, .timeout = 19, .retry_cnt = 7,
		.rnr_retry = 7, .sq_psn = 0x2000, .max_rd_atomic = 1,
	};
	struct ibv_qp_cap cap = cap_ok;
	long sent0, probe0, rto0, acks;
	struct ibv_sge bad_sge;
	struct ibv_send_wr wr = {}, *bad;
	struct timespec t0, t1;
	struct ibv_wc wc;
	char seen[256];
	struct pair p;
	int i, r, ms;

	/* room for the 48 unsignaled WRITEs whatever the ACKs do */
	cap.max_send_wr = 64;
	if (pair_alloc_cap(name, &p, cap))
		goto out;
	r = connect_pair_rts(&p, &qa);
	if (r) {
		failf(name, "setup: connecting the pair failed: %s", errname(r));
		goto out;
	}
	sent0 = ackreq_counter("loopback_pkts");
	probe0 = ackreq_counter("ackreq_probes");
	rto0 = ackreq_counter("retry_timeout");
	if (sent0 < 0 || probe0 < 0 || rto0 < 0) {
		failf(name, "loopback_pkts, ackreq_probes or retry_timeout unreadable");
		goto out;
	}
	/* one doorbell each, as a streaming application rings them */
	for (i = 0; i < 48 && !r; i++)
		r = ackreq_write(&p, i * 64, 100 + i, 0);
	r = r ?: ackreq_write(&p, 48 * 64, 148, IBV_SEND_SIGNALED);
	if (r) {
		failf(name, "post WRITE %d: got %s, expected 0", i, errname(r));
		goto out;
	}
	if (want_wc(name, p.cqa, 148, IBV_WC_SUCCESS, 10000))
		goto out;
	/* the loopback packets beyond a's 49 requests are b's ACKs (and any probe) */
	acks = ackreq_counter("loopback_pkts") - sent0 - 49 -
	       (ackreq_counter("ackreq_probes") - probe0);
	if (!ackreq_landed(&p, 0, 49))
		failf(name, "the 49 WRITEs did not all land");
	else if (acks < 1 || acks > 49 / 16 + 2)
		failf(name, "49 WRITEs, 48 unsignaled: %ld ACKs, expected 1..%d",
		      acks, 49 / 16 + 2);
	else
		pass(name);

	/* SQD: three unsignaled WRITEs, then drain at once */
	name = "ackreq_tail_sqd_probe";
	probe0 = ackreq_counter("ackreq_probes");
	for (i = 49, r = 0; i < 52 && !r; i++)
		r = ackreq_write(&p, i * 64, 100 + i, 0);
	/* sent before SQD (a doorbell may leave its pass to a worker) */
	for (ms = 0; !r && ms < 2000 && !ackreq_landed(&p, 49, 52); ms++)
		usleep(1000);
	qa.qp_state = IBV_QPS_SQD;
	qa.en_sqd_async_notify = 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = r ?: ibv_modify_qp(p.a, &qa, IBV_QP_STATE |
			       IBV_QP_EN_SQD_ASYNC_NOTIFY);
	if (r) {
		failf(name, "three WRITEs, then RTS -> SQD: got %s, expected 0",
		      errname(r));
		goto out;
	}
	if (!wait_qp_event(p.a, IBV_EVENT_SQ_DRAINED, 10000, seen,
			   sizeof(seen))) {
		failf(name, "no SQ_DRAINED within 10 s (events: %s)", seen);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 +
	     (t1.tv_nsec - t0.tv_nsec) / 1000000;
	if (!ackreq_landed(&p, 49, 52))
		failf(name, "the three WRITEs did not land");
	else if (ms >= 1500)
		failf(name, "SQ_DRAINED after %d ms: the unasked tail waited for the 2.1 s ACK timer",
		      ms);
	else if (ackreq_counter("ackreq_probes") - probe0 != 1)
		failf(name, "ackreq_probes moved %ld, expected 1",
		      ackreq_counter("ackreq_probes") - probe0);
	else
		pass(name);
	qa.qp_state = IBV_QPS_RTS;
	r = ibv_modify_qp(p.a, &qa, IBV_QP_STATE);
	if (r) {
		failf("ackreq_tail_timer_probe", "SQD -> RTS: got %s, expected 0",
		      errname(r));
		goto out;
	}

	/* the ACK timer: a probe, no retry; then a signaled WRITE completes */
	name = "ackreq_tail_timer_probe";
	probe0 = ackreq_counter("ackreq_probes");
	for (i = 52, r = 0; i < 55 && !r; i++)
		r = ackreq_write(&p, i * 64, 100 + i, 0);
	if (r) {
		failf(name, "post WRITE: got %s, expected 0", errname(r));
		goto out;
	}
	usleep(5000000);	/* past 2.1 s: one probe, its ACK stops the timer */
	if (ackreq_counter("ackreq_probes") - probe0 != 1) {
		failf(name, "ackreq_probes moved %ld in 5 s, expected 1",
		      ackreq_counter("ackreq_probes") - probe0);
		goto out;
	}
	r = ackreq_write(&p, 55 * 64, 155, IBV_SEND_SIGNALED);
	if (r) {
		failf(name, "post WRITE: got %s, expected 0", errname(r));
		goto out;
	}
	if (want_wc(name, p.cqa, 155, IBV_WC_SUCCESS, 10000))
		goto out;
	if (!ackreq_landed(&p, 52, 56))
		failf(name, "the four WRITEs did not land");
	else if (ackreq_counter("retry_timeout") != rto0)
		failf(name, "retry_timeout moved %ld: a probe counted as a retry",
		      ackreq_counter("retry_timeout") - rto0);
	else
		pass(name);

	/*
	 * A WQE that fails before sending (a bad L_Key) completes only after
	 * the unsignaled one before it: that one's ACK is asked for at once.
	 */
	name = "ackreq_tail_before_error";
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = ackreq_write(&p, 56 * 64, 156, 0);
	bad_sge = (struct ibv_sge){ (uintptr_t)p.bufa, 64, p.mra->lkey ^ 0x00f0f000 };
	wr.wr_id = 157;
	wr.sg_list = &bad_sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)p.bufb + 57 * 64;
	wr.wr.rdma.rkey = p.mrb->rkey;
	r = r ?: ibv_post_send(p.a, &wr, &bad);
	if (r) {
		failf(name, "post WRITEs: got %s, expected 0", errname(r));
		goto out;
	}
	r = poll1(p.cqa, &wc, 10000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 +
	     (t1.tv_nsec - t0.tv_nsec) / 1000000;
	if (r != 1 || wc.wr_id != 157 || wc.status != IBV_WC_LOC_PROT_ERR)
		failf(name, "bad L_Key WRITE: got %s wr_id %llu, expected wr_id 157 LOC_PROT_ERR",
		      r == 1 ? st(wc.status) : "no completion",
		      r == 1 ? (unsigned long long)wc.wr_id : 0ULL);
	else if (ms >= 1500)
		failf(name, "LOC_PROT_ERR after %d ms: it waited for the 2.1 s ACK timer",
		      ms);
	else if (!ackreq_landed(&p, 56, 57))
		failf(name, "the unsignaled WRITE before it did not land");
	else
		pass(name);
out:
	pair_down(&p);
}

/*
 * a in RTS with local ACK timeout 0 (infinite) and retry_cnt 2, b in RESET,
 * which drops everything unanswered: what a sends stays outstanding for
 * ever.  @qa gets a's RTS attributes.  0, or -1 after failf().
 */
static int pair_deaf_peer(const char *name, struct pair *p,
			  struct ibv_qp_attr *qa)
{
	struct ibv_qp_attr rst = { .qp_state = IBV_QPS_RESET };
	int r;

	*qa = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS, .timeout = 0, .retry_cnt = 2,
		.rnr_retry = 7, .sq_psn = 0x2000, .max_rd_atomic = 1,
	};
	if (pair_alloc(name, p))
		return -1;
	r = connect_pair_rts(p, qa) ?: ibv_modify_qp(p->b, &rst, IBV_QP_STATE);
	if (r) {
		failf(name, "setup: connecting the pair (a: timeout 0) and b -> RESET failed: %s",
		      errname(r));
		return -1;
	}
	return 0;
}

/* a 64 B WRITE from a to b, wr_id @id: 0, or -1 after failf() */
static int post_deaf_write(const char *name, struct pair *p, uint64_t id)
{
	if (!post_rdma1(p->a, id, IBV_WR_RDMA_WRITE, p->bufa, 64,
			p->mra->lkey, p->bufb + 4096, p->mrb->rkey))
		return 0;
	failf(name, "post WRITE: %s", strerror(errno));
	return -1;
}

/*
 * Local ACK timeout 0 is infinite: a WRITE to a peer in RESET (which drops
 * it unanswered) neither completes nor counts a timeout.  A timeout set
 * SQD -> SQD, with the WRITE still outstanding, applies to it: the WRITE
 * then fails with RETRY_EXC_ERR after retry_cnt + 1 timeouts.
 */
static void t_ack_timeout_set(void)
{
	const char *name = "ack_timeout_set_in_sqd";
	struct ibv_qp_attr qa;
	struct ibv_wc wc;
	struct pair p;
	long rto0, rto1;
	int r;

	if (pair_deaf_peer(name, &p, &qa))
		goto out;
	rto0 = ackreq_counter("retry_timeout");
	if (post_deaf_write(name, &p, 41))
		goto out;
	/* 10 times the shortest timer (100 ms): none may run with timeout 0 */
	r = poll1(p.cqa, &wc, 1000);
	rto1 = ackreq_counter("retry_timeout");
	if (r != 0) {
		failf(name, "timeout 0: got %s for wr_id %llu, expected no completion",
		      r == 1 ? st(wc.status) : "a poll error",
		      r == 1 ? (unsigned long long)wc.wr_id : 0ULL);
		goto out;
	}
	if (rto0 < 0 || rto1 != rto0) {
		failf(name, "timeout 0: retry_timeout moved from %ld to %ld, expected no move",
		      rto0, rto1);
		goto out;
	}
	qa.qp_state = IBV_QPS_SQD;
	r = ibv_modify_qp(p.a, &qa, IBV_QP_STATE);
	if (r) {
		failf(name, "RTS -> SQD: got %s, expected 0", errname(r));
		goto out;
	}
	qa.timeout = 14;
	r = ibv_modify_qp(p.a, &qa, IBV_QP_STATE | IBV_QP_TIMEOUT);
	if (r) {
		failf(name, "SQD -> SQD with timeout 14: got %s, expected 0",
		      errname(r));
		goto out;
	}
	if (want_wc(name, p.cqa, 41, IBV_WC_RETRY_EXC_ERR, 10000))
		goto out;
	rto1 = ackreq_counter("retry_timeout");
	if (rto1 - rto0 != qa.retry_cnt + 1)
		failf(name, "retry_timeout moved %ld, expected retry_cnt + 1 = %d",
		      rto1 - rto0, qa.retry_cnt + 1);
	else
		pass(name);
out:
	pair_down(&p);
}

/* query_qp's sq_draining, -1 if the query failed */
static int sq_draining(struct ibv_qp *qp, struct ibv_qp_attr *qa)
{
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, qa, IBV_QP_STATE | IBV_QP_MAX_QP_RD_ATOMIC |
			 IBV_QP_AV, &ia))
		return -1;
	return qa->sq_draining;
}

/*
 * SQD -> SQD (10.3.1.5): some attributes may change only once the send
 * queue has drained, else an immediate error.  The initiator's RDMA READ
 * and atomic depth is one (READs answered early still hold their slots)
 * and the primary path another.  Once drained, both change.
 */
static void t_sqd_draining_attrs(void)
{
	const char *name = "sqd_draining_attrs";
	struct ibv_qp_attr qa, q = {};
	struct ibv_qp_attr sqd = { .qp_state = IBV_QPS_SQD };
	struct ibv_qp_init_attr ia;
	struct pair p;
	int r, i, d;

	if (pair_deaf_peer(name, &p, &qa))
		goto out;
	/* nothing outstanding: the drain is over at once */
	r = ibv_modify_qp(p.a, &sqd, IBV_QP_STATE);
	for (i = 0; !r && i < 100 && sq_draining(p.a, &q) != 0; i++)
		usleep(10000);
	if (r || i == 100) {
		failf(name, "an idle QP's RTS -> SQD: got %s, sq_draining %d after 1 s; expected 0, 0",
		      errname(r), q.sq_draining);
		goto out;
	}
	sqd.max_rd_atomic = 4;
	r = ibv_modify_qp(p.a, &sqd, IBV_QP_STATE | IBV_QP_MAX_QP_RD_ATOMIC);
	d = sq_draining(p.a, &q);
	if (r || d || q.max_rd_atomic != 4) {
		failf(name, "drained SQD -> SQD with max_rd_atomic 4: got %s, then max_rd_atomic %u, sq_draining %d; expected 0, 4, 0",
		      errname(r), q.max_rd_atomic, d);
		goto out;
	}
	sqd.ah_attr = q.ah_attr;
	r = ibv_modify_qp(p.a, &sqd, IBV_QP_STATE | IBV_QP_AV);
	if (r) {
		failf(name, "drained SQD -> SQD with the same AV: got %s, expected 0",
		      errname(r));
		goto out;
	}
	qa.qp_state = IBV_QPS_RTS;
	r = ibv_modify_qp(p.a, &qa, IBV_QP_STATE);
	if (r) {
		failf(name, "SQD -> RTS: got %s, expected 0", errname(r));
		goto out;
	}
	/* b in RESET drops it unanswered; timeout 0 waits for ever */
	if (post_deaf_write(name, &p, 51))
		goto out;
	/* on the wire before SQD, or SQD would not start it (C10-35) */
	for (i = 0; i < 100 && (ibv_query_qp(p.a, &q, IBV_QP_SQ_PSN, &ia) ||
				q.sq_psn != 0x2001); i++)
		usleep(10000);
	if (i == 100) {
		failf(name, "the WRITE did not leave within 1 s: sq_psn 0x%x, expected 0x2001",
		      q.sq_psn);
		goto out;
	}
	sqd.qp_state = IBV_QPS_SQD;
	r = ibv_modify_qp(p.a, &sqd, IBV_QP_STATE);
	if (r || sq_draining(p.a, &q) != 1) {
		failf(name, "RTS -> SQD with a WRITE unanswered: got %s, sq_draining %d; expected 0, 1",
		      errname(r), q.sq_draining);
		goto out;
	}
	sqd.max_rd_atomic = 2;
	r = ibv_modify_qp(p.a, &sqd, IBV_QP_STATE | IBV_QP_MAX_QP_RD_ATOMIC);
	d = sq_draining(p.a, &q);
	if (r != EBUSY || d != 1 || q.max_rd_atomic != 4) {
		failf(name, "draining SQD -> SQD with max_rd_atomic 2: got %s, then max_rd_atomic %u, sq_draining %d; expected EBUSY, 4, 1",
		      errname(r), q.max_rd_atomic, d);
		goto out;
	}
	r = ibv_modify_qp(p.a, &sqd, IBV_QP_STATE | IBV_QP_AV);
	if (r != EBUSY) {
		failf(name, "draining SQD -> SQD with an AV: got %s, expected EBUSY",
		      errname(r));
		goto out;
	}
	/* what the drain does not depend on still changes */
	sqd.retry_cnt = 3;
	r = ibv_modify_qp(p.a, &sqd, IBV_QP_STATE | IBV_QP_RETRY_CNT);
	if (r || qp_state(p.a) != IBV_QPS_SQD)
		failf(name, "draining SQD -> SQD with retry_cnt 3: got %s, state %s; expected 0, SQD",
		      errname(r), qps(qp_state(p.a)));
	else
		pass(name);
out:
	pair_down(&p);
}

static void t_mw(void)
{
	t_mw_advertised();
	t_mw_alloc(IBV_MW_TYPE_1, "mw_alloc_type1");
	t_mw_alloc(IBV_MW_TYPE_2, "mw_alloc_type2");
	t_mw_type1_write_read();
	t_mw_outside();
	t_mw_not_granted();
	t_mw_no_bind_access();
	t_mw_rebind_old_key();
	t_mw_dereg_busy();
	t_mw_type2_write();
	t_mw_uc_bind();
	t_mw_type2_zero_len();
	t_mw_type2_other_index();
	t_mw_type2_bind_verb();
	t_local_inv_reg_mr();
	t_reg_mr_hole();
	t_reg_mr_limit();
	t_reg_mr_pages_pinned();
	t_mw_type2_zero_based();
	t_mw_type2_local_inv();
	t_mw_type2_send_inv();
	t_mw_type1_local_inv();
	t_mw_type1_send_inv();
	t_mw_write_needs_lw();
	t_mw_bind_outside_mr();
	t_mw_bind_mr_other_pd();
	t_mw_bind_other_pd();
	t_mw_type1_zero_len();
	t_mw_dealloc_bound(IBV_MW_TYPE_1, "mw_type1_dealloc_bound_then_access");
	t_mw_dealloc_bound(IBV_MW_TYPE_2, "mw_type2_dealloc_bound_then_access");
	t_access_taken_midway(UT_DEREG_MR, "dereg_mr_midway_write_fails");
	t_access_taken_midway(UT_DEREG_MR_READ, "dereg_mr_midway_read_fails");
	t_access_taken_midway(UT_DEALLOC_MW1, "mw_type1_dealloc_midway_write_fails");
	t_access_taken_midway(UT_DEALLOC_MW2, "mw_type2_dealloc_midway_write_fails");
	t_access_taken_midway(UT_REBIND_MW1, "mw_type1_rebind_midway_write_fails");
	t_mw_two_windows();
	t_mw_type1_other_pd();
	t_mw_type2_other_qp();
	t_mw_type2_send_inv_other_qp();
	t_mw_type1_bind_then_write();
	t_mw_type2_bind_then_write();
	t_mw_type2_inv_free();
	t_mw_type2_inv_free_other_pd();
	t_mw_type2_bind_valid();
	t_mw_type2_qp_gone();
}

/* ---------------------------------------------------------------------- */
/*
 * IBA 1.5 memory placement extensions (Annex A19): ATOMIC WRITE and FLUSH.
 * rdma-core 44 names neither the device capabilities nor FLUSH; the values
 * are the kernel's uapi (ib_user_verbs.h).
 */
#define DEV_FLUSH_GLOBAL	(1ULL << 38)	/* IB_UVERBS_DEVICE_FLUSH_GLOBAL */
#define DEV_FLUSH_PERSISTENT	(1ULL << 39)	/* IB_UVERBS_DEVICE_FLUSH_PERSISTENT */
#define DEV_ATOMIC_WRITE	(1ULL << 40)	/* IB_UVERBS_DEVICE_ATOMIC_WRITE */
#define ACC_FLUSH_GLOBAL	(1 << 8)	/* IB_UVERBS_ACCESS_FLUSH_GLOBAL */
#define ACC_FLUSH_PERSISTENT	(1 << 9)	/* IB_UVERBS_ACCESS_FLUSH_PERSISTENT */
#define WC_FLUSH		8		/* IB_UVERBS_WC_FLUSH */
#define FLUSH_GLOBAL		1		/* IB_FLUSH_GLOBAL (placement type) */
#define FLUSH_PERSISTENT	2		/* IB_FLUSH_PERSISTENT */
#define FLUSH_RANGE		0		/* IB_FLUSH_RANGE (selectivity level) */
#define FLUSH_MR		1		/* IB_FLUSH_MR */

static uint64_t caps_ex(void)
{
	struct ibv_device_attr_ex ax = {};

	return ibv_query_device_ex(ctx, NULL, &ax) ? 0 : ax.device_cap_flags_ex;
}

/* An extended-QP pair (a posts with ibv_wr_*); -1 after reporting. */
static int mp_pair(const char *name, struct pair *p, uint64_t ops)
{
	int r;

	pair_send_ops = ops;
	r = pair_up(name, p, 7);
	pair_send_ops = 0;
	return r;
}

static int atomic_write1(struct pair *p, uint64_t id, void *raddr,
			 uint32_t rkey, const void *val)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(p->a);

	ibv_wr_start(qpx);
	qpx->wr_id = id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qpx, rkey, (uintptr_t)raddr, val);
	return ibv_wr_complete(qpx);
}

/*
 * rdma-core 44 has no ibv_wr_flush (tests/common/rxe_flush_wqe.h): an RDMA
 * WRITE is started with ibv_wr_*, found in the mmapped send ring by its
 * wr_id, rewritten as a FLUSH, and only then handed over by ibv_wr_complete.
 */
/* The RDMA WRITE WQE flush1 started: its wr_id, opcode and remote address. */
struct write_wqe {
	uint64_t id, va;
};

static int is_write_wqe(const unsigned char *w, const void *arg)
{
	const struct write_wqe *k = arg;
	uint64_t wid, ra;
	uint32_t op;

	memcpy(&wid, w, 8);
	memcpy(&op, w + SWQE_OPCODE, 4);
	memcpy(&ra, w + SWQE_WR, 8);
	return wid == k->id && op == IBV_WR_RDMA_WRITE && ra == k->va;
}

static int flush1(struct pair *p, uint64_t id, void *raddr, uint32_t len,
		  uint32_t rkey, uint8_t type, uint8_t level)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(p->a);
	struct write_wqe k = { id, (uintptr_t)raddr };
	unsigned char *slot;

	ibv_wr_start(qpx);
	qpx->wr_id = id;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx, rkey, k.va);
	ibv_wr_set_sge(qpx, p->mra->lkey, (uintptr_t)p->bufa, 0);
	slot = ring_find(64, SWQE_DMA + 24, is_write_wqe, &k);
	if (!slot) {
		ibv_wr_abort(qpx);
		return -2;
	}
	rxe_flush_wqe_fill(slot, k.va, len, rkey, type, level);
	return ibv_wr_complete(qpx);
}

/* The responder QP b also allows @extra remote access (RTS -> RTS). */
static int b_allows(const char *name, struct pair *p, int extra)
{
	struct ibv_qp_attr a = {
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ | extra,
	};
	int rc = ibv_modify_qp(p->b, &a, IBV_QP_ACCESS_FLAGS);

	if (rc)
		failf(name, "setup: modify_qp(access |= %#x): %s", extra,
		      errname(rc));
	return rc;
}

/* a's QP ended in Error after a NAKed request. */
static int want_a_err(const char *name, struct pair *p)
{
	enum ibv_qp_state s = qp_state(p->a);

	if (s == IBV_QPS_ERR)
		return 0;
	failf(name, "requester QP in %s after the error, expected ERR", qps(s));
	return -1;
}

static const uint8_t aw_val[8] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 };

/*
 * A19 ATOMIC WRITE: the 8 bytes land at the aligned VA exactly as given,
 * no neighbour changes, and the completion says ATOMIC_WRITE.
 */
static void t_atomic_write_ok(void)
{
	const char *name = "atomic_write_lands_8_bytes";
	struct pair p;
	int r;

	if (mp_pair(name, &p, IBV_QP_EX_WITH_ATOMIC_WRITE |
				IBV_QP_EX_WITH_RDMA_WRITE))
		goto out;
	r = atomic_write1(&p, 901, p.bufb + 64, p.mrb->rkey, aw_val);
	if (r) {
		failf(name, "ibv_wr_complete: got %s, expected 0", errname(r));
		goto out;
	}
	if (want_wc_op(name, p.cqa, 901, IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE,
		       NULL))
		goto out;
	if (memcmp(p.bufb + 64, aw_val, 8) || !bytes_are(p.bufb, 64, 0xbb) ||
	    !bytes_are(p.bufb + 72, BUF - 72, 0xbb))
		failf(name, "target bytes wrong: expected 11..88 at offset 64 and 0xbb elsewhere");
	else
		pass(name);
out:
	pair_down(&p);
}

/*
 * A19: an ATOMIC WRITE to a VA that is not 8-byte aligned is an invalid
 * request (NAK invalid request, class B): the requester completes it with
 * Remote Invalid Request Error and goes to Error; nothing is written.
 */
static void t_atomic_write_unaligned(void)
{
	const char *name = "atomic_write_unaligned_rem_inv_req";
	struct pair p;
	int r;

	if (mp_pair(name, &p, IBV_QP_EX_WITH_ATOMIC_WRITE))
		goto out;
	r = atomic_write1(&p, 902, p.bufb + 68, p.mrb->rkey, aw_val);
	if (r) {
		failf(name, "ibv_wr_complete: got %s, expected 0", errname(r));
		goto out;
	}
	if (want_wc_op(name, p.cqa, 902, IBV_WC_REM_INV_REQ_ERR, -1, NULL) ||
	    want_a_err(name, &p))
		goto out;
	if (!bytes_are(p.bufb, BUF, 0xbb))
		failf(name, "the target changed although the request was refused");
	else
		pass(name);
out:
	pair_down(&p);
}

/*
 * An ATOMIC WRITE needs remote write access on the R_Key (as rdma_rxe
 * checks it): without it, NAK Remote Access Error, so a Remote Access Error completion and the
 * requester in Error; nothing is written.
 */
static void t_atomic_write_no_access(void)
{
	const char *name = "atomic_write_no_remote_write_rem_access";
	struct ibv_mr *ro = NULL;
	struct pair p;
	int r;

	if (mp_pair(name, &p, IBV_QP_EX_WITH_ATOMIC_WRITE))
		goto out;
	ro = ibv_reg_mr(p.pd, p.bufb, BUF, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!ro) {
		failf(name, "setup: reg_mr: %s", strerror(errno));
		goto out;
	}
	r = atomic_write1(&p, 903, p.bufb + 64, ro->rkey, aw_val);
	if (r) {
		failf(name, "ibv_wr_complete: got %s, expected 0", errname(r));
		goto out;
	}
	if (want_wc_op(name, p.cqa, 903, IBV_WC_REM_ACCESS_ERR, -1, NULL) ||
	    want_a_err(name, &p))
		goto out;
	if (!bytes_are(p.bufb, BUF, 0xbb))
		failf(name, "the target changed although access was refused");
	else
		pass(name);
out:
	if (ro)
		ibv_dereg_mr(ro);
	pair_down(&p);
}

/*
 * A19 FLUSH, global visibility, of a range and of the whole region, after
 * an RDMA WRITE: both complete successfully as FLUSH and the written data
 * is there.  The region and the responder QP allow FLUSH_GLOBAL.
 */
static void t_flush_ok(void)
{
	const char *name = "flush_global_range_and_region";
	struct ibv_mr *fm = NULL;
	struct pair p;
	int r;

	if (mp_pair(name, &p, IBV_QP_EX_WITH_RDMA_WRITE) ||
	    b_allows(name, &p, ACC_FLUSH_GLOBAL))
		goto out;
	fm = ibv_reg_mr(p.pd, p.bufb, BUF, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | ACC_FLUSH_GLOBAL);
	if (!fm) {
		failf(name, "reg_mr with FLUSH_GLOBAL: %s", strerror(errno));
		goto out;
	}
	memset(p.bufa, 0x3c, 4096);
	r = mw_rdma(name, &p, IBV_WR_RDMA_WRITE, 910, p.bufa, 4096,
		    p.bufb + 4096, fm->rkey, IBV_WC_SUCCESS);
	if (r)
		goto out;
	r = flush1(&p, 911, p.bufb + 4096, 4096, fm->rkey, FLUSH_GLOBAL,
		   FLUSH_RANGE);
	if (r) {
		failf(name, "posting the FLUSH (range): %d", r);
		goto out;
	}
	if (want_wc_op(name, p.cqa, 911, IBV_WC_SUCCESS, WC_FLUSH, NULL))
		goto out;
	r = flush1(&p, 912, p.bufb, 0, fm->rkey, FLUSH_GLOBAL, FLUSH_MR);
	if (r) {
		failf(name, "posting the FLUSH (region): %d", r);
		goto out;
	}
	if (want_wc_op(name, p.cqa, 912, IBV_WC_SUCCESS, WC_FLUSH, NULL))
		goto out;
	if (!bytes_are(p.bufb + 4096, 8192 - 4096, 0x3c) || !bytes_are(p.bufb, 4096, 0xbb))
		failf(name, "target bytes wrong after WRITE + FLUSH");
	else
		pass(name);
out:
	if (fm)
		ibv_dereg_mr(fm);
	pair_down(&p);
}

/*
 * A FLUSH whose placement type the region does not allow (here: no flush
 * access at all; and persistent, which no region can have without
 * FLUSH_PERSISTENT advertised), or that the responder QP does not allow
 * (@qp_acc 0) although the region does, is a Remote Access Error.
 */
static void t_flush_no_access(uint8_t type, int qp_acc, const char *name)
{
	struct ibv_mr *fm = NULL;
	struct pair p;
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	int r;

	if (mp_pair(name, &p, IBV_QP_EX_WITH_RDMA_WRITE) ||
	    (qp_acc && b_allows(name, &p, qp_acc)))
		goto out;
	if (type == FLUSH_PERSISTENT || !qp_acc)
		acc |= ACC_FLUSH_GLOBAL;
	fm = ibv_reg_mr(p.pd, p.bufb, BUF, acc);
	if (!fm) {
		failf(name, "setup: reg_mr: %s", strerror(errno));
		goto out;
	}
	r = flush1(&p, 920, p.bufb, 4096, fm->rkey, type, FLUSH_RANGE);
	if (r) {
		failf(name, "posting the FLUSH: %d", r);
		goto out;
	}
	if (!want_wc_op(name, p.cqa, 920, IBV_WC_REM_ACCESS_ERR, -1, NULL) &&
	    !want_a_err(name, &p))
		pass(name);
out:
	if (fm)
		ibv_dereg_mr(fm);
	pair_down(&p);
}

/*
 * Not advertised, FLUSH must still end cleanly: the WQE completes in
 * error (no hang), nothing is written.
 */
static void t_flush_unadvertised(void)
{
	const char *name = "flush_unadvertised_completes_in_error";
	struct ibv_wc wc;
	struct pair p;
	int r;

	if (mp_pair(name, &p, IBV_QP_EX_WITH_RDMA_WRITE))
		goto out;
	r = flush1(&p, 930, p.bufb, 4096, p.mrb->rkey, FLUSH_GLOBAL, FLUSH_RANGE);
	if (r) {
		failf(name, "posting the FLUSH: %d", r);
		goto out;
	}
	r = poll1(p.cqa, &wc, 10000);
	if (r != 1)
		failf(name, "no completion within 10 s: the QP hangs");
	else if (wc.wr_id != 930 || wc.status == IBV_WC_SUCCESS)
		failf(name, "got wr_id %llu status %s, expected wr_id 930 in error",
		      (unsigned long long)wc.wr_id, st(wc.status));
	else if (!bytes_are(p.bufb, BUF, 0xbb))
		failf(name, "the target changed");
	else
		pass(name);
out:
	pair_down(&p);
}

/*
 * Flush access only with the capability (ib_check_mr_access): persistent
 * is never advertised, so reg_mr refuses it (EOPNOTSUPP where the kernel
 * knows the bit, EINVAL before 6.2); global only where advertised.
 */
static void t_flush_reg_mr(uint64_t caps)
{
	const char *name = "flush_access_reg_mr_follows_caps";
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	char *buf = aligned_alloc(4096, 4096);
	int want = caps & DEV_FLUSH_GLOBAL ? EOPNOTSUPP : EINVAL;
	struct ibv_mr *mr;

	if (!pd || !buf) {
		failf(name, "setup: pd/buffer");
		goto out;
	}
	if (caps & DEV_FLUSH_PERSISTENT) {
		failf(name, "the device advertises FLUSH_PERSISTENT: it has no persistent memory");
		goto out;
	}
	errno = 0;
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE | ACC_FLUSH_PERSISTENT);
	if (mr || errno != want) {
		failf(name, "reg_mr with FLUSH_PERSISTENT: got %s, expected %s",
		      mr ? "an MR" : errname(errno), errname(want));
		if (mr)
			ibv_dereg_mr(mr);
		goto out;
	}
	errno = 0;
	mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE | ACC_FLUSH_GLOBAL);
	if (caps & DEV_FLUSH_GLOBAL ? !mr : (mr || errno != EINVAL)) {
		failf(name, "reg_mr with FLUSH_GLOBAL: got %s with FLUSH_GLOBAL %sadvertised",
		      mr ? "an MR" : errname(errno),
		      caps & DEV_FLUSH_GLOBAL ? "" : "not ");
	} else {
		pass(name);
	}
	if (mr)
		ibv_dereg_mr(mr);
out:
	free(buf);
	if (pd)
		ibv_dealloc_pd(pd);
}

static void t_mem_placement(void)
{
	uint64_t caps = caps_ex();

	/* one without the other would be a half-done device */
	if (!(caps & DEV_ATOMIC_WRITE) != !(caps & DEV_FLUSH_GLOBAL))
		failf("mem_placement_caps_together",
		      "device_cap_flags_ex %#llx: ATOMIC_WRITE and FLUSH_GLOBAL must come together",
		      (unsigned long long)caps);
	t_flush_reg_mr(caps);
	if (caps & DEV_ATOMIC_WRITE) {
		t_atomic_write_ok();
		t_atomic_write_unaligned();
		t_atomic_write_no_access();
	}
	if (caps & DEV_FLUSH_GLOBAL) {
		t_flush_ok();
		t_flush_no_access(FLUSH_GLOBAL, ACC_FLUSH_GLOBAL,
				  "flush_without_flush_access_rem_access");
		t_flush_no_access(FLUSH_PERSISTENT,
				  ACC_FLUSH_GLOBAL | ACC_FLUSH_PERSISTENT,
				  "flush_persistent_rem_access");
		t_flush_no_access(FLUSH_GLOBAL, 0,
				  "flush_qp_without_flush_access_rem_access");
	} else {
		t_flush_unadvertised();
	}
}

int main(int argc, char **argv)
{
	const char *devname = "sroce0";
	struct ibv_device **list;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int i, n, o;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((o = getopt(argc, argv, "d:g:")) != -1) {
		switch (o) {
		case 'd': devname = optarg; break;
		case 'g': gid_index = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-d DEV] [-g GID_INDEX]\n", argv[0]);
			return 2;
		}
	}
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), devname))
			break;
	if (!list || i == n) {
		printf("FAIL open_device: %s not found\n0 passed, 1 failed\n", devname);
		return 1;
	}
	ctx = ibv_open_device(list[i]);
	if (!ctx || ibv_query_device(ctx, &dattr)) {
		printf("FAIL open_device: %s\n0 passed, 1 failed\n", strerror(errno));
		return 1;
	}
	printf("# %s: max_cqe %d max_qp_wr %d max_sge %d max_srq_wr %d\n", devname,
	       dattr.max_cqe, dattr.max_qp_wr, dattr.max_sge, dattr.max_srq_wr);
	if (gid_index < 0) {
		/* first IPv4-mapped GID */
		for (i = 0; i < 16; i++) {
			if (ibv_query_gid(ctx, 1, i, &gid))
				continue;
			if (gid.raw[10] == 0xff && gid.raw[11] == 0xff) {
				gid_index = i;
				break;
			}
		}
	}
	if (gid_index < 0 || ibv_query_gid(ctx, 1, gid_index, &gid)) {
		printf("FAIL gid: no usable GID index\n0 passed, 1 failed\n");
		return 1;
	}
	printf("# gid index %d\n", gid_index);

	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!pd || !cq) {
		printf("FAIL setup: pd/cq: %s\n0 passed, 1 failed\n", strerror(errno));
		return 1;
	}
	t_cq();
	t_qp_caps(pd, cq);
	t_mr(pd);
	t_mcast(pd, cq);
	t_modify(pd, cq);
	t_pkey_table(pd, cq);
	t_qp_reset_reuse();
	t_srq(pd);
	t_busy();
	t_srq_busy();
	t_special_qp_port(pd, cq);
	t_write_ok();
	t_sg_lists();
	t_atomic_rc_only();
	t_atomic_two_qps_serialized();
	t_cq_split_events();
	t_cq_arm_once();
	t_ud_immediate_err();
	t_sq_depth1_repost();
	t_wc_buffers_left_alone(0, "wc_buffers_left_alone");
	t_wc_buffers_left_alone(1, "wc_buffers_left_alone_uc");
	t_cqe_once_write_imm_bad_rkey();
	t_cqe_once_err_mid_send();
	t_user_inline_num_sge();
	t_recv_malformed_user_wqe();
	t_atomic_unaligned();
	t_sge_sum_over_max_msg();
	t_uc_immediate_err();
	t_uc_recv_err();
	t_uc_drops();
	t_read_into_ro_mr();
	t_qp_rdma_disabled();
	t_mr_remote_rights();
	t_zero_len_no_checks();
	t_ud_zero_len_grh_checked();
	t_ud_over_mtu();
	t_post_before_rts();
	t_write_bad_rkey();
	t_async_inv_req();
	t_resp_err_flushes_own_wrs();
	t_async_srq();
	t_async_cq_overflow();
	t_cq_overflow_ends_qp(IBV_QPT_RC, "cq_overflow_ends_qp_rc");
	t_cq_overflow_ends_qp(IBV_QPT_UC, "cq_overflow_ends_qp_uc");
	t_cq_overflow_ends_qp(IBV_QPT_UD, "cq_overflow_ends_qp_ud");
	t_cq_overflow_recv_not_acked();
	t_rnr();
	t_sqd_drain("sqd_drained_event", 100);
	t_sqd_drain("sqd_drained_event_multi_packet", 20000);
	t_recv_local_prot_err();
	t_recv_posted_in_err();
	t_dealloc_pd_in_use();
	t_ud_qkey();
	t_ud_dest_is_ah();
	t_recv_posted_in_err_many();
	t_rc_dest_from_qp_only();
	t_uc_sqe();
	t_ud_sqe();
	t_mcast_loopback();
	t_rtr_incoming();
	t_sqd_incoming();
	t_state_drops(0);
	t_state_drops(1);
	t_mr_protection();
	t_srq_pd();
	t_ah_other_pd();
	t_ah_destroyed_outstanding();
	t_mr_overlap();
	t_read_bad_lkey_range();
	t_cq_resize();
	t_srq_resize();
	t_srq_two_qps();
	t_srq_states();
	t_fence_read_then_send();
	t_atomic_write_refused();
	t_mem_placement();
	t_mw();
	t_rereg_mr();
	t_unsignaled();
	t_sq_sig_all();
	t_self_loop();
	t_ackreq();
	t_ack_timeout_set();
	t_sqd_draining_attrs();
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
