/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal type and byte-order shim so the wire codec builds both in the
 * kernel module and in user-space tests/fuzzers.
 */
#ifndef SROCE_WIRE_TYPES_H
#define SROCE_WIRE_TYPES_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/string.h>
#include <linux/errno.h>
#include <linux/stddef.h>
#else
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <stddef.h>
#include <errno.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
#endif

/* Byte-pointer accessors: no __be types, no alignment assumptions. */
static inline u16 sroce_get_be16(const u8 *p)
{
	return (u16)((u16)p[0] << 8 | p[1]);
}

static inline u32 sroce_get_be24(const u8 *p)
{
	return (u32)p[0] << 16 | (u32)p[1] << 8 | p[2];
}

static inline u32 sroce_get_be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static inline u64 sroce_get_be64(const u8 *p)
{
	return (u64)sroce_get_be32(p) << 32 | sroce_get_be32(p + 4);
}

static inline void sroce_put_be16(u8 *p, u16 v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

static inline void sroce_put_be24(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 16);
	p[1] = (u8)(v >> 8);
	p[2] = (u8)v;
}

static inline void sroce_put_be32(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 24);
	p[1] = (u8)(v >> 16);
	p[2] = (u8)(v >> 8);
	p[3] = (u8)v;
}

static inline void sroce_put_be64(u8 *p, u64 v)
{
	sroce_put_be32(p, (u32)(v >> 32));
	sroce_put_be32(p + 4, (u32)v);
}

#endif /* SROCE_WIRE_TYPES_H */
