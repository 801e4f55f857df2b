/* opts.h: a command's options as one table, the single source of its
 * parser (getopt_long's option array and short-option string), of its
 * --help (usage line and option list) and of the lines `collscope --help`
 * shows for it, so that none of them can disagree with another. */
#ifndef CS_OPTS_H
#define CS_OPTS_H

#include <getopt.h>
#include <stdio.h>

/* What an option takes. */
typedef enum cs_opt_arg { CS_OPT_NONE, CS_OPT_REQUIRED, CS_OPT_OPTIONAL } cs_opt_arg;

/* Where an option stands in the usage line. */
enum {
    CS_OPT_OWN = 0,  /* in brackets of its own: [--full] */
    CS_OPT_OR,       /* in the previous one's brackets, after " | ": [--merge | --no-merge] */
    CS_OPT_UNDER,    /* inside the previous one's brackets: [-j K [--via HOW]] */
    CS_OPT_UNLISTED, /* not in the usage line; in the option list only */
};

/* One option. */
typedef struct cs_opt {
    const char *name;    /* the long name without "--"; NULL: a short option only */
    char letter;         /* the short form ('o' for -o); 0: none */
    cs_opt_arg arg;      /* what it takes */
    const char *metavar; /* its argument in the option list ("DIR") */
    const char *values;  /* its argument in the usage line when not metavar ("text|json") */
    int usage;           /* CS_OPT_OWN, _OR, _UNDER or _UNLISTED */
    const char *help;    /* the option list's text, wrapped to fit: '\n' starts a new
                          * line; a line "  LABEL\tTEXT" is a row of a nested table
                          * (TEXT and its continuation 15 columns past the indent) */
    /* its argument in the usage line, written into buf by the table the
     * values come from ("a|b|c", a format table's names), when values is
     * NULL; returns buf. So a table's new entry shows up by itself. */
    const char *(*values_of)(char *buf, size_t len);
} cs_opt;

/* A command: its operands, its options and the texts around them. */
typedef struct cs_optset {
    const char *prog;  /* "collscope report", "collscope-tui" */
    const char *lead;  /* the operands before the options in the usage line, or NULL */
    const char *tail;  /* the operands after them ("DIR", "-- LAUNCH..."), or NULL */
    const char *flags; /* getopt's leading flags ("+": stop at the first operand), or NULL */
    const cs_opt *opt; /* the options (at most CS_OPTS_MAX) */
    int nopt;
    const char *about; /* the text between the usage line and the option list, or NULL */
    const char *after; /* the text after the option list, or NULL */
} cs_optset;

#define CS_OPTS_MAX 32
#define CS_OPTS_N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The parser of one command line: getopt_long's arrays built from the table. */
typedef struct cs_opts_parser {
    const cs_optset *set;
    struct option lo[CS_OPTS_MAX + 1];
    char shorts[3 * CS_OPTS_MAX + 4];
} cs_opts_parser;

enum { CS_OPTS_END = -1, CS_OPTS_BAD = -2 };

/* Build p's arrays from set and reset getopt (fully: a process may parse
 * more than once). */
void cs_opts_begin(cs_opts_parser *p, const cs_optset *set);
/* The next option of argv: its index in set->opt (its argument, if any, in
 * optarg), CS_OPTS_END after the last (optind: the first operand), or
 * CS_OPTS_BAD for an option the table does not hold or one missing its
 * argument (getopt has said which on stderr). */
int cs_opts_next(cs_opts_parser *p, int argc, char **argv);

/* The usage line: first, then the operands and options wrapped at word
 * (and bracket) boundaries to 79 columns, each further line indented by
 * indent spaces. */
void cs_opts_usage(FILE *f, const cs_optset *set, const char *first, int indent);
/* The option list: a row per option ("  -o, --output DIR  TEXT"), the
 * texts in one column, wrapped to 79 columns. */
void cs_opts_list(FILE *f, const cs_optset *set);
/* The whole --help: "usage: PROG ...", a blank line, about, the option
 * list, after. */
void cs_opts_help(FILE *f, const cs_optset *set);

#endif
