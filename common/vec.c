/* vec.c: growable arrays. */
#include "config.h"
#include "common/vec.h"

#include <stdlib.h>
#include <string.h>

int cs_vec_grow(void *pa, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 16;
    while (nc < need) {
        if (nc > SIZE_MAX / 2)
            return -1;
        nc *= 2;
    }
    if (size && nc > SIZE_MAX / size)
        return -1;
    void *a;
    memcpy(&a, pa, sizeof a);
    void *na = realloc(a, nc * size);
    if (!na)
        return -1;
    memcpy(pa, &na, sizeof na);
    *cap = nc;
    return 0;
}

int cs_vec_push(cs_vec *v, int64_t x)
{
    if (CS_VEC_RESERVE(v->a, v->cap, v->n + 1) != 0)
        return -1;
    v->a[v->n++] = x;
    return 0;
}

void cs_vec_free(cs_vec *v)
{
    free(v->a);
    memset(v, 0, sizeof *v);
}
