/* td-jack-midi-send NAME WAIT_MS STEP_MS STATUS DATA1 DATA2 [STATUS DATA1 DATA2 ...]: a JACK
   MIDI sender for the tests (never installed), the controller a person turns. It registers
   NAME:midi_out, waits until something connects to it, then WAIT_MS more (or, when WAIT_MS is
   a path, until that file exists: the test says when the program is ready), then sends the
   messages (three decimal bytes each) STEP_MS apart, prints "sent" and stays until SIGTERM or
   SIGINT (going away would look like a device unplugged). jack_midiseq sends notes only.
   A message may instead be one argument of hex bytes with an `x` before them
   (`xF0000066100100...F7`), for SysEx up to 64 bytes (a Logic Control's challenge).

   A process of its own, not a client in the test process: libjack keeps per-process state
   bound to the first server it served, and the tests run many servers one after another. */
#include <jack/jack.h>
#include <jack/midiport.h>
#include <jack/ringbuffer.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct { uint8_t count; uint8_t bytes[64]; } message;

static jack_client_t *client;
static jack_port_t *port;
static jack_ringbuffer_t *ring;
static volatile sig_atomic_t running = 1;

static void stop(int sig) { (void)sig; running = 0; }

/* JACK's thread: what the main thread queued goes out at the start of this cycle. */
static int process(jack_nframes_t frames, void *arg) {
    (void)arg;
    void *out = jack_port_get_buffer(port, frames);
    jack_midi_clear_buffer(out);
    message m;
    while (jack_ringbuffer_read_space(ring) >= sizeof m) {
        jack_ringbuffer_read(ring, (char *)&m, sizeof m);
        jack_midi_event_write(out, 0, m.bytes, m.count);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: td-jack-midi-send NAME WAIT_MS STEP_MS STATUS DATA1 DATA2 [...]\n");
        return 2;
    }
    signal(SIGTERM, stop);
    signal(SIGINT, stop);
    const char *go = argv[2][0] == '/' ? argv[2] : NULL;
    long waitMs = go ? 0 : atol(argv[2]), stepMs = atol(argv[3]);
    jack_status_t status;
    client = jack_client_open(argv[1], JackNoStartServer | JackUseExactName, &status);
    if (!client) { fprintf(stderr, "td-jack-midi-send: no JACK server (status 0x%x)\n", (unsigned)status); return 1; }
    ring = jack_ringbuffer_create(1024 * sizeof(message));
    port = jack_port_register(client, "midi_out", JACK_DEFAULT_MIDI_TYPE, JackPortIsOutput, 0);
    if (!ring || !port || jack_set_process_callback(client, process, NULL) != 0 || jack_activate(client) != 0) {
        fprintf(stderr, "td-jack-midi-send: cannot set up the client\n");
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    while (running && jack_port_connected(port) == 0) usleep(2000);
    while (running && go && access(go, F_OK) != 0) usleep(10000);
    if (running) usleep((useconds_t)(waitMs * 1000));
    for (int i = 4; running && i < argc;) {
        message m = { 0, { 0 } };
        if (argv[i][0] == 'x') {
            for (const char *h = argv[i] + 1; h[0] && h[1] && m.count < sizeof m.bytes; h += 2) {
                char pair[3] = { h[0], h[1], 0 };
                m.bytes[m.count++] = (uint8_t)strtol(pair, NULL, 16);
            }
            i += 1;
        } else if (i + 2 < argc) {
            m.count = 3;
            for (int k = 0; k < 3; k++) m.bytes[k] = (uint8_t)atoi(argv[i + k]);
            i += 3;
        } else {
            fprintf(stderr, "td-jack-midi-send: a message needs three bytes\n");
            return 2;
        }
        if (jack_ringbuffer_write_space(ring) >= sizeof m) jack_ringbuffer_write(ring, (const char *)&m, sizeof m);
        usleep((useconds_t)(stepMs * 1000));
    }
    printf("sent\n");
    fflush(stdout);
    while (running) usleep(5000);
    jack_deactivate(client);
    jack_client_close(client);
    return 0;
}
