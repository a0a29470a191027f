// SPDX-License-Identifier: GPL-2.0
/*
 * rc_verify: data-verifying RC traffic over plain libibverbs (no librdmacm).
 *
 * A hang, a lost or duplicated completion, or a wrong byte makes it FAIL.
 * Only standard verbs behaviour is assumed, so either side may be the
 * kernel's rdma_rxe.
 *
 *   rc_verify -s [opts]              server
 *   rc_verify -c SERVER_IPV4 [opts]  client
 *     -d DEV      ib device (default: the first one)
 *     -x GIDIDX   GID index (default: first RoCE v2 IPv4-mapped GID, from sysfs)
 *     -p PORT     TCP port of the out-of-band exchange (default 18515)
 *     -S LIST     message sizes (default 1,2,63,64,1000,1024,1025,4096,65536,
 *                 65537,262147,1048576,4194304)
 *     -o LIST     ops from send,write,writeimm,read,cas,faa,awrite,flush
 *                 (default send,write,writeimm,read,cas,faa)
 *     -n ROUNDS   repeat the whole plan (default 1)
 *     -q DEPTH    WQEs outstanding at once (default 16)
 *     -t SECS     timeout of every wait (default 120)
 *     -m MTU      path MTU 256..4096 (default: the port's active MTU)
 *     -T N        local ACK timeout exponent (default 14)  -r N  retry_cnt (7)
 *     -R N        rnr_retry (default 7)                    -M N  min_rnr_timer (12)
 *     -L MS       server: post receive buffers MS ms late, each batch (RNR test)
 *     -N          server: never post receive buffers
 *     -E STATUS   client: expect the first failing completion to have STATUS
 *                 (rnr_retry_exc | retry_exc | loc_prot | any) within -W SECS
 *                 (default 60), every other WQE flushed; then exit 0
 *     -D          client: deregister the local data MR right after posting
 *                 the first batch, its WQEs still in flight (with -E loc_prot:
 *                 a WQE not yet transmitted fails with LOC_PROT_ERR)
 *     -K          client: the server exits right after QP setup (peer vanishes)
 *     -G N        client: gather each SEND and WRITE from N SGEs (1..32, default 1),
 *                 each piece a copy of its part of the message in a page of
 *                 its own, so that no two pieces are adjacent in memory
 *     -H SECS     after the OK line, print "rc_verify: HOLD qpn=<n>" and keep
 *                 the QP for SECS seconds before exiting (per-QP counters)
 *     -I MS       client: idle MS ms after each batch, nothing outstanding
 *                 (each batch's first request then starts a new ACK timer wait)
 *     -1          client: post a batch's WQEs one ibv_post_send each (a
 *                 doorbell per WQE), not as one list
 *     -v          verbose
 *
 * Build: gcc -O2 -Wall -Wextra -o build/traffic/rc_verify tests/traffic/rc_verify.c -libverbs
 *
 * The last line is "rc_verify: OK ops=<n> bytes=<b> secs=<s>" (exit 0),
 * "rc_verify: FAIL <reason>" (exit 1) or "rc_verify: SKIP <reason>" (exit 77:
 * the plan has an op this side's or the peer's device does not advertise;
 * both sides SKIP). With -E, two lines before the OK line say which error
 * arrived and how many WQEs were flushed.
 *
 * The server runs the client's plan, sent over TCP: -S/-o/-n/-q need only be
 * given to the client, and if the server gets them too they must match. -K
 * reaches the server the same way.
 *
 * How it works. Both sides build the same plan: rounds x sizes x ops, one
 * batch per entry, each batch up to DEPTH WQEs of one kind (fewer for big
 * sizes so a batch stays within 32 MiB). Every WQE has a global sequence
 * number; its payload is pattern(seed(seq), offset), so the receiver knows
 * the expected bytes without any extra exchange. Per batch the client posts
 * the WQEs, checks every completion (and every READ byte, every atomic
 * result), then SENDs "batch k done"; the server checks every received SEND
 * and written slot byte for byte (and the bytes around them), and answers
 * "batch k ok" or "batch k FAIL <where>". The TCP connection stays open for
 * the whole run: the client's plan, failures ("FAIL ..."), skips ("SKIP
 * ..."), the end of an expected-error run ("end-expected") and the final
 * "bye" travel on it.
 *
 * IBA 1.5 memory placement (Annex A19), only with -o, never by default:
 *   awrite  ATOMIC WRITE of 8 bytes to an 8-byte aligned slot of the server's
 *           data region (remote write access). Like cas,faa it ignores -S:
 *           every -S entry gives a batch of DEPTH 8-byte WQEs. The value is
 *           pattern(seed(seq)); the server checks every slot byte for byte
 *           and that the poison around the slots is untouched.
 *   flush   per message an RDMA WRITE (sizes from -S) and then a FLUSH of
 *           that range (placement type global, selectivity range); both must
 *           complete successfully, the FLUSH as FLUSH, and the server checks
 *           the written bytes as for write. A batch has up to DEPTH/2 such
 *           pairs. The server's data region and both QPs get flush-global
 *           access.
 * With either op the QPs are extended QPs (ibv_create_qp_ex), and both
 * sides first check that their device advertises the op (ATOMIC_WRITE,
 * FLUSH_GLOBAL in device_cap_flags_ex); if not, both SKIP (exit 77).
 * rdma-core 44 has no ibv_wr_flush: a FLUSH is built in librxe's send ring
 * (see flush_rewrite).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "../common/rxe_flush_wqe.h"

#define BATCH_BYTES (32ULL << 20) /* data bytes of one batch, at most */
#define MAX_SIZE (1ULL << 30)
#define MAX_SIZES 64
#define MAX_OPS 32
#define CTRL_LEN 256
#define POISON 0x5a
#define READ_SEED 0x52454144u /* seed of the server's read area */
#define PORT_NUM 1

enum op { OP_SEND, OP_WRITE, OP_WRITEIMM, OP_READ, OP_CAS, OP_FAA, OP_AWRITE, OP_FLUSH, OP_N };
static const char *const op_names[OP_N] = { "send", "write", "writeimm", "read", "cas", "faa",
					    "awrite", "flush" };
#define IS_ATOMIC(o) ((o) == OP_CAS || (o) == OP_FAA)
#define IS_PLACEMENT(o) ((o) == OP_AWRITE || (o) == OP_FLUSH) /* posted with ibv_wr_* */
/* ops that put the pattern into the server's data area */
#define FILLS_DATA(o) ((o) == OP_SEND || (o) == OP_WRITE || (o) == OP_WRITEIMM || (o) == OP_FLUSH)
#define AWRITE_STRIDE 128 /* awrite slot i is at i * 128 + 8 * (i & 7) */

/*
 * A19 names rdma-core 44 lacks; the values are the kernel uapi's
 * (ib_user_verbs.h of 6.2 on; the 6.1 one installed here has none of them).
 */
#define DEV_FLUSH_GLOBAL (1ULL << 38) /* IB_UVERBS_DEVICE_FLUSH_GLOBAL */
#define DEV_ATOMIC_WRITE (1ULL << 40) /* IB_UVERBS_DEVICE_ATOMIC_WRITE */
#define ACC_FLUSH_GLOBAL (1 << 8)     /* IB_UVERBS_ACCESS_FLUSH_GLOBAL (IBV_ACCESS_FLUSH_GLOBAL) */
#define WC_FLUSH 8		      /* IB_UVERBS_WC_FLUSH (IBV_WC_FLUSH in rdma-core 45) */
#define FLUSH_GLOBAL 1		      /* IB_FLUSH_GLOBAL: placement type */
#define FLUSH_RANGE 0		      /* IB_FLUSH_RANGE: selectivity level */
#define EXIT_SKIP 77

/* wr_id = tag | batch | index: says what a completion belongs to. */
enum tag { T_DATA = 1, T_DATA_RECV, T_CTRL_SEND, T_CTRL_RECV };
#define WRID(t, b, i) (((uint64_t)(t) << 56) | ((uint64_t)((b) & 0xffffff) << 32) | (uint32_t)(i))
#define WR_TAG(w) ((int)((w) >> 56))
#define WR_BATCH(w) ((int)(((w) >> 32) & 0xffffff))
#define WR_IDX(w) ((uint32_t)(w))

/* ---- options ---- */
static int is_server;
static const char *server_ip;
static const char *dev_name;
static int gid_idx = -1;
static int tcp_port = 18515;
static uint64_t sizes[MAX_SIZES];
static int nsizes;
static int ops[MAX_OPS];
static int nops;
static int rounds = 1, depth = 16;
static int tmo = 120;
static int mtu_opt;
static int ack_timeout = 14, retry_cnt = 7, rnr_retry = 7, min_rnr = 12;
static int late_ms, no_post, kill_peer, verbose, hold_secs, dereg_early, gather_n = 1, idle_ms;
static int one_post;
static int fence_every;
/* -G: piece j of WQE i at gather_buf + (i * gather_n + j) * gather_stride + a small offset */
static uint8_t *gather_buf;
static struct ibv_mr *gather_mr;
static uint64_t gather_stride;
static int expect = -1; /* -1: no -E; else wanted status, or -2 for "any" */
static int expect_secs = 60;
static int given_S, given_o, given_n, given_q; /* server: explicit plan options */

/* ---- plan ---- */
struct step {
	int op, count, round;
	uint64_t size, stride, seq0;
};
static struct step *plan;
static int nsteps;
static uint64_t area; /* bytes of one data area (largest batch + slack) */

/* ---- verbs state ---- */
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_comp_channel *chan;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_port_attr pattr;
static struct ibv_device_attr dattr;
static union ibv_gid my_gid;
static uint8_t *data_buf, *read_buf, *atom_buf, *ctrl_buf;
static struct ibv_mr *data_mr, *read_mr, *atom_mr, *ctrl_mr;
static uint32_t my_psn;
static int cq_armed;

struct peer {
	uint32_t qpn, psn;
	union ibv_gid gid;
	int mtu, rd;
	uint64_t data_addr, read_addr, atom_addr;
	uint32_t data_rkey, read_rkey, atom_rkey;
};
static struct peer peer;

/* ---- run state ---- */
static int tcp_fd = -1;
static int tcp_watch = 1; /* get_wc reacts to TCP messages (off once "bye" may come) */
static char tcp_in[8192];
static size_t tcp_inlen;
static uint64_t *trk; /* wr_ids posted and not yet completed */
static int ntrk, trk_cap;
static double t_start; /* process start, for -v timestamps */
static double t0; /* start of traffic */
static uint64_t ops_done, bytes_done;
static struct ibv_send_wr *swr;
static struct ibv_sge *sgl;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *role(void)
{
	return is_server ? "server" : "client";
}

static void vlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void vlog(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	fprintf(stderr, "rc_verify[%s %.3f]: ", role(), now() - t_start);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * Print the "rc_verify: <word> ..." line and exit with code. The peer learns
 * why over TCP (best effort): "FAIL ..." makes it fail, "SKIP ..." skip too.
 */
static void end_run(const char *word, int code, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));
static void end_run(const char *word, int code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (tcp_fd >= 0) {
		char line[1100];
		int n = snprintf(line, sizeof(line), "%s %s: %s\n", word, role(), msg);

		if (send(tcp_fd, line, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
			/* the peer is gone already; nothing to tell */
		}
	}
	printf("rc_verify: %s %s: %s\n", word, role(), msg);
	fflush(stdout);
	exit(code);
}

#define die(...) end_run("FAIL", 1, __VA_ARGS__)
/* The plan needs what a device lacks. */
#define skip(...) end_run("SKIP", EXIT_SKIP, __VA_ARGS__)

/* The peer said "SKIP <why>": skip as well, without answering. */
static void peer_skipped(const char *why) __attribute__((noreturn));
static void peer_skipped(const char *why)
{
	close(tcp_fd);
	tcp_fd = -1;
	skip("peer skips: %s", why);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: rc_verify -s [opts] | -c SERVER_IPV4 [opts]\n"
		"  -d DEV -x GIDIDX -p PORT -S SIZES -o OPS -n ROUNDS -q DEPTH -t SECS -m MTU\n"
		"  OPS from send,write,writeimm,read,cas,faa,awrite,flush\n"
		"  -T ACK_TIMEOUT -r RETRY_CNT -R RNR_RETRY -M MIN_RNR_TIMER\n"
		"  server: -L MS (post receives late)  -N (never post receives)\n"
		"  client: -E rnr_retry_exc|retry_exc|loc_prot|any [-W SECS]  -K (server vanishes)\n"
		"  client: -D (deregister the data MR under the first batch)  -v\n"
		"  client: -G N (gather SEND/WRITE from N scattered SGEs)  -I MS (idle after each batch)\n"
		"  client: -1 (a doorbell per WQE)  -f N (IBV_SEND_FENCE on every Nth WQE)\n"
		"  -H SECS (keep the QP that long after OK)\n");
	exit(2);
}

/* ---- deterministic payload ---- */

static inline uint64_t mix64(uint64_t x) /* splitmix64 finaliser */
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static inline uint64_t pat_word(uint64_t seed, uint64_t w)
{
	return mix64(seed ^ (w * 0x9e3779b97f4a7c15ULL));
}

/* Byte at offset off: byte (off & 7) of word off >> 3, little-endian on any host. */
static inline uint8_t pat_byte(uint64_t seed, uint64_t off)
{
	return (uint8_t)(pat_word(seed, off >> 3) >> (8 * (off & 7)));
}

static uint64_t msg_seed(uint64_t seq)
{
	return mix64(seq * 0x2545f4914f6cdd1dULL + 0x5851f42d4c957f2dULL);
}

static void pat_fill(uint8_t *p, uint64_t len, uint64_t seed, uint64_t off)
{
	uint64_t j = 0;

	for (; j < len && ((off + j) & 7); j++)
		p[j] = pat_byte(seed, off + j);
	for (; j + 8 <= len; j += 8) {
		uint64_t w = htole64(pat_word(seed, (off + j) >> 3));

		memcpy(p + j, &w, 8);
	}
	for (; j < len; j++)
		p[j] = pat_byte(seed, off + j);
}

/* Index of the first byte that differs from the pattern, or -1. */
static int64_t pat_check(const uint8_t *p, uint64_t len, uint64_t seed, uint64_t off)
{
	uint64_t j = 0;

	for (; j < len && ((off + j) & 7); j++)
		if (p[j] != pat_byte(seed, off + j))
			return j;
	for (; j + 8 <= len; j += 8) {
		uint64_t w = htole64(pat_word(seed, (off + j) >> 3));

		if (memcmp(p + j, &w, 8))
			break; /* the byte loop below finds which one */
	}
	for (; j < len; j++)
		if (p[j] != pat_byte(seed, off + j))
			return j;
	return -1;
}

static uint64_t pat_ndiff(const uint8_t *p, uint64_t len, uint64_t seed, uint64_t off)
{
	uint64_t j, n = 0;

	for (j = 0; j < len; j++)
		n += p[j] != pat_byte(seed, off + j);
	return n;
}

/* Describe a payload mismatch, or return 0 if p holds the pattern. */
static int pat_verify(char *why, size_t wsz, const char *what, const uint8_t *p, uint64_t len,
		      uint64_t seed, uint64_t off)
{
	int64_t bad = pat_check(p, len, seed, off);

	if (bad < 0)
		return 0;
	snprintf(why, wsz, "%s: byte %" PRId64 " of %" PRIu64 " is 0x%02x, want 0x%02x (%" PRIu64
		 " bytes wrong)", what, bad, len, p[bad], pat_byte(seed, off + bad),
		 pat_ndiff(p, len, seed, off));
	return 1;
}

/* Bytes around the slots must still be poison: catches overruns. */
static int poison_verify(char *why, size_t wsz, const char *what, const uint8_t *p, uint64_t len)
{
	uint64_t j;

	for (j = 0; j < len; j++)
		if (p[j] != POISON) {
			snprintf(why, wsz, "%s: byte %" PRIu64 " after the message was overwritten (0x%02x)",
				 what, j, p[j]);
			return 1;
		}
	return 0;
}

/* Slot i of a batch: a different misalignment on each side exercises unaligned copies. */
static uint64_t rslot(const struct step *s, int i)
{
	return i * s->stride + (i & 7);
}

static uint64_t lslot(const struct step *s, int i)
{
	return i * s->stride + ((3 * i + 1) & 7);
}

/* Atomics: the value chain both sides derive from the batch's first sequence number. */
static uint64_t atom_init(const struct step *s)
{
	return mix64(msg_seed(s->seq0) ^ 0xa70a70a70a70ULL);
}

static uint64_t atom_arg(const struct step *s, int i) /* FAA: addend i; CAS: v_{i+1} */
{
	return msg_seed(s->seq0 + i);
}

static uint64_t atom_orig(const struct step *s, int i) /* value the i-th WQE must see */
{
	uint64_t v = atom_init(s);
	int j;

	if (s->op == OP_CAS)
		return i ? atom_arg(s, i - 1) : v;
	for (j = 0; j < i; j++)
		v += atom_arg(s, j);
	return v;
}

/* awrite: slot i of a batch, 8-byte aligned at a varying offset in its 128 bytes */
static uint64_t aslot(const struct step *s, int i)
{
	return i * s->stride + 8 * (i & 7);
}

/* WQEs of a batch: flush posts a WRITE and a FLUSH per message */
static int step_wqes(const struct step *s)
{
	return s->op == OP_FLUSH ? 2 * s->count : s->count;
}

/* ---- plan ---- */

static int plan_has(int op)
{
	int i;

	for (i = 0; i < nops; i++)
		if (ops[i] == op)
			return 1;
	return 0;
}

static int parse_sizes(const char *str, uint64_t *out)
{
	char *dup = strdup(str), *tok, *save = NULL, *end;
	int n = 0;

	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long long v = strtoull(tok, &end, 0);

		if (*end || !v || v > MAX_SIZE || n == MAX_SIZES) {
			fprintf(stderr, "rc_verify: bad size list '%s' (1..%llu, at most %d)\n", str,
				MAX_SIZE, MAX_SIZES);
			exit(2);
		}
		out[n++] = v;
	}
	free(dup);
	if (!n)
		usage();
	return n;
}

static int parse_ops(const char *str, int *out)
{
	char *dup = strdup(str), *tok, *save = NULL;
	int n = 0, o;

	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (o = 0; o < OP_N && strcmp(tok, op_names[o]); o++)
			;
		if (o == OP_N || n == MAX_OPS) {
			fprintf(stderr, "rc_verify: bad op '%s' (send,write,writeimm,read,cas,faa,awrite,flush)\n",
				tok);
			exit(2);
		}
		out[n++] = o;
	}
	free(dup);
	if (!n)
		usage();
	return n;
}

static void fmt_sizes(char *buf, size_t sz, const uint64_t *v, int n)
{
	size_t len = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < n && len < sz; i++)
		len += snprintf(buf + len, sz - len, "%s%" PRIu64, i ? "," : "", v[i]);
}

static void fmt_ops(char *buf, size_t sz, const int *v, int n)
{
	size_t len = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < n && len < sz; i++)
		len += snprintf(buf + len, sz - len, "%s%s", i ? "," : "", op_names[v[i]]);
}

static void build_plan(void)
{
	int r, si, oi, k = 0;
	uint64_t seq = 0;

	nsteps = rounds * nsizes * nops;
	if (nsteps > 0xffffff)
		die("plan too long (%d batches)", nsteps);
	plan = calloc(nsteps, sizeof(*plan));
	area = 4096;
	for (r = 0; r < rounds; r++)
		for (si = 0; si < nsizes; si++)
			for (oi = 0; oi < nops; oi++) {
				struct step *s = &plan[k++];

				s->op = ops[oi];
				s->round = r;
				s->seq0 = seq;
				if (IS_ATOMIC(s->op)) {
					s->size = 8;
					s->count = depth;
					s->stride = 8;
				} else if (s->op == OP_AWRITE) {
					/* 8-byte aligned slots, poison between them */
					s->size = 8;
					s->count = depth;
					s->stride = AWRITE_STRIDE;
					if (s->count * s->stride + 4096 > area)
						area = s->count * s->stride + 4096;
				} else {
					uint64_t fit = BATCH_BYTES / sizes[si];
					/* flush: a WRITE and a FLUSH per message, DEPTH WQEs at most */
					int most = s->op == OP_FLUSH ? (depth > 1 ? depth / 2 : 1) : depth;

					s->size = sizes[si];
					s->count = fit < 1 ? 1 : fit < (uint64_t)most ? (int)fit : most;
					/* room for the misalignment plus >= 64 poison bytes between slots */
					s->stride = ((s->size + 63) & ~63ULL) + 128;
					if (s->count * s->stride + 4096 > area)
						area = s->count * s->stride + 4096;
				}
				seq += s->count;
			}
	area = (area + 4095) & ~4095ULL;
}

/* ---- TCP ---- */

static void tcp_send(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void tcp_send(const char *fmt, ...)
{
	char line[4096];
	va_list ap;
	int n, off = 0;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	while (off < n) {
		ssize_t w = send(tcp_fd, line + off, n - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int fd = tcp_fd;

			tcp_fd = -1;
			close(fd);
			die("TCP send to the peer failed: %s", strerror(errno));
		}
		off += w;
	}
}

/* One line (without the newline): 1; EOF: 0; timeout: -1. */
static int tcp_read_line(char *out, size_t osz, double deadline)
{
	for (;;) {
		char *nl = memchr(tcp_in, '\n', tcp_inlen);
		struct pollfd pfd = { .fd = tcp_fd, .events = POLLIN };
		double left;
		ssize_t n;

		if (nl) {
			size_t len = nl - tcp_in;

			if (len >= osz)
				len = osz - 1;
			memcpy(out, tcp_in, len);
			out[len] = 0;
			tcp_inlen -= nl + 1 - tcp_in;
			memmove(tcp_in, nl + 1, tcp_inlen);
			return 1;
		}
		if (tcp_inlen == sizeof(tcp_in))
			die("TCP line from the peer too long");
		left = deadline - now();
		if (left <= 0)
			return -1;
		if (poll(&pfd, 1, (int)(left * 1000) + 1) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (!(pfd.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(tcp_fd, tcp_in + tcp_inlen, sizeof(tcp_in) - tcp_inlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0; /* EOF or reset: the peer is gone */
		tcp_inlen += n;
	}
}

/* Read a line or FAIL saying what we were waiting for. */
static void tcp_expect_line(char *out, size_t osz, const char *what)
{
	int r = tcp_read_line(out, osz, now() + tmo);

	if (r < 0)
		die("timeout after %d s waiting on TCP for %s", tmo, what);
	if (r == 0) {
		close(tcp_fd);
		tcp_fd = -1;
		die("peer closed the TCP connection while we waited for %s", what);
	}
	if (!strncmp(out, "FAIL ", 5))
		die("peer failed: %s", out + 5);
	if (!strncmp(out, "SKIP ", 5))
		peer_skipped(out + 5);
}

static void tcp_connect_or_accept(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(tcp_port) };
	double deadline = now() + tmo;
	int one = 1, fd;

	if (is_server) {
		struct pollfd pfd;
		int lfd = socket(AF_INET, SOCK_STREAM, 0);

		sa.sin_addr.s_addr = htonl(INADDR_ANY);
		setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1))
			die("cannot listen on TCP port %d: %s", tcp_port, strerror(errno));
		vlog("listening on TCP port %d", tcp_port);
		pfd = (struct pollfd){ .fd = lfd, .events = POLLIN };
		if (poll(&pfd, 1, tmo * 1000) <= 0)
			die("timeout after %d s waiting for the client to connect", tmo);
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			die("accept: %s", strerror(errno));
		close(lfd);
	} else {
		if (inet_pton(AF_INET, server_ip, &sa.sin_addr) != 1)
			die("bad server address '%s' (IPv4 expected)", server_ip);
		/* The server may not listen yet: retry until the timeout. */
		for (;;) {
			fd = socket(AF_INET, SOCK_STREAM, 0);
			if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
				break;
			close(fd);
			if (now() > deadline)
				die("cannot connect to %s:%d within %d s: %s", server_ip, tcp_port, tmo,
				    strerror(errno));
			usleep(100000);
		}
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	tcp_fd = fd;
}

/* "key=value" of a space separated line. */
static char *kv(const char *line, const char *key, char *out, size_t osz)
{
	size_t kl = strlen(key), n;
	const char *p = line;

	while ((p = strstr(p, key))) {
		if ((p == line || p[-1] == ' ') && p[kl] == '=') {
			p += kl + 1;
			n = strcspn(p, " \n");
			if (n >= osz)
				break;
			memcpy(out, p, n);
			out[n] = 0;
			return out;
		}
		p += kl;
	}
	die("peer's exchange line has no valid '%s': %s", key, line);
}

static uint64_t kv_num(const char *line, const char *key)
{
	char v[64];

	return strtoull(kv(line, key, v, sizeof(v)), NULL, 0);
}

static void gid_to_hex(const union ibv_gid *g, char *out)
{
	int i;

	for (i = 0; i < 16; i++)
		sprintf(out + 2 * i, "%02x", g->raw[i]);
}

static void hex_to_gid(const char *s, union ibv_gid *g)
{
	int i;
	unsigned int b;

	if (strlen(s) != 32)
		die("bad GID '%s' from the peer", s);
	for (i = 0; i < 16; i++) {
		if (sscanf(s + 2 * i, "%2x", &b) != 1)
			die("bad GID '%s' from the peer", s);
		g->raw[i] = b;
	}
}

/* ---- device, GID, QP ---- */

static int read_sysfs(const char *path, char *buf, size_t sz)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, sz - 1, f);
	fclose(f);
	if (!n)
		return -1;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* First GID whose type is RoCE v2 and whose value is ::ffff:a.b.c.d. */
static int default_gid_index(const char *dev)
{
	char path[256], buf[128];
	unsigned int w[8];
	int i;

	for (i = 0; i < pattr.gid_tbl_len; i++) {
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/gid_attrs/types/%d", dev,
			 PORT_NUM, i);
		if (read_sysfs(path, buf, sizeof(buf)) || strcmp(buf, "RoCE v2"))
			continue;
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/gids/%d", dev, PORT_NUM, i);
		if (read_sysfs(path, buf, sizeof(buf)) ||
		    sscanf(buf, "%x:%x:%x:%x:%x:%x:%x:%x", &w[0], &w[1], &w[2], &w[3], &w[4], &w[5], &w[6],
			   &w[7]) != 8)
			continue;
		if (!w[0] && !w[1] && !w[2] && !w[3] && !w[4] && w[5] == 0xffff)
			return i;
	}
	return -1;
}

static int mtu_enum(int bytes)
{
	switch (bytes) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	}
	fprintf(stderr, "rc_verify: bad MTU %d (256, 512, 1024, 2048 or 4096)\n", bytes);
	exit(2);
}

static void *alloc_area(uint64_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("cannot allocate %" PRIu64 " bytes", len);
	return p;
}

static struct ibv_mr *reg(void *p, uint64_t len, int access, const char *what)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, p, len, access);

	if (!mr)
		die("ibv_reg_mr(%s, %" PRIu64 " bytes): %s", what, len, strerror(errno));
	return mr;
}

static void open_device(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_device *dev = NULL;
	int i;

	if (!list || !list[0])
		die("no RDMA device found");
	for (i = 0; list[i]; i++)
		if (!dev_name || !strcmp(ibv_get_device_name(list[i]), dev_name)) {
			dev = list[i];
			break;
		}
	if (!dev)
		die("RDMA device '%s' not found", dev_name);
	dev_name = strdup(ibv_get_device_name(dev));
	ctx = ibv_open_device(dev);
	if (!ctx)
		die("ibv_open_device(%s): %s", dev_name, strerror(errno));
	ibv_free_device_list(list);
	if (ibv_query_device(ctx, &dattr) || ibv_query_port(ctx, PORT_NUM, &pattr))
		die("ibv_query_device/port(%s): %s", dev_name, strerror(errno));
	if (pattr.state != IBV_PORT_ACTIVE)
		fprintf(stderr, "rc_verify: warning: %s port %d is not ACTIVE (%s)\n", dev_name, PORT_NUM,
			ibv_port_state_str(pattr.state));
	if (gid_idx < 0)
		gid_idx = default_gid_index(dev_name);
	if (gid_idx < 0)
		die("%s has no RoCE v2 IPv4-mapped GID (give one with -x)", dev_name);
	if (ibv_query_gid(ctx, PORT_NUM, gid_idx, &my_gid))
		die("ibv_query_gid(%s, %d): %s", dev_name, gid_idx, strerror(errno));
	vlog("device %s GID index %d (::ffff:%u.%u.%u.%u) active_mtu %d", dev_name, gid_idx,
	     my_gid.raw[12], my_gid.raw[13], my_gid.raw[14], my_gid.raw[15],
	     128 << pattr.active_mtu);
}

/*
 * The placement ops the plan uses that this device does not advertise, or
 * NULL. Asked only when the plan has one, so other plans never query more
 * than they did.
 */
static const char *placement_missing(void)
{
	static char why[512];
	struct ibv_device_attr_ex ax;
	uint64_t caps;

	if (!plan_has(OP_AWRITE) && !plan_has(OP_FLUSH))
		return NULL;
	memset(&ax, 0, sizeof(ax));
	if (ibv_query_device_ex(ctx, NULL, &ax))
		die("ibv_query_device_ex(%s): %s", dev_name, strerror(errno));
	caps = ax.device_cap_flags_ex;
	why[0] = 0;
	if (plan_has(OP_AWRITE) && !(caps & DEV_ATOMIC_WRITE))
		snprintf(why, sizeof(why), "%s does not advertise ATOMIC WRITE (device_cap_flags_ex 0x%" PRIx64
			 " lacks bit 40)", dev_name, caps);
	if (plan_has(OP_FLUSH) && !(caps & DEV_FLUSH_GLOBAL))
		snprintf(why + strlen(why), sizeof(why) - strlen(why),
			 "%s%s does not advertise FLUSH global (device_cap_flags_ex 0x%" PRIx64 " lacks bit 38)",
			 why[0] ? "; " : "", dev_name, caps);
	return why[0] ? why : NULL;
}

/* The client's SKIP: the server waits for our plan, so tell it there (best effort). */
static void client_skip(const char *why) __attribute__((noreturn));
static void client_skip(const char *why)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(tcp_port) };
	double deadline = now() + tmo;
	int fd;

	if (inet_pton(AF_INET, server_ip, &sa.sin_addr) == 1)
		for (;;) {
			fd = socket(AF_INET, SOCK_STREAM, 0);
			if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
				tcp_fd = fd;
				break;
			}
			close(fd);
			if (now() > deadline)
				break;
			usleep(100000);
		}
	skip("%s", why);
}

/*
 * awrite and flush are posted with ibv_wr_*: then the QP is an extended one,
 * with the send ops of the plan (SEND always: the control messages).
 */
static struct ibv_qp *create_qp_ex(struct ibv_qp_init_attr *ia)
{
	struct ibv_qp_init_attr_ex iax;
	uint64_t f = IBV_QP_EX_WITH_SEND;
	int i;

	for (i = 0; i < nops; i++)
		switch (ops[i]) {
		case OP_SEND: f |= IBV_QP_EX_WITH_SEND; break;
		case OP_WRITE: f |= IBV_QP_EX_WITH_RDMA_WRITE; break;
		case OP_WRITEIMM: f |= IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM; break;
		case OP_READ: f |= IBV_QP_EX_WITH_RDMA_READ; break;
		case OP_CAS: f |= IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP; break;
		case OP_FAA: f |= IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD; break;
		case OP_AWRITE: f |= IBV_QP_EX_WITH_ATOMIC_WRITE; break;
		case OP_FLUSH: f |= IBV_QP_EX_WITH_RDMA_WRITE; break; /* see post_placement_batch */
		}
	memset(&iax, 0, sizeof(iax));
	iax.send_cq = ia->send_cq;
	iax.recv_cq = ia->recv_cq;
	iax.qp_type = ia->qp_type;
	iax.cap = ia->cap;
	iax.pd = pd;
	iax.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	iax.send_ops_flags = f;
	return ibv_create_qp_ex(ctx, &iax);
}

static void create_resources(void)
{
	struct ibv_qp_init_attr ia = { 0 };
	struct ibv_qp_attr a = { 0 };
	int i, cqe, placement = plan_has(OP_AWRITE) || plan_has(OP_FLUSH);
	int flush_acc = plan_has(OP_FLUSH) ? ACC_FLUSH_GLOBAL : 0;

	if (depth + 4 > dattr.max_qp_wr)
		die("-q %d exceeds the device's max_qp_wr %d", depth, dattr.max_qp_wr);
	for (i = 0; i < nsteps; i++) {
		if (plan[i].size > pattr.max_msg_sz)
			die("size %" PRIu64 " exceeds the port's max_msg_sz %u", plan[i].size, pattr.max_msg_sz);
		if (IS_ATOMIC(plan[i].op) && dattr.atomic_cap == IBV_ATOMIC_NONE)
			die("%s has no atomics (atomic_cap NONE); drop cas,faa from -o", dev_name);
	}
	pd = ibv_alloc_pd(ctx);
	chan = ibv_create_comp_channel(ctx);
	cqe = 2 * (depth + 4) + 8;
	if (cqe > dattr.max_cqe)
		cqe = dattr.max_cqe;
	if (!pd || !chan || !(cq = ibv_create_cq(ctx, cqe, NULL, chan, 0)))
		die("cannot create PD/channel/CQ: %s", strerror(errno));

	data_buf = alloc_area(area);
	data_mr = reg(data_buf, area, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | flush_acc, "data");
	atom_buf = alloc_area(((uint64_t)depth * 8 + 4095) & ~4095ULL);
	atom_mr = reg(atom_buf, ((uint64_t)depth * 8 + 4095) & ~4095ULL,
		      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC, "atomic");
	ctrl_buf = alloc_area(4096);
	ctrl_mr = reg(ctrl_buf, 4096, IBV_ACCESS_LOCAL_WRITE, "control");
	if (gather_n > 1) {
		uint64_t biggest = 0, len;

		for (i = 0; i < nsteps; i++)
			if (plan[i].size > biggest)
				biggest = plan[i].size;
		/* a page between pieces: never contiguous */
		gather_stride = ((biggest / gather_n + 1 + 8 + 4095) & ~4095ULL) + 4096;
		len = (uint64_t)depth * gather_n * gather_stride;
		gather_buf = alloc_area(len);
		gather_mr = reg(gather_buf, len, IBV_ACCESS_LOCAL_WRITE, "gather");
	}
	if (is_server) {
		/* The READ source: known bytes the client can check without an exchange. */
		read_buf = alloc_area(area);
		pat_fill(read_buf, area, READ_SEED, 0);
		read_mr = reg(read_buf, area, IBV_ACCESS_REMOTE_READ, "read");
	}
	swr = calloc(depth, sizeof(*swr));
	sgl = calloc((size_t)depth * gather_n, sizeof(*sgl));
	trk_cap = 2 * depth + 16;
	trk = calloc(trk_cap, sizeof(*trk));

	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = depth + 4;
	ia.cap.max_recv_wr = depth + 4;
	ia.cap.max_send_sge = gather_n;
	ia.cap.max_recv_sge = 1;
	qp = placement ? create_qp_ex(&ia) : ibv_create_qp(pd, &ia);
	if (!qp)
		die("%s: %s", placement ? "ibv_create_qp_ex" : "ibv_create_qp", strerror(errno));

	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = PORT_NUM;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC | flush_acc;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify QP to INIT: %s", strerror(errno));
	if (getrandom(&my_psn, sizeof(my_psn), 0) != sizeof(my_psn))
		my_psn = (uint32_t)(now() * 1e6) ^ getpid();
	my_psn &= 0xffffff;
}

static int my_mtu(void)
{
	return mtu_opt ? mtu_enum(mtu_opt) : (int)pattr.active_mtu;
}

static int my_dest_rd(void) /* responder resources we offer */
{
	return dattr.max_qp_rd_atom < 16 ? dattr.max_qp_rd_atom : 16;
}

static void qp_connect(void)
{
	struct ibv_qp_attr a = { 0 };
	int rd = 16;

	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = my_mtu() < peer.mtu ? my_mtu() : peer.mtu;
	a.dest_qp_num = peer.qpn;
	a.rq_psn = peer.psn;
	a.max_dest_rd_atomic = my_dest_rd();
	a.min_rnr_timer = min_rnr;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer.gid;
	a.ah_attr.grh.sgid_index = gid_idx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = PORT_NUM;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify QP to RTR: %s", strerror(errno));
	vlog("RTR: path_mtu %d, dest QPN 0x%x, rq_psn 0x%x", 128 << a.path_mtu, peer.qpn, peer.psn);

	/* Never have more READs/atomics in flight than the peer accepts. */
	if (rd > dattr.max_qp_init_rd_atom)
		rd = dattr.max_qp_init_rd_atom;
	if (rd > peer.rd)
		rd = peer.rd;
	if (rd < 1)
		rd = 1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = ack_timeout;
	a.retry_cnt = retry_cnt;
	a.rnr_retry = rnr_retry;
	a.sq_psn = my_psn;
	a.max_rd_atomic = rd;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify QP to RTS: %s", strerror(errno));
	vlog("RTS: QPN 0x%x sq_psn 0x%x max_rd_atomic %d timeout %d retry %d rnr_retry %d",
	     qp->qp_num, my_psn, rd, ack_timeout, retry_cnt, rnr_retry);
}

/* ---- completions ---- */

static const char *wc_op_str(enum ibv_wc_opcode op)
{
	if ((int)op == WC_FLUSH)
		return "FLUSH";
	switch (op) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_COMP_SWAP: return "COMP_SWAP";
	case IBV_WC_FETCH_ADD: return "FETCH_ADD";
	case IBV_WC_ATOMIC_WRITE: return "ATOMIC_WRITE";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	default: return "other";
	}
}

static const char *wc_str(const struct ibv_wc *wc)
{
	static char buf[400];
	static const char *const tags[] = { "?", "data", "data-recv", "ctrl-send", "ctrl-recv" };
	int t = WR_TAG(wc->wr_id);

	snprintf(buf, sizeof(buf),
		 "wr_id=0x%" PRIx64 " (%s batch %d #%u) status=%s (%d) opcode=%s (%d) byte_len=%u vendor_err=0x%x",
		 wc->wr_id, t >= T_DATA && t <= T_CTRL_RECV ? tags[t] : tags[0], WR_BATCH(wc->wr_id),
		 WR_IDX(wc->wr_id), ibv_wc_status_str(wc->status), wc->status, wc_op_str(wc->opcode),
		 wc->opcode, wc->byte_len, wc->vendor_err);
	return buf;
}

static void track(uint64_t id)
{
	if (ntrk == trk_cap)
		die("internal: too many WQEs outstanding");
	trk[ntrk++] = id;
}

static int untrack(uint64_t id)
{
	int i;

	for (i = 0; i < ntrk; i++)
		if (trk[i] == id) {
			trk[i] = trk[--ntrk];
			return 1;
		}
	return 0;
}

static int tracked(uint64_t id)
{
	int i;

	for (i = 0; i < ntrk; i++)
		if (trk[i] == id)
			return 1;
	return 0;
}

/*
 * Next completion, sleeping on the completion channel: busy polling would
 * steal the CPU from a software device under a 2-CPU VM. Returns 1 with *wc,
 * 2 if the TCP socket has something (watch_tcp), 0 at the deadline.
 */
static int next_wc(struct ibv_wc *wc, double deadline, int watch_tcp)
{
	for (;;) {
		struct pollfd pfd[2] = { { .fd = chan->fd, .events = POLLIN },
					 { .fd = tcp_fd, .events = POLLIN } };
		int n = ibv_poll_cq(cq, 1, wc);
		double left;

		if (n < 0)
			die("ibv_poll_cq failed");
		if (n)
			return 1;
		if (!cq_armed) {
			if (ibv_req_notify_cq(cq, 0))
				die("ibv_req_notify_cq failed");
			cq_armed = 1;
			continue; /* poll once more: a completion may have slipped in before arming */
		}
		watch_tcp = watch_tcp && tcp_fd >= 0;
		if (watch_tcp && memchr(tcp_in, '\n', tcp_inlen))
			return 2;
		left = deadline - now();
		if (left <= 0)
			return 0;
		if (poll(pfd, watch_tcp ? 2 : 1, (int)(left * 1000) + 1) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (pfd[0].revents & POLLIN) {
			struct ibv_cq *ev_cq;
			void *ev_ctx;

			if (ibv_get_cq_event(chan, &ev_cq, &ev_ctx))
				die("ibv_get_cq_event failed");
			ibv_ack_cq_events(ev_cq, 1);
			cq_armed = 0;
			continue;
		}
		if (watch_tcp && pfd[1].revents)
			return 2;
	}
}

static int expected_status(const struct ibv_wc *wc)
{
	return expect == -2 ? wc->status != IBV_WC_SUCCESS : (int)wc->status == expect;
}

static const char *expect_str(void)
{
	return expect == -2 ? "any error" : ibv_wc_status_str(expect);
}

static void server_end_expected(void) __attribute__((noreturn));
static void server_end_expected(void)
{
	fprintf(stderr, "rc_verify: server: the client reports its expected error; stopping\n");
	tcp_send("bye\n");
	printf("rc_verify: OK ops=%" PRIu64 " bytes=%" PRIu64 " secs=%.2f\n", ops_done, bytes_done,
	       t0 ? now() - t0 : 0.0);
	fflush(stdout);
	exit(0);
}

/* Something arrived on TCP in the middle of the traffic. */
static void peer_tcp_event(void)
{
	char line[2048];
	int r = tcp_read_line(line, sizeof(line), now() + tmo);

	if (r < 0)
		die("timeout after %d s reading a TCP line from the peer", tmo);
	if (r == 0) {
		close(tcp_fd);
		tcp_fd = -1;
		die("peer closed the TCP connection in the middle of the traffic (peer failed?)");
	}
	if (!strncmp(line, "FAIL ", 5))
		die("peer failed: %s", line + 5);
	if (!strncmp(line, "SKIP ", 5))
		peer_skipped(line + 5);
	if (is_server && !strcmp(line, "end-expected"))
		server_end_expected();
	die("unexpected TCP message from the peer: '%s'", line);
}

/* -E: the expected error arrived; every other outstanding WQE must now flush, once. */
static void drain_and_exit(const struct ibv_wc *first) __attribute__((noreturn));
static void drain_and_exit(const struct ibv_wc *first)
{
	struct ibv_wc wc;
	int flushed = 0;

	printf("rc_verify: client got the expected error after %.2f s: %s\n", now() - t0, wc_str(first));
	while (ntrk > 0) {
		if (!next_wc(&wc, now() + tmo, 0))
			die("after the expected error, %d WQE(s) never completed within %d s (e.g. wr_id=0x%" PRIx64 ")",
			    ntrk, tmo, trk[0]);
		if (!untrack(wc.wr_id))
			die("after the expected error: completion for a WQE that is not outstanding (duplicate?): %s",
			    wc_str(&wc));
		if (wc.status != IBV_WC_WR_FLUSH_ERR)
			die("after the expected error, want WR_FLUSH_ERR, got: %s", wc_str(&wc));
		flushed++;
	}
	/* Nothing may complete twice: give stragglers a moment to show up. */
	if (next_wc(&wc, now() + 1.0, 0))
		die("extra completion after every WQE had completed: %s", wc_str(&wc));
	printf("rc_verify: client: %d other WQE(s) flushed, no extra completion\n", flushed);
	if (tcp_fd >= 0) {
		char line[256];

		tcp_send("end-expected\n");
		tcp_expect_line(line, sizeof(line), "the server's bye");
		if (strcmp(line, "bye"))
			die("want 'bye' from the server, got '%s'", line);
	}
	printf("rc_verify: OK ops=%" PRIu64 " bytes=%" PRIu64 " secs=%.2f\n", ops_done, bytes_done,
	       now() - t0);
	fflush(stdout);
	exit(0);
}

/*
 * Wait for one completion and do the checks every completion gets: it belongs
 * to a WQE we posted and that has not completed yet, on our QP, and it
 * succeeded (or, with -E, is the expected error).
 */
static void get_wc(struct ibv_wc *wc, const char *what)
{
	for (;;) {
		double dl = now() + tmo;
		int r, in_expect = expect != -1 && !is_server && t0;

		if (in_expect && t0 + expect_secs < dl)
			dl = t0 + expect_secs;
		r = next_wc(wc, dl, tcp_watch);
		if (r == 2) {
			peer_tcp_event();
			continue;
		}
		if (r == 0) {
			if (in_expect && now() >= t0 + expect_secs)
				die("no completion with status %s within %d s (-W) of the start of traffic; was waiting for %s",
				    expect_str(), expect_secs, what);
			die("timeout after %d s waiting for %s (%d WQE(s) outstanding)", tmo, what, ntrk);
		}
		break;
	}
	if (!untrack(wc->wr_id))
		die("completion for a WQE that is not outstanding (duplicate or never posted), while waiting for %s: %s",
		    what, wc_str(wc));
	if (wc->qp_num != qp->qp_num)
		die("completion carries QPN 0x%x, ours is 0x%x: %s", wc->qp_num, qp->qp_num, wc_str(wc));
	if (wc->status == IBV_WC_SUCCESS)
		return;
	if (expect != -1 && !is_server) {
		if (!expected_status(wc))
			die("want the first failing completion to be %s, got: %s", expect_str(), wc_str(wc));
		drain_and_exit(wc);
	}
	if (is_server) {
		/* A client that ran into its expected error may take us down with it: ask it. */
		char line[2048];

		if (tcp_read_line(line, sizeof(line), now() + 3.0) == 1 && !strcmp(line, "end-expected"))
			server_end_expected();
	}
	die("completion error while waiting for %s: %s", what, wc_str(wc));
}

static void post_recv(uint64_t id, void *addr, uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = addr ? 1 : 0 }, *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		die("ibv_post_recv(wr_id 0x%" PRIx64 "): %s", id, strerror(errno));
	track(id);
}

/* Control SENDs use two alternating buffers after the receive buffer. */
static void post_ctrl_send(int k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void post_ctrl_send(int k, const char *fmt, ...)
{
	char *buf = (char *)ctrl_buf + CTRL_LEN * (1 + (k & 1));
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .lkey = ctrl_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = WRID(T_CTRL_SEND, k, 0), .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, CTRL_LEN, fmt, ap);
	va_end(ap);
	sge.length = strlen(buf) + 1;
	if (ibv_post_send(qp, &wr, &bad))
		die("ibv_post_send(control '%s'): %s", buf, strerror(errno));
	track(wr.wr_id);
}

static void post_ctrl_recv(int k)
{
	memset(ctrl_buf, 0, CTRL_LEN);
	post_recv(WRID(T_CTRL_RECV, k, 0), ctrl_buf, CTRL_LEN, ctrl_mr->lkey);
}

/*
 * A received control message must be "batch k WORD" (the client also accepts
 * "batch k FAIL ..."), NUL-terminated within byte_len.
 */
static const char *ctrl_text(const struct ibv_wc *wc, int k, const char *word)
{
	char *msg = (char *)ctrl_buf, pre[32];
	int n;

	if (wc->opcode != IBV_WC_RECV || (wc->wc_flags & IBV_WC_WITH_IMM) || wc->byte_len < 2 ||
	    wc->byte_len > CTRL_LEN || msg[wc->byte_len - 1])
		die("batch %d: malformed control message: %s", k, wc_str(wc));
	n = snprintf(pre, sizeof(pre), "batch %d ", k);
	if (strncmp(msg, pre, n) ||
	    (strcmp(msg + n, word) && (is_server || strncmp(msg + n, "FAIL ", 5))))
		die("batch %d: want control message '%s%s', got '%s'", k, pre, word, msg);
	return msg;
}

static const char *step_str(int k)
{
	static char buf[128];
	const struct step *s = &plan[k];

	snprintf(buf, sizeof(buf), "batch %d/%d (round %d, %s, size %" PRIu64 ", %d WQEs)", k, nsteps,
		 s->round + 1, op_names[s->op], s->size, s->count);
	return buf;
}

/* ---- client ---- */

/* -G: the message's bytes as copies in up to gather_n scattered pieces. */
static int gather_sges(struct ibv_sge *g, int i, const uint8_t *msg, uint64_t size)
{
	uint64_t n = size < (uint64_t)gather_n ? (size ? size : 1) : (uint64_t)gather_n;
	uint64_t off = 0, j;

	for (j = 0; j < n; j++) {
		uint64_t len = j == n - 1 ? size - off : size / n;
		/* odd offsets: pieces start anywhere in a page */
		uint8_t *p = gather_buf + ((uint64_t)i * gather_n + j) * gather_stride + ((5 * j + 1) & 7);

		memcpy(p, msg + off, len);
		g[j].addr = (uintptr_t)p;
		g[j].length = (uint32_t)len;
		g[j].lkey = gather_mr->lkey;
		off += len;
	}
	return (int)n;
}

static void client_post_batch(int k)
{
	const struct step *s = &plan[k];
	struct ibv_send_wr *bad;
	int i;

	for (i = 0; i < s->count; i++) {
		struct ibv_send_wr *w = &swr[i];
		struct ibv_sge *g = &sgl[(size_t)i * gather_n];
		uint64_t seq = s->seq0 + i;

		memset(w, 0, sizeof(*w));
		w->wr_id = WRID(T_DATA, k, i);
		w->sg_list = g;
		w->num_sge = 1;
		w->send_flags = IBV_SEND_SIGNALED;
		/* waits for the READs and atomics before it; the ones after do not */
		if (fence_every && seq % fence_every == 0)
			w->send_flags |= IBV_SEND_FENCE;
		w->next = i + 1 < s->count ? &swr[i + 1] : NULL;
		g->addr = (uintptr_t)data_buf + lslot(s, i);
		g->length = s->size;
		g->lkey = data_mr->lkey;
		if (gather_n > 1 && (s->op == OP_SEND || s->op == OP_WRITE || s->op == OP_WRITEIMM))
			w->num_sge = gather_sges(g, i, data_buf + lslot(s, i), s->size);
		switch (s->op) {
		case OP_SEND:
			w->opcode = IBV_WR_SEND;
			break;
		case OP_WRITE:
		case OP_WRITEIMM:
			w->opcode = s->op == OP_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_WRITE_WITH_IMM;
			w->imm_data = htonl((uint32_t)seq); /* the server checks it is this WQE's */
			w->wr.rdma.remote_addr = peer.data_addr + rslot(s, i);
			w->wr.rdma.rkey = peer.data_rkey;
			break;
		case OP_READ:
			w->opcode = IBV_WR_RDMA_READ;
			w->wr.rdma.remote_addr = peer.read_addr + rslot(s, i);
			w->wr.rdma.rkey = peer.read_rkey;
			break;
		case OP_CAS:
		case OP_FAA:
			g->addr = (uintptr_t)atom_buf + 8 * i;
			g->lkey = atom_mr->lkey;
			if (s->op == OP_CAS) {
				/* a chain: each one swaps in what the next one compares against */
				w->opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
				w->wr.atomic.compare_add = atom_orig(s, i);
				w->wr.atomic.swap = atom_arg(s, i);
				w->wr.atomic.remote_addr = peer.atom_addr;
			} else {
				w->opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
				w->wr.atomic.compare_add = atom_arg(s, i);
				w->wr.atomic.remote_addr = peer.atom_addr + 8;
			}
			w->wr.atomic.rkey = peer.atom_rkey;
			break;
		}
		track(w->wr_id);
	}
	if (one_post) {
		/* each WQE its own doorbell, as a stream of single posts rings */
		struct ibv_send_wr *w, *next;

		for (w = swr; w; w = next) {
			next = w->next;
			w->next = NULL;
			if (ibv_post_send(qp, w, &bad))
				die("%s: ibv_post_send failed at WQE %d: %s", step_str(k),
				    (int)(w - swr), strerror(errno));
			w->next = next;
		}
		return;
	}
	if (ibv_post_send(qp, swr, &bad))
		die("%s: ibv_post_send failed at WQE %d: %s", step_str(k), (int)(bad - swr), strerror(errno));
}

/*
 * rdma-core 44 has no ibv_wr_flush (tests/common/rxe_flush_wqe.h): each FLUSH
 * is started as a zero-length RDMA WRITE with ibv_wr_*, found in the mmapped
 * librxe send ring by its wr_id (and remote address), and rewritten as a
 * FLUSH before ibv_wr_complete hands the batch over.
 */
static void flush_rewrite(int k)
{
	const struct step *s = &plan[k];
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi, o;
	char line[512];
	int found = 0, i;

	if (!f)
		die("%s: /proc/self/maps: %s", step_str(k), strerror(errno));
	while (found < s->count && fgets(line, sizeof(line), f)) {
		if (!strstr(line, "/dev/infiniband/uverbs") || sscanf(line, "%lx-%lx", &lo, &hi) != 2 ||
		    !strstr(line, " rw"))
			continue;
		for (o = lo; found < s->count && o + SWQE_DMA + 16 <= hi; o += 64) {
			unsigned char *w = (unsigned char *)o;
			uint64_t wid, ra, want_ra;
			uint32_t op;

			memcpy(&wid, w, 8);
			if (WR_TAG(wid) != T_DATA || WR_BATCH(wid) != (k & 0xffffff) || !(WR_IDX(wid) & 1) ||
			    WR_IDX(wid) >= (uint32_t)step_wqes(s))
				continue;
			i = WR_IDX(wid) / 2;
			want_ra = peer.data_addr + rslot(s, i);
			memcpy(&op, w + SWQE_OPCODE, 4);
			memcpy(&ra, w + SWQE_WR, 8);
			if (op != IBV_WR_RDMA_WRITE || ra != want_ra)
				continue;
			rxe_flush_wqe_fill(w, want_ra, s->size, peer.data_rkey, FLUSH_GLOBAL, FLUSH_RANGE);
			found++;
		}
	}
	fclose(f);
	if (found != s->count) {
		ibv_wr_abort(ibv_qp_to_qp_ex(qp));
		die("%s: found %d of %d FLUSH WQEs in the librxe send ring (not a librxe device?)",
		    step_str(k), found, s->count);
	}
}

/* awrite, flush: one ibv_wr_start .. ibv_wr_complete per batch. */
static void post_placement_batch(int k)
{
	const struct step *s = &plan[k];
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(qp);
	int i, err;

	ibv_wr_start(qpx);
	for (i = 0; i < s->count; i++) {
		uint64_t seq = s->seq0 + i;

		qpx->wr_flags = IBV_SEND_SIGNALED;
		if (s->op == OP_AWRITE) {
			uint8_t *v = data_buf + 8 * i; /* the 8 bytes, kept until the completion */

			pat_fill(v, 8, msg_seed(seq), 0);
			qpx->wr_id = WRID(T_DATA, k, i);
			ibv_wr_atomic_write(qpx, peer.data_rkey, peer.data_addr + aslot(s, i), v);
			track(qpx->wr_id);
			continue;
		}
		qpx->wr_id = WRID(T_DATA, k, 2 * i);
		ibv_wr_rdma_write(qpx, peer.data_rkey, peer.data_addr + rslot(s, i));
		ibv_wr_set_sge(qpx, data_mr->lkey, (uintptr_t)data_buf + lslot(s, i), s->size);
		track(qpx->wr_id);
		/* the FLUSH of that range: a WRITE of nothing for now, see flush_rewrite */
		qpx->wr_id = WRID(T_DATA, k, 2 * i + 1);
		ibv_wr_rdma_write(qpx, peer.data_rkey, peer.data_addr + rslot(s, i));
		ibv_wr_set_sge(qpx, data_mr->lkey, (uintptr_t)data_buf, 0);
		track(qpx->wr_id);
	}
	if (s->op == OP_FLUSH)
		flush_rewrite(k);
	err = ibv_wr_complete(qpx);
	if (err)
		die("%s: ibv_wr_complete: %s", step_str(k), strerror(err));
}

static void client_batch(int k)
{
	const struct step *s = &plan[k];
	static const enum ibv_wc_opcode want_op[OP_N] = {
		IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ,
		IBV_WC_COMP_SWAP, IBV_WC_FETCH_ADD, IBV_WC_ATOMIC_WRITE, IBV_WC_RDMA_WRITE };
	char what[256], why[512];
	struct ibv_wc wc;
	double tb = now();
	int i, got = 0, got_send = 0, got_reply = 0;

	/* The server's answer to this batch lands here; posted first so it is never RNR'd. */
	post_ctrl_recv(k);
	if (FILLS_DATA(s->op)) {
		for (i = 0; i < s->count; i++)
			pat_fill(data_buf + lslot(s, i), s->size, msg_seed(s->seq0 + i), 0);
	} else if (s->op == OP_READ) {
		memset(data_buf, POISON, s->count * s->stride + 64); /* stale data must not pass */
	} else if (IS_ATOMIC(s->op)) {
		memset(atom_buf, POISON, 8 * s->count);
	}
	if (!data_mr)
		die("every WQE completed before ibv_dereg_mr: none was in flight (-D wants more or bigger WQEs)");
	if (IS_PLACEMENT(s->op))
		post_placement_batch(k);
	else
		client_post_batch(k);
	if (dereg_early) {
		uint32_t lkey = data_mr->lkey;
		int rc = ibv_dereg_mr(data_mr);

		if (rc)
			die("ibv_dereg_mr(data) with WQEs in flight: %s", strerror(rc));
		printf("rc_verify: client: ibv_dereg_mr(data, lkey 0x%x) returned 0 with %d WQE(s) posted\n",
		       lkey, step_wqes(s));
		fflush(stdout);
		data_mr = NULL;
		dereg_early = 0;
	}

	/* RC completes the send queue in order: exactly WQE 0, 1, 2, ... */
	while (got < step_wqes(s)) {
		/* flush: WQE 2i is the WRITE of message i, 2i+1 its FLUSH */
		int is_flush = s->op == OP_FLUSH && (got & 1);
		int want = is_flush ? WC_FLUSH : (int)want_op[s->op];

		snprintf(what, sizeof(what), "%s: completion of WQE %d", step_str(k), got);
		get_wc(&wc, what);
		if (WR_TAG(wc.wr_id) == T_CTRL_RECV)
			die("server answered before the batch was done: '%s'", ctrl_text(&wc, k, "ok"));
		if (WR_TAG(wc.wr_id) != T_DATA || WR_BATCH(wc.wr_id) != (k & 0xffffff) ||
		    WR_IDX(wc.wr_id) != (uint32_t)got)
			die("%s: want the completion of WQE %d, got: %s", step_str(k), got, wc_str(&wc));
		if ((int)wc.opcode != want)
			die("%s: want opcode %s: %s", step_str(k), wc_op_str((enum ibv_wc_opcode)want),
			    wc_str(&wc));
		/* byte_len of an ATOMIC WRITE or FLUSH completion is not defined: not checked */
		if ((s->op == OP_READ || IS_ATOMIC(s->op)) && wc.byte_len != s->size)
			die("%s: want byte_len %" PRIu64 ": %s", step_str(k), s->size, wc_str(&wc));
		got++;
		ops_done++;
		bytes_done += is_flush ? 0 : s->size;
	}

	for (i = 0; i < s->count; i++) {
		if (s->op == OP_READ) {
			uint8_t *p = data_buf + lslot(s, i);

			snprintf(what, sizeof(what), "%s: READ %d (remote offset %" PRIu64 ")", step_str(k), i,
				 rslot(s, i));
			if (pat_verify(why, sizeof(why), what, p, s->size, READ_SEED, rslot(s, i)) ||
			    poison_verify(why, sizeof(why), what, p + s->size,
					  lslot(s, i + 1) - lslot(s, i) - s->size))
				die("%s", why);
		} else if (IS_ATOMIC(s->op)) {
			uint64_t got_v, want = atom_orig(s, i);

			memcpy(&got_v, atom_buf + 8 * i, 8);
			if (got_v != want)
				die("%s: WQE %d returned original value 0x%016" PRIx64 ", want 0x%016" PRIx64 "%s",
				    step_str(k), i, got_v, want,
				    got_v == __builtin_bswap64(want) ? " (byte-swapped)" : "");
		}
	}

	post_ctrl_send(k, "batch %d done", k);
	snprintf(what, sizeof(what), "%s: 'done' SEND completion and the server's answer", step_str(k));
	while (!got_send || !got_reply) {
		get_wc(&wc, what);
		if (WR_TAG(wc.wr_id) == T_CTRL_SEND && wc.opcode == IBV_WC_SEND) {
			got_send = 1;
		} else if (WR_TAG(wc.wr_id) == T_CTRL_RECV) {
			const char *msg = ctrl_text(&wc, k, "ok");

			if (strstr(msg, " FAIL "))
				die("server: %s", msg);
			got_reply = 1;
		} else {
			die("%s: unexpected completion: %s", what, wc_str(&wc));
		}
	}
	vlog("%s ok in %.3f s", step_str(k), now() - tb);
}

static void run_client(void)
{
	char line[4096], szs[2048], opl[256], gh[40];
	struct ibv_wc wc;
	int k;

	tcp_connect_or_accept();
	fmt_sizes(szs, sizeof(szs), sizes, nsizes);
	fmt_ops(opl, sizeof(opl), ops, nops);
	gid_to_hex(&my_gid, gh);
	tcp_send("rc_verify1 qpn=%u psn=%u gid=%s mtu=%d rd=%d depth=%d rounds=%d ops=%s sizes=%s kill=%d\n",
		 qp->qp_num, my_psn, gh, my_mtu(), my_dest_rd(), depth, rounds, opl, szs, kill_peer);
	tcp_expect_line(line, sizeof(line), "the server's QP information");
	if (strncmp(line, "rc_verify1 ", 11))
		die("peer is not an rc_verify server: '%s'", line);
	peer.qpn = kv_num(line, "qpn");
	peer.psn = kv_num(line, "psn");
	hex_to_gid(kv(line, "gid", gh, sizeof(gh)), &peer.gid);
	peer.mtu = kv_num(line, "mtu");
	peer.rd = kv_num(line, "rd");
	peer.data_addr = kv_num(line, "data_addr");
	peer.data_rkey = kv_num(line, "data_rkey");
	peer.read_addr = kv_num(line, "read_addr");
	peer.read_rkey = kv_num(line, "read_rkey");
	peer.atom_addr = kv_num(line, "atom_addr");
	peer.atom_rkey = kv_num(line, "atom_rkey");
	vlog("server: %s", line);
	qp_connect();

	if (kill_peer) {
		/* -K: the server tears its QP down and exits; start only once it is gone. */
		if (tcp_read_line(line, sizeof(line), now() + tmo) != 0)
			die("-K: the server did not close the connection within %d s", tmo);
		close(tcp_fd);
		tcp_fd = -1;
		vlog("server is gone; starting traffic towards its dead QP");
	} else {
		tcp_expect_line(line, sizeof(line), "the server's 'ready'");
		if (strcmp(line, "ready"))
			die("want 'ready' from the server, got '%s'", line);
	}

	t0 = now();
	vlog("traffic starts");
	for (k = 0; k < nsteps; k++) {
		client_batch(k);
		if (idle_ms)
			usleep(idle_ms * 1000);
	}
	if (expect != -1)
		die("expected a %s completion, but all %d batches succeeded", expect_str(), nsteps);
	if (ntrk)
		die("internal: %d WQE(s) still outstanding at the end", ntrk);
	tcp_send("bye\n");
	tcp_expect_line(line, sizeof(line), "the server's 'bye'");
	if (strcmp(line, "bye"))
		die("want 'bye' from the server, got '%s'", line);
	/* Anything completing now was never posted: a duplicate. */
	if (next_wc(&wc, now() + 0.2, 0))
		die("extra completion after the end: %s", wc_str(&wc));
	printf("rc_verify: OK ops=%" PRIu64 " bytes=%" PRIu64 " secs=%.2f\n", ops_done, bytes_done,
	       now() - t0);
}

/* ---- server ---- */

/* Tell the client what is wrong (control SEND and TCP), then FAIL. */
static void server_fail(int k, const char *why) __attribute__((noreturn));
static void server_fail(int k, const char *why)
{
	struct ibv_wc wc;
	double dl = now() + 2.0;
	uint64_t id = WRID(T_CTRL_SEND, k, 0);

	if (!tracked(id)) {
		post_ctrl_send(k, "batch %d FAIL %.200s", k, why);
		while (tracked(id) && next_wc(&wc, dl, 0) == 1)
			untrack(wc.wr_id);
	}
	die("%s", why);
}

/* Before batch k: poison what the client will write, reset the atomic targets. */
static void server_prep(int k)
{
	const struct step *s;

	if (k >= nsteps)
		return;
	s = &plan[k];
	if (FILLS_DATA(s->op) || s->op == OP_AWRITE)
		memset(data_buf, POISON, s->count * s->stride + 64);
	else if (s->op == OP_CAS)
		__atomic_store_n((uint64_t *)atom_buf, atom_init(s), __ATOMIC_SEQ_CST);
	else if (s->op == OP_FAA)
		__atomic_store_n((uint64_t *)atom_buf + 1, atom_init(s), __ATOMIC_SEQ_CST);
}

/* Receives for batch k: one per SEND or WRITE_IMM, then one for "batch k done". */
static void server_post(int k)
{
	const struct step *s;
	int i;

	if (k >= nsteps || no_post)
		return;
	s = &plan[k];
	for (i = 0; i < s->count; i++) {
		if (s->op == OP_SEND)
			post_recv(WRID(T_DATA_RECV, k, i), data_buf + rslot(s, i), s->size, data_mr->lkey);
		else if (s->op == OP_WRITEIMM)
			post_recv(WRID(T_DATA_RECV, k, i), NULL, 0, 0); /* consumed by the immediate */
	}
	post_ctrl_recv(k);
}

static void server_late(void)
{
	if (late_ms)
		usleep(late_ms * 1000);
}

/* Check what batch k left in our memory; 0 if all is right. */
static int server_verify(int k, char *why, size_t wsz)
{
	const struct step *s = &plan[k];
	char what[256];
	uint64_t v, want;
	int i;

	switch (s->op) {
	case OP_SEND:
	case OP_WRITE:
	case OP_WRITEIMM:
	case OP_FLUSH:
		for (i = 0; i < s->count; i++) {
			uint8_t *p = data_buf + rslot(s, i);

			snprintf(what, sizeof(what), "%s: %s %d (seq %" PRIu64 ")", step_str(k),
				 op_names[s->op], i, s->seq0 + i);
			if (pat_verify(why, wsz, what, p, s->size, msg_seed(s->seq0 + i), 0) ||
			    poison_verify(why, wsz, what, p + s->size,
					  rslot(s, i + 1) - rslot(s, i) - s->size))
				return 1;
		}
		break;
	case OP_AWRITE:
		/* each slot holds exactly its 8 bytes; poison up to the next slot */
		for (i = 0; i < s->count; i++) {
			uint8_t *p = data_buf + aslot(s, i);

			snprintf(what, sizeof(what), "%s: awrite %d (seq %" PRIu64 ", offset %" PRIu64 ")",
				 step_str(k), i, s->seq0 + i, aslot(s, i));
			if (pat_verify(why, wsz, what, p, 8, msg_seed(s->seq0 + i), 0) ||
			    poison_verify(why, wsz, what, p + 8, aslot(s, i + 1) - aslot(s, i) - 8))
				return 1;
		}
		break;
	case OP_CAS:
	case OP_FAA:
		v = __atomic_load_n((uint64_t *)atom_buf + (s->op == OP_FAA), __ATOMIC_SEQ_CST);
		want = atom_orig(s, s->count);
		if (v != want) {
			snprintf(why, wsz, "%s: final value 0x%016" PRIx64 ", want 0x%016" PRIx64,
				 step_str(k), v, want);
			return 1;
		}
		break;
	}
	return 0;
}

static void server_batch(int k)
{
	const struct step *s = &plan[k];
	int nrecv = s->op == OP_SEND || s->op == OP_WRITEIMM ? s->count : 0;
	int got = 0, done = 0;
	char what[256], why[768];
	struct ibv_wc wc;
	double tb = now();

	snprintf(what, sizeof(what), "%s: the client's SENDs and its 'done'", step_str(k));
	while (!done) {
		int t, i;
		uint64_t seq;

		get_wc(&wc, what);
		t = WR_TAG(wc.wr_id);
		i = WR_IDX(wc.wr_id);
		seq = s->seq0 + i;
		if (t == T_CTRL_SEND && wc.opcode == IBV_WC_SEND && WR_BATCH(wc.wr_id) == ((k - 1) & 0xffffff))
			continue; /* our answer to the previous batch */
		if (WR_BATCH(wc.wr_id) != (k & 0xffffff)) {
			snprintf(why, sizeof(why), "%s: completion of another batch: %s", step_str(k),
				 wc_str(&wc));
			server_fail(k, why);
		}
		if (t == T_CTRL_RECV) {
			ctrl_text(&wc, k, "done");
			done = 1;
			continue;
		}
		/* the receive queue completes in order, and RC delivers in order */
		if (t != T_DATA_RECV || i != got) {
			snprintf(why, sizeof(why), "%s: want receive %d, got: %s", step_str(k), got, wc_str(&wc));
			server_fail(k, why);
		}
		if (s->op == OP_SEND &&
		    (wc.opcode != IBV_WC_RECV || (wc.wc_flags & IBV_WC_WITH_IMM) || wc.byte_len != s->size)) {
			snprintf(why, sizeof(why), "%s: want RECV without imm, byte_len %" PRIu64 ": %s",
				 step_str(k), s->size, wc_str(&wc));
			server_fail(k, why);
		}
		if (s->op == OP_WRITEIMM &&
		    (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM || !(wc.wc_flags & IBV_WC_WITH_IMM) ||
		     ntohl(wc.imm_data) != (uint32_t)seq || wc.byte_len != s->size)) {
			snprintf(why, sizeof(why),
				 "%s: want RECV_RDMA_WITH_IMM, imm %u, byte_len %" PRIu64 "; got imm %u flags 0x%x: %s",
				 step_str(k), (uint32_t)seq, s->size, ntohl(wc.imm_data), wc.wc_flags, wc_str(&wc));
			server_fail(k, why);
		}
		got++;
	}
	if (got != nrecv) {
		snprintf(why, sizeof(why), "%s: 'done' arrived after %d of %d receives", step_str(k), got, nrecv);
		server_fail(k, why);
	}
	if (server_verify(k, why, sizeof(why)))
		server_fail(k, why);
	ops_done += step_wqes(s);
	bytes_done += s->count * s->size;

	/* The previous answer's buffer is reused two batches later; make sure it is done. */
	while (tracked(WRID(T_CTRL_SEND, k - 1, 0))) {
		get_wc(&wc, "completion of our previous 'ok' SEND");
		if (WR_TAG(wc.wr_id) != T_CTRL_SEND)
			die("unexpected completion: %s", wc_str(&wc));
	}
	/* Ready the next batch before the client may start it (unless told to be late). */
	server_prep(k + 1);
	if (!late_ms)
		server_post(k + 1);
	post_ctrl_send(k, "batch %d ok", k);
	if (late_ms) {
		server_late();
		server_post(k + 1);
	}
	vlog("%s verified in %.3f s", step_str(k), now() - tb);
}

static void run_server(void)
{
	char line[4096], v[2048], gh[40];
	uint64_t csizes[MAX_SIZES];
	int cops[MAX_OPS], cn, k, crounds, cdepth;
	struct ibv_wc wc;

	tcp_connect_or_accept();
	tcp_expect_line(line, sizeof(line), "the client's QP information");
	if (strncmp(line, "rc_verify1 ", 11))
		die("peer is not an rc_verify client: '%s'", line);
	vlog("client: %s", line);

	/* Run the client's plan; options given here explicitly must agree with it. */
	cn = parse_sizes(kv(line, "sizes", v, sizeof(v)), csizes);
	if (given_S && (cn != nsizes || memcmp(csizes, sizes, cn * sizeof(*sizes))))
		die("plan mismatch: client -S %s, server -S differs", v);
	nsizes = cn;
	memcpy(sizes, csizes, cn * sizeof(*sizes));
	cn = parse_ops(kv(line, "ops", v, sizeof(v)), cops);
	if (given_o && (cn != nops || memcmp(cops, ops, cn * sizeof(*ops))))
		die("plan mismatch: client -o %s, server -o differs", v);
	nops = cn;
	memcpy(ops, cops, cn * sizeof(*ops));
	crounds = kv_num(line, "rounds");
	cdepth = kv_num(line, "depth");
	if ((given_n && crounds != rounds) || (given_q && cdepth != depth))
		die("plan mismatch: client -n %d -q %d, server -n %d -q %d", crounds, cdepth, rounds, depth);
	if (crounds < 1 || cdepth < 1 || cdepth > 4096)
		die("bad plan from the client: rounds %d depth %d", crounds, cdepth);
	rounds = crounds;
	depth = cdepth;
	kill_peer |= (int)kv_num(line, "kill");
	peer.qpn = kv_num(line, "qpn");
	peer.psn = kv_num(line, "psn");
	hex_to_gid(kv(line, "gid", gh, sizeof(gh)), &peer.gid);
	peer.mtu = kv_num(line, "mtu");
	peer.rd = kv_num(line, "rd");

	build_plan();
	{
		const char *why = placement_missing();

		if (why)
			skip("%s", why); /* the client reads it instead of our QP information */
	}
	create_resources();
	qp_connect();
	gid_to_hex(&my_gid, gh);
	tcp_send("rc_verify1 qpn=%u psn=%u gid=%s mtu=%d rd=%d data_addr=0x%" PRIx64
		 " data_rkey=0x%x read_addr=0x%" PRIx64 " read_rkey=0x%x atom_addr=0x%" PRIx64
		 " atom_rkey=0x%x nopost=%d late=%d\n",
		 qp->qp_num, my_psn, gh, my_mtu(), my_dest_rd(), (uint64_t)(uintptr_t)data_buf,
		 data_mr->rkey, (uint64_t)(uintptr_t)read_buf, read_mr->rkey,
		 (uint64_t)(uintptr_t)atom_buf, atom_mr->rkey, no_post, late_ms);

	if (kill_peer) {
		/* -K: vanish. Destroy the QP before closing TCP, which tells the client it is gone. */
		ibv_destroy_qp(qp);
		qp = NULL;
		close(tcp_fd);
		tcp_fd = -1;
		printf("rc_verify: OK ops=0 bytes=0 secs=0.00\n");
		return;
	}

	t0 = now();
	server_prep(0);
	if (!late_ms)
		server_post(0);
	tcp_send("ready\n");
	if (late_ms) {
		server_late();
		server_post(0);
	}

	if (no_post) {
		/* -N: nothing can arrive; only the client's verdict on TCP ends this. */
		get_wc(&wc, "the client (this server posts no receives)");
		die("unexpected completion: %s", wc_str(&wc));
	}
	for (k = 0; k < nsteps; k++)
		server_batch(k);
	tcp_watch = 0; /* the client's "bye" may arrive before our last completion */
	while (ntrk) {
		get_wc(&wc, "completion of the last 'ok' SEND");
		if (WR_TAG(wc.wr_id) != T_CTRL_SEND)
			die("unexpected completion: %s", wc_str(&wc));
	}
	tcp_expect_line(line, sizeof(line), "the client's 'bye'");
	if (!strcmp(line, "end-expected"))
		server_end_expected();
	if (strcmp(line, "bye"))
		die("want 'bye' from the client, got '%s'", line);
	tcp_send("bye\n");
	/* Anything completing now was never posted: a duplicate. */
	if (next_wc(&wc, now() + 0.2, 0))
		die("extra completion after the end: %s", wc_str(&wc));
	printf("rc_verify: OK ops=%" PRIu64 " bytes=%" PRIu64 " secs=%.2f\n", ops_done, bytes_done,
	       now() - t0);
}

int main(int argc, char **argv)
{
	int c;

	t_start = now();
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	nsizes = parse_sizes("1,2,63,64,1000,1024,1025,4096,65536,65537,262147,1048576,4194304", sizes);
	nops = parse_ops("send,write,writeimm,read,cas,faa", ops);
	while ((c = getopt(argc, argv, "sc:d:x:p:S:o:n:q:t:m:T:r:R:M:L:NE:W:KH:DG:I:1f:vh")) != -1) {
		switch (c) {
		case 's': is_server = 1; break;
		case 'c': server_ip = optarg; break;
		case 'd': dev_name = optarg; break;
		case 'x': gid_idx = atoi(optarg); break;
		case 'p': tcp_port = atoi(optarg); break;
		case 'S': nsizes = parse_sizes(optarg, sizes); given_S = 1; break;
		case 'o': nops = parse_ops(optarg, ops); given_o = 1; break;
		case 'n': rounds = atoi(optarg); given_n = 1; break;
		case 'q': depth = atoi(optarg); given_q = 1; break;
		case 't': tmo = atoi(optarg); break;
		case 'm': mtu_opt = atoi(optarg); mtu_enum(mtu_opt); break;
		case 'T': ack_timeout = atoi(optarg); break;
		case 'r': retry_cnt = atoi(optarg); break;
		case 'R': rnr_retry = atoi(optarg); break;
		case 'M': min_rnr = atoi(optarg); break;
		case 'L': late_ms = atoi(optarg); break;
		case 'N': no_post = 1; break;
		case 'E':
			if (!strcmp(optarg, "rnr_retry_exc"))
				expect = IBV_WC_RNR_RETRY_EXC_ERR;
			else if (!strcmp(optarg, "retry_exc"))
				expect = IBV_WC_RETRY_EXC_ERR;
			else if (!strcmp(optarg, "loc_prot"))
				expect = IBV_WC_LOC_PROT_ERR;
			else if (!strcmp(optarg, "any"))
				expect = -2;
			else
				usage();
			break;
		case 'W': expect_secs = atoi(optarg); break;
		case 'K': kill_peer = 1; break;
		case 'H': hold_secs = atoi(optarg); break;
		case 'D': dereg_early = 1; break;
		case 'G': gather_n = atoi(optarg); break;
		case 'I': idle_ms = atoi(optarg); break;
		case '1': one_post = 1; break;
		case 'f': fence_every = atoi(optarg); break;
		case 'v': verbose = 1; break;
		default: usage();
		}
	}
	if (optind != argc || is_server == !!server_ip || rounds < 1 || depth < 1 || depth > 4096 ||
	    tmo < 1 || expect_secs < 1 || ack_timeout < 0 || ack_timeout > 31 || retry_cnt < 0 ||
	    retry_cnt > 7 || rnr_retry < 0 || rnr_retry > 7 || min_rnr < 0 || min_rnr > 31 ||
	    late_ms < 0 || idle_ms < 0 || tcp_port < 1 || tcp_port > 65535 || hold_secs < 0 || gather_n < 1 ||
	    gather_n > 32 || fence_every < 0)
		usage();
	if (is_server && (expect != -1 || dereg_early || gather_n > 1 || idle_ms || fence_every))
		usage(); /* -E, -D, -G, -I and -f are the client's */
	if (dereg_early && gather_n > 1)
		usage(); /* -D deregisters the data MR, which -G does not send from */

	open_device();
	if (is_server) {
		run_server();
	} else {
		const char *why;

		build_plan();
		why = placement_missing();
		if (why)
			client_skip(why);
		create_resources();
		run_client();
	}
	if (hold_secs) {
		printf("rc_verify: HOLD qpn=%u\n", qp->qp_num);
		fflush(stdout);
		sleep(hold_secs);
	}
	return 0;
}
