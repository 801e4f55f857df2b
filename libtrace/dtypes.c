/* dtypes.c: datatype names (see dtypes.h). */
#include "config.h"
#include "libtrace/dtypes.h"

#include <string.h>

const char *const cs_dtype_names[CS_DT_COUNT] = {
#define CS_DT_NAME(id, name) name,
    CS_DTYPE_LIST(CS_DT_NAME)
#undef CS_DT_NAME
};

int cs_dtype_by_name(const char *name)
{
    if (!name || !*name)
        return CS_DT_DERIVED;
    for (int i = CS_DT_DERIVED + 1; i < CS_DT_COUNT; i++)
        if (strcmp(cs_dtype_names[i], name) == 0)
            return i;
    return CS_DT_OTHER;
}
