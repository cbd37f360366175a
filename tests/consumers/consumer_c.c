/* A C program as a user of the installed C API writes it: built by tests/consumers/run.sh through
 * CMake's find_package (zarrxt::c, zarrxt::c_static), through pkg-config (zarrxt-c, shared and
 * --static) and as a meson subproject. It writes a zstd-compressed array and reads it back in a
 * fresh directory, and prints the version line run.sh checks. */
#define _XOPEN_SOURCE 700 /* mkdtemp */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zarrxt.h>

int main(void)
{
    char dir[] = "/tmp/zarrxt-c-consumer-XXXXXX";
    char url[64];
    zarrxt_store* store = NULL;
    zarrxt_node* a = NULL;
    const uint64_t shape[2] = {30, 20};
    const uint64_t chunks[2] = {8, 8};
    const uint64_t off[2] = {0, 0};
    const uint64_t one_off[2] = {29, 19};
    const uint64_t one_ext[2] = {1, 1};
    int32_t data[600];
    int32_t one = 0;
    int i;
    if (mkdtemp(dir) == NULL)
    {
        perror("mkdtemp");
        return 1;
    }
    snprintf(url, sizeof url, "%s/a.zarr", dir);
    for (i = 0; i < 600; ++i)
    {
        data[i] = i * 7 - 100;
    }
    if (zarrxt_store_open(url, 0, &store) != ZARRXT_OK ||
        zarrxt_array_create_simple(store, "x", 3, ZARRXT_INT32, 2, shape, chunks, 0, &a) != ZARRXT_OK ||
        zarrxt_array_write(a, off, shape, data, sizeof data) != ZARRXT_OK ||
        zarrxt_array_read(a, one_off, one_ext, &one, sizeof one) != ZARRXT_OK)
    {
        printf("FAILED: [%s] %s\n", zarrxt_last_error_id(), zarrxt_last_error_message());
        return 1;
    }
    zarrxt_node_close(a);
    zarrxt_store_close(store);
    if (one != 599 * 7 - 100)
    {
        printf("FAILED: read %d\n", (int)one);
        return 1;
    }
    printf("zarrxt %s (build system: %s)\n", zarrxt_version(), ZARRXT_EXPECTED_VERSION);
    return 0;
}
