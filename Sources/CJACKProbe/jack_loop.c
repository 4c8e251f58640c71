/* A loopback cable on JACK (see td_jack_loop_open in CJACKProbe.h): the tests' and
   `bench jack`'s round trips. */
#include "CJACKProbe.h"
#include <jack/jack.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TD_LOOP_MAX_CHANNELS 8
/* Rings the notification and process threads write and an ordinary thread reads (one
   writer, one reader each): the last so many xruns' frame times and skipped spans. */
#define TD_LOOP_RING 1024

struct td_jack_loop {
    jack_client_t *client;
    jack_port_t *inputs[TD_LOOP_MAX_CHANNELS];
    jack_port_t *outputs[TD_LOOP_MAX_CHANNELS];
    int channels;
    long delay;
    int report;
    double sine_hz;
    float *line[TD_LOOP_MAX_CHANNELS];
    long line_size;
    long position;
    volatile int buffer_changed;
    volatile int xruns;
    /* JACK's frame time when each xrun was told (xrun k at [k % TD_LOOP_RING]). */
    jack_nframes_t xrun_at[TD_LOOP_RING];
    /* Its own cycles the server never ran: frames of frame time it did not play (a sine) or
       neither heard nor played (a cable: what was in its line then comes out that much later
       by frame time), and each span of them (span k at [k % TD_LOOP_RING], `spans` so far). */
    long skipped_frames;
    jack_nframes_t skipped_from[TD_LOOP_RING], skipped_to[TD_LOOP_RING];
    long spans;
    /* The last cycle's frame time and CLOCK_MONOTONIC when it ran, written by the process
       thread under a sequence number (odd while writing) for td_jack_loop_clock. */
    volatile unsigned clock_seq;
    jack_nframes_t clock_frame;
    uint64_t clock_us;
    jack_nframes_t next_start;
    int started;
};

/* JACK's thread: notes the cycle's frame time and the monotonic clock (clock_gettime is a
   vDSO read, no system call), for td_jack_loop_clock. */
static void note_clock(struct td_jack_loop *l) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    unsigned seq = l->clock_seq;
    __atomic_store_n(&l->clock_seq, seq + 1, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    l->clock_frame = jack_last_frame_time(l->client);
    l->clock_us = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
    __atomic_store_n(&l->clock_seq, seq + 2, __ATOMIC_RELEASE);
}

/* JACK's thread: a delay line per channel (or the frame-time cosine), no allocation. */
static int loop_process(jack_nframes_t frames, void *arg) {
    struct td_jack_loop *l = arg;
    note_clock(l);
    jack_nframes_t start = jack_last_frame_time(l->client);
    /* A cycle of frame time it was not called for is frames no one heard from it (a recorder
       reads silence there without having lost anything itself) and, for a cable, frames it
       never carried: counted, so a test can tell the loop's doing from the recorder's. */
    int32_t ahead = (int32_t)(start - l->next_start); /* frame time wraps at 2^32 */
    if (l->started && ahead > 0) {
        long k = l->spans;
        l->skipped_from[k % TD_LOOP_RING] = l->next_start;
        l->skipped_to[k % TD_LOOP_RING] = start;
        __atomic_store_n(&l->spans, k + 1, __ATOMIC_RELEASE);
        __atomic_add_fetch(&l->skipped_frames, (long)ahead, __ATOMIC_RELAXED);
    }
    l->started = 1;
    l->next_start = start + frames;
    if (l->sine_hz > 0) {
        double rate = (double)jack_get_sample_rate(l->client);
        for (int c = 0; c < l->channels; c++) {
            float *out = jack_port_get_buffer(l->outputs[c], frames);
            for (jack_nframes_t i = 0; i < frames; i++) {
                /* The frame time wraps at 2^32; the phase is taken modulo the tone's period. */
                double t = fmod((double)(jack_nframes_t)(start + i) * l->sine_hz / rate, 1.0);
                out[i] = (float)(0.25 * cos(2 * M_PI * t));
            }
        }
        return 0;
    }
    for (int c = 0; c < l->channels; c++) {
        const float *in = jack_port_get_buffer(l->inputs[c], frames);
        float *out = jack_port_get_buffer(l->outputs[c], frames);
        for (jack_nframes_t i = 0; i < frames; i++) {
            long at = (l->position + (long)i) % l->line_size;
            l->line[c][at] = in[i];
            long from = (l->position + (long)i - l->delay) % l->line_size;
            if (from < 0) from += l->line_size;
            out[i] = l->position + (long)i >= l->delay ? l->line[c][from] : 0;
        }
    }
    l->position += frames;
    return 0;
}

/* JACK's notification thread: the latency this "card" knows, on its own ports only. */
static void loop_latency(jack_latency_callback_mode_t mode, void *arg) {
    struct td_jack_loop *l = arg;
    jack_latency_range_t range;
    if (mode == JackPlaybackLatency) {
        jack_nframes_t frames = jack_get_buffer_size(l->client) + (l->report ? (jack_nframes_t)l->delay : 0);
        range.min = range.max = frames;
        for (int c = 0; c < l->channels; c++) jack_port_set_latency_range(l->inputs[c], JackPlaybackLatency, &range);
    } else {
        range.min = range.max = 0;
        for (int c = 0; c < l->channels; c++) jack_port_set_latency_range(l->outputs[c], JackCaptureLatency, &range);
    }
}

/* JACK's notification thread: the server tells every client of any client's xrun, with no
   time: the frame time of the last cycle the server began (jack_last_frame_time) is kept,
   which is at or after the late cycle (the notification is sent after the server found it).
   Not jack_frame_time: that reads the wall clock on from the last cycle, and after a stall
   of the server ran 7600 frames ahead of any cycle. */
static int loop_xrun(void *arg) {
    struct td_jack_loop *l = arg;
    int k = l->xruns;
    l->xrun_at[k % TD_LOOP_RING] = jack_last_frame_time(l->client);
    __atomic_store_n(&l->xruns, k + 1, __ATOMIC_RELEASE);
    return 0;
}

/* JACK's process thread: a slow-sync client that is never ready (td_jack_loop_never_ready). */
static int loop_never_ready(jack_transport_state_t state, jack_position_t *pos, void *arg) {
    (void)state;
    (void)pos;
    (void)arg;
    return 0;
}

/* The period is part of what it reports: td_jack_loop_service asks JACK to recompute (a
   request to the server from inside a notification could deadlock). */
static int loop_buffer_size(jack_nframes_t frames, void *arg) {
    (void)frames;
    ((struct td_jack_loop *)arg)->buffer_changed = 1;
    return 0;
}

td_jack_loop *td_jack_loop_open(const char *name, int channels, long delay_frames, int reports, double sine_hz) {
    if (delay_frames < 0 || delay_frames > 1 << 20 || channels < 1 || channels > TD_LOOP_MAX_CHANNELS) return NULL;
    struct td_jack_loop *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    l->channels = channels;
    l->delay = delay_frames;
    l->report = reports;
    l->sine_hz = sine_hz;
    l->line_size = delay_frames + 16384;
    jack_status_t status;
    l->client = jack_client_open(name, JackNoStartServer | JackUseExactName, &status);
    if (!l->client) {
        free(l);
        return NULL;
    }
    for (int c = 0; c < channels; c++) {
        char port[32];
        snprintf(port, sizeof port, "in_%d", c + 1);
        l->inputs[c] = jack_port_register(l->client, port, JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput | JackPortIsTerminal, 0);
        snprintf(port, sizeof port, "out_%d", c + 1);
        l->outputs[c] = jack_port_register(l->client, port, JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput | JackPortIsTerminal, 0);
        l->line[c] = calloc((size_t)l->line_size, sizeof(float));
        if (!l->inputs[c] || !l->outputs[c] || !l->line[c]) {
            td_jack_loop_close(l);
            return NULL;
        }
    }
    if (jack_set_process_callback(l->client, loop_process, l) != 0 || jack_set_latency_callback(l->client, loop_latency, l) != 0
        || jack_set_buffer_size_callback(l->client, loop_buffer_size, l) != 0 || jack_set_xrun_callback(l->client, loop_xrun, l) != 0
        || jack_activate(l->client) != 0) {
        td_jack_loop_close(l);
        return NULL;
    }
    jack_recompute_total_latencies(l->client);
    return l;
}

void td_jack_loop_service(td_jack_loop *loop) {
    if (loop && loop->buffer_changed) {
        loop->buffer_changed = 0;
        jack_recompute_total_latencies(loop->client);
    }
}

long td_jack_loop_skipped_frames(td_jack_loop *loop) {
    return loop ? __atomic_load_n(&loop->skipped_frames, __ATOMIC_RELAXED) : 0;
}

long td_jack_loop_skipped_spans(td_jack_loop *loop) {
    return loop ? __atomic_load_n(&loop->spans, __ATOMIC_ACQUIRE) : 0;
}

int td_jack_loop_skipped_span(td_jack_loop *loop, long index, uint32_t *from, uint32_t *to) {
    if (!loop || index < 0 || index >= td_jack_loop_skipped_spans(loop) || index < td_jack_loop_skipped_spans(loop) - TD_LOOP_RING) return -1;
    *from = loop->skipped_from[index % TD_LOOP_RING];
    *to = loop->skipped_to[index % TD_LOOP_RING];
    return 0;
}

int td_jack_loop_xruns(td_jack_loop *loop) {
    return loop ? __atomic_load_n(&loop->xruns, __ATOMIC_ACQUIRE) : 0;
}

int td_jack_loop_xrun_frame(td_jack_loop *loop, int index, uint32_t *frame) {
    if (!loop || index < 0 || index >= td_jack_loop_xruns(loop) || index < td_jack_loop_xruns(loop) - TD_LOOP_RING) return -1;
    *frame = loop->xrun_at[index % TD_LOOP_RING];
    return 0;
}

int td_jack_loop_clock(td_jack_loop *loop, uint32_t *frame, uint64_t *microseconds) {
    /* Read from what the process thread noted, not by calling jack_frame_time on this thread:
       with that, ServerStallTests' takes on PipeWire's JACK had stretches of samples off their
       frame in 4 runs of 8; with this, in 2 of 10 (all under load; cause not known). */
    for (int tries = 0; tries < 1000; tries++) {
        unsigned seq = __atomic_load_n(&loop->clock_seq, __ATOMIC_ACQUIRE);
        if (seq == 0 || (seq & 1)) { usleep(100); continue; }
        uint32_t f = loop->clock_frame;
        uint64_t us = loop->clock_us;
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&loop->clock_seq, __ATOMIC_ACQUIRE) != seq) continue;
        *frame = f;
        *microseconds = us;
        return 0;
    }
    return -1;
}

void td_jack_loop_close(td_jack_loop *loop) {
    if (!loop) return;
    if (loop->client) {
        jack_deactivate(loop->client);
        jack_client_close(loop->client);
    }
    for (int c = 0; c < TD_LOOP_MAX_CHANNELS; c++) free(loop->line[c]);
    free(loop);
}

int td_jack_loop_never_ready(td_jack_loop *loop) {
    return loop ? jack_set_sync_callback(loop->client, loop_never_ready, loop) : -1;
}
