// zlib: run chunks are gzipped by pacerd and gunzipped by pacer-cloud, both through Sources/Gzip.
#ifndef PACER_CZLIB_SHIM_H
#define PACER_CZLIB_SHIM_H
#include <zlib.h>

// deflateInit2 is a macro over deflateInit2_, which Swift cannot call.
static inline int pacer_deflate_init_gzip(z_stream *stream, int level) {
    // windowBits 15 + 16: a gzip header and trailer, as Content-Encoding: gzip means.
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

// Raw deflate (windowBits -15: no header nor trailer), as a ZIP entry holds it.
static inline int pacer_deflate_init_raw(z_stream *stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
}

static inline int pacer_inflate_init_gzip(z_stream *stream) {
    return inflateInit2(stream, 15 + 16);
}
#endif
