// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The streaming JSON string writer must turn any byte string into valid
 * JSON: expected outputs below follow RFC 8259 §7 and the UTF-8 rules of
 * RFC 3629 (no overlongs, no surrogates, nothing above U+10FFFF). */
#include <cjson/cJSON.h>
#include <string.h>

#include "check.h"
#include "util/json_write.h"

#define FFFD "\xef\xbf\xbd"

static char *esc(const char *s, size_t len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);
	json_write_strn(m, s, len);
	fclose(m);
	return buf;
}

static void expect(const char *in, size_t len, const char *want)
{
	char *got = esc(in, len);
	CHECK_STR_EQ(got, want);
	free(got);
}

#define EXPECT(lit, want) expect(lit, sizeof(lit) - 1, want)

int main(void)
{
	EXPECT("plain", "\"plain\"");
	EXPECT("", "\"\"");
	EXPECT("a\"b\\c/d", "\"a\\\"b\\\\c/d\"");
	EXPECT("\n\r\t\b\f", "\"\\n\\r\\t\\b\\f\"");
	EXPECT("\x01\x1f\x7f", "\"\\u0001\\u001f\x7f\"");
	EXPECT("a\0b", "\"a\\u0000b\"");
	/* valid multi-byte: é € U+1F600 U+10FFFF */
	EXPECT("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf",
	       "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf\"");
	EXPECT("\xff", "\"" FFFD "\"");
	EXPECT("\x80x", "\"" FFFD "x\"");			   /* lone continuation */
	EXPECT("\xc0\xaf", "\"" FFFD FFFD "\"");		   /* overlong '/' */
	EXPECT("\xe0\x80\xaf", "\"" FFFD FFFD FFFD "\"");	   /* overlong 3-byte */
	EXPECT("\xed\xa0\x80", "\"" FFFD FFFD FFFD "\"");	   /* surrogate U+D800 */
	EXPECT("\xf4\x90\x80\x80", "\"" FFFD FFFD FFFD FFFD "\""); /* > U+10FFFF */
	EXPECT("ok\xe2\x82", "\"ok" FFFD FFFD "\"");		   /* truncated at end */
	EXPECT("\xe2\x82x", "\"" FFFD FFFD "x\"");		   /* truncated mid */

	char *n = esc(NULL, 0);
	CHECK_STR_EQ(n, "null");
	free(n);

	/* Every byte value round-trips through a JSON parser as a valid string
	 * whose ASCII part is unchanged. */
	char all[256];
	for (int i = 0; i < 256; i++)
		all[i] = (char)i;
	char *doc = esc(all + 1, 255);
	cJSON *j = cJSON_Parse(doc);
	CHECK(j && cJSON_IsString(j));
	if (j && cJSON_IsString(j)) {
		const char *v = j->valuestring;
		/* bytes 0x01..0x7f verbatim, then 128 invalid bytes -> U+FFFD */
		CHECK_INT_EQ(strlen(v), 127 + 128 * 3);
		CHECK(memcmp(v, all + 1, 127) == 0);
		CHECK(memcmp(v + 127, FFFD, 3) == 0);
	}
	cJSON_Delete(j);
	free(doc);

	char *s = utf8_sanitize("a\xff"
				"b\xc3\xa9\xed\xa0\x80");
	CHECK_STR_EQ(s, "a" FFFD "b\xc3\xa9" FFFD FFFD FFFD);
	free(s);
	CHECK(utf8_sanitize(NULL) == NULL);
	return check_report("test_json_write");
}
