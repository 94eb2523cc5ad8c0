// libasound (ALSA 1.2): PCM playback. Only the Speech module imports this.
#ifndef PACER_CALSA_SHIM_H
#define PACER_CALSA_SHIM_H
#include <alsa/asoundlib.h>
#endif
