/* SPDX-License-Identifier: GPL-2.0 */
/*
 * QP state machine (IBA modify QP). Numeric values match the kernel's
 * enum ib_qp_state, enum ib_qp_type and enum ib_qp_attr_mask so callers
 * can pass the verbs values straight through.
 */
#ifndef SROCE_WIRE_QP_STATE_H
#define SROCE_WIRE_QP_STATE_H

#include "sroce/wire/types.h"

enum sroce_qp_state {
	SROCE_QPS_RESET	= 0,
	SROCE_QPS_INIT	= 1,
	SROCE_QPS_RTR	= 2,
	SROCE_QPS_RTS	= 3,
	SROCE_QPS_SQD	= 4,
	SROCE_QPS_SQE	= 5,
	SROCE_QPS_ERR	= 6,
	SROCE_QPS_NUM
};

enum sroce_qp_type {
	SROCE_QPT_SMI		= 0,
	SROCE_QPT_GSI		= 1,
	SROCE_QPT_RC		= 2,
	SROCE_QPT_UC		= 3,
	SROCE_QPT_UD		= 4,
	SROCE_QPT_RAW_IPV6	= 5,
	SROCE_QPT_RAW_ETHERTYPE	= 6,
	SROCE_QPT_RAW_PACKET	= 8,
	SROCE_QPT_XRC_INI	= 9,
	SROCE_QPT_XRC_TGT	= 10,
	SROCE_QPT_NUM
};

#define SROCE_QP_ATTR_STATE		(1u << 0)
#define SROCE_QP_ATTR_CUR_STATE		(1u << 1)
#define SROCE_QP_ATTR_EN_SQD_ASYNC_NOTIFY (1u << 2)
#define SROCE_QP_ATTR_ACCESS_FLAGS	(1u << 3)
#define SROCE_QP_ATTR_PKEY_INDEX	(1u << 4)
#define SROCE_QP_ATTR_PORT		(1u << 5)
#define SROCE_QP_ATTR_QKEY		(1u << 6)
#define SROCE_QP_ATTR_AV		(1u << 7)
#define SROCE_QP_ATTR_PATH_MTU		(1u << 8)
#define SROCE_QP_ATTR_TIMEOUT		(1u << 9)
#define SROCE_QP_ATTR_RETRY_CNT		(1u << 10)
#define SROCE_QP_ATTR_RNR_RETRY		(1u << 11)
#define SROCE_QP_ATTR_RQ_PSN		(1u << 12)
#define SROCE_QP_ATTR_MAX_QP_RD_ATOMIC	(1u << 13)
#define SROCE_QP_ATTR_ALT_PATH		(1u << 14)
#define SROCE_QP_ATTR_MIN_RNR_TIMER	(1u << 15)
#define SROCE_QP_ATTR_SQ_PSN		(1u << 16)
#define SROCE_QP_ATTR_MAX_DEST_RD_ATOMIC (1u << 17)
#define SROCE_QP_ATTR_PATH_MIG_STATE	(1u << 18)
#define SROCE_QP_ATTR_CAP		(1u << 19)
#define SROCE_QP_ATTR_DEST_QPN		(1u << 20)
#define SROCE_QP_ATTR_RATE_LIMIT	(1u << 25)

/*
 * Is the transition cur -> next legal for @qp_type with attribute @mask?
 * All required attributes must be present and nothing outside
 * required | optional | STATE. CUR_STATE is only accepted where the
 * table lists it. Returns 0 or -EINVAL (also for out-of-range inputs).
 */
int sroce_qp_modify_check(int cur, int next, int qp_type, u32 mask);

/* Human-readable state name, "?" if out of range. */
const char *sroce_qp_state_name(int state);

#endif /* SROCE_WIRE_QP_STATE_H */
