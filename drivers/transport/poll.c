// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The send queue poller, opt-in (sq_poll_us, off by default), rather like
 * io_uring's SQPOLL.  A user doorbell normally runs its QP's pass in its
 * own syscall, so a stream of small posts does all the engine's work on
 * the poster's CPU while another idles.  With a poller, a doorbell that
 * comes soon after the previous one hands the QP to a work item on
 * another CPU the poster may use; that item runs the passes and then
 * watches for the next doorbell instead of sleeping, so later doorbells
 * cost only their syscall.  It goes only to a CPU that has been idling,
 * yields to any task that wants its CPU, gives way (and keeps off that QP
 * for a while) when kept off it or when it finds too little to do, and
 * leaves after sq_poll_us without a doorbell or when the QP leaves RTS.
 * At most one poller per online CPU but one runs; the time it spins is
 * charged to no cgroup, which is why only root may turn it on.
 */
#include <linux/module.h>
#include <linux/sched/clock.h>
#include <linux/sched/stat.h>
#include <linux/tick.h>

#include "sroce/transport.h"

static unsigned int sroce_sq_poll_us;
module_param_named(sq_poll_us, sroce_sq_poll_us, uint, 0644);
MODULE_PARM_DESC(sq_poll_us,
		 "poll a streaming user QP's send queue on another CPU, for up to this many idle microseconds (0: off, at most 10000)");

#define SROCE_SQ_POLL_MAX_US	10000
/* a poller that has not looked for this long may be off its CPU */
#define SROCE_SQ_POLL_STALE_NS	(200 * NSEC_PER_USEC)
/* a poller gives way when it was away this long */
#define SROCE_SQ_POLL_AWAY_NS	(500 * NSEC_PER_USEC)
/* how long a CPU's idle time is watched before a poller may go there */
#define SROCE_SQ_POLL_IDLE_WINDOW_US	1000
/* a poller that took fewer doorbells had nothing to do */
#define SROCE_SQ_POLL_MIN_TAKEN	16
/* how long one poller runs at most */
#define SROCE_SQ_POLL_RUN_NS	(10 * NSEC_PER_MSEC)
/* no poller for a QP whose poller gave way, at first for this long */
#define SROCE_SQ_POLL_BACKOFF_MS	20
#define SROCE_SQ_POLL_BACKOFF_MAX_MS	1000

static atomic_t sroce_sq_pollers = ATOMIC_INIT(0);

/* sq_poll_us as read now, clamped: root may change it at any time */
static u64 sroce_sq_poll_window_ns(void)
{
	return (u64)min_t(unsigned int, READ_ONCE(sroce_sq_poll_us),
			  SROCE_SQ_POLL_MAX_US) * NSEC_PER_USEC;
}

static void sroce_sq_poll_ring(struct sroce_qp *qp)
{
	/* the ring's producer index, stored before the syscall, then the bits */
	smp_mb__before_atomic();
	set_bit(SROCE_QPEV_DOORBELL, &qp->events);
	set_bit(SROCE_QPEV_KICK, &qp->events);
	smp_mb__after_atomic();	/* pairs with the poller's smp_mb() on leaving */
}

/* Another online CPU that the poster may run on, or nr_cpu_ids. */
static int sroce_sq_poll_cpu(struct sroce_qp *qp)
{
	const struct cpumask *allowed = current->cpus_ptr;
	int me = raw_smp_processor_id(), cpu;

	if (qp->cpu != me && cpu_online(qp->cpu) &&
	    cpumask_test_cpu(qp->cpu, allowed))
		return qp->cpu;
	/* the next one after ours: pollers do not all pile up on CPU 0 */
	cpu = cpumask_next_and(me, allowed, cpu_online_mask);
	if (cpu >= nr_cpu_ids)
		cpu = cpumask_first_and(allowed, cpu_online_mask);
	return cpu == me ? nr_cpu_ids : cpu;
}

/* Each time a poller gives way, its QP waits longer for the next one. */
static void sroce_sq_poll_back_off(struct sroce_qp *qp)
{
	unsigned int ms = clamp(2 * READ_ONCE(qp->poll_backoff_ms),
				SROCE_SQ_POLL_BACKOFF_MS,
				SROCE_SQ_POLL_BACKOFF_MAX_MS);

	sroce_qp_count(qp, SROCE_CNT_SQ_POLL_BACKOFF);
	WRITE_ONCE(qp->poll_backoff_ms, ms);
	WRITE_ONCE(qp->poll_backoff, jiffies + msecs_to_jiffies(ms));
}

static void sroce_sq_poll_work(struct work_struct *work)
{
	struct sroce_qp *qp = container_of(work, struct sroce_qp, poll_work);
	struct sroce_qp *next, *rest = NULL;
	u64 now, last = local_clock(), look = last, start = last;
	unsigned int spins = 0;
	bool owed = false;

	WRITE_ONCE(qp->poll_taken, 0);
	WRITE_ONCE(qp->poll_seen, last);
	for (;;) {
		if (owed || test_bit(SROCE_QPEV_KICK, &qp->events)) {
			/*
			 * Whoever holds eng_lock meanwhile sees the KICKs, and
			 * a pass the chain owes us comes back as one.
			 */
			WRITE_ONCE(qp->poll_seen, U64_MAX);
			mutex_lock(&qp->eng_lock);
			next = sroce_engine_run_owed(qp, &owed);
			last = local_clock();
			if (rest && next == rest) {
				/* the chain left over goes on from here */
				sroce_qp_count(qp, SROCE_CNT_SQ_POLL_CHAINED);
				sroce_qp_put(rest);
				rest = NULL;
			}
			sroce_engine_chain(next, false, rest ? NULL : &rest);
			look = local_clock();
			WRITE_ONCE(qp->poll_seen, look);
		} else if (rest) {
			/*
			 * A stream of requests and their responses or ACKs
			 * chains on past the hop bound: the peer left over is
			 * run here, not queued to a worker that would take
			 * turns with us on this CPU or with the poster on its.
			 */
			next = rest;
			rest = NULL;
			sroce_qp_count(qp, SROCE_CNT_SQ_POLL_CHAINED);
			WRITE_ONCE(qp->poll_seen, U64_MAX);
			sroce_engine_chain(next, false, &rest);
			last = look = local_clock();
			WRITE_ONCE(qp->poll_seen, last);
		}
		if (READ_ONCE(qp->dying) || READ_ONCE(qp->state) != IB_QPS_RTS)
			break;
		/*
		 * Another task waits for this CPU: let it run now.  The
		 * scheduler need not preempt us for milliseconds, nor pick
		 * it in schedule() (a worker that ran a lot itself).  If it
		 * keeps us off for long (or anything else did), it wants the
		 * CPU more: give way.
		 */
		if (!single_task_running())
			yield();
		else
			cond_resched_tasks_rcu_qs();
		if (++spins & 15)
			continue;
		now = local_clock();
		if (now - look > SROCE_SQ_POLL_AWAY_NS) {
			sroce_sq_poll_back_off(qp);
			break;
		}
		if (!owed && !rest && now - last > sroce_sq_poll_window_ns()) {
			/* too few doorbells came to it: a ping-pong, not a stream */
			if (READ_ONCE(qp->poll_taken) < SROCE_SQ_POLL_MIN_TAKEN)
				sroce_sq_poll_back_off(qp);
			else
				WRITE_ONCE(qp->poll_backoff_ms, 0);
			break;
		}
		/* bounded: the next doorbell starts another, on a CPU it may use */
		if (now - start > SROCE_SQ_POLL_RUN_NS) {
			WRITE_ONCE(qp->poll_renew, true);
			break;
		}
		look = now;
		WRITE_ONCE(qp->poll_seen, now);
		cpu_relax();
	}
	if (rest) {
		sroce_qp_sched(rest);
		sroce_qp_put(rest);
	}
	WRITE_ONCE(qp->poll_seen, 0);
	clear_bit_unlock(0, &qp->poll_active);	/* after the backoff and seen */
	smp_mb__after_atomic();	/* our flag, then the doorbells' KICK */
	atomic_dec(&sroce_sq_pollers);
	if (owed || test_bit(SROCE_QPEV_KICK, &qp->events))
		sroce_qp_sched(qp);
}

/*
 * Did @cpu idle for most of the last millisecond or more (the kernel's
 * idle accounting)?  A CPU busy with a consumer's polling loop or another
 * stream gains nothing from a poller that would take turns with it.
 */
static bool sroce_sq_poll_cpu_idles(struct sroce_qp *qp, int cpu, u64 now)
{
	u64 wall, idle;
	s64 di, dw;
	bool idles;

	/* too short a look yet: not even the clock read */
	if (READ_ONCE(qp->idle_cpu) == cpu &&
	    now - READ_ONCE(qp->idle_look) < SROCE_SQ_POLL_IDLE_WINDOW_US * NSEC_PER_USEC)
		return false;
	/* no &wall: on 6.1 that makes it write the other CPU's idle stats */
	idle = get_cpu_idle_time_us(cpu, NULL);
	if (idle == (u64)-1)
		return true;	/* no accounting: the poller's own checks decide */
	wall = ktime_to_us(ktime_get());
	/* signed: a racy read (or two posting threads) may go backwards */
	di = idle - READ_ONCE(qp->idle_us);
	dw = wall - READ_ONCE(qp->idle_wall);
	idles = READ_ONCE(qp->idle_cpu) == cpu && dw > 0 &&
		dw < 100 * USEC_PER_MSEC && di > 0 && 2 * di > dw;
	WRITE_ONCE(qp->idle_look, now);
	WRITE_ONCE(qp->idle_cpu, cpu);
	WRITE_ONCE(qp->idle_us, idle);
	WRITE_ONCE(qp->idle_wall, wall);
	return idles;
}

static void sroce_sq_poll_start(struct sroce_qp *qp, u64 now)
{
	u64 prev = READ_ONCE(qp->last_doorbell);
	int cpu;

	WRITE_ONCE(qp->last_doorbell, now);
	/* a lone post runs in its syscall: a wakeup costs more than its pass */
	if (now - prev > sroce_sq_poll_window_ns()) {
		WRITE_ONCE(qp->poll_renew, false);	/* a new stream: look again */
		return;
	}
	if (READ_ONCE(qp->state) != IB_QPS_RTS)
		return;
	cpu = sroce_sq_poll_cpu(qp);
	if (cpu >= nr_cpu_ids)
		return;
	/* a poller that ran its time was no one's bother: no new look */
	if (READ_ONCE(qp->poll_renew)) {
		WRITE_ONCE(qp->poll_renew, false);
	} else if (!sroce_sq_poll_cpu_idles(qp, cpu, now)) {
		/* not before the next look is due */
		WRITE_ONCE(qp->poll_backoff, jiffies + 1);
		return;
	}
	if (atomic_inc_return(&sroce_sq_pollers) >= num_online_cpus())
		goto busy;
	if (test_and_set_bit(0, &qp->poll_active))
		goto busy;	/* a doorbell of another thread got there first */
	/*
	 * poll_seen is 0 (zeroed QP, or the last poller's exit before its
	 * clear_bit_unlock): not trusted before it looks, so this doorbell
	 * runs its own pass.
	 */
	sroce_qp_count(qp, SROCE_CNT_SQ_POLL_START);
	queue_work_on(cpu, sroce_poll_wq, &qp->poll_work);
	return;
busy:
	atomic_dec(&sroce_sq_pollers);
}

/*
 * After setting KICK: will @qp's poller run the pass?  Either it sees our
 * KICK before it leaves or we see it gone; one that has not looked lately
 * may be off its CPU: not trusted.
 */
static bool sroce_sq_poll_trusted(struct sroce_qp *qp, u64 now)
{
	u64 seen = READ_ONCE(qp->poll_seen);

	return test_bit(0, &qp->poll_active) && seen &&
	       (seen == U64_MAX || (s64)(now - seen) <= SROCE_SQ_POLL_STALE_NS);
}

/*
 * A pass is owed to @qp (a chain ran it, and it stopped on its budget or
 * was kicked meanwhile): true if its running poller takes that pass, false
 * if the caller must queue the worker, which would take turns with it.
 */
bool sroce_sq_poll_take_pass(struct sroce_qp *qp)
{
	if (!test_bit_acquire(0, &qp->poll_active))
		return false;
	smp_mb__before_atomic();	/* what the pass left, then the bit */
	set_bit(SROCE_QPEV_KICK, &qp->events);
	smp_mb__after_atomic();	/* pairs with the poller's smp_mb() on leaving */
	return sroce_sq_poll_trusted(qp, local_clock());
}

/*
 * A user doorbell: true if a running poller takes it (the WQEs are fetched
 * by its next pass), false if the caller must run or kick the pass as usual.
 */
bool sroce_sq_poll_doorbell(struct sroce_qp *qp)
{
	u64 now;

	if (!READ_ONCE(sroce_sq_poll_us) || !qp->user)
		return false;
	if (!test_bit_acquire(0, &qp->poll_active)) {
		/* the common refusal first: it costs a ping-pong's doorbells */
		if (time_before(jiffies, READ_ONCE(qp->poll_backoff)))
			return false;
		sroce_sq_poll_start(qp, local_clock());
		return false;
	}
	now = local_clock();
	sroce_sq_poll_ring(qp);
	if (!sroce_sq_poll_trusted(qp, now))
		return false;
	WRITE_ONCE(qp->poll_taken, READ_ONCE(qp->poll_taken) + 1);
	sroce_qp_count(qp, SROCE_CNT_SQ_POLL_DOORBELL);
	return true;
}

void sroce_sq_poll_init(struct sroce_qp *qp)
{
	INIT_WORK(&qp->poll_work, sroce_sq_poll_work);
	qp->poll_active = 0;
	qp->last_doorbell = 0;
	qp->poll_backoff = jiffies;
	qp->poll_backoff_ms = 0;
	qp->idle_cpu = -1;
	qp->poll_renew = false;
}

/* Destroy (the QP is out of RTS): no poller runs after this returns. */
void sroce_sq_poll_stop(struct sroce_qp *qp)
{
	if (cancel_work_sync(&qp->poll_work)) {
		/* queued and never run: its share of the count */
		clear_bit(0, &qp->poll_active);
		atomic_dec(&sroce_sq_pollers);
	}
}
