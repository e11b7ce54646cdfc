// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The HTTP side of the metrics endpoint (metrics.h), on libmicrohttpd.
 *
 * We run as root: the endpoint answers GET (and HEAD) of exactly /metrics
 * and nothing else - no other path, no files, no request body - with a
 * small connection limit, short timeouts and a per-connection memory limit
 * that bounds the request (headers beyond it get 431 from the library).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "export/metrics.h"
#include "util/log.h"

#define PUBLISH_PERIOD_NS (250 * 1000000ull)
#define MAX_CONNECTIONS	  8
#define CONN_TIMEOUT_S	  5
#define CONN_MEMORY_LIMIT 8192 /* request line + headers, bytes */
#define CT_PROMETHEUS	  "text/plain; version=0.0.4; charset=utf-8"
#define CT_OPENMETRICS	  "application/openmetrics-text; version=1.0.0; charset=utf-8"

struct metrics_server {
	struct MHD_Daemon *d;
	pthread_mutex_t lock;
	struct metrics_snap pub;   /* under lock: what scrapes read */
	struct metrics_snap stage; /* recorder thread only */
	uint64_t next_ns;
	uint64_t requests; /* under lock */
	/* Samples of profiles rotated out, per pid (recorder thread). */
	struct metrics_pid base[2 * LIVE_MAX_PIDS];
	size_t nbase;
};

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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req_cls)
{
	struct metrics_server *m = cls;
	struct metrics_snap *snap;
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

		*req_cls = m;
		pthread_mutex_lock(&m->lock);
		m->requests++;
		pthread_mutex_unlock(&m->lock);
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
	snap = malloc(sizeof(*snap));
	if (!snap)
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	pthread_mutex_lock(&m->lock);
	memcpy(snap, &m->pub, sizeof(*snap));
	pthread_mutex_unlock(&m->lock);
	om = wants_openmetrics(c);
	f = open_memstream(&buf, &len);
	err = f ? metrics_render(snap, om, f) : -ENOMEM;
	if (f && fclose(f))
		err = -EIO;
	free(snap);
	if (err) {
		free(buf);
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot render metrics\n");
	}
	return reply(c, MHD_HTTP_OK, om ? CT_OPENMETRICS : CT_PROMETHEUS, buf, len);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[256];

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	log_debug("metrics: %s", msg);
}

int metrics_server_start(struct metrics_server **out, const char *addr)
{
	struct sockaddr_storage ss;
	struct metrics_server *m;
	socklen_t len;
	bool loopback;
	char why[128];
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;

	*out = NULL;
	if (metrics_parse_addr(addr, &ss, &len, &loopback, why, sizeof(why))) {
		log_error("--metrics %s: %s", addr, why);
		return -EINVAL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	pthread_mutex_init(&m->lock, NULL);
	live_metrics_init(&m->pub.live);
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	m->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, m, MHD_OPTION_EXTERNAL_LOGGER,
				mhd_log, NULL, MHD_OPTION_SOCK_ADDR, &ss,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)MAX_CONNECTIONS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONN_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY_LIMIT,
				MHD_OPTION_END);
	if (!m->d) {
		log_error("--metrics %s: cannot listen there (address in use, or not an "
			  "address of this machine?)",
			  addr);
		pthread_mutex_destroy(&m->lock);
		free(m);
		return -EADDRNOTAVAIL;
	}
	if (!loopback)
		log_warn("metrics: serving on %s, a non-loopback address: anyone who can reach it "
			 "reads the metrics (use 127.0.0.1 unless a scraper elsewhere needs them)",
			 addr);
	log_info("metrics: serving http://%s/metrics", addr);
	*out = m;
	return 0;
}

void metrics_server_update(struct metrics_server *m, const struct live_metrics *l,
			   const struct profile *p, const struct run_info *ri, uint64_t now_ns)
{
	if (!m || now_ns < m->next_ns)
		return;
	m->next_ns = now_ns + PUBLISH_PERIOD_NS;
	/* Filled outside the lock; the lock covers one memcpy. */
	metrics_snap_fill(&m->stage, l, p, ri);
	for (size_t i = 0; i < m->stage.npids; i++)
		for (size_t k = 0; k < m->nbase; k++)
			if (m->base[k].pid == m->stage.pids[i].pid)
				m->stage.pids[i].samples += m->base[k].samples;
	pthread_mutex_lock(&m->lock);
	memcpy(&m->pub, &m->stage, sizeof(m->pub));
	pthread_mutex_unlock(&m->lock);
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
	uint64_t n;

	pthread_mutex_lock(&m->lock);
	n = m->requests;
	pthread_mutex_unlock(&m->lock);
	return n;
}

void metrics_server_stop(struct metrics_server *m)
{
	if (!m)
		return;
	MHD_stop_daemon(m->d);
	pthread_mutex_destroy(&m->lock);
	free(m);
}
