// libespeak-ng (1.51): the synthesis API. Only the Speech module imports this.
#ifndef PACER_CESPEAKNG_SHIM_H
#define PACER_CESPEAKNG_SHIM_H
#include <espeak-ng/speak_lib.h>
#endif
