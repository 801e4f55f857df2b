/* vec.h: growable arrays.
 *
 * cs_vec is the common vector of int64 values. For arrays of any other
 * type, keep a pointer and a capacity and grow them with CS_VEC_RESERVE:
 *
 *     if (CS_VEC_RESERVE(t->aRow, t->capRow, t->nRow + 1) != 0)
 *         return -1;
 *     t->aRow[t->nRow++] = row;
 *
 * Growth doubles the capacity (at least 16 elements); on failure the array
 * and its capacity are left as they were. */
#ifndef CS_VEC_H
#define CS_VEC_H

#include <stddef.h>
#include <stdint.h>

typedef struct cs_vec {
    int64_t *a;
    size_t n, cap;
} cs_vec;

/* Append x; 0, or -1 when out of memory (v unchanged). */
int cs_vec_push(cs_vec *v, int64_t x);
void cs_vec_free(cs_vec *v);

/* Make room for `need` elements of `size` bytes in the array whose pointer
 * is at *pa (any pointer type) and whose capacity is *cap.
 * 0, or -1 when out of memory or when the size overflows. */
int cs_vec_grow(void *pa, size_t *cap, size_t need, size_t size);

#define CS_VEC_RESERVE(arr, cap, need) \
    ((size_t)(need) <= (cap) ? 0 : cs_vec_grow(&(arr), &(cap), (size_t)(need), sizeof *(arr)))

#endif
