// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Drives the real llama.cpp shared libraries (as shipped prebuilt in the
 * npm package @node-llama-cpp/linux-x64) for the probes test, without a
 * model: "ready <pid>"; SIGUSR1 -> dlopen libllama, libggml-base and the
 * baseline CPU variant libggml-cpu-x64.so from DIR, "loaded"; SIGUSR1 ->
 * N_GRAPH ggml graph computations (a vector add) and N_LOAD model loads of
 * a missing file (each returns NULL: an error), "done".
 *
 * Only stable C entry points are used. Structs passed by value are given
 * more room than any version needs: the callee reads its own layout.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

#define N_GRAPH 20
#define N_LOAD	4

struct ggml_init_params {
	size_t mem_size;
	void *mem_buffer;
	bool no_alloc;
};

struct big {
	unsigned char b[1024];
};

static void *open_lib(const char *dir, const char *name)
{
	char path[4096];
	void *h;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	if (!h)
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
	return h;
}

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p)
		fprintf(stderr, "dlsym %s: %s\n", name, dlerror());
	return p;
}

int main(int argc, char **argv)
{
	sigset_t set;
	int sig;
	void *base, *cpu, *llama;

	if (argc < 2) {
		fprintf(stderr, "usage: llama_real DIR\n");
		return 2;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	base = open_lib(argv[1], "libggml-base.so");
	cpu = open_lib(argv[1], "libggml-cpu-x64.so");
	llama = open_lib(argv[1], "libllama.v0.5.0.so");
	if (!base || !cpu || !llama)
		return 1;

	void *(*ggml_init)(struct ggml_init_params) =
		(void *(*)(struct ggml_init_params))sym(base, "ggml_init");
	void *(*new_1d)(void *, int, long) =
		(void *(*)(void *, int, long))sym(base, "ggml_new_tensor_1d");
	void *(*add)(void *, void *, void *) =
		(void *(*)(void *, void *, void *))sym(base, "ggml_add");
	void *(*new_graph)(void *) = (void *(*)(void *))sym(base, "ggml_new_graph");
	void (*expand)(void *, void *) =
		(void (*)(void *, void *))sym(base, "ggml_build_forward_expand");
	void (*ggml_free)(void *) = (void (*)(void *))sym(base, "ggml_free");
	int (*compute)(void *, void *, int) =
		(int (*)(void *, void *, int))sym(cpu, "ggml_graph_compute_with_ctx");
	struct big (*defp)(void) = (struct big(*)(void))sym(llama, "llama_model_default_params");
	void *(*load)(const char *, struct big) =
		(void *(*)(const char *, struct big))sym(llama, "llama_model_load_from_file");

	if (!ggml_init || !new_1d || !add || !new_graph || !expand || !ggml_free || !compute ||
	    !defp || !load)
		return 1;
	printf("loaded\n");
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;

	struct ggml_init_params ip = { 16 << 20, NULL, false };
	void *ctx = ggml_init(ip);
	void *a = new_1d(ctx, 0 /* GGML_TYPE_F32 */, 4096);
	void *b = new_1d(ctx, 0, 4096);
	void *g = new_graph(ctx);
	int bad = 0;

	expand(g, add(ctx, a, b));
	for (int i = 0; i < N_GRAPH; i++)
		bad += compute(ctx, g, 1) != 0;
	ggml_free(ctx);
	struct big p = defp();
	for (int i = 0; i < N_LOAD; i++)
		bad += load("/nonexistent/ep-model.gguf", p) != NULL;
	printf("bad %d\ndone\n", bad);
	fflush(stdout);
	return 0;
}
