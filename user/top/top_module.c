// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The live view and alerts as a recorder module (docs/top.md). Everything
 * runs on the recorder thread from poll: every --interval the decaying
 * window takes in the new samples, the alerts are evaluated and the screen
 * (or, without a terminal, a plain-text snapshot) is redrawn. Keys are read
 * non-blocking on every poll. q sets the recorder's stop flag, so the run
 * ends through the same path as Ctrl-C and writes all its outputs.
 */
#include "util/clock.h"
#include "top/top_module.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "top/alerts.h"
#include "util/log.h"
#include "overload/priority.h"
#include "profile/profile.h"
#include "top/top_live.h"
#include "top/top_view.h"

/* Weight a window keeps per refresh: half-life of about 2.4 refreshes, so a
 * function that stops running fades within a few seconds, as in perf top. */
#define TOP_DECAY 0.75
/* --alert-exec runs at most one command per this period; the rest are
 * counted as skipped. */
#define ALERT_EXEC_MIN_NS (5 * 1000000000ull)
#define MAX_CHILDREN	  8
#define MAX_STACK_LINES	  128

struct top_mod {
	const struct rec_ctx *ctx;
	bool show; /* --top */
	bool tui;  /* ncurses screen up */
	SCREEN *scr;
	struct top_window w;
	struct alert_set alerts;
	uint64_t interval_ns, next_ns, start_ns, last_ns;
	double rate;
	enum top_pane pane;
	enum top_sort sort;
	bool kernel, paused, help, expanded;
	size_t selected;
	struct top_func_row *rows;
	size_t nrows;
	char alert_line[256];
	char notice[256];
	uint64_t last_exec_ns, exec_skipped, execs;
	pid_t children[MAX_CHILDREN];
	struct top_frame frame;
	/* Own cost: thread CPU time spent refreshing (update, alerts, draw). */
	uint64_t cost_ns, nrefresh;
};

/* The terminal as found, for the crash handler: a signal handler has no
 * other way to reach it. Written once before the screen goes up. */
static struct termios saved_tio;
static volatile sig_atomic_t tio_saved;

static void crash_restore(int sig)
{
	static const char seq[] = "\033[?1049l\033[?25h\r\n";

	if (tio_saved)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	if (write(STDOUT_FILENO, seq, sizeof(seq) - 1) < 0) {
		/* nothing more to do in a dying process */
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void install_crash_restore(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	struct sigaction sa = { .sa_handler = crash_restore, .sa_flags = SA_RESETHAND };

	if (tcgetattr(STDIN_FILENO, &saved_tio) == 0)
		tio_saved = 1;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

static void screen_down(struct top_mod *m)
{
	if (!m->tui)
		return;
	endwin();
	delscreen(m->scr);
	m->scr = NULL;
	m->tui = false;
}

static int top_open(void **state, const struct rec_ctx *ctx)
{
	const struct cli_opts *o = ctx->opts;
	struct top_mod *m;
	char why[192];
	int err;

	if (!o->top && !o->nalerts) {
		log_info("live view: off (no --top, no --alert)");
		return -ENODEV;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->ctx = ctx;
	m->show = o->top;
	m->kernel = true;
	m->interval_ns = (uint64_t)((o->interval_s > 0 ? o->interval_s : 1.0) * 1e9);
	err = top_window_init(&m->w, TOP_DECAY);
	if (!err)
		err = alert_set_init(&m->alerts, o->alerts, (size_t)o->nalerts, why, sizeof(why));
	if (err) {
		log_error("--alert %s", why);
		top_window_free(&m->w);
		free(m);
		return err;
	}
	*state = m;
	return 0;
}

static int top_attach(void *state)
{
	struct top_mod *m = state;

	m->start_ns = m->last_ns = mono_ns();
	m->next_ns = m->start_ns + m->interval_ns;
	if (m->show && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO)) {
		install_crash_restore();
		m->scr = newterm(NULL, stdout, stdin);
		if (!m->scr) {
			log_warn("cannot open the terminal for the live view (TERM=%s); "
				 "printing snapshots instead",
				 getenv("TERM") ? getenv("TERM") : "");
			return 0;
		}
		set_term(m->scr);
		m->tui = true;
		cbreak(); /* Ctrl-C stays a signal: the recorder's normal stop */
		noecho();
		nonl();
		keypad(stdscr, TRUE);
		nodelay(stdscr, TRUE);
		curs_set(0);
	}
	return 0;
}

static double disk_free_pct(const char *dir)
{
	struct statvfs st;

	if (!dir || statvfs(dir, &st) || !st.f_blocks)
		return NAN;
	return 100.0 * (double)st.f_bavail / (double)st.f_blocks;
}

static void reap_children(struct top_mod *m)
{
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (m->children[i] > 0 && waitpid(m->children[i], NULL, WNOHANG) == m->children[i])
			m->children[i] = 0;
}

static void run_alert_exec(struct top_mod *m, uint64_t now, const struct alert_rule *r,
			   const char *msg, double value)
{
	const struct run_info *ri = m->ctx->ri;
	int slot = -1;
	pid_t pid;

	reap_children(m);
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (m->children[i] <= 0)
			slot = i;
	if (slot < 0 || (m->execs && now - m->last_exec_ns < ALERT_EXEC_MIN_NS)) {
		m->exec_skipped++;
		return;
	}
	pid = fork();
	if (pid < 0) {
		log_warn("--alert-exec: cannot fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		sigset_t none;
		char v[64], p[16];

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		collector_priority_child(m->ctx->child_nice);
		if (m->tui) {
			/* Its output would tear the screen. */
			int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

			if (fd >= 0) {
				dup2(fd, STDOUT_FILENO);
				dup2(fd, STDERR_FILENO);
			}
		}
		snprintf(v, sizeof(v), "%g", value);
		snprintf(p, sizeof(p), "%u", ri && ri->ntargets ? ri->targets[0].pid : 0);
		setenv("EP_ALERT", r->text, 1);
		setenv("EP_ALERT_MESSAGE", msg, 1);
		setenv("EP_ALERT_VALUE", v, 1);
		setenv("EP_ALERT_PID", p, 1);
		if (ri && ri->output_dir)
			setenv("EP_ALERT_OUTPUT_DIR", ri->output_dir, 1);
		execl("/bin/sh", "sh", "-c", m->ctx->opts->alert_exec, (char *)NULL);
		_exit(127);
	}
	m->children[slot] = pid;
	m->last_exec_ns = now;
	m->execs++;
}

static void step_alerts(struct top_mod *m, uint64_t now)
{
	struct alert_fire fired[16];
	struct alert_env env = { .disk_free_pct = NAN };
	size_t n;

	if (!m->alerts.nrules)
		return;
	for (size_t i = 0; i < m->alerts.nrules; i++)
		if (m->alerts.rules[i].metric == ALERT_DISK)
			env.disk_free_pct =
				disk_free_pct(m->ctx->ri ? m->ctx->ri->output_dir : NULL);
	n = alert_set_step(&m->alerts, now, m->ctx->live, &env, fired, 16);
	for (size_t i = 0; i < n; i++) {
		const struct alert_rule *r = &m->alerts.rules[fired[i].rule];
		char msg[160];

		if (fired[i].unavailable) {
			snprintf(msg, sizeof(msg), "%s: no data for this metric in this run",
				 r->text);
			if (m->tui)
				snprintf(m->notice, sizeof(m->notice), "alert %s", msg);
			else
				log_warn("alert %s", msg);
			continue;
		}
		alert_describe(r, fired[i].value, msg, sizeof(msg));
		snprintf(m->alert_line, sizeof(m->alert_line), "[%.0fs] %s",
			 (double)(now - m->start_ns) / 1e9, msg);
		if (!m->tui)
			fprintf(stderr, "ebpf-prof: ALERT %s (%s)\n", msg, r->text);
		if (m->ctx->opts->alert_exec)
			run_alert_exec(m, now, r, msg, fired[i].value);
	}
}

static int refresh_rows(struct top_mod *m)
{
	free(m->rows);
	m->rows = NULL;
	m->nrows = 0;
	return top_window_funcs(&m->w, m->ctx->prof, m->kernel, m->sort, &m->rows, &m->nrows);
}

static int cmp_thread(const void *a, const void *b)
{
	const struct top_view_thread *x = a, *y = b;

	return x->pct < y->pct ? 1 : x->pct > y->pct ? -1 : (x->tid > y->tid) - (x->tid < y->tid);
}

/* Builds the model from the window and draws it into m->frame. */
static int draw(struct top_mod *m, int rows, int cols, uint64_t now)
{
	const struct profile *p = m->ctx->prof;
	const struct run_info *ri = m->ctx->ri;
	struct top_view_func *funcs = NULL;
	struct top_view_thread *thr = NULL;
	const char *stack[MAX_STACK_LINES];
	struct top_model mo = { 0 };
	char target[128];
	double tot = m->w.total > 0 ? m->w.total : 1;
	size_t nthr = 0;
	int err = 0;

	if (m->frame.rows != rows || m->frame.cols != cols) {
		top_frame_free(&m->frame);
		err = top_frame_init(&m->frame, rows, cols);
		if (err)
			return err;
	}
	if (ri && ri->ntargets)
		snprintf(target, sizeof(target), "pid %u (%s)%s, %zu threads", ri->targets[0].pid,
			 ri->targets[0].comm, ri->ntargets > 1 ? " +more" : "", p->nthreads);
	else
		snprintf(target, sizeof(target), "-");
	if (m->nrows) {
		funcs = calloc(m->nrows, sizeof(*funcs));
		if (!funcs)
			return -ENOMEM;
		for (size_t i = 0; i < m->nrows; i++) {
			const struct prof_frame *fr = &p->frames[m->rows[i].frame];

			funcs[i] = (struct top_view_func){ fr->name, fr->module,
							   100 * m->rows[i].self / tot,
							   100 * m->rows[i].total / tot,
							   fr->kernel };
		}
	}
	if (m->pane == TOP_PANE_THREADS && m->w.nthreads) {
		thr = calloc(m->w.nthreads, sizeof(*thr));
		if (!thr) {
			free(funcs);
			return -ENOMEM;
		}
		/* CPU use of a core, as the header's "cpu": the thread's share of
		 * the samples times the targets' CPU use (a share alone put a
		 * lone thread at 100% under a header of 80%). */
		double scale = m->ctx->live && !isnan(m->ctx->live->proc_cpu_pct)
				       ? m->ctx->live->proc_cpu_pct / 100
				       : 1;

		for (size_t i = 0; i < m->w.nthreads && i < p->nthreads; i++)
			if (m->w.thread_w[i] > 0)
				thr[nthr++] = (struct top_view_thread){
					p->threads[i].pid, p->threads[i].tid, p->threads[i].comm,
					100 * m->w.thread_w[i] / tot * scale
				};
		qsort(thr, nthr, sizeof(*thr), cmp_thread);
	}
	if (m->selected >= m->nrows)
		m->selected = m->nrows ? m->nrows - 1 : 0;
	mo.target = target;
	mo.elapsed_s = (double)(now - m->start_ns) / 1e9;
	mo.samples_per_s = m->rate;
	mo.lost = live_drops_total(m->ctx->live);
	mo.live = m->ctx->live;
	mo.pane = m->pane;
	mo.sort = m->sort;
	mo.show_kernel = m->kernel;
	mo.paused = m->paused;
	mo.help = m->help;
	mo.funcs = funcs;
	mo.nfuncs = m->nrows;
	mo.threads = thr;
	mo.nthreads = nthr;
	mo.selected = m->selected;
	mo.expanded = m->expanded;
	if (m->expanded && m->nrows) {
		int64_t s = top_window_hot_stack(&m->w, p, m->rows[m->selected].frame);

		if (s >= 0) {
			const struct prof_stack *st = &p->stacks[s];
			uint32_t depth = m->kernel || st->nkernel > st->depth
						 ? st->depth
						 : st->depth - st->nkernel;

			for (uint32_t d = depth; d-- > 0 && mo.nstack < MAX_STACK_LINES;)
				stack[mo.nstack++] = p->frames[st->frames[d]].name;
		}
		mo.stack = stack;
	}
	mo.alert = m->alert_line[0] ? m->alert_line : NULL;
	mo.notice = m->notice[0] ? m->notice : NULL;
	top_render(&mo, &m->frame);
	free(funcs);
	free(thr);
	return 0;
}

static void paint(struct top_mod *m, uint64_t now)
{
	int rows, cols;

	getmaxyx(stdscr, rows, cols);
	if (draw(m, rows, cols, now))
		return;
	erase();
	for (int r = 0; r < rows; r++) {
		if (r == m->frame.sel_row)
			attron(A_REVERSE);
		mvaddnstr(r, 0, top_frame_line(&m->frame, r), cols);
		if (r == m->frame.sel_row)
			attroff(A_REVERSE);
	}
	refresh();
}

static void snapshot(struct top_mod *m, uint64_t now)
{
	/* Fixed size: a log of snapshots reads the same whatever terminal
	 * the pipe ends in. */
	if (draw(m, 30, 120, now))
		return;
	printf("----\n");
	for (int r = 0; r < m->frame.rows; r++)
		if (top_frame_line(&m->frame, r)[0])
			printf("%s\n", top_frame_line(&m->frame, r));
	if (m->ctx->live) {
		char line[512];

		/* The functions pane is what a snapshot shows; cycles get
		 * their figures on one line. */
		top_cycle_summary(m->ctx->live, line, sizeof(line), 8);
		if (line[0])
			printf("%s\n", line);
	}
	fflush(stdout);
}

/* Returns true when the screen needs a redraw. */
static bool handle_key(struct top_mod *m, int ch)
{
	m->notice[0] = '\0';
	switch (ch) {
	case 'q':
	case 'Q':
	case 3: /* Ctrl-C when the terminal does not send it as a signal */
		*m->ctx->stop_requested = true;
		return false;
	case 'p':
		m->paused = !m->paused;
		break;
	case 'k':
		m->kernel = !m->kernel;
		refresh_rows(m);
		break;
	case 's':
		m->sort = m->sort == TOP_SORT_SELF ? TOP_SORT_TOTAL : TOP_SORT_SELF;
		refresh_rows(m);
		break;
	case 'j':
	case KEY_DOWN:
		if (m->selected + 1 < m->nrows)
			m->selected++;
		break;
	case KEY_UP:
		if (m->selected)
			m->selected--;
		break;
	case KEY_NPAGE:
		m->selected =
			m->nrows ? (m->selected + 10 < m->nrows ? m->selected + 10 : m->nrows - 1)
				 : 0;
		break;
	case KEY_PPAGE:
		m->selected = m->selected > 10 ? m->selected - 10 : 0;
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		m->expanded = !m->expanded;
		break;
	case 'f':
		m->pane = TOP_PANE_FUNCS;
		break;
	case 't':
		m->pane = TOP_PANE_THREADS;
		break;
	case 'c':
		if (m->ctx->live && m->ctx->live->ncycles)
			m->pane = TOP_PANE_CYCLES;
		else
			snprintf(m->notice, sizeof(m->notice),
				 "no cycle data in this run (docs/top.md); press ? for keys");
		break;
	case '?':
	case 'h':
		m->help = !m->help;
		break;
	case KEY_RESIZE:
		break;
	default:
		return false;
	}
	return true;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int top_poll(void *state, uint64_t now)
{
	struct top_mod *m = state;
	struct live_metrics *l = m->ctx->live;
	const struct profile *p = m->ctx->prof;
	bool dirty = false;
	int ch;

	if (m->tui)
		while ((ch = getch()) != ERR)
			dirty |= handle_key(m, ch);
	if (now >= m->next_ns) {
		uint64_t d = 0, t0 = thread_cpu_ns();

		if (l && p) {
			for (int i = 0; i < PROF_DROP__COUNT; i++)
				d += p->drops[i];
			l->drops[LIVE_SRC_SAMPLER] = (int64_t)d;
		}
		if (!m->paused && p) {
			if (top_window_update(&m->w, p) == 0) {
				m->rate = (double)m->w.last_delta * 1e9 /
					  (double)(now > m->last_ns ? now - m->last_ns : 1);
				/* Sampled CPU use of all targets: samples/s over the
				 * per-CPU sampling frequency. */
				if (l && p->freq_hz)
					l->proc_cpu_pct = 100.0 * m->rate / p->freq_hz;
				refresh_rows(m);
			}
			m->last_ns = now;
		}
		if (l)
			step_alerts(m, now);
		reap_children(m);
		m->next_ns = now + m->interval_ns;
		if (m->show && !m->tui)
			snapshot(m, now);
		/* Paused, the screen stays as it is until a key. */
		if (m->tui && !m->paused)
			paint(m, now);
		m->cost_ns += thread_cpu_ns() - t0;
		m->nrefresh++;
		return 0;
	}
	if (dirty && m->tui)
		paint(m, now);
	return 0;
}

static void top_stop(void *state)
{
	struct top_mod *m = state;

	/* A last judgement: cycles that closed after the last refresh (the
	 * cycles module hands over the last ones in its stop, just before
	 * this one) would otherwise never be seen by a cycle> alert. */
	step_alerts(m, mono_ns());
	/* The summary goes to the normal screen. */
	screen_down(m);
	reap_children(m);
	if (m->nrefresh)
		log_info(
			"live view: %llu refreshes, %.3f ms CPU each, %.4f%% of a core at a %.2f s "
			"interval",
			(unsigned long long)m->nrefresh,
			(double)m->cost_ns / 1e6 / (double)m->nrefresh,
			100.0 * (double)m->cost_ns / (double)m->nrefresh / (double)m->interval_ns,
			(double)m->interval_ns / 1e9);
}

static int top_report(void *state, cJSON *root)
{
	struct top_mod *m = state;
	const struct run_info *ri = m->ctx->ri;
	cJSON *a, *rules, *ev;

	if (!m->alerts.nrules)
		return 0;
	a = cJSON_AddObjectToObject(root, "alerts");
	rules = a ? cJSON_AddArrayToObject(a, "rules") : NULL;
	ev = a ? cJSON_AddArrayToObject(a, "events") : NULL;
	if (!ev)
		return -ENOMEM;
	for (size_t i = 0; i < m->alerts.nrules; i++) {
		cJSON *r = cJSON_CreateObject();

		if (!r)
			return -ENOMEM;
		cJSON_AddItemToArray(rules, r);
		cJSON_AddStringToObject(r, "expr", m->alerts.rules[i].text);
		cJSON_AddBoolToObject(r, "evaluated", m->alerts.evaluated[i]);
	}
	for (size_t i = 0; i < m->alerts.nevents; i++) {
		const struct alert_event *e = &m->alerts.events[i];
		const struct alert_rule *r = &m->alerts.rules[e->rule];
		cJSON *o = cJSON_CreateObject();
		char msg[160];

		if (!o)
			return -ENOMEM;
		cJSON_AddItemToArray(ev, o);
		cJSON_AddNumberToObject(o, "ts_ns", (double)e->ts_ns);
		cJSON_AddNumberToObject(o, "t_s",
					ri ? (double)(e->ts_ns - ri->start_mono_ns) / 1e9 : 0);
		cJSON_AddStringToObject(o, "expr", r->text);
		if (isfinite(e->value))
			cJSON_AddNumberToObject(o, "value", e->value);
		alert_describe(r, e->value, msg, sizeof(msg));
		cJSON_AddStringToObject(o, "message", msg);
	}
	cJSON_AddNumberToObject(a, "dropped", (double)m->alerts.dropped);
	cJSON_AddNumberToObject(a, "exec_runs", (double)m->execs);
	cJSON_AddNumberToObject(a, "exec_skipped", (double)m->exec_skipped);
	return 0;
}

static void top_summary(void *state, FILE *out)
{
	struct top_mod *m = state;

	if (m->alerts.nrules)
		fprintf(out, "alerts: %zu fired (%zu rules)%s\n", m->alerts.nevents,
			m->alerts.nrules, m->alerts.dropped ? ", some not kept" : "");
}

static void top_close(void *state)
{
	struct top_mod *m = state;

	if (!m)
		return;
	screen_down(m);
	for (int i = 0; i < MAX_CHILDREN; i++)
		if (m->children[i] > 0)
			waitpid(m->children[i], NULL, WNOHANG);
	alert_set_free(&m->alerts);
	top_window_free(&m->w);
	top_frame_free(&m->frame);
	free(m->rows);
	free(m);
}

const struct rec_module top_rec_module = {
	.name = "top",
	.open = top_open,
	.attach = top_attach,
	.poll = top_poll,
	.stop = top_stop,
	.report_json = top_report,
	.summary = top_summary,
	.close = top_close,
};
