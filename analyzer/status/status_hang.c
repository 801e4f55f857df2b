/* status_hang.c: the watchdog's HANG records in a process log, and where
 * its stack sample says the thread was (status_hang.h). Frames are named
 * with the log's .modules file and addr2line, as call sites are. */
#include "config.h"
#include "analyzer/status/status_hang.h"
#include "analyzer/status/failure.h"
#include "libtrace/log.h"
#include "libtrace/span.h"

#include <stdio.h>
#include <string.h>

/* "function (file:line)" of code address pc of the process whose modules
 * file is mpath; 0 when pc is in a system library or unknown. */
static int sh_name(const char *mpath, uint64_t pc, int exact, char *buf, size_t len)
{
    FILE *f = fopen(mpath, "re");
    if (!f)
        return 0;
    char line[1400], mod[1100] = "";
    unsigned long long lo, hi, bias, off = 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        if (sscanf(line, "%llx %llx %llx %1099[^\n]", &lo, &hi, &bias, mod) == 4 && pc >= lo && pc < hi) {
            off = pc - bias;
            found = 1;
        }
    fclose(f);
    if (!found || cs_failure_system_module(mod) || strchr(mod, '\''))
        return 0;
    /* a return address points after its call: name the byte before */
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "addr2line -f -s -e '%s' 0x%llx 2>/dev/null", mod, exact || !off ? off : off - 1);
    FILE *p = popen(cmd, "r");
    if (!p)
        return 0;
    char fn[256] = "", fl[256] = "";
    int ok = 0;
    if (fgets(fn, sizeof fn, p) && fgets(fl, sizeof fl, p)) {
        fn[strcspn(fn, "\n")] = '\0';
        fl[strcspn(fl, "\n ")] = '\0';
        if (strncmp(fn, "??", 2) != 0) {
            if (strncmp(fl, "??", 2) != 0)
                snprintf(buf, len, "%s (%s)", fn, fl);
            else
                snprintf(buf, len, "%s", fn);
            ok = 1;
        }
    }
    pclose(p);
    return ok;
}

int cs_status_hang_read(const char *log_path, cs_status_hang *h)
{
    char err[256];
    memset(h, 0, sizeof *h);
    cs_logr *lr = cs_logr_open(log_path, err, sizeof err);
    if (!lr)
        return 0;
    cs_rec_hang last;
    memset(&last, 0, sizeof last);
    int have = 0;
    /* the stack's frames: CALLSITE records of id last.stack, written just
     * before the HANG record that names it */
    uint64_t pc[CS_CALLSITE_MAX_FRAMES];
    int npc = 0;
    uint32_t want = 0;
    const cs_rec *x;
    while ((x = cs_logr_next(lr)) != NULL)
        if (CS_REC_KIND(x->hdr) == CS_REC_HANG) {
            last = *(const cs_rec_hang *)x;
            have = 1;
        }
    cs_logr_close(lr);
    if (!have)
        return 0;
    want = last.stack;
    if (want && (lr = cs_logr_open(log_path, err, sizeof err)) != NULL) {
        while ((x = cs_logr_next(lr)) != NULL) {
            const cs_rec_callsite *c = (const cs_rec_callsite *)x;
            if (CS_REC_KIND(x->hdr) != CS_REC_CALLSITE || c->id != want)
                continue;
            for (uint32_t i = 0; i < c->nhere && i < CS_CALLSITE_FRAMES_PER_REC; i++) {
                uint32_t k = (uint32_t)c->part * CS_CALLSITE_FRAMES_PER_REC + i;
                if (k < CS_CALLSITE_MAX_FRAMES) {
                    pc[k] = c->pc[i];
                    if ((int)k + 1 > npc)
                        npc = (int)k + 1;
                }
            }
        }
        cs_logr_close(lr);
    }
    h->reason = last.reason;
    h->op = last.op;
    h->since = last.since;
    h->detected = last.detected;
    h->nframes = npc;
    char mpath[1200];
    snprintf(mpath, sizeof mpath, "%s", log_path);
    char *dot = strrchr(mpath, '.');
    if (dot && strcmp(dot, ".cslog") == 0)
        *dot = '\0';
    strncat(mpath, ".modules", sizeof mpath - strlen(mpath) - 1);
    for (int k = 0; k < npc && !h->where[0]; k++)
        sh_name(mpath, pc[k], k == 0, h->where, sizeof h->where);
    return 1;
}
