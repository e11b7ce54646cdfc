/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Loads one result directory's report.json for `ebpf-prof diff` into the
 * figures the comparison needs. The file is outside input (a baseline kept
 * by a CI job, a directory from another machine): it is read and checked
 * by report_read.h, the reader `ebpf-prof report` uses too, so both refuse
 * the same files with the same message; an absent field counts as absent.
 */
#ifndef EP_DIFF_LOAD_H
#define EP_DIFF_LOAD_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/report_read.h"
#include "util/hashmap.h"

/* A report.json beyond this is not one of ours (a long run with many
 * cycles is a few MB). */
#define DL_MAX_BYTES RR_MAX_BYTES
/* A recording keeps at most 20000 cycles and 2048 SQL statements; a file
 * with far more is not one of ours, and what is beyond these is ignored
 * so that a hostile file cannot make the comparison quadratic. */
#define DL_MAX_CYCLES 100000
#define DL_MAX_LIST   8192

/* Per-cycle figures compared as distributions. */
enum dl_cyc {
	DL_C_WALL,
	DL_C_ON_CPU,
	DL_C_INFERENCE,
	DL_C_SQL,
	DL_C_GC,
	DL_C_OFF_SLEEP,
	DL_C_OFF_UNINT,
	DL_C_OFF_PREEMPTED,
	DL_C_OFF_RUNQUEUE,
	DL_C_OFF_OTHER,
	DL_C_OTHER, /* unattributed */
	DL_C_TOKENS_PER_S,
	DL_C_PREFILL, /* cycles[].llm: prompt processing (ns) */
	DL_C_DECODE,  /* cycles[].llm: generation steps (ns) */
	DL_C_TTFT,    /* cycles[].llm: time to first token (ns) */
	DL_C_RSS_DELTA,
	DL_C_THROTTLED,
	DL_C_GPU_POWER,
	DL_C_GPU_ENERGY,
	DL_C_SAMPLES,
	DL_C__COUNT
};

/* A function: samples where it was the leaf (self) or anywhere on the
 * stack (total). key: kernel flag, name and module file name, so that the
 * same function matches across builds at other addresses or paths. */
struct dl_func {
	char *key, *name, *module;
	bool kernel;
	uint64_t self, total;
};

struct dl_probe {
	char *key; /* label and library file name */
	char *label, *library;
	uint64_t count;
	double total_ns, p50_ns, p99_ns; /* NAN: absent */
};

struct dl_stmt {
	char *text;
	uint64_t count, rows;
	double total_ns, p50_ns, p99_ns;
};

struct dl_run {
	char *dir;
	cJSON *root;
	char *program;	 /* file name of the command, or comm; "" unknown */
	char *command;	 /* full command line or NULL */
	char *args;	 /* the command line after its first word, or NULL */
	bool launched;	 /* ebpf-prof started the command itself */
	int exit_status; /* the launched command's exit status, -1 unknown */
	/* Path of the launched program's ELF file as the frames name it (the
	 * module whose file name is the command's), NULL when not found. */
	char *main_module;
	/* Functions of main_module are keyed as DL_MAIN_MODULE (dl_align_keys):
	 * both runs launched one program, whatever its path or name. */
	bool main_as_program;
	uint64_t samples;
	double period_ns, duration_ns;
	/* Cycles kept for distributions (not truncated), whole-run runs: 0. */
	size_t ncycles;
	size_t ncycles_all;
	double *cyc[DL_C__COUNT]; /* ncycles values each, NAN where absent */
	struct dl_func *funcs;
	size_t nfuncs;
	uint64_t func_samples; /* samples the function counts are out of */
	bool funcs_from_flame;
	struct hashmap func_map;  /* key -> index in funcs */
	bool has_modules;	  /* some function has a module */
	bool keys_without_module; /* matched by name only (dl_align_keys) */
	struct dl_probe *probes;
	size_t nprobes;
	struct dl_stmt *stmts;
	size_t nstmts;
	/* Whole-run figures, NAN when absent (several runs: their mean). */
	double tokens_per_s, peak_rss, throttled_share, gpu_energy_j, gpu_power_mw;
	double off_cpu_ns, on_cpu_ns;
	/* GNU build-id (hex) of main_module from report.json's modules, NULL
	 * when not known (an older report, no note, runs of one side that
	 * differ). */
	char *build_id;
	/* Several runs on one side (dl_load_side): this run stands for all of
	 * them (counts summed, cycles concatenated, whole-run figures their
	 * mean; dl_merge_roots) and runs[] holds each on its own, keyed alike
	 * (dl_align_keys). One run: nruns 1, runs NULL. */
	size_t nruns;
	struct dl_run *runs;
	/* Runs of one side that do not all launch the same command to
	 * completion, or differ in build-id: said as a warning. NULL: none. */
	char *side_note;
};

/* Reads DIR/report.json (report_read). On error returns -errno and writes
 * one line that names the file and the field into err. */
int dl_load(const char *dir, struct dl_run *out, char *err, size_t errlen);
/* Same from text in memory (tests; dir is only used in messages). */
int dl_load_text(const char *dir, const char *text, size_t len, struct dl_run *out, char *err,
		 size_t errlen);
void dl_free(struct dl_run *r);

/* Several result directories as one side of a comparison (k >= 1; k 1 is
 * dl_load). Runs of one side must share the sampling period and either all
 * have cycles or none (else -EINVAL with a line naming both files). */
int dl_load_side(const char *const *dirs, size_t k, struct dl_run *out, char *err, size_t errlen);
/* Same from texts in memory (tests, fuzzing). */
int dl_load_side_text(const char *const *dirs, const char *const *texts, const size_t *lens,
		      size_t k, struct dl_run *out, char *err, size_t errlen);
/* One report tree standing for k checked ones (diff_merge.c). */
int dl_merge_roots(cJSON *const *roots, const char *const *dirs, size_t k, cJSON **out, char *err,
		   size_t errlen);

/* The function with this key, or NULL. */
const struct dl_func *dl_find_func(const struct dl_run *r, const char *key);

/* When only one of the two runs knows the functions' modules (a
 * report.json written before flame frames had them), matches both by name
 * alone: drops the module from the keys and merges what then coincides.
 * Otherwise, when both runs launched a program whose file the frames
 * name, keys that file's functions as DL_MAIN_MODULE in both, so that a
 * rebuild in another folder or under another name matches.
 * Returns 0 or -ENOMEM. */
int dl_align_keys(struct dl_run *a, struct dl_run *b);

/* The module name functions of the launched program are matched under
 * when both runs launched one (not a file name: has no '/'-free clash). */
#define DL_MAIN_MODULE "<the program>"

/* The module a frame of this module is keyed under in r: NULL when keys
 * carry no module, DL_MAIN_MODULE for the program's own file. */
const char *dl_key_module(const struct dl_run *r, const char *module);

/* Frame index of r's flame section -> index in r->funcs (-1: none), for
 * the frames of the stacks under the keys in use. *out malloc'ed, *n the
 * frame count. Returns 0, -ENOMEM or -ENOENT (no flame stacks). */
int dl_frame_funcs(const struct dl_run *r, int64_t **out, size_t *n);

/* The matching key of a frame: "[unknown] /lib/x.so+0x1a2b" becomes
 * "[unknown] x.so" and the module its file name. malloc'ed. */
char *dl_func_key(const char *name, const char *module, bool kernel);

#endif
