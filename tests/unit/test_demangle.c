// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The demangler wrapper: real C++ and Rust names, invalid names, huge and
 * hostile inputs (names come from the profiled program's files), and the
 * on-screen shortening of long template names. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "symbolize/demangle.h"

static void check_dem(const char *in, const char *want)
{
	char *d = demangle(in);

	if (want)
		CHECK_STR_EQ(d, want);
	else if (d) {
		fprintf(stderr, "demangle(%.60s) = %.60s, expected NULL\n", in, d);
		CHECK(d == NULL);
	}
	free(d);
}

static void test_valid(void)
{
	check_dem("_Z3foov", "foo()");
	check_dem("_ZN13llama_context14process_ubatchERK12llama_ubatch14llm_graph_typeP22llama_"
		  "memory_context_iR11ggml_status",
		  "llama_context::process_ubatch(llama_ubatch const&, llm_graph_type, "
		  "llama_memory_context_i*, ggml_status&)");
	check_dem("_ZNSt6vectorIiSaIiEE9push_backERKi",
		  "std::vector<int, std::allocator<int> >::push_back(int const&)");
	check_dem(
		"_ZN2v88internal8compiler12PipelineImpl3RunINS1_10TyperPhaseEJPNS1_5TyperEEEEDaDpOT0_",
		"auto v8::internal::compiler::PipelineImpl::Run<v8::internal::compiler::TyperPhase, "
		"v8::internal::compiler::Typer*>(v8::internal::compiler::Typer*&&)");
	/* GCC's clone suffixes and symbol versions stay visible. */
	check_dem("_Z3barv.cold", "bar() [clone .cold]");
	check_dem("_ZNSt6thread6_StateD2Ev@@GLIBCXX_3.4.22",
		  "std::thread::_State::~_State()@@GLIBCXX_3.4.22");
	check_dem("_ZN4node12_GLOBAL__N_1L20PlatformWorkerThreadEPv",
		  "node::(anonymous namespace)::PlatformWorkerThread(void*)");
	/* Rust legacy: hash dropped, escapes decoded. */
	check_dem("_ZN4core3ptr13drop_in_place17h0123456789abcdefE", "core::ptr::drop_in_place");
	check_dem("_ZN70_$LT$alloc..vec..Vec$LT$T$C$A$GT$$u20$as$u20$core..ops..drop..Drop$GT$"
		  "4drop17h0a1b2c3d4e5f6789E",
		  "<alloc::vec::Vec<T,A> as core::ops::drop::Drop>::drop");
	/* Not Rust (no hash): a C++ name with "::h" stays intact. */
	check_dem("_ZN1a1hEv", "a::h()");
}

static void test_invalid(void)
{
	check_dem(NULL, NULL);
	check_dem("", NULL);
	check_dem("main", NULL);
	check_dem("_start", NULL);
	check_dem("_Z", NULL);
	check_dem("_Zfoo", NULL);
	check_dem("_ZN3foo", NULL);
	check_dem("_Z3foov\xff\xfe", NULL);
	/* Rust v0 is not supported: left as it is, not garbled. */
	check_dem("_RNvCs1234_7mycrate3foo", NULL);
	CHECK(!demangle_candidate("llama_decode"));
	CHECK(demangle_candidate("_ZN1a1bEv"));
}

/* Inputs built to make a demangler recurse deeply or blow up: each must
 * come back (NULL or a string), without a crash, in bounded time. */
static void test_hostile(void)
{
	size_t cap = DEMANGLE_MAX_IN * 2 + 64;
	char *b = malloc(cap);
	struct timespec t0, t1;
	double secs;
	char *d;

	CHECK(b != NULL);
	if (!b)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* Longer than the cap: refused without calling the demangler. */
	strcpy(b, "_ZN");
	for (size_t i = 3; i < DEMANGLE_MAX_IN + 10; i++)
		b[i] = 'a';
	b[DEMANGLE_MAX_IN + 10] = '\0';
	memcpy(b + 3, "9999", 4);
	check_dem(b, NULL);
	/* A valid but huge name just over the cap is refused too. */
	{
		size_t n = 3;

		strcpy(b, "_ZN");
		while (n + 4 < DEMANGLE_MAX_IN + 100) {
			memcpy(b + n, "1a", 2);
			n += 2;
		}
		strcpy(b + n, "Ev");
		check_dem(b, NULL);
	}
	/* Deep nesting: pointer-to-function types within each other. */
	strcpy(b, "_Z1f");
	for (size_t n = 4; n + 4 < DEMANGLE_MAX_IN - 8; n += 3)
		memcpy(b + n, "PFv", 3), b[n + 3] = '\0';
	strcat(b, "v");
	d = demangle(b);
	free(d);
	/* Deep template nesting. */
	strcpy(b, "_Z1fI");
	for (size_t n = 5; n + 4 < DEMANGLE_MAX_IN / 2; n += 3)
		memcpy(b + n, "1aI", 3), b[n + 3] = '\0';
	d = demangle(b);
	free(d);
	/* Substitution references to themselves and far out of range. */
	check_dem("_Z1fS_", NULL);
	check_dem("_Z1fS999999999999999999999999_", NULL);
	check_dem("_Z1fT999999999999999999999_", NULL);
	d = demangle("_ZSt1fIS_S0_S1_S2_S3_S4_S5_S6_S7_S8_S9_SA_EvT_");
	free(d);
	/* Every byte value after the prefix. */
	for (int c = 1; c < 256; c++) {
		snprintf(b, cap, "_ZN1a%c1bEv", c);
		d = demangle(b);
		free(d);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	fprintf(stderr, "hostile inputs: %.3f s\n", secs);
	CHECK(secs < 5.0);
	free(b);
}

static void test_shorten(void)
{
	const char *n = "std::_Function_handler<void (), std::_Bind<void (Foo::*(Foo*, "
			"std::vector<int, std::allocator<int> >))(std::vector<int>)> >::_M_invoke("
			"std::_Any_data const&)";
	char buf[256], small[16];

	/* Fits: unchanged. */
	CHECK_STR_EQ(demangle_shorten("a::b<int>::c()", 40, buf, sizeof(buf)), "a::b<int>::c()");
	/* Outermost template list collapsed first, the call signature kept. */
	CHECK_STR_EQ(demangle_shorten(n, 61, buf, sizeof(buf)),
		     "std::_Function_handler<...>::_M_invoke(std::_Any_data const&)");
	/* Operators are not brackets. */
	CHECK_STR_EQ(demangle_shorten("bool operator< <std::string, int>(std::pair<int, int>)", 40,
				      buf, sizeof(buf)),
		     "bool operator< <...>(std::pair<...>)");
	CHECK_STR_EQ(demangle_shorten("A<int>::operator->() const x<aaaa>", 30, buf, sizeof(buf)),
		     "A<int>::operator->() const ...");
	/* Nothing to collapse: cut with "...". */
	CHECK_STR_EQ(demangle_shorten("abcdefghijklmnopqrstuvwxyz", 10, buf, sizeof(buf)),
		     "abcdefg...");
	/* Buffer smaller than the limit, unbalanced brackets. */
	CHECK_STR_EQ(demangle_shorten("x<<<<<<<<<<<<<<<<<<<<<<<<<<", 100, small, sizeof(small)),
		     "x<<<<<<<<<<<...");
	CHECK_STR_EQ(demangle_shorten(">>>>>>>>><<<<", 8, small, sizeof(small)), ">>>>>...");
	CHECK(strlen(demangle_shorten(n, 2, small, sizeof(small))) == 2);
	/* Cut by the buffer, then collapsed below the limit: still marked. */
	CHECK_STR_EQ(demangle_shorten("a<bbbbbbbbbbbbbbbbbbbb>cccccccccccccccccccccccccccccc", 30,
				      buf, 41),
		     "a<...>ccccccccccccccccc...");
}

int main(void)
{
	test_valid();
	test_invalid();
	test_hostile();
	test_shorten();
	return check_report("test_demangle");
}
