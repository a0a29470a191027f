// SPDX-License-Identifier: GPL-2.0
/*
 * What a message costs before any driver work: the floor under make
 * bench's small-message points.  On one RC QP connected to itself:
 *   syscall   a getppid() system call (entry and exit alone);
 *   doorbell  librxe's doorbell, a POST_SEND write() with no WR, on an
 *             empty send queue: syscall, uverbs' command handling and the
 *             driver's look at a ring with nothing new;
 *   write64   ibv_post_send of one 64 B RDMA WRITE to itself, one in 64
 *             signaled and polled: a message's whole cost, one by one;
 *   write2rt  a signaled 2 B WRITE posted and its completion polled: the
 *             request, the responder and its ACK, the completion.
 * Prints "<name> <usec per op>" lines; run it for each driver in the
 * same guest.  Usage: doorbell_floor DEV GID_INDEX [N]
 */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "doorbell_floor: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void poll_one(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int n;

	while (!(n = ibv_poll_cq(cq, 1, &wc)))
		;
	if (n < 0 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "doorbell_floor: completion %d status %s\n", n,
			n < 0 ? "-" : ibv_wc_status_str(wc.status));
		exit(1);
	}
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = { 0 };
	struct ibv_qp_attr a = { 0 };
	struct ibv_qp *qp;

	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 128;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	qp = ibv_create_qp(pd, &ia);
	if (!qp)
		die("create qp");
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("INIT");
	return qp;
}

static void connect_qp(struct ibv_qp *qp, uint32_t dqpn, union ibv_gid *gid,
		       int gidx, enum ibv_mtu mtu)
{
	struct ibv_qp_attr a = { 0 };

	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		die("RTS");
}

/* 64 B WRITEs one in 64 signaled, then signaled 2 B WRITEs one at a time */
static void writes(const char *name, struct ibv_qp *qp, struct ibv_cq *cq,
		   struct ibv_mr *mr, long n)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge;
	double t;
	long i;

	sge.addr = (uintptr_t)mr->addr;
	sge.lkey = mr->lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)mr->addr + 4096;
	wr.wr.rdma.rkey = mr->rkey;
	sge.length = 64;
	t = now();
	for (i = 0; i < n; i++) {
		wr.send_flags = (i % 64 == 63) ? IBV_SEND_SIGNALED : 0;
		if (ibv_post_send(qp, &wr, &bad))
			die("post 64 B WRITE");
		if (wr.send_flags)
			poll_one(cq);
	}
	printf("write64_%s %.3f\n", name, (now() - t) * 1e6 / n);

	sge.length = 2;
	wr.send_flags = IBV_SEND_SIGNALED;
	n /= 4;
	t = now();
	for (i = 0; i < n; i++) {
		if (ibv_post_send(qp, &wr, &bad))
			die("post 2 B WRITE");
		poll_one(cq);
	}
	printf("write2rt_%s %.3f\n", name, (now() - t) * 1e6 / n);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_port_attr port;
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp, *qa, *qb;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send ps;
	} db = { 0 };
	struct ib_uverbs_post_send_resp resp;
	static char buf[8192];
	long i, n;
	int gidx;
	double t;

	if (argc < 3) {
		fprintf(stderr, "usage: doorbell_floor DEV GID_INDEX [N]\n");
		return 2;
	}
	gidx = atoi(argv[2]);
	n = argc > 3 ? atol(argv[3]) : 100000;
	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("open device");
	if (ibv_query_port(ctx, 1, &port) || ibv_query_gid(ctx, 1, gidx, &gid))
		die("query port");
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 256, NULL, NULL, 0) : NULL;
	mr = cq ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE) : NULL;
	if (!mr)
		die("pd, cq or mr");
	qp = make_qp(pd, cq);
	qa = make_qp(pd, cq);
	qb = make_qp(pd, cq);
	connect_qp(qp, qp->qp_num, &gid, gidx, port.active_mtu);
	connect_qp(qa, qb->qp_num, &gid, gidx, port.active_mtu);
	connect_qp(qb, qa->qp_num, &gid, gidx, port.active_mtu);

	t = now();
	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
	printf("syscall %.3f\n", (now() - t) * 1e6 / n);

	db.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	db.hdr.in_words = sizeof(db) / 4;
	db.hdr.out_words = sizeof(resp) / 4;
	db.ps.response = (unsigned long)&resp;
	db.ps.qp_handle = qp->handle;
	db.ps.wqe_size = sizeof(struct ibv_send_wr);
	t = now();
	for (i = 0; i < n; i++)
		if (write(ctx->cmd_fd, &db, sizeof(db)) != sizeof(db))
			die("doorbell write");
	printf("doorbell %.3f\n", (now() - t) * 1e6 / n);

	/* uverbs' handling without the driver: a QP handle that is not there */
	db.ps.qp_handle = ~0U;
	t = now();
	for (i = 0; i < n; i++)
		if (write(ctx->cmd_fd, &db, sizeof(db)) >= 0)
			die("doorbell on no QP");
	printf("doorbell_noqp %.3f\n", (now() - t) * 1e6 / n);

	writes("self", qp, cq, mr, n);
	writes("pair", qa, cq, mr, n);

	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
