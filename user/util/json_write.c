// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "util/json_write.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

size_t utf8_seq_len(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0];
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the 2nd byte */

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* UTF-16 surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* > U+10FFFF */
	} else {
		return 0;
	}
	if (avail < n)
		return 0;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

void json_write_strn(FILE *f, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	if (!str) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	while (i < len) {
		/* Copy the longest run that needs no escaping in one call. */
		size_t start = i;
		while (i < len && s[i] >= 0x20 && s[i] < 0x80 && s[i] != '"' && s[i] != '\\')
			i++;
		if (i > start)
			fwrite(s + start, 1, i - start, f);
		if (i >= len)
			break;
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			i++;
		} else if (c < 0x20) {
			switch (c) {
			case '\n':
				fputs("\\n", f);
				break;
			case '\r':
				fputs("\\r", f);
				break;
			case '\t':
				fputs("\\t", f);
				break;
			case '\b':
				fputs("\\b", f);
				break;
			case '\f':
				fputs("\\f", f);
				break;
			default:
				fprintf(f, "\\u%04x", c);
			}
			i++;
		} else {
			size_t n = utf8_seq_len(s + i, len - i);
			if (n) {
				fwrite(s + i, 1, n, f);
				i += n;
			} else {
				fputs(replacement, f);
				i++;
			}
		}
	}
	fputc('"', f);
}

void json_write_str(FILE *f, const char *s)
{
	json_write_strn(f, s, s ? strlen(s) : 0);
}

char *utf8_sanitize(const char *str)
{
	if (!str)
		return NULL;
	const unsigned char *s = (const unsigned char *)str;
	size_t len = strlen(str);
	/* Worst case every byte becomes 3 bytes. */
	if (len > (SIZE_MAX - 1) / 3)
		return NULL;
	char *out = malloc(len * 3 + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq_len(s + i, len - i);
		if (n) {
			memcpy(out + o, s + i, n);
			o += n;
			i += n;
		} else {
			memcpy(out + o, replacement, 3);
			o += 3;
			i++;
		}
	}
	out[o] = '\0';
	return out;
}
