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
