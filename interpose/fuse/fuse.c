/* fuse.c: apply mode's settings (fuse.h). */
#include "config.h"
#include "interpose/fuse/fuse.h"

#include <stdlib.h>

int cs_fuse_on, cs_fuse_test_nomem, cs_fuse_guard = 1, cs_fuse_test_fused_us, cs_fuse_test_unfused_us;
size_t cs_fuse_threshold = 64 << 10, cs_fuse_buffer = 4 << 20;

void *cs_fuse_alloc(size_t n)
{
    if (cs_fuse_test_nomem)
        return NULL;
    return malloc(n);
}

static void cs_fuse_start(const cs_settings *s, cs_log_header *h)
{
    (void)h;
    cs_fuse_on = s->fuse;
    cs_fuse_threshold = s->fuse_threshold;
    cs_fuse_buffer = s->fuse_buffer;
    cs_fuse_guard = s->fuse_guard;
    cs_fuse_test_nomem = s->test_fuse_nomem;
    cs_fuse_test_fused_us = s->test_guard_fused_us;
    cs_fuse_test_unfused_us = s->test_guard_unfused_us;
}

const cs_module cs_fuse_module = {
    .name = "fuse",
    .start = cs_fuse_start,
};
