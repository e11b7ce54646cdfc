// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "symbolize/demangle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* demangle_cxa.cc */
char *ep_cxa_demangle(const char *mangled);

bool demangle_candidate(const char *name)
{
	return name && name[0] == '_' && name[1] == 'Z';
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static int hex_val(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

/* A Rust legacy symbol: "_ZN" ... "17h" + 16 hex digits + "E". */
static bool rust_legacy(const char *m, size_t len)
{
	if (len < 3 + 20 + 1 || strncmp(m, "_ZN", 3) != 0 || m[len - 1] != 'E' ||
	    strncmp(m + len - 20, "17h", 3) != 0)
		return false;
	for (size_t i = len - 17; i < len - 1; i++)
		if (!is_hex(m[i]))
			return false;
	return true;
}

/* Rust legacy escapes in the demangled path, in place: "$LT$" -> "<",
 * "$u20$" -> " ", ".." -> "::", a component's "_$" -> "$"; the trailing
 * "::h<hash>" dropped (as rustc-demangle's alternate form does). Unknown
 * escapes are kept as they are. */
static void rust_tidy(char *s)
{
	static const struct {
		const char *esc;
		char c;
	} map[] = { { "$SP$", '@' }, { "$BP$", '*' }, { "$RF$", '&' }, { "$LT$", '<' },
		    { "$GT$", '>' }, { "$LP$", '(' }, { "$RP$", ')' }, { "$C$", ',' } };
	size_t len = strlen(s), o = 0;

	if (len > 19 && strncmp(s + len - 19, "::h", 3) == 0)
		s[len - 19] = '\0';
	for (size_t i = 0; s[i];) {
		size_t k;

		if (s[i] == '_' && s[i + 1] == '$' && (i == 0 || s[i - 1] == ':')) {
			i++;
			continue;
		}
		if (s[i] == '.' && s[i + 1] == '.') {
			s[o++] = ':';
			s[o++] = ':';
			i += 2;
			continue;
		}
		if (s[i] == '$') {
			for (k = 0; k < sizeof(map) / sizeof(map[0]); k++) {
				size_t n = strlen(map[k].esc);

				if (strncmp(s + i, map[k].esc, n) == 0) {
					s[o++] = map[k].c;
					i += n;
					break;
				}
			}
			if (k < sizeof(map) / sizeof(map[0]))
				continue;
			if (s[i + 1] == 'u' && is_hex(s[i + 2]) && is_hex(s[i + 3]) &&
			    s[i + 4] == '$') {
				int v = hex_val(s[i + 2]) * 16 + hex_val(s[i + 3]);

				if (v >= 0x20 && v < 0x7f) {
					s[o++] = (char)v;
					i += 5;
					continue;
				}
			}
		}
		s[o++] = s[i++];
	}
	s[o] = '\0';
}

char *demangle(const char *name)
{
	const char *at;
	size_t len, vlen;
	char *base, *d, *out;

	if (!demangle_candidate(name))
		return NULL;
	len = strnlen(name, DEMANGLE_MAX_IN + 1);
	if (len > DEMANGLE_MAX_IN)
		return NULL;
	/* Mangled names never contain '@': what follows is a symbol version. */
	at = memchr(name, '@', len);
	vlen = at ? len - (size_t)(at - name) : 0;
	base = strndup(name, len - vlen);
	if (!base)
		return NULL;
	d = ep_cxa_demangle(base);
	if (d && rust_legacy(base, len - vlen))
		rust_tidy(d);
	free(base);
	if (!d || !vlen)
		return d;
	out = malloc(strlen(d) + vlen + 1);
	if (out) {
		strcpy(out, d);
		memcpy(out + strlen(d), at, vlen);
		out[strlen(d) + vlen] = '\0';
	}
	free(d);
	return out;
}

/* '<' or '>' at s[i] that belongs to an operator name (operator<,
 * operator<<=, operator->, operator<=>), not to a template argument list. */
static bool operator_char(const char *s, size_t i)
{
	size_t k = i;

	while (k > 0 && (s[k - 1] == '<' || s[k - 1] == '>' || s[k - 1] == '-' || s[k - 1] == '='))
		k--;
	return k >= 8 && strncmp(s + k - 8, "operator", 8) == 0;
}

/* Collapses the longest outermost "<...>" of s (in place) to "<...>".
 * Returns false if there is none left to collapse. */
static bool collapse_one(char *s)
{
	size_t best_open = 0, best_len = 0, open = 0, depth = 0;

	for (size_t i = 0; s[i]; i++) {
		if ((s[i] != '<' && s[i] != '>') || operator_char(s, i))
			continue;
		if (s[i] == '<') {
			if (depth++ == 0)
				open = i;
		} else if (depth > 0 && --depth == 0) {
			size_t inner = i - open - 1;

			if (inner > best_len &&
			    !(inner == 3 && strncmp(s + open + 1, "...", 3) == 0)) {
				best_open = open;
				best_len = inner;
			}
		}
	}
	if (best_len <= 3)
		return false;
	memcpy(s + best_open + 1, "...", 3);
	memmove(s + best_open + 4, s + best_open + 1 + best_len,
		strlen(s + best_open + 1 + best_len) + 1);
	return true;
}

const char *demangle_shorten(const char *name, size_t max_len, char *buf, size_t cap)
{
	bool cut;
	size_t len;

	if (!cap)
		return buf;
	if (max_len >= cap)
		max_len = cap - 1;
	len = strlen(name);
	if (len <= max_len) {
		memcpy(buf, name, len + 1);
		return buf;
	}
	/* Work on as much of the name as the buffer holds; a name cut here
	 * ends in "..." whatever collapsing gains. */
	cut = len >= cap;
	if (cut)
		len = cap - 1;
	memcpy(buf, name, len);
	buf[len] = '\0';
	while (strlen(buf) > max_len && collapse_one(buf))
		;
	len = strlen(buf);
	if (cut && len + 3 <= max_len) {
		memcpy(buf + len, "...", 4);
	} else if (len > max_len || cut) {
		if (max_len >= 3)
			memcpy(buf + max_len - 3, "...", 3);
		buf[max_len] = '\0';
	}
	return buf;
}
