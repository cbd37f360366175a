/* The C API from C (suite c_api): every call of include/zarrxt.h on arrays and groups this program
 * creates in the scratch directory given as its argument, the errors and their ids, and handles
 * shared by threads. Exit status 0 when every check passed; each failed check prints its line. */
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw */
#include <ftw.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zarrxt.h>

static int g_failures = 0;
static int g_checks = 0;

#define CHECK(cond)                                                                                          \
    do                                                                                                       \
    {                                                                                                        \
        ++g_checks;                                                                                          \
        if (!(cond))                                                                                         \
        {                                                                                                    \
            ++g_failures;                                                                                    \
            fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: [%s] %s\n", __FILE__, __LINE__, #cond,     \
                    zarrxt_last_error_id(), zarrxt_last_error_message());                                    \
        }                                                                                                    \
    } while (0)

/* A call that must succeed. */
#define OK(call) CHECK((call) == ZARRXT_OK)

/* A call that must fail with `status` and error id `id`. */
#define FAILS(call, status, id)                                                                              \
    do                                                                                                       \
    {                                                                                                        \
        zarrxt_status s_ = (call);                                                                           \
        CHECK(s_ == (status));                                                                               \
        CHECK(strcmp(zarrxt_last_error_id(), (id)) == 0);                                                    \
        CHECK(zarrxt_last_error_status() == (status));                                                       \
        CHECK(strstr(zarrxt_last_error_message(), (id)) != NULL);                                            \
    } while (0)

static char g_dir[4096];

static const char* path_in(const char* name)
{
    static char buf[4096 + 256];
    snprintf(buf, sizeof buf, "%s/%s", g_dir, name);
    return buf;
}

static int32_t value_at(uint64_t i, uint64_t j)
{
    return (int32_t)(i * 1000 + j) - 500;
}

static void test_errors_without_handles(void)
{
    zarrxt_node* node = (zarrxt_node*)1;
    zarrxt_store* store = NULL;
    FAILS(zarrxt_open(NULL, 0, &node), ZARRXT_ERR_USAGE, "zarrxt.capi.1");
    CHECK(node == NULL); /* a failed call leaves NULL in its handle output */
    node = (zarrxt_node*)1;
    FAILS(zarrxt_open(path_in("nothing-here.zarr"), 0, &node), ZARRXT_ERR_ARRAY, "zarrxt.array.7");
    CHECK(node == NULL);
    FAILS(zarrxt_open(path_in("x.zarr"), 0, NULL), ZARRXT_ERR_USAGE, "zarrxt.capi.1");
    FAILS(zarrxt_store_open(path_in("x.zarr"), 0x100, &store), ZARRXT_ERR_USAGE, "zarrxt.capi.1");
    FAILS(zarrxt_store_open("ftp://host/x.zarr", 0, &store), ZARRXT_ERR_STORE, "zarrxt.store.1");
    FAILS(zarrxt_array_rank(NULL, NULL), ZARRXT_ERR_USAGE, "zarrxt.capi.1");
    /* A success clears the last error. */
    CHECK(zarrxt_c_api_version() == ZARRXT_C_API_VERSION);
    CHECK(strlen(zarrxt_version()) >= 5);
    OK(zarrxt_store_open(path_in("empty.zarr"), 0, &store));
    CHECK(zarrxt_last_error_status() == ZARRXT_OK);
    CHECK(strcmp(zarrxt_last_error_id(), "") == 0);
    CHECK(strcmp(zarrxt_last_error_message(), "") == 0);
    zarrxt_store_close(store);
    CHECK(strcmp(zarrxt_status_name(ZARRXT_ERR_CODEC), "codec error") == 0);
    zarrxt_node_close(NULL);
    zarrxt_store_close(NULL);
    zarrxt_strings_free(NULL);
}

static void test_numeric(zarrxt_store* store)
{
    const uint64_t shape[2] = {10, 7};
    const uint64_t chunks[2] = {4, 3};
    zarrxt_node* a = NULL;
    int32_t all[70];
    int32_t part[12];
    uint64_t got[4];
    uint64_t i, j;
    size_t rank = 0, item = 0, len = 0;
    zarrxt_dtype dt = 0;
    zarrxt_node_kind kind = 0;
    int format = 0;

    OK(zarrxt_array_create_simple(store, "g3/ints", 3, ZARRXT_INT32, 2, shape, chunks, 0, &a));
    CHECK(a != NULL);
    if (a == NULL)
    {
        return;
    }
    OK(zarrxt_node_kind_of(a, &kind));
    CHECK(kind == ZARRXT_NODE_ARRAY);
    OK(zarrxt_node_zarr_format(a, &format));
    CHECK(format == 3);
    OK(zarrxt_array_rank(a, &rank));
    CHECK(rank == 2);
    OK(zarrxt_array_shape(a, got, 4));
    CHECK(got[0] == 10 && got[1] == 7);
    OK(zarrxt_array_chunk_shape(a, got, 2));
    CHECK(got[0] == 4 && got[1] == 3);
    OK(zarrxt_array_inner_chunk_shape(a, got, 2));
    CHECK(got[0] == 4 && got[1] == 3);
    FAILS(zarrxt_array_shape(a, got, 1), ZARRXT_ERR_USAGE, "zarrxt.capi.2");
    OK(zarrxt_array_dtype(a, &dt));
    CHECK(dt == ZARRXT_INT32);
    OK(zarrxt_array_item_size(a, &item));
    CHECK(item == 4);
    OK(zarrxt_array_dimension_name(a, 0, NULL, 0, &len));
    CHECK(len == 0);

    /* A never-written array reads as its fill value (zero). */
    {
        const uint64_t off[2] = {0, 0};
        memset(all, 0x55, sizeof all);
        OK(zarrxt_array_read(a, off, shape, all, sizeof all));
        CHECK(all[0] == 0 && all[69] == 0);
    }
    for (i = 0; i < 10; ++i)
    {
        for (j = 0; j < 7; ++j)
        {
            all[i * 7 + j] = value_at(i, j);
        }
    }
    {
        const uint64_t off[2] = {0, 0};
        OK(zarrxt_array_write(a, off, shape, all, sizeof all));
    }
    /* A region across chunk borders. */
    {
        const uint64_t off[2] = {3, 2};
        const uint64_t ext[2] = {4, 3};
        OK(zarrxt_array_read(a, off, ext, part, sizeof part));
        for (i = 0; i < 4; ++i)
        {
            for (j = 0; j < 3; ++j)
            {
                CHECK(part[i * 3 + j] == value_at(3 + i, 2 + j));
            }
        }
        FAILS(zarrxt_array_read(a, off, ext, part, sizeof part - 1), ZARRXT_ERR_USAGE, "zarrxt.capi.2");
        FAILS(zarrxt_array_read(a, off, ext, NULL, sizeof part), ZARRXT_ERR_USAGE, "zarrxt.capi.1");
        FAILS(zarrxt_array_read(a, NULL, ext, part, sizeof part), ZARRXT_ERR_USAGE, "zarrxt.capi.1");
    }
    {
        const uint64_t off[2] = {8, 0};
        const uint64_t ext[2] = {3, 1};
        int32_t three[3];
        FAILS(zarrxt_array_read(a, off, ext, three, sizeof three), ZARRXT_ERR_ARRAY, "zarrxt.array.3");
    }
    /* A partial write keeps the rest of the chunks it touches. */
    {
        const uint64_t off[2] = {5, 5};
        const uint64_t ext[2] = {1, 2};
        const int32_t two[2] = {-1, -2};
        const uint64_t o0[2] = {0, 0};
        OK(zarrxt_array_write(a, off, ext, two, sizeof two));
        OK(zarrxt_array_read(a, o0, shape, all, sizeof all));
        CHECK(all[5 * 7 + 5] == -1 && all[5 * 7 + 6] == -2);
        CHECK(all[5 * 7 + 4] == value_at(5, 4) && all[4 * 7 + 5] == value_at(4, 5));
    }
    {
        zarrxt_strings* s = NULL;
        const uint64_t off[2] = {0, 0};
        FAILS(zarrxt_array_read_strings(a, off, shape, &s), ZARRXT_ERR_ARRAY, "zarrxt.array.1");
        CHECK(s == NULL);
    }
    zarrxt_node_close(a);

    /* The same array opened again, and a v2 float64 array. */
    OK(zarrxt_node_open(store, "g3/ints", &a));
    if (a != NULL)
    {
        const uint64_t off[2] = {9, 6};
        const uint64_t ext[2] = {1, 1};
        int32_t one = 0;
        OK(zarrxt_array_read(a, off, ext, &one, sizeof one));
        CHECK(one == value_at(9, 6));
        zarrxt_node_close(a);
    }
    {
        const uint64_t s1[1] = {1000};
        const uint64_t c1[1] = {128};
        double d[1000];
        double back[10];
        const uint64_t off[1] = {495};
        const uint64_t ext[1] = {10};
        OK(zarrxt_array_create_simple(store, "g2/doubles", 2, ZARRXT_FLOAT64, 1, s1, c1, 0, &a));
        for (i = 0; i < 1000; ++i)
        {
            d[i] = (double)i * 0.25 - 3.0;
        }
        {
            const uint64_t o0[1] = {0};
            OK(zarrxt_array_write(a, o0, s1, d, sizeof d));
        }
        OK(zarrxt_array_read(a, off, ext, back, sizeof back));
        for (i = 0; i < 10; ++i)
        {
            CHECK(back[i] == (double)(495 + i) * 0.25 - 3.0);
        }
        OK(zarrxt_node_zarr_format(a, &format));
        CHECK(format == 2);
        zarrxt_node_close(a);
    }
    /* Creating over an existing node needs ZARRXT_OVERWRITE. */
    FAILS(zarrxt_array_create_simple(store, "g3/ints", 3, ZARRXT_INT32, 2, shape, chunks, 0, &a),
          ZARRXT_ERR_ARRAY, "zarrxt.array.6");
    CHECK(a == NULL);
    FAILS(zarrxt_array_create_simple(store, "g3/x", 4, ZARRXT_INT32, 2, shape, chunks, 0, &a),
          ZARRXT_ERR_USAGE, "zarrxt.capi.1");
    FAILS(zarrxt_array_create_simple(store, "g3/x", 3, ZARRXT_DATETIME64, 2, shape, chunks, 0, &a),
          ZARRXT_ERR_USAGE, "zarrxt.capi.1");
    FAILS(zarrxt_array_create_simple(store, "g3/x", 3, (zarrxt_dtype)99, 2, shape, chunks, 0, &a),
          ZARRXT_ERR_USAGE, "zarrxt.capi.1");
    /* One past the last zarrxt_dtype: the C++ side's user data type, which C cannot describe. */
    FAILS(zarrxt_array_create_simple(store, "g3/x", 3, (zarrxt_dtype)(ZARRXT_FLOAT8_E8M0FNU + 1), 2, shape,
                                     chunks, 0, &a),
          ZARRXT_ERR_USAGE, "zarrxt.capi.1");
    /* bfloat16 (its bits in a uint16_t) and a float8 type: v3 only. In a store of their own, so
     * that the hierarchy the later tests list stays as it is. */
    {
        zarrxt_store* own = NULL;
        const uint64_t s1[1] = {4};
        const uint64_t c1[1] = {2};
        const uint64_t o0[1] = {0};
        const uint16_t in[4] = {0x3f80, 0xc020, 0x7fc0, 0x0001};
        uint16_t out[4] = {0, 0, 0, 0};
        zarrxt_dtype dt = ZARRXT_BOOL;
        size_t item = 0;
        OK(zarrxt_store_open(path_in("f8.zarr"), 0, &own));
        OK(zarrxt_array_create_simple(own, "bf16", 3, ZARRXT_BFLOAT16, 1, s1, c1, 0, &a));
        OK(zarrxt_array_write(a, o0, s1, in, sizeof in));
        OK(zarrxt_array_read(a, o0, s1, out, sizeof out));
        CHECK(memcmp(in, out, sizeof in) == 0);
        OK(zarrxt_array_dtype(a, &dt));
        CHECK(dt == ZARRXT_BFLOAT16);
        OK(zarrxt_array_item_size(a, &item));
        CHECK(item == 2);
        zarrxt_node_close(a);
        a = NULL;
        OK(zarrxt_array_create_simple(own, "e8m0", 3, ZARRXT_FLOAT8_E8M0FNU, 1, s1, c1, 0, &a));
        OK(zarrxt_array_dtype(a, &dt));
        CHECK(dt == ZARRXT_FLOAT8_E8M0FNU);
        zarrxt_node_close(a);
        a = NULL;
        FAILS(zarrxt_array_create_simple(own, "v2", 2, ZARRXT_FLOAT8_E4M3, 1, s1, c1, 0, &a),
              ZARRXT_ERR_METADATA, "zarrxt.metadata.5");
        zarrxt_store_close(own);
    }
}

static const char* k_sharded =
    "{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [64, 64], \"data_type\": \"uint16\","
    " \"chunk_grid\": {\"name\": \"regular\", \"configuration\": {\"chunk_shape\": [32, 32]}},"
    " \"chunk_key_encoding\": {\"name\": \"default\", \"configuration\": {\"separator\": \"/\"}},"
    " \"fill_value\": 7, \"dimension_names\": [\"y\", null],"
    " \"attributes\": {\"units\": \"counts\"},"
    " \"codecs\": [{\"name\": \"sharding_indexed\", \"configuration\": {\"chunk_shape\": [8, 16],"
    " \"codecs\": [{\"name\": \"bytes\", \"configuration\": {\"endian\": \"big\"}}, {\"name\": \"gzip\","
    " \"configuration\": {\"level\": 5}}], \"index_codecs\": [{\"name\": \"bytes\", \"configuration\":"
    " {\"endian\": \"little\"}}, {\"name\": \"crc32c\"}], \"index_location\": \"end\"}}]}";

static void test_from_metadata(zarrxt_store* store)
{
    zarrxt_node* a = NULL;
    uint64_t got[2];
    char name[8];
    char text[4096];
    size_t len = 0;
    uint16_t v[64 * 64];
    uint64_t i;

    OK(zarrxt_array_create(store, "sharded", k_sharded, 0, &a));
    if (a == NULL)
    {
        return;
    }
    OK(zarrxt_array_chunk_shape(a, got, 2));
    CHECK(got[0] == 32 && got[1] == 32);
    OK(zarrxt_array_inner_chunk_shape(a, got, 2));
    CHECK(got[0] == 8 && got[1] == 16);
    OK(zarrxt_array_dimension_name(a, 0, name, sizeof name, &len));
    CHECK(len == 1 && strcmp(name, "y") == 0);
    OK(zarrxt_array_dimension_name(a, 1, name, sizeof name, &len));
    CHECK(len == 0 && name[0] == '\0');
    FAILS(zarrxt_array_dimension_name(a, 2, name, sizeof name, &len), ZARRXT_ERR_USAGE, "zarrxt.capi.1");
    OK(zarrxt_node_attributes(a, text, sizeof text, &len));
    CHECK(strstr(text, "\"units\"") != NULL && strlen(text) == len);
    /* The text buffer conventions: a query, then a buffer one byte too small. */
    OK(zarrxt_node_metadata(a, NULL, 0, &len));
    CHECK(len > 100 && len < sizeof text);
    {
        const size_t need = len;
        FAILS(zarrxt_node_metadata(a, text, need, &len), ZARRXT_ERR_USAGE, "zarrxt.capi.3");
        CHECK(len == need);
        OK(zarrxt_node_metadata(a, text, need + 1, &len));
        CHECK(strstr(text, "sharding_indexed") != NULL && strstr(text, "\"big\"") != NULL);
    }
    {
        const uint64_t off[2] = {0, 0};
        const uint64_t shape[2] = {64, 64};
        const uint64_t woff[2] = {20, 10};
        const uint64_t wext[2] = {30, 40};
        uint16_t w[30 * 40];
        uint64_t r, c;
        for (i = 0; i < 30 * 40; ++i)
        {
            w[i] = (uint16_t)(i * 3 + 1);
        }
        OK(zarrxt_array_write(a, woff, wext, w, sizeof w));
        OK(zarrxt_array_read(a, off, shape, v, sizeof v));
        for (r = 0; r < 64; ++r)
        {
            for (c = 0; c < 64; ++c)
            {
                const int inside = r >= 20 && r < 50 && c >= 10 && c < 50;
                const uint16_t want = inside ? (uint16_t)(((r - 20) * 40 + (c - 10)) * 3 + 1) : 7;
                if (v[r * 64 + c] != want)
                {
                    CHECK(v[r * 64 + c] == want);
                    r = 64;
                    break;
                }
            }
        }
    }
    zarrxt_node_close(a);

    /* v2 documents: a datetime64 array, and documents that do not describe an array. */
    OK(zarrxt_array_create(
        store, "times",
        "{\"zarr_format\": 2, \"shape\": [5], \"chunks\": [2], \"dtype\": \"<M8[s]\","
        " \"compressor\": null, \"fill_value\": null, \"filters\": null, \"order\": \"C\"}",
        0, &a));
    if (a != NULL)
    {
        zarrxt_dtype dt = 0;
        size_t item = 0;
        int64_t t[5] = {0, 1, -1, INT64_MIN, 1700000000};
        int64_t back[5];
        const uint64_t off[1] = {0};
        const uint64_t ext[1] = {5};
        OK(zarrxt_array_dtype(a, &dt));
        CHECK(dt == ZARRXT_DATETIME64);
        OK(zarrxt_array_item_size(a, &item));
        CHECK(item == 8);
        OK(zarrxt_array_write(a, off, ext, t, sizeof t));
        OK(zarrxt_array_read(a, off, ext, back, sizeof back));
        CHECK(memcmp(t, back, sizeof t) == 0);
        zarrxt_node_close(a);
    }
    FAILS(zarrxt_array_create(store, "bad", "{\"zarr_format\": 3, \"node_type\": \"group\"}", 0, &a),
          ZARRXT_ERR_METADATA, "zarrxt.metadata.15");
    FAILS(zarrxt_array_create(store, "bad", "{\"zarr_format\": 3, \"node_type\": \"array\"", 0, &a),
          ZARRXT_ERR_METADATA, "zarrxt.metadata.1");
    FAILS(
        zarrxt_array_create(store, "bad",
                            "{\"zarr_format\": 2, \"shape\": [-5], \"chunks\": [2], \"dtype\": \"<i4\","
                            " \"compressor\": null, \"fill_value\": 0, \"filters\": null, \"order\": \"C\"}",
                            0, &a),
        ZARRXT_ERR_METADATA, "zarrxt.metadata.4");
    CHECK(a == NULL);
    FAILS(zarrxt_array_create(store, "../escape", k_sharded, 0, &a), ZARRXT_ERR_STORE, "zarrxt.store.1");
}

static void test_strings(zarrxt_store* store)
{
    const uint64_t shape[1] = {6};
    const uint64_t chunks[1] = {4};
    const char* words[6] = {"alpha", "", "\xce\xbb-lambda", "delta", "a longer value than the others", "z"};
    size_t sizes[6];
    zarrxt_node* a = NULL;
    zarrxt_strings* got = NULL;
    size_t i, item = 1;
    const uint64_t off[1] = {0};

    for (i = 0; i < 6; ++i)
    {
        sizes[i] = strlen(words[i]);
    }
    OK(zarrxt_array_create_simple(store, "text", 3, ZARRXT_STRING, 1, shape, chunks, 0, &a));
    if (a == NULL)
    {
        return;
    }
    OK(zarrxt_array_item_size(a, &item));
    CHECK(item == 0);
    OK(zarrxt_array_write_strings(a, off, shape, words, sizes, 6));
    FAILS(zarrxt_array_write_strings(a, off, shape, words, sizes, 5), ZARRXT_ERR_USAGE, "zarrxt.capi.2");
    {
        char buf[8];
        FAILS(zarrxt_array_read(a, off, shape, buf, sizeof buf), ZARRXT_ERR_ARRAY, "zarrxt.array.1");
    }
    OK(zarrxt_array_read_strings(a, off, shape, &got));
    CHECK(zarrxt_strings_count(got) == 6);
    for (i = 0; i < 6 && got != NULL; ++i)
    {
        const char* data = NULL;
        size_t n = 99;
        OK(zarrxt_strings_get(got, i, &data, &n));
        CHECK(n == sizes[i]);
        CHECK(n == 0 || memcmp(data, words[i], n) == 0);
    }
    {
        const char* data;
        size_t n;
        FAILS(zarrxt_strings_get(got, 6, &data, &n), ZARRXT_ERR_USAGE, "zarrxt.capi.1");
    }
    zarrxt_strings_free(got);
    zarrxt_node_close(a);
}

static void test_groups(zarrxt_store* store)
{
    zarrxt_node* root = NULL;
    zarrxt_node* g = NULL;
    size_t n = 0, len = 0, i;
    char name[64];
    char text[256];
    zarrxt_node_kind kind = 0;
    const char* want_names[] = {"g2", "g3", "sharded", "text", "times"};
    const zarrxt_node_kind want_kinds[] = {ZARRXT_NODE_GROUP, ZARRXT_NODE_GROUP, ZARRXT_NODE_ARRAY,
                                           ZARRXT_NODE_ARRAY, ZARRXT_NODE_ARRAY};

    OK(zarrxt_group_create(store, "", 3, "{\"title\": \"made from C\", \"n\": 3}", ZARRXT_OVERWRITE, &root));
    /* overwriting the root group erased what was below it: make the children again */
    zarrxt_node_close(root);
    root = NULL;
    test_numeric(store);
    test_from_metadata(store);
    test_strings(store);

    OK(zarrxt_node_open(store, "", &root));
    if (root == NULL)
    {
        return;
    }
    OK(zarrxt_node_kind_of(root, &kind));
    CHECK(kind == ZARRXT_NODE_GROUP);
    OK(zarrxt_node_attributes(root, text, sizeof text, &len));
    CHECK(strstr(text, "made from C") != NULL);
    OK(zarrxt_group_child_count(root, &n));
    CHECK(n == 5);
    for (i = 0; i < n && i < 5; ++i)
    {
        OK(zarrxt_group_child(root, i, name, sizeof name, &len, &kind));
        CHECK(strcmp(name, want_names[i]) == 0);
        CHECK(kind == want_kinds[i]);
    }
    FAILS(zarrxt_group_child(root, n, name, sizeof name, &len, &kind), ZARRXT_ERR_USAGE, "zarrxt.capi.1");
    FAILS(zarrxt_array_rank(root, &len), ZARRXT_ERR_METADATA, "zarrxt.metadata.15");
    {
        const uint64_t off[1] = {0};
        int x;
        FAILS(zarrxt_array_read(root, off, off, &x, 0), ZARRXT_ERR_METADATA, "zarrxt.metadata.15");
    }

    /* Attributes: replaced, kept by the store, refused when not an object or not JSON. */
    OK(zarrxt_node_open(store, "g2", &g));
    if (g != NULL)
    {
        int format = 0;
        OK(zarrxt_node_zarr_format(g, &format));
        CHECK(format == 2);
        OK(zarrxt_node_set_attributes(g, "{\"history\": [1, 2, 3]}"));
        FAILS(zarrxt_node_set_attributes(g, "[1, 2]"), ZARRXT_ERR_METADATA, "zarrxt.metadata.3");
        FAILS(zarrxt_node_set_attributes(g, "{\"a\": "), ZARRXT_ERR_METADATA, "zarrxt.metadata.1");
        FAILS(zarrxt_group_child_count(NULL, &n), ZARRXT_ERR_USAGE, "zarrxt.capi.1");
        OK(zarrxt_node_path(g, name, sizeof name, &len));
        CHECK(strcmp(name, "g2") == 0);
        zarrxt_node_close(g);
        g = NULL;
    }
    OK(zarrxt_node_open(store, "g2", &g));
    if (g != NULL)
    {
        OK(zarrxt_node_attributes(g, text, sizeof text, &len));
        CHECK(strstr(text, "history") != NULL);
        zarrxt_node_close(g);
        g = NULL;
    }
    OK(zarrxt_node_open(store, "sharded", &g));
    if (g != NULL)
    {
        OK(zarrxt_node_set_attributes(g, "{\"units\": \"photons\"}"));
        zarrxt_node_close(g);
        g = NULL;
        OK(zarrxt_node_open(store, "sharded", &g));
        OK(zarrxt_node_attributes(g, text, sizeof text, &len));
        CHECK(strstr(text, "photons") != NULL && strstr(text, "counts") == NULL);
        zarrxt_node_close(g);
    }
    zarrxt_node_close(root);
}

static void test_consolidated(void)
{
    zarrxt_store* store = NULL;
    zarrxt_store* plain = NULL;
    zarrxt_node* root = NULL;
    size_t n = 0;

    /* No consolidated metadata yet: asking for it is an error. */
    FAILS(zarrxt_store_open(path_in("c.zarr/g3"), ZARRXT_CONSOLIDATED, &store), ZARRXT_ERR_METADATA,
          "zarrxt.metadata.17");
    OK(zarrxt_store_open(path_in("c.zarr"), 0, &plain));
    /* One consolidated document holds one format: the root has the v2 group g2 below it. */
    FAILS(zarrxt_store_consolidate(plain, ""), ZARRXT_ERR_METADATA, "zarrxt.metadata.16");
    OK(zarrxt_store_consolidate(plain, "g3"));
    zarrxt_store_close(plain);
    OK(zarrxt_store_open(path_in("c.zarr/g3"), ZARRXT_CONSOLIDATED, &store));
    OK(zarrxt_node_open(store, "", &root));
    zarrxt_store_close(store); /* the node keeps the store alive */
    if (root == NULL)
    {
        return;
    }
    OK(zarrxt_group_child_count(root, &n));
    CHECK(n == 1); /* g3/ints */
    zarrxt_node_close(root);
    {
        zarrxt_node* a = NULL;
        const uint64_t off[2] = {9, 6};
        const uint64_t ext[2] = {1, 1};
        int32_t one = 0;
        /* A node inside the hierarchy opened by URL: the store is rooted there. */
        char url[4096 + 64];
        snprintf(url, sizeof url, "file://%s", path_in("c.zarr/g3/ints"));
        OK(zarrxt_open(url, 0, &a));
        OK(zarrxt_array_read(a, off, ext, &one, sizeof one));
        CHECK(one == value_at(9, 6));
        zarrxt_node_close(a);
    }
}

static void test_corrupt_chunk(void)
{
    zarrxt_node* a = NULL;
    FILE* f = fopen(path_in("c.zarr/g3/ints/c/0/0"), "wb");
    CHECK(f != NULL);
    if (f == NULL)
    {
        return;
    }
    fputs("not a zstd frame", f);
    fclose(f);
    OK(zarrxt_open(path_in("c.zarr/g3/ints"), 0, &a));
    if (a != NULL)
    {
        const uint64_t off[2] = {0, 0};
        const uint64_t ext[2] = {1, 1};
        int32_t one;
        CHECK(zarrxt_array_read(a, off, ext, &one, sizeof one) == ZARRXT_ERR_CODEC);
        CHECK(strncmp(zarrxt_last_error_id(), "zarrxt.codec.", 13) == 0);
        CHECK(strstr(zarrxt_last_error_message(), "c/0/0") != NULL); /* the key is in the context */
        zarrxt_node_close(a);
    }
}

/* A kerchunk reference file (reference::REFS) opens through the same calls: a raw file of int16
 * values referenced as two chunks, the second before the first in the file. */
static void test_kerchunk(void)
{
    const int16_t raw[8] = {50, 60, 70, 80, 10, 20, 30, -40};
    const char* refs = "{\".zarray\": \"{\\\"zarr_format\\\": 2, \\\"shape\\\": [8], \\\"chunks\\\": [4],"
                       " \\\"dtype\\\": \\\"<i2\\\", \\\"compressor\\\": null, \\\"fill_value\\\": 0,"
                       " \\\"filters\\\": null, \\\"order\\\": \\\"C\\\"}\","
                       " \"0\": [\"raw.bin\", 8, 8], \"1\": [\"raw.bin\", 0, 8]}";
    FILE* f = fopen(path_in("raw.bin"), "wb");
    zarrxt_node* a = NULL;
    char url[4096 + 64];
    CHECK(f != NULL);
    if (f == NULL)
    {
        return;
    }
    fwrite(raw, sizeof raw, 1, f); /* native order: this test runs on little-endian machines */
    fclose(f);
    f = fopen(path_in("refs.json"), "wb");
    CHECK(f != NULL);
    if (f == NULL)
    {
        return;
    }
    fputs(refs, f);
    fclose(f);
    snprintf(url, sizeof url, "reference::%s", path_in("refs.json"));
    OK(zarrxt_open(url, 0, &a));
    if (a != NULL)
    {
        const uint64_t off[1] = {0};
        const uint64_t ext[1] = {8};
        const int16_t want[8] = {10, 20, 30, -40, 50, 60, 70, 80};
        int16_t got[8];
        OK(zarrxt_array_read(a, off, ext, got, sizeof got));
        CHECK(memcmp(got, want, sizeof got) == 0);
        /* read-only */
        FAILS(zarrxt_array_write(a, off, ext, got, sizeof got), ZARRXT_ERR_STORE, "zarrxt.store.9");
        zarrxt_node_close(a);
    }
}

/* Threads: each writes and reads its own rows of one shared handle, and keeps its own last error. */
struct worker
{
    zarrxt_node* array;
    uint64_t row;
    int failures;
};

static void* work(void* p)
{
    struct worker* w = (struct worker*)p;
    const uint64_t ext[2] = {1, 64};
    uint32_t row[64], back[64];
    int round, k;
    for (round = 0; round < 20; ++round)
    {
        const uint64_t off[2] = {w->row, 0};
        const uint64_t bad[2] = {1000, 0};
        for (k = 0; k < 64; ++k)
        {
            row[k] = (uint32_t)(w->row * 100000 + (uint64_t)round * 100 + (uint64_t)k);
        }
        if (zarrxt_array_write(w->array, off, ext, row, sizeof row) != ZARRXT_OK)
        {
            ++w->failures;
        }
        if (zarrxt_array_read(w->array, off, ext, back, sizeof back) != ZARRXT_OK ||
            memcmp(row, back, sizeof row) != 0)
        {
            ++w->failures;
        }
        /* A failure on this thread is seen on this thread only, with its own id. */
        if (zarrxt_array_read(w->array, bad, ext, back, sizeof back) != ZARRXT_ERR_ARRAY ||
            strcmp(zarrxt_last_error_id(), "zarrxt.array.3") != 0)
        {
            ++w->failures;
        }
    }
    return NULL;
}

static void test_threads(zarrxt_store* store)
{
    const uint64_t shape[2] = {8, 64};
    const uint64_t chunks[2] = {2, 16}; /* rows share chunks: every write is a read-modify-write */
    zarrxt_node* a = NULL;
    pthread_t t[8];
    struct worker w[8];
    int i;
    uint32_t all[8 * 64];
    const uint64_t off[2] = {0, 0};

    OK(zarrxt_array_create_simple(store, "threads", 3, ZARRXT_UINT32, 2, shape, chunks, ZARRXT_OVERWRITE,
                                  &a));
    if (a == NULL)
    {
        return;
    }
    for (i = 0; i < 8; ++i)
    {
        w[i].array = a;
        w[i].row = (uint64_t)i;
        w[i].failures = 0;
        CHECK(pthread_create(&t[i], NULL, work, &w[i]) == 0);
    }
    /* Meanwhile this thread fails differently and keeps its own error. */
    FAILS(zarrxt_array_rank(NULL, NULL), ZARRXT_ERR_USAGE, "zarrxt.capi.1");
    for (i = 0; i < 8; ++i)
    {
        pthread_join(t[i], NULL);
        CHECK(w[i].failures == 0);
    }
    CHECK(strcmp(zarrxt_last_error_id(), "zarrxt.capi.1") == 0);
    OK(zarrxt_array_read(a, off, shape, all, sizeof all));
    for (i = 0; i < 8 * 64; ++i)
    {
        const uint32_t r = (uint32_t)(i / 64), k = (uint32_t)(i % 64);
        if (all[i] != r * 100000 + 19 * 100 + k)
        {
            CHECK(all[i] == r * 100000 + 19 * 100 + k); /* a lost update */
            break;
        }
    }
    zarrxt_node_close(a);
}

static int remove_entry(const char* path, const struct stat* st, int flag, struct FTW* ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int main(int argc, char** argv)
{
    zarrxt_store* store = NULL;
    if (argc != 2)
    {
        fprintf(stderr, "usage: %s PARENT-DIRECTORY (a fresh directory is made in it)\n", argv[0]);
        return 2;
    }
    snprintf(g_dir, sizeof g_dir, "%s/c_api.XXXXXX", argv[1]);
    if (mkdtemp(g_dir) == NULL)
    {
        perror("mkdtemp");
        return 2;
    }

    test_errors_without_handles();
    OK(zarrxt_store_open(path_in("c.zarr"), 0, &store));
    if (store != NULL)
    {
        test_groups(store);
        test_threads(store);
        zarrxt_store_close(store);
    }
    test_consolidated();
    test_corrupt_chunk();
    test_kerchunk();
    printf("%d checks, %d failed\n", g_checks, g_failures);
    if (g_failures == 0)
    {
        nftw(g_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    }
    return g_failures == 0 ? 0 : 1;
}
