/* td-jack-midi-clock NAME: a JACK MIDI listener for the tests (never installed). It prints
   every message heard on NAME:midi_in as "FRAME STATUS DATA1 DATA2" (decimal), FRAME being
   JACK's frame time of the event (the cycle's jack_last_frame_time plus its offset), and runs
   until SIGTERM or SIGINT. jack_midi_dump -a cannot stand in for it: it counts its own cycles,
   so it does not see the cycles JACK's clock moved on without running any client.

   A process of its own, not a client in the test process: libjack keeps per-process state
   bound to the first server it served, and the tests run many servers one after another. */
#include <jack/jack.h>
#include <jack/midiport.h>
#include <jack/ringbuffer.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct { int64_t frame; uint8_t bytes[3]; uint8_t size; } message;

static jack_client_t *client;
static jack_port_t *port;
static jack_ringbuffer_t *ring;
static volatile sig_atomic_t running = 1;

static void stop(int sig) { (void)sig; running = 0; }

/* JACK's thread: messages to the ring, no allocation. */
static int process(jack_nframes_t frames, void *arg) {
    (void)arg;
    void *in = jack_port_get_buffer(port, frames);
    jack_nframes_t start = jack_last_frame_time(client);
    jack_nframes_t count = jack_midi_get_event_count(in);
    for (jack_nframes_t i = 0; i < count; i++) {
        jack_midi_event_t e;
        if (jack_midi_event_get(&e, in, i) != 0 || e.size == 0) continue;
        message m = { (int64_t)start + e.time, {0, 0, 0}, (uint8_t)(e.size < 3 ? e.size : 3) };
        memcpy(m.bytes, e.buffer, m.size);
        if (jack_ringbuffer_write_space(ring) >= sizeof m) jack_ringbuffer_write(ring, (const char *)&m, sizeof m);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: td-jack-midi-clock NAME\n"); return 2; }
    signal(SIGTERM, stop);
    signal(SIGINT, stop);
    jack_status_t status;
    client = jack_client_open(argv[1], JackNoStartServer | JackUseExactName, &status);
    if (!client) { fprintf(stderr, "td-jack-midi-clock: no JACK server (status 0x%x)\n", (unsigned)status); return 1; }
    ring = jack_ringbuffer_create(4096 * sizeof(message));
    port = jack_port_register(client, "midi_in", JACK_DEFAULT_MIDI_TYPE, JackPortIsInput, 0);
    if (!ring || !port || jack_set_process_callback(client, process, NULL) != 0 || jack_activate(client) != 0) {
        fprintf(stderr, "td-jack-midi-clock: cannot set up the client\n");
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    while (running) {
        message m;
        while (jack_ringbuffer_read_space(ring) >= sizeof m) {
            jack_ringbuffer_read(ring, (char *)&m, sizeof m);
            printf("%lld %u %u %u\n", (long long)m.frame, m.bytes[0], m.bytes[1], m.bytes[2]);
        }
        fflush(stdout);
        usleep(5000);
    }
    jack_deactivate(client);
    message m;
    while (jack_ringbuffer_read_space(ring) >= sizeof m) {
        jack_ringbuffer_read(ring, (char *)&m, sizeof m);
        printf("%lld %u %u %u\n", (long long)m.frame, m.bytes[0], m.bytes[1], m.bytes[2]);
    }
    fflush(stdout);
    jack_client_close(client);
    return 0;
}
