// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UD multicast: QPs attached to multicast GIDs.  The IP-level group
 * membership of the netdev is the consumer's business (rdma_cm joins it);
 * here we only map a multicast GID to the QPs that receive it.
 */
#include <linux/slab.h>
#include <rdma/ib_addr.h>

#include "sroce/sroce.h"
#include "sroce/verbs.h"

struct sroce_mcast {
	struct list_head	list;
	union ib_gid		mgid;
	struct sroce_qp		*qp;
};

int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_dev *sdev = qp->sdev;
	struct sroce_mcast *m, *e;
	int n = 0;

	if (qp->type != IB_QPT_UD)
		return -EINVAL;
	if (!rdma_is_multicast_addr((struct in6_addr *)gid->raw))
		return -EINVAL;
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	m->mgid = *gid;
	m->qp = qp;
	spin_lock_bh(&sdev->mcast_lock);
	list_for_each_entry(e, &sdev->mcast_list, list) {
		if (memcmp(&e->mgid, gid, sizeof(*gid)))
			continue;
		if (e->qp == qp) {
			spin_unlock_bh(&sdev->mcast_lock);
			kfree(m);
			return 0;
		}
		n++;
	}
	if (n >= SROCE_MAX_MCAST_QP_ATTACH) {
		spin_unlock_bh(&sdev->mcast_lock);
		kfree(m);
		return -ENOMEM;
	}
	list_add_tail(&m->list, &sdev->mcast_list);
	spin_unlock_bh(&sdev->mcast_lock);
	return 0;
}

int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_dev *sdev = qp->sdev;
	struct sroce_mcast *e, *tmp;
	int err = -EINVAL;

	spin_lock_bh(&sdev->mcast_lock);
	list_for_each_entry_safe(e, tmp, &sdev->mcast_list, list) {
		if (e->qp == qp && !memcmp(&e->mgid, gid, sizeof(*gid))) {
			list_del(&e->list);
			kfree(e);
			err = 0;
			break;
		}
	}
	spin_unlock_bh(&sdev->mcast_lock);
	return err;
}

/* A QP being destroyed leaves every group it is attached to. */
void sroce_mcast_qp_gone(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = qp->sdev;
	struct sroce_mcast *e, *tmp;

	spin_lock_bh(&sdev->mcast_lock);
	list_for_each_entry_safe(e, tmp, &sdev->mcast_list, list) {
		if (e->qp == qp) {
			list_del(&e->list);
			kfree(e);
		}
	}
	spin_unlock_bh(&sdev->mcast_lock);
}

/*
 * Take references on the QPs attached to @mgid (at most @max).  The receive
 * path only reads the skb, so one packet serves every QP in turn.
 */
int sroce_mcast_qps(struct sroce_dev *sdev, const union ib_gid *mgid,
		    struct sroce_qp **qps, int max)
{
	struct sroce_mcast *e;
	int n = 0;

	spin_lock_bh(&sdev->mcast_lock);
	list_for_each_entry(e, &sdev->mcast_list, list) {
		if (n == max)
			break;
		if (memcmp(&e->mgid, mgid, sizeof(*mgid)))
			continue;
		if (refcount_inc_not_zero(&e->qp->ref))
			qps[n++] = e->qp;
	}
	spin_unlock_bh(&sdev->mcast_lock);
	return n;
}
