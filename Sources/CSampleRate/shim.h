#ifndef TAPEDECK_CSAMPLERATE_SHIM_H
#define TAPEDECK_CSAMPLERATE_SHIM_H
#include <samplerate.h>
#endif
