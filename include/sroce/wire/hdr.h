/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parsed IBA transport headers and their pack/unpack routines. All
 * multi-byte fields are host-order values here; the wire form is big endian.
 */
#ifndef SROCE_WIRE_HDR_H
#define SROCE_WIRE_HDR_H

#include "sroce/wire/types.h"
#include "sroce/wire/opcode.h"

#define SROCE_QPN_MASK		0xffffffu
#define SROCE_BTH_TVER		0
#define SROCE_DEFAULT_PKEY	0xffff

struct sroce_bth {
	u8 opcode;
	bool se;
	bool mig;
	u8 padcnt;	/* 2 bits */
	u8 tver;	/* 4 bits */
	u16 pkey;
	bool fecn;
	bool becn;
	u32 dqpn;	/* 24 bits */
	bool ackreq;
	u32 psn;	/* 24 bits */
};

struct sroce_rdeth {
	u32 een;	/* 24 bits */
};

struct sroce_deth {
	u32 qkey;
	u32 sqpn;	/* 24 bits */
};

struct sroce_xrceth {
	u32 xrcsrq;	/* 24 bits */
};

struct sroce_feth {
	u8 sel;		/* selectivity level, 2 bits */
	u8 plt;		/* placement type, 4 bits */
};

struct sroce_reth {
	u64 va;
	u32 rkey;
	u32 len;
};

struct sroce_atmeth {
	u64 va;
	u32 rkey;
	u64 swap_add;
	u64 cmp;
};

struct sroce_aeth {
	u8 syndrome;
	u32 msn;	/* 24 bits */
};

struct sroce_atmack {
	u64 orig;
};

struct sroce_pkt_hdrs {
	struct sroce_bth bth;
	struct sroce_rdeth rdeth;
	struct sroce_deth deth;
	struct sroce_xrceth xrceth;
	struct sroce_feth feth;
	struct sroce_reth reth;
	struct sroce_atmeth atmeth;
	struct sroce_aeth aeth;
	struct sroce_atmack atmack;
	u32 imm;	/* ImmDt read as a big-endian 32-bit field */
	u32 ieth_rkey;
	const struct sroce_opcode_info *info;
	u32 hdr_len;	/* BTH through last extension header */
	u32 payload_len;	/* excluding pad and ICRC */
};

/* Why a packet was dropped; parse returns the negated value. */
enum sroce_drop_reason {
	SROCE_DROP_NONE = 0,
	/* from sroce_hdrs_parse() */
	SROCE_DROP_SHORT,
	SROCE_DROP_UNKNOWN_OPCODE,
	SROCE_DROP_BAD_TVER,
	SROCE_DROP_BAD_ALIGN,
	SROCE_DROP_BAD_PAD,
	SROCE_DROP_PAYLOAD_NOT_ALLOWED,
	/* for the receive path */
	SROCE_DROP_BAD_ICRC,
	SROCE_DROP_BAD_PKEY,
	SROCE_DROP_NO_QP,
	SROCE_DROP_BAD_QP_TYPE,
	SROCE_DROP_BAD_QP_STATE,
	SROCE_DROP_BAD_QKEY,
	SROCE_DROP_BAD_SRC,
	SROCE_DROP_NO_MEM,
	SROCE_DROP_NUM
};

/* Counter name for a reason (positive or negated); "invalid" if unknown. */
const char *sroce_drop_reason_name(int reason);

void sroce_bth_unpack(const u8 *p, struct sroce_bth *bth);
void sroce_bth_pack(u8 *p, const struct sroce_bth *bth);
void sroce_rdeth_unpack(const u8 *p, struct sroce_rdeth *h);
void sroce_rdeth_pack(u8 *p, const struct sroce_rdeth *h);
void sroce_deth_unpack(const u8 *p, struct sroce_deth *h);
void sroce_deth_pack(u8 *p, const struct sroce_deth *h);
void sroce_xrceth_unpack(const u8 *p, struct sroce_xrceth *h);
void sroce_xrceth_pack(u8 *p, const struct sroce_xrceth *h);
void sroce_feth_unpack(const u8 *p, struct sroce_feth *h);
void sroce_feth_pack(u8 *p, const struct sroce_feth *h);
void sroce_reth_unpack(const u8 *p, struct sroce_reth *h);
void sroce_reth_pack(u8 *p, const struct sroce_reth *h);
void sroce_atmeth_unpack(const u8 *p, struct sroce_atmeth *h);
void sroce_atmeth_pack(u8 *p, const struct sroce_atmeth *h);
void sroce_aeth_unpack(const u8 *p, struct sroce_aeth *h);
void sroce_aeth_pack(u8 *p, const struct sroce_aeth *h);
void sroce_atmack_unpack(const u8 *p, struct sroce_atmack *h);
void sroce_atmack_pack(u8 *p, const struct sroce_atmack *h);

/*
 * Parse the BTH and the extension headers its opcode calls for.
 * @len: bytes from BTH start to end of packet, including the 4-byte ICRC.
 * Returns 0 or -SROCE_DROP_x. Safe on arbitrary input; never reads
 * outside [bth, bth + len), and only the opcode's hdr_len bytes (the BTH's
 * first byte for an unknown opcode) are read at all (payload and ICRC are
 * never touched), so only the headers need to be linear. On error *h is
 * only partially filled.
 */
int sroce_hdrs_parse(const u8 *bth, u32 len, struct sroce_pkt_hdrs *h);

/*
 * Write the BTH and the extension headers listed for h->bth.opcode.
 * Returns the header length (0 for an unknown opcode, nothing written).
 * Reserved bits are written as zero. The caller guarantees
 * SROCE_MAX_HDR_BYTES of space (or the opcode's hdr_len).
 */
u32 sroce_hdrs_build(u8 *bth, const struct sroce_pkt_hdrs *h);

/* The destination QP of a built BTH, read as sroce_hdrs_parse() does. */
static inline u32 sroce_bth_dqpn(const u8 *bth)
{
	return sroce_get_be24(bth + 5);
}

/* Pad bytes needed after a payload of @len bytes. */
static inline u8 sroce_pad_len(u32 len)
{
	return (u8)((4 - (len & 3)) & 3);
}

#endif /* SROCE_WIRE_HDR_H */
