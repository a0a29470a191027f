/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * sroce user ABI.
 *
 * sroce is driven by the unmodified rxe provider of rdma-core, so every
 * layout here is byte-identical to the kernel's rdma_user_rxe.h (uverbs ABI
 * version 2).  drivers/verbs/abi_check.c proves that at build time against
 * the installed kernel headers.  Field names follow the spec, not rxe.
 */
#ifndef SROCE_ABI_H
#define SROCE_ABI_H

#include <linux/types.h>
#include <linux/in.h>
#include <linux/in6.h>

#define SROCE_UVERBS_ABI_VERSION	2

enum {
	SROCE_NET_TYPE_IPV4 = 1,
	SROCE_NET_TYPE_IPV6 = 2,
};

/* Address vector a provider may embed in a UD WQE; sroce ignores it: ah_num decides. */
struct sroce_abi_av {
	__u8	port_num;
	__u8	network_type;
	__u8	dmac[6];
	__u8	dgid[16];
	__u32	flow_label;
	__u8	sgid_index;
	__u8	hop_limit;
	__u8	traffic_class;
	__u8	pad0;
	union {
		struct sockaddr_in	in4;
		struct sockaddr_in6	in6;
	} saddr, daddr;
};

struct sroce_abi_send_wr {
	__aligned_u64	wr_id;
	__u32		reserved;
	__u32		opcode;		/* enum ib_uverbs_wr_opcode */
	__u32		send_flags;	/* IB_SEND_* */
	union {
		__be32	imm_data;
		__u32	invalidate_rkey;
	} ex;
	union {
		/* RDMA FLUSH (rdma-core 45 on; rxe ABI since 6.2) */
		struct {
			__aligned_u64	remote_addr;
			__u32		length;
			__u32		rkey;
			__u8		type;	/* placement type, IB_FLUSH_* */
			__u8		level;	/* selectivity level */
		} flush;
		struct {
			__aligned_u64	remote_addr;
			__u32		rkey;
			__u32		reserved;
		} rdma;
		struct {
			__aligned_u64	remote_addr;
			__aligned_u64	compare_add;
			__aligned_u64	swap;
			__u32		rkey;
			__u32		reserved;
		} atomic;
		struct {
			__u32		remote_qpn;
			__u32		remote_qkey;
			__u16		pkey_index;
			__u16		reserved;
			__u32		ah_num;
			__u32		pad[4];
			struct sroce_abi_av av;
		} ud;
		struct {
			__aligned_u64	addr;
			__aligned_u64	length;
			__u32		mr_lkey;
			__u32		mw_rkey;
			__u32		rkey;
			__u32		access;
		} mw;
	} wr;
};

struct sroce_abi_sge {
	__aligned_u64	addr;
	__u32		length;
	__u32		lkey;
};

/* Scatter/gather state the provider initialises; the kernel reads num_sge only. */
struct sroce_abi_dma {
	__u32	length;
	__u32	resid;
	__u32	cur_sge;
	__u32	num_sge;
	__u32	sge_offset;
	__u32	reserved;
	union {
		__DECLARE_FLEX_ARRAY(__u8, inline_data);
		/* ATOMIC WRITE: the 8 bytes to write (librxe's wr_atomic_write) */
		__DECLARE_FLEX_ARRAY(__u8, atomic_wr);
		__DECLARE_FLEX_ARRAY(struct sroce_abi_sge, sge);
	};
};

/* One send queue slot.  Fields between wr and dma are never trusted. */
struct sroce_abi_send_wqe {
	struct sroce_abi_send_wr wr;
	__u32		status;
	__u32		state;
	__aligned_u64	iova;
	__u32		mask;
	__u32		first_psn;
	__u32		last_psn;
	__u32		ack_length;
	__u32		ssn;
	__u32		has_rd_atomic;
	struct sroce_abi_dma dma;
};

/* One receive queue slot. */
struct sroce_abi_recv_wqe {
	__aligned_u64	wr_id;
	__u32		reserved;
	__u32		padding;
	struct sroce_abi_dma dma;
};

/* Where user space mmaps a queue: offset on the uverbs fd and length. */
struct sroce_abi_mmap_info {
	__aligned_u64	offset;
	__u32		size;
	__u32		pad;
};

struct sroce_abi_create_ah_resp {
	__u32	ah_num;
	__u32	reserved;
};

struct sroce_abi_create_cq_resp {
	struct sroce_abi_mmap_info mi;
};

struct sroce_abi_resize_cq_resp {
	struct sroce_abi_mmap_info mi;
};

struct sroce_abi_create_qp_resp {
	struct sroce_abi_mmap_info rq_mi;
	struct sroce_abi_mmap_info sq_mi;
};

struct sroce_abi_create_srq_resp {
	struct sroce_abi_mmap_info mi;
	__u32	srq_num;
	__u32	reserved;
};

struct sroce_abi_modify_srq_cmd {
	__aligned_u64	mmap_info_addr;
};

/*
 * Header of every shared ring.  Indices are slot numbers already masked;
 * producer and consumer sit on their own cache lines.
 */
struct sroce_abi_queue_buf {
	__u32	log2_elem_size;
	__u32	index_mask;
	__u32	pad_1[30];
	__u32	producer_index;
	__u32	pad_2[31];
	__u32	consumer_index;
	__u32	pad_3[31];
	__u8	data[];
};

#endif /* SROCE_ABI_H */
