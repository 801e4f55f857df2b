/* test_opts.c: common/opts.c: from one option table, the parser takes
 * every option in its long and short forms with the argument the table
 * gives it (and refuses what the table does not hold), and the help made
 * from the same table shows each option in the usage line and in the
 * option list with the same short form and argument. */
#include "config.h"
#include "tests/unit/check.h"
#include "common/opts.h"

#include <stdlib.h>
#include <string.h>

enum { O_FORMAT, O_OUTPUT, O_JOBS, O_VIA, O_MERGE, O_NOMERGE, O_VERBOSE, O_COLOR, O_HIDDEN };
static const cs_opt opt[] = {
    [O_FORMAT] = { "format", 0, CS_OPT_REQUIRED, "FMT", "text|json", CS_OPT_OWN, "text or json" },
    [O_OUTPUT] = { "output", 'o', CS_OPT_REQUIRED, "FILE", NULL, CS_OPT_OWN, "the output file" },
    [O_JOBS] = { NULL, 'j', CS_OPT_REQUIRED, "K", NULL, CS_OPT_OWN, "K processes" },
    [O_VIA] = { "via", 0, CS_OPT_REQUIRED, "HOW", NULL, CS_OPT_UNDER, "how -j starts them" },
    [O_MERGE] = { "merge", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_OWN, "merge" },
    [O_NOMERGE] = { "no-merge", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_OR,
                    "a text long enough to be wrapped: it goes on and on past the width of one line, and "
                    "then some more words\n  KEY=V\ta nested row whose text is also long enough that it must "
                    "wrap under its own column" },
    [O_VERBOSE] = { NULL, 'v', CS_OPT_NONE, NULL, NULL, CS_OPT_OWN, "more" },
    [O_COLOR] = { "color", 'c', CS_OPT_OPTIONAL, "WHEN", NULL, CS_OPT_OWN, "colours" },
    [O_HIDDEN] = { "hidden", 0, CS_OPT_NONE, NULL, NULL, CS_OPT_UNLISTED, "only in the list" },
};
static const cs_optset set = {
    .prog = "prog cmd",
    .lead = "IN",
    .tail = "-- REST...",
    .opt = opt,
    .nopt = CS_OPTS_N(opt),
    .about = "About.\n\n",
    .after = "\nAfter.\n",
};

/* A table an option's values come from (as a command's formats), and its
 * names joined by '|': the option's values_of. */
static const char *kinds[4] = { "alpha", "beta" };
static const char *kinds_values(char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < 4 && kinds[i] && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? "|" : "", kinds[i]);
    return buf;
}
static const cs_opt kopt[] = {
    { "kind", 'k', CS_OPT_REQUIRED, "K", NULL, CS_OPT_OWN, "the kind", .values_of = kinds_values },
    { "mode", 0, CS_OPT_OPTIONAL, "M", NULL, CS_OPT_OWN, "the mode", .values_of = kinds_values },
};
static const cs_optset kset = { .prog = "prog kinds", .opt = kopt, .nopt = CS_OPTS_N(kopt) };

/* Parse the words of line (space-separated); the indices returned, and
 * the arguments, into got/args; the operands' start into *first. */
static int parse(const char *line, int *got, char args[][32], int *first)
{
    static char buf[512];
    char *argv[32];
    int argc = 0;
    snprintf(buf, sizeof buf, "prog %s", line);
    for (char *t = strtok(buf, " "); t && argc < 31; t = strtok(NULL, " "))
        argv[argc++] = t;
    argv[argc] = NULL;
    cs_opts_parser p;
    cs_opts_begin(&p, &set);
    int n = 0, c;
    opterr = 0;
    while ((c = cs_opts_next(&p, argc, argv)) != CS_OPTS_END && n < 16) {
        got[n] = c;
        snprintf(args[n], 32, "%s", c >= 0 && optarg ? optarg : "");
        n++;
    }
    *first = optind;
    return n;
}

static char *capture(void (*fn)(FILE *, const cs_optset *))
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    fn(f, &set);
    fclose(f);
    return text;
}

int main(void)
{
    int got[16], first;
    char args[16][32];
    /* every form the table names, and the index of its entry */
    int n = parse("--format json -o out.txt --output=o2 -j 4 --via mpi --merge --no-merge -v -cnever --color in", got,
                  args, &first);
    static const int want[] = { O_FORMAT, O_OUTPUT,  O_OUTPUT,  O_JOBS,  O_VIA,
                                O_MERGE,  O_NOMERGE, O_VERBOSE, O_COLOR, O_COLOR };
    static const char *wantarg[] = { "json", "out.txt", "o2", "4", "mpi", "", "", "", "never", "" };
    CHECK(n == 10, "parsed %d options, not 10", n);
    for (int i = 0; i < n && i < 10; i++) {
        CHECK(got[i] == want[i], "option %d: entry %d, not %d", i, got[i], want[i]);
        CHECK(strcmp(args[i], wantarg[i]) == 0, "option %d: argument '%s', not '%s'", i, args[i], wantarg[i]);
    }
    CHECK(first == 15, "the operand at %d, not 15", first);
    /* what the table does not hold, or holds otherwise, is refused */
    n = parse("--nope in", got, args, &first);
    CHECK(n == 1 && got[0] == CS_OPTS_BAD, "--nope: %d options, first %d", n, n ? got[0] : 0);
    n = parse("-x in", got, args, &first);
    CHECK(n == 1 && got[0] == CS_OPTS_BAD, "-x: %d options, first %d", n, n ? got[0] : 0);
    n = parse("--merge=yes in", got, args, &first);
    CHECK(n == 1 && got[0] == CS_OPTS_BAD, "--merge=yes: %d options, first %d", n, n ? got[0] : 0);
    n = parse("--format", got, args, &first);
    CHECK(n == 1 && got[0] == CS_OPTS_BAD, "--format without its argument: %d options, first %d", n, n ? got[0] : 0);
    n = parse("--via", got, args, &first);
    CHECK(n == 1 && got[0] == CS_OPTS_BAD, "--via without its argument: %d options", n);
    /* a second parse starts afresh */
    n = parse("-v in", got, args, &first);
    CHECK(n == 1 && got[0] == O_VERBOSE && first == 2, "-v after a failed parse: %d options, operand at %d", n, first);

    /* the usage line: each option as the table says, in its brackets */
    char *u = capture(cs_opts_help);
    char usage[512];
    size_t k = 0;
    for (const char *c = u; *c && !(c[0] == '\n' && c[1] == '\n') && k + 1 < sizeof usage; c++) {
        if (*c == '\n') { /* a wrapped line goes on under the operands */
            CHECK(strncmp(c + 1, "                ", 16) == 0 && c[17] != ' ', "a usage line not indented by 16");
            while (c[1] == ' ')
                c++;
            usage[k++] = ' ';
        } else
            usage[k++] = *c;
    }
    usage[k] = '\0';
    CHECK(strcmp(usage, "usage: prog cmd IN [--format text|json] [-o FILE] [-j K [--via HOW]] [--merge | --no-merge] "
                        "[-v] [-c[WHEN]] -- REST...") == 0,
          "usage line: %s", usage);
    CHECK(!strstr(usage, "hidden"), "an unlisted option is in the usage line");
    /* the option list: a row per entry, its short and long forms and its argument */
    static const char *rows[] = { "  --format FMT", "  -o, --output FILE",  "  -j K",
                                  "  --via HOW",    "  --merge ",           "  --no-merge ",
                                  "  -v ",          "  -c, --color[=WHEN]", "  --hidden " };
    for (int i = 0; i < CS_OPTS_N(rows); i++) {
        char line[64];
        snprintf(line, sizeof line, "\n%s", rows[i]);
        CHECK(strstr(u, line) != NULL, "no row '%s' in the help", rows[i]);
    }
    CHECK(strstr(u, "About.\n\n  --format") != NULL, "the about text does not come before the list");
    CHECK(strstr(u, "only in the list\n\nAfter.\n") != NULL, "the after text does not follow the list");
    /* every line fits 79 columns; the texts start in one column */
    int col = -1;
    for (char *l = u; *l;) {
        char *e = strchr(l, '\n');
        int len = e ? (int)(e - l) : (int)strlen(l);
        CHECK(len <= 79, "a line of %d columns: %.*s", len, len, l);
        if (strncmp(l, "  -o, --output FILE", 19) == 0)
            col = (int)(strstr(l, "the output") - l);
        l += len + (e != NULL);
    }
    CHECK(col == 22, "the list's texts start at %d, not 22 (past the widest label)", col);
    char row[128];
    snprintf(row, sizeof row, "\n%*sKEY=V%*sa nested", 24, "", 10, ""); /* its text 15 past its indent */
    const char *nested = strstr(u, row);
    CHECK(nested != NULL, "the nested row is not at the list's column plus its indent: %s", u);
    free(u);

    /* values from a table: the usage line shows its names as they are when
     * the help is printed (a new entry by itself); the list shows the
     * metavar */
    for (int pass = 0; pass < 2; pass++) {
        char *t = NULL;
        size_t tlen = 0;
        FILE *f = open_memstream(&t, &tlen);
        cs_opts_help(f, &kset);
        fclose(f);
        const char *want_usage = pass ? "usage: prog kinds [-k alpha|beta|gamma] [--mode[=alpha|beta|gamma]]\n"
                                      : "usage: prog kinds [-k alpha|beta] [--mode[=alpha|beta]]\n";
        CHECK(strncmp(t, want_usage, strlen(want_usage)) == 0, "pass %d: usage line: %.*s", pass, (int)strcspn(t, "\n"),
              t);
        CHECK(strstr(t, "\n  -k, --kind K ") != NULL && strstr(t, "\n  --mode[=M] ") != NULL,
              "pass %d: the list's rows do not show the metavars: %s", pass, t);
        free(t);
        kinds[2] = "gamma";
    }
    return failures ? 1 : 0;
}
