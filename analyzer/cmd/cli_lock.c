/* cli_lock.c: the output folder's lock as the commands that write a
 * folder take it (run, ingest): one message for a folder another
 * command holds, and --wait (libtrace/dirlock.h). */
#include "config.h"
#include "analyzer/cmd/cli.h"
#include "common/msg.h"
#include "libtrace/dirlock.h"

int cs_cli_lock(const char *cmd, const char *dir, int wait)
{
    char err[1400];
    int rc = cs_dirlock_take(dir, 0, err, sizeof err);
    if (rc == 1 && wait) {
        cs_note("%s: %s; waiting for it to end (--wait)", cmd, err);
        rc = cs_dirlock_take(dir, 1, err, sizeof err);
    }
    if (rc == 1)
        cs_error("%s: %s; wait for it to end (or add --wait), or give another folder", cmd, err);
    else if (rc < 0)
        cs_error("%s: %s", cmd, err);
    return rc;
}
