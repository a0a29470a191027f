// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ib_device: creation on `rdma link add`, attributes, port state that
 * follows the netdev, and teardown.
 */
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/if_arp.h>
#include <linux/random.h>
#include <linux/rculist.h>
#include <linux/rtnetlink.h>
#include <net/net_namespace.h>
#include <net/addrconf.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_mad.h>

#include "sroce/sroce.h"
#include "sroce/wire/opcode.h"

static LIST_HEAD(sroce_devs);
static DEFINE_MUTEX(sroce_devs_lock);

/* Caller holds rcu_read_lock. */
struct sroce_dev *sroce_dev_by_netdev(struct net_device *ndev)
{
	struct sroce_dev *sdev;

	list_for_each_entry_rcu(sdev, &sroce_devs, list)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

/*
 * The active MTU is the one rdma_cm assumes for a RoCE netdev
 * (iboe_get_mtu), so the two ends of a connection agree on it.  The wire
 * codec's unit test checks that every opcode's headers before a full-MTU
 * payload fit in that overhead; this, that it is still the kernel's.
 */
static_assert(SROCE_IBOE_MTU_OVERHEAD ==
	      IB_GRH_BYTES + IB_UDP_BYTES + IB_BTH_BYTES + IB_EXT_XRC_BYTES +
	      IB_EXT_ATOMICETH_BYTES + IB_ICRC_BYTES);

enum ib_mtu sroce_mtu_from_netdev(unsigned int mtu)
{
	/* 0 below 352: a 256 B payload may then not fit, but IB has no less */
	return iboe_get_mtu(mtu) ?: IB_MTU_256;
}

static int sroce_query_device(struct ib_device *ibdev,
			      struct ib_device_attr *attr,
			      struct ib_udata *udata)
{
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = 1ULL << 32;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = SROCE_MAX_MR_SIZE;
	attr->page_size_cap = SROCE_PAGE_SIZE_CAP;
	attr->vendor_id = 0xffffff;
	attr->max_qp = SROCE_MAX_QP;
	attr->max_qp_wr = SROCE_MAX_QP_WR;
	attr->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_SRQ_RESIZE |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 SROCE_DEVICE_MEM_PLACEMENT;
	attr->max_fast_reg_page_list_len = SROCE_MAX_FAST_REG_PAGES;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG |
				 IBK_BLOCK_MULTICAST_LOOPBACK;
	attr->max_send_sge = SROCE_MAX_SGE;
	attr->max_recv_sge = SROCE_MAX_SGE;
	attr->max_sge_rd = SROCE_MAX_SGE;
	attr->max_cq = SROCE_MAX_CQ;
	attr->max_cqe = SROCE_MAX_CQE - 1;
	attr->max_mr = SROCE_MAX_MR;
	attr->max_mw = SROCE_MAX_MW;
	attr->max_pd = SROCE_MAX_PD;
	attr->max_qp_rd_atom = SROCE_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = SROCE_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = SROCE_MAX_QP * SROCE_MAX_RD_ATOMIC;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_ah = SROCE_MAX_AH;
	attr->max_mcast_grp = SROCE_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = SROCE_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = SROCE_MAX_MCAST_GRP *
					  SROCE_MAX_MCAST_QP_ATTACH;
	attr->max_srq = SROCE_MAX_SRQ;
	attr->max_srq_wr = SROCE_MAX_SRQ_WR;
	attr->max_srq_sge = SROCE_MAX_SGE;
	attr->max_pkeys = 1;
	attr->local_ca_ack_delay = 15;
	return 0;
}

static int sroce_query_port(struct ib_device *ibdev, u32 port,
			    struct ib_port_attr *attr)
{
	struct sroce_dev *sdev = to_sdev(ibdev);

	attr->state = sdev->port_state;
	attr->phys_state = sdev->port_state == IB_PORT_ACTIVE ?
			   IB_PORT_PHYS_STATE_LINK_UP :
			   IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = sdev->port_mtu;
	attr->gid_tbl_len = SROCE_GID_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = 1U << 31;
	attr->pkey_tbl_len = 1;
	attr->max_vl_num = 1;
	attr->lid = 0;
	attr->sm_lid = 0;
	attr->lmc = 0;
	attr->init_type_reply = 0;
	/* the netdev may be gone already while the device unregisters */
	if (ib_get_eth_speed(ibdev, port, &attr->active_speed,
			     &attr->active_width)) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

static int sroce_get_port_immutable(struct ib_device *ibdev, u32 port,
				    struct ib_port_immutable *imm)
{
	imm->pkey_tbl_len = 1;
	imm->gid_tbl_len = SROCE_GID_TBL_LEN;
	imm->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	imm->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static int sroce_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			    u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = SROCE_PKEY_DEFAULT;
	return 0;
}

static enum rdma_link_layer sroce_get_link_layer(struct ib_device *ibdev,
						 u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int sroce_modify_device(struct ib_device *ibdev, int mask,
			       struct ib_device_modify *attr)
{
	if (mask & ~(IB_DEVICE_MODIFY_SYS_IMAGE_GUID |
		     IB_DEVICE_MODIFY_NODE_DESC))
		return -EOPNOTSUPP;
	if (mask & IB_DEVICE_MODIFY_NODE_DESC)
		memcpy(ibdev->node_desc, attr->node_desc,
		       sizeof(ibdev->node_desc));
	return 0;
}

static int sroce_modify_port(struct ib_device *ibdev, u32 port, int mask,
			     struct ib_port_modify *attr)
{
	return 0;
}

static void sroce_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "sroce-1.0");
}

/* Called by the core once the device is unregistered, before it is freed. */
static void sroce_dealloc_driver(struct ib_device *ibdev)
{
	struct sroce_dev *sdev = to_sdev(ibdev);

	mutex_lock(&sroce_devs_lock);
	list_del_rcu(&sdev->list);
	mutex_unlock(&sroce_devs_lock);
	synchronize_rcu();
	WARN_ON(!xa_empty(&sdev->qp_xa));
	WARN_ON(!xa_empty(&sdev->mr_xa));
	WARN_ON(!xa_empty(&sdev->mw_xa));
	WARN_ON(sdev->n_mcg);
	xa_destroy(&sdev->qp_xa);
	xa_destroy(&sdev->mr_xa);
	xa_destroy(&sdev->mw_xa);
	xa_destroy(&sdev->ah_xa);
	sroce_stats_fini(sdev);
	dev_put(sdev->ndev);
	sroce_net_put(sdev->net);
}

static const struct ib_device_ops sroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_RXE,	/* what librxe matches on */
	.uverbs_abi_ver = SROCE_UVERBS_ABI_VERSION,

	.query_device = sroce_query_device,
	.query_port = sroce_query_port,
	.get_port_immutable = sroce_get_port_immutable,
	.query_pkey = sroce_query_pkey,
	.get_link_layer = sroce_get_link_layer,
	.modify_device = sroce_modify_device,
	.modify_port = sroce_modify_port,
	.get_dev_fw_str = sroce_get_dev_fw_str,
	.dealloc_driver = sroce_dealloc_driver,
};

void sroce_dev_port_event(struct sroce_dev *sdev, bool up)
{
	enum ib_port_state state = up ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	struct ib_event ev = {
		.device = &sdev->ib_dev,
		.element.port_num = 1,
	};

	if (sdev->port_state == state)
		return;
	WRITE_ONCE(sdev->port_state, state);
	ev.event = up ? IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
}

void sroce_dev_mtu_changed(struct sroce_dev *sdev)
{
	WRITE_ONCE(sdev->port_mtu, sroce_mtu_from_netdev(sdev->ndev->mtu));
}

/*
 * rdma link add runs without rtnl, so the netdev may move to another
 * namespace or go while we register.  Its namespace now is kept alive until
 * we are registered; a move the notifier saw before then (or missed, while
 * the device was not listed yet) is undone here, under rtnl like the
 * notifier, so exactly one of the two unregisters.
 */
int sroce_dev_add(const char *ibdev_name, struct net_device *ndev)
{
	struct sroce_dev *sdev;
	struct ib_device *ibdev;
	struct net *net;
	bool gone;
	int err;

	if (ndev->type != ARPHRD_ETHER)
		return -EINVAL;
	rcu_read_lock();
	sdev = sroce_dev_by_netdev(ndev);
	rcu_read_unlock();
	if (sdev)
		return -EEXIST;
	rtnl_lock();
	net = ndev->reg_state == NETREG_REGISTERED ?
	      maybe_get_net(dev_net(ndev)) : NULL;
	rtnl_unlock();
	if (!net)
		return -ENODEV;
	err = sroce_net_get(net);
	if (err)
		goto out_net;

	err = -ENOMEM;
	sdev = ib_alloc_device(sroce_dev, ib_dev);
	if (!sdev)
		goto out_count;
	ibdev = &sdev->ib_dev;
	sdev->net = net;
	if (sroce_stats_init(sdev)) {
		ib_dealloc_device(ibdev);
		goto out_count;
	}
	xa_init_flags(&sdev->qp_xa, XA_FLAGS_ALLOC);
	xa_init_flags(&sdev->mr_xa, XA_FLAGS_ALLOC);
	xa_init_flags(&sdev->mw_xa, XA_FLAGS_ALLOC);
	xa_init_flags(&sdev->ah_xa, XA_FLAGS_ALLOC1);
	mutex_init(&sdev->mcast_mutex);
	spin_lock_init(&sdev->mcast_lock);
	sdev->mcg_seed = get_random_u32();
	atomic_set(&sdev->skb_out, 0);
	spin_lock_init(&sdev->stall_lock);
	INIT_LIST_HEAD(&sdev->stalled);
	sdev->ndev = ndev;
	dev_hold(ndev);
	/* from here on ib_dealloc_device() undoes everything via dealloc_driver */
	mutex_lock(&sroce_devs_lock);
	list_add_tail_rcu(&sdev->list, &sroce_devs);
	mutex_unlock(&sroce_devs_lock);
	sdev->port_mtu = sroce_mtu_from_netdev(ndev->mtu);
	sdev->port_state = netif_running(ndev) && netif_carrier_ok(ndev) ?
			   IB_PORT_ACTIVE : IB_PORT_DOWN;

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	addrconf_addr_eui48((unsigned char *)&ibdev->node_guid,
			    ndev->dev_addr);
	strscpy(ibdev->node_desc, "sroce", sizeof(ibdev->node_desc));
	/* librxe rings the SQ doorbell and arms CQs through these commands */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ib_set_device_ops(ibdev, &sroce_dev_ops);
	ib_set_device_ops(ibdev, &sroce_verbs_ops);
	ib_set_device_ops(ibdev, &sroce_stats_ops);
	/*
	 * With `rdma system set netns exclusive` a device is seen only in its
	 * namespace: put it in its netdev's, where `rdma link add` ran.  The
	 * core moves it back to init_net if that namespace goes first.
	 */
	if (!rdma_dev_access_netns(ibdev, sdev->net))
		write_pnet(&ibdev->coredev.rdma_net, sdev->net);
	err = ib_device_set_netdev(ibdev, ndev, 1);
	if (!err)
		err = ib_register_device(ibdev, ibdev_name, NULL);
	if (err) {
		ib_dealloc_device(ibdev);
		goto out_net;
	}
	rtnl_lock();
	gone = sdev->unreg_seen || ndev->reg_state != NETREG_REGISTERED ||
	       !net_eq(dev_net(ndev), net);
	sdev->registered = !gone;
	rtnl_unlock();
	if (gone) {
		ib_unregister_device(ibdev);	/* frees sdev */
		err = -ENODEV;
	}
out_net:
	put_net(net);
	return err;
out_count:
	sroce_net_put(net);
	goto out_net;
}

/* The netdev leaves its namespace or goes (rtnl held). */
void sroce_dev_netdev_unregister(struct net_device *ndev)
{
	struct sroce_dev *sdev;

	ASSERT_RTNL();
	rcu_read_lock();
	sdev = sroce_dev_by_netdev(ndev);
	if (sdev && !sdev->registered) {
		sdev->unreg_seen = true;	/* sroce_dev_add unregisters */
	} else if (sdev && ib_device_try_get(&sdev->ib_dev)) {
		ib_unregister_device_queued(&sdev->ib_dev);
		ib_device_put(&sdev->ib_dev);
	}
	rcu_read_unlock();
}

void sroce_dev_remove_all(void)
{
	struct sroce_dev *sdev;

	for (;;) {
		mutex_lock(&sroce_devs_lock);
		sdev = list_first_entry_or_null(&sroce_devs, struct sroce_dev,
						list);
		if (sdev && !ib_device_try_get(&sdev->ib_dev))
			sdev = NULL;
		mutex_unlock(&sroce_devs_lock);
		if (!sdev)
			break;
		ib_unregister_device_and_put(&sdev->ib_dev);
	}
	/*
	 * Also waits for unregistrations queued by netdev events.  Every
	 * RDMA_DRIVER_RXE device is ours: rdma_rxe is kept from loading.
	 */
	ib_unregister_driver(RDMA_DRIVER_RXE);
}
