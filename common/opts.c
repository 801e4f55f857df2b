/* opts.c: a command's option table made into its parser, its usage line
 * and its option list (opts.h). */
#include "config.h"
#include "common/opts.h"

#include <string.h>

#define CS_OPTS_WIDTH 79 /* the widest line of a help text */
#define CS_OPTS_LABEL \
    24                 /* the widest label the text column makes room for (a wider one: its text two spaces after it) */
#define CS_OPTS_SUB 15 /* a nested table's text, past its indent */
#define CS_OPTS_LONG 256 /* getopt's value of a long-only option: this plus its index */

void cs_opts_begin(cs_opts_parser *p, const cs_optset *set)
{
    static const int has[] = {
        [CS_OPT_NONE] = no_argument, [CS_OPT_REQUIRED] = required_argument, [CS_OPT_OPTIONAL] = optional_argument
    };
    memset(p, 0, sizeof *p);
    p->set = set;
    size_t ns = 0;
    if (set->flags)
        for (const char *c = set->flags; *c && ns < 2; c++)
            p->shorts[ns++] = *c;
    int nl = 0;
    for (int i = 0; i < set->nopt && i < CS_OPTS_MAX; i++) {
        const cs_opt *o = &set->opt[i];
        if (o->letter) {
            p->shorts[ns++] = o->letter;
            if (o->arg != CS_OPT_NONE)
                p->shorts[ns++] = ':';
            if (o->arg == CS_OPT_OPTIONAL)
                p->shorts[ns++] = ':';
        }
        if (o->name)
            p->lo[nl++] = (struct option){ o->name, has[o->arg], NULL, CS_OPTS_LONG + i };
    }
    p->shorts[ns] = '\0';
    optind = 0; /* getopt's full reset */
}

int cs_opts_next(cs_opts_parser *p, int argc, char **argv)
{
    int c = getopt_long(argc, argv, p->shorts, p->lo, NULL);
    if (c == -1)
        return CS_OPTS_END;
    if (c >= CS_OPTS_LONG && c < CS_OPTS_LONG + p->set->nopt)
        return c - CS_OPTS_LONG;
    for (int i = 0; i < p->set->nopt; i++)
        if (p->set->opt[i].letter && p->set->opt[i].letter == c)
            return i;
    return CS_OPTS_BAD;
}

/* o as the usage line shows it ("-o DIR", "--format text|json") or the
 * option list's label ("-o, --output DIR"). */
static void cs_opts_form(const cs_opt *o, int label, char *buf, size_t len)
{
    char vals[96] = "";
    const char *val = o->metavar ? o->metavar : "ARG";
    if (!label && o->values)
        val = o->values;
    else if (!label && o->values_of && *o->values_of(vals, sizeof vals))
        val = vals;
    int longform = o->name && (label || !o->letter), n;
    if (label && o->letter && o->name)
        n = snprintf(buf, len, "-%c, --%s", o->letter, o->name);
    else if (longform)
        n = snprintf(buf, len, "--%s", o->name);
    else
        n = snprintf(buf, len, "-%c", o->letter);
    if (n < 0 || (size_t)n >= len)
        return;
    if (o->arg == CS_OPT_REQUIRED)
        snprintf(buf + n, len - (size_t)n, " %s", val);
    else if (o->arg == CS_OPT_OPTIONAL)
        snprintf(buf + n, len - (size_t)n, longform ? "[=%s]" : "[%s]", val);
}

/* Print word w (n bytes) at *col, on a new line indented by hang when it
 * would pass the width; sep: a space goes before it on the same line. */
static void cs_opts_word(FILE *f, const char *w, int n, int *col, int hang, int sep)
{
    if (sep && *col + 1 + n > CS_OPTS_WIDTH && *col > hang) {
        fprintf(f, "\n%*s", hang, "");
        *col = hang;
        sep = 0;
    }
    fprintf(f, "%s%.*s", sep ? " " : "", n, w);
    *col += (sep ? 1 : 0) + n;
}

/* The words of s wrapped from *col, further lines at hang; first: whether
 * the first word goes without a space before it. */
static void cs_opts_words(FILE *f, const char *s, size_t n, int *col, int hang, int first)
{
    size_t i = 0;
    while (i < n) {
        while (i < n && s[i] == ' ')
            i++;
        size_t j = i;
        while (j < n && s[j] != ' ')
            j++;
        if (j > i) {
            cs_opts_word(f, s + i, (int)(j - i), col, hang, !first);
            first = 0;
        }
        i = j;
    }
}

void cs_opts_usage(FILE *f, const cs_optset *set, const char *first, int indent)
{
    int col = (int)strlen(first);
    fputs(first, f);
    if (set->lead)
        cs_opts_words(f, set->lead, strlen(set->lead), &col, indent, 0);
    /* each bracket group is one word: it is never broken */
    char group[512], form[128];
    size_t g = 0;
    int open = 0;
    for (int i = 0; i <= set->nopt; i++) {
        const cs_opt *o = i < set->nopt ? &set->opt[i] : NULL;
        if (o && o->usage == CS_OPT_UNLISTED)
            continue;
        if (!o || o->usage == CS_OPT_OWN || !open) {
            if (open) {
                while (open-- > 0 && g + 1 < sizeof group)
                    group[g++] = ']';
                group[g] = '\0';
                cs_opts_word(f, group, (int)g, &col, indent, 1);
            }
            open = g = 0;
            if (!o)
                break;
            cs_opts_form(o, 0, form, sizeof form);
            g = (size_t)snprintf(group, sizeof group, "[%s", form);
            open = 1;
            continue;
        }
        cs_opts_form(o, 0, form, sizeof form);
        int n = snprintf(group + g, sizeof group - g, o->usage == CS_OPT_OR ? " | %s" : " [%s", form);
        if (n > 0 && (size_t)n < sizeof group - g)
            g += (size_t)n;
        open += o->usage == CS_OPT_UNDER;
    }
    if (set->tail)
        cs_opts_words(f, set->tail, strlen(set->tail), &col, indent, 0);
    fputc('\n', f);
}

void cs_opts_list(FILE *f, const cs_optset *set)
{
    char label[128];
    int widest = 0;
    for (int i = 0; i < set->nopt; i++) {
        cs_opts_form(&set->opt[i], 1, label, sizeof label);
        int n = (int)strlen(label);
        if (n <= CS_OPTS_LABEL && n > widest)
            widest = n;
    }
    int tcol = 2 + widest + 2;
    for (int i = 0; i < set->nopt; i++) {
        const cs_opt *o = &set->opt[i];
        cs_opts_form(o, 1, label, sizeof label);
        fprintf(f, "  %s", label);
        int col = 2 + (int)strlen(label);
        col += fprintf(f, "%*s", col + 2 <= tcol ? tcol - col : 2, "");
        const char *l = o->help ? o->help : "";
        for (int line = 0; *l || line == 0; line++) {
            const char *e = strchr(l, '\n');
            size_t n = e ? (size_t)(e - l) : strlen(l);
            int lead = 0;
            while ((size_t)lead < n && l[lead] == ' ')
                lead++;
            int base = tcol + lead, hang = line ? base : tcol;
            if (line) {
                fprintf(f, "\n%*s", base, "");
                col = base;
            }
            const char *tab = memchr(l, '\t', n);
            const char *w = l + (line ? lead : 0);
            if (tab) {
                fprintf(f, "%.*s", (int)(tab - w), w);
                col += (int)(tab - w);
                hang = base + CS_OPTS_SUB;
                col += fprintf(f, "%*s", col + 2 <= hang ? hang - col : 2, "");
                w = tab + 1;
            }
            cs_opts_words(f, w, (size_t)(l + n - w), &col, hang, 1);
            l += n + (e != NULL);
            if (!e)
                break;
        }
        fputc('\n', f);
    }
}

void cs_opts_help(FILE *f, const cs_optset *set)
{
    char first[128];
    int n = snprintf(first, sizeof first, "usage: %s", set->prog);
    cs_opts_usage(f, set, first, n > 0 && n < (int)sizeof first ? n + 1 : 7);
    fputc('\n', f);
    if (set->about)
        fputs(set->about, f);
    cs_opts_list(f, set);
    if (set->after)
        fputs(set->after, f);
}
