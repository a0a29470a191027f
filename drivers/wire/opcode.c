// SPDX-License-Identifier: GPL-2.0
/*
 * IBA opcode table. Each entry lists the headers the opcode carries; the
 * offsets and header length are derived from that list at compile time.
 */
#include "sroce/wire/opcode.h"

/*
 * Wire order: BTH, RDETH, DETH, XRCETH, FETH, RETH, AtomicETH, AETH,
 * AtomicAckETH, ImmDt, IETH, payload. Each offset is the previous one
 * plus the previous header's size when present.
 */
#define SZ(m, h)	(((m) & SROCE_M_##h) ? SROCE_##h##_BYTES : 0)
#define O_RDETH(m)	SROCE_BTH_BYTES
#define O_DETH(m)	(O_RDETH(m) + SZ(m, RDETH))
#define O_XRCETH(m)	(O_DETH(m) + SZ(m, DETH))
#define O_FETH(m)	(O_XRCETH(m) + SZ(m, XRCETH))
#define O_RETH(m)	(O_FETH(m) + SZ(m, FETH))
#define O_ATMETH(m)	(O_RETH(m) + SZ(m, RETH))
#define O_AETH(m)	(O_ATMETH(m) + SZ(m, ATMETH))
#define O_ATMACK(m)	(O_AETH(m) + SZ(m, AETH))
#define O_IMMDT(m)	(O_ATMACK(m) + SZ(m, ATMACK))
#define O_IETH(m)	(O_IMMDT(m) + SZ(m, IMMDT))
#define O_PAYLOAD(m)	(O_IETH(m) + SZ(m, IETH))

#define OP(op, m)							\
	[SROCE_OP_##op] = {						\
		.name = #op,						\
		.mask = (m) | SROCE_M_BTH,				\
		.hdr_len = O_PAYLOAD(m),				\
		.offset = {						\
			[SROCE_HDR_BTH] = 0,				\
			[SROCE_HDR_RDETH] = O_RDETH(m),			\
			[SROCE_HDR_DETH] = O_DETH(m),			\
			[SROCE_HDR_XRCETH] = O_XRCETH(m),		\
			[SROCE_HDR_FETH] = O_FETH(m),			\
			[SROCE_HDR_RETH] = O_RETH(m),			\
			[SROCE_HDR_ATMETH] = O_ATMETH(m),		\
			[SROCE_HDR_AETH] = O_AETH(m),			\
			[SROCE_HDR_ATMACK] = O_ATMACK(m),		\
			[SROCE_HDR_IMMDT] = O_IMMDT(m),			\
			[SROCE_HDR_IETH] = O_IETH(m),			\
			[SROCE_HDR_PAYLOAD] = O_PAYLOAD(m),		\
		},							\
	}

/* Operation shapes, independent of transport. */
#define Q		SROCE_M_REQ
#define P		SROCE_M_PAYLOAD
#define SEND_F		(Q | P | SROCE_M_SEND | SROCE_M_FIRST)
#define SEND_M		(Q | P | SROCE_M_SEND | SROCE_M_MIDDLE)
#define SEND_L		(Q | P | SROCE_M_SEND | SROCE_M_LAST | SROCE_M_COMP_RECV)
#define SEND_O		(Q | P | SROCE_M_SEND | SROCE_M_ONLY | SROCE_M_COMP_RECV)
#define WR_F		(Q | P | SROCE_M_WRITE | SROCE_M_FIRST | SROCE_M_RETH)
#define WR_M		(Q | P | SROCE_M_WRITE | SROCE_M_MIDDLE)
#define WR_L		(Q | P | SROCE_M_WRITE | SROCE_M_LAST)
#define WR_O		(Q | P | SROCE_M_WRITE | SROCE_M_ONLY | SROCE_M_RETH)
#define IMM_C		(SROCE_M_IMMDT | SROCE_M_COMP_RECV)
#define RD_REQ		(Q | SROCE_M_READ | SROCE_M_ONLY | SROCE_M_RETH)
#define R_RESP		(SROCE_M_RESP | SROCE_M_READ | P)
#define ACK		(SROCE_M_RESP | SROCE_M_ACK | SROCE_M_ONLY | SROCE_M_AETH)
#define ATM_ACK		(ACK | SROCE_M_ATOMIC | SROCE_M_ATMACK)
#define ATM_REQ		(Q | SROCE_M_ATOMIC | SROCE_M_ONLY | SROCE_M_ATMETH)

/* Sends and RDMA writes; rq is the transport's request-header mask. */
#define SEND_WRITE_OPS(t, rq)						\
	OP(t##_SEND_FIRST, (rq) | SEND_F),				\
	OP(t##_SEND_MIDDLE, (rq) | SEND_M),				\
	OP(t##_SEND_LAST, (rq) | SEND_L),				\
	OP(t##_SEND_LAST_WITH_IMMEDIATE, (rq) | SEND_L | IMM_C),	\
	OP(t##_SEND_ONLY, (rq) | SEND_O),				\
	OP(t##_SEND_ONLY_WITH_IMMEDIATE, (rq) | SEND_O | IMM_C),	\
	OP(t##_RDMA_WRITE_FIRST, (rq) | WR_F),				\
	OP(t##_RDMA_WRITE_MIDDLE, (rq) | WR_M),				\
	OP(t##_RDMA_WRITE_LAST, (rq) | WR_L),				\
	OP(t##_RDMA_WRITE_LAST_WITH_IMMEDIATE, (rq) | WR_L | IMM_C),	\
	OP(t##_RDMA_WRITE_ONLY, (rq) | WR_O),				\
	OP(t##_RDMA_WRITE_ONLY_WITH_IMMEDIATE, (rq) | WR_O | IMM_C)

/* Reads, atomics and responses; rs is the response-header mask. */
#define READ_ATOMIC_OPS(t, rq, rs)					\
	OP(t##_RDMA_READ_REQUEST, (rq) | RD_REQ),			\
	OP(t##_RDMA_READ_RESPONSE_FIRST,				\
	   (rs) | R_RESP | SROCE_M_FIRST | SROCE_M_AETH),		\
	OP(t##_RDMA_READ_RESPONSE_MIDDLE, (rs) | R_RESP | SROCE_M_MIDDLE), \
	OP(t##_RDMA_READ_RESPONSE_LAST,					\
	   (rs) | R_RESP | SROCE_M_LAST | SROCE_M_AETH),		\
	OP(t##_RDMA_READ_RESPONSE_ONLY,					\
	   (rs) | R_RESP | SROCE_M_ONLY | SROCE_M_AETH),		\
	OP(t##_ACKNOWLEDGE, (rs) | ACK),				\
	OP(t##_ATOMIC_ACKNOWLEDGE, (rs) | ATM_ACK),			\
	OP(t##_COMPARE_SWAP, (rq) | ATM_REQ),				\
	OP(t##_FETCH_ADD, (rq) | ATM_REQ)

#define INV_OPS(t, rq)							\
	OP(t##_SEND_LAST_WITH_INVALIDATE, (rq) | SEND_L | SROCE_M_IETH), \
	OP(t##_SEND_ONLY_WITH_INVALIDATE, (rq) | SEND_O | SROCE_M_IETH)

/* Per-transport extension headers: RD requests carry RDETH+DETH, RD
 * responses RDETH; XRC requests carry XRCETH, XRC responses nothing extra.
 */
#define RC_Q	SROCE_M_RC
#define UC_Q	SROCE_M_UC
#define RD_S	(SROCE_M_RD | SROCE_M_RDETH)
#define RD_Q	(RD_S | SROCE_M_DETH)
#define XRC_S	SROCE_M_XRC
#define XRC_Q	(SROCE_M_XRC | SROCE_M_XRCETH)

static const struct sroce_opcode_info sroce_opcode_table[SROCE_NUM_OPCODE] = {
	SEND_WRITE_OPS(RC, RC_Q),
	READ_ATOMIC_OPS(RC, RC_Q, RC_Q),
	INV_OPS(RC, RC_Q),
	OP(RC_FLUSH, RC_Q | Q | SROCE_M_FLUSH | SROCE_M_ONLY |
	   SROCE_M_FETH | SROCE_M_RETH),
	/* 8-byte payload; length is checked by the responder */
	OP(RC_ATOMIC_WRITE, RC_Q | Q | P | SROCE_M_ATOMIC_WRITE |
	   SROCE_M_ONLY | SROCE_M_RETH),

	SEND_WRITE_OPS(UC, UC_Q),

	SEND_WRITE_OPS(RD, RD_Q),
	READ_ATOMIC_OPS(RD, RD_Q, RD_S),
	OP(RD_RESYNC, RD_Q | Q | SROCE_M_RESYNC | SROCE_M_ONLY),

	OP(UD_SEND_ONLY, SROCE_M_UD | SROCE_M_DETH | SEND_O),
	OP(UD_SEND_ONLY_WITH_IMMEDIATE,
	   SROCE_M_UD | SROCE_M_DETH | SEND_O | IMM_C),

	/* 16 reserved bytes follow the BTH; treat them as payload */
	OP(CNP, SROCE_M_CNP | SROCE_M_ONLY | P),

	SEND_WRITE_OPS(XRC, XRC_Q),
	READ_ATOMIC_OPS(XRC, XRC_Q, XRC_S),
	INV_OPS(XRC, XRC_Q),
};

const struct sroce_opcode_info *sroce_opcode_info(u8 opcode)
{
	const struct sroce_opcode_info *info = &sroce_opcode_table[opcode];

	return info->name ? info : NULL;
}
