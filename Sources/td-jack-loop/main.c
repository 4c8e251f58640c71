/* td-jack-loop NAME [--delay FRAMES] [--report yes|no] [--channels N] [--sine HZ]
                    [--never-ready yes]:
   a loopback cable (or, with --sine, a frame-time cosine source) on JACK for the tests, as a
   process of its own (never installed): see td_jack_loop_open in CJACKProbe.h.

   A process of its own, not a client in the test process: libjack keeps per-process state
   bound to the first server it served, the tests run many servers one after another, and
   under PipeWire it must load PipeWire's libjack (LD_LIBRARY_PATH, as pw-jack does).
   Prints "ready" once its ports exist and its latency is set, then, within 10 ms of each:
     xruns N at FRAME          the server told it of its Nth xrun (any client's) when its last
                               cycle began at JACK frame time FRAME (at or after the late one)
     skipped from FROM to TO   it was not run for frames FROM...TO-1 of JACK's frame time
   and every 250 ms "clock FRAME MICROSECONDS": the frame time of the last cycle it ran and
   CLOCK_MONOTONIC when it ran it, so a test can place a moment of its own on JACK's clock.
   With --never-ready yes it is also a slow-sync client that never says it is ready (JACK's
   transport then starts only at the server's sync timeout). Runs until SIGTERM/SIGINT.
   Frame times are JACK's (unsigned 32-bit, wrapping). */
#include "CJACKProbe.h"
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t running = 1;

static void stop(int sig) { (void)sig; running = 0; }

int main(int argc, char **argv) {
    if (argc < 2 || (argc % 2) != 0) {
        fprintf(stderr, "usage: td-jack-loop NAME [--delay FRAMES] [--report yes|no] [--channels N] [--sine HZ]"
                        " [--never-ready yes]\n");
        return 2;
    }
    long delay = 0;
    int report = 1, channels = 1, neverReady = 0;
    double sine = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--delay") == 0) delay = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--report") == 0) report = strcmp(argv[i + 1], "no") != 0;
        else if (strcmp(argv[i], "--channels") == 0) channels = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--sine") == 0) sine = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--never-ready") == 0) neverReady = strcmp(argv[i + 1], "no") != 0;
        else { fprintf(stderr, "td-jack-loop: unknown option %s\n", argv[i]); return 2; }
    }
    signal(SIGTERM, stop);
    signal(SIGINT, stop);
    td_jack_loop *loop = td_jack_loop_open(argv[1], channels, delay, report, sine);
    if (!loop) {
        fprintf(stderr, "td-jack-loop: cannot open the client '%s' (no JACK server, the name taken, or --delay 0...1048576, --channels 1...8)\n", argv[1]);
        return 1;
    }
    if (neverReady && td_jack_loop_never_ready(loop) != 0) {
        fprintf(stderr, "td-jack-loop: JACK refused the sync callback\n");
        td_jack_loop_close(loop);
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    int told = 0;
    long toldSpans = 0;
    for (long tick = 0; running; tick++) {
        td_jack_loop_service(loop);
        uint32_t frame, from, to;
        for (int xruns = td_jack_loop_xruns(loop); told < xruns; told++) {
            if (td_jack_loop_xrun_frame(loop, told, &frame) == 0) printf("xruns %d at %u\n", told + 1, frame);
            else printf("xruns %d\n", told + 1);  /* more than the ring keeps in 10 ms: said, unplaced */
        }
        for (long spans = td_jack_loop_skipped_spans(loop); toldSpans < spans; toldSpans++) {
            if (td_jack_loop_skipped_span(loop, toldSpans, &from, &to) == 0) printf("skipped from %u to %u\n", from, to);
        }
        if (tick % 25 == 0) {
            uint64_t microseconds;
            if (td_jack_loop_clock(loop, &frame, &microseconds) == 0) printf("clock %u %llu\n", frame, (unsigned long long)microseconds);
        }
        fflush(stdout);
        usleep(10000);
    }
    td_jack_loop_close(loop);
    return 0;
}
