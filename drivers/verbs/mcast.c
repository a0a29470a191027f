// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UD multicast: groups (multicast GIDs) and the QPs attached to them.
 * A group exists while a QP is attached; its Ethernet address is on the
 * netdev's filter for that time, so verbs-only users (no rdma_cm, no IGMP
 * join) receive too.  Groups live in a hash so the receive path costs one
 * bucket, not a walk over every attachment.  Limits are the ones
 * query_device reports.
 */
#include <linux/etherdevice.h>
#include <linux/hash.h>
#include <linux/jhash.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <rdma/ib_addr.h>

#include "sroce/sroce.h"
#include "sroce/verbs.h"

struct sroce_mcg {
	struct hlist_node	node;		/* sdev->mcg_hash, under mcast_lock */
	union ib_gid		mgid;
	u8			mac[ETH_ALEN];
	u32			n;		/* entries of qp[] in use */
	struct sroce_qp		*qp[SROCE_MAX_MCAST_QP_ATTACH];
};

/* seeded per device: a user who knew the seed could fill one bucket */
static u32 sroce_mcg_hash(const struct sroce_dev *sdev,
			  const union ib_gid *mgid)
{
	return jhash(mgid->raw, sizeof(mgid->raw), sdev->mcg_seed) &
	       (SROCE_MCG_HASH_SIZE - 1);
}

static struct sroce_mcg *sroce_mcg_find(struct sroce_dev *sdev,
					const union ib_gid *mgid)
{
	struct sroce_mcg *g;

	lockdep_assert_held(&sdev->mcast_lock);
	hlist_for_each_entry(g, &sdev->mcg_hash[sroce_mcg_hash(sdev, mgid)], node)
		if (!memcmp(&g->mgid, mgid, sizeof(*mgid)))
			return g;
	return NULL;
}

static void sroce_mcg_mac(const union ib_gid *mgid, u8 *mac)
{
	const struct in6_addr *a = (const struct in6_addr *)mgid->raw;

	if (ipv6_addr_v4mapped(a))
		ip_eth_mc_map(a->s6_addr32[3], mac);
	else
		ipv6_eth_mc_map(a, mac);
}

int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_dev *sdev = qp->sdev;
	struct sroce_mcg *g, *fresh;
	int err = 0;
	u32 i;

	if (qp->type != IB_QPT_UD)
		return -EINVAL;
	if (!rdma_is_multicast_addr((struct in6_addr *)gid->raw))
		return -EINVAL;
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh)
		return -ENOMEM;

	mutex_lock(&sdev->mcast_mutex);
	spin_lock_bh(&sdev->mcast_lock);
	g = sroce_mcg_find(sdev, gid);
	if (g) {
		for (i = 0; i < g->n; i++)
			if (g->qp[i] == qp)
				goto unlock;	/* attached already: not an error */
		if (g->n == SROCE_MAX_MCAST_QP_ATTACH) {
			err = -ENOMEM;
			goto unlock;
		}
		g->qp[g->n++] = qp;
		goto unlock;
	}
	if (sdev->n_mcg == SROCE_MAX_MCAST_GRP) {
		err = -ENOMEM;
		goto unlock;
	}
	g = fresh;
	fresh = NULL;
	g->mgid = *gid;
	sroce_mcg_mac(gid, g->mac);
	g->qp[g->n++] = qp;
	hlist_add_head(&g->node, &sdev->mcg_hash[sroce_mcg_hash(sdev, gid)]);
	sdev->n_mcg++;
	spin_unlock_bh(&sdev->mcast_lock);
	/* the mutex keeps the group (and so its MAC) alive meanwhile */
	err = dev_mc_add(sdev->ndev, g->mac);
	if (err) {
		spin_lock_bh(&sdev->mcast_lock);
		hlist_del(&g->node);
		sdev->n_mcg--;
		spin_unlock_bh(&sdev->mcast_lock);
		kfree(g);
	}
	mutex_unlock(&sdev->mcast_mutex);
	return err;
unlock:
	spin_unlock_bh(&sdev->mcast_lock);
	mutex_unlock(&sdev->mcast_mutex);
	kfree(fresh);
	return err;
}

/* Drop @qp from @g; frees and returns true when @g became empty. */
static bool sroce_mcg_drop(struct sroce_dev *sdev, struct sroce_mcg *g,
			   struct sroce_qp *qp)
{
	u32 i;

	lockdep_assert_held(&sdev->mcast_mutex);
	spin_lock_bh(&sdev->mcast_lock);
	for (i = 0; i < g->n; i++)
		if (g->qp[i] == qp)
			break;
	if (i == g->n) {
		spin_unlock_bh(&sdev->mcast_lock);
		return false;
	}
	g->qp[i] = g->qp[--g->n];
	g->qp[g->n] = NULL;
	if (g->n) {
		spin_unlock_bh(&sdev->mcast_lock);
		return false;
	}
	hlist_del(&g->node);
	sdev->n_mcg--;
	spin_unlock_bh(&sdev->mcast_lock);
	dev_mc_del(sdev->ndev, g->mac);
	kfree(g);
	return true;
}

int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_dev *sdev = qp->sdev;
	struct sroce_mcg *g;
	int err = -EINVAL;
	u32 i, n;

	mutex_lock(&sdev->mcast_mutex);
	spin_lock_bh(&sdev->mcast_lock);
	g = sroce_mcg_find(sdev, gid);
	n = g ? g->n : 0;
	for (i = 0; i < n; i++)
		if (g->qp[i] == qp)
			err = 0;
	spin_unlock_bh(&sdev->mcast_lock);
	if (!err)
		sroce_mcg_drop(sdev, g, qp);
	mutex_unlock(&sdev->mcast_mutex);
	return err;
}

/* A QP being destroyed leaves every group it is attached to. */
void sroce_mcast_qp_gone(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = qp->sdev;
	struct hlist_node *tmp;
	struct sroce_mcg *g;
	u32 b;

	if (qp->type != IB_QPT_UD)
		return;
	mutex_lock(&sdev->mcast_mutex);
	for (b = 0; b < SROCE_MCG_HASH_SIZE && sdev->n_mcg; b++)
		hlist_for_each_entry_safe(g, tmp, &sdev->mcg_hash[b], node)
			sroce_mcg_drop(sdev, g, qp);
	mutex_unlock(&sdev->mcast_mutex);
}

/* Is any QP attached to @mgid?  (A hint: it may change right after.) */
bool sroce_mcast_attached(struct sroce_dev *sdev, const union ib_gid *mgid)
{
	struct sroce_mcg *g;
	bool any;

	spin_lock_bh(&sdev->mcast_lock);
	g = sroce_mcg_find(sdev, mgid);
	any = g && g->n;
	spin_unlock_bh(&sdev->mcast_lock);
	return any;
}

/*
 * Take references on the QPs attached to @mgid (at most @max).  The receive
 * path only reads the skb, so one packet serves every QP in turn.
 */
int sroce_mcast_qps(struct sroce_dev *sdev, const union ib_gid *mgid,
		    struct sroce_qp **qps, int max)
{
	struct sroce_mcg *g;
	int n = 0;
	u32 i;

	spin_lock_bh(&sdev->mcast_lock);
	g = sroce_mcg_find(sdev, mgid);
	for (i = 0; g && i < g->n && n < max; i++)
		if (refcount_inc_not_zero(&g->qp[i]->ref))
			qps[n++] = g->qp[i];
	spin_unlock_bh(&sdev->mcast_lock);
	return n;
}
