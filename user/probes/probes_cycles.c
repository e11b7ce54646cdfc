// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Probe spans as cycle facts: which part of a cycle a call is (inference,
 * SQL, other) and the statement it ran. Calls inside another probed call
 * of the same family are left out: their time is already in the outer one
 * (sqlite3_exec runs its own prepare/step; llama_decode runs the ggml graph
 * computes), and counting both would double the call counts.
 */
#include "cycles/cycle_sink.h"
#include "probes/probes.h"

bool probes_cycle_span(const struct probe_stats *st, const void *data, size_t size,
		       struct cyc_span *out)
{
	const struct ep_span *sp = data;
	const struct probe_info *pi;
	const struct sql_stmt_stat *q;
	struct cyc_span c = { 0 };
	int32_t sql;

	if (size < sizeof(*sp))
		return false;
	pi = probe_stats_info(st, sp->probe_id);
	/* Inside a call of its class on its thread (a ggml compute inside
	 * llama_decode, exec's own steps, recursion): in the outer one's
	 * time already. A call inside another class's call (llama_decode
	 * inside a --probe'd step) counts. */
	if (!pi || !pi->def ||
	    (sp->flags & (EP_SPAN_F_NESTED_SAME | EP_SPAN_F_NESTED_SQL | EP_SPAN_F_NESTED_CLASS)))
		return false;
	c.start_ns = sp->hdr.ts_ns;
	c.end_ns = sp->hdr.ts_ns + sp->dur_ns;
	c.tid = sp->hdr.tid;
	c.name = pi->def->label ? pi->def->label : pi->def->symbol;
	switch (pi->def->group) {
	case PG_LLAMA:
		c.kind = CYC_SPAN_INFERENCE;
		c.tokens = pi->def->flags & PROBE_F_TOKENS ? 1 : 0;
		break;
	case PG_SQLITE:
		c.kind = CYC_SPAN_SQL;
		sql = probe_stats_last_sql(st);
		q = sql >= 0 ? probe_stats_sql(st, (size_t)sql) : NULL;
		c.detail = q ? q->text : NULL;
		break;
	default:
		c.kind = pi->def->kind >= EP_PK_SQL_PREPARE_V2 && pi->def->kind <= EP_PK_SQL_STMT
				 ? CYC_SPAN_SQL
				 : CYC_SPAN_OTHER;
		break;
	}
	*out = c;
	return true;
}

void probes_cycle_fact(const struct probe_stats *st, const void *data, size_t size,
		       struct cycle_sink *sink)
{
	struct cyc_span c;

	if (sink && probes_cycle_span(st, data, size, &c))
		cycle_sink_span(sink, &c);
}
