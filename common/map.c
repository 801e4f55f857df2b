/* map.c: a hash map from uint64 keys to int64 values. */
#include "config.h"
#include "common/map.h"

#include <stdlib.h>
#include <string.h>

uint64_t cs_map_hash(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

static int cs__map_rehash(cs_map *m, size_t nc)
{
    uint64_t *nk = malloc(nc * sizeof *nk);
    int64_t *nv = malloc(nc * sizeof *nv);
    if (!nk || !nv) {
        free(nk);
        free(nv);
        return -1;
    }
    memset(nk, 0xff, nc * sizeof *nk);
    for (size_t i = 0; i < m->cap; i++)
        if (m->k[i] != UINT64_MAX) {
            size_t j = cs_map_hash(m->k[i]) & (nc - 1);
            while (nk[j] != UINT64_MAX)
                j = (j + 1) & (nc - 1);
            nk[j] = m->k[i];
            nv[j] = m->v[i];
        }
    free(m->k);
    free(m->v);
    m->k = nk;
    m->v = nv;
    m->cap = nc;
    return 0;
}

int cs_map_reserve(cs_map *m, size_t n)
{
    size_t nc = m->cap ? m->cap : 64;
    while (n * 2 > nc) {
        if (nc > SIZE_MAX / 4 / sizeof(uint64_t))
            return -1;
        nc *= 2;
    }
    return nc == m->cap ? 0 : cs__map_rehash(m, nc);
}

int cs_map_put(cs_map *m, uint64_t k, int64_t v)
{
    if (k == UINT64_MAX)
        return -1;
    if ((m->n + 1) * 2 > m->cap && cs_map_reserve(m, m->n + 1) != 0)
        return -1;
    size_t j = cs_map_hash(k) & (m->cap - 1);
    while (m->k[j] != UINT64_MAX && m->k[j] != k)
        j = (j + 1) & (m->cap - 1);
    if (m->k[j] == UINT64_MAX)
        m->n++;
    m->k[j] = k;
    m->v[j] = v;
    return 0;
}

int cs_map_get(const cs_map *m, uint64_t k, int64_t *v)
{
    if (!m->cap)
        return 0;
    size_t j = cs_map_hash(k) & (m->cap - 1);
    while (m->k[j] != UINT64_MAX) {
        if (m->k[j] == k) {
            *v = m->v[j];
            return 1;
        }
        j = (j + 1) & (m->cap - 1);
    }
    return 0;
}

void cs_map_free(cs_map *m)
{
    free(m->k);
    free(m->v);
    memset(m, 0, sizeof *m);
}
