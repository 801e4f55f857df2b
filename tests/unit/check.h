/* check.h: the unit tests' one assertion: CHECK(cond, fmt, ...) prints
 * "FAIL file:line: message" and counts the failure in `failures`, which
 * the test's main returns non-zero on. */
#ifndef CS_TEST_CHECK_H
#define CS_TEST_CHECK_H

#include <stdio.h>

static int failures;
#define CHECK(cond, ...)                                         \
    do {                                                         \
        if (!(cond)) {                                           \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                        \
            fputc('\n', stderr);                                 \
            failures++;                                          \
        }                                                        \
    } while (0)

#endif
