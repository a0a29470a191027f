/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 24-bit packet sequence number arithmetic (modulo 2^24).
 */
#ifndef SROCE_WIRE_PSN_H
#define SROCE_WIRE_PSN_H

#include "sroce/wire/types.h"

#define SROCE_PSN_MASK		0xffffffu
#define SROCE_PSN_HALF		0x800000u

static inline u32 sroce_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SROCE_PSN_MASK;
}

/* a - b as a signed distance in [-2^23, 2^23). */
static inline s32 sroce_psn_diff(u32 a, u32 b)
{
	u32 d = (a - b) & SROCE_PSN_MASK;

	return d >= SROCE_PSN_HALF ? (s32)d - (s32)(SROCE_PSN_MASK + 1) :
				     (s32)d;
}

static inline bool sroce_psn_before(u32 a, u32 b)
{
	return sroce_psn_diff(a, b) < 0;
}

static inline bool sroce_psn_after(u32 a, u32 b)
{
	return sroce_psn_diff(a, b) > 0;
}

/*
 * May a requester whose next PSN is @next, with @oldest the oldest it has
 * not seen acknowledged, send a packet that takes @jump PSNs (a READ
 * request takes its responses'; else 0) under a window of @window PSNs?
 * After a go-back @next may be a little behind @oldest (a negative
 * distance: nothing outstanding).  At most half the PSN space may be
 * outstanding, or later PSNs would pass for older ones: a READ of 2^31
 * bytes at a 256-byte MTU fills it alone (its distance reads as -2^23)
 * and goes only when nothing else is outstanding.
 */
static inline bool sroce_psn_window_open(u32 next, u32 oldest, s32 window,
					 u32 jump)
{
	s32 out = sroce_psn_diff(next, oldest);
	u32 span = out == -(s32)SROCE_PSN_HALF ? SROCE_PSN_HALF :
		   out < 0 ? 0 : (u32)out;

	return span < (u32)window && span + jump <= SROCE_PSN_HALF;
}

/*
 * Does a request that ends before @next reach past @max, the end of all
 * sent so far, with @oldest the oldest PSN not acknowledged?  A READ of
 * 2^23 PSNs sent with nothing else outstanding ends exactly half the
 * space ahead of @oldest, which a signed distance reads as behind.
 */
static inline bool sroce_psn_extends(u32 next, u32 max, u32 oldest)
{
	return sroce_psn_after(next, max) ||
	       (next != max &&
		sroce_psn_diff(next, oldest) == -(s32)SROCE_PSN_HALF);
}

/* psn lies in [start, start + n) modulo 2^24; n <= 2^24. */
static inline bool sroce_psn_in_window(u32 psn, u32 start, u32 n)
{
	return ((psn - start) & SROCE_PSN_MASK) < n;
}

#endif /* SROCE_WIRE_PSN_H */
