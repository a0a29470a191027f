/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdma-core 44 has no ibv_wr_flush: the test programs start an RDMA WRITE
 * with ibv_wr_*, find it in librxe's mmapped send ring and rewrite it as
 * the FLUSH WQE rdma-core 45 writes (rxe ABI, kernel 6.2 on) before
 * ibv_wr_complete hands it over. rdma_rxe and sroce both read this ring.
 * Offsets in struct rxe_send_wqe (rdma_user_rxe.h):
 */
#ifndef SROCE_TESTS_RXE_FLUSH_WQE_H
#define SROCE_TESTS_RXE_FLUSH_WQE_H

#include <stdint.h>
#include <string.h>

#define SWQE_OPCODE 12 /* wr.opcode */
#define SWQE_WR 24     /* wr.wr: flush = remote_addr u64, length u32, rkey u32, type u8, level u8 */
#define SWQE_IOVA 152  /* iova */
#define SWQE_DMA 184   /* dma: length u32, resid u32, cur_sge u32, num_sge u32 */
#define SWQE_WR_FLUSH 14 /* IB_UVERBS_WR_FLUSH (IBV_WR_FLUSH in rdma-core 45) */

/* Rewrite the send WQE at w as a FLUSH of [va, va + len) through rkey. */
static inline void rxe_flush_wqe_fill(unsigned char *w, uint64_t va, uint32_t len,
				      uint32_t rkey, uint8_t type, uint8_t level)
{
	uint32_t op = SWQE_WR_FLUSH, zero = 0;

	memcpy(w + SWQE_OPCODE, &op, 4);
	/* wr.flush (sroce reads the range from here) */
	memcpy(w + SWQE_WR, &va, 8);
	memcpy(w + SWQE_WR + 8, &len, 4);
	memcpy(w + SWQE_WR + 12, &rkey, 4);
	w[SWQE_WR + 16] = type;
	w[SWQE_WR + 17] = level;
	/* rdma_rxe's RETH takes iova and dma.resid, as rdma-core 45's wr_flush sets them */
	memcpy(w + SWQE_IOVA, &va, 8);
	memcpy(w + SWQE_DMA, &len, 4);
	memcpy(w + SWQE_DMA + 4, &len, 4);
	/* no payload (oA19-2): num_sge 0 */
	memcpy(w + SWQE_DMA + 12, &zero, 4);
}

#endif
