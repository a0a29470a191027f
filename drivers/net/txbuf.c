// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Transmit buffers: skb heads built on pages that each CPU keeps and
 * reuses once whoever got the skb (the IP stack, a driver, a loopback
 * peer) has freed it.  A kmalloc'ed head costs an allocation per packet
 * and, under init_on_alloc (Debian's default), a memset of the whole
 * buffer: for a 4 KiB payload that is an 8 KiB clear, more than the copy
 * of the payload itself.  A kept page costs a reference count check.
 *
 * The skb's head is a page fragment (napi_build_skb), so the stack frees
 * it with a put_page(); the slot keeps one reference of its own, and a page
 * whose count is back to that one reference is free to reuse.  The
 * sk_buff itself comes from the CPU's NAPI cache, which the engine refills
 * as it consumes packets (sroce_skb_consume): both need softirqs off.
 */
#include <linux/skbuff.h>
#include <linux/mm.h>
#include <linux/percpu.h>

#include "sroce/sroce.h"

#define SROCE_TXBUF_SLOTS	64	/* pages kept per CPU and size */
#define SROCE_TXBUF_SCAN	8	/* busy slots skipped before kmalloc */
/* order 0: up to a page; order 1: a packet of a 4096-byte path MTU */
#define SROCE_TXBUF_ORDERS	2

struct sroce_txbuf_ring {
	struct page	*slot[SROCE_TXBUF_SLOTS];
	unsigned int	next;
};

struct sroce_txbuf_cpu {
	struct sroce_txbuf_ring ring[SROCE_TXBUF_ORDERS];
};

static struct sroce_txbuf_cpu __percpu *sroce_txbuf;
/* zeros: the pad and ICRC room after a payload sent by reference */
static struct page *sroce_txbuf_zero;

static struct sk_buff *sroce_txbuf_take(struct sroce_txbuf_ring *r,
					unsigned int order)
{
	struct sk_buff *skb;
	struct page *page;
	unsigned int n, i;

	for (n = 0; n < SROCE_TXBUF_SCAN; n++) {
		i = r->next;
		r->next = (i + 1) % SROCE_TXBUF_SLOTS;
		page = r->slot[i];
		if (!page) {
			/* not from the reserves: a kept page would mark every skb pfmemalloc */
			page = alloc_pages(GFP_ATOMIC | __GFP_NOWARN | __GFP_NOMEMALLOC |
					   (order ? __GFP_COMP : 0), order);
			if (!page)
				return NULL;
			r->slot[i] = page;
		} else if (page_ref_count(page) != 1) {
			continue;	/* an skb still holds it */
		}
		/* the last user's reads of the old packet come before our writes */
		smp_acquire__after_ctrl_dep();
		page_ref_inc(page);	/* the skb's reference */
		/* the sk_buff from this CPU's cache (BHs are off) */
		skb = napi_build_skb(page_address(page), PAGE_SIZE << order);
		if (!skb)
			page_ref_dec(page);
		return skb;
	}
	return NULL;
}

/* An skb with @size bytes of room (head + data + tail), GFP_ATOMIC. */
struct sk_buff *sroce_txbuf_skb(unsigned int size)
{
	unsigned int truesize = SKB_DATA_ALIGN(size) +
				SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	unsigned int order = truesize <= PAGE_SIZE ? 0 : 1;
	struct sk_buff *skb = NULL;

	if (likely(sroce_txbuf && truesize <= PAGE_SIZE << order)) {
		/* process context: softirqs off for this CPU's rings and NAPI cache */
		local_bh_disable();
		skb = sroce_txbuf_take(&this_cpu_ptr(sroce_txbuf)->ring[order],
				       order);
		local_bh_enable();
	}
	return skb ?: alloc_skb(size, GFP_ATOMIC);
}

/* A packet the engine has handled: its sk_buff goes back to this CPU's
 * cache, where sroce_txbuf_skb() takes the next one, instead of through
 * the slab allocator both ways.  Process context.
 */
void sroce_skb_consume(struct sk_buff *skb)
{
	local_bh_disable();
	napi_consume_skb(skb, 1);
	local_bh_enable();
}

/* Append n (< 8) zero bytes to a packet whose payload is page fragments. */
int sroce_txbuf_trailer(struct sk_buff *skb, unsigned int n)
{
	int i = skb_shinfo(skb)->nr_frags;

	if (i >= MAX_SKB_FRAGS)
		return -E2BIG;
	get_page(sroce_txbuf_zero);
	skb_fill_page_desc(skb, i, sroce_txbuf_zero, 0, n);
	skb->len += n;
	skb->data_len += n;
	skb->truesize += n;
	return 0;
}

int sroce_txbuf_init(void)
{
	sroce_txbuf_zero = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!sroce_txbuf_zero)
		return -ENOMEM;
	sroce_txbuf = alloc_percpu(struct sroce_txbuf_cpu);
	if (!sroce_txbuf) {
		__free_page(sroce_txbuf_zero);
		return -ENOMEM;
	}
	return 0;
}

/* Drops the slots' references; pages still in an skb go with that skb. */
void sroce_txbuf_exit(void)
{
	struct sroce_txbuf_cpu __percpu *rings = sroce_txbuf;
	unsigned int cpu, o, i;

	sroce_txbuf = NULL;
	for_each_possible_cpu(cpu) {
		struct sroce_txbuf_cpu *c = per_cpu_ptr(rings, cpu);

		for (o = 0; o < SROCE_TXBUF_ORDERS; o++)
			for (i = 0; i < SROCE_TXBUF_SLOTS; i++)
				if (c->ring[o].slot[i])
					put_page(c->ring[o].slot[i]);
	}
	free_percpu(rings);
	put_page(sroce_txbuf_zero);
}
