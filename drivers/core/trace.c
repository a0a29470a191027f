// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The one place the tracepoints of include/sroce/trace.h are defined. */
#define CREATE_TRACE_POINTS
#include "sroce/trace.h"
