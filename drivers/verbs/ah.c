// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address handles.  RoCEv2 only: every AH carries a GRH whose source GID is
 * a RoCE v2 GID; the AV is resolved to IP addresses once, here.
 */
#include <linux/slab.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "sroce/sroce.h"
#include "sroce/verbs.h"

int sroce_av_from_attr(struct sroce_dev *sdev, struct sroce_av *av,
		       const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid_attr;

	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	if (rdma_ah_get_port_num(attr) != 1)
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	sgid_attr = grh->sgid_attr;
	if (!sgid_attr || sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	av->sgid_index = grh->sgid_index;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->flow_label = grh->flow_label;
	av->dgid = grh->dgid;
	av->sgid = sgid_attr->gid;
	if (ipv6_addr_v4mapped((struct in6_addr *)av->sgid.raw)) {
		if (!ipv6_addr_v4mapped((struct in6_addr *)av->dgid.raw))
			return -EINVAL;
		av->net_type = SROCE_NET_TYPE_IPV4;
		memcpy(&av->saddr.v4, &av->sgid.raw[12], 4);
		memcpy(&av->daddr.v4, &av->dgid.raw[12], 4);
	} else {
		if (ipv6_addr_v4mapped((struct in6_addr *)av->dgid.raw))
			return -EINVAL;
		av->net_type = SROCE_NET_TYPE_IPV6;
		memcpy(&av->saddr.v6, av->sgid.raw, 16);
		memcpy(&av->daddr.v6, av->dgid.raw, 16);
	}
	return 0;
}

int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);
	struct sroce_ah *ah = to_sah(ibah);
	struct sroce_abi_create_ah_resp resp = {};
	struct sroce_ah_entry *ent;
	int err;

	if (udata && udata->outlen && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (atomic_inc_return(&sdev->n_ah) > SROCE_MAX_AH) {
		err = -ENOMEM;
		goto err_cnt;
	}
	ent = kzalloc(sizeof(*ent), GFP_ATOMIC);
	if (!ent) {
		err = -ENOMEM;
		goto err_cnt;
	}
	ent->pd = ibah->pd;
	err = sroce_av_from_attr(sdev, &ent->av, init->ah_attr);
	if (err)
		goto err_free;
	err = xa_alloc_cyclic(&sdev->ah_xa, &ah->ah_num, ent,
			      XA_LIMIT(1, SROCE_MAX_AH), &sdev->ah_next,
			      GFP_ATOMIC);
	if (err < 0)
		goto err_free;
	ah->ent = ent;
	if (udata && udata->outlen) {
		resp.ah_num = ah->ah_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err) {
			xa_erase(&sdev->ah_xa, ah->ah_num);
			goto err_free;
		}
	}
	return 0;

err_free:
	kfree(ent);
err_cnt:
	atomic_dec(&sdev->n_ah);
	return err;
}

/* The inverse of sroce_av_from_attr, for query_ah and query_qp. */
void sroce_av_to_attr(const struct sroce_av *av, struct rdma_ah_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, 1);
	rdma_ah_set_grh(attr, (union ib_gid *)&av->dgid, av->flow_label,
			av->sgid_index, av->hop_limit, av->traffic_class);
}

int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	sroce_av_to_attr(&to_sah(ibah)->ent->av, attr);
	return 0;
}

int sroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);
	struct sroce_ah *ah = to_sah(ibah);

	xa_erase(&sdev->ah_xa, ah->ah_num);
	kfree_rcu(ah->ent, rcu);
	atomic_dec(&sdev->n_ah);
	return 0;
}

/* Resolve a user WQE's ah_num; the AH must belong to the QP's PD. */
int sroce_ah_lookup_av(struct sroce_dev *sdev, u32 ah_num, struct ib_pd *pd,
		       struct sroce_av *av)
{
	struct sroce_ah_entry *ent;
	int err = -EINVAL;

	rcu_read_lock();
	ent = xa_load(&sdev->ah_xa, ah_num);
	if (ent && ent->pd == pd) {
		*av = ent->av;
		err = 0;
	}
	rcu_read_unlock();
	return err;
}
