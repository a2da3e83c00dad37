/* SPDX-License-Identifier: MIT */
/*
 * The shim's mutexes, each with its rank in the lock order
 * (docs/LOCKING.md): a thread takes a lock only while every lock it holds
 * has a lower rank.  Builds with UIW_LOCK_CHECK (every sanitizer build:
 * make check SAN=..., make check-tsan) record per thread the ranks held
 * and abort on an acquisition out of order, naming both ranks, before it
 * can deadlock; other builds compile the record away.  Ranks of equal
 * value are never held together.
 */
#ifndef UIW_LOCK_H
#define UIW_LOCK_H

#include <pthread.h>

enum uiw_lock_rank {
	UIW_LK_CTX = 1,	  /* struct uiw_context.lock: object lifetimes, CM calls */
	UIW_LK_ENG = 2,	  /* struct uiw_engine.lock: its ids, connections, QPs;
			   * several at once in the order of their index */
	UIW_LK_INBOX = 3, /* struct uiw_engine.inbox_lock: ids handed to it */
	UIW_LK_SRQ = 4,	  /* struct uiw_srq.lock: its queue */
	UIW_LK_CQ = 5,	  /* struct uiw_cq.lock: its ring and arming */
	UIW_LK_CCH = 6,	  /* struct uiw_channel_int.lock: a completion channel's queue */
	UIW_LK_EVCH = 7,  /* struct uiw_event_channel.lock: a CM event queue */
	UIW_LK_QPN = 8	  /* the process's table of QP numbers */
};

#ifdef UIW_LOCK_CHECK
/* abort() with a message unless the calling thread holds no lock of rank
 * >= @rank; then record @rank as held */
void lk_note(unsigned rank);
/* @rank is no longer held (abort() if it was not) */
void lk_unnote(unsigned rank);
/* the ranks the calling thread holds, one bit each */
unsigned lk_held(void);
/* engine @idx's lock (rank UIW_LK_ENG): abort() unless no lock of a higher
 * rank and no engine lock of index >= @idx is held */
void lk_note_eng(unsigned idx);
void lk_unnote_eng(unsigned idx);
#else
static inline void lk_note(unsigned rank)
{
	(void)rank;
}
static inline void lk_unnote(unsigned rank)
{
	(void)rank;
}
static inline unsigned lk_held(void)
{
	return 0;
}
static inline void lk_note_eng(unsigned idx)
{
	(void)idx;
}
static inline void lk_unnote_eng(unsigned idx)
{
	(void)idx;
}
#endif

static inline void lk_lock(pthread_mutex_t *m, unsigned rank)
{
	lk_note(rank);
	pthread_mutex_lock(m);
}

static inline void lk_unlock(pthread_mutex_t *m, unsigned rank)
{
	lk_unnote(rank);
	pthread_mutex_unlock(m);
}

#endif /* UIW_LOCK_H */
