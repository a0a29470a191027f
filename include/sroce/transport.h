/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Helpers shared by the requester, responder and completer. */
#ifndef SROCE_TRANSPORT_H
#define SROCE_TRANSPORT_H

#include "sroce/sroce.h"
#include "sroce/wire/aeth.h"

/* Opcode base of a QP's transport (RC 0x00, UC 0x20, UD 0x60). */
static inline u8 sroce_qp_opbase(const struct sroce_qp *qp)
{
	switch (qp->type) {
	case IB_QPT_UC:
		return SROCE_OP_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return SROCE_OP_UD;
	default:
		return SROCE_OP_RC;
	}
}

/*
 * Build a packet of @h->bth.opcode with @payload_len payload bytes (pad
 * added here).  Returns the skb and where the payload goes.
 */
struct sk_buff *sroce_build_pkt(struct sroce_qp *qp, const struct sroce_av *av,
				struct sroce_pkt_hdrs *h, u32 payload_len,
				u8 **payload);

/* ACK/NAK on behalf of the responder. */
int sroce_send_ack(struct sroce_qp *qp, u32 psn, u8 syndrome);

/* Gather/scatter against a list of local SGEs through the MR table. */
int sroce_sge_copy_out(struct sroce_qp *qp, const struct sroce_sge *sge,
		       u32 num_sge, u32 *cur_sge, u32 *sge_off, u8 *dst,
		       u32 len);
int sroce_sge_copy_in(struct sroce_qp *qp, struct sroce_pd *pd,
		      const struct sroce_sge *sge, u32 num_sge, u32 *cur_sge,
		      u32 *sge_off, const struct sk_buff *skb, u32 off, u32 len);
int sroce_sge_write(struct sroce_qp *qp, struct sroce_pd *pd,
		    const struct sroce_sge *sge, u32 num_sge, u32 *cur_sge,
		    u32 *sge_off, const void *buf, u32 len);
void sroce_sge_seek(const struct sroce_sge *sge, u32 num_sge, u32 off,
		    u32 *cur_sge, u32 *sge_off);

u32 sroce_retrans_jiffies(const struct sroce_qp *qp);
void sroce_req_rewind(struct sroce_qp *qp, u32 psn);
void sroce_req_arm_timer(struct sroce_qp *qp);

#endif /* SROCE_TRANSPORT_H */
