/* dtypes.h: the datatypes collscope names, one X-macro list for every API.
 * The id of a datatype is its position here; the store keeps the names. */
#ifndef CS_DTYPES_H
#define CS_DTYPES_H

// clang-format off
#define CS_DTYPE_LIST(X) \
    X(NONE, "") X(DERIVED, "derived") X(OTHER, "other") \
    X(MPI_CHAR, "MPI_CHAR") X(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR") \
    X(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR") X(MPI_BYTE, "MPI_BYTE") \
    X(MPI_SHORT, "MPI_SHORT") X(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT") \
    X(MPI_INT, "MPI_INT") X(MPI_UNSIGNED, "MPI_UNSIGNED") X(MPI_LONG, "MPI_LONG") \
    X(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG") X(MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT") \
    X(MPI_LONG_LONG, "MPI_LONG_LONG") X(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG") \
    X(MPI_FLOAT, "MPI_FLOAT") X(MPI_DOUBLE, "MPI_DOUBLE") X(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE") \
    X(MPI_WCHAR, "MPI_WCHAR") X(MPI_C_BOOL, "MPI_C_BOOL") \
    X(MPI_INT8_T, "MPI_INT8_T") X(MPI_INT16_T, "MPI_INT16_T") X(MPI_INT32_T, "MPI_INT32_T") \
    X(MPI_INT64_T, "MPI_INT64_T") X(MPI_UINT8_T, "MPI_UINT8_T") X(MPI_UINT16_T, "MPI_UINT16_T") \
    X(MPI_UINT32_T, "MPI_UINT32_T") X(MPI_UINT64_T, "MPI_UINT64_T") \
    X(MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX") X(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX") \
    X(MPI_AINT, "MPI_AINT") X(MPI_OFFSET, "MPI_OFFSET") X(MPI_COUNT, "MPI_COUNT") \
    X(MPI_PACKED, "MPI_PACKED") X(MPI_FLOAT_INT, "MPI_FLOAT_INT") X(MPI_DOUBLE_INT, "MPI_DOUBLE_INT") \
    X(MPI_LONG_INT, "MPI_LONG_INT") X(MPI_2INT, "MPI_2INT") X(MPI_SHORT_INT, "MPI_SHORT_INT") \
    X(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT") X(MPI_INTEGER, "MPI_INTEGER") \
    X(MPI_REAL, "MPI_REAL") X(MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION") \
    X(MPI_COMPLEX, "MPI_COMPLEX") X(MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX") \
    X(MPI_LOGICAL, "MPI_LOGICAL") X(MPI_CHARACTER, "MPI_CHARACTER") \
    X(MPI_2REAL, "MPI_2REAL") X(MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION") \
    X(MPI_2INTEGER, "MPI_2INTEGER") \
    X(ncclInt8, "ncclInt8") X(ncclUint8, "ncclUint8") X(ncclInt32, "ncclInt32") \
    X(ncclUint32, "ncclUint32") X(ncclInt64, "ncclInt64") X(ncclUint64, "ncclUint64") \
    X(ncclFloat16, "ncclFloat16") X(ncclFloat32, "ncclFloat32") X(ncclFloat64, "ncclFloat64") \
    X(ncclBfloat16, "ncclBfloat16") X(ncclFloat8e4m3, "ncclFloat8e4m3") X(ncclFloat8e5m2, "ncclFloat8e5m2")
// clang-format on

enum cs_dtype {
#define CS_DT_ENUM(id, name) CS_DT_##id,
    CS_DTYPE_LIST(CS_DT_ENUM)
#undef CS_DT_ENUM
        CS_DT_COUNT
};

extern const char *const cs_dtype_names[CS_DT_COUNT];
/* The id of a datatype name, CS_DT_OTHER if unknown, CS_DT_DERIVED if "". */
int cs_dtype_by_name(const char *name);

#endif
