#ifndef TAPEDECK_CLV2_SHIM_H
#define TAPEDECK_CLV2_SHIM_H
// The LV2 specification headers (lv2-dev): the plugin ABI a host and a plugin share. Header
// only, nothing to link; TapedeckLV2 hosts plugins through it, TapedeckLV2Export publishes.
#include <lv2/core/lv2.h>
#include <lv2/atom/atom.h>
#include <lv2/urid/urid.h>
#include <lv2/options/options.h>
#include <lv2/worker/worker.h>
#include <lv2/state/state.h>
#include <lv2/log/log.h>
#include <lv2/buf-size/buf-size.h>
#include <lv2/midi/midi.h>
#include <stdarg.h>
#include <stdio.h>

// log:log hands plugins a printf-style function, which Swift cannot define (C variadics), so
// the host's log lives here. It keeps the last error or warning a plugin printed (any thread,
// realtime included: vsnprintf into a fixed buffer, no allocation) for the host to show.
typedef struct {
    LV2_URID errorType;    // log:Error, mapped by the host
    LV2_URID warningType;  // log:Warning
    char lastMessage[512]; // the last error or warning, NUL-terminated
    int messageCount;      // errors and warnings so far (read with __atomic_load_n)
} TapedeckLogSink;

static int tapedeck_log_vprintf(LV2_Log_Handle handle, LV2_URID type, const char *format, va_list arguments) {
    TapedeckLogSink *sink = (TapedeckLogSink *)handle;
    if (!sink || (type != sink->errorType && type != sink->warningType)) return 0;
    int n = vsnprintf(sink->lastMessage, sizeof sink->lastMessage, format, arguments);
    __atomic_add_fetch(&sink->messageCount, 1, __ATOMIC_RELEASE);
    return n;
}

static int tapedeck_log_printf(LV2_Log_Handle handle, LV2_URID type, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    int n = tapedeck_log_vprintf(handle, type, format, arguments);
    va_end(arguments);
    return n;
}

/// The log:log feature data for `sink`.
static inline LV2_Log_Log tapedeck_log_make(TapedeckLogSink *sink) {
    LV2_Log_Log log = { sink, tapedeck_log_printf, tapedeck_log_vprintf };
    return log;
}

/// How many errors and warnings `sink` has received.
static inline int tapedeck_log_count(const TapedeckLogSink *sink) {
    return __atomic_load_n(&sink->messageCount, __ATOMIC_ACQUIRE);
}

#endif
