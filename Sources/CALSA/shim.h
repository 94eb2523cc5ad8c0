// libasound (ALSA 1.2): PCM playback. Only the Speech module imports this.
#ifndef PACER_CALSA_SHIM_H
#define PACER_CALSA_SHIM_H
#include <alsa/asoundlib.h>

// Switching libasound's error printing off and on around a call, on this thread (Speech's
// ALSASink.quietly), done in C: the handler's type takes a va_list, and Swift 6.2.3 crashes
// lowering any Swift use of a C function type with a va_list for aarch64, where va_list is a
// struct. (No state here: the header's static variables would not be emitted for Swift.)
static inline void pacer_alsa_silent_error(const char *file, int line, const char *function,
                                           int error, const char *format, va_list arguments) {
    (void)file; (void)line; (void)function; (void)error; (void)format; (void)arguments;
}

static inline void pacer_alsa_errors_off(void) {
    snd_lib_error_set_local(pacer_alsa_silent_error);
}

// Back to libasound's global handler: Pacer sets no other per-thread handler, and quietly's
// calls do not nest.
static inline void pacer_alsa_errors_on(void) {
    snd_lib_error_set_local(NULL);
}
#endif
