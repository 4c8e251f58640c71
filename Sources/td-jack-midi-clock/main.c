/* td-jack-midi-clock NAME [--dump]: a JACK MIDI listener for the tests (never installed).

   Without --dump it prints every message heard on NAME:midi_in as "FRAME STATUS DATA1 DATA2"
   (decimal), FRAME being JACK's frame time of the event (the cycle's jack_last_frame_time plus
   its offset). jack_midi_dump -a cannot stand in for it: it counts its own cycles, so it does
   not see the cycles JACK's clock moved on without running any client.

   With --dump it listens on NAME:input and prints whole messages (SysEx too, up to 256 bytes)
   as jack_midi_dump -a does ("FRAME: f0 00 66 ..."), with room for 4096 messages between its
   reads. jack_midi_dump keeps about 120 (a ring of 100 of its 4112-byte messages, rounded
   up): a control surface's first feedback (a whole bank's strips, LEDs and faders, about
   that many) overfilled it on a busy machine, and it skipped them. It says on stderr what
   it would skip.

   It prints "ready" once listening (on stderr with --dump, so stdout holds only messages)
   and runs until SIGTERM or SIGINT.

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

#define MESSAGE_BYTES 256
typedef struct { int64_t frame; uint16_t size; uint8_t bytes[MESSAGE_BYTES]; } message;

static jack_client_t *client;
static jack_port_t *port;
static jack_ringbuffer_t *ring;
static volatile sig_atomic_t running = 1;
static volatile uint32_t skipped = 0;
static int dump = 0;

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
        message m;
        m.frame = (int64_t)start + e.time;
        m.size = (uint16_t)(e.size < MESSAGE_BYTES ? e.size : MESSAGE_BYTES);
        memcpy(m.bytes, e.buffer, m.size);
        if (jack_ringbuffer_write_space(ring) >= sizeof m) jack_ringbuffer_write(ring, (const char *)&m, sizeof m);
        else skipped++;
    }
    return 0;
}

static void print(const message *m) {
    if (dump) {
        printf("%lld:", (long long)m->frame);
        for (int i = 0; i < m->size; i++) printf(" %02x", m->bytes[i]);
        printf("\n");
    } else {
        printf("%lld %u %u %u\n", (long long)m->frame, m->size > 0 ? m->bytes[0] : 0,
               m->size > 1 ? m->bytes[1] : 0, m->size > 2 ? m->bytes[2] : 0);
    }
}

static void drain(void) {
    message m;
    while (jack_ringbuffer_read_space(ring) >= sizeof m) {
        jack_ringbuffer_read(ring, (char *)&m, sizeof m);
        print(&m);
    }
    fflush(stdout);
}

int main(int argc, char **argv) {
    dump = argc == 3 && strcmp(argv[2], "--dump") == 0;
    if (argc != 2 && !dump) { fprintf(stderr, "usage: td-jack-midi-clock NAME [--dump]\n"); return 2; }
    signal(SIGTERM, stop);
    signal(SIGINT, stop);
    jack_status_t status;
    client = jack_client_open(argv[1], JackNoStartServer | JackUseExactName, &status);
    if (!client) { fprintf(stderr, "td-jack-midi-clock: no JACK server (status 0x%x)\n", (unsigned)status); return 1; }
    ring = jack_ringbuffer_create(4096 * sizeof(message));
    /* Locked, so JACK's thread never takes a page fault on a part of the ring it has not
       written yet (a late cycle of this client would lose that cycle's messages). */
    if (ring) jack_ringbuffer_mlock(ring);
    port = jack_port_register(client, dump ? "input" : "midi_in", JACK_DEFAULT_MIDI_TYPE, JackPortIsInput, 0);
    if (!ring || !port || jack_set_process_callback(client, process, NULL) != 0 || jack_activate(client) != 0) {
        fprintf(stderr, "td-jack-midi-clock: cannot set up the client\n");
        return 1;
    }
    if (!dump) { printf("ready\n"); fflush(stdout); }
    else { fprintf(stderr, "ready\n"); fflush(stderr); }
    uint32_t told = 0;
    while (running) {
        drain();
        if (skipped != told) { told = skipped; fprintf(stderr, "skipped %u messages: the ring was full\n", told); }
        usleep(5000);
    }
    jack_deactivate(client);
    drain();
    jack_client_close(client);
    return 0;
}
