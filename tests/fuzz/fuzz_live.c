/* fuzz_live.c: the log follower as `collscope top` uses it
 * (libtrace/log_follow.c, analyzer/live/live.c). The bytes become
 * DIR/logs/fuzz.cslog; it is followed (two refreshes), and the view and
 * the metrics are written. */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "analyzer/live/live.h"

#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *dir = cs_fuzz_dir();
    char logs[PATH_MAX], log[PATH_MAX + 16], err[1024];
    cs_fuzz_clear(dir);
    snprintf(logs, sizeof logs, "%s/logs", dir);
    snprintf(log, sizeof log, "%s/fuzz.cslog", logs);
    if (mkdir(logs, 0700) != 0 || cs_fuzz_write(log, data, size) != 0)
        return 0;
    cs_live *l = cs_live_new(dir, NULL, err, sizeof err);
    if (!l)
        return 0;
    FILE *null = fopen("/dev/null", "w");
    for (int i = 0; i < 2 && null; i++)
        if (cs_live_poll(l, err, sizeof err) == 0) {
            cs_live_frame(l, null, 80, 24, i);
            cs_live_metrics(l, null);
        }
    if (null)
        fclose(null);
    cs_live_free(l);
    return 0;
}
