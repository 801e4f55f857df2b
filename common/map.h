/* map.h: a hash map from uint64 keys to int64 values (open addressing,
 * linear probing). UINT64_MAX is not a valid key. A zeroed cs_map is an
 * empty map. */
#ifndef CS_MAP_H
#define CS_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct cs_map {
    uint64_t *k;
    int64_t *v;
    size_t cap, n;
} cs_map;

/* Insert or replace; 0, or -1 when out of memory or k is UINT64_MAX. */
int cs_map_put(cs_map *m, uint64_t k, int64_t v);
/* 1 and *v when present, else 0. */
int cs_map_get(const cs_map *m, uint64_t k, int64_t *v);
/* Make room for n keys without rehashing; 0 or -1. */
int cs_map_reserve(cs_map *m, size_t n);
void cs_map_free(cs_map *m);

/* The mixing function of the map, for callers that hash their own keys. */
uint64_t cs_map_hash(uint64_t k);

#endif
