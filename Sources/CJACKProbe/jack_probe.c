#include "CJACKProbe.h"
#include <jack/jack.h>
#include <jack/transport.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    volatile int gone;
};

static void quiet(const char *message) { (void)message; }

/* After the server went away libjack must not be called for this client again. */
static void shutdown_cb(jack_status_t code, const char *reason, void *arg) {
    (void)code; (void)reason;
    __atomic_store_n(&((td_jack_probe *)arg)->gone, 1, __ATOMIC_RELEASE);
}

static int process(jack_nframes_t nframes, void *arg) {
    td_jack_probe *p = arg;
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
    int64_t at = p->count;
    jack_nframes_t keep = nframes;
    if (at + keep > p->capacity) keep = (jack_nframes_t)(p->capacity - at);
    for (int c = 0; c < p->inputs; c++) {
        const float *buf = jack_port_get_buffer(p->in[c], nframes);
        memcpy(p->samples[c] + at, buf, keep * sizeof(float));
    }
    for (jack_nframes_t i = 0; i < keep; i++) p->frames[at + i] = rolling ? (int64_t)pos.frame + i : -1;
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

void td_jack_probe_close(td_jack_probe *p) {
    if (!p) return;
    if (!__atomic_load_n(&p->gone, __ATOMIC_ACQUIRE)) {
        jack_deactivate(p->client);
        jack_client_close(p->client);
    }
    for (int c = 0; c < p->inputs; c++) free(p->samples[c]);
    free(p->frames);
    free(p);
}
