// SPDX-License-Identifier: GPL-2.0
/*
 * Modify-QP transition table (IBA vol 1, ch. 10.3 and 11.2.5.2).
 */
#include "sroce/wire/qp_state.h"

#define A(x)	SROCE_QP_ATTR_##x

struct sroce_qp_trans {
	bool valid;
	u32 req[SROCE_QPT_NUM];
	u32 opt[SROCE_QPT_NUM];
};

/* Attribute groups reused across transitions. */
#define ALT_MIG		(A(ALT_PATH) | A(PATH_MIG_STATE))
#define CONN_INIT	(A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS))
#define CONN_RTR_REQ	(A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN))
#define RESP_RD		(A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER))
#define REQ_RETRY	(A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | \
			 A(MAX_QP_RD_ATOMIC))
/* Optional on RTR->RTS, RTS->RTS and SQD->RTS for connected QPs. */
#define CONN_RTS_OPT	(A(CUR_STATE) | A(ACCESS_FLAGS) | ALT_MIG)
#define DGRAM_RTS_OPT	(A(CUR_STATE) | A(QKEY))

/* The same value for every QP type that has one. */
#define ALL_TYPES(v) {							\
	[SROCE_QPT_SMI] = (v), [SROCE_QPT_GSI] = (v),			\
	[SROCE_QPT_RC] = (v), [SROCE_QPT_UC] = (v),			\
	[SROCE_QPT_UD] = (v), [SROCE_QPT_RAW_PACKET] = (v),		\
	[SROCE_QPT_XRC_INI] = (v), [SROCE_QPT_XRC_TGT] = (v) }

static const struct sroce_qp_trans
sroce_qp_table[SROCE_QPS_NUM][SROCE_QPS_NUM] = {
	[SROCE_QPS_RESET] = {
		[SROCE_QPS_RESET] = { .valid = true },
		[SROCE_QPS_ERR] = { .valid = true },
		[SROCE_QPS_INIT] = {
			.valid = true,
			.req = {
				[SROCE_QPT_UD] = A(PKEY_INDEX) | A(PORT) |
						 A(QKEY),
				[SROCE_QPT_RAW_PACKET] = A(PORT),
				[SROCE_QPT_UC] = CONN_INIT,
				[SROCE_QPT_RC] = CONN_INIT,
				[SROCE_QPT_XRC_INI] = CONN_INIT,
				[SROCE_QPT_XRC_TGT] = CONN_INIT,
				[SROCE_QPT_SMI] = A(PKEY_INDEX) | A(QKEY),
				[SROCE_QPT_GSI] = A(PKEY_INDEX) | A(QKEY),
			},
		},
	},
	[SROCE_QPS_INIT] = {
		[SROCE_QPS_RESET] = { .valid = true },
		[SROCE_QPS_ERR] = { .valid = true },
		[SROCE_QPS_INIT] = {
			.valid = true,
			.opt = {
				[SROCE_QPT_UD] = A(PKEY_INDEX) | A(PORT) |
						 A(QKEY),
				[SROCE_QPT_UC] = CONN_INIT,
				[SROCE_QPT_RC] = CONN_INIT,
				[SROCE_QPT_XRC_INI] = CONN_INIT,
				[SROCE_QPT_XRC_TGT] = CONN_INIT,
				[SROCE_QPT_SMI] = A(PKEY_INDEX) | A(QKEY),
				[SROCE_QPT_GSI] = A(PKEY_INDEX) | A(QKEY),
			},
		},
		[SROCE_QPS_RTR] = {
			.valid = true,
			.req = {
				[SROCE_QPT_UC] = CONN_RTR_REQ,
				[SROCE_QPT_RC] = CONN_RTR_REQ | RESP_RD,
				[SROCE_QPT_XRC_INI] = CONN_RTR_REQ,
				[SROCE_QPT_XRC_TGT] = CONN_RTR_REQ | RESP_RD,
			},
			.opt = {
				[SROCE_QPT_UD] = A(PKEY_INDEX) | A(QKEY),
				[SROCE_QPT_UC] = A(ALT_PATH) |
						 A(ACCESS_FLAGS) |
						 A(PKEY_INDEX),
				[SROCE_QPT_RC] = A(ALT_PATH) |
						 A(ACCESS_FLAGS) |
						 A(PKEY_INDEX),
				[SROCE_QPT_XRC_INI] = A(ALT_PATH) |
						      A(ACCESS_FLAGS) |
						      A(PKEY_INDEX),
				[SROCE_QPT_XRC_TGT] = A(ALT_PATH) |
						      A(ACCESS_FLAGS) |
						      A(PKEY_INDEX),
				[SROCE_QPT_SMI] = A(PKEY_INDEX) | A(QKEY),
				[SROCE_QPT_GSI] = A(PKEY_INDEX) | A(QKEY),
			},
		},
	},
	[SROCE_QPS_RTR] = {
		[SROCE_QPS_RESET] = { .valid = true },
		[SROCE_QPS_ERR] = { .valid = true },
		[SROCE_QPS_RTS] = {
			.valid = true,
			.req = {
				[SROCE_QPT_UD] = A(SQ_PSN),
				[SROCE_QPT_UC] = A(SQ_PSN),
				[SROCE_QPT_RC] = REQ_RETRY | A(SQ_PSN),
				[SROCE_QPT_XRC_INI] = REQ_RETRY | A(SQ_PSN),
				/* target QPs never send requests */
				[SROCE_QPT_XRC_TGT] = A(TIMEOUT) | A(SQ_PSN),
				[SROCE_QPT_SMI] = A(SQ_PSN),
				[SROCE_QPT_GSI] = A(SQ_PSN),
			},
			.opt = {
				[SROCE_QPT_UD] = DGRAM_RTS_OPT,
				[SROCE_QPT_UC] = CONN_RTS_OPT,
				[SROCE_QPT_RC] = CONN_RTS_OPT | A(MIN_RNR_TIMER),
				[SROCE_QPT_XRC_INI] = CONN_RTS_OPT,
				[SROCE_QPT_XRC_TGT] = CONN_RTS_OPT |
						      A(MIN_RNR_TIMER),
				[SROCE_QPT_SMI] = DGRAM_RTS_OPT,
				[SROCE_QPT_GSI] = DGRAM_RTS_OPT,
				[SROCE_QPT_RAW_PACKET] = A(RATE_LIMIT),
			},
		},
	},
	[SROCE_QPS_RTS] = {
		[SROCE_QPS_RESET] = { .valid = true },
		[SROCE_QPS_ERR] = { .valid = true },
		[SROCE_QPS_RTS] = {
			.valid = true,
			.opt = {
				[SROCE_QPT_UD] = DGRAM_RTS_OPT,
				[SROCE_QPT_UC] = CONN_RTS_OPT,
				[SROCE_QPT_RC] = CONN_RTS_OPT | A(MIN_RNR_TIMER),
				[SROCE_QPT_XRC_INI] = CONN_RTS_OPT,
				[SROCE_QPT_XRC_TGT] = CONN_RTS_OPT |
						      A(MIN_RNR_TIMER),
				[SROCE_QPT_SMI] = DGRAM_RTS_OPT,
				[SROCE_QPT_GSI] = DGRAM_RTS_OPT,
				[SROCE_QPT_RAW_PACKET] = A(RATE_LIMIT),
			},
		},
		[SROCE_QPS_SQD] = {
			.valid = true,
			.opt = ALL_TYPES(A(EN_SQD_ASYNC_NOTIFY)),
		},
	},
	[SROCE_QPS_SQD] = {
		[SROCE_QPS_RESET] = { .valid = true },
		[SROCE_QPS_ERR] = { .valid = true },
		[SROCE_QPS_RTS] = {
			.valid = true,
			.opt = {
				[SROCE_QPT_UD] = DGRAM_RTS_OPT,
				[SROCE_QPT_UC] = CONN_RTS_OPT,
				[SROCE_QPT_RC] = CONN_RTS_OPT | A(MIN_RNR_TIMER),
				[SROCE_QPT_XRC_INI] = CONN_RTS_OPT,
				[SROCE_QPT_XRC_TGT] = CONN_RTS_OPT |
						      A(MIN_RNR_TIMER),
				[SROCE_QPT_SMI] = DGRAM_RTS_OPT,
				[SROCE_QPT_GSI] = DGRAM_RTS_OPT,
			},
		},
		[SROCE_QPS_SQD] = {
			.valid = true,
			.opt = {
				[SROCE_QPT_UD] = A(PKEY_INDEX) | A(QKEY),
				[SROCE_QPT_UC] = A(AV) | A(ACCESS_FLAGS) |
						 A(PKEY_INDEX) | ALT_MIG,
				[SROCE_QPT_RC] = A(PORT) | A(AV) | REQ_RETRY |
						 RESP_RD | A(ACCESS_FLAGS) |
						 A(PKEY_INDEX) | ALT_MIG,
				[SROCE_QPT_XRC_INI] = A(PORT) | A(AV) |
						      REQ_RETRY |
						      A(ACCESS_FLAGS) |
						      A(PKEY_INDEX) | ALT_MIG,
				[SROCE_QPT_XRC_TGT] = A(PORT) | A(AV) |
						      A(TIMEOUT) | RESP_RD |
						      A(ACCESS_FLAGS) |
						      A(PKEY_INDEX) | ALT_MIG,
				[SROCE_QPT_SMI] = A(PKEY_INDEX) | A(QKEY),
				[SROCE_QPT_GSI] = A(PKEY_INDEX) | A(QKEY),
			},
		},
	},
	[SROCE_QPS_SQE] = {
		[SROCE_QPS_RESET] = { .valid = true },
		[SROCE_QPS_ERR] = { .valid = true },
		/* only unreliable types can reach SQE */
		[SROCE_QPS_RTS] = {
			.valid = true,
			.opt = {
				[SROCE_QPT_UD] = DGRAM_RTS_OPT,
				[SROCE_QPT_UC] = A(CUR_STATE) |
						 A(ACCESS_FLAGS),
				[SROCE_QPT_SMI] = DGRAM_RTS_OPT,
				[SROCE_QPT_GSI] = DGRAM_RTS_OPT,
			},
		},
	},
	[SROCE_QPS_ERR] = {
		[SROCE_QPS_RESET] = { .valid = true },
		[SROCE_QPS_ERR] = { .valid = true },
	},
};

static bool sroce_qp_type_ok(int t)
{
	switch (t) {
	case SROCE_QPT_SMI:
	case SROCE_QPT_GSI:
	case SROCE_QPT_RC:
	case SROCE_QPT_UC:
	case SROCE_QPT_UD:
	case SROCE_QPT_RAW_IPV6:
	case SROCE_QPT_RAW_ETHERTYPE:
	case SROCE_QPT_RAW_PACKET:
	case SROCE_QPT_XRC_INI:
	case SROCE_QPT_XRC_TGT:
		return true;
	default:
		return false;
	}
}

int sroce_qp_modify_check(int cur, int next, int qp_type, u32 mask)
{
	const struct sroce_qp_trans *t;
	u32 req, opt;

	if (cur < 0 || cur >= SROCE_QPS_NUM || next < 0 ||
	    next >= SROCE_QPS_NUM || !sroce_qp_type_ok(qp_type))
		return -EINVAL;

	/* reliable QPs never enter SQE, so they cannot leave it either */
	if (cur == SROCE_QPS_SQE &&
	    (qp_type == SROCE_QPT_RC || qp_type == SROCE_QPT_XRC_INI ||
	     qp_type == SROCE_QPT_XRC_TGT) && next == SROCE_QPS_RTS)
		return -EINVAL;

	t = &sroce_qp_table[cur][next];
	if (!t->valid)
		return -EINVAL;

	req = t->req[qp_type];
	opt = t->opt[qp_type];
	if ((mask & req) != req)
		return -EINVAL;
	if (mask & ~(req | opt | SROCE_QP_ATTR_STATE))
		return -EINVAL;
	return 0;
}

const char *sroce_qp_state_name(int state)
{
	static const char *const names[SROCE_QPS_NUM] = {
		[SROCE_QPS_RESET] = "RESET",
		[SROCE_QPS_INIT] = "INIT",
		[SROCE_QPS_RTR] = "RTR",
		[SROCE_QPS_RTS] = "RTS",
		[SROCE_QPS_SQD] = "SQD",
		[SROCE_QPS_SQE] = "SQE",
		[SROCE_QPS_ERR] = "ERR",
	};

	if (state < 0 || state >= SROCE_QPS_NUM)
		return "?";
	return names[state];
}
