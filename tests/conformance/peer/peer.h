/* SPDX-License-Identifier: MIT */
/*
 * peer.h - the small set of RDMA operations the conformance test peer needs,
 * implemented twice: peer_ibv.c on rdma-core (libibverbs + librdmacm; the
 * siw_peer binary, run in the VM over siw0) and peer_uiw.c on uiw_verbs.h
 * (the uiw_peer binary, run on the host).  peer.c holds the scenarios and
 * is the same source for both, so both ends run the same script.
 *
 * One process = one connection.  Every function returns 0 or -errno unless
 * said otherwise.
 */
#ifndef PEER_H
#define PEER_H

#include <stddef.h>
#include <stdint.h>

/* connection options; the rdma-core back end ignores what siw's module
 * parameters decide (CRC, MPA revision, markers, p2p) */
struct popts {
	int crc;	/* -1: library default, 0: off, 1: on */
	int mpa_rev;	/* 0: default */
	int markers;	/* 1: ask for markers */
	int p2p;	/* 1: RFC 6581 peer-to-peer */
	unsigned rtr;	/* P_RTR_* offered (0: default) */
	int ird, ord;	/* 0: default */
	int max_sge;	/* per WR */
	int sq, rq;	/* queue depths */
	int fpdu_delay; /* ms, initiator's first FPDU delay (uiwarp) */
	int rfc7306;	/* uiwarp: the QP uses RFC 7306 (atomics, immediates) */
};
#define P_RTR_SEND 0x1
#define P_RTR_WRITE 0x2
#define P_RTR_READ 0x4

struct pmr {
	void *addr;
	size_t len;
	uint32_t lkey, rkey;
	void *h;
};
#define P_ACC_LW 0x1
#define P_ACC_RW 0x2
#define P_ACC_RR 0x4

enum pev_type {
	P_EV_TIMEOUT = 0,
	P_EV_REQUEST,
	P_EV_ESTABLISHED,
	P_EV_REJECTED,
	P_EV_CONNECT_ERROR,
	P_EV_UNREACHABLE,
	P_EV_DISCONNECTED,
	P_EV_OTHER
};

struct pev {
	enum pev_type type;
	char name[40];	/* the library's own name of the event */
	int status;
	uint8_t pd[512];
	int pdlen;
	int ird, ord;	/* peer's announced IRD/ORD, -1 unknown */
	int term_flags; /* uiwarp: 1 sent, 2 received; -1 unknown */
	int term_layer, term_etype, term_ecode;
};

struct psge {
	void *addr;
	uint32_t len;
	uint32_t lkey;
};

enum pop { P_WRITE, P_READ, P_SEND, P_SEND_INV, P_ATOMIC_FADD /* RFC 7306 FetchAdd of 1: one 8-octet SGE */ };
#define P_F_SIGNALED 0x1
#define P_F_SOLICITED 0x2

struct pwc {
	uint64_t id;
	int status;
	char status_str[48];
	int opcode; /* P_WC_* */
	uint32_t byte_len;
	int with_inv;
	uint32_t inv_rkey;
	int solicited; /* -1: the library does not say */
	int term;      /* 1: term_* valid */
	int term_layer, term_etype, term_ecode;
};
enum { P_WC_SEND, P_WC_WRITE, P_WC_READ, P_WC_RECV, P_WC_OTHER };

extern const char *p_impl; /* "siw" or "uiw" */

int p_init(int server, const char *addr, int port, const struct popts *o);
int p_reg(size_t len, int access, struct pmr *mr);
void p_dereg(struct pmr *mr);
/* client: create the QP (after p_init, before p_connect) */
int p_client_qp(void);
/* server: wait for a CONNECT_REQUEST (ev->type P_EV_REQUEST, or timeout);
 * creates the QP for it */
int p_wait_request(struct pev *ev, int timeout_ms);
int p_accept(const void *pd, int len, struct pev *ev, int timeout_ms);
int p_reject(const void *pd, int len);
/* client: connect, wait for the outcome (ESTABLISHED, REJECTED, ...) */
int p_connect(const void *pd, int len, struct pev *ev, int timeout_ms);
int p_post_recv(uint64_t id, struct psge *sg, int n);
int p_post_send(uint64_t id, enum pop op, struct psge *sg, int n, uint64_t raddr, uint32_t rkey,
		uint32_t inv, unsigned flags);
/* one completion within timeout_ms: 1, 0 on timeout, -errno */
int p_poll(struct pwc *wc, int timeout_ms);
int p_arm(int solicited_only);
/* 1: a CQ event came, 0: timeout */
int p_wait_cq_event(int timeout_ms);
int p_disconnect(void);
/* next CM event (after ESTABLISHED: DISCONNECTED); ev->type P_EV_TIMEOUT on timeout */
int p_next_event(struct pev *ev, int timeout_ms);
void p_fini(void);

#endif
