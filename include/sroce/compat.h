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

/* umem block iterators lived in their own header before moving to ib_umem.h */
#if __has_include(<rdma/iter.h>)
#include <rdma/iter.h>
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define sroce_timer_delete_sync(t)	timer_delete_sync(t)
#else
#define sroce_timer_delete_sync(t)	del_timer_sync(t)
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
#define sroce_from_timer(var, t, field)	timer_container_of(var, t, field)
#else
#define sroce_from_timer(var, t, field)	from_timer(var, t, field)
#endif

#endif /* SROCE_COMPAT_H */
