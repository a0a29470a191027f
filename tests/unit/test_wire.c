// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests for the sroce wire codec. Self-contained: a tiny runner,
 * no external framework. Ends with "N passed, N failed".
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "sroce/wire/types.h"
#include "sroce/wire/opcode.h"
#include "sroce/wire/hdr.h"
#include "sroce/wire/icrc.h"
#include "sroce/wire/psn.h"
#include "sroce/wire/aeth.h"
#include "sroce/wire/qp_state.h"
#include "sroce/wire/udp.h"

struct icrc_vec {
	const char *name;
	bool ipv6;
	unsigned int l3_len;
	const unsigned char *pkt;
	unsigned int len;
	u8 opcode;
	unsigned int payload_len;
	unsigned char icrc[4];
};

struct crc_vec {
	unsigned int len;
	const unsigned char *data;
	u32 crc;
};

#include "icrc_vectors.h"

/* ---- runner ---- */

static int n_pass, n_fail, cur_fail;

#define CHECK(c)							\
	do {								\
		if (!(c)) {						\
			if (cur_fail++ < 10)				\
				printf("    %s:%d: CHECK(%s)\n",	\
				       __FILE__, __LINE__, #c);		\
		}							\
	} while (0)

#define CHECK_EQ(a, b)							\
	do {								\
		unsigned long long a_ = (unsigned long long)(a);	\
		unsigned long long b_ = (unsigned long long)(b);	\
		if (a_ != b_) {						\
			if (cur_fail++ < 10)				\
				printf("    %s:%d: %s == %s (0x%llx != 0x%llx)\n", \
				       __FILE__, __LINE__, #a, #b, a_, b_); \
		}							\
	} while (0)

static void run(const char *name, void (*fn)(void))
{
	cur_fail = 0;
	fn();
	if (cur_fail) {
		n_fail++;
		printf("FAIL %s (%d checks)\n", name, cur_fail);
	} else {
		n_pass++;
		printf("PASS %s\n", name);
	}
}

#define RUN(t) run(#t, t)

/* deterministic PRNG (xorshift64*) */
static u64 rng_state = 0x9e3779b97f4a7c15ull;

static u64 rnd64(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static u32 rnd32(void)
{
	return (u32)(rnd64() >> 32);
}

/* ---- byte order ---- */

static void test_byteorder(void)
{
	u8 b[8] = { 0 };

	sroce_put_be16(b, 0x1234);
	CHECK(b[0] == 0x12 && b[1] == 0x34);
	CHECK_EQ(sroce_get_be16(b), 0x1234);
	sroce_put_be24(b, 0xabcdef);
	CHECK(b[0] == 0xab && b[1] == 0xcd && b[2] == 0xef);
	CHECK_EQ(sroce_get_be24(b), 0xabcdef);
	sroce_put_be32(b, 0xdeadbeef);
	CHECK(b[0] == 0xde && b[3] == 0xef);
	CHECK_EQ(sroce_get_be32(b), 0xdeadbeef);
	sroce_put_be64(b, 0x0102030405060708ull);
	CHECK(b[0] == 1 && b[7] == 8);
	CHECK_EQ(sroce_get_be64(b), 0x0102030405060708ull);
}

/* ---- opcode table ---- */

/* Independent list of the opcodes we expect to be defined. */
static bool expect_known(unsigned int op)
{
	unsigned int t = op & 0xe0, x = op & 0x1f;

	switch (t) {
	case 0x00:
		return x <= 0x14 || x == 0x16 || x == 0x17 || x == 0x1c ||
		       x == 0x1d;
	case 0x20:
		return x <= 0x0b;
	case 0x40:
		return x <= 0x15;
	case 0x60:
		return x == 0x04 || x == 0x05;
	case 0x80:
		return x == 0x01;
	case 0xa0:
		return x <= 0x14 || x == 0x16 || x == 0x17;
	default:
		return false;
	}
}

static const unsigned int hdr_size[SROCE_NUM_HDR] = {
	[SROCE_HDR_BTH] = 12, [SROCE_HDR_RDETH] = 4, [SROCE_HDR_DETH] = 8,
	[SROCE_HDR_XRCETH] = 4, [SROCE_HDR_RETH] = 16,
	[SROCE_HDR_ATMETH] = 28, [SROCE_HDR_AETH] = 4,
	[SROCE_HDR_ATMACK] = 8, [SROCE_HDR_IMMDT] = 4, [SROCE_HDR_IETH] = 4,
	[SROCE_HDR_FETH] = 4, [SROCE_HDR_PAYLOAD] = 0,
};

static const int wire_order[] = {
	SROCE_HDR_BTH, SROCE_HDR_RDETH, SROCE_HDR_DETH, SROCE_HDR_XRCETH,
	SROCE_HDR_FETH, SROCE_HDR_RETH, SROCE_HDR_ATMETH, SROCE_HDR_AETH,
	SROCE_HDR_ATMACK, SROCE_HDR_IMMDT, SROCE_HDR_IETH, SROCE_HDR_PAYLOAD,
};

static void test_opcode_all_256(void)
{
	unsigned int op, i, known = 0;

	for (op = 0; op < 256; op++) {
		const struct sroce_opcode_info *info = sroce_opcode_info((u8)op);
		unsigned int off = 0, tbits;
		u32 m;

		CHECK_EQ(info != NULL, expect_known(op));
		if (!info)
			continue;
		known++;
		m = info->mask;
		CHECK(info->name && info->name[0]);
		CHECK(m & SROCE_M_BTH);
		/* offsets follow the wire order and sizes */
		for (i = 0; i < sizeof(wire_order) / sizeof(wire_order[0]); i++) {
			int h = wire_order[i];

			if (!(m & (1u << h)) && h != SROCE_HDR_PAYLOAD)
				continue;
			CHECK_EQ(info->offset[h], off);
			off += hdr_size[h];
		}
		CHECK_EQ(info->hdr_len, off);
		CHECK_EQ(info->hdr_len % 4, 0);
		CHECK(info->hdr_len <= SROCE_MAX_HDR_BYTES);
		/* a full path MTU after them fits the port's MTU (IPv6, UDP) */
		if (m & SROCE_M_PAYLOAD)
			CHECK(40 + 8 + info->hdr_len + SROCE_ICRC_BYTES <=
			      SROCE_IBOE_MTU_OVERHEAD);
		/* exactly one transport bit, consistent with opcode[7:5] */
		tbits = !!(m & SROCE_M_RC) + !!(m & SROCE_M_UC) +
			!!(m & SROCE_M_RD) + !!(m & SROCE_M_UD) +
			!!(m & SROCE_M_XRC) + !!(m & SROCE_M_CNP);
		CHECK_EQ(tbits, 1);
		CHECK_EQ(!!(m & SROCE_M_RC), (op & 0xe0) == 0x00);
		CHECK_EQ(!!(m & SROCE_M_UC), (op & 0xe0) == 0x20);
		CHECK_EQ(!!(m & SROCE_M_RD), (op & 0xe0) == 0x40);
		CHECK_EQ(!!(m & SROCE_M_UD), (op & 0xe0) == 0x60);
		CHECK_EQ(!!(m & SROCE_M_XRC), (op & 0xe0) == 0xa0);
		/* request/response exclusive; header rules per transport */
		CHECK(!((m & SROCE_M_REQ) && (m & SROCE_M_RESP)));
		if (m & SROCE_M_RD)
			CHECK(m & SROCE_M_RDETH);
		if ((m & SROCE_M_RD) && (m & SROCE_M_REQ))
			CHECK(m & SROCE_M_DETH);
		if (m & SROCE_M_UD)
			CHECK(m & SROCE_M_DETH);
		if (m & SROCE_M_XRC)
			CHECK_EQ(!!(m & SROCE_M_XRCETH), !!(m & SROCE_M_REQ));
		if (!(m & (SROCE_M_RD | SROCE_M_UD)))
			CHECK(!(m & (SROCE_M_RDETH | SROCE_M_DETH)));
		if (m & SROCE_M_ACK)
			CHECK(m & SROCE_M_AETH);
		CHECK(!((m & SROCE_M_RETH) && (m & SROCE_M_ATMETH)));
		CHECK(!((m & SROCE_M_IMMDT) && (m & SROCE_M_IETH)));
	}
	CHECK_EQ(known, 25 + 12 + 22 + 2 + 1 + 23);
	CHECK(sroce_opcode_info(0x15) == NULL);
	CHECK(sroce_opcode_info(0xff) == NULL);
	CHECK(!strcmp(sroce_opcode_name(0x15), "UNKNOWN"));
	CHECK(!strcmp(sroce_opcode_name(SROCE_OP_RC_SEND_ONLY), "RC_SEND_ONLY"));
}

static void test_opcode_layouts(void)
{
	const struct sroce_opcode_info *i;

	i = sroce_opcode_info(SROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
	CHECK(i && i->offset[SROCE_HDR_RETH] == 12 &&
	      i->offset[SROCE_HDR_IMMDT] == 28 && i->hdr_len == 32);
	CHECK(i && (i->mask & SROCE_M_COMP_RECV) && (i->mask & SROCE_M_IMM));
	i = sroce_opcode_info(SROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE);
	CHECK(i && i->hdr_len == 12 && !(i->mask & SROCE_M_AETH));
	i = sroce_opcode_info(SROCE_OP_RC_RDMA_READ_RESPONSE_FIRST);
	CHECK(i && i->hdr_len == 16 && (i->mask & SROCE_M_AETH) &&
	      (i->mask & SROCE_M_FIRST) && !(i->mask & SROCE_M_LAST));
	i = sroce_opcode_info(SROCE_OP_RC_ATOMIC_ACKNOWLEDGE);
	CHECK(i && i->offset[SROCE_HDR_AETH] == 12 &&
	      i->offset[SROCE_HDR_ATMACK] == 16 && i->hdr_len == 24);
	i = sroce_opcode_info(SROCE_OP_RD_COMPARE_SWAP);
	CHECK(i && i->offset[SROCE_HDR_RDETH] == 12 &&
	      i->offset[SROCE_HDR_DETH] == 16 &&
	      i->offset[SROCE_HDR_ATMETH] == 24 && i->hdr_len == 52);
	i = sroce_opcode_info(SROCE_OP_RD_ACKNOWLEDGE);
	CHECK(i && i->offset[SROCE_HDR_AETH] == 16 && i->hdr_len == 20);
	i = sroce_opcode_info(SROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE);
	CHECK(i && i->offset[SROCE_HDR_DETH] == 12 &&
	      i->offset[SROCE_HDR_IMMDT] == 20 && i->hdr_len == 24);
	i = sroce_opcode_info(SROCE_OP_XRC_SEND_ONLY_WITH_INVALIDATE);
	CHECK(i && i->offset[SROCE_HDR_XRCETH] == 12 &&
	      i->offset[SROCE_HDR_IETH] == 16 && i->hdr_len == 20);
	i = sroce_opcode_info(SROCE_OP_XRC_RDMA_WRITE_FIRST);
	CHECK(i && i->offset[SROCE_HDR_RETH] == 16 && i->hdr_len == 32);
	i = sroce_opcode_info(SROCE_OP_XRC_ACKNOWLEDGE);
	CHECK(i && i->offset[SROCE_HDR_AETH] == 12 && i->hdr_len == 16);
	i = sroce_opcode_info(SROCE_OP_RC_FLUSH);
	CHECK(i && i->offset[SROCE_HDR_FETH] == 12 &&
	      i->offset[SROCE_HDR_RETH] == 16 && i->hdr_len == 32 &&
	      !(i->mask & SROCE_M_PAYLOAD));
	i = sroce_opcode_info(SROCE_OP_RC_ATOMIC_WRITE);
	CHECK(i && i->hdr_len == 28 && (i->mask & SROCE_M_PAYLOAD));
	i = sroce_opcode_info(SROCE_OP_RC_COMPARE_SWAP);
	CHECK(i && i->hdr_len == 40 && (i->mask & SROCE_M_ATOMIC) &&
	      !(i->mask & SROCE_M_PAYLOAD));
	i = sroce_opcode_info(SROCE_OP_RC_SEND_MIDDLE);
	CHECK(i && (i->mask & SROCE_M_MIDDLE) &&
	      !(i->mask & SROCE_M_COMP_RECV));
	i = sroce_opcode_info(SROCE_OP_RC_SEND_ONLY);
	CHECK(i && (i->mask & SROCE_M_ONLY) == SROCE_M_ONLY);
	i = sroce_opcode_info(SROCE_OP_CNP);
	CHECK(i && i->hdr_len == 12);
}

/* ---- header round trip ---- */

static void random_hdrs(struct sroce_pkt_hdrs *h, u8 op)
{
	memset(h, 0, sizeof(*h));
	h->bth.opcode = op;
	h->bth.se = rnd32() & 1;
	h->bth.mig = rnd32() & 1;
	h->bth.tver = 0;
	h->bth.pkey = (u16)rnd32();
	h->bth.fecn = rnd32() & 1;
	h->bth.becn = rnd32() & 1;
	h->bth.dqpn = rnd32() & 0xffffff;
	h->bth.ackreq = rnd32() & 1;
	h->bth.psn = rnd32() & 0xffffff;
	h->rdeth.een = rnd32() & 0xffffff;
	h->deth.qkey = rnd32();
	h->deth.sqpn = rnd32() & 0xffffff;
	h->xrceth.xrcsrq = rnd32() & 0xffffff;
	h->feth.sel = rnd32() & 3;
	h->feth.plt = rnd32() & 0xf;
	h->reth.va = rnd64();
	h->reth.rkey = rnd32();
	h->reth.len = rnd32();
	h->atmeth.va = rnd64();
	h->atmeth.rkey = rnd32();
	h->atmeth.swap_add = rnd64();
	h->atmeth.cmp = rnd64();
	h->aeth.syndrome = (u8)rnd32();
	h->aeth.msn = rnd32() & 0xffffff;
	h->atmack.orig = rnd64();
	h->imm = rnd32();
	h->ieth_rkey = rnd32();
}

static void test_roundtrip_all_opcodes(void)
{
	unsigned int op, iter, count = 0;

	for (op = 0; op < 256; op++) {
		const struct sroce_opcode_info *info = sroce_opcode_info((u8)op);

		if (!info)
			continue;
		for (iter = 0; iter < 64; iter++) {
			struct sroce_pkt_hdrs a, b;
			u8 buf[SROCE_MAX_HDR_BYTES + 64 + 4];
			u32 plen = 0, len, hl;
			u32 m = info->mask;
			int err;

			random_hdrs(&a, (u8)op);
			if (m & SROCE_M_PAYLOAD)
				plen = rnd32() % 61;
			a.bth.padcnt = sroce_pad_len(plen);
			memset(buf, 0xa5, sizeof(buf));
			hl = sroce_hdrs_build(buf, &a);
			CHECK_EQ(hl, info->hdr_len);
			len = hl + plen + a.bth.padcnt + SROCE_ICRC_BYTES;
			CHECK(len <= sizeof(buf));
			/* reserved bits must be zero on the wire */
			CHECK_EQ(buf[4] & 0x3f, 0);
			CHECK_EQ(buf[8] & 0x7f, 0);
			if (m & SROCE_M_DETH)
				CHECK_EQ(buf[info->offset[SROCE_HDR_DETH] + 4], 0);

			memset(&b, 0x5a, sizeof(b));
			err = sroce_hdrs_parse(buf, len, &b);
			CHECK_EQ(err, 0);
			if (err)
				continue;
			count++;
			CHECK(b.info == info);
			CHECK_EQ(b.hdr_len, info->hdr_len);
			CHECK_EQ(b.payload_len, plen);
			CHECK_EQ(b.bth.opcode, a.bth.opcode);
			CHECK_EQ(b.bth.se, a.bth.se);
			CHECK_EQ(b.bth.mig, a.bth.mig);
			CHECK_EQ(b.bth.padcnt, a.bth.padcnt);
			CHECK_EQ(b.bth.tver, 0);
			CHECK_EQ(b.bth.pkey, a.bth.pkey);
			CHECK_EQ(b.bth.fecn, a.bth.fecn);
			CHECK_EQ(b.bth.becn, a.bth.becn);
			CHECK_EQ(b.bth.dqpn, a.bth.dqpn);
			CHECK_EQ(b.bth.ackreq, a.bth.ackreq);
			CHECK_EQ(b.bth.psn, a.bth.psn);
			if (m & SROCE_M_RDETH)
				CHECK_EQ(b.rdeth.een, a.rdeth.een);
			if (m & SROCE_M_DETH) {
				CHECK_EQ(b.deth.qkey, a.deth.qkey);
				CHECK_EQ(b.deth.sqpn, a.deth.sqpn);
			}
			if (m & SROCE_M_XRCETH)
				CHECK_EQ(b.xrceth.xrcsrq, a.xrceth.xrcsrq);
			if (m & SROCE_M_FETH) {
				CHECK_EQ(b.feth.sel, a.feth.sel);
				CHECK_EQ(b.feth.plt, a.feth.plt);
			}
			if (m & SROCE_M_RETH) {
				CHECK_EQ(b.reth.va, a.reth.va);
				CHECK_EQ(b.reth.rkey, a.reth.rkey);
				CHECK_EQ(b.reth.len, a.reth.len);
			}
			if (m & SROCE_M_ATMETH) {
				CHECK_EQ(b.atmeth.va, a.atmeth.va);
				CHECK_EQ(b.atmeth.rkey, a.atmeth.rkey);
				CHECK_EQ(b.atmeth.swap_add, a.atmeth.swap_add);
				CHECK_EQ(b.atmeth.cmp, a.atmeth.cmp);
			}
			if (m & SROCE_M_AETH) {
				CHECK_EQ(b.aeth.syndrome, a.aeth.syndrome);
				CHECK_EQ(b.aeth.msn, a.aeth.msn);
			}
			if (m & SROCE_M_ATMACK)
				CHECK_EQ(b.atmack.orig, a.atmack.orig);
			if (m & SROCE_M_IMMDT)
				CHECK_EQ(b.imm, a.imm);
			if (m & SROCE_M_IETH)
				CHECK_EQ(b.ieth_rkey, a.ieth_rkey);
		}
	}
	CHECK_EQ(count, 85 * 64);
	{
		struct sroce_pkt_hdrs h;
		u8 buf[SROCE_MAX_HDR_BYTES];

		memset(&h, 0, sizeof(h));
		h.bth.opcode = 0x15;
		CHECK_EQ(sroce_hdrs_build(buf, &h), 0);
	}
}

static void test_bth_known_bytes(void)
{
	static const u8 want[12] = {
		0x0a, 0xd0, 0xff, 0xff, 0x80, 0x12, 0x34, 0x56,
		0x80, 0xab, 0xcd, 0xef,
	};
	struct sroce_bth b = {
		.opcode = SROCE_OP_RC_RDMA_WRITE_ONLY, .se = true,
		.mig = true, .padcnt = 1, .tver = 0, .pkey = 0xffff,
		.fecn = true, .becn = false, .dqpn = 0x123456,
		.ackreq = true, .psn = 0xabcdef,
	};
	u8 got[12];

	sroce_bth_pack(got, &b);
	CHECK(!memcmp(got, want, sizeof(want)));
}

/* ---- parse robustness ---- */

static void test_parse_truncated(void)
{
	unsigned int op, l;

	for (op = 0; op < 256; op++) {
		const struct sroce_opcode_info *info = sroce_opcode_info((u8)op);
		struct sroce_pkt_hdrs h;
		u8 full[SROCE_MAX_HDR_BYTES + 32 + 4];
		u32 plen, len;

		if (!info)
			continue;
		random_hdrs(&h, (u8)op);
		plen = (info->mask & SROCE_M_PAYLOAD) ? 29 : 0;
		h.bth.padcnt = sroce_pad_len(plen);
		len = sroce_hdrs_build(full, &h) + plen + h.bth.padcnt + 4;
		memset(full + info->hdr_len, 0x11, len - info->hdr_len);
		CHECK_EQ(sroce_hdrs_parse(full, len, &h), 0);
		{
			/* parse must not touch anything past the headers */
			u8 *hp = malloc(info->hdr_len);

			memcpy(hp, full, info->hdr_len);
			CHECK_EQ(sroce_hdrs_parse(hp, len, &h), 0);
			free(hp);
		}

		for (l = 0; l < len; l++) {
			/* exact-size heap copy so ASan catches any overread */
			u8 *p = malloc(l ? l : 1);
			int err;

			memcpy(p, full, l);
			err = sroce_hdrs_parse(p, l, &h);
			if (l < (u32)info->hdr_len + SROCE_ICRC_BYTES)
				CHECK_EQ(err, -SROCE_DROP_SHORT);
			else if (err == 0)
				CHECK(h.payload_len + h.bth.padcnt + h.hdr_len +
				      4 == l);
			else
				CHECK(err == -SROCE_DROP_BAD_ALIGN ||
				      err == -SROCE_DROP_BAD_PAD);
			free(p);
		}
	}
}

static void test_parse_errors(void)
{
	static const u8 unknown[] = {
		0x15, 0x18, 0x1b, 0x1e, 0x1f, 0x2c, 0x30, 0x56, 0x60,
		0x63, 0x66, 0x80, 0x82, 0xb5, 0xb8, 0xc0, 0xe0, 0xff,
	};
	struct sroce_pkt_hdrs h;
	u8 p[64];
	unsigned int i;

	memset(p, 0, sizeof(p));
	for (i = 0; i < sizeof(unknown); i++) {
		p[0] = unknown[i];
		CHECK_EQ(sroce_hdrs_parse(p, 32, &h), -SROCE_DROP_UNKNOWN_OPCODE);
	}

	/* SEND_ONLY: BTH + 4 payload + ICRC */
	memset(p, 0, sizeof(p));
	p[0] = SROCE_OP_RC_SEND_ONLY;
	CHECK_EQ(sroce_hdrs_parse(p, 20, &h), 0);
	CHECK_EQ(h.payload_len, 4);
	CHECK_EQ(sroce_hdrs_parse(p, 15, &h), -SROCE_DROP_SHORT);
	CHECK_EQ(sroce_hdrs_parse(p, 0, &h), -SROCE_DROP_SHORT);
	CHECK_EQ(sroce_hdrs_parse(p, 18, &h), -SROCE_DROP_BAD_ALIGN);
	p[1] = 0x01;	/* tver 1 */
	CHECK_EQ(sroce_hdrs_parse(p, 20, &h), -SROCE_DROP_BAD_TVER);
	p[1] = 0x30;	/* pad 3 with 4 bytes payload: ok, 1 real byte */
	CHECK_EQ(sroce_hdrs_parse(p, 20, &h), 0);
	CHECK_EQ(h.payload_len, 1);
	CHECK_EQ(sroce_hdrs_parse(p, 16, &h), -SROCE_DROP_BAD_PAD);
	p[1] = 0;
	CHECK_EQ(sroce_hdrs_parse(p, 16, &h), 0);
	CHECK_EQ(h.payload_len, 0);

	/* ACK carries no payload and no pad */
	memset(p, 0, sizeof(p));
	p[0] = SROCE_OP_RC_ACKNOWLEDGE;
	CHECK_EQ(sroce_hdrs_parse(p, 20, &h), 0);
	CHECK_EQ(sroce_hdrs_parse(p, 24, &h), -SROCE_DROP_PAYLOAD_NOT_ALLOWED);
	CHECK_EQ(sroce_hdrs_parse(p, 19, &h), -SROCE_DROP_SHORT);
	p[1] = 0x10;
	CHECK_EQ(sroce_hdrs_parse(p, 20, &h), -SROCE_DROP_PAYLOAD_NOT_ALLOWED);

	/* drop reason names */
	for (i = 0; i < SROCE_DROP_NUM; i++) {
		unsigned int j;

		CHECK(sroce_drop_reason_name((int)i) != NULL);
		CHECK(strcmp(sroce_drop_reason_name((int)i), "invalid"));
		for (j = 0; j < i; j++)
			CHECK(strcmp(sroce_drop_reason_name((int)i),
				     sroce_drop_reason_name((int)j)));
	}
	CHECK(!strcmp(sroce_drop_reason_name(-SROCE_DROP_SHORT), "short"));
	CHECK(!strcmp(sroce_drop_reason_name(SROCE_DROP_NUM), "invalid"));
	CHECK(!strcmp(sroce_drop_reason_name(INT_MIN), "invalid"));
}

/* random garbage must never crash or overread */
static void test_parse_random(void)
{
	unsigned int i, ok = 0;

	for (i = 0; i < 20000; i++) {
		u32 len = rnd32() % 80, j;
		u8 *p = malloc(len ? len : 1);
		struct sroce_pkt_hdrs h;

		for (j = 0; j < len; j++)
			p[j] = (u8)rnd32();
		if (len > 1 && (rnd32() & 1))
			p[1] &= 0x30;	/* tver 0 more often */
		if (!sroce_hdrs_parse(p, len, &h)) {
			ok++;
			CHECK(h.info && h.hdr_len + h.payload_len +
			      h.bth.padcnt + 4 == len);
		}
		free(p);
	}
	CHECK(ok > 0);
}

/* ---- PSN ---- */

static void test_psn(void)
{
	CHECK_EQ(sroce_psn_add(0xffffff, 1), 0);
	CHECK_EQ(sroce_psn_add(0xfffffe, 5), 3);
	CHECK_EQ(sroce_psn_add(5, 0xffffff), 4);	/* i.e. minus one */
	CHECK_EQ(sroce_psn_diff(0, 0xffffff), 1);
	CHECK_EQ(sroce_psn_diff(0xffffff, 0), -1);
	CHECK_EQ(sroce_psn_diff(3, 0xfffffd), 6);
	CHECK_EQ(sroce_psn_diff(10, 10), 0);
	CHECK_EQ(sroce_psn_diff(0x800000, 0), -0x800000);
	CHECK_EQ(sroce_psn_diff(0x7fffff, 0), 0x7fffff);
	CHECK_EQ(sroce_psn_diff(0, 0x800000), -0x800000);
	CHECK(sroce_psn_before(0xffffff, 0));
	CHECK(sroce_psn_after(0, 0xffffff));
	CHECK(!sroce_psn_before(5, 5) && !sroce_psn_after(5, 5));
	CHECK(sroce_psn_before(100, 200) && sroce_psn_after(200, 100));
	CHECK(sroce_psn_in_window(0xfffffe, 0xfffffe, 1));
	CHECK(sroce_psn_in_window(2, 0xfffffe, 5));
	CHECK(!sroce_psn_in_window(3, 0xfffffe, 5));
	CHECK(!sroce_psn_in_window(0xfffffd, 0xfffffe, 5));
	CHECK(!sroce_psn_in_window(7, 7, 0));
	CHECK(sroce_psn_in_window(6, 7, 0x1000000));
	/* the send window, across the wrap */
	CHECK(sroce_psn_window_open(0xfffffe, 0xfffffe, 1, 0));
	CHECK(!sroce_psn_window_open(0xffffff, 0xfffffe, 1, 0));
	CHECK(sroce_psn_window_open(0x10, 0xfffff0, 0x21, 0));
	CHECK(!sroce_psn_window_open(0x10, 0xfffff0, 0x20, 0));
	CHECK(sroce_psn_window_open(0xfffffd, 0xfffffe, 1, 0));	/* after a go-back */
	/* one READ of 2^23 PSNs outstanding fills the window whatever its size */
	CHECK(!sroce_psn_window_open(0x800000, 0, 0x1000000 >> 1, 0));
	CHECK(!sroce_psn_window_open(0x7ffff0, 0xfffff0, 1024, 0));
	CHECK(sroce_psn_window_open(0x7fffff, 0, 0x800000, 0));
	/* such a READ goes only with nothing outstanding, 2^23 - 1 with one */
	CHECK(sroce_psn_window_open(0xfffff0, 0xfffff0, 1024, 0x800000));
	CHECK(!sroce_psn_window_open(0xfffff5, 0xfffff0, 1024, 0x800000));
	CHECK(sroce_psn_window_open(0xfffff1, 0xfffff0, 1024, 0x7fffff));
	CHECK(!sroce_psn_window_open(0xfffff2, 0xfffff0, 1024, 0x7fffff));
	CHECK(sroce_psn_window_open(0xffffef, 0xfffff0, 1024, 0x800000));	/* go-back */
	/* what was sent grows, also by a READ of 2^23 PSNs, never shrinks */
	CHECK(sroce_psn_extends(0x10, 0xfffff0, 0xfffff0));
	CHECK(!sroce_psn_extends(0xfffff0, 0x10, 0xffffe0));	/* a resend */
	CHECK(sroce_psn_extends(0x7ffff0, 0xfffff0, 0xfffff0));
	CHECK(!sroce_psn_extends(0x7ffff0, 0x7ffff0, 0xfffff0));
	CHECK(sroce_psn_before(0xfffff0, 0x7ffff0) &&
	      sroce_psn_before(0x7fffef, 0x7ffff0));	/* its responses are inside */
	{
		unsigned int i;

		for (i = 0; i < 10000; i++) {
			u32 a = rnd32() & 0xffffff, n = rnd32() & 0x7fffff;
			u32 b = sroce_psn_add(a, n);
			s32 d = sroce_psn_diff(b, a);

			CHECK(d >= -0x800000 && d < 0x800000);
			CHECK_EQ(d, (s32)n);
			CHECK_EQ(sroce_psn_diff(a, b), -(s32)n);
			CHECK_EQ(sroce_psn_add(a, (u32)d), b);
		}
	}
}

/* ---- AETH ---- */

static void test_aeth(void)
{
	unsigned int c;

	CHECK_EQ(sroce_aeth_syn_ack(5), 0x05);
	CHECK_EQ(sroce_aeth_syn_rnr(14), 0x2e);
	CHECK_EQ(sroce_aeth_syn_nak(SROCE_NAK_REM_ACCESS_ERR), 0x62);
	CHECK_EQ(sroce_aeth_syn_nak(SROCE_NAK_INVALID_RD_REQ), 0x64);
	CHECK(sroce_aeth_is_ack(0x1f) && !sroce_aeth_is_nak(0x1f));
	CHECK(sroce_aeth_is_rnr(0x20) && !sroce_aeth_is_ack(0x20));
	CHECK(sroce_aeth_is_nak(0x63));
	CHECK_EQ(sroce_aeth_type(0x45), SROCE_AETH_RSVD);
	CHECK_EQ(sroce_aeth_value(0x63), SROCE_NAK_REM_OP_ERR);
	CHECK_EQ(SROCE_NAK_PSN_SEQ_ERR, 0);
	CHECK_EQ(SROCE_NAK_INVALID_REQ, 1);
	for (c = 0; c < 32; c++) {
		CHECK_EQ(sroce_aeth_value(sroce_aeth_syn_ack((u8)c)), c);
		CHECK_EQ(sroce_aeth_value(sroce_aeth_syn_rnr((u8)c)), c);
		CHECK(sroce_aeth_is_rnr(sroce_aeth_syn_rnr((u8)c)));
	}

	/* RNR timer: IBA table values in microseconds */
	CHECK_EQ(sroce_rnr_timer_us(0), 655360);
	CHECK_EQ(sroce_rnr_timer_us(1), 10);
	CHECK_EQ(sroce_rnr_timer_us(5), 60);
	CHECK_EQ(sroce_rnr_timer_us(14), 1280);
	CHECK_EQ(sroce_rnr_timer_us(18), 5120);
	CHECK_EQ(sroce_rnr_timer_us(31), 491520);
	for (c = 2; c < 32; c++)
		CHECK(sroce_rnr_timer_us((u8)c) > sroce_rnr_timer_us((u8)(c - 1)));
	CHECK_EQ(sroce_rnr_timer_code(0), 1);
	CHECK_EQ(sroce_rnr_timer_code(10), 1);
	CHECK_EQ(sroce_rnr_timer_code(11), 2);
	CHECK_EQ(sroce_rnr_timer_code(1280), 14);
	CHECK_EQ(sroce_rnr_timer_code(491520), 31);
	CHECK_EQ(sroce_rnr_timer_code(500000), 0);

	/* credit count table */
	CHECK_EQ(sroce_aeth_credits(0), 0);
	CHECK_EQ(sroce_aeth_credits(4), 4);
	CHECK_EQ(sroce_aeth_credits(5), 6);
	CHECK_EQ(sroce_aeth_credits(16), 256);
	CHECK_EQ(sroce_aeth_credits(30), 32768);
	CHECK_EQ(sroce_aeth_credits(31), -1);
	for (c = 1; c < 31; c++)
		CHECK(sroce_aeth_credits((u8)c) > sroce_aeth_credits((u8)(c - 1)));
	CHECK_EQ(sroce_aeth_credit_code(0), 0);
	CHECK_EQ(sroce_aeth_credit_code(7), 5);
	CHECK_EQ(sroce_aeth_credit_code(256), 16);
	CHECK_EQ(sroce_aeth_credit_code(1000000), 30);

	{
		struct sroce_aeth a = { .syndrome = 0x62, .msn = 0xabcdef }, b;
		u8 buf[4];

		sroce_aeth_pack(buf, &a);
		CHECK(buf[0] == 0x62 && buf[1] == 0xab && buf[3] == 0xef);
		sroce_aeth_unpack(buf, &b);
		CHECK(b.syndrome == a.syndrome && b.msn == a.msn);
	}
}

/* ---- QP state machine ---- */

#define ST(x)	SROCE_QPS_##x
#define QT(x)	SROCE_QPT_##x
#define AT(x)	SROCE_QP_ATTR_##x

struct qp_case {
	int cur, next, type;
	u32 mask;
	int want;
};

static void test_qp_transitions(void)
{
	const u32 s = AT(STATE);
	const u32 rc_init = s | AT(PKEY_INDEX) | AT(PORT) | AT(ACCESS_FLAGS);
	const u32 rc_rtr = s | AT(AV) | AT(PATH_MTU) | AT(DEST_QPN) |
			   AT(RQ_PSN) | AT(MAX_DEST_RD_ATOMIC) |
			   AT(MIN_RNR_TIMER);
	const u32 rc_rts = s | AT(TIMEOUT) | AT(RETRY_CNT) | AT(RNR_RETRY) |
			   AT(SQ_PSN) | AT(MAX_QP_RD_ATOMIC);
	const u32 ud_init = s | AT(PKEY_INDEX) | AT(PORT) | AT(QKEY);
	const struct qp_case cases[] = {
		/* RESET -> INIT */
		{ ST(RESET), ST(INIT), QT(RC), rc_init, 0 },
		{ ST(RESET), ST(INIT), QT(RC), rc_init & ~AT(PORT), -EINVAL },
		{ ST(RESET), ST(INIT), QT(RC), rc_init | AT(QKEY), -EINVAL },
		{ ST(RESET), ST(INIT), QT(UD), ud_init, 0 },
		{ ST(RESET), ST(INIT), QT(UD), ud_init & ~AT(QKEY), -EINVAL },
		{ ST(RESET), ST(INIT), QT(UC), rc_init, 0 },
		{ ST(RESET), ST(INIT), QT(GSI), s | AT(PKEY_INDEX) | AT(QKEY), 0 },
		{ ST(RESET), ST(INIT), QT(GSI), ud_init, -EINVAL },
		{ ST(RESET), ST(INIT), QT(XRC_TGT), rc_init, 0 },
		{ ST(RESET), ST(INIT), QT(RAW_PACKET), s | AT(PORT), 0 },
		{ ST(RESET), ST(RTR), QT(RC), rc_rtr, -EINVAL },
		{ ST(RESET), ST(RTS), QT(UD), s | AT(SQ_PSN), -EINVAL },
		/* INIT -> INIT */
		{ ST(INIT), ST(INIT), QT(RC), s, 0 },
		{ ST(INIT), ST(INIT), QT(RC), s | AT(ACCESS_FLAGS), 0 },
		{ ST(INIT), ST(INIT), QT(RC), s | AT(AV), -EINVAL },
		{ ST(INIT), ST(INIT), QT(UD), s | AT(QKEY) | AT(PORT), 0 },
		/* INIT -> RTR */
		{ ST(INIT), ST(RTR), QT(RC), rc_rtr, 0 },
		{ ST(INIT), ST(RTR), QT(RC), rc_rtr | AT(ALT_PATH), 0 },
		{ ST(INIT), ST(RTR), QT(RC), rc_rtr & ~AT(DEST_QPN), -EINVAL },
		{ ST(INIT), ST(RTR), QT(RC), rc_rtr & ~AT(MIN_RNR_TIMER),
		  -EINVAL },
		{ ST(INIT), ST(RTR), QT(RC), rc_rtr | AT(SQ_PSN), -EINVAL },
		{ ST(INIT), ST(RTR), QT(UC), s | AT(AV) | AT(PATH_MTU) |
		  AT(DEST_QPN) | AT(RQ_PSN), 0 },
		{ ST(INIT), ST(RTR), QT(UC), rc_rtr, -EINVAL },
		{ ST(INIT), ST(RTR), QT(UD), s, 0 },
		{ ST(INIT), ST(RTR), QT(UD), s | AT(QKEY), 0 },
		{ ST(INIT), ST(RTR), QT(UD), s | AT(AV), -EINVAL },
		{ ST(INIT), ST(RTS), QT(RC), rc_rts, -EINVAL },
		/* RTR -> RTS */
		{ ST(RTR), ST(RTS), QT(RC), rc_rts, 0 },
		{ ST(RTR), ST(RTS), QT(RC), rc_rts | AT(CUR_STATE), 0 },
		{ ST(RTR), ST(RTS), QT(RC), rc_rts & ~AT(RNR_RETRY), -EINVAL },
		{ ST(RTR), ST(RTS), QT(RC), rc_rts | AT(PATH_MTU), -EINVAL },
		{ ST(RTR), ST(RTS), QT(UD), s | AT(SQ_PSN), 0 },
		{ ST(RTR), ST(RTS), QT(UD), s, -EINVAL },
		{ ST(RTR), ST(RTS), QT(UC), s | AT(SQ_PSN), 0 },
		{ ST(RTR), ST(RTS), QT(XRC_TGT), s | AT(TIMEOUT) | AT(SQ_PSN),
		  0 },
		{ ST(RTR), ST(RTR), QT(RC), s, -EINVAL },
		/* RTS -> RTS / SQD */
		{ ST(RTS), ST(RTS), QT(RC), s, 0 },
		{ ST(RTS), ST(RTS), QT(RC), s | AT(MIN_RNR_TIMER), 0 },
		{ ST(RTS), ST(RTS), QT(UC), s | AT(MIN_RNR_TIMER), -EINVAL },
		{ ST(RTS), ST(RTS), QT(RC), s | AT(SQ_PSN), -EINVAL },
		{ ST(RTS), ST(RTS), QT(UD), s | AT(QKEY), 0 },
		{ ST(RTS), ST(SQD), QT(RC), s | AT(EN_SQD_ASYNC_NOTIFY), 0 },
		{ ST(RTS), ST(SQD), QT(UD), s, 0 },
		{ ST(RTS), ST(SQD), QT(RC), s | AT(QKEY), -EINVAL },
		{ ST(RTS), ST(INIT), QT(RC), s, -EINVAL },
		{ ST(RTS), ST(RTR), QT(RC), s, -EINVAL },
		/* SQD */
		{ ST(SQD), ST(RTS), QT(RC), s, 0 },
		{ ST(SQD), ST(SQD), QT(RC), s | AT(AV) | AT(TIMEOUT), 0 },
		{ ST(SQD), ST(SQD), QT(UC), s | AT(TIMEOUT), -EINVAL },
		{ ST(SQD), ST(SQD), QT(UD), s | AT(QKEY), 0 },
		/* SQE */
		{ ST(SQE), ST(RTS), QT(UD), s | AT(CUR_STATE), 0 },
		{ ST(SQE), ST(RTS), QT(UC), s | AT(ACCESS_FLAGS), 0 },
		{ ST(SQE), ST(RTS), QT(RC), s, -EINVAL },
		{ ST(SQE), ST(SQD), QT(UD), s, -EINVAL },
		/* any -> RESET / ERR */
		{ ST(RESET), ST(RESET), QT(RC), s, 0 },
		{ ST(RESET), ST(ERR), QT(RC), s, 0 },
		{ ST(INIT), ST(RESET), QT(UD), s, 0 },
		{ ST(RTR), ST(ERR), QT(RC), s, 0 },
		{ ST(RTS), ST(RESET), QT(XRC_INI), s, 0 },
		{ ST(SQD), ST(ERR), QT(UC), s, 0 },
		{ ST(SQE), ST(RESET), QT(UD), s, 0 },
		{ ST(ERR), ST(RESET), QT(RC), s, 0 },
		{ ST(ERR), ST(ERR), QT(RC), s, 0 },
		{ ST(ERR), ST(RTS), QT(RC), s, -EINVAL },
		{ ST(ERR), ST(INIT), QT(RC), s, -EINVAL },
		{ ST(RTS), ST(ERR), QT(RC), s | AT(QKEY), -EINVAL },
		/* bad inputs */
		{ -1, ST(INIT), QT(RC), rc_init, -EINVAL },
		{ ST(RESET), 7, QT(RC), rc_init, -EINVAL },
		{ ST(RESET), ST(INIT), 7, rc_init, -EINVAL },
		{ ST(RESET), ST(INIT), 11, rc_init, -EINVAL },
		{ ST(RESET), ST(INIT), -1, rc_init, -EINVAL },
		/* CUR_STATE only where listed */
		{ ST(INIT), ST(RTR), QT(RC), rc_rtr | AT(CUR_STATE), -EINVAL },
		{ ST(RTS), ST(RTS), QT(UD), s | AT(CUR_STATE), 0 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct qp_case *c = &cases[i];
		int got = sroce_qp_modify_check(c->cur, c->next, c->type,
						c->mask);

		if (got != c->want && cur_fail++ < 10)
			printf("    case %u: %d->%d type %d mask 0x%x: got %d want %d\n",
			       i, c->cur, c->next, c->type, c->mask, got,
			       c->want);
	}
	CHECK(!strcmp(sroce_qp_state_name(SROCE_QPS_RTS), "RTS"));
	CHECK(!strcmp(sroce_qp_state_name(42), "?"));
	/* values must match the kernel's verbs enums */
	CHECK_EQ(SROCE_QPS_ERR, 6);
	CHECK_EQ(SROCE_QPT_XRC_TGT, 10);
	CHECK_EQ(SROCE_QPT_RAW_PACKET, 8);
	CHECK_EQ(SROCE_QP_ATTR_DEST_QPN, 1u << 20);
	CHECK_EQ(SROCE_QP_ATTR_MIN_RNR_TIMER, 1u << 15);
}

/* ---- CRC-32 / ICRC ---- */

static u32 crc32_bitwise(u32 crc, const u8 *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		int k;

		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
	}
	return ~crc;
}

static void test_crc32(void)
{
	static const char fox[] = "The quick brown fox jumps over the lazy dog";
	unsigned int i;
	u8 buf[3000];

	CHECK_EQ(sroce_crc32(0, "", 0), 0);
	CHECK_EQ(sroce_crc32(0, "123456789", 9), 0xcbf43926);
	CHECK_EQ(sroce_crc32(0, "a", 1), 0xe8b7be43);
	CHECK_EQ(sroce_crc32(0, fox, strlen(fox)), 0x414fa339);
	for (i = 0; i < sizeof(crc_vecs) / sizeof(crc_vecs[0]); i++)
		CHECK_EQ(sroce_crc32(0, crc_vecs[i].data, crc_vecs[i].len),
			 crc_vecs[i].crc);

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (u8)rnd32();
	for (i = 0; i < 200; i++) {
		size_t off = rnd32() % 64, n = rnd32() % 2000;
		size_t cut = n ? rnd32() % n : 0;
		u32 whole = sroce_crc32(0, buf + off, n);

		CHECK_EQ(whole, crc32_bitwise(0, buf + off, n));
		CHECK_EQ(sroce_crc32(sroce_crc32(0, buf + off, cut),
				     buf + off + cut, n - cut), whole);
	}
}

static u32 icrc_of(const u8 *pkt, unsigned int len, bool ipv6,
		   unsigned int l3_len)
{
	const u8 *udp = pkt + l3_len, *bth = udp + SROCE_UDP_HDR_BYTES;
	u32 st = sroce_icrc_begin(pkt, ipv6, udp, bth);

	st = sroce_icrc_update(st, bth + SROCE_BTH_BYTES,
			       len - l3_len - SROCE_UDP_HDR_BYTES -
			       SROCE_BTH_BYTES - SROCE_ICRC_BYTES);
	return sroce_icrc_final(st);
}

static void test_icrc_vectors(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(icrc_vecs) / sizeof(icrc_vecs[0]); i++) {
		const struct icrc_vec *v = &icrc_vecs[i];
		u8 *copy = malloc(v->len), out[4];
		const u8 *bth = v->pkt + v->l3_len + SROCE_UDP_HDR_BYTES;
		struct sroce_pkt_hdrs h;
		u32 icrc;

		memcpy(copy, v->pkt, v->len);
		icrc = icrc_of(copy, v->len, v->ipv6, v->l3_len);
		CHECK(!memcmp(copy, v->pkt, v->len));	/* input untouched */
		sroce_icrc_put(out, icrc);
		if (memcmp(out, v->icrc, 4) && cur_fail++ < 10)
			printf("    %s: icrc %02x%02x%02x%02x want %02x%02x%02x%02x\n",
			       v->name, out[0], out[1], out[2], out[3],
			       v->icrc[0], v->icrc[1], v->icrc[2], v->icrc[3]);
		CHECK_EQ(sroce_icrc_get(v->pkt + v->len - 4), icrc);

		/* the codec parses what the reference built */
		CHECK_EQ(sroce_hdrs_parse(bth, (u32)(v->pkt + v->len - bth), &h),
			 0);
		CHECK_EQ(h.bth.opcode, v->opcode);
		CHECK_EQ(h.payload_len, v->payload_len);

		/* variant fields do not change the ICRC, payload does */
		if (v->ipv6) {
			copy[0] ^= 0x0c;	/* traffic class */
			copy[3] ^= 0x55;	/* flow label */
			copy[7] ^= 0x01;	/* hop limit */
		} else {
			copy[1] ^= 0x03;	/* ECN */
			copy[8] ^= 0x10;	/* TTL */
			copy[10] ^= 0xff;	/* checksum */
		}
		copy[v->l3_len + 6] ^= 0x77;	/* UDP checksum */
		copy[v->l3_len + 8 + 4] ^= 0xc0;	/* FECN/BECN */
		CHECK_EQ(icrc_of(copy, v->len, v->ipv6, v->l3_len), icrc);
		copy[v->l3_len + 8 + 5] ^= 0x01;	/* dest QP */
		CHECK(icrc_of(copy, v->len, v->ipv6, v->l3_len) != icrc);
		free(copy);
	}
}

/* Known answer straight from a ConnectX-4 Lx CNP capture. */
static void test_icrc_hw_capture(void)
{
	static const u8 cnp[] = {
		0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11,
		0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01,
		0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00,
		0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18,
		0x00, 0x00, 0x00, 0x00,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0x82, 0xfd, 0x00, 0x2a,
	};
	struct sroce_pkt_hdrs h;
	u8 out[4];

	sroce_icrc_put(out, icrc_of(cnp, sizeof(cnp), false, 20));
	CHECK(!memcmp(out, cnp + sizeof(cnp) - 4, 4));
	CHECK_EQ(sroce_hdrs_parse(cnp + 28, sizeof(cnp) - 28, &h), 0);
	CHECK_EQ(h.bth.opcode, SROCE_OP_CNP);
	CHECK(h.bth.becn && !h.bth.fecn);
	CHECK_EQ(h.bth.dqpn, 0x118);
}

static void test_udp_sport(void)
{
	unsigned int i, distinct = 0;
	u16 prev = 0;

	CHECK_EQ(SROCE_ROCEV2_PORT, 4791);
	for (i = 0; i < 5000; i++) {
		u32 l = rnd32(), r = rnd32();
		u16 p = sroce_udp_sport(l, r);

		CHECK(p >= 0xc000);
		CHECK_EQ(p, sroce_udp_sport(l, r));
		distinct += p != prev;
		prev = p;
	}
	CHECK(distinct > 4900);
	CHECK(sroce_udp_sport(17, 18) != sroce_udp_sport(18, 17) ||
	      sroce_udp_sport(17, 19) != sroce_udp_sport(19, 17));
}

int main(void)
{
	RUN(test_byteorder);
	RUN(test_opcode_all_256);
	RUN(test_opcode_layouts);
	RUN(test_roundtrip_all_opcodes);
	RUN(test_bth_known_bytes);
	RUN(test_parse_truncated);
	RUN(test_parse_errors);
	RUN(test_parse_random);
	RUN(test_psn);
	RUN(test_aeth);
	RUN(test_qp_transitions);
	RUN(test_crc32);
	RUN(test_icrc_vectors);
	RUN(test_icrc_hw_capture);
	RUN(test_udp_sport);

	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
