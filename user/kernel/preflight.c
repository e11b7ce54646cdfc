// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The recording run's preflight (preflight.h): capabilities, BTF, the
 * kernel's features and the defaults' fallbacks.
 */
#include "kernel/preflight.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "util/log.h"

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* -v shows libbpf warnings and the verifier log; -vv everything. */
	enum log_level lvl = level == LIBBPF_DEBUG ? LOG_DEBUG : LOG_INFO;

	if (log_get_level() < lvl)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void preflight_libbpf_log(void)
{
	libbpf_set_print(libbpf_print);
}

/* Capabilities bpf() and perf_event_open() check (CAP_SYS_ADMIN stands for
 * both). Checked for root too: root in a container or under
 * `capsh --drop` lacks them, and the load failed with "Operation not
 * permitted (rerun with -v for the verifier log)". Returns the
 * names of the missing ones in buf, empty when none is missing. */
static const char *missing_bpf_caps(char *buf, size_t len)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	bool sys_admin, bpf, perfmon;

	buf[0] = '\0';
	if (syscall(SYS_capget, &hdr, data)) {
		if (geteuid() != 0)
			snprintf(buf, len, "CAP_BPF and CAP_PERFMON");
		return buf;
	}
	sys_admin = data[0].effective & (1u << 21);
	/* CAP_PERFMON (38) and CAP_BPF (39) live in the second word. */
	perfmon = sys_admin || (data[1].effective & (1u << (38 - 32)));
	bpf = sys_admin || (data[1].effective & (1u << (39 - 32)));
	if (!bpf || !perfmon)
		snprintf(buf, len, "%s%s%s", bpf ? "" : "CAP_BPF", !bpf && !perfmon ? " and " : "",
			 perfmon ? "" : "CAP_PERFMON");
	return buf;
}

void preflight_tracefs(void)
{
	struct stat st;

	if (stat("/sys/kernel/tracing/events", &st) == 0)
		return;
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0) {
		log_info("mounted tracefs at /sys/kernel/tracing");
		return;
	}
	log_warn("tracefs is not mounted and could not be mounted (%s); "
		 "tracepoint-based features may be unavailable: "
		 "mount -t tracefs nodev /sys/kernel/tracing",
		 strerror(errno));
}

static int check_environment(const char *btf_path)
{
	char caps[64];

	if (*missing_bpf_caps(caps, sizeof(caps))) {
		if (geteuid() == 0)
			log_error(
				"permission denied: running as root but without %s (a container, "
				"capsh --drop or a systemd CapabilityBoundingSet?): grant them, or "
				"run from a root shell with full capabilities",
				caps);
		else
			log_error("permission denied: run as root (sudo ebpf-prof ...) or grant "
				  "%s",
				  caps);
		return -EPERM;
	}
	/* With --btf the programs' relocations come from the file: the load
	 * says whether the kernel takes them. Without it, libbpf looks where
	 * a kernel older than sysfs BTF kept it (/boot/vmlinux-RELEASE, ...):
	 * what it finds there serves as --btf would (parsed once more here,
	 * only on such kernels). */
	if (!btf_path && !kfeat_kernel_btf()) {
		struct btf *b = btf__load_vmlinux_btf();
		struct utsname u;

		if (b) {
			btf__free(b);
			return 0;
		}
		if (uname(&u))
			snprintf(u.release, sizeof(u.release), "?");
		log_error("this kernel has no BTF (/sys/kernel/btf/vmlinux missing): give it "
			  "with --btf FILE: BTFHub's file for %s, or `pahole -J` on this "
			  "kernel's vmlinux (docs/jetson.md)",
			  u.release);
		return -ENOTSUP;
	}
	return 0;
}

/* The default unwinding (cfi-kernel) and Python frames need bpf_loop
 * (5.17+): without it the defaults degrade by themselves, in one line, to
 * what the kernel can do (an explicit --unwind cfi-kernel still fails, in
 * sampler_open; an explicit --python warns there). x86_64 copies a stack
 * window and unwinds it in the collector; the arm64 collector has no such
 * unwinder, so it walks frame pointers in the kernel. */
static void degrade_defaults(struct cli_opts *o, const struct kfeat *kf)
{
	bool loop = kf->have[KFEAT_BPF_LOOP];
	/* The in-kernel walk also needs the kernel's BTF (sampler_open);
	 * Python frames bpf_loop only. */
	bool unwind = o->unwind == CLI_UNWIND_KERNEL && !o->unwind_given && (!loop || !kf->btf);
	bool python = o->python != CLI_PYTHON_NATIVE && !o->python_given && !loop;
	const char *why = loop ? "this kernel has no BTF"
			       : "this kernel has no bpf_loop (Linux 5.17+)";

	if (!unwind && !python)
		return;
	if (python)
		o->python = CLI_PYTHON_NATIVE;
	if (!unwind) {
		log_warn("%s: Python frames are not walked", why);
		return;
	}
#if defined(__x86_64__)
	o->unwind = CLI_UNWIND_AUTO;
	log_warn("%s: user stacks are unwound from a copied stack window (--unwind auto), not in "
		 "the kernel%s",
		 why, python ? "; Python frames are not walked" : "");
#else
	o->unwind = CLI_UNWIND_FP;
	log_warn("%s: user stacks are walked by frame pointers (--unwind fp), not from CFI in the "
		 "kernel%s",
		 why, python ? "; Python frames are not walked" : "");
#endif
}

int preflight(struct cli_opts *o, struct kfeat *kf)
{
	const char *hide = getenv("EBPF_PROF_FAULT_KFEAT");
	int err;

	err = check_environment(o->btf_path);
	if (err)
		return err;
	kfeat_probe(kf);
	/* Tests run this kernel as an older one (kernel/kfeat.h). */
	if (hide && *hide && kfeat_hide(kf, hide)) {
		log_error("EBPF_PROF_FAULT_KFEAT=%s: not a list of known helper names", hide);
		return -EINVAL;
	}
	degrade_defaults(o, kf);
	/* What a kernel without BTF costs beyond the unwinding (the line
	 * above) and --alloc (its own line), once. */
	if (!kf->btf)
		log_warn("this kernel has no BTF: its tracepoints are followed by raw_tp programs "
			 "(types from %s); off-CPU episodes have no kernel frames "
			 "(bpf_get_task_stack needs the kernel's BTF)",
			 o->btf_path ? o->btf_path : "libbpf's vmlinux file");
	return 0;
}
