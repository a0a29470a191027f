// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* User contexts and protection domains. */
#include "sroce/sroce.h"
#include "sroce/verbs.h"

int sroce_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata)
{
	return 0;
}

void sroce_dealloc_ucontext(struct ib_ucontext *uctx)
{
}

/*
 * The core destroys a context's objects when its device goes (or changes
 * namespace) while the process still runs.  Nothing more is ours to do: a
 * ring the process still maps holds its pages (sroce_mmap) and nothing in
 * the kernel reads it once its object is destroyed.
 */
void sroce_disassociate_ucontext(struct ib_ucontext *uctx)
{
}

int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);

	if (atomic_inc_return(&sdev->n_pd) > SROCE_MAX_PD) {
		atomic_dec(&sdev->n_pd);
		return -ENOMEM;
	}
	return 0;
}

int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(ibpd->device)->n_pd);
	return 0;
}
