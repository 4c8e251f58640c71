#include "CJACKProbe.h"
#include <jack/jack.h>
#include <jack/midiport.h>
#include <jack/transport.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIDI_CAPACITY 4096
#define PLAYED_CAPACITY 65536

struct td_jack_probe {
    jack_client_t *client;
    int inputs, outputs;
    jack_port_t *in[8], *out[8];
    double tone_hz;
    float tone_amp;
    int64_t onset;
    double rate;
    int64_t capacity;
    volatile int64_t count;
    float *samples[8];
    int64_t *frames;
    int64_t *clock;
    volatile int gone;
    jack_port_t *midi_in, *midi_out;
    /* Scheduled messages (control thread writes, then publishes `send_count`). */
    int64_t send_frames[MIDI_CAPACITY];
    uint32_t send_messages[MIDI_CAPACITY];
    int send_sizes[MIDI_CAPACITY];
    volatile int64_t send_count;
    int64_t sent;
    /* Heard messages (process writes, then publishes `heard_count`). */
    int64_t heard_frames[MIDI_CAPACITY];
    uint32_t heard_messages[MIDI_CAPACITY];
    volatile int64_t heard_count;
    /* Each cycle its outputs played: the cycle's frame time and the transport frame its tone
       was read for (-1: stopped). A cycle run late can read the transport of the next one,
       and then plays a period off its clock; a judge of a take needs to know. */
    int64_t played_clock[PLAYED_CAPACITY];
    int64_t played_frame[PLAYED_CAPACITY];
    volatile int64_t played_count;
};

static void quiet(const char *message) { (void)message; }

/* After the server went away libjack must not be called for this client again. */
static void shutdown_cb(jack_status_t code, const char *reason, void *arg) {
    (void)code; (void)reason;
    __atomic_store_n(&((td_jack_probe *)arg)->gone, 1, __ATOMIC_RELEASE);
}

/* MIDI: what is due this cycle goes out, what came in is kept with its frame time. */
static void process_midi(td_jack_probe *p, jack_nframes_t nframes, jack_nframes_t start) {
    void *out = jack_port_get_buffer(p->midi_out, nframes);
    jack_midi_clear_buffer(out);
    int64_t scheduled = __atomic_load_n(&p->send_count, __ATOMIC_ACQUIRE);
    while (p->sent < scheduled && p->send_frames[p->sent] < (int64_t)start + nframes) {
        int64_t at = p->send_frames[p->sent] - (int64_t)start;
        if (at < 0) at = 0;
        uint32_t m = p->send_messages[p->sent];
        jack_midi_data_t bytes[3] = { (jack_midi_data_t)(m >> 16), (jack_midi_data_t)(m >> 8), (jack_midi_data_t)m };
        jack_midi_event_write(out, (jack_nframes_t)at, bytes, (size_t)p->send_sizes[p->sent]);
        p->sent++;
    }
    void *in = jack_port_get_buffer(p->midi_in, nframes);
    uint32_t count = jack_midi_get_event_count(in);
    int64_t heard = p->heard_count;
    for (uint32_t i = 0; i < count && heard < MIDI_CAPACITY; i++) {
        jack_midi_event_t e;
        if (jack_midi_event_get(&e, in, i) != 0 || e.size == 0) continue;
        uint32_t m = (uint32_t)e.buffer[0] << 16;
        if (e.size > 1) m |= (uint32_t)e.buffer[1] << 8;
        if (e.size > 2) m |= e.buffer[2];
        p->heard_frames[heard] = (int64_t)start + e.time;
        p->heard_messages[heard] = m;
        heard++;
    }
    __atomic_store_n(&p->heard_count, heard, __ATOMIC_RELEASE);
}

static int process(jack_nframes_t nframes, void *arg) {
    td_jack_probe *p = arg;
    jack_nframes_t start = jack_last_frame_time(p->client);
    process_midi(p, nframes, start);
    jack_position_t pos;
    jack_transport_state_t state = jack_transport_query(p->client, &pos);
    int rolling = state == JackTransportRolling;
    for (int o = 0; o < p->outputs; o++) {
        float *buf = jack_port_get_buffer(p->out[o], nframes);
        for (jack_nframes_t i = 0; i < nframes; i++) {
            int64_t frame = (int64_t)pos.frame + i;
            float v = 0;
            if (rolling && frame >= p->onset) v = p->tone_amp * (float)cos(2 * M_PI * p->tone_hz * (double)(frame - p->onset) / p->rate);
            buf[i] = v;
        }
    }
    int64_t played = p->played_count;
    if (p->outputs > 0 && played < PLAYED_CAPACITY) {
        p->played_clock[played] = (int64_t)start;
        p->played_frame[played] = rolling ? (int64_t)pos.frame : -1;
        __atomic_store_n(&p->played_count, played + 1, __ATOMIC_RELEASE);
    }
    int64_t at = p->count;
    jack_nframes_t keep = nframes;
    if (at + keep > p->capacity) keep = (jack_nframes_t)(p->capacity - at);
    for (int c = 0; c < p->inputs; c++) {
        const float *buf = jack_port_get_buffer(p->in[c], nframes);
        memcpy(p->samples[c] + at, buf, keep * sizeof(float));
    }
    for (jack_nframes_t i = 0; i < keep; i++) {
        p->frames[at + i] = rolling ? (int64_t)pos.frame + i : -1;
        p->clock[at + i] = (int64_t)start + i;
    }
    __atomic_store_n(&p->count, at + keep, __ATOMIC_RELEASE);
    return 0;
}

td_jack_probe *td_jack_probe_open(const char *name, int inputs, int outputs, double tone_hz, float tone_amp,
                                  int64_t onset_frame, int64_t capacity) {
    if (inputs > 8 || outputs > 8) return NULL;
    jack_set_error_function(quiet);
    jack_set_info_function(quiet);
    jack_status_t status;
    jack_client_t *client = jack_client_open(name, JackNoStartServer | JackUseExactName, &status);
    if (!client) return NULL;
    td_jack_probe *p = calloc(1, sizeof *p);
    p->client = client;
    p->inputs = inputs;
    p->outputs = outputs;
    p->tone_hz = tone_hz;
    p->tone_amp = tone_amp;
    p->onset = onset_frame;
    p->rate = jack_get_sample_rate(client);
    p->capacity = capacity > 0 ? capacity : 1;
    p->frames = calloc((size_t)p->capacity, sizeof(int64_t));
    p->clock = calloc((size_t)p->capacity, sizeof(int64_t));
    p->midi_in = jack_port_register(client, "midi_in", JACK_DEFAULT_MIDI_TYPE, JackPortIsInput, 0);
    p->midi_out = jack_port_register(client, "midi_out", JACK_DEFAULT_MIDI_TYPE, JackPortIsOutput, 0);
    char port[32];
    for (int c = 0; c < inputs; c++) {
        p->samples[c] = calloc((size_t)p->capacity, sizeof(float));
        snprintf(port, sizeof port, "in_%d", c + 1);
        p->in[c] = jack_port_register(client, port, JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
    }
    for (int c = 0; c < outputs; c++) {
        snprintf(port, sizeof port, "out_%d", c + 1);
        p->out[c] = jack_port_register(client, port, JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
    }
    jack_set_process_callback(client, process, p);
    jack_on_info_shutdown(client, shutdown_cb, p);
    if (jack_activate(client) != 0) {
        td_jack_probe_close(p);
        return NULL;
    }
    return p;
}

int64_t td_jack_probe_count(td_jack_probe *p) { return __atomic_load_n(&p->count, __ATOMIC_ACQUIRE); }
const float *td_jack_probe_samples(td_jack_probe *p, int input) { return p->samples[input]; }
const int64_t *td_jack_probe_frames(td_jack_probe *p) { return p->frames; }
const char *td_jack_probe_client_name(td_jack_probe *p) { return jack_get_client_name(p->client); }
int td_jack_probe_connect(td_jack_probe *p, const char *source, const char *destination) {
    return jack_connect(p->client, source, destination);
}

const int64_t *td_jack_probe_clock(td_jack_probe *p) { return p->clock; }
int64_t td_jack_probe_played_count(td_jack_probe *p) { return __atomic_load_n(&p->played_count, __ATOMIC_ACQUIRE); }
const int64_t *td_jack_probe_played_clock(td_jack_probe *p) { return p->played_clock; }
const int64_t *td_jack_probe_played_frame(td_jack_probe *p) { return p->played_frame; }
int64_t td_jack_probe_now(td_jack_probe *p) { return (int64_t)jack_frame_time(p->client); }

int td_jack_probe_send(td_jack_probe *p, int64_t frame, uint8_t status, uint8_t data1, uint8_t data2, int size) {
    int64_t n = p->send_count;
    if (n >= MIDI_CAPACITY) return -1;
    p->send_frames[n] = frame;
    p->send_messages[n] = (uint32_t)status << 16 | (uint32_t)data1 << 8 | data2;
    p->send_sizes[n] = size < 1 ? 1 : size > 3 ? 3 : size;
    __atomic_store_n(&p->send_count, n + 1, __ATOMIC_RELEASE);
    return 0;
}

int64_t td_jack_probe_midi_count(td_jack_probe *p) { return __atomic_load_n(&p->heard_count, __ATOMIC_ACQUIRE); }
const int64_t *td_jack_probe_midi_frames(td_jack_probe *p) { return p->heard_frames; }
const uint32_t *td_jack_probe_midi_messages(td_jack_probe *p) { return p->heard_messages; }

void td_jack_probe_close(td_jack_probe *p) {
    if (!p) return;
    if (!__atomic_load_n(&p->gone, __ATOMIC_ACQUIRE)) {
        jack_deactivate(p->client);
        jack_client_close(p->client);
    }
    for (int c = 0; c < p->inputs; c++) free(p->samples[c]);
    free(p->frames);
    free(p->clock);
    free(p);
}
