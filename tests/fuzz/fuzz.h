/* fuzz.h: what the fuzz targets share (tests/fuzz/): each defines
 * LLVMFuzzerTestOneInput; libFuzzer drives it under clang (`make fuzz`),
 * tests/fuzz/replay.c under any compiler (`make check`). */
#ifndef CS_FUZZ_H
#define CS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A private folder for this process's scratch files (made once, under
 * $TMPDIR or /tmp, removed at exit). */
const char *cs_fuzz_dir(void);
/* Write data to path (replacing it); 0 or -1. */
int cs_fuzz_write(const char *path, const uint8_t *data, size_t size);
/* Remove every file in folder dir (not dir itself), one level of
 * subfolders included. */
void cs_fuzz_clear(const char *dir);

#endif
