/* The process graph's threads: a period's strips run on the device's thread and N-1 real-time
 * workers, each strip as soon as every strip feeding it is done (Ardour's graph: per-graph
 * dependency counts, a trigger queue, workers that sleep on a futex when there is nothing to
 * take). In C because the counters live in plain arrays (one per strip, per graph) that
 * Swift's Atomic cannot be laid over, and because waiting is a futex on those words.
 *
 * Nothing here allocates, locks a mutex or logs once the pool runs: the device thread posts
 * a period (atomic stores and one futex wake), takes strips itself, and waits for the last
 * one with a bounded spin and then a futex wait on the count of strips left; workers spin a
 * bounded time between periods and then sleep on a futex. */
#ifndef TAPEDECK_CPROCESSGRAPH_H
#define TAPEDECK_CPROCESSGRAPH_H

#include <stdint.h>

/* Runs node `node` of the period's graph on participant `thread` (0: the device's thread,
 * 1...: workers). */
typedef void (*td_graph_run_fn)(void *context, int32_t node, int32_t thread);
/* Work done ahead of the device period (playback rendered ahead) while the pool's window is
 * open: one piece of it; returns 1 when it did something, 0 when there is nothing to do. */
typedef int32_t (*td_graph_ahead_fn)(void *context, int32_t thread);
/* A worker thread begins (`begins` 1) or ends (0): for probes that watch its allocations. */
typedef void (*td_graph_thread_fn)(void *context, int32_t thread, int32_t begins);

/* One graph's shape: who feeds whom. Built off the audio thread with the graph it belongs to;
 * holds the per-period counters (reset by the thread that runs a period). */
typedef struct td_graph_plan td_graph_plan;

/* A plan of `node_count` nodes: node i waits for `init_refcount[i]` feeding nodes and, once
 * done, triggers `feeds[feeds_start[i] ..< feeds_start[i] + feeds_count[i]]`. Nodes with no
 * feeder start the period in `initial` order. Copies everything; NULL when out of memory. */
td_graph_plan *td_graph_plan_create(int32_t node_count, const int32_t *init_refcount, const int32_t *feeds_start,
                                    const int32_t *feeds_count, const int32_t *feeds, const int32_t *initial,
                                    int32_t initial_count);
void td_graph_plan_destroy(td_graph_plan *plan);

/* The threads. */
typedef struct td_graph_pool td_graph_pool;

/* A pool for `threads` participants (the caller of td_graph_pool_run and threads - 1 workers it
 * starts now, named "tapedeck-work-N": the kernel keeps 15 characters). With `realtime`, workers ask for SCHED_FIFO at
 * `priority` (kept at normal scheduling when refused). `context` is handed to every callback;
 * `ahead` and `thread_hook` may be NULL. NULL when the threads cannot be made. */
td_graph_pool *td_graph_pool_create(int32_t threads, int32_t realtime, int32_t priority, void *context, td_graph_run_fn run,
                                    td_graph_ahead_fn ahead, td_graph_thread_fn thread_hook);
/* Ends the workers (waits for them) and frees the pool. Not while a period runs. */
void td_graph_pool_destroy(td_graph_pool *pool);

/* Participants, the caller included. */
int32_t td_graph_pool_threads(const td_graph_pool *pool);
/* Workers that got SCHED_FIFO so far. */
int32_t td_graph_pool_realtime_workers(const td_graph_pool *pool);

/* Runs every node of `plan` once, on the calling thread and the workers; returns when all are
 * done (everything they wrote is visible to the caller then). The caller must be the only one
 * running periods. Audio thread: no allocation, no mutex; waits with a bounded spin, then a
 * futex, for the workers' last nodes. */
void td_graph_pool_run(td_graph_pool *pool, td_graph_plan *plan);

/* Workers move to SCHED_FIFO `priority` at their next wake (just below the device's thread,
 * whose priority is known only once it runs). Any thread: one atomic store. */
void td_graph_pool_set_priority(td_graph_pool *pool, int32_t priority);

/* How long an idle worker spins for the next period before it sleeps (20 us by default; 0 on
 * a device with no clock, whose periods come back to back: a worker that never sleeps there
 * takes a core the disk and the writers need). Control thread. */
void td_graph_pool_set_idle_spin(td_graph_pool *pool, int32_t nanoseconds);

/* Opens the window for work ahead of the device period and wakes sleeping workers: they call
 * `ahead` until it says there is nothing left or the window closes. Audio thread. */
void td_graph_pool_open_ahead(td_graph_pool *pool);
/* Closes that window and waits until no worker is inside `ahead` (one piece of work at most
 * each: a bounded spin, then a futex). Audio thread. Returns whether the window was open. */
int32_t td_graph_pool_close_ahead(td_graph_pool *pool);

/* Names the calling thread (at most 15 characters are kept, the kernel's limit). */
void td_thread_set_name(const char *name);

/* Names the calling thread "tapedeck-audio": a device thread another library made (JACK's,
 * PipeWire's data loop) is then told apart in `top -H`. No allocation; one system call. */
void td_thread_name_audio(void);

/* The calling thread's SCHED_FIFO (or SCHED_RR) priority, or 0 when it runs under normal
 * scheduling: two system calls, no lock (pthread_getschedparam takes the thread's lock), so
 * the audio thread may ask now and then. */
int32_t td_thread_fifo_priority(void);

#endif
