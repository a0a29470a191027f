// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Module entry: the rdma link type, netdev tracking, and the guard that
 * keeps sroce and rdma_rxe out of one kernel (same driver id, same port).
 */
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/namei.h>
#include <linux/if_arp.h>
#include <rdma/rdma_netlink.h>

#include "sroce/sroce.h"

struct workqueue_struct *sroce_wq;
struct workqueue_struct *sroce_poll_wq;

static int sroce_newlink(const char *ibdev_name, struct net_device *ndev)
{
	return sroce_dev_add(ibdev_name, ndev);
}

static struct rdma_link_ops sroce_link_ops = {
	.type = "sroce",
	.newlink = sroce_newlink,
};

static int sroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct sroce_dev *sdev;

	if (event == NETDEV_UNREGISTER) {
		sroce_dev_netdev_unregister(ndev);
		return NOTIFY_OK;
	}
	rcu_read_lock();
	sdev = sroce_dev_by_netdev(ndev);
	if (sdev) {
		switch (event) {
		case NETDEV_UP:
		case NETDEV_DOWN:
		case NETDEV_CHANGE:
			sroce_dev_port_event(sdev, netif_running(ndev) &&
						   netif_carrier_ok(ndev));
			break;
		case NETDEV_CHANGEMTU:
			sroce_dev_mtu_changed(sdev);
			break;
		default:
			break;
		}
	}
	rcu_read_unlock();
	return NOTIFY_OK;
}

static struct notifier_block sroce_netdev_nb = {
	.notifier_call = sroce_netdev_event,
};

/* rdma_rxe would claim our driver id and port: keep it from loading. */
static int sroce_module_event(struct notifier_block *nb, unsigned long state,
			      void *data)
{
	struct module *mod = data;

	if (state == MODULE_STATE_COMING && !strcmp(mod->name, "rdma_rxe")) {
		pr_err("sroce: rdma_rxe cannot load while sroce is loaded (both are RDMA_DRIVER_RXE on UDP 4791)\n");
		return notifier_from_errno(-EBUSY);
	}
	return NOTIFY_DONE;
}

static struct notifier_block sroce_module_nb = {
	.notifier_call = sroce_module_event,
};

static bool sroce_rxe_loaded(void)
{
	struct path path;

	if (kern_path("/sys/module/rdma_rxe", LOOKUP_FOLLOW, &path))
		return false;
	path_put(&path);
	return true;
}

static int __init sroce_init(void)
{
	int err;

	if (sroce_rxe_loaded()) {
		pr_err("sroce: rdma_rxe is loaded: unload it first (both are RDMA_DRIVER_RXE on UDP 4791)\n");
		return -EBUSY;
	}
	err = register_module_notifier(&sroce_module_nb);
	if (err)
		return err;
	/* normal priority: an engine that requeues itself must share the CPU */
	sroce_wq = alloc_workqueue("sroce", WQ_MEM_RECLAIM, 0);
	if (!sroce_wq) {
		err = -ENOMEM;
		goto err_mod;
	}
	/* send queue pollers spin: they must not hold up the pool's other work */
	sroce_poll_wq = alloc_workqueue("sroce_poll", WQ_CPU_INTENSIVE, 0);
	if (!sroce_poll_wq) {
		err = -ENOMEM;
		goto err_wq;
	}
	err = sroce_txbuf_init();
	if (err)
		goto err_poll_wq;
	err = sroce_net_init();
	if (err)
		goto err_txbuf;
	err = register_netdevice_notifier(&sroce_netdev_nb);
	if (err)
		goto err_net;
	rdma_link_register(&sroce_link_ops);
	pr_info("sroce: loaded\n");
	return 0;

err_net:
	sroce_net_exit();
err_txbuf:
	sroce_txbuf_exit();
err_poll_wq:
	destroy_workqueue(sroce_poll_wq);
err_wq:
	destroy_workqueue(sroce_wq);
err_mod:
	unregister_module_notifier(&sroce_module_nb);
	return err;
}

static void __exit sroce_exit(void)
{
	rdma_link_unregister(&sroce_link_ops);
	unregister_netdevice_notifier(&sroce_netdev_nb);
	sroce_dev_remove_all();
	sroce_net_exit();
	sroce_txbuf_exit();
	destroy_workqueue(sroce_poll_wq);
	destroy_workqueue(sroce_wq);
	unregister_module_notifier(&sroce_module_nb);
	pr_info("sroce: unloaded\n");
}

module_init(sroce_init);
module_exit(sroce_exit);

MODULE_AUTHOR("sroce developers");
MODULE_DESCRIPTION("Software RoCEv2 HCA");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("sroce");
MODULE_VERSION(SROCE_VERSION);
