// SPDX-License-Identifier: GPL-2.0
/*
 * QP/MR helper for the robust VM suite: builds a connected loopback RC QP
 * pair on one device and exposes it to tests/vm/robust/pktgen.py, which
 * then injects requests at it.
 *
 *   qp_helper [-d DEV] [-g GID_INDEX] [-M MTU] hold [-s BYTES] [-m MODE] [-r BYTES] [-R N] [-u] [-O] [-w] [-W]
 *       QP pair A (target) <-> B, and an MR of -s BYTES (default 1 MiB)
 *       with IBV_ACCESS_REMOTE_READ only, in A's PD. MODE picks its memory:
 *         heap   malloc + memset (real memory)
 *         zero   an untouched PROT_READ anonymous mmap: every page is the
 *                shared zero page, so pinning would cost nothing if the
 *                kernel pinned the zero page as it is. Neither Debian
 *                kernel does: 6.1's ib_umem_get pins with
 *                FOLL_WRITE|FOLL_FORCE (COW breaks, a private copy per
 *                page), and 6.12 also gives every page a private copy
 *                (measured: RssAnon +16 MiB for a 16 MiB MR).
 *         alias  one 8 MiB memfd mapped MAP_SHARED over and over to fill
 *                the range: pinning costs 8 MiB whatever the size, on
 *                every kernel (shared pages never COW).
 *         auto   (default) register a 16 MiB zero-page MR first and watch
 *                RssAnon: "zero" if it stays flat, else "alias".
 *       With -r BYTES, B first RDMA READs BYTES from the MR (the "old
 *       READ" whose responder resource duplicates will hit) and must
 *       complete successfully with the MR's bytes (a READ of more than
 *       8 MiB needs alias memory and lands in an alias buffer too: its
 *       8 MiB, where the last 8 MiB of the READ landed, are compared).
 *       Then prints one line
 *         READY qpn=A peer_qpn=B epsn=.. old_psn=.. old_len=.. rkey=..
 *               va=.. len=.. mtu=.. mode=.. reg_ms=.. reg_cost_kb=..
 *       (epsn: the PSN A expects next) and sleeps until killed. With -R N,
 *       A first posts N receive WQEs (wr_id 100.., 2 MTUs each), and after
 *       READY every completion of A's is printed as
 *         CQE qpn=A wr_id=.. status=<enum ibv_wc_status> byte_len=.. head=..
 *       (head: the receive buffer's first byte, hex, 00 unless the
 *       completion succeeded with data) until killed.  With -u the pair is
 *       UC (remote write only; not with -r).  With -W (watch), SIGTERM
 *       ends it: for the old READ's buffer and each receive buffer whose
 *       completion was printed, it prints whether a byte changed since the
 *       completion was polled, and for each receive WQE never completed
 *       whether its buffer is still all zero:
 *         WATCH lbuf|obuf|wr_id=N unchanged|untouched|changed at byte K
 *       then "WATCH done", and exits 0.  With -O (and -r), once the old
 *       READ was polled, A goes to Error (it answers nothing more) and B
 *       (with no ACK timeout for this) posts a second READ of as many
 *       bytes into "obuf" (watched: must stay zero), which stays open;
 *       READY adds open_psn= (its first PSN) and the report
 *         WATCH open_read open|completed status=<enum ibv_wc_status>
 *       With -w (and -m heap) the MR also takes remote writes, and -W
 *       watches it whole from READY on ("tbuf": must stay unchanged).
 *
 *   qp_helper [-d DEV] [-g GID_INDEX] churn [-n ROUNDS] [-t LIVE_MS]
 *       Per round: "CREATE round=i", 200 ms pause, then a 64 KiB MR
 *       (local write, remote write/read) and a fresh pair A <-> B;
 *       "LIVE round=i qpn=A peer_qpn=B psn=<A's rq_psn> rkey=.. va=..
 *       len=.. mtu=..", LIVE_MS (default 1000) of life, then teardown:
 *       even rounds deregister the MR first, wait LIVE_MS/2 (packets now
 *       hit a live QP with a dead R_Key), then destroy A and B; odd rounds
 *       destroy A first, wait LIVE_MS/2 (a dead QP, live MR), then B and
 *       the MR. "DEAD round=i qpn=A peer_qpn=B rkey=.." once everything of
 *       the round is gone, LIVE_MS/2 more, next round. "DONE rounds=N".
 *
 * -M MTU: the pairs' path MTU in bytes (default the port's active MTU,
 * at most 4096).
 *
 * Any verbs failure prints "FAIL <what>: <error>" and exits 1.
 * Build: gcc -O2 -Wall -o build/robust/qp_helper tests/vm/robust/qp_helper.c -libverbs
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static int gid_index = -1;
static union ibv_gid gid;
static enum ibv_mtu path_mtu = IBV_MTU_1024;
static uint32_t mtu_bytes = 1024;

#define QP_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		   IBV_ACCESS_REMOTE_READ)
#define ALIAS_CHUNK (8UL << 20)

static void die(const char *what, int err)
{
	printf("FAIL %s: %s\n", what, strerror(err));
	fflush(stdout);
	exit(1);
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* A "Key: N kB" line of a /proc file, in kB (-1 if absent). */
static long proc_kb(const char *file, const char *key)
{
	char line[256];
	size_t n = strlen(key);
	long v = -1;
	FILE *f = fopen(file, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* hold -u: the pair is UC */
static enum ibv_qp_type qp_type = IBV_QPT_RC;
/* the local ACK timeout, 4.096 us << this; 0: none (hold -O) */
static uint8_t ack_timeout = 14;

static struct ibv_qp *mk_qp(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = qp_type,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp)
		die("ibv_create_qp", errno);
	return qp;
}

static void connect_qp(struct ibv_qp *qp, uint32_t dqpn, uint32_t rq_psn,
		       uint32_t sq_psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = qp_type == IBV_QPT_UC ?
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE : QP_ACCESS,
	};
	int uc = qp_type == IBV_QPT_UC, rc;

	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (rc)
		die("modify_qp INIT", rc);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = path_mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 64;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			   (uc ? 0 : IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER));
	if (rc)
		die("modify_qp RTR", rc);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = ack_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = sq_psn;
	a.max_rd_atomic = 16;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			   (uc ? 0 : IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC));
	if (rc)
		die("modify_qp RTS", rc);
}

/* A and B connected to each other: A receives at a_rq_psn from B. */
static void pair_up(struct ibv_qp **a, struct ibv_qp **b, uint32_t a_rq_psn,
		    uint32_t b_rq_psn)
{
	*a = mk_qp();
	*b = mk_qp();
	connect_qp(*a, (*b)->qp_num, a_rq_psn, b_rq_psn);
	connect_qp(*b, (*a)->qp_num, b_rq_psn, a_rq_psn);
}

static void *map_alias(size_t size)
{
	size_t off, n;
	char *base;
	int fd;

	fd = memfd_create("qp_helper", 0);
	if (fd < 0)
		die("memfd_create", errno);
	if (ftruncate(fd, ALIAS_CHUNK))
		die("ftruncate", errno);
	base = mmap(NULL, size, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		die("mmap reserve", errno);
	for (off = 0; off < size; off += ALIAS_CHUNK) {
		n = size - off < ALIAS_CHUNK ? size - off : ALIAS_CHUNK;
		if (mmap(base + off, n, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
			die("mmap alias", errno);
	}
	/* 0x5a first; each 256 B of the chunk differs from its neighbours */
	for (off = 0; off < (size < ALIAS_CHUNK ? size : ALIAS_CHUNK); off++)
		base[off] = 0x5a ^ (char)(off >> 8);
	close(fd);
	return base;
}

static void *map_zero(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		die("mmap zero", errno);
	return p;
}

/* Is a read-only MR over zero pages free on this kernel? */
static int zero_is_cheap(void)
{
	const size_t probe = 16UL << 20;
	long rss0, rss1;
	struct ibv_mr *mr;
	void *p = map_zero(probe);
	int cheap;

	rss0 = proc_kb("/proc/self/status", "RssAnon");
	mr = ibv_reg_mr(pd, p, probe, IBV_ACCESS_REMOTE_READ);
	if (!mr)
		die("ibv_reg_mr (16 MiB zero-page probe)", errno);
	rss1 = proc_kb("/proc/self/status", "RssAnon");
	ibv_dereg_mr(mr);
	munmap(p, probe);
	cheap = rss1 - rss0 < 2048;
	printf("probe: a read-only MR over 16 MiB of untouched anonymous memory "
	       "grew RssAnon by %ld kB: %s\n", rss1 - rss0,
	       cheap ? "zero pages are pinned as they are" :
	       "pinning gave every page a private copy, using alias mode");
	return cheap;
}

/*
 * hold -W: C10-107, a buffer is not touched once its completion was
 * polled.  Each watched buffer keeps a copy of what it held then.
 */
struct watch {
	const unsigned char *buf;
	unsigned char *copy;	/* NULL: never completed, must stay zero */
	size_t len;
	char what[24];
};
static struct watch watches[64];
static int nwatch, watching;
static volatile sig_atomic_t stop;
/* hold -O: B's READ that A never answers */
static struct ibv_qp *open_qp;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static struct watch *watch_add(const void *buf, size_t len, const char *what)
{
	struct watch *w = &watches[nwatch];

	if (nwatch == (int)(sizeof(watches) / sizeof(watches[0])))
		die("watch", ENOSPC);
	nwatch++;
	w->buf = buf;
	w->len = len;
	snprintf(w->what, sizeof(w->what), "%s", what);
	return w;
}

/* Its completion was polled: what it holds now must stay. */
static void watch_polled(struct watch *w)
{
	w->copy = malloc(w->len);
	if (!w->copy)
		die("malloc", ENOMEM);
	memcpy(w->copy, w->buf, w->len);
}

static void watch_report(void)
{
	struct ibv_wc wc;
	int i;

	if (open_qp) {
		const char *st = "open";
		char buf[32];

		while (ibv_poll_cq(cq, 1, &wc) == 1)
			if (wc.qp_num == open_qp->qp_num && wc.wr_id == 2) {
				snprintf(buf, sizeof(buf), "completed status=%d",
					 wc.status);
				st = buf;
			}
		printf("WATCH open_read %s\n", st);
	}

	for (i = 0; i < nwatch; i++) {
		const struct watch *w = &watches[i];
		size_t k;

		for (k = 0; k < w->len; k++)
			if (w->buf[k] != (w->copy ? w->copy[k] : 0))
				break;
		if (k < w->len)
			printf("WATCH %s changed at byte %zu\n", w->what, k);
		else
			printf("WATCH %s %s\n", w->what,
			       w->copy ? "unchanged" : "untouched");
	}
	printf("WATCH done\n");
	fflush(stdout);
	exit(0);
}

/* N receive WQEs on qp (wr_id 100..), two MTUs each. */
/* post_recvs' buffer: receive wr_id 100 + i at rbuf + i * rlen */
static unsigned char *rbuf;
static size_t rlen;

static void post_recvs(struct ibv_qp *qp, int n)
{
	size_t len = rlen = 2 * (size_t)mtu_bytes;

	rbuf = aligned_alloc(4096, (n * len + 4095) & ~4095UL);
	struct ibv_mr *rmr;
	int i, rc;

	if (!rbuf)
		die("aligned_alloc", ENOMEM);
	memset(rbuf, 0, n * len);
	rmr = ibv_reg_mr(pd, rbuf, n * len, IBV_ACCESS_LOCAL_WRITE);
	if (!rmr)
		die("ibv_reg_mr (receive)", errno);
	for (i = 0; i < n; i++) {
		struct ibv_sge sge = { (uintptr_t)rbuf + i * len, len, rmr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 100 + i, .sg_list = &sge, .num_sge = 1 };
		struct ibv_recv_wr *bad;

		rc = ibv_post_recv(qp, &wr, &bad);
		if (rc)
			die("ibv_post_recv", rc);
		if (watching) {
			char what[24];

			snprintf(what, sizeof(what), "wr_id=%d", 100 + i);
			watch_add(rbuf + i * len, len, what);
		}
	}
}

/* Print qp's completions as they come, for ever. */
static void print_cqes(struct ibv_qp *qp)
{
	struct ibv_wc wc;
	int i;

	while (!stop) {
		while (ibv_poll_cq(cq, 1, &wc) == 1) {
			if (wc.qp_num != qp->qp_num)
				continue;
			printf("CQE qpn=%u wr_id=%" PRIu64 " status=%d byte_len=%u head=%02x\n",
			       wc.qp_num, wc.wr_id, wc.status, wc.byte_len,
			       wc.status == IBV_WC_SUCCESS && wc.byte_len ?
			       rbuf[(wc.wr_id - 100) * rlen] : 0);
			fflush(stdout);
			for (i = 0; i < nwatch; i++)
				if (watches[i].buf == rbuf + (wc.wr_id - 100) * rlen)
					watch_polled(&watches[i]);
		}
		sleep_ms(10);
	}
	watch_report();
}

/*
 * hold -r/-O: B posts a signaled READ of @len bytes at @remote through
 * @mr into a new zeroed local buffer, which it returns.
 */
static char *post_read(struct ibv_qp *b, const struct ibv_mr *mr,
		       const void *remote, size_t len, uint64_t wr_id,
		       const char *what)
{
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_sge sge;
	struct ibv_mr *lmr;
	char *lbuf, msg[64];
	int rc;

	if (len > ALIAS_CHUNK) {
		lbuf = map_alias(len);
		memset(lbuf, 0, ALIAS_CHUNK);
	} else {
		lbuf = aligned_alloc(4096, (len + 4095) & ~4095UL);
		if (!lbuf)
			die("aligned_alloc", ENOMEM);
		memset(lbuf, 0, len);
	}
	lmr = ibv_reg_mr(pd, lbuf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!lmr) {
		snprintf(msg, sizeof(msg), "ibv_reg_mr (%s)", what);
		die(msg, errno);
	}
	sge.addr = (uintptr_t)lbuf;
	sge.length = len;
	sge.lkey = lmr->lkey;
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)remote;
	wr.wr.rdma.rkey = mr->rkey;
	rc = ibv_post_send(b, &wr, &bad);
	if (rc) {
		snprintf(msg, sizeof(msg), "ibv_post_send (%s)", what);
		die(msg, rc);
	}
	return lbuf;
}

static int cmd_hold(int argc, char **argv)
{
	size_t size = 1UL << 20, old_len = 0;
	const char *mode = "auto";
	struct ibv_mr *mr;
	struct ibv_qp *a, *b;
	long mem0, mem1;
	uint64_t t0, t1;
	uint32_t psn0 = 0x1000, epsn;
	char *buf, *lbuf = NULL;
	int o, nrecv = 0, open_read = 0, writable = 0;
	uint32_t open_psn = 0;

	while ((o = getopt(argc, argv, "s:m:r:R:uOwW")) != -1) {
		switch (o) {
		case 'w': writable = 1; break;
		case 'O': open_read = 1; break;
		case 'W': watching = 1; break;
		case 'R': nrecv = atoi(optarg); break;
		case 'u': qp_type = IBV_QPT_UC; break;
		case 's': size = strtoull(optarg, NULL, 0); break;
		case 'm': mode = optarg; break;
		case 'r': old_len = strtoull(optarg, NULL, 0); break;
		default: return 2;
		}
	}
	if (open_read && (!old_len || nrecv)) {
		printf("FAIL usage: -O needs -r and no -R\n");
		return 2;
	}
	if (old_len && qp_type == IBV_QPT_UC) {
		printf("FAIL usage: -r needs RC, not -u\n");
		return 2;
	}
	if (old_len > size) {
		printf("FAIL usage: -r %zu larger than -s %zu\n", old_len, size);
		return 2;
	}
	if (writable && strcmp(mode, "heap")) {
		printf("FAIL usage: -w needs -m heap\n");
		return 2;
	}
	if (!strcmp(mode, "auto"))
		mode = zero_is_cheap() ? "zero" : "alias";
	if (old_len > ALIAS_CHUNK && strcmp(mode, "alias")) {
		printf("FAIL usage: -r over %lu bytes needs alias memory (-m %s)\n",
		       ALIAS_CHUNK, mode);
		return 2;
	}
	mem0 = proc_kb("/proc/meminfo", "MemAvailable");
	if (!strcmp(mode, "heap")) {
		buf = aligned_alloc(4096, (size + 4095) & ~4095UL);
		if (!buf)
			die("aligned_alloc", ENOMEM);
		memset(buf, 0x5a, size);
	} else if (!strcmp(mode, "zero")) {
		buf = map_zero(size);
	} else if (!strcmp(mode, "alias")) {
		buf = map_alias(size);
	} else {
		printf("FAIL usage: unknown mode %s\n", mode);
		return 2;
	}
	t0 = now_ms();
	mr = ibv_reg_mr(pd, buf, size, IBV_ACCESS_REMOTE_READ |
			(writable ? IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_LOCAL_WRITE : 0));
	if (!mr)
		die("ibv_reg_mr (target)", errno);
	t1 = now_ms();
	mem1 = proc_kb("/proc/meminfo", "MemAvailable");
	printf("registered %zu bytes (%s) in %" PRIu64 " ms, MemAvailable %ld -> %ld kB\n",
	       size, mode, t1 - t0, mem0, mem1);
	fflush(stdout);

	if (open_read)
		ack_timeout = 0;	/* the open READ is never retried */
	pair_up(&a, &b, psn0, 0x200000);
	epsn = psn0;
	if (old_len) {
		struct ibv_wc wc;
		uint64_t end;
		int n = 0;

		lbuf = post_read(b, mr, buf, old_len, 1, "old READ");
		/* 60 s, and 1 s more per 4 MiB (a debug kernel) */
		end = now_ms() + 60000 + (old_len >> 12);
		while (now_ms() < end && (n = ibv_poll_cq(cq, 1, &wc)) == 0)
			sleep_ms(1);
		if (n != 1) {
			printf("FAIL old READ of %zu bytes: %s\n", old_len,
			       n < 0 ? "poll_cq failed" : "no completion in time");
			return 1;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			printf("FAIL old READ of %zu bytes: completion status %s\n",
			       old_len, ibv_wc_status_str(wc.status));
			return 1;
		}
		if (((unsigned char *)lbuf)[0] != 0x5a ||
		    memcmp(lbuf, buf, old_len < ALIAS_CHUNK ? old_len : ALIAS_CHUNK) ||
		    ((unsigned char *)lbuf)[old_len - 1] !=
		    ((unsigned char *)buf)[old_len - 1]) {
			printf("FAIL old READ of %zu bytes: data mismatch\n", old_len);
			return 1;
		}
		if (watching)
			watch_polled(watch_add(lbuf, old_len, "lbuf"));
		epsn = (psn0 + (old_len + mtu_bytes - 1) / mtu_bytes) & 0xffffff;
		printf("old READ of %zu bytes completed (PSN %#x..%#x)\n",
		       old_len, psn0, (epsn - 1) & 0xffffff);
	}
	if (open_read) {
		struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
		char *obuf;
		int rc;

		rc = ibv_modify_qp(a, &qa, IBV_QP_STATE);
		if (rc)
			die("modify_qp A to ERR", rc);
		obuf = post_read(b, mr, buf, old_len, 2, "open READ");
		if (watching)
			watch_add(obuf, old_len, "obuf");
		open_qp = b;
		open_psn = epsn;
		printf("open READ of %zu bytes posted (PSN %#x..), A in Error\n",
		       old_len, open_psn);
	}
	if (nrecv > 0)
		post_recvs(a, nrecv);
	if (writable && watching)
		watch_polled(watch_add(buf, size, "tbuf"));
	printf("READY qpn=%u peer_qpn=%u epsn=%u old_psn=%u old_len=%zu rkey=%u "
	       "va=%" PRIu64 " len=%zu mtu=%u mode=%s reg_ms=%" PRIu64
	       " reg_cost_kb=%ld open_psn=%u\n",
	       a->qp_num, b->qp_num, epsn, psn0, old_len, mr->rkey,
	       (uint64_t)(uintptr_t)buf, size, mtu_bytes, mode, t1 - t0,
	       mem0 - mem1, open_psn);
	fflush(stdout);
	if (watching)
		signal(SIGTERM, on_term);
	if (nrecv > 0)
		print_cqes(a);
	while (!stop)
		pause();
	watch_report();
	return 0;
}

static int cmd_churn(int argc, char **argv)
{
	unsigned int rounds = 10, live_ms = 1000, i;
	const size_t len = 64 << 10;
	char *buf;
	int o, rc;

	while ((o = getopt(argc, argv, "n:t:")) != -1) {
		switch (o) {
		case 'n': rounds = strtoul(optarg, NULL, 0); break;
		case 't': live_ms = strtoul(optarg, NULL, 0); break;
		default: return 2;
		}
	}
	buf = aligned_alloc(4096, len);
	if (!buf)
		die("aligned_alloc", ENOMEM);
	memset(buf, 0, len);
	srand(getpid());
	for (i = 0; i < rounds; i++) {
		uint32_t psn = (uint32_t)rand() & 0xffffff, rkey;
		struct ibv_qp *a, *b;
		struct ibv_mr *mr;
		uint32_t qa, qb;

		printf("CREATE round=%u\n", i);
		fflush(stdout);
		/* let pktgen stop aiming at dead QPNs before one can be reused */
		sleep_ms(200);
		mr = ibv_reg_mr(pd, buf, len, QP_ACCESS);
		if (!mr)
			die("ibv_reg_mr", errno);
		pair_up(&a, &b, psn, (psn + 0x800000) & 0xffffff);
		qa = a->qp_num;
		qb = b->qp_num;
		rkey = mr->rkey;
		printf("LIVE round=%u qpn=%u peer_qpn=%u psn=%u rkey=%u va=%" PRIu64
		       " len=%zu mtu=%u\n", i, qa, qb, psn, rkey,
		       (uint64_t)(uintptr_t)buf, len, mtu_bytes);
		fflush(stdout);
		sleep_ms(live_ms);
		if (i % 2 == 0) {
			rc = ibv_dereg_mr(mr);
			if (rc)
				die("ibv_dereg_mr", rc);
			sleep_ms(live_ms / 2);
			rc = ibv_destroy_qp(a) ?: ibv_destroy_qp(b);
			if (rc)
				die("ibv_destroy_qp", rc);
		} else {
			rc = ibv_destroy_qp(a);
			if (rc)
				die("ibv_destroy_qp", rc);
			sleep_ms(live_ms / 2);
			rc = ibv_destroy_qp(b) ?: ibv_dereg_mr(mr);
			if (rc)
				die("ibv_destroy_qp/ibv_dereg_mr", rc);
		}
		printf("DEAD round=%u qpn=%u peer_qpn=%u rkey=%u\n", i, qa, qb, rkey);
		fflush(stdout);
		sleep_ms(live_ms / 2);
	}
	printf("DONE rounds=%u\n", rounds);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dev = "sroce0";
	struct ibv_device **list;
	struct ibv_port_attr pa;
	int i, n, o, rc, want_mtu = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((o = getopt(argc, argv, "+d:g:M:")) != -1) {
		switch (o) {
		case 'd': dev = optarg; break;
		case 'g': gid_index = atoi(optarg); break;
		case 'M': want_mtu = atoi(optarg); break;
		default: return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: qp_helper [-d DEV] [-g GIDX] [-M MTU] hold|churn [options]\n");
		return 2;
	}
	list = ibv_get_device_list(&n);
	if (!list)
		die("ibv_get_device_list", errno);
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			break;
	if (i == n) {
		printf("FAIL device %s not found\n", dev);
		return 1;
	}
	ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("ibv_open_device", errno);
	rc = ibv_query_port(ctx, 1, &pa);
	if (rc)
		die("ibv_query_port", rc);
	path_mtu = pa.active_mtu < IBV_MTU_4096 ? pa.active_mtu : IBV_MTU_4096;
	if (want_mtu) {
		for (o = IBV_MTU_256; o < (int)path_mtu && (128 << o) != want_mtu; o++)
			;
		if ((128 << o) != want_mtu) {
			printf("FAIL usage: -M %d: not an IB MTU up to the port's %u\n",
			       want_mtu, 128u << path_mtu);
			return 2;
		}
		path_mtu = o;
	}
	mtu_bytes = 128u << path_mtu;
	if (gid_index < 0)
		gid_index = 1;
	rc = ibv_query_gid(ctx, 1, gid_index, &gid);
	if (rc)
		die("ibv_query_gid", rc);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd", errno);
	cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq", errno);

	argc -= optind;
	argv += optind;
	optind = 0;	/* glibc: restart getopt on the sub-command */
	if (!strcmp(argv[0], "hold"))
		return cmd_hold(argc, argv);
	if (!strcmp(argv[0], "churn"))
		return cmd_churn(argc, argv);
	fprintf(stderr, "qp_helper: unknown command %s\n", argv[0]);
	return 2;
}
