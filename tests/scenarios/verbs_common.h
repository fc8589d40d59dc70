/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The verbs setup that the scenario programs (rxe_local_ops.c and
 * rxe_rc_retry.c between the guests, rxe_limits.c on one device looped back
 * to itself) share: the device opened by name, the QP numbers and GID
 * exchanged over TCP, an RC QP taken to INIT and then to RTR and RTS
 * towards the peer's QP, a completion awaited with a time bound. Static
 * inline, so that a program using part of it builds with -Wall -Werror.
 */
#ifndef VERBS_COMMON_H
#define VERBS_COMMON_H

#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define die(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

/* The device named `name`, opened. */
static inline struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("no device %s", name);
	ibv_free_device_list(list);
	return ctx;
}

/*
 * The server listens on TCP `port` and the client connects to `peer`
 * (retrying for 30 s); each sends `len` bytes of `mine` and receives the
 * peer's into `theirs`. The connected socket stays for later steps.
 */
static inline int tcp_exchange(int server, const char *peer, int port,
			       const void *mine, void *theirs, size_t len)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int s, one = 1, i;

	s = socket(AF_INET, SOCK_STREAM, 0);
	if (server) {
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		a.sin_addr.s_addr = INADDR_ANY;
		if (bind(s, (void *)&a, sizeof(a)) || listen(s, 1))
			die("listen: %s", strerror(errno));
		int c = accept(s, NULL, NULL);
		close(s);
		s = c;
	} else {
		inet_pton(AF_INET, peer, &a.sin_addr);
		for (i = 0; connect(s, (void *)&a, sizeof(a)); i++) {
			if (i == 300)
				die("connect: %s", strerror(errno));
			close(s);
			s = socket(AF_INET, SOCK_STREAM, 0);
			usleep(100000);
		}
	}
	if (write(s, mine, len) != (ssize_t)len ||
	    read(s, theirs, len) != (ssize_t)len)
		die("exchange failed");
	return s;
}

/* Sends (`send`) or receives `len` bytes on the exchange's socket. */
static inline void xfer(int s, void *p, size_t len, int send)
{
	if (send ? write(s, p, len) != (ssize_t)len :
		   read(s, p, len) != (ssize_t)len)
		die("the peer is gone");
}

/* A one-byte step between the programs: sent, or awaited. */
static inline void sync_byte(int s, int send)
{
	char c = 'x';

	xfer(s, &c, 1, send);
}

/* A new QP to INIT on port 1 with `access` for the peer. */
static inline void qp_to_init(struct ibv_qp *qp, unsigned int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = access,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify INIT: %s", strerror(errno));
}

/*
 * An RC QP in INIT to RTR and RTS towards QP `dqpn` at `gid` (from GID
 * index `gidx`), PSNs 0, path MTU 1024, `rd_atomic` reads/atomics in
 * flight each way, the RNR NAK timer code `min_rnr` it answers with, and
 * its requester's `timeout`, `retry` and `rnr_retry`.
 */
static inline void qp_to_rts(struct ibv_qp *qp, uint32_t dqpn,
			     const union ibv_gid *gid, int gidx, int rd_atomic,
			     int min_rnr, int timeout, int retry, int rnr_retry)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn, .rq_psn = 0,
		.max_dest_rd_atomic = rd_atomic, .min_rnr_timer = min_rnr,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *gid, .sgid_index = gidx,
				      .hop_limit = 1 } },
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = timeout;
	a.retry_cnt = retry;
	a.rnr_retry = rnr_retry;
	a.sq_psn = 0;
	a.max_rd_atomic = rd_atomic;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify RTS: %s", strerror(errno));
}

/* One completion of `cq` within `seconds`, or exit. */
static inline struct ibv_wc poll_one(struct ibv_cq *cq, int seconds,
				     const char *what)
{
	struct timespec t0, t;
	struct ibv_wc wc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			die("%s: poll_cq failed", what);
		if (n == 1)
			return wc;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > seconds)
			die("FAIL %s: no completion in %d s", what, seconds);
		usleep(1000);
	}
}

#endif
