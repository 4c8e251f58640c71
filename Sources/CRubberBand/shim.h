#ifndef TAPEDECK_CRUBBERBAND_SHIM_H
#define TAPEDECK_CRUBBERBAND_SHIM_H
#include <rubberband/rubberband-c.h>
#endif
