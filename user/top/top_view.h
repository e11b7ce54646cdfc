/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The live view's data and drawing, without a terminal: a decaying window
 * over the growing CPU profile (like perf top), and a renderer that turns a
 * model of the screen into rows of plain text. top_module.c puts the text on
 * the terminal (or prints it when there is none); the unit tests compare it.
 */
#ifndef EBPF_PROF_TOP_VIEW_H
#define EBPF_PROF_TOP_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "top/top_live.h"

enum top_pane { TOP_PANE_FUNCS, TOP_PANE_CYCLES, TOP_PANE_THREADS };
enum top_sort { TOP_SORT_SELF, TOP_SORT_TOTAL };

/* Samples per stack and per thread, each update keeping `decay` of the old
 * weight and adding what arrived since: recent seconds dominate. */
struct top_window {
	double decay;
	double *stack_w;
	uint64_t *stack_seen;
	size_t nstacks;
	double *thread_w;
	uint64_t *thread_seen;
	size_t nthreads;
	double total;	     /* decayed samples, all stacks */
	uint64_t last_delta; /* samples added by the last update */
	/* scratch for top_window_funcs */
	double *self, *tot;
	uint32_t *stamp;
	size_t nframes;
	uint32_t gen;
};

struct top_func_row {
	uint32_t frame;
	double self, total; /* decayed samples */
};

int top_window_init(struct top_window *w, double decay);
void top_window_free(struct top_window *w);
/* Folds in what p gained since the last update. Returns 0 or -ENOMEM. */
int top_window_update(struct top_window *w, const struct profile *p);
/* Per-function weights, sorted; with kernel false, kernel frames are left
 * out and their time goes to the innermost user frame (as self). *rows is
 * malloc'ed. Returns 0 or -ENOMEM. */
int top_window_funcs(struct top_window *w, const struct profile *p, bool kernel, enum top_sort sort,
		     struct top_func_row **rows, size_t *n);
/* The heaviest stack in the window that contains frame; -1 when none. */
int64_t top_window_hot_stack(const struct top_window *w, const struct profile *p, uint32_t frame);

/* What the renderer draws. Strings are borrowed. */
struct top_view_func {
	const char *name;
	const char *module; /* NULL unknown */
	double self_pct, total_pct;
	bool kernel;
};

struct top_view_thread {
	uint32_t pid, tid;
	const char *comm;
	double pct;
};

struct top_model {
	const char *target; /* "pid 1234 (comm), 3 threads" */
	double elapsed_s;
	double samples_per_s;
	int64_t lost;			 /* -1 unknown */
	const struct live_metrics *live; /* NULL: nothing beyond the profile */
	enum top_pane pane;
	enum top_sort sort;
	bool show_kernel, paused, help;
	const struct top_view_func *funcs;
	size_t nfuncs;
	const struct top_view_thread *threads;
	size_t nthreads;
	size_t selected;
	bool expanded;
	const char *const *stack; /* selected function's stack, leaf first */
	size_t nstack;
	const char *alert;  /* alert line, NULL none */
	const char *notice; /* one-off status text, NULL none */
};

/* rows lines of at most cols characters each (no padding). */
struct top_frame {
	int rows, cols;
	char *text;  /* rows * (cols + 1) */
	int sel_row; /* row of the selected line, -1 none */
};

int top_frame_init(struct top_frame *f, int rows, int cols);
void top_frame_free(struct top_frame *f);
const char *top_frame_line(const struct top_frame *f, int row);
/* Draws m into f (which keeps its size). */
void top_render(const struct top_model *m, struct top_frame *f);
/* "N cycles  median  p95  slowest #K" over every cycle so far, then the
 * last nlast wall times (0: none); "" before the first cycle. */
void top_cycle_summary(const struct live_metrics *l, char *buf, size_t len, size_t nlast);
/* Whether the cycle pane has anything to show. */
bool top_has_cycles(const struct top_model *m);

#endif
