// SPDX-License-Identifier: GPL-2.0
/*
 * Pack/unpack of IBA transport headers.
 */
#include "sroce/wire/hdr.h"

static const char *const sroce_drop_names[SROCE_DROP_NUM] = {
	[SROCE_DROP_NONE]		= "none",
	[SROCE_DROP_SHORT]		= "short",
	[SROCE_DROP_UNKNOWN_OPCODE]	= "unknown_opcode",
	[SROCE_DROP_BAD_TVER]		= "bad_tver",
	[SROCE_DROP_BAD_ALIGN]		= "bad_align",
	[SROCE_DROP_BAD_PAD]		= "bad_pad",
	[SROCE_DROP_PAYLOAD_NOT_ALLOWED] = "payload_not_allowed",
	[SROCE_DROP_BAD_ICRC]		= "bad_icrc",
	[SROCE_DROP_BAD_PKEY]		= "bad_pkey",
	[SROCE_DROP_NO_QP]		= "no_qp",
	[SROCE_DROP_BAD_QP_TYPE]	= "bad_qp_type",
	[SROCE_DROP_BAD_QP_STATE]	= "bad_qp_state",
	[SROCE_DROP_BAD_QKEY]		= "bad_qkey",
	[SROCE_DROP_BAD_SRC]		= "bad_src",
	[SROCE_DROP_NO_MEM]		= "no_mem",
};

const char *sroce_drop_reason_name(int reason)
{
	/* range-check before negating so INT_MIN cannot overflow */
	if (reason < 0 && reason > -SROCE_DROP_NUM)
		reason = -reason;
	if (reason < 0 || reason >= SROCE_DROP_NUM)
		return "invalid";
	return sroce_drop_names[reason];
}

/*
 * BTH: opcode | SE M PadCnt(2) TVer(4) | P_Key(16) |
 *      FECN BECN resv(6) | DestQP(24) | A resv(7) | PSN(24)
 */
void sroce_bth_unpack(const u8 *p, struct sroce_bth *bth)
{
	bth->opcode = p[0];
	bth->se = p[1] & 0x80;
	bth->mig = p[1] & 0x40;
	bth->padcnt = (p[1] >> 4) & 0x3;
	bth->tver = p[1] & 0xf;
	bth->pkey = sroce_get_be16(p + 2);
	bth->fecn = p[4] & 0x80;
	bth->becn = p[4] & 0x40;
	bth->dqpn = sroce_get_be24(p + 5);
	bth->ackreq = p[8] & 0x80;
	bth->psn = sroce_get_be24(p + 9);
}

void sroce_bth_pack(u8 *p, const struct sroce_bth *bth)
{
	p[0] = bth->opcode;
	p[1] = (u8)((bth->se ? 0x80 : 0) | (bth->mig ? 0x40 : 0) |
		    (bth->padcnt & 0x3) << 4 | (bth->tver & 0xf));
	sroce_put_be16(p + 2, bth->pkey);
	p[4] = (u8)((bth->fecn ? 0x80 : 0) | (bth->becn ? 0x40 : 0));
	sroce_put_be24(p + 5, bth->dqpn);
	p[8] = bth->ackreq ? 0x80 : 0;
	sroce_put_be24(p + 9, bth->psn);
}

void sroce_rdeth_unpack(const u8 *p, struct sroce_rdeth *h)
{
	h->een = sroce_get_be24(p + 1);
}

void sroce_rdeth_pack(u8 *p, const struct sroce_rdeth *h)
{
	p[0] = 0;
	sroce_put_be24(p + 1, h->een);
}

void sroce_deth_unpack(const u8 *p, struct sroce_deth *h)
{
	h->qkey = sroce_get_be32(p);
	h->sqpn = sroce_get_be24(p + 5);
}

void sroce_deth_pack(u8 *p, const struct sroce_deth *h)
{
	sroce_put_be32(p, h->qkey);
	p[4] = 0;
	sroce_put_be24(p + 5, h->sqpn);
}

void sroce_xrceth_unpack(const u8 *p, struct sroce_xrceth *h)
{
	h->xrcsrq = sroce_get_be24(p + 1);
}

void sroce_xrceth_pack(u8 *p, const struct sroce_xrceth *h)
{
	p[0] = 0;
	sroce_put_be24(p + 1, h->xrcsrq);
}

/* FETH: reserved(26) | selectivity level(2) | placement type(4) */
void sroce_feth_unpack(const u8 *p, struct sroce_feth *h)
{
	h->sel = (p[3] >> 4) & 0x3;
	h->plt = p[3] & 0xf;
}

void sroce_feth_pack(u8 *p, const struct sroce_feth *h)
{
	p[0] = 0;
	p[1] = 0;
	p[2] = 0;
	p[3] = (u8)((h->sel & 0x3) << 4 | (h->plt & 0xf));
}

void sroce_reth_unpack(const u8 *p, struct sroce_reth *h)
{
	h->va = sroce_get_be64(p);
	h->rkey = sroce_get_be32(p + 8);
	h->len = sroce_get_be32(p + 12);
}

void sroce_reth_pack(u8 *p, const struct sroce_reth *h)
{
	sroce_put_be64(p, h->va);
	sroce_put_be32(p + 8, h->rkey);
	sroce_put_be32(p + 12, h->len);
}

void sroce_atmeth_unpack(const u8 *p, struct sroce_atmeth *h)
{
	h->va = sroce_get_be64(p);
	h->rkey = sroce_get_be32(p + 8);
	h->swap_add = sroce_get_be64(p + 12);
	h->cmp = sroce_get_be64(p + 20);
}

void sroce_atmeth_pack(u8 *p, const struct sroce_atmeth *h)
{
	sroce_put_be64(p, h->va);
	sroce_put_be32(p + 8, h->rkey);
	sroce_put_be64(p + 12, h->swap_add);
	sroce_put_be64(p + 20, h->cmp);
}

void sroce_aeth_unpack(const u8 *p, struct sroce_aeth *h)
{
	h->syndrome = p[0];
	h->msn = sroce_get_be24(p + 1);
}

void sroce_aeth_pack(u8 *p, const struct sroce_aeth *h)
{
	p[0] = h->syndrome;
	sroce_put_be24(p + 1, h->msn);
}

void sroce_atmack_unpack(const u8 *p, struct sroce_atmack *h)
{
	h->orig = sroce_get_be64(p);
}

void sroce_atmack_pack(u8 *p, const struct sroce_atmack *h)
{
	sroce_put_be64(p, h->orig);
}

int sroce_hdrs_parse(const u8 *bth, u32 len, struct sroce_pkt_hdrs *h)
{
	const struct sroce_opcode_info *info;
	u32 rest;
	u32 m;

	h->info = NULL;
	h->hdr_len = 0;
	h->payload_len = 0;

	if (len < SROCE_BTH_BYTES + SROCE_ICRC_BYTES)
		return -SROCE_DROP_SHORT;

	info = sroce_opcode_info(bth[0]);
	if (!info)
		return -SROCE_DROP_UNKNOWN_OPCODE;

	sroce_bth_unpack(bth, &h->bth);
	if (h->bth.tver != SROCE_BTH_TVER)
		return -SROCE_DROP_BAD_TVER;

	if (len < (u32)info->hdr_len + SROCE_ICRC_BYTES)
		return -SROCE_DROP_SHORT;

	/* headers are whole words, so payload + pad must be too */
	rest = len - info->hdr_len - SROCE_ICRC_BYTES;
	if (rest & 3)
		return -SROCE_DROP_BAD_ALIGN;

	m = info->mask;
	if (!(m & SROCE_M_PAYLOAD) && (rest || h->bth.padcnt))
		return -SROCE_DROP_PAYLOAD_NOT_ALLOWED;
	if (h->bth.padcnt > rest)
		return -SROCE_DROP_BAD_PAD;

	if (m & SROCE_M_RDETH)
		sroce_rdeth_unpack(bth + info->offset[SROCE_HDR_RDETH],
				   &h->rdeth);
	if (m & SROCE_M_DETH)
		sroce_deth_unpack(bth + info->offset[SROCE_HDR_DETH], &h->deth);
	if (m & SROCE_M_XRCETH)
		sroce_xrceth_unpack(bth + info->offset[SROCE_HDR_XRCETH],
				    &h->xrceth);
	if (m & SROCE_M_FETH)
		sroce_feth_unpack(bth + info->offset[SROCE_HDR_FETH], &h->feth);
	if (m & SROCE_M_RETH)
		sroce_reth_unpack(bth + info->offset[SROCE_HDR_RETH], &h->reth);
	if (m & SROCE_M_ATMETH)
		sroce_atmeth_unpack(bth + info->offset[SROCE_HDR_ATMETH],
				    &h->atmeth);
	if (m & SROCE_M_AETH)
		sroce_aeth_unpack(bth + info->offset[SROCE_HDR_AETH], &h->aeth);
	if (m & SROCE_M_ATMACK)
		sroce_atmack_unpack(bth + info->offset[SROCE_HDR_ATMACK],
				    &h->atmack);
	if (m & SROCE_M_IMMDT)
		h->imm = sroce_get_be32(bth + info->offset[SROCE_HDR_IMMDT]);
	if (m & SROCE_M_IETH)
		h->ieth_rkey = sroce_get_be32(bth + info->offset[SROCE_HDR_IETH]);

	h->info = info;
	h->hdr_len = info->hdr_len;
	h->payload_len = rest - h->bth.padcnt;
	return 0;
}

u32 sroce_hdrs_build(u8 *bth, const struct sroce_pkt_hdrs *h)
{
	const struct sroce_opcode_info *info;
	u32 m;

	info = sroce_opcode_info(h->bth.opcode);
	if (!info)
		return 0;
	m = info->mask;

	sroce_bth_pack(bth, &h->bth);
	if (m & SROCE_M_RDETH)
		sroce_rdeth_pack(bth + info->offset[SROCE_HDR_RDETH], &h->rdeth);
	if (m & SROCE_M_DETH)
		sroce_deth_pack(bth + info->offset[SROCE_HDR_DETH], &h->deth);
	if (m & SROCE_M_XRCETH)
		sroce_xrceth_pack(bth + info->offset[SROCE_HDR_XRCETH],
				  &h->xrceth);
	if (m & SROCE_M_FETH)
		sroce_feth_pack(bth + info->offset[SROCE_HDR_FETH], &h->feth);
	if (m & SROCE_M_RETH)
		sroce_reth_pack(bth + info->offset[SROCE_HDR_RETH], &h->reth);
	if (m & SROCE_M_ATMETH)
		sroce_atmeth_pack(bth + info->offset[SROCE_HDR_ATMETH],
				  &h->atmeth);
	if (m & SROCE_M_AETH)
		sroce_aeth_pack(bth + info->offset[SROCE_HDR_AETH], &h->aeth);
	if (m & SROCE_M_ATMACK)
		sroce_atmack_pack(bth + info->offset[SROCE_HDR_ATMACK],
				  &h->atmack);
	if (m & SROCE_M_IMMDT)
		sroce_put_be32(bth + info->offset[SROCE_HDR_IMMDT], h->imm);
	if (m & SROCE_M_IETH)
		sroce_put_be32(bth + info->offset[SROCE_HDR_IETH], h->ieth_rkey);

	return info->hdr_len;
}
