/* live_serve.c: the live figures handed to Prometheus (live_serve.h). */
#include "config.h"
#include "analyzer/live/live_serve.h"
#include "common/msg.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int cs_live_metrics_file(const cs_live *l, const char *path, char *err, size_t errlen)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp-%d-XXXXXX", path, (int)getpid());
    int fd = mkostemp(tmp, O_CLOEXEC); /* a new name, O_EXCL: never a file already there */
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        return -1;
    }
    fchmod(fd, 0644); /* the node exporter runs as another user */
    FILE *f = fdopen(fd, "w");
    if (!f) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        return -1;
    }
    cs_live_metrics(l, f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        snprintf(err, errlen, "%s: write failed", tmp);
        unlink(tmp);
        return -1;
    }
    struct stat sb;
    if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file (left alone)", path);
        unlink(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

struct cs_live_http {
    int fd;
    char where[128];
};

cs_live_http *cs_live_http_open(const char *spec, char *err, size_t errlen)
{
    char addr[64] = "127.0.0.1";
    const char *port = spec, *colon = strrchr(spec, ':');
    if (colon) {
        size_t n = (size_t)(colon - spec);
        if (n == 0 || n >= sizeof addr) {
            snprintf(err, errlen, "--metrics-port %s: not PORT or ADDR:PORT", spec);
            return NULL;
        }
        memcpy(addr, spec, n);
        addr[n] = '\0';
        port = colon + 1;
    }
    char *end;
    long p = strtol(port, &end, 10);
    if (!*port || *end || p < 0 || p > 65535) {
        snprintf(err, errlen, "--metrics-port %s: the port is not a number in 0..65535", spec);
        return NULL;
    }
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)p);
    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
        snprintf(err, errlen, "--metrics-port %s: %s is not an IPv4 address", spec, addr);
        return NULL;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 16) != 0) {
        snprintf(err, errlen, "--metrics-port %s: cannot listen on %s:%ld: %s", spec, addr, p, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    socklen_t sl = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    cs_live_http *h = calloc(1, sizeof *h);
    if (!h) {
        close(fd);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    h->fd = fd;
    snprintf(h->where, sizeof h->where, "%s:%d", addr, ntohs(sa.sin_port));
    return h;
}

void cs_live_http_close(cs_live_http *h)
{
    if (!h)
        return;
    close(h->fd);
    free(h);
}

const char *cs_live_http_where(const cs_live_http *h)
{
    return h->where;
}

int cs_live_http_fd(const cs_live_http *h)
{
    return h->fd;
}

static void http_send(int c, const char *s, size_t n)
{
    while (n) {
        struct pollfd pf = { c, POLLOUT, 0 };
        if (poll(&pf, 1, 1000) <= 0)
            return;
        ssize_t w = send(c, s, n, MSG_NOSIGNAL);
        if (w < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void http_one(int c, const char *body, size_t len)
{
    char req[4096];
    size_t got = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (got < sizeof req - 1 && !memmem(req, got, "\r\n\r\n", 4) && !memmem(req, got, "\n\n", 2)) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        long left = 1000 - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
        struct pollfd pf = { c, POLLIN, 0 };
        if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
            return;
        ssize_t r = recv(c, req + got, sizeof req - 1 - got, 0);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0)
            return;
        got += (size_t)r;
    }
    req[got] = '\0';
    char head[256];
    int n;
    if (strncmp(req, "GET ", 4) != 0 && strncmp(req, "HEAD ", 5) != 0) {
        n = snprintf(head, sizeof head, "HTTP/1.0 405 Method Not Allowed\r\nAllow: GET\r\nContent-Length: 0\r\n\r\n");
        http_send(c, head, (size_t)n);
        return;
    }
    const char *path = strchr(req, ' ') + 1;
    size_t pl = strcspn(path, " ?\r\n");
    if (!((pl == 8 && strncmp(path, "/metrics", 8) == 0) || (pl == 1 && path[0] == '/'))) {
        static const char nf[] = "not found: the metrics are at /metrics\n";
        n = snprintf(head, sizeof head,
                     "HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n\r\n",
                     sizeof nf - 1);
        http_send(c, head, (size_t)n);
        http_send(c, nf, sizeof nf - 1);
        return;
    }
    n = snprintf(head, sizeof head,
                 "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: "
                 "%zu\r\nConnection: close\r\n\r\n",
                 len);
    http_send(c, head, (size_t)n);
    if (req[0] == 'G')
        http_send(c, body, len);
}

void cs_live_http_answer(cs_live_http *h, const char *body, size_t len)
{
    for (int i = 0; i < 16; i++) {
        int c = accept4(h->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (c < 0)
            return;
        http_one(c, body, len);
        shutdown(c, SHUT_WR);
        close(c);
    }
}

/* ---- the two together ---- */

struct cs_live_pub {
    char *file;
    cs_live_http *http;
    char *body;
    size_t len;
};

cs_live_pub *cs_live_pub_new(const char *file, const char *port, char *err, size_t errlen)
{
    cs_live_pub *p = calloc(1, sizeof *p);
    if (!p || (file && !(p->file = strdup(file)))) {
        free(p);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (port && !(p->http = cs_live_http_open(port, err, errlen))) {
        cs_live_pub_free(p);
        return NULL;
    }
    if (p->http)
        cs_note("metrics at http://%s/metrics", cs_live_http_where(p->http));
    return p;
}

void cs_live_pub_free(cs_live_pub *p)
{
    if (!p)
        return;
    cs_live_http_close(p->http);
    free(p->file);
    free(p->body);
    free(p);
}

int cs_live_pub_refresh(cs_live_pub *p, const cs_live *l, char *err, size_t errlen)
{
    if (p->http) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (f) {
            cs_live_metrics(l, f);
            if (fclose(f) == 0) {
                free(p->body);
                p->body = buf;
                p->len = len;
            } else {
                free(buf);
            }
        }
    }
    if (p->file && cs_live_metrics_file(l, p->file, err, errlen) != 0)
        return -1;
    return 0;
}

int cs_live_pub_fd(const cs_live_pub *p)
{
    return p->http ? cs_live_http_fd(p->http) : -1;
}

void cs_live_pub_answer(cs_live_pub *p)
{
    if (p->http)
        cs_live_http_answer(p->http, p->body ? p->body : "", p->body ? p->len : 0);
}

void cs_live_pub_wait(cs_live_pub *p, int ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        long left = ms - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
        if (left <= 0)
            return;
        struct pollfd pf = { cs_live_pub_fd(p), POLLIN, 0 };
        if (poll(&pf, 1, (int)left) > 0 && (pf.revents & POLLIN))
            cs_live_pub_answer(p);
    }
}
