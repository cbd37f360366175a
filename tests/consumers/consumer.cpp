// A program as a user of the installed zarrxt writes it: built by tests/consumers/run.sh through
// CMake's find_package, through pkg-config and as a meson subproject. It writes and reads arrays
// with every optional codec the build found (so each carried link dependency is really linked), and
// checks the version macros against the version its build system saw (ZARRXT_EXPECTED_VERSION).
#include <zarrxt/zarrxt.hpp>
#if ZARRXT_HAS_CURL
#include <zarrxt/store/http.hpp>
#endif
#if ZARRXT_HAS_S3
#include <zarrxt/store/s3.hpp>
#endif

#include <cstdio>
#include <cstring>

namespace zx = zarrxt;

#define ZX_STR2(x) #x
#define ZX_STR(x) ZX_STR2(x)

namespace
{

int failures = 0;

void check(bool ok, const char* what)
{
    if (!ok)
    {
        std::printf("FAILED: %s\n", what);
        ++failures;
    }
}

template <class Options>
void round_trip(zx::memory_store& store, const char* path, const Options& options)
{
    xt::xtensor<std::int32_t, 2> data = xt::xtensor<std::int32_t, 2>::from_shape({20, 30});
    for (std::size_t r = 0; r < 20; ++r)
    {
        for (std::size_t c = 0; c < 30; ++c)
        {
            data(r, c) = static_cast<std::int32_t>(r * 1000 + c);
        }
    }
    zx::create<std::int32_t, 2>(store, path, options).write({{0, 0}, {20, 30}}, data);
    const auto back = zx::open<std::int32_t, 2>(store, path).read({{3, 4}, {10, 20}});
    bool same = true;
    for (std::size_t r = 0; r < 10; ++r)
    {
        for (std::size_t c = 0; c < 20; ++c)
        {
            same = same && back(r, c) == data(r + 3, c + 4);
        }
    }
    check(same, path);
    std::printf("%s ok\n", path);
}

} // namespace

int main()
{
    const char* version = ZX_STR(ZARRXT_VERSION_MAJOR) "." ZX_STR(ZARRXT_VERSION_MINOR) "." ZX_STR(ZARRXT_VERSION_PATCH);
    check(std::strcmp(version, ZARRXT_VERSION_STRING) == 0, "ZARRXT_VERSION_STRING matches the version macros");
    check(std::strcmp(version, ZARRXT_EXPECTED_VERSION) == 0, "the version macros match the build system's version");
    std::printf("zarrxt %s (build system: %s)\n", version, ZARRXT_EXPECTED_VERSION);

    zx::memory_store store;
    round_trip(store, "zstd_sharded",
               zx::v3_options{.shape = {20, 30}, .chunk_shape = {10, 15},
                              .codecs = {zx::sharded({5, 5}, {zx::codec_spec("bytes", {{"endian", "little"}}),
                                                              zx::codec_spec("zstd", {{"level", 3}, {"checksum", false}})})}});
    round_trip(store, "gzip", zx::v2_options{.shape = {20, 30}, .chunks = {8, 8}, .compressor = zx::codec_spec("gzip", {{"level", 5}})});
#if ZARRXT_HAS_BLOSC
    round_trip(store, "blosc", zx::v2_options{.shape = {20, 30}, .chunks = {8, 8},
                                              .compressor = zx::codec_spec("blosc", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}})});
#endif
#if ZARRXT_HAS_LZ4
    round_trip(store, "lz4", zx::v3_options{.shape = {20, 30}, .chunk_shape = {8, 8},
                                            .codecs = {zx::codec_spec("bytes", {{"endian", "little"}}),
                                                       zx::codec_spec("numcodecs.lz4", {{"acceleration", 1}})}});
#endif
#if ZARRXT_HAS_CURL
    {
        // No request is sent: the store is made (libcurl's multi handle) and names a key's URL.
        const zx::http_store remote("http://127.0.0.1:9/data.zarr/");
        check(remote.url_of("arr/c/0") == "http://127.0.0.1:9/data.zarr/arr/c/0", "http_store names URLs");
        std::printf("http_store ok\n");
    }
#endif
#if ZARRXT_HAS_S3
    {
        // libcrypto (the payload digest) and expat (a listing page) linked, no request sent.
        check(zx::detail::sha256_hex(zx::as_bytes("abc")) ==
                  "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
              "libcrypto's SHA-256");
        const std::string page = "<ListBucketResult><Contents><Key>k</Key></Contents></ListBucketResult>";
        check(zx::detail::s3_list_parser::parse(zx::as_bytes(page), "page").keys.size() == 1,
              "expat parses a listing");
        zx::s3_options o;
        o.endpoint = "http://127.0.0.1:9";
        o.anonymous = true;
        o.region = "us-east-1";
        check(zx::s3_store::from_url("s3://bucket/prefix", o).url() == "s3://bucket/prefix",
              "s3_store from a URL");
        std::printf("s3_store ok\n");
    }
#endif
    std::printf("libdeflate=%d blosc=%d lz4=%d curl=%d s3=%d\n", ZARRXT_HAS_LIBDEFLATE, ZARRXT_HAS_BLOSC,
                ZARRXT_HAS_LZ4, ZARRXT_HAS_CURL, ZARRXT_HAS_S3);
    return failures == 0 ? 0 : 1;
}
