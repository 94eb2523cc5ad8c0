#define _GNU_SOURCE
#include "loaded_objects.h"
#include <elf.h>
#include <link.h>
#include <malloc.h>
#include <string.h>
#include <unistd.h>

struct visit {
    pacer_segment_visitor visit;
    void *context;
    uintptr_t page;
};

static int has_text_relocations(const struct dl_phdr_info *info) {
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
        const ElfW(Dyn) *entry = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        for (; entry->d_tag != DT_NULL; entry++) {
            if (entry->d_tag == DT_TEXTREL) return 1;
            if (entry->d_tag == DT_FLAGS && (entry->d_un.d_val & DF_TEXTREL)) return 1;
        }
    }
    return 0;
}

static int visit_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct visit *v = data;
    if (info->dlpi_name && strstr(info->dlpi_name, "vdso")) return 0;
    if (has_text_relocations(info)) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *segment = &info->dlpi_phdr[i];
        if (segment->p_type != PT_LOAD || (segment->p_flags & PF_W)) continue;
        // Inwards: a partial page at either end may belong to a neighbouring segment.
        uintptr_t start = (info->dlpi_addr + segment->p_vaddr + v->page - 1) & ~(v->page - 1);
        uintptr_t end = (info->dlpi_addr + segment->p_vaddr + segment->p_memsz) & ~(v->page - 1);
        if (end > start) v->visit((void *)start, end - start, v->context);
    }
    return 0;
}

void pacer_each_read_only_segment(pacer_segment_visitor visit, void *context) {
    struct visit v = { visit, context, (uintptr_t)sysconf(_SC_PAGESIZE) };
    dl_iterate_phdr(visit_object, &v);
}

int pacer_malloc_trim(void) {
    return malloc_trim(0);
}
