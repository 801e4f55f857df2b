/* test_report_units.c: analyzer/report/report_units.c: one unit for a
 * column chosen by its largest value (its values as bare numbers, a value
 * too small for the unit never printed as 0), and names fitted into a
 * column (cs__report_fit): whole when they fit, else at most the width,
 * with "..." in the middle, never a file:line cut into another line, and
 * a long file:line keeping its line (its file name elided). */
#include "config.h"
#include "tests/unit/check.h"
#include "analyzer/report/report_int.h"

#include <stdio.h>
#include <string.h>

/* Does fit hold a file:line of s cut short (the line number's first
 * digits followed by "...")? */
static int cut_line(const char *fit)
{
    const char *e = strstr(fit, "...");
    if (!e || e == fit)
        return 0;
    const char *d = e;
    while (d > fit && d[-1] >= '0' && d[-1] <= '9')
        d--;
    return d < e && d > fit && d[-1] == ':';
}

static void fit_case(const char *s, int w)
{
    char buf[512];
    cs__report_fit(s, w, buf, sizeof buf);
    int n = (int)strlen(s);
    if (n <= w) {
        CHECK(strcmp(buf, s) == 0, "'%s' fits %d columns but became '%s'", s, w, buf);
        return;
    }
    CHECK((int)strlen(buf) <= w, "'%s' in %d columns: '%s' is %zu long", s, w, buf, strlen(buf));
    CHECK(strstr(buf, "...") != NULL, "'%s' in %d columns: no ellipsis in '%s'", s, w, buf);
    CHECK(!cut_line(buf), "'%s' in %d columns: a file:line cut in '%s'", s, w, buf);
    /* the tail is the string's own end */
    const char *t = strstr(buf, "...") + 3;
    CHECK(strlen(t) <= (size_t)n && strcmp(s + n - strlen(t), t) == 0, "'%s': the tail '%s' is not its end", s, t);
    printf("ok: %2d columns: %s\n", w, buf);
}

int main(void)
{
    char b[64];
    /* units */
    cs_tunit u = cs__report_tunit(733568000);
    CHECK(strcmp(u.name, "ms") == 0, "733.6 ms in %s", u.name);
    CHECK(strcmp(cs__report_tnum(&u, 19400, b, sizeof b), "0.019") == 0, "19.4 us in ms: %s", b);
    CHECK(strcmp(cs__report_tnum(&u, 200, b, sizeof b), "<0.001") == 0, "200 ns in ms: %s", b);
    CHECK(strcmp(cs__report_tnum(&u, 0, b, sizeof b), "0.000") == 0, "0 in ms: %s", b);
    CHECK(strcmp(cs__report_tnum(&u, -1, b, sizeof b), "-") == 0, "unknown: %s", b);
    u = cs__report_tunit(24416100000LL);
    CHECK(strcmp(cs__report_tstr(&u, 5861650000LL, b, sizeof b), "5.862 s") == 0, "5861.65 ms beside 24.42 s: %s", b);
    const int64_t v[] = { 3074600, 3070000 };
    u = cs__report_tunit_of(v, 2);
    CHECK(strcmp(cs__report_tstr(&u, 3074600, b, sizeof b), "3.075 ms") == 0, "3074.6 us: %s", b);
    u = cs__report_tunit(9000);
    CHECK(strcmp(cs__report_tstr(&u, 9000, b, sizeof b), "9.00 us") == 0, "9 us: %s", b);
    cs_bunit bu = cs__report_bunit(66LL << 30);
    CHECK(strcmp(bu.name, "GiB") == 0 && strcmp(cs__report_bnum(&bu, 32, b, sizeof b), "<0.01") == 0,
          "32 B in GiB: %s %s", bu.name, b);
    /* names */
    fit_case("mpi_trainer.c:606 grad_allreduce [MPI_Allreduce]", 40);
    fit_case("mpi_trainer.c:606 grad_allreduce [MPI_Allreduce]", 16);
    fit_case("MPI_Allreduce [4.0 KiB] mpi_trainer.c:606 grad_allreduce", 36);
    fit_case("MPI_Allreduce [4.0 KiB] mpi_trainer.c:1015 main", 30);
    fit_case("a_long_file_name_for_a_test.c:123456 f", 20);
    fit_case(
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel",
        50);
    fit_case("short.c:7 main", 40);
    /* a file:line too long for half the column keeps its line and the
     * rest, its file name losing its middle (nvcc's generated file names) */
    const char *gen = "tmpxft_00004fbb_00000000-6_nccl_trainer.compute_90.cudafe1.cpp:388 main [ncclBroadcast]";
    char fb[128];
    fit_case(gen, 76);
    cs__report_fit(gen, 76, fb, sizeof fb);
    CHECK(strstr(fb, ".cpp:388 main [ncclBroadcast]") != NULL && strncmp(fb, "tmpxft_", 7) == 0,
          "'%s' in 76 columns lost its location: '%s'", gen, fb);
    fit_case(gen, 40);
    /* ... anywhere in the name (the diff's and tail latency's "op [size]
     * site") */
    const char *gen2 = "MPI_Bcast [128 B] tmpxft_00004fbb_00000000-6_nccl_trainer.compute_90.cudafe1.cpp:350 main";
    fit_case(gen2, 60);
    cs__report_fit(gen2, 60, fb, sizeof fb);
    CHECK(strstr(fb, ".cpp:350 main") != NULL && strncmp(fb, "MPI_Bcast [128 B] tmpxft_", 25) == 0,
          "'%s' in 60 columns lost its location: '%s'", gen2, fb);
    /* a table's keys that differ only in their middle never read alike */
    static char keys[2][200], fits[2][200];
    snprintf(keys[0], sizeof keys[0], "%s",
             "device_functions.h:2963 __device_stub__Z7forwardjPKdS0_S0_Pd(unsigned int, double const*, double "
             "const*, double*) [__cudaLaunchKernel]");
    snprintf(keys[1], sizeof keys[1], "%s",
             "device_functions.h:2963 __device_stub__Z4lossjPKdPd(unsigned int, double const*, double*) "
             "[__cudaLaunchKernel]");
    cs__report_fit(keys[0], 72, fits[0], sizeof fits[0]);
    cs__report_fit(keys[1], 72, fits[1], sizeof fits[1]);
    CHECK(strcmp(fits[0], fits[1]) == 0, "the case no longer reads alike by itself: '%s', '%s'", fits[0], fits[1]);
    cs__report_fit_all(&keys[0][0], sizeof keys[0], 2, 72, &fits[0][0]);
    CHECK(strcmp(fits[0], fits[1]) != 0, "two keys read alike in a table: '%s'", fits[0]);
    CHECK((int)strlen(fits[0]) <= 72 && (int)strlen(fits[1]) <= 72, "too wide: '%s', '%s'", fits[0], fits[1]);
    printf("ok: told apart: %s | %s\n", fits[0], fits[1]);
    if (failures)
        fprintf(stderr, "%d checks failed\n", failures);
    return failures ? 1 : 0;
}
