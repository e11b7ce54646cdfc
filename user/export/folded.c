// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Folded stacks (formats.md §3) for flamegraph.pl, speedscope and inferno:
 * "comm;root;...;leaf count", one line per distinct text, sorted.
 * Aggregation is on the final text, not on stack ids: frames that differ
 * only by module, or by a ';' that escaping turned into ':', print the same
 * and must be summed into one line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_write.h"
#include "report/report.h"

struct folded_line {
	char *text;
	uint64_t count;
};

/* Appends name with the folded-format escaping to the memstream. */
static void put_name(FILE *m, const char *name)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t len = strlen(name);
	if (!len) {
		fputs("[unknown]", m);
		return;
	}
	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		if (c == ';') {
			fputc(':', m);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			/* newline/CR would split the record; other controls are noise */
			fputc(' ', m);
			i++;
		} else if (c < 0x80) {
			fputc(c, m);
			i++;
		} else {
			size_t n = utf8_seq_len(s + i, len - i);
			if (n) {
				fwrite(s + i, 1, n, m);
				i += n;
			} else {
				fputs("\xef\xbf\xbd", m);
				i++;
			}
		}
	}
}

static char *stack_text(const struct profile *p, const char *comm, const struct prof_stack *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return NULL;
	put_name(m, comm);
	for (uint32_t i = 0; i < st->depth; i++) {
		const struct prof_frame *f = &p->frames[st->frames[i]];
		fputc(';', m);
		put_name(m, f->name);
		if (f->kernel)
			fputs("_[k]", m);
	}
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int cmp_text(const void *a, const void *b)
{
	const struct folded_line *x = a, *y = b;
	return strcmp(x->text, y->text);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int export_folded(const struct profile *p, FILE *out)
{
	int err = -ENOMEM;
	size_t n = 0, cap = 0;
	struct folded_line *lines = NULL;
	char **final = NULL;
	size_t nfinal = 0;

	/* Per thread, sum runs by stack first so that the text of one
	 * (thread, stack) pair is built once, not once per run. */
	uint64_t *per_stack = calloc(p->nstacks ? p->nstacks : 1, sizeof(*per_stack));
	uint32_t *touched = malloc((p->nstacks ? p->nstacks : 1) * sizeof(*touched));
	if (!per_stack || !touched)
		goto out;
	for (size_t ti = 0; ti < p->nthreads; ti++) {
		const struct prof_thread *t = &p->threads[ti];
		size_t ntouched = 0;
		for (size_t r = 0; r < t->nruns; r++) {
			uint32_t s = t->runs[r].stack;
			if (!per_stack[s])
				touched[ntouched++] = s;
			per_stack[s] += t->runs[r].count;
		}
		for (size_t i = 0; i < ntouched; i++) {
			uint32_t s = touched[i];
			if (n == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				void *nl = realloc(lines, ncap * sizeof(*lines));
				if (!nl)
					goto out;
				lines = nl;
				cap = ncap;
			}
			lines[n].text = stack_text(p, t->comm, &p->stacks[s]);
			if (!lines[n].text)
				goto out;
			lines[n++].count = per_stack[s];
			per_stack[s] = 0;
		}
	}

	if (n)
		qsort(lines, n, sizeof(*lines), cmp_text);
	final = malloc((n ? n : 1) * sizeof(*final));
	if (!final)
		goto out;
	for (size_t i = 0; i < n;) {
		uint64_t c = lines[i].count;
		size_t j = i + 1;
		while (j < n && strcmp(lines[j].text, lines[i].text) == 0)
			c += lines[j++].count;
		if (asprintf(&final[nfinal], "%s %" PRIu64, lines[i].text, c) < 0)
			goto out;
		nfinal++;
		/* Unique stacks can make these texts the bulk of memory: do not
		 * hold two copies of every line at once. */
		for (; i < j; i++) {
			free(lines[i].text);
			lines[i].text = NULL;
		}
	}
	/* Sort whole lines so the output is ordered as `LC_ALL=C sort` would
	 * order it, even when a name ends in " <digits>". */
	if (nfinal)
		qsort(final, nfinal, sizeof(*final), cmp_str);
	for (size_t i = 0; i < nfinal; i++) {
		fputs(final[i], out);
		fputc('\n', out);
	}
	err = ferror(out) ? -EIO : 0;
out:
	for (size_t i = 0; i < n; i++)
		free(lines[i].text);
	free(lines);
	for (size_t i = 0; i < nfinal; i++)
		free(final[i]);
	free(final);
	free(per_stack);
	free(touched);
	return err;
}
