/* zarrxt.h: the C API of zarrxt (docs/c-api.md).
 *
 * Opaque handles over the C++ library for C, Fortran (iso_c_binding) and other languages' bindings.
 * Link with libzarrxt_c (shared or static; pkg-config zarrxt-c, CMake zarrxt::c).
 *
 * Conventions:
 * - Every function that can fail returns a zarrxt_status; ZARRXT_OK is 0. No C++ exception
 *   crosses this interface. After a failure, zarrxt_last_error_message() and zarrxt_last_error_id()
 *   describe it on the calling thread until that thread's next call into this API (a call that
 *   succeeds clears them).
 * - Regions are C-ordered (the last dimension varies fastest), elements native-endian. A Fortran
 *   array a(n1, n2) is a Zarr array of shape [n2, n1].
 * - Text out of the library (attributes, metadata, names) goes to a caller buffer: `len` receives
 *   the text's length without the terminating NUL; passing buf = NULL and cap = 0 only asks for
 *   `len`. A buffer of fewer than len + 1 bytes is refused (zarrxt.capi.3) and left unwritten.
 * - Handles may be used from several threads at once (reads and writes of one array too: zarrxt
 *   locks each chunk's read-modify-write). Closing a handle while another thread uses it is not
 *   allowed. A node handle keeps its store alive; closing the store handle first is fine.
 */
#ifndef ZARRXT_H
#define ZARRXT_H

#include <stddef.h>
#include <stdint.h>

/* C linkage and, for the shared library, exported: on every function of this header. */
#ifdef __cplusplus
#define ZARRXT_C_LINKAGE extern "C"
#else
#define ZARRXT_C_LINKAGE
#endif
#if defined(_WIN32)
#define ZARRXT_C_API ZARRXT_C_LINKAGE
#else
#define ZARRXT_C_API ZARRXT_C_LINKAGE __attribute__((visibility("default")))
#endif

#define ZARRXT_C_API_VERSION 1

typedef struct zarrxt_store zarrxt_store;     /* where a hierarchy lives: a directory, URL, zip */
typedef struct zarrxt_node zarrxt_node;       /* an array or a group in a store */
typedef struct zarrxt_strings zarrxt_strings; /* values read from a variable-length array */

/* The category of a failure; zarrxt_last_error_id() gives the exact error ("zarrxt.store.4"),
 * listed in docs/errors.md. */
typedef enum zarrxt_status
{
    ZARRXT_OK = 0,
    ZARRXT_ERR_METADATA = 1, /* zarrxt.metadata.*: a document is malformed or unsupported */
    ZARRXT_ERR_CODEC = 2,    /* zarrxt.codec.*: a chunk does not decode */
    ZARRXT_ERR_STORE = 3,    /* zarrxt.store.*: I/O, remote requests, keys */
    ZARRXT_ERR_ARRAY = 4,    /* zarrxt.array.*: no such node, out of bounds, dtype, exists */
    ZARRXT_ERR_SHARD = 5,    /* zarrxt.shard.*: a shard index is invalid */
    ZARRXT_ERR_LIMIT = 6,    /* zarrxt.limit.*: a resource limit would be exceeded */
    ZARRXT_ERR_USAGE = 7,    /* zarrxt.capi.*: a NULL handle, a buffer of the wrong size */
    ZARRXT_ERR_NO_MEMORY = 8,
    ZARRXT_ERR_OTHER = 9 /* an operating-system or library failure outside zarrxt's ids */
} zarrxt_status;

typedef enum zarrxt_node_kind
{
    ZARRXT_NODE_ARRAY = 1,
    ZARRXT_NODE_GROUP = 2
} zarrxt_node_kind;

/* Element types. Bytes per element in caller memory: zarrxt_array_item_size. */
typedef enum zarrxt_dtype
{
    ZARRXT_BOOL = 1, /* 1 byte, 0 or 1 */
    ZARRXT_INT8 = 2,
    ZARRXT_INT16 = 3,
    ZARRXT_INT32 = 4,
    ZARRXT_INT64 = 5,
    ZARRXT_UINT8 = 6,
    ZARRXT_UINT16 = 7,
    ZARRXT_UINT32 = 8,
    ZARRXT_UINT64 = 9,
    ZARRXT_FLOAT16 = 10, /* IEEE binary16 bits in a uint16_t */
    ZARRXT_FLOAT32 = 11,
    ZARRXT_FLOAT64 = 12,
    ZARRXT_COMPLEX64 = 13,  /* two floats: real, imaginary */
    ZARRXT_COMPLEX128 = 14, /* two doubles */
    ZARRXT_DATETIME64 = 15, /* int64 counts of the unit in the metadata; INT64_MIN is NaT */
    ZARRXT_TIMEDELTA64 = 16,
    ZARRXT_FIXED_BYTES = 17, /* n bytes per element (numpy |S n), NUL-padded */
    ZARRXT_FIXED_UTF32 = 18, /* n UTF-32 code units per element (numpy <U n), NUL-padded */
    ZARRXT_STRING = 19,      /* variable-length UTF-8: zarrxt_array_read_strings */
    ZARRXT_VLEN_BYTES = 20,  /* variable-length bytes: zarrxt_array_read_strings */
    ZARRXT_STRUCTURED = 21,  /* records: the fields are in the metadata, packed as stored */
    /* zarr-extensions small floats (Zarr v3 only), their bits: */
    ZARRXT_BFLOAT16 = 22, /* the top 16 bits of a binary32, in a uint16_t */
    ZARRXT_FLOAT8_E3M4 = 23,
    ZARRXT_FLOAT8_E4M3 = 24,
    ZARRXT_FLOAT8_E4M3B11FNUZ = 25,
    ZARRXT_FLOAT8_E4M3FNUZ = 26,
    ZARRXT_FLOAT8_E5M2 = 27,
    ZARRXT_FLOAT8_E5M2FNUZ = 28,
    ZARRXT_FLOAT8_E8M0FNU = 29
} zarrxt_dtype;

/* Flags. */
#define ZARRXT_CONSOLIDATED                                                                                  \
    0x1u                      /* zarrxt_store_open: read the hierarchy's metadata from its                   \
                                 consolidated metadata (an error when it has none) */
#define ZARRXT_OVERWRITE 0x2u /* zarrxt_*_create: replace a node already at the path */

/* The library version ("0.1.0") and ZARRXT_C_API_VERSION of the library linked. */
ZARRXT_C_API const char* zarrxt_version(void);
ZARRXT_C_API int zarrxt_c_api_version(void);

/* The last failure on this thread: the full message with id and context, the id
 * ("zarrxt.codec.4"; "" for ZARRXT_ERR_NO_MEMORY and ZARRXT_ERR_OTHER), the status. Empty strings
 * and ZARRXT_OK when this thread's last call succeeded. The pointers stay valid until the thread's
 * next call into this API. */
ZARRXT_C_API const char* zarrxt_last_error_message(void);
ZARRXT_C_API const char* zarrxt_last_error_id(void);
ZARRXT_C_API zarrxt_status zarrxt_last_error_status(void);
/* A fixed description of a status ("store error"); an int, so that any value is safe to pass. */
ZARRXT_C_API const char* zarrxt_status_name(int status);

/* Stores. `url`: a directory path, file://, http(s)://, s3://, any of them naming a node inside a
 * zip archive (x.zarr.zip/inner). A store that cannot list (HTTP) reads its consolidated metadata,
 * when there is some, to list groups. */
ZARRXT_C_API zarrxt_status zarrxt_store_open(const char* url, unsigned flags, zarrxt_store** out);
ZARRXT_C_API void zarrxt_store_close(zarrxt_store* store);
/* Write the consolidated metadata of the group at `path` (zarr-python's consolidate_metadata). */
ZARRXT_C_API zarrxt_status zarrxt_store_consolidate(zarrxt_store* store, const char* path);

/* Nodes. `path` is the node's path in the store ("" or NULL: the root). */
ZARRXT_C_API zarrxt_status zarrxt_node_open(zarrxt_store* store, const char* path, zarrxt_node** out);
/* zarrxt_store_open(url, flags) and zarrxt_node_open(store, "") in one call. */
ZARRXT_C_API zarrxt_status zarrxt_open(const char* url, unsigned flags, zarrxt_node** out);
ZARRXT_C_API void zarrxt_node_close(zarrxt_node* node);
ZARRXT_C_API zarrxt_status zarrxt_node_kind_of(const zarrxt_node* node, zarrxt_node_kind* kind);
ZARRXT_C_API zarrxt_status zarrxt_node_zarr_format(const zarrxt_node* node, int* format);
ZARRXT_C_API zarrxt_status zarrxt_node_path(const zarrxt_node* node, char* buf, size_t cap, size_t* len);
/* The attributes, a JSON object as text. */
ZARRXT_C_API zarrxt_status zarrxt_node_attributes(const zarrxt_node* node, char* buf, size_t cap,
                                                  size_t* len);
/* Replace the attributes with `json` (a JSON object) and write the metadata. */
ZARRXT_C_API zarrxt_status zarrxt_node_set_attributes(zarrxt_node* node, const char* json);
/* The node's metadata document as stored (v3 zarr.json; v2 .zarray or .zgroup), as JSON text: the
 * codecs, fill value, datetime unit, string length and record fields are there. */
ZARRXT_C_API zarrxt_status zarrxt_node_metadata(const zarrxt_node* node, char* buf, size_t cap, size_t* len);

/* Groups. */
ZARRXT_C_API zarrxt_status zarrxt_group_create(zarrxt_store* store, const char* path, int zarr_format,
                                               const char* attributes_json, unsigned flags,
                                               zarrxt_node** out);
/* The group's children, sorted by name, as listed now; zarrxt_group_child reads the list the
 * handle's last zarrxt_group_child_count made. */
ZARRXT_C_API zarrxt_status zarrxt_group_child_count(zarrxt_node* group, size_t* count);
ZARRXT_C_API zarrxt_status zarrxt_group_child(const zarrxt_node* group, size_t index, char* name, size_t cap,
                                              size_t* len, zarrxt_node_kind* kind);

/* Arrays. */
ZARRXT_C_API zarrxt_status zarrxt_array_rank(const zarrxt_node* array, size_t* rank);
/* shape / chunk shape into `out`, which has room for `cap` >= rank values. The chunk shape is the
 * chunk grid's (for a sharded array, the shard; for a rectilinear grid, the longest edge per
 * axis); the inner chunk shape is the sharding codec's (the chunk shape when the array is not
 * sharded). */
ZARRXT_C_API zarrxt_status zarrxt_array_shape(const zarrxt_node* array, uint64_t* out, size_t cap);
ZARRXT_C_API zarrxt_status zarrxt_array_chunk_shape(const zarrxt_node* array, uint64_t* out, size_t cap);
ZARRXT_C_API zarrxt_status zarrxt_array_inner_chunk_shape(const zarrxt_node* array, uint64_t* out,
                                                          size_t cap);
ZARRXT_C_API zarrxt_status zarrxt_array_dtype(const zarrxt_node* array, zarrxt_dtype* dtype);
/* Bytes per element in the buffers of zarrxt_array_read/write (0 for the variable-length types). */
ZARRXT_C_API zarrxt_status zarrxt_array_item_size(const zarrxt_node* array, size_t* size);
/* The name of dimension `dim` (v3 dimension_names, v2 _ARRAY_DIMENSIONS); len 0 when unnamed. */
ZARRXT_C_API zarrxt_status zarrxt_array_dimension_name(const zarrxt_node* array, size_t dim, char* buf,
                                                       size_t cap, size_t* len);

/* Read the region [offset, offset + extent) into `out` (`out_bytes` must be the region's elements
 * times the item size). Missing chunks read as the fill value. */
ZARRXT_C_API zarrxt_status zarrxt_array_read(const zarrxt_node* array, const uint64_t* offset,
                                             const uint64_t* extent, void* out, size_t out_bytes);
ZARRXT_C_API zarrxt_status zarrxt_array_write(zarrxt_node* array, const uint64_t* offset,
                                              const uint64_t* extent, const void* in, size_t in_bytes);

/* Variable-length arrays (ZARRXT_STRING, ZARRXT_VLEN_BYTES): the values of a region, C-ordered. */
ZARRXT_C_API zarrxt_status zarrxt_array_read_strings(const zarrxt_node* array, const uint64_t* offset,
                                                     const uint64_t* extent, zarrxt_strings** out);
ZARRXT_C_API size_t zarrxt_strings_count(const zarrxt_strings* values);
/* Value `index`: its bytes (not NUL-terminated; valid until zarrxt_strings_free) and length. */
ZARRXT_C_API zarrxt_status zarrxt_strings_get(const zarrxt_strings* values, size_t index, const char** data,
                                              size_t* size);
ZARRXT_C_API void zarrxt_strings_free(zarrxt_strings* values);
/* Write `count` values (the region's element count): value i is sizes[i] bytes at data[i]. */
ZARRXT_C_API zarrxt_status zarrxt_array_write_strings(zarrxt_node* array, const uint64_t* offset,
                                                      const uint64_t* extent, const char* const* data,
                                                      const size_t* sizes, size_t count);

/* Create an array from its metadata document: a v3 zarr.json (with "attributes" if wanted) or a v2
 * .zarray, as JSON text; it is checked as a read would check it, then written (with the groups
 * above it). Any data type, codec chain, sharding, fill value or dimension names. */
ZARRXT_C_API zarrxt_status zarrxt_array_create(zarrxt_store* store, const char* path,
                                               const char* metadata_json, unsigned flags, zarrxt_node** out);
/* Create an array of a numeric, bool or variable-length dtype (a zarrxt_dtype value, taken as an
 * int because C callers may pass any) with zarrxt's default codecs
 * (v3: bytes + zstd; v2: the zstd compressor) and a zero fill value. */
ZARRXT_C_API zarrxt_status zarrxt_array_create_simple(zarrxt_store* store, const char* path, int zarr_format,
                                                      int dtype, size_t rank, const uint64_t* shape,
                                                      const uint64_t* chunk_shape, unsigned flags,
                                                      zarrxt_node** out);

#endif /* ZARRXT_H */
