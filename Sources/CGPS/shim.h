// The parts of libgps (gpsd 3.22, API 11; also 3.25, API 14, Debian 13) that Swift cannot import
// as they are.
#ifndef PACER_CGPS_SHIM_H
#define PACER_CGPS_SHIM_H

#include <gps.h>

// gps_send() is printf-style variadic, which Swift cannot call; "%s" also keeps a '%' in
// the command from being read as a format directive.
static inline int pacer_gps_send(struct gps_data_t *gps, const char *command) {
    return gps_send(gps, "%s", command);
}

// UNION_SET ORs thirteen macros together; Swift's importer drops macros that complex.
static inline gps_mask_t pacer_union_set(void) {
    return UNION_SET;
}

// gps_unpack() always returns 0, even for rejected input, so it cannot tell a bad line from a
// good one. It calls this per-object parser, which returns the parser's status. Exported by
// libgps.so.28 (listed in Debian's libgps28.symbols since 3.3), but its header, gps_json.h,
// is not installed.
extern int libgps_json_unpack(const char *buf, struct gps_data_t *gpsdata, const char **end);

// Text for libgps_json_unpack()'s positive status codes; declared in json.h, also not installed.
extern const char *json_error_string(int err);

#endif
