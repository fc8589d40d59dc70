// SPDX-License-Identifier: GPL-2.0
/* This module's copy of the shared C glue (see core/glue.h). */
#include "../glue.c"
/* The connection manager's own glue. */
#include "glue_cm.c"
