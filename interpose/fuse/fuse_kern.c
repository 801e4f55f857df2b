/* fuse_kern.c: finding and loading libcskernels for the fusion engine
 * (see fuse_kern.h for where it is looked for). */
#include "config.h"
#include "interpose/fuse/fuse_kern.h"
#include "interpose/core.h"
#include "interpose/settings.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CS_KERN_SONAME "libcskernels.so.0"

static pthread_once_t cs_fk_once = PTHREAD_ONCE_INIT;
static cs_fuse_kern cs_fk;
static const cs_fuse_kern *cs_fk_ready;
static char cs_fk_why[400];

/* Open one candidate; on failure keep the loader's message of the first. */
static void *cs_fk_try(const char *path)
{
    void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (!h && !cs_fk_why[0]) {
        const char *e = dlerror();
        snprintf(cs_fk_why, sizeof cs_fk_why, "%s", e ? e : path);
    }
    return h;
}

/* The folder of this preload library, found from one of its own symbols. */
static int cs_fk_self_dir(char *dir, size_t n)
{
    Dl_info info;
    if (!dladdr((void *)&cs_fuse_kern_get, &info) || !info.dli_fname || !strchr(info.dli_fname, '/'))
        return 0;
    int len = snprintf(dir, n, "%s", info.dli_fname);
    if (len < 0 || (size_t)len >= n)
        return 0;
    *strrchr(dir, '/') = '\0';
    return 1;
}

static void *cs_fk_open(void)
{
    const char *env = cs_settings_get()->kernels_lib;
    void *h = NULL;
    if (env && (h = cs_fk_try(env)) != NULL)
        return h;
    char dir[4096], path[4200];
    if (cs_fk_self_dir(dir, sizeof dir)) {
        /* installed: $libdir/collscope/x.so -> $libdir/libcskernels.so.0;
         * build tree: BUILD/interpose/.libs/x.so -> BUILD/kernels/.libs/. */
        static const char *const rel[] = { "/../" CS_KERN_SONAME, "/../../kernels/.libs/" CS_KERN_SONAME };
        for (size_t i = 0; i < sizeof rel / sizeof *rel && !h; i++) {
            snprintf(path, sizeof path, "%s%s", dir, rel[i]);
            h = cs_fk_try(path);
        }
        if (h)
            return h;
    }
    return cs_fk_try(CS_KERN_SONAME);
}

static void cs_fk_load(void)
{
    int saved = errno;
    void *h = cs_fk_open();
    if (h) {
        struct {
            void **slot;
            const char *name;
        } syms[] = {
            { (void **)&cs_fk.ctx_new, "cs_kern_ctx_new" },
            { (void **)&cs_fk.ctx_free, "cs_kern_ctx_free" },
            { (void **)&cs_fk.ctx_set_stream, "cs_kern_ctx_set_stream" },
            { (void **)&cs_fk.pack, "cs_kern_pack" },
            { (void **)&cs_fk.unpack, "cs_kern_unpack" },
            { (void **)&cs_fk.strerror, "cs_kern_strerror" },
        };
        int ok = 1;
        for (size_t i = 0; i < sizeof syms / sizeof *syms && ok; i++)
            if (!(*syms[i].slot = dlsym(h, syms[i].name))) {
                const char *e = dlerror();
                snprintf(cs_fk_why, sizeof cs_fk_why, "%s", e ? e : syms[i].name);
                ok = 0;
            }
        if (ok)
            cs_fk_ready = &cs_fk;
    }
    if (!cs_fk_ready) {
        static int warned;
        cs_warn_once(&warned, "apply mode: cannot load the kernels library (%s); NCCL calls are not fused",
                     cs_fk_why[0] ? cs_fk_why : CS_KERN_SONAME);
    }
    errno = saved;
}

const cs_fuse_kern *cs_fuse_kern_get(void)
{
    pthread_once(&cs_fk_once, cs_fk_load);
    return cs_fk_ready;
}
