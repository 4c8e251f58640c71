/* A loopback cable on JACK (see td_jack_loop_open in CJACKProbe.h): the tests' and
   `bench jack`'s round trips. */
#include "CJACKProbe.h"
#include <jack/jack.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TD_LOOP_MAX_CHANNELS 8

struct td_jack_loop {
    jack_client_t *client;
    jack_port_t *inputs[TD_LOOP_MAX_CHANNELS];
    jack_port_t *outputs[TD_LOOP_MAX_CHANNELS];
    int channels;
    long delay;
    int report;
    double sine_hz;
    float *line[TD_LOOP_MAX_CHANNELS];
    /* A power of two, so indices by JACK's 32-bit frame time stay in step across its wrap. */
    uint32_t line_mask;
    /* The frame time the line started at, and the one the next cycle should start at. */
    jack_nframes_t first, next;
    int started;
    /* Cycles this client was not run for (the frame time jumped), for td_jack_loop_service
       to say; and the last jump's size in frames. */
    volatile long skips;
    volatile long last_skip_frames;
    long skips_said;
    volatile int buffer_changed;
};

/* JACK's thread: a delay line per channel (or the frame-time cosine), no allocation.

   The line is indexed by JACK's frame time, not by the frames this client processed: a
   cable's delay is a fixed time, so a cycle the server did not run this client for (a busy
   machine, a graph being re-sorted) leaves silence for that cycle and does not move every
   later sample by a period, as a counter of processed frames would. */
static int loop_process(jack_nframes_t frames, void *arg) {
    struct td_jack_loop *l = arg;
    jack_nframes_t start = jack_last_frame_time(l->client);
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
    if (!l->started) {
        l->started = 1;
        l->first = start;
    } else if (start != l->next) {
        int32_t jump = (int32_t)(start - l->next);
        l->last_skip_frames = jump;
        l->skips++;
        /* What the skipped frames held is unknown: silence, not what the line held a lap ago. */
        if (jump > 0) {
            uint32_t clear = (uint32_t)jump > l->line_mask + 1 ? l->line_mask + 1 : (uint32_t)jump;
            for (int c = 0; c < l->channels; c++)
                for (uint32_t k = 0; k < clear; k++) l->line[c][(l->next + k) & l->line_mask] = 0;
        }
    }
    l->next = start + frames;
    for (int c = 0; c < l->channels; c++) {
        const float *in = jack_port_get_buffer(l->inputs[c], frames);
        float *out = jack_port_get_buffer(l->outputs[c], frames);
        for (jack_nframes_t i = 0; i < frames; i++) {
            jack_nframes_t now = start + i;
            l->line[c][now & l->line_mask] = in[i];
            /* Frames from before the line started are silence. */
            int32_t since = (int32_t)(now - l->first);
            out[i] = since >= l->delay ? l->line[c][(jack_nframes_t)(now - (jack_nframes_t)l->delay) & l->line_mask] : 0;
        }
    }
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
    uint32_t size = 1;
    while (size < (uint32_t)delay_frames + 16384) size <<= 1;
    l->line_mask = size - 1;
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
        l->line[c] = calloc((size_t)l->line_mask + 1, sizeof(float));
        if (!l->inputs[c] || !l->outputs[c] || !l->line[c]) {
            td_jack_loop_close(l);
            return NULL;
        }
    }
    if (jack_set_process_callback(l->client, loop_process, l) != 0 || jack_set_latency_callback(l->client, loop_latency, l) != 0
        || jack_set_buffer_size_callback(l->client, loop_buffer_size, l) != 0 || jack_activate(l->client) != 0) {
        td_jack_loop_close(l);
        return NULL;
    }
    jack_recompute_total_latencies(l->client);
    return l;
}

void td_jack_loop_service(td_jack_loop *loop) {
    if (loop && loop->skips != loop->skips_said) {
        loop->skips_said = loop->skips;
        printf("skipped: %ld cycles so far, the last %ld frames\n", loop->skips_said, loop->last_skip_frames);
        fflush(stdout);
    }
    if (loop && loop->buffer_changed) {
        loop->buffer_changed = 0;
        jack_recompute_total_latencies(loop->client);
    }
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
