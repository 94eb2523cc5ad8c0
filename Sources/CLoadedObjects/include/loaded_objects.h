// The process's own loaded objects (glibc's dl_iterate_phdr, which needs _GNU_SOURCE and so is
// out of Swift's Glibc module) and malloc_trim. Only PacerDaemon's ResidentMemory uses it.
#ifndef PACER_LOADED_OBJECTS_H
#define PACER_LOADED_OBJECTS_H
#include <stddef.h>

typedef void (*pacer_segment_visitor)(void *start, size_t length, void *context);

// Calls `visit` with each non-writable PT_LOAD segment of every loaded object (the executable and
// its libraries), rounded inwards to whole pages. Skipped: the vDSO, and objects with text
// relocations, whose code pages hold private changes.
void pacer_each_read_only_segment(pacer_segment_visitor visit, void *context);

// malloc_trim(0): free heap pages back to the kernel.
int pacer_malloc_trim(void);
#endif
