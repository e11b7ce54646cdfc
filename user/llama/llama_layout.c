// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* llama.cpp parameter-struct layouts per build (llama_layout.h). */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "llama/llama_layout.h"
#include "probes/uprobe_discovery.h"

/* One row per llama.cpp build we have met. llama_version() has returned
 * the same "X.Y.Z-dev" string over many releases, so a row is a claim
 * checked at decode time (llama_ctx_decode's plausibility test), not a
 * proof. To add a build: read its llama_context_default_params and
 * llama_model_default_params (objdump -d: the stores give the offsets of
 * the defaults, e.g. n_ctx 512, n_batch 2048, n_threads 4) or its llama.h,
 * then run bpf.test_llama_params against it (EP_LLAMA_LIB_DIR): the test
 * sets each field and compares with the library's own accessors. */
static const struct llama_layout layouts[] = {
	{
		.version = "0.5.0-dev",
		/* n_ctx, n_batch, n_ubatch, n_seq_max, then n_rs_seq and
		 * n_outputs_max (0), a u32 defaulting to 1, n_threads,
		 * n_threads_batch; 160 bytes in all. */
		.ctx_size = 0xa0,
		.n_ctx = 0x00,
		.n_batch = 0x04,
		.n_ubatch = 0x08,
		.n_seq_max = 0x0c,
		.n_threads = 0x1c,
		.n_threads_batch = 0x20,
		/* devices, tensor_buft_overrides (pointers), n_gpu_layers
		 * (default -1: all), split_mode (1) ... */
		.model_size = 0x50,
		.n_gpu_layers = 0x10,
		.source = "libllama.v0.5.0.so of @node-llama-cpp/linux-x64 3.22.1: offsets from "
			  "the stores of llama_context_default_params/llama_model_default_params; "
			  "context fields checked against llama_n_ctx, llama_n_batch, "
			  "llama_n_ubatch, llama_n_threads, llama_n_threads_batch "
			  "(bpf.test_llama_params)",
	},
};

const struct llama_layout *llama_layout_find(const char *version)
{
	for (size_t i = 0; version && i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (!strcmp(layouts[i].version, version))
			return &layouts[i];
	return NULL;
}

/* Through the PT_LOAD headers: the file offset of virtual address x
 * (to_off), or the virtual address of file offset x. */
static int load_map(int fd, const Elf64_Ehdr *eh, uint64_t x, bool to_off, uint64_t *out)
{
	for (unsigned i = 0; i < eh->e_phnum && i < 64; i++) {
		Elf64_Phdr ph;
		uint64_t from, to;

		if (pread(fd, &ph, sizeof(ph),
			  (off_t)(eh->e_phoff + (uint64_t)i * eh->e_phentsize)) !=
		    (ssize_t)sizeof(ph))
			return -ENOEXEC;
		from = to_off ? ph.p_vaddr : ph.p_offset;
		to = to_off ? ph.p_offset : ph.p_vaddr;
		if (ph.p_type == PT_LOAD && x >= from && x - from < ph.p_filesz) {
			*out = x - from + to;
			return 0;
		}
	}
	return -ENOENT;
}

static int va_to_off(int fd, const Elf64_Ehdr *eh, uint64_t va, uint64_t *off)
{
	return load_map(fd, eh, va, true, off);
}

static int off_to_va(int fd, const Elf64_Ehdr *eh, uint64_t off, uint64_t *va)
{
	return load_map(fd, eh, off, false, va);
}

int llama_version_read(int fd, char *out, size_t outlen)
{
	static const char *const name = "llama_version";
	uint64_t fn = 0, va, s_off;
	unsigned char code[16], *p = code;
	Elf64_Ehdr eh;
	int32_t disp;
	ssize_t n;

	if (outlen < 2)
		return -EINVAL;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr))
		return -ENOEXEC;
	if (ud_find_functions(fd, &name, 1, &fn) != 1 || !fn)
		return -ENOENT;
	if (pread(fd, code, sizeof(code), (off_t)fn) != (ssize_t)sizeof(code))
		return -ENOENT;
	if (!memcmp(p, "\xf3\x0f\x1e\xfa", 4)) /* endbr64 */
		p += 4;
	/* lea disp32(%rip), %rax; ret */
	if (eh.e_machine != EM_X86_64 || memcmp(p, "\x48\x8d\x05", 3) || p[7] != 0xc3)
		return -ENOENT;
	memcpy(&disp, p + 3, 4);
	if (off_to_va(fd, &eh, fn + (uint64_t)(p + 7 - code), &va) ||
	    va_to_off(fd, &eh, va + (uint64_t)(int64_t)disp, &s_off))
		return -ENOENT;
	n = pread(fd, out, outlen - 1, (off_t)s_off);
	if (n <= 0)
		return -ENOENT;
	out[n] = '\0';
	if (strlen(out) == (size_t)n) /* no NUL within outlen - 1 bytes */
		return -ENOENT;
	for (const char *c = out; *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			return -ENOENT;
	return out[0] ? 0 : -ENOENT;
}

static uint32_t rd32(const uint8_t *b, uint32_t off)
{
	uint32_t v;

	memcpy(&v, b + off, 4);
	return v;
}

bool llama_ctx_decode(const struct llama_layout *l, const uint8_t *blob, size_t len,
		      struct llama_ctx_params *o)
{
	if (!l || len < l->ctx_size)
		return false;
	o->n_ctx = rd32(blob, l->n_ctx);
	o->n_batch = rd32(blob, l->n_batch);
	o->n_ubatch = rd32(blob, l->n_ubatch);
	o->n_seq_max = rd32(blob, l->n_seq_max);
	o->n_threads = (int32_t)rd32(blob, l->n_threads);
	o->n_threads_batch = (int32_t)rd32(blob, l->n_threads_batch);
	/* n_ctx 0 = the model's; threads <= 0 are not accepted by llama.cpp. */
	return o->n_ctx <= (1u << 24) && o->n_batch >= 1 && o->n_batch <= (1u << 24) &&
	       o->n_ubatch >= 1 && o->n_ubatch <= (1u << 24) && o->n_seq_max >= 1 &&
	       o->n_seq_max <= 4096 && o->n_threads >= 1 && o->n_threads <= 4096 &&
	       o->n_threads_batch >= 1 && o->n_threads_batch <= 4096;
}

bool llama_model_decode(const struct llama_layout *l, const uint8_t *blob, size_t len,
			int32_t *n_gpu_layers)
{
	if (!l || len < l->model_size)
		return false;
	*n_gpu_layers = (int32_t)rd32(blob, l->n_gpu_layers);
	return *n_gpu_layers >= -1 && *n_gpu_layers <= 65536;
}
