/* td-jack-loop NAME [--delay FRAMES] [--report yes|no] [--channels N] [--sine HZ]: a loopback
   cable for the tests and `bench jack` (never installed). Whatever reaches NAME:in_K comes
   back out of NAME:out_K, FRAMES later (counted in the frames this client processes).

   With --sine HZ it is a source instead: out_K plays a cosine of HZ at 0.25 by JACK's frame
   time (jack_last_frame_time + the frame's offset), so the phase of every sample a recorder
   keeps tells the device time it belongs to.

   It stands for a sound card with a cable from its output to its input, as JACK's latency
   API describes one: its inputs are the card's playback side and its outputs its capture
   side, each terminal (nothing passes through them as far as latency goes). So it tells, as a
   driver does, the latency it knows about:

     - the graph's own period: a loop through another client always costs one cycle (whichever
       runs first, the other reads what was written a cycle before), as a card's buffering
       costs periods; it follows the buffer size;
     - with --report yes (the default), FRAMES too: a driver that knows its converters.
       With --report no it keeps them to itself, like the converters, cables and USB delays
       no driver reports, which only `tapedeck calibrate` can measure.

   The whole latency sits on the playback side (NAME:in_K's playback latency); the capture
   side reports 0. Only the sum matters to a recorder placing a take.

   A process of its own, not a client in the test process: libjack keeps per-process state
   bound to the first server it served, and the tests run many servers one after another.
   Prints "ready" once its ports exist and its latency is set, then runs until SIGTERM/SIGINT. */
#include <jack/jack.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_CHANNELS 8

static jack_client_t *client;
static jack_port_t *inputs[MAX_CHANNELS];
static jack_port_t *outputs[MAX_CHANNELS];
static int channels = 1;
static long delay = 0;
static int report = 1;
static double sineHz = 0;
static float *line[MAX_CHANNELS];
static long lineSize;
static long position;
static volatile sig_atomic_t running = 1;

static void stop(int sig) { (void)sig; running = 0; }

/* JACK's thread: a delay line per channel, no allocation. */
static int process(jack_nframes_t frames, void *arg) {
    (void)arg;
    if (sineHz > 0) {
        jack_nframes_t start = jack_last_frame_time(client);
        double rate = (double)jack_get_sample_rate(client);
        for (int c = 0; c < channels; c++) {
            float *out = jack_port_get_buffer(outputs[c], frames);
            for (jack_nframes_t i = 0; i < frames; i++) {
                /* The frame time wraps at 2^32; the phase is taken modulo the tone's period. */
                double t = fmod((double)(jack_nframes_t)(start + i) * sineHz / rate, 1.0);
                out[i] = (float)(0.25 * cos(2 * M_PI * t));
            }
        }
        return 0;
    }
    for (int c = 0; c < channels; c++) {
        const float *in = jack_port_get_buffer(inputs[c], frames);
        float *out = jack_port_get_buffer(outputs[c], frames);
        for (jack_nframes_t i = 0; i < frames; i++) {
            long at = (position + (long)i) % lineSize;
            line[c][at] = in[i];
            long from = (position + (long)i - delay) % lineSize;
            if (from < 0) from += lineSize;
            out[i] = position + (long)i >= delay ? line[c][from] : 0;
        }
    }
    position += frames;
    return 0;
}

/* JACK's notification thread: the latency this "card" knows, on its own ports only. */
static void latency(jack_latency_callback_mode_t mode, void *arg) {
    (void)arg;
    jack_latency_range_t range;
    if (mode == JackPlaybackLatency) {
        jack_nframes_t frames = jack_get_buffer_size(client) + (report ? (jack_nframes_t)delay : 0);
        range.min = range.max = frames;
        for (int c = 0; c < channels; c++) jack_port_set_latency_range(inputs[c], JackPlaybackLatency, &range);
    } else {
        range.min = range.max = 0;
        for (int c = 0; c < channels; c++) jack_port_set_latency_range(outputs[c], JackCaptureLatency, &range);
    }
}

/* The period is part of what it reports: the main loop asks JACK to recompute (a request to
   the server from inside a notification could deadlock). */
static volatile sig_atomic_t bufferChanged = 0;

static int bufferSize(jack_nframes_t frames, void *arg) {
    (void)frames;
    (void)arg;
    bufferChanged = 1;
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: td-jack-loop NAME [--delay FRAMES] [--report yes|no] [--channels N] [--sine HZ]\n");
        return 2;
    }
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--delay") == 0) delay = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--report") == 0) report = strcmp(argv[i + 1], "no") != 0;
        else if (strcmp(argv[i], "--channels") == 0) channels = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--sine") == 0) sineHz = atof(argv[i + 1]);
        else { fprintf(stderr, "td-jack-loop: unknown option %s\n", argv[i]); return 2; }
    }
    if (delay < 0 || delay > 1 << 20 || channels < 1 || channels > MAX_CHANNELS) {
        fprintf(stderr, "td-jack-loop: --delay 0...1048576, --channels 1...%d\n", MAX_CHANNELS);
        return 2;
    }
    signal(SIGTERM, stop);
    signal(SIGINT, stop);
    jack_status_t status;
    client = jack_client_open(argv[1], JackNoStartServer | JackUseExactName, &status);
    if (!client) { fprintf(stderr, "td-jack-loop: no JACK server (status 0x%x)\n", (unsigned)status); return 1; }
    lineSize = delay + 16384;
    for (int c = 0; c < channels; c++) {
        char name[32];
        snprintf(name, sizeof name, "in_%d", c + 1);
        inputs[c] = jack_port_register(client, name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput | JackPortIsTerminal, 0);
        snprintf(name, sizeof name, "out_%d", c + 1);
        outputs[c] = jack_port_register(client, name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput | JackPortIsTerminal, 0);
        line[c] = calloc((size_t)lineSize, sizeof(float));
        if (!inputs[c] || !outputs[c] || !line[c]) { fprintf(stderr, "td-jack-loop: cannot make its ports\n"); return 1; }
    }
    if (jack_set_process_callback(client, process, NULL) != 0 || jack_set_latency_callback(client, latency, NULL) != 0
        || jack_set_buffer_size_callback(client, bufferSize, NULL) != 0 || jack_activate(client) != 0) {
        fprintf(stderr, "td-jack-loop: cannot set up the client\n");
        return 1;
    }
    jack_recompute_total_latencies(client);
    printf("ready\n");
    fflush(stdout);
    while (running) {
        if (bufferChanged) {
            bufferChanged = 0;
            jack_recompute_total_latencies(client);
        }
        usleep(10000);
    }
    jack_deactivate(client);
    jack_client_close(client);
    return 0;
}
