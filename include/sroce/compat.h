/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one place where differences between the supported kernel lines
 * (Debian 12: 6.1 LTS and 6.12 LTS) are absorbed.  Code elsewhere calls the
 * sroce_compat_* names only.
 */
#ifndef SROCE_COMPAT_H
#define SROCE_COMPAT_H

#include <linux/version.h>
#include <linux/timer.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <linux/ipv6.h>

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define sroce_timer_delete_sync(t)	timer_delete_sync(t)
#define sroce_timer_delete(t)		timer_delete(t)
#else
#define sroce_timer_delete_sync(t)	del_timer_sync(t)
#define sroce_timer_delete(t)		del_timer(t)
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
#define sroce_from_timer(var, t, field)	timer_container_of(var, t, field)
#else
#define sroce_from_timer(var, t, field)	from_timer(var, t, field)
#endif

/* ib_device_ops.create_cq takes the attribute bundle since 6.11 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
typedef struct uverbs_attr_bundle sroce_create_cq_arg_t;
static inline struct ib_udata *
sroce_create_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
typedef struct ib_udata sroce_create_cq_arg_t;
static inline struct ib_udata *sroce_create_cq_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

/*
 * IBA 1.5 memory placement extensions (atomic write, RDMA FLUSH): the
 * verbs have IB_WR_ATOMIC_WRITE, IB_WR_FLUSH, their completion opcodes and
 * the IB_ACCESS_FLUSH_* bits since 6.2.  Without them the device neither
 * advertises nor executes either opcode.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define SROCE_HAVE_MEM_PLACEMENT	1
#define SROCE_ACCESS_FLUSH		IB_ACCESS_FLUSH_GLOBAL
#define SROCE_DEVICE_MEM_PLACEMENT	(IB_DEVICE_ATOMIC_WRITE | \
					 IB_DEVICE_FLUSH_GLOBAL)
#define SROCE_WR_FLUSH			IB_WR_FLUSH
#define SROCE_WR_ATOMIC_WRITE		IB_WR_ATOMIC_WRITE
/*
 * ib_cm gives a QP both flush bits once the device advertises either
 * (cm_init_qp_init_attr()): refusing them fails every rdma_cm accept.
 */
#define SROCE_QP_ACCESS_FLUSH		(IB_ACCESS_FLUSH_GLOBAL | \
					 IB_ACCESS_FLUSH_PERSISTENT)
#else
#define SROCE_HAVE_MEM_PLACEMENT	0
#define SROCE_ACCESS_FLUSH		0
#define SROCE_DEVICE_MEM_PLACEMENT	0
/* opcodes no WQE can carry: every test against them is false */
#define SROCE_WR_FLUSH			0xfffffffeU
#define SROCE_WR_ATOMIC_WRITE		0xffffffffU
#define SROCE_QP_ACCESS_FLUSH		0
#endif

/* Tracepoints: __assign_str() takes the source from __string() since 6.10. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define sroce_assign_str(dst, src)	__assign_str(dst)
#else
#define sroce_assign_str(dst, src)	__assign_str(dst, src)
#endif

/*
 * No IPv6 multicast loopback of what a socket sends (setup_udp_tunnel_sock()
 * turns IPv4's off): the flag is an atomic bit since 6.7.
 */
static inline void sroce_sk6_mc_loop_off(struct sock *sk)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	inet6_clear_bit(MC6_LOOP, sk);
#elif IS_ENABLED(CONFIG_IPV6)
	inet6_sk(sk)->mc_loop = 0;
#endif
}

#endif /* SROCE_COMPAT_H */
