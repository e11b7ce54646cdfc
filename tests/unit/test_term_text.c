// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Terminal controls in a profiled program's strings: cleaned by
 * term_clean, and by the logger whatever the message's length. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "util/log.h"
#include "util/term_text.h"

static void test_clean(void)
{
	/* ESC (a CSI sequence), BEL, DEL, CR, the C1 CSI in UTF-8; newline,
	 * tab and other UTF-8 (é, U+00A0) kept. */
	char s[] = "a\x1b[2Jb\n\tc\x07\x7f\r\xc2\x9b"
		   "d\xc3\xa9\xc2\xa0";
	const char want[] = "a?[2Jb\n\tc?????d\xc3\xa9\xc2\xa0";

	term_clean(s, strlen(s));
	CHECK_STR_EQ(s, want);
	/* A C1 lead byte cut at the end of the buffer is left as it is (the
	 * caller cleans whole strings). */
	char t[] = "x\xc2";
	term_clean(t, strlen(t));
	CHECK_STR_EQ(t, "x\xc2");
}

/* What the logger wrote to stderr for one message of n bytes of text
 * with an escape sequence at its start and at its end. */
static char *logged(size_t n)
{
	char path[] = "/tmp/ep-termlog-XXXXXX", *msg = malloc(n + 1), *out = NULL;
	int fd = mkstemp(path), saved = dup(2);
	long len;
	FILE *f;

	CHECK(fd >= 0 && saved >= 0 && msg);
	if (fd < 0 || saved < 0 || !msg)
		return NULL;
	memset(msg, 'x', n);
	memcpy(msg, "\x1b]0;owned\x07", 10);
	memcpy(msg + n - 4, "\x1b[2J", 4);
	msg[n] = '\0';
	fflush(stderr);
	dup2(fd, 2);
	log_warn("thread %s", msg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	f = fdopen(fd, "r");
	if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
		out = calloc(1, (size_t)len + 1);
		if (out && fread(out, 1, (size_t)len, f) != (size_t)len) {
			free(out);
			out = NULL;
		}
	}
	if (f)
		fclose(f);
	unlink(path);
	free(msg);
	return out;
}

static void test_log(void)
{
	const size_t sizes[] = { 40, 5000 }; /* on the stack, and past its buffer */

	log_set_level(LOG_WARN);
	for (size_t i = 0; i < 2; i++) {
		char *out = logged(sizes[i]);

		CHECK(out != NULL);
		if (!out)
			continue;
		CHECK(strchr(out, '\x1b') == NULL);
		CHECK(strchr(out, '\x07') == NULL);
		CHECK(strncmp(out, "ebpf-prof: warning: thread ?]0;owned?x", 38) == 0);
		/* Whole: the prefix, the message, a newline. */
		CHECK_INT_EQ(strlen(out), strlen("ebpf-prof: warning: thread ") + sizes[i] + 1);
		free(out);
	}
}

int main(void)
{
	test_clean();
	test_log();
	return check_report("test_term_text");
}
