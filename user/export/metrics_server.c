// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The HTTP side of the metrics endpoint (metrics.h), on libmicrohttpd.
 *
 * The recorder runs as root; the requests are parsed elsewhere. A process
 * forked at start (the "server process") holds the listening socket and
 * nothing else of the recorder: its other descriptors are closed, it runs
 * under another user id (SUDO_UID or nobody) with no capabilities,
 * no_new_privs and a system call allowlist (seccomp, where the kernel has
 * it). A thread could not be that boundary: capabilities are per thread,
 * but set*id in glibc changes every thread of the process, and any thread
 * shares the recorder's memory and descriptors.
 *
 * The recorder publishes its snapshot into a shared mapping (a seqlock:
 * the recorder only ever writes it; the server process maps it read-only
 * and retries a copy that was torn by a write). The server process renders
 * its copy for each scrape.
 *
 * It answers GET (and HEAD) of exactly /metrics and nothing else - no
 * other path, no files, no request body - and bounds what a client can
 * hold: 8 KiB of request (431 beyond), the request complete within 2 s of
 * the connection, the connection closed after the answer and at 5 s in
 * any case, at most 16 connections, the oldest one still sending its
 * request dropped for a new one. Slow clients cannot keep a scraper out.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "export/metrics.h"
#include "util/log.h"
#include "util/sandbox.h"

#define PUBLISH_PERIOD_NS   (250 * 1000000ull)
#define MAX_CONNECTIONS	    16
#define MAX_TRACKED	    (2 * MAX_CONNECTIONS) /* with the dropped ones not yet closed */
#define REQUEST_DEADLINE_MS 2000
#define CONN_DEADLINE_MS    5000
#define IDLE_TIMEOUT_S	    2
#define CONN_MEMORY_LIMIT   8192 /* request line + headers, bytes */
#define READY_TIMEOUT_MS    5000
#define STOP_TIMEOUT_MS	    1000
#define CT_PROMETHEUS	    "text/plain; version=0.0.4; charset=utf-8"
#define CT_OPENMETRICS	    "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* Written by the recorder only. */
struct shared_snap {
	_Atomic uint64_t seq; /* odd while a write is under way */
	struct metrics_snap snap;
};

/* Written by the server process only; the recorder reads a number. */
struct shared_stats {
	_Atomic uint64_t requests;
};

struct metrics_server {
	pid_t pid;  /* the server process */
	int ctl_fd; /* its end of the stop pipe: closed = stop */
	bool gone;  /* the server process ended early (logged once) */
	struct shared_snap *pub;
	size_t pub_len;
	struct shared_stats *stats;
	uint64_t seq;
	struct metrics_snap stage; /* recorder thread only */
	uint64_t next_ns;
	/* Samples of profiles rotated out, per pid (recorder thread). */
	struct metrics_pid base[2 * LIVE_MAX_PIDS];
	size_t nbase;
};

/* What the server process reports once it is serving (or not). */
struct ready_msg {
	int32_t err;	 /* 0 or -errno */
	int32_t seccomp; /* 0 on, -ENOSYS none in this kernel */
};

/* ---- the server process ---- */

struct conn {
	bool used;
	bool request_read; /* its headers are in: the deadline is the connection's */
	bool dropped;	   /* shut down by us, for the library to close */
	int fd;
	uint64_t start_ms;
	struct MHD_Connection *c;
};

struct server {
	const struct shared_snap *pub;
	struct shared_stats *stats;
	struct metrics_snap *snap; /* the last good copy */
	struct conn conns[MAX_TRACKED];
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int metrics_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len, bool *loopback,
		       char *why, size_t whylen)
{
	char host[64];
	const char *colon, *port;
	char *end;
	unsigned long p;
	bool v6 = s && s[0] == '[';
	size_t hl;

	memset(ss, 0, sizeof(*ss));
	*loopback = false;
	if (!s || !*s) {
		snprintf(why, whylen, "empty address");
		return -EINVAL;
	}
	if (v6) {
		colon = strchr(s, ']');
		if (!colon || colon[1] != ':') {
			snprintf(why, whylen, "want [IPv6]:PORT");
			return -EINVAL;
		}
		hl = (size_t)(colon - s - 1);
		port = colon + 2;
		s++;
	} else {
		colon = strrchr(s, ':');
		if (!colon) {
			snprintf(why, whylen, "want ADDR:PORT, e.g. 127.0.0.1:9464");
			return -EINVAL;
		}
		hl = (size_t)(colon - s);
		port = colon + 1;
	}
	if (!hl || hl >= sizeof(host)) {
		snprintf(why, whylen, "missing or overlong address");
		return -EINVAL;
	}
	memcpy(host, s, hl);
	host[hl] = '\0';
	errno = 0;
	p = strtoul(port, &end, 10);
	if (!*port || *end || errno || p < 1 || p > 65535 || *port == '+' || *port == '-' ||
	    *port == ' ') {
		snprintf(why, whylen, "bad port '%s' (1..65535)", port);
		return -EINVAL;
	}
	if (v6) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1) {
			snprintf(why, whylen, "'%s' is not an IPv6 address", host);
			return -EINVAL;
		}
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)p);
		*loopback = IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
		*len = sizeof(*a6);
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)ss;

		/* inet_pton, not inet_aton: no "127.1" or octal forms. */
		if (inet_pton(AF_INET, host, &a4->sin_addr) != 1) {
			snprintf(why, whylen, "'%s' is not an IPv4 address (no host names)", host);
			return -EINVAL;
		}
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)p);
		*loopback = (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
		*len = sizeof(*a4);
	}
	return 0;
}

static bool wants_openmetrics(struct MHD_Connection *c)
{
	const char *acc = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);

	return acc && strstr(acc, "application/openmetrics-text");
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *ctype,
			     char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		len, body, body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	/* One request per connection: a kept-alive idle connection would
	 * hold a slot that a scraper may need. */
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	char *b = strdup(msg);

	return reply(c, status, "text/plain; charset=utf-8", b, b ? strlen(b) : 0);
}

/* The recorder's strings and counts are trusted, but a copy is only as
 * good as the bytes in it: bounded before rendering, whatever they are. */
static void bound_snap(struct metrics_snap *s)
{
	struct live_metrics *l = &s->live;

#define CLAMP(n, max) ((n) = (n) > (max) ? (max) : (n))
#define TERM(a)	      ((a)[sizeof(a) - 1] = '\0')
	CLAMP(s->npids, LIVE_MAX_PIDS);
	CLAMP(l->nprobes, LIVE_MAX_PROBES);
	CLAMP(l->nalloc, LIVE_MAX_ALLOC);
	CLAMP(l->ncycles, LIVE_MAX_CYCLES);
	CLAMP(l->nrss, LIVE_MAX_PIDS);
	CLAMP(l->ncpu_freq, LIVE_MAX_CPUS);
	CLAMP(l->nzones, LIVE_MAX_ZONES);
	for (size_t i = 0; i < LIVE_MAX_PIDS; i++)
		TERM(s->pids[i].comm);
	for (size_t i = 0; i < LIVE_MAX_PROBES; i++) {
		TERM(l->probes[i].name);
		TERM(l->probes[i].library);
	}
	for (size_t i = 0; i < LIVE_MAX_ALLOC; i++)
		TERM(l->alloc[i].name);
	for (size_t i = 0; i < LIVE_MAX_ZONES; i++)
		TERM(l->zones[i].name);
	TERM(l->slowest_sql);
#undef CLAMP
#undef TERM
}

/* A consistent copy of the published snapshot into srv->snap; the last
 * one stays when the recorder keeps writing (it writes for microseconds
 * every 250 ms: a retry nearly always succeeds). */
static void read_snap(struct server *srv, struct metrics_snap *tmp)
{
	for (int i = 0; i < 200; i++) {
		uint64_t s1 = atomic_load_explicit(&srv->pub->seq, memory_order_acquire), s2;

		if (!(s1 & 1)) {
			memcpy(tmp, (const void *)&srv->pub->snap, sizeof(*tmp));
			atomic_thread_fence(memory_order_acquire);
			s2 = atomic_load_explicit(&srv->pub->seq, memory_order_relaxed);
			if (s1 == s2) {
				memcpy(srv->snap, tmp, sizeof(*tmp));
				break;
			}
		}
		nanosleep(&(struct timespec){ .tv_nsec = 20000 }, NULL);
	}
	bound_snap(srv->snap);
}

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req_cls)
{
	struct server *srv = cls;
	struct metrics_snap *tmp;
	struct conn *cn;
	bool om;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int err;

	(void)version;
	(void)upload;
	/* The first call for a request brings its headers; a body would come
	 * in the following ones. A body is refused from its headers, before
	 * any of it is read (the library answers nothing once a body has
	 * started). */
	if (!*req_cls) {
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_LENGTH);

		*req_cls = srv;
		cn = conn_of(c);
		if (cn)
			cn->request_read = true;
		atomic_fetch_add_explicit(&srv->stats->requests, 1, memory_order_relaxed);
		if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
			return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "GET /metrics only\n");
		if (strcmp(url, "/metrics"))
			return text(c, MHD_HTTP_NOT_FOUND, "GET /metrics only\n");
		if ((cl && strcmp(cl, "0")) ||
		    MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						MHD_HTTP_HEADER_TRANSFER_ENCODING))
			return text(c, MHD_HTTP_CONTENT_TOO_LARGE, "no request body\n");
		/* Answered on the next call, once the (empty) upload is over. */
		return MHD_YES;
	}
	if (*upload_size)
		return MHD_NO; /* a body after all: drop the connection */
	tmp = malloc(sizeof(*tmp));
	if (!tmp)
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	read_snap(srv, tmp);
	free(tmp);
	om = wants_openmetrics(c);
	f = open_memstream(&buf, &len);
	err = f ? metrics_render(srv->snap, om, f) : -ENOMEM;
	if (f && fclose(f))
		err = -EIO;
	if (err) {
		free(buf);
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot render metrics\n");
	}
	return reply(c, MHD_HTTP_OK, om ? CT_OPENMETRICS : CT_PROMETHEUS, buf, len);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct server *srv = cls;
	const union MHD_ConnectionInfo *ci;

	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		struct conn *cn = *socket_context;

		if (cn)
			memset(cn, 0, sizeof(*cn));
		*socket_context = NULL;
		return;
	}
	/* Started: the slot taken at accept, found by its socket. */
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	for (size_t i = 0; ci && i < MAX_TRACKED; i++)
		if (srv->conns[i].used && !srv->conns[i].c && srv->conns[i].fd == ci->connect_fd) {
			srv->conns[i].c = c;
			*socket_context = &srv->conns[i];
			return;
		}
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[256];

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	log_debug("metrics: %s", msg);
}

static void drop(struct conn *cn)
{
	/* The library sees the end of the connection and closes it (then
	 * the slot is freed by on_connection); the fd is still its own. */
	shutdown(cn->fd, SHUT_RDWR);
	cn->dropped = true;
}

/* A new connection: a slot for it, the oldest one still sending its
 * request dropped when all are taken. Returns the slot or NULL. */
static struct conn *take_slot(struct server *srv, uint64_t now)
{
	struct conn *free_slot = NULL, *oldest = NULL;
	size_t live = 0;

	for (size_t i = 0; i < MAX_TRACKED; i++) {
		struct conn *cn = &srv->conns[i];

		if (!cn->used) {
			if (!free_slot)
				free_slot = cn;
			continue;
		}
		if (cn->dropped)
			continue;
		live++;
		if (!cn->request_read && (!oldest || cn->start_ms < oldest->start_ms))
			oldest = cn;
	}
	if (live >= MAX_CONNECTIONS) {
		if (!oldest)
			return NULL; /* all busy answering: the new one waits its turn */
		drop(oldest);
	}
	if (!free_slot)
		return NULL;
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->used = true;
	free_slot->start_ms = now;
	return free_slot;
}

static void accept_all(struct server *srv, struct MHD_Daemon *d, int lfd)
{
	for (int n = 0; n < 64; n++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct conn *cn;

		if (fd < 0)
			return; /* EAGAIN, or an error the next poll retries */
		cn = take_slot(srv, now_ms());
		if (!cn) {
			close(fd);
			continue;
		}
		cn->fd = fd;
		/* The library closes fd on failure; a slot it never announced
		 * is ours to free. */
		if (MHD_add_connection(d, fd, (struct sockaddr *)&ss, sl) != MHD_YES && !cn->c)
			memset(cn, 0, sizeof(*cn));
	}
}

/* Drops the connections past their deadline; returns the ms until the next
 * one (or 1000). */
static int expire(struct server *srv, uint64_t now)
{
	int64_t next = 1000;

	for (size_t i = 0; i < MAX_TRACKED; i++) {
		struct conn *cn = &srv->conns[i];
		uint64_t end;

		if (!cn->used || cn->dropped)
			continue;
		end = cn->start_ms + (cn->request_read ? CONN_DEADLINE_MS : REQUEST_DEADLINE_MS);
		if (now >= end)
			drop(cn);
		else if ((int64_t)(end - now) < next)
			next = (int64_t)(end - now);
	}
	return (int)next;
}

/* What the server process does once serving: libmicrohttpd with epoll
 * polled here, the accepting and the timing, nothing else. */
static const int server_syscalls[] = {
	/* sockets */
	__NR_read,
	__NR_recvfrom,
	__NR_sendto,
	__NR_sendmsg,
	__NR_close,
	__NR_shutdown,
	__NR_accept4,
	__NR_fcntl,
	__NR_setsockopt,
	/* waiting */
	__NR_ppoll,
	__NR_epoll_pwait,
	__NR_epoll_ctl,
	__NR_nanosleep,
	__NR_clock_nanosleep,
	__NR_restart_syscall,
	/* the heap */
	__NR_mmap,
	__NR_munmap,
	__NR_mremap,
	__NR_brk,
	__NR_madvise,
	/* the clock, where the vDSO falls back to the kernel */
	__NR_clock_gettime,
#ifdef __NR_gettimeofday
	__NR_gettimeofday,
#endif
#ifdef __NR_time
	__NR_time,
#endif
/* older calls x86_64 still has */
#ifdef __NR_poll
	__NR_poll,
#endif
#ifdef __NR_epoll_wait
	__NR_epoll_wait,
#endif
};

_Noreturn static void server_main(int lfd, int ctl, int ready, int memfd, size_t pub_len,
				  struct shared_stats *stats, struct shared_snap *rw, uid_t uid,
				  gid_t gid, pid_t parent)
{
	struct sched_param sp = { 0 };
	struct ready_msg msg = { 0, 0 };
	struct server srv = { .stats = stats };
	struct MHD_Daemon *d = NULL;
	const union MHD_DaemonInfo *di;
	int keep[4] = { lfd, ctl, ready, memfd }, efd;
	char why[128] = "";
	void *ro;

	prctl(PR_SET_NAME, "ebpf-prof-http", 0, 0, 0);
	/* Not the recorder's real-time priority, not its signals: a Ctrl-C
	 * reaches the whole process group; the recorder ends this process
	 * by closing the stop pipe. */
	sched_setscheduler(0, SCHED_OTHER, &sp);
	setpriority(PRIO_PROCESS, 0, 0);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGCHLD, SIG_DFL);
	{
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
	}
	msg.err = sandbox_close_fds(keep, 4);
	if (msg.err) {
		snprintf(why, sizeof(why), "closing descriptors: %s", strerror(-msg.err));
		goto fail;
	}
	lfd = keep[0];
	ctl = keep[1];
	ready = keep[2];
	memfd = keep[3];
	/* The recorder's mapping is writable: replaced by a read-only one
	 * (the memfd is sealed against new writable mappings). */
	munmap(rw, pub_len);
	ro = mmap(NULL, pub_len, PROT_READ, MAP_SHARED, memfd, 0);
	close(memfd);
	if (ro == MAP_FAILED) {
		msg.err = -errno;
		snprintf(why, sizeof(why), "mapping the snapshot: %s", strerror(errno));
		goto fail;
	}
	srv.pub = ro;
	srv.snap = calloc(1, sizeof(*srv.snap));
	if (!srv.snap) {
		msg.err = -ENOMEM;
		snprintf(why, sizeof(why), "out of memory");
		goto fail;
	}
	live_metrics_init(&srv.snap->live);
	msg.err = sandbox_drop_privileges(uid, gid, why, sizeof(why));
	if (msg.err)
		goto fail;
	/* Cleared by the change of ids above, so set after it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != parent)
		_exit(0);
	d = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ERROR_LOG, 0, NULL,
			     NULL, on_request, &srv, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
			     MHD_OPTION_NOTIFY_CONNECTION, on_connection, &srv,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_TRACKED,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY_LIMIT,
			     MHD_OPTION_END);
	di = d ? MHD_get_daemon_info(d, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
	if (!di) {
		msg.err = -ENOMEM;
		snprintf(why, sizeof(why), "libmicrohttpd did not start");
		goto fail;
	}
	efd = di->epoll_fd;
	/* The Date header reads the time zone once (/etc/localtime): before
	 * the filter, which allows no open. */
	tzset();
	msg.seccomp = sandbox_seccomp(server_syscalls,
				      sizeof(server_syscalls) / sizeof(server_syscalls[0]));
	if (msg.seccomp && msg.seccomp != -ENOSYS) {
		msg.err = msg.seccomp;
		snprintf(why, sizeof(why), "seccomp filter: %s", strerror(-msg.seccomp));
		goto fail;
	}
	(void)!write(ready, &msg, sizeof(msg));
	close(ready);
	for (;;) {
		struct pollfd p[3] = { { lfd, POLLIN, 0 }, { efd, POLLIN, 0 }, { ctl, POLLIN, 0 } };
		MHD_UNSIGNED_LONG_LONG mt;
		int timeout = expire(&srv, now_ms());

		if (MHD_get_timeout(d, &mt) == MHD_YES && mt < (MHD_UNSIGNED_LONG_LONG)timeout)
			timeout = (int)mt;
		if (poll(p, 3, timeout) < 0 && errno != EINTR)
			break;
		if (p[2].revents)
			break; /* the recorder closed the stop pipe (or is gone) */
		if (p[0].revents & POLLIN)
			accept_all(&srv, d, lfd);
		expire(&srv, now_ms());
		MHD_run(d);
	}
	_exit(0);
fail:
	log_error("metrics: the HTTP server process cannot start: %s", why);
	(void)!write(ready, &msg, sizeof(msg));
	_exit(1);
}

/* ---- the recorder's side ---- */

static int listen_on(const struct sockaddr_storage *ss, socklen_t len)
{
	int one = 1, fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)ss, len) || listen(fd, 64)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* Collects the server process if it has ended; an end before the stop is
 * logged (scrapes fail from then on). */
static void reap(struct metrics_server *m, bool block, bool stopping)
{
	int status = 0;
	pid_t w;

	if (m->pid <= 0)
		return;
	w = waitpid(m->pid, &status, block ? 0 : WNOHANG);
	if (w != m->pid)
		return;
	m->pid = 0;
	if (stopping)
		return;
	if (WIFSIGNALED(status))
		log_warn("metrics: the HTTP server process was ended by signal %d: no more scrapes",
			 WTERMSIG(status));
	else
		log_warn("metrics: the HTTP server process exited (status %d): no more scrapes",
			 WEXITSTATUS(status));
}

static void unmap(struct metrics_server *m)
{
	if (m->pub)
		munmap(m->pub, m->pub_len);
	if (m->stats)
		munmap(m->stats, sizeof(*m->stats));
}

/* The ready message, then the end of the pipe (the server process has
 * closed its end: it holds only what it serves with), within
 * READY_TIMEOUT_MS each. */
static int wait_ready(int fd, struct ready_msg *msg)
{
	struct pollfd p = { fd, POLLIN, 0 };
	size_t got = 0;
	ssize_t n;
	char c;
	int r;

	for (;;) {
		do
			r = poll(&p, 1, READY_TIMEOUT_MS);
		while (r < 0 && errno == EINTR);
		if (r <= 0)
			return -ETIMEDOUT;
		if (got < sizeof(*msg))
			n = read(fd, (char *)msg + got, sizeof(*msg) - got);
		else
			n = read(fd, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return got == sizeof(*msg) ? 0 : -EPIPE;
		got += (size_t)n;
	}
}

int metrics_server_start(struct metrics_server **out, const char *addr)
{
	struct sockaddr_storage ss;
	struct metrics_server *m;
	struct ready_msg msg;
	socklen_t len;
	bool loopback;
	char why[128];
	int lfd, memfd = -1, ctl[2] = { -1, -1 }, rdy[2] = { -1, -1 }, err;
	uid_t uid;
	gid_t gid;
	pid_t parent = getpid();

	*out = NULL;
	if (metrics_parse_addr(addr, &ss, &len, &loopback, why, sizeof(why))) {
		log_error("--metrics %s: %s", addr, why);
		return -EINVAL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->ctl_fd = -1;
	lfd = listen_on(&ss, len);
	if (lfd < 0) {
		log_error("--metrics %s: cannot listen there: %s (address in use, or not an "
			  "address of this machine?)",
			  addr, strerror(-lfd));
		free(m);
		return -EADDRNOTAVAIL;
	}
	m->pub_len = (sizeof(*m->pub) + 4095) & ~(size_t)4095;
	memfd = (int)syscall(SYS_memfd_create, "ebpf-prof-metrics",
			     MFD_CLOEXEC | MFD_ALLOW_SEALING);
	err = memfd < 0 ? -errno : 0;
	if (!err && ftruncate(memfd, (off_t)m->pub_len))
		err = -errno;
	if (!err) {
		m->pub = mmap(NULL, m->pub_len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
		if (m->pub == MAP_FAILED) {
			m->pub = NULL;
			err = -errno;
		}
	}
	/* No writable mapping or write() from now on, but ours. */
	if (!err && fcntl(memfd, F_ADD_SEALS,
			  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL))
		err = -errno;
	if (!err) {
		m->stats = mmap(NULL, sizeof(*m->stats), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (m->stats == MAP_FAILED) {
			m->stats = NULL;
			err = -errno;
		}
	}
	if (!err && (pipe2(ctl, O_CLOEXEC) || pipe2(rdy, O_CLOEXEC)))
		err = -errno;
	if (err) {
		log_error("metrics: cannot set up the server process: %s", strerror(-err));
		goto fail;
	}
	live_metrics_init(&m->pub->snap.live);
	sandbox_pick_ids(&uid, &gid);
	fflush(stderr);
	m->pid = fork();
	if (m->pid == 0) {
		close(ctl[1]);
		close(rdy[0]);
		server_main(lfd, ctl[0], rdy[1], memfd, m->pub_len, m->stats, m->pub, uid, gid,
			    parent);
	}
	if (m->pid < 0) {
		err = -errno;
		m->pid = 0;
		log_error("metrics: cannot start the server process: %s", strerror(-err));
		goto fail;
	}
	close(lfd);
	lfd = -1;
	close(memfd);
	memfd = -1;
	close(ctl[0]);
	close(rdy[1]);
	m->ctl_fd = ctl[1];
	err = wait_ready(rdy[0], &msg);
	close(rdy[0]);
	if (!err)
		err = msg.err;
	if (err) {
		if (err == -ETIMEDOUT || err == -EPIPE)
			log_error("metrics: the HTTP server process did not start (%s)",
				  strerror(-err));
		metrics_server_stop(m);
		return err;
	}
	if (msg.seccomp)
		log_info("metrics: this kernel has no seccomp filters: the HTTP server process "
			 "runs without a system call allowlist");
	if (!loopback)
		log_warn("metrics: serving on %s, a non-loopback address: anyone who can reach it "
			 "reads the metrics (use 127.0.0.1 unless a scraper elsewhere needs them)",
			 addr);
	log_info("metrics: serving http://%s/metrics", addr);
	log_debug("metrics: HTTP server process %d, uid %u, no capabilities", (int)m->pid,
		  (unsigned)uid);
	*out = m;
	return 0;
fail:
	if (lfd >= 0)
		close(lfd);
	if (memfd >= 0)
		close(memfd);
	for (int i = 0; i < 2; i++) {
		if (ctl[i] >= 0)
			close(ctl[i]);
		if (rdy[i] >= 0)
			close(rdy[i]);
	}
	unmap(m);
	free(m);
	return err;
}

static void publish(struct metrics_server *m)
{
	/* A seqlock writer: odd while the copy is under way. This side never
	 * reads the mapping, so what the other process could do to it
	 * changes nothing here. */
	atomic_store_explicit(&m->pub->seq, ++m->seq, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	memcpy(&m->pub->snap, &m->stage, sizeof(m->stage));
	atomic_store_explicit(&m->pub->seq, ++m->seq, memory_order_release);
}

void metrics_server_update(struct metrics_server *m, const struct live_metrics *l,
			   const struct profile *p, const struct run_info *ri, uint64_t now_ns)
{
	if (!m || now_ns < m->next_ns)
		return;
	m->next_ns = now_ns + PUBLISH_PERIOD_NS;
	reap(m, false, false);
	metrics_snap_fill(&m->stage, l, p, ri);
	for (size_t i = 0; i < m->stage.npids; i++)
		for (size_t k = 0; k < m->nbase; k++)
			if (m->base[k].pid == m->stage.pids[i].pid)
				m->stage.pids[i].samples += m->base[k].samples;
	publish(m);
}

void metrics_server_fold(struct metrics_server *m, const struct profile *p)
{
	if (!m)
		return;
	for (size_t t = 0; t < p->nthreads; t++) {
		size_t k;

		for (k = 0; k < m->nbase; k++)
			if (m->base[k].pid == p->threads[t].pid)
				break;
		if (k == m->nbase) {
			if (m->nbase == sizeof(m->base) / sizeof(m->base[0]))
				continue; /* beyond what is exported anyway */
			m->base[m->nbase++] = (struct metrics_pid){ .pid = p->threads[t].pid };
		}
		m->base[k].samples += p->threads[t].samples;
	}
	/* Published at the next update, with the fresh profile's counts. */
	m->next_ns = 0;
}

uint64_t metrics_server_requests(struct metrics_server *m)
{
	return atomic_load_explicit(&m->stats->requests, memory_order_relaxed);
}

pid_t metrics_server_pid(const struct metrics_server *m)
{
	return m ? m->pid : 0;
}

void metrics_server_stop(struct metrics_server *m)
{
	if (!m)
		return;
	if (m->ctl_fd >= 0)
		close(m->ctl_fd);
	for (int i = 0; m->pid > 0 && i < STOP_TIMEOUT_MS / 10; i++) {
		reap(m, false, true);
		if (m->pid > 0)
			nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	}
	if (m->pid > 0) {
		kill(m->pid, SIGKILL);
		reap(m, true, true);
	}
	unmap(m);
	free(m);
}
