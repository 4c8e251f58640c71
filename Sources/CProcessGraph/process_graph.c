#define _GNU_SOURCE
#include "CProcessGraph.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* How long a thread spins before it sleeps on a futex: waiting for a node to become ready, for
 * the last nodes of a period (the device's thread), for the next period (a worker). Long
 * enough to cover the usual gaps inside a period (a node's few microseconds), short enough
 * that an idle worker gives its core back well within a period. */
#define TD_SPIN_NODE_NS 20000
#define TD_SPIN_DONE_NS 50000
#define TD_SPIN_IDLE_NS 20000
#define TD_MAX_WORKERS 63

/* A slot of the trigger queue not yet written, and the same with a sleeper on it. */
#define TD_EMPTY (-1)
#define TD_WAITING (-2)

struct td_graph_plan {
    int32_t node_count;
    int32_t initial_count;
    int32_t *init_refcount;
    int32_t *feeds_start;
    int32_t *feeds_count;
    int32_t *feeds;
    int32_t *initial;
    /* Per period: how many feeders each node still waits for, and the trigger queue (a node
     * index once pushed, in the order nodes became ready). */
    _Atomic int32_t *refcount;
    _Atomic int32_t *slots;
};

typedef struct {
    struct td_graph_pool *pool;
    int32_t index;
    pthread_t thread;
    int started;
} td_worker;

struct td_graph_pool {
    /* Read by everyone, written once. */
    int32_t threads;
    int32_t realtime;
    void *context;
    td_graph_run_fn run;
    td_graph_ahead_fn ahead;
    td_graph_thread_fn hook;
    td_worker workers[TD_MAX_WORKERS];

    /* The period: a ticket is (period sequence << 32 | index); `info` is (sequence << 32 |
     * node count). */
    _Alignas(64) _Atomic uint64_t head;
    _Alignas(64) _Atomic uint64_t info;
    _Atomic(td_graph_plan *) plan;
    _Alignas(64) _Atomic int32_t tail;
    _Alignas(64) _Atomic int32_t remaining;
    _Atomic int32_t device_waiting;
    uint32_t sequence; /* the device's thread only */

    /* Waking workers: bumped for a period, for the ahead window, to quit. */
    _Alignas(64) _Atomic uint32_t wake;
    _Atomic int32_t sleepers;
    _Atomic int32_t quit;

    /* The window for work ahead of the device period. */
    _Alignas(64) _Atomic int32_t ahead_open;
    _Atomic int32_t inflight;
    _Atomic int32_t closer_waiting;

    _Alignas(64) _Atomic int32_t priority;
    _Atomic int32_t realtime_workers;
    /* How long an idle worker spins before it sleeps (TD_SPIN_IDLE_NS unless set). */
    _Atomic int32_t idle_spin_ns;
};

/* The futex words are 32-bit atomics; the kernel sees their plain address. */
static long futex(volatile void *word, int op, int value) {
    return syscall(SYS_futex, (void *)word, op, value, NULL, NULL, 0);
}

static inline void futex_wait(volatile void *word, int expected) { futex(word, FUTEX_WAIT_PRIVATE, expected); }
static inline void futex_wake(volatile void *word, int count) { futex(word, FUTEX_WAKE_PRIVATE, count); }

static inline int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* ---- plans ---- */

static int32_t *copy_ints(const int32_t *from, int32_t count) {
    int32_t *to = malloc(sizeof(int32_t) * (size_t)(count > 0 ? count : 1));
    if (to && count > 0) memcpy(to, from, sizeof(int32_t) * (size_t)count);
    return to;
}

td_graph_plan *td_graph_plan_create(int32_t node_count, const int32_t *init_refcount, const int32_t *feeds_start,
                                    const int32_t *feeds_count, const int32_t *feeds, const int32_t *initial,
                                    int32_t initial_count) {
    td_graph_plan *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    int32_t total = 0;
    for (int32_t i = 0; i < node_count; i++) {
        int32_t end = feeds_start[i] + feeds_count[i];
        if (end > total) total = end;
    }
    p->node_count = node_count;
    p->initial_count = initial_count;
    p->init_refcount = copy_ints(init_refcount, node_count);
    p->feeds_start = copy_ints(feeds_start, node_count);
    p->feeds_count = copy_ints(feeds_count, node_count);
    p->feeds = copy_ints(feeds, total);
    p->initial = copy_ints(initial, initial_count);
    size_t n = (size_t)(node_count > 0 ? node_count : 1);
    p->refcount = aligned_alloc(64, ((n * sizeof(int32_t)) + 63) / 64 * 64);
    p->slots = aligned_alloc(64, ((n * sizeof(int32_t)) + 63) / 64 * 64);
    if (!p->init_refcount || !p->feeds_start || !p->feeds_count || !p->feeds || !p->initial || !p->refcount || !p->slots) {
        td_graph_plan_destroy(p);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        atomic_init(&p->refcount[i], 0);
        atomic_init(&p->slots[i], TD_EMPTY);
    }
    return p;
}

void td_graph_plan_destroy(td_graph_plan *p) {
    if (!p) return;
    free(p->init_refcount);
    free(p->feeds_start);
    free(p->feeds_count);
    free(p->feeds);
    free(p->initial);
    free((void *)p->refcount);
    free((void *)p->slots);
    free(p);
}

/* ---- running a period ---- */

/* Appends a ready node to the period's trigger queue, waking the thread that holds its ticket
 * if it sleeps. */
static inline void push(td_graph_pool *pool, td_graph_plan *plan, int32_t node) {
    int32_t at = atomic_fetch_add(&pool->tail, 1);
    int32_t was = atomic_exchange(&plan->slots[at], node);
    if (was == TD_WAITING) futex_wake(&plan->slots[at], 1);
}

/* The node behind ticket `index`: spins a while for it to be pushed, then sleeps on its slot. */
static inline int32_t take(td_graph_plan *plan, int32_t index) {
    _Atomic int32_t *slot = &plan->slots[index];
    int32_t node = atomic_load(slot);
    if (node >= 0) return node;
    int64_t until = now_ns() + TD_SPIN_NODE_NS;
    for (int k = 0;; k++) {
        node = atomic_load(slot);
        if (node >= 0) return node;
        relax();
        if ((k & 63) == 63 && now_ns() > until) break;
    }
    for (;;) {
        int32_t expected = TD_EMPTY;
        if (atomic_compare_exchange_strong(slot, &expected, TD_WAITING) || expected == TD_WAITING) {
            futex_wait(slot, TD_WAITING);
        }
        node = atomic_load(slot);
        if (node >= 0) return node;
    }
}

/* Takes tickets of the period under way until none is left (returns at once when no period
 * is under way, or it is another's than the one the ticket was for). */
static void take_part(td_graph_pool *pool, int32_t thread) {
    for (;;) {
        uint64_t peek = atomic_load(&pool->head);
        uint64_t info = atomic_load(&pool->info);
        if ((peek >> 32) != (info >> 32) || (uint32_t)peek >= (uint32_t)info) return;
        uint64_t ticket = atomic_fetch_add(&pool->head, 1);
        info = atomic_load(&pool->info);
        /* A ticket of a period that has ended since: every ticket that period ran was taken
         * before it ended, so this one is past its last node. */
        if ((ticket >> 32) != (info >> 32)) return;
        uint32_t index = (uint32_t)ticket;
        if (index >= (uint32_t)info) return;
        td_graph_plan *plan = atomic_load(&pool->plan);
        int32_t node = take(plan, (int32_t)index);
        pool->run(pool->context, node, thread);
        int32_t first = plan->feeds_start[node], count = plan->feeds_count[node];
        for (int32_t k = first; k < first + count; k++) {
            int32_t fed = plan->feeds[k];
            if (atomic_fetch_sub(&plan->refcount[fed], 1) == 1) push(pool, plan, fed);
        }
        /* The last touch of the period's state: after it the device's thread may begin the next. */
        if (atomic_fetch_sub(&pool->remaining, 1) == 1 && atomic_load(&pool->device_waiting)) {
            futex_wake(&pool->remaining, 1);
        }
    }
}

void td_graph_pool_run(td_graph_pool *pool, td_graph_plan *plan) {
    int32_t count = plan->node_count;
    if (count <= 0) return;
    for (int32_t i = 0; i < count; i++) {
        atomic_store_explicit(&plan->refcount[i], plan->init_refcount[i], memory_order_relaxed);
        atomic_store_explicit(&plan->slots[i], TD_EMPTY, memory_order_relaxed);
    }
    for (int32_t k = 0; k < plan->initial_count; k++) {
        atomic_store_explicit(&plan->slots[k], plan->initial[k], memory_order_relaxed);
    }
    atomic_store(&pool->tail, plan->initial_count);
    atomic_store(&pool->remaining, count);
    atomic_store(&pool->plan, plan);
    pool->sequence += 1;
    uint64_t sequence = (uint64_t)pool->sequence << 32;
    atomic_store(&pool->info, sequence | (uint32_t)count);
    atomic_store(&pool->head, sequence);
    atomic_fetch_add(&pool->wake, 1);
    if (atomic_load(&pool->sleepers) > 0) futex_wake(&pool->wake, INT_MAX);
    take_part(pool, 0);
    if (atomic_load(&pool->remaining) == 0) return;
    int64_t until = now_ns() + TD_SPIN_DONE_NS;
    for (int k = 0;; k++) {
        if (atomic_load(&pool->remaining) == 0) return;
        relax();
        if ((k & 63) == 63 && now_ns() > until) break;
    }
    atomic_store(&pool->device_waiting, 1);
    int32_t left;
    while ((left = atomic_load(&pool->remaining)) != 0) futex_wait(&pool->remaining, left);
    atomic_store(&pool->device_waiting, 0);
}

/* ---- work ahead of the device period ---- */

static inline void leave_ahead(td_graph_pool *pool) {
    if (atomic_fetch_sub(&pool->inflight, 1) == 1 && atomic_load(&pool->closer_waiting)) futex_wake(&pool->inflight, 1);
}

static void work_ahead(td_graph_pool *pool, int32_t thread) {
    if (!pool->ahead) return;
    for (;;) {
        atomic_fetch_add(&pool->inflight, 1);
        if (!atomic_load(&pool->ahead_open)) {
            leave_ahead(pool);
            return;
        }
        int32_t did = pool->ahead(pool->context, thread);
        leave_ahead(pool);
        if (!did) return;
        /* A period posted meanwhile comes first. */
        uint64_t peek = atomic_load(&pool->head), info = atomic_load(&pool->info);
        if ((peek >> 32) == (info >> 32) && (uint32_t)peek < (uint32_t)info) return;
    }
}

void td_graph_pool_open_ahead(td_graph_pool *pool) {
    if (!pool->ahead || pool->threads < 2) return;
    atomic_store(&pool->ahead_open, 1);
    atomic_fetch_add(&pool->wake, 1);
    if (atomic_load(&pool->sleepers) > 0) futex_wake(&pool->wake, INT_MAX);
}

int32_t td_graph_pool_close_ahead(td_graph_pool *pool) {
    int32_t was = atomic_exchange(&pool->ahead_open, 0);
    if (atomic_load(&pool->inflight) == 0) return was;
    int64_t until = now_ns() + TD_SPIN_DONE_NS;
    for (int k = 0;; k++) {
        if (atomic_load(&pool->inflight) == 0) return was;
        relax();
        if ((k & 63) == 63 && now_ns() > until) break;
    }
    atomic_store(&pool->closer_waiting, 1);
    int32_t left;
    while ((left = atomic_load(&pool->inflight)) != 0) futex_wait(&pool->inflight, left);
    atomic_store(&pool->closer_waiting, 0);
    return was;
}

/* ---- workers ---- */

/* SCHED_FIFO at `priority`, or normal scheduling for 0 (a device thread without real-time). */
static int apply_priority(int32_t priority) {
    struct sched_param param;
    memset(&param, 0, sizeof param);
    param.sched_priority = priority > 0 ? priority : 0;
    return pthread_setschedparam(pthread_self(), priority > 0 ? SCHED_FIFO : SCHED_OTHER, &param) == 0;
}

/* Sleeps until `wake` moves past `seen` (a bounded spin first). */
static void idle(td_graph_pool *pool, uint32_t *seen) {
    uint32_t now = atomic_load(&pool->wake);
    if (now != *seen) { *seen = now; return; }
    int64_t until = now_ns() + atomic_load_explicit(&pool->idle_spin_ns, memory_order_relaxed);
    for (int k = 0;; k++) {
        now = atomic_load(&pool->wake);
        if (now != *seen) { *seen = now; return; }
        relax();
        if ((k & 63) == 63 && now_ns() > until) break;
    }
    atomic_fetch_add(&pool->sleepers, 1);
    if (atomic_load(&pool->wake) == *seen) futex_wait(&pool->wake, (int)*seen);
    atomic_fetch_sub(&pool->sleepers, 1);
    *seen = atomic_load(&pool->wake);
}

static void *worker_main(void *argument) {
    td_worker *w = argument;
    td_graph_pool *pool = w->pool;
    /* "tapedeck-worker-N" does not fit the kernel's 15 characters: "tapedeck-work-N". */
    char name[16];
    if (w->index < 10) snprintf(name, sizeof name, "tapedeck-work-%d", (int)w->index);
    else snprintf(name, sizeof name, "tapedeck-work%d", (int)w->index);
    td_thread_set_name(name);
    int32_t applied = 0;
    if (pool->realtime) {
        int32_t wanted = atomic_load(&pool->priority);
        if (apply_priority(wanted)) {
            applied = wanted;
            atomic_fetch_add(&pool->realtime_workers, 1);
        } else {
            applied = -1;
        }
    }
    if (pool->hook) pool->hook(pool->context, w->index, 1);
    uint32_t seen = atomic_load(&pool->wake);
    while (!atomic_load(&pool->quit)) {
        if (pool->realtime && applied >= 0) {
            int32_t wanted = atomic_load(&pool->priority);
            if (wanted != applied && apply_priority(wanted)) applied = wanted;
        }
        take_part(pool, w->index);
        if (atomic_load(&pool->ahead_open)) work_ahead(pool, w->index);
        idle(pool, &seen);
    }
    if (pool->hook) pool->hook(pool->context, w->index, 0);
    return NULL;
}

td_graph_pool *td_graph_pool_create(int32_t threads, int32_t realtime, int32_t priority, void *context, td_graph_run_fn run,
                                    td_graph_ahead_fn ahead, td_graph_thread_fn thread_hook) {
    if (threads < 1) threads = 1;
    if (threads > TD_MAX_WORKERS + 1) threads = TD_MAX_WORKERS + 1;
    td_graph_pool *pool = aligned_alloc(64, (sizeof *pool + 63) / 64 * 64);
    if (!pool) return NULL;
    memset(pool, 0, sizeof *pool);
    pool->threads = threads;
    pool->realtime = realtime;
    pool->context = context;
    pool->run = run;
    pool->ahead = ahead;
    pool->hook = thread_hook;
    atomic_init(&pool->head, 0);
    atomic_init(&pool->info, 0);
    atomic_init(&pool->plan, NULL);
    atomic_init(&pool->tail, 0);
    atomic_init(&pool->remaining, 0);
    atomic_init(&pool->device_waiting, 0);
    atomic_init(&pool->wake, 0);
    atomic_init(&pool->sleepers, 0);
    atomic_init(&pool->quit, 0);
    atomic_init(&pool->ahead_open, 0);
    atomic_init(&pool->inflight, 0);
    atomic_init(&pool->closer_waiting, 0);
    atomic_init(&pool->priority, priority);
    atomic_init(&pool->realtime_workers, 0);
    atomic_init(&pool->idle_spin_ns, TD_SPIN_IDLE_NS);
    for (int32_t k = 1; k < threads; k++) {
        td_worker *w = &pool->workers[k - 1];
        w->pool = pool;
        w->index = k;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 1 << 20);
        int failed = pthread_create(&w->thread, &attr, worker_main, w);
        pthread_attr_destroy(&attr);
        if (failed) {
            pool->threads = k;
            td_graph_pool_destroy(pool);
            return NULL;
        }
        w->started = 1;
    }
    return pool;
}

void td_graph_pool_destroy(td_graph_pool *pool) {
    if (!pool) return;
    atomic_store(&pool->quit, 1);
    atomic_fetch_add(&pool->wake, 1);
    futex_wake(&pool->wake, INT_MAX);
    for (int32_t k = 0; k < TD_MAX_WORKERS; k++) {
        if (pool->workers[k].started) pthread_join(pool->workers[k].thread, NULL);
    }
    free(pool);
}

int32_t td_graph_pool_threads(const td_graph_pool *pool) { return pool->threads; }

int32_t td_graph_pool_realtime_workers(const td_graph_pool *pool) {
    return atomic_load(&((td_graph_pool *)pool)->realtime_workers);
}

void td_graph_pool_set_priority(td_graph_pool *pool, int32_t priority) { atomic_store(&pool->priority, priority); }

void td_graph_pool_set_idle_spin(td_graph_pool *pool, int32_t nanoseconds) { atomic_store(&pool->idle_spin_ns, nanoseconds); }

/* ---- threads ---- */

void td_thread_set_name(const char *name) {
    char short_name[16];
    strncpy(short_name, name, 15);
    short_name[15] = 0;
    pthread_setname_np(pthread_self(), short_name);
}

void td_thread_name_audio(void) { td_thread_set_name("tapedeck-audio"); }

int32_t td_thread_fifo_priority(void) {
    /* PipeWire makes its data loop real-time with SCHED_RESET_ON_FORK, which comes back
     * or'ed into the policy. */
    int policy = sched_getscheduler(0);
    if (policy < 0) return 0;
    policy &= ~SCHED_RESET_ON_FORK;
    struct sched_param param;
    if (policy != SCHED_FIFO && policy != SCHED_RR) return 0;
    if (sched_getparam(0, &param) != 0) return 0;
    return param.sched_priority;
}
