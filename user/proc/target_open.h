/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Opening the files a profiled program names: the objects it mapped, the
 * model path it passed to llama.cpp, its perf map, the debug files found
 * beside them. ebpf-prof runs as root and the program does not, so every
 * such open goes through here (docs/security.md):
 *
 *  - Where the file is named: a mapped object through
 *    /proc/PID/map_files/START-END (the very object mapped, whatever the
 *    path names now); a path inside the program's root (openat2
 *    RESOLVE_IN_ROOT on /proc/PID/root: its symlinks resolve as it sees
 *    them, ".." stops at its root), without magic links (/proc/self/...
 *    would name ours); with no symlink at all for a canonical path (a maps
 *    path has none: one appearing there is a swap).
 *  - Whose permissions: the program's filesystem uid, gid and supplementary
 *    groups (/proc/PID/status), taken by the opening thread alone
 *    (setfsuid, setfsgid and the raw setgroups system call change one
 *    thread's credentials; a root thread then also loses its
 *    filesystem capabilities), so the kernel itself decides, ACLs and
 *    security modules included, as it would for the program. A file the
 *    program could not read is refused; so is any open when its
 *    credentials are not known (it was never seen).
 *  - What is read: the file is opened O_PATH first (no device is opened,
 *    no FIFO waited on), then reopened for reading (O_NONBLOCK) only if it
 *    is a regular file of at most max_size bytes outside the kernel's
 *    pseudo-filesystems (/proc, /sys...).
 *  - How long it may take: the open runs on a helper thread and the caller
 *    waits at most TARGET_OPEN_TIMEOUT_MS. A FUSE file (its daemon can
 *    stall any read) is copied into memory there, up to
 *    TARGET_FUSE_COPY_MAX bytes, unless the caller reads on a deadline
 *    itself. A thread past its deadline is left to finish alone.
 *
 * target_run is the deadline part alone, for the parsers that read a
 * target's file whole on their own thread (the GGUF header).
 */
#ifndef EP_PROC_TARGET_OPEN_H
#define EP_PROC_TARGET_OPEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* Supplementary groups kept; more are dropped (less access, never more). */
#define TARGET_CRED_MAX_GROUPS 64
/* ELF objects and their debug files: larger ones are refused (a sparse
 * file can claim any size; real ones, CUDA libraries with their
 * debuginfo included, stay below). */
#define TARGET_ELF_MAX_BYTES (4ull << 30)
/* A FUSE file is read into memory up to this size, else refused. */
#define TARGET_FUSE_COPY_MAX (256u << 20)
/* How long a caller waits for one open. */
#define TARGET_OPEN_TIMEOUT_MS 1000

/* The filesystem identity a file is opened with. */
struct target_cred {
	bool known;	   /* read from the program's status */
	bool self;	   /* ours: no switch (tools and tests naming their own files) */
	uint32_t uid, gid; /* filesystem uid and gid */
	uint32_t ngroups;
	uint32_t groups[TARGET_CRED_MAX_GROUPS];
};

/* On whose behalf a file is opened. */
struct target_ref {
	const char *proc_root; /* NULL: "/proc" */
	uint32_t pid;	       /* whose root and map_files; 0: none (our root) */
	bool same_root;	       /* its root is ours: our paths name its files once it is gone */
	struct target_cred cred;
};

/* A file the program mapped, as its maps line names it. */
struct target_map {
	const char *path;    /* as the program sees it */
	uint64_t start, end; /* one mapping of it (map_files/START-END); 0, 0: none */
	uint64_t dev, ino;   /* st_dev and st_ino the path must lead to; 0: unchecked */
	bool deleted;	     /* not reachable by its path */
};

enum {
	/* The path is canonical (a maps path): no symlink may be in it. */
	TARGET_NO_SYMLINKS = 1u << 0,
	/* Resolved in our root (system directories, a path read from our
	 * view of the program's cwd), still with the program's credentials. */
	TARGET_OUR_ROOT = 1u << 1,
	/* The caller reads the file on a deadline itself: no in-memory copy
	 * of a FUSE file. */
	TARGET_SLOW_OK = 1u << 2,
};

/* Parses /proc/PID/status text (buf need not end in NUL): the fourth
 * (filesystem) field of "Uid:" and "Gid:", and "Groups:". Returns 0 or
 * -EINVAL (a line missing or malformed). */
int target_cred_parse(const char *buf, size_t len, struct target_cred *c);
/* Reads them for pid: 0, -ENOENT (gone) or -errno. */
int target_cred_read(const char *proc_root, uint32_t pid, struct target_cred *c);

/* Credentials taken elsewhere (the kernel's, at a call): the filesystem
 * uid and gid and the first TARGET_CRED_MAX_GROUPS groups (fewer groups,
 * fewer rights). */
void target_cred_set(struct target_cred *c, uint32_t fsuid, uint32_t fsgid, const uint32_t *groups,
		     uint32_t ngroups);
/* Whether a root directory named by the kernel (its superblock's s_dev,
 * major << 20 | minor, and inode number) is ours. */
bool target_root_is_ours(uint32_t kdev, uint64_t ino);

/* Our own identity and root: the files a tool or test names itself. */
void target_ref_self(struct target_ref *t);
/* pid's identity now (credentials, whether its root is ours). Returns 0 or
 * -errno from reading its status; t is usable either way (credentials
 * unknown: every open fails until they are read). */
int target_ref_init(struct target_ref *t, const char *proc_root, uint32_t pid);

/* Opens path (absolute; in the program's root, or ours with
 * TARGET_OUR_ROOT or when the program is gone and shared our root) for
 * reading as the program would. Returns the descriptor (O_RDONLY |
 * O_NONBLOCK | O_CLOEXEC) with *st the file's identity (st may be NULL),
 * or -errno: -ENOENT, -EACCES (the program may not read it), -ELOOP (a
 * symlink where none may be), -EISDIR, -EINVAL (not a regular file: FIFO,
 * socket, device), -EFBIG (over max_size; 0: no bound), -EXDEV (a kernel
 * pseudo-filesystem), -ETIMEDOUT (the deadline passed), -EPERM (its
 * credentials could not be taken), -ESRCH (gone, credentials unknown),
 * -ENXIO (gone, and its root was not ours). */
int target_open_path(const struct target_ref *t, const char *path, unsigned flags,
		     uint64_t max_size, struct stat *st);

/* Opens a mapped object: through map_files while the mapping exists (the
 * object itself; the verdict there is final), else by its path with no
 * symlinks, which must lead to m->dev/m->ino when given (-ESTALE
 * otherwise); a deleted object has no path. Errors as target_open_path. */
int target_open_map(const struct target_ref *t, const struct target_map *m, unsigned flags,
		    uint64_t max_size, struct stat *st);

/* Says what an error of the two above means ("not a regular file"...). */
const char *target_open_strerror(int err);

/* Runs fn(arg) on a new thread, waiting up to timeout_ms. Returns 0 when
 * it finished (arg is the caller's again), -ETIMEDOUT when it did not: the
 * thread then owns arg and calls drop(arg) (may be NULL) once fn returns;
 * -EAGAIN (or another -errno) when no thread could be started: fn did not
 * run. */
int target_run(void (*fn)(void *arg), void (*drop)(void *arg), void *arg, unsigned timeout_ms);

#endif
