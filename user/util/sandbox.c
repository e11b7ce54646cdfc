// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Privilege dropping for helper processes (sandbox.h). */
#include "util/sandbox.h"
#include "util/sudo_ids.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define EP_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define EP_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#define NOBODY_ID 65534

void sandbox_pick_ids(uid_t *uid, gid_t *gid)
{
	struct passwd *pw;

	if (sudo_ids_parse(getenv("SUDO_UID"), getenv("SUDO_GID"), uid, gid) && *uid && *gid)
		return;
	pw = getpwnam("nobody");
	*uid = pw && pw->pw_uid ? pw->pw_uid : NOBODY_ID;
	*gid = pw && pw->pw_gid ? pw->pw_gid : NOBODY_ID;
}

static void close_from(int lo)
{
	if (syscall(SYS_close_range, (unsigned)lo, ~0u, 0) == 0)
		return;
	for (long fd = lo, hi = sysconf(_SC_OPEN_MAX); fd < (hi > 0 ? hi : 65536); fd++)
		close((int)fd);
}

int sandbox_close_fds(int *keep, size_t n)
{
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC), hi = nul, err;

	if (nul < 0)
		return -errno;
	for (size_t i = 0; i < n; i++)
		if (keep[i] > hi)
			hi = keep[i];
	/* Copies above every fd involved first: a kept fd may sit where
	 * another one goes. */
	for (size_t i = 0; i < n; i++) {
		int t = fcntl(keep[i], F_DUPFD_CLOEXEC, hi + 1);

		if (t < 0) {
			err = -errno;
			close(nul);
			return err;
		}
		keep[i] = t;
		hi = t;
	}
	/* Then 0 and 1, before nul's own number may be taken below. */
	if (dup2(nul, 0) < 0 || dup2(nul, 1) < 0) {
		err = -errno;
		close(nul);
		return err;
	}
	for (size_t i = 0; i < n; i++) {
		if (dup3(keep[i], 3 + (int)i, O_CLOEXEC) < 0)
			return -errno; /* the caller exits: nothing to close */
		keep[i] = 3 + (int)i;
	}
	close_from(3 + (int)n);
	return 0;
}

static int fail(char *why, size_t whylen, const char *step)
{
	int err = errno ? errno : EPERM;

	snprintf(why, whylen, "%s: %s", step, strerror(err));
	return -err;
}

static int drop_caps(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capset, &h, d))
		return -errno;
	memset(d, 0xff, sizeof(d));
	if (syscall(SYS_capget, &h, d))
		return -errno;
	for (int i = 0; i < 2; i++)
		if (d[i].effective || d[i].permitted || d[i].inheritable)
			return -EPERM;
	return 0;
}

int sandbox_drop_privileges(uid_t uid, gid_t gid, char *why, size_t whylen)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	errno = 0;
	/* The bounding set while CAP_SETPCAP is still there (as root):
	 * nothing executed later could get a capability back. */
	for (int cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno == EINVAL)
			break; /* past the kernel's last capability */
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (geteuid() == 0 || getuid() == 0) {
		if (uid == 0 || gid == 0) {
			errno = EINVAL;
			return fail(why, whylen, "uid or gid 0 as the unprivileged ids");
		}
		if (setgroups(0, NULL))
			return fail(why, whylen, "setgroups");
		if (setresgid(gid, gid, gid))
			return fail(why, whylen, "setresgid");
		if (setresuid(uid, uid, uid))
			return fail(why, whylen, "setresuid");
		if (getresuid(&ru, &eu, &su) || getresgid(&rg, &eg, &sg) || ru != uid ||
		    eu != uid || su != uid || rg != gid || eg != gid || sg != gid) {
			errno = EPERM;
			return fail(why, whylen, "ids not changed");
		}
	}
	/* Changing every uid from 0 cleared them already; this covers the
	 * non-root case and checks. */
	errno = -drop_caps();
	if (errno)
		return fail(why, whylen, "dropping capabilities");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return fail(why, whylen, "no_new_privs");
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		return fail(why, whylen, "dumpable");
	return 0;
}

/* Async-signal-safe: a number and a fixed text, then the end. */
static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	char msg[96] = "ebpf-prof: sandboxed helper: system call ", num[16];
	size_t len = strlen(msg), k = 0;
	unsigned v = si ? (unsigned)si->si_syscall : 0;
	static const char tail[] = " is not allowed, exiting\n";

	(void)uc;
	do
		num[k++] = (char)('0' + v % 10);
	while ((v /= 10) && k < sizeof(num));
	while (k && len < sizeof(msg) - 1)
		msg[len++] = num[--k];
	(void)!write(2, msg, len);
	(void)!write(2, tail, sizeof(tail) - 1);
	_exit(128 + sig);
}

int sandbox_seccomp(const int *allowed, size_t n)
{
#ifdef EP_AUDIT_ARCH
	/* What the SIGSYS handler itself needs. */
	static const int always[] = { __NR_write, __NR_exit_group, __NR_exit, __NR_rt_sigreturn };
	size_t na = sizeof(always) / sizeof(always[0]), total = n + na, k = 0;
	struct sock_filter *prog;
	struct sock_fprog fp;
	struct sigaction sa;
	int err = 0;

	if (total > 250)
		return -E2BIG; /* jump offsets are 8 bits */
	prog = calloc(total + 8, sizeof(*prog));
	if (!prog)
		return -ENOMEM;
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 offsetof(struct seccomp_data, arch));
	prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, EP_AUDIT_ARCH, 1, 0);
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 offsetof(struct seccomp_data, nr));
#ifdef __x86_64__
	/* The x32 ABI's numbers: never. */
	prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1);
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
#endif
	for (size_t i = 0; i < total; i++) {
		int nr = i < n ? allowed[i] : always[i - n];

		/* To the ALLOW after the TRAP that follows the list. */
		prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr,
							 (uint8_t)(total - i), 0);
	}
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP);
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	fp.len = (unsigned short)k;
	fp.filter = prog;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigsys;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL))
		err = -errno;
	else if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0))
		err = errno == EINVAL ? -ENOSYS : -errno;
	free(prog);
	return err;
#else
	(void)allowed;
	(void)n;
	return -ENOSYS;
#endif
}
