// The parts of libsystemd (systemd 252) that Pacer uses. Only the Systemd module imports this.
#ifndef PACER_CSYSTEMD_SHIM_H
#define PACER_CSYSTEMD_SHIM_H

// Without this, sd-journal.h turns sd_journal_sendv() into a macro that adds this header's own
// CODE_FILE/CODE_LINE. Swift calls the function, not the macro, but say so explicitly: the
// Systemd module sends the caller's code location as ordinary fields instead.
#define SD_JOURNAL_SUPPRESS_LOCATION

#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <systemd/sd-bus.h>
// The bus thread is woken through an eventfd.
#include <sys/eventfd.h>

#endif
