// quickstart: write a real Zarr v2 array and a real Zarr v3 (sharded) array, read a region of each
// back, check every value, and report shape, dtype, codecs, stored bytes and timings.
//   usage: quickstart [OUTPUT_DIR]
#include <zarrxt/zarrxt.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>

namespace zx = zarrxt;
namespace fs = std::filesystem;

static double ms_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

static std::uint64_t stored_bytes(const fs::path& dir)
{
    std::uint64_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir))
    {
        n += e.is_regular_file() ? e.file_size() : 0;
    }
    return n;
}

template <class Array>
static int round_trip(const char* label, Array a, const fs::path& dir)
{
    const auto [rows, cols] = a.shape();
    xt::xtensor<std::uint16_t, 2> data = xt::xtensor<std::uint16_t, 2>::from_shape({rows, cols});
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c)
            data(r, c) = static_cast<std::uint16_t>((r * 17 + c * 31) % 65521 + 1);
    auto t0 = std::chrono::steady_clock::now();
    a.write({{0, 0}, {rows, cols}}, data);
    const double write_ms = ms_since(t0);

    t0 = std::chrono::steady_clock::now();
    auto region = a.read({{7, 11}, {256, 256}});
    const double read_ms = ms_since(t0);
    for (std::size_t r = 0; r < 256; ++r)
        for (std::size_t c = 0; c < 256; ++c)
            if (region(r, c) != data(r + 7, c + 11))
            {
                std::printf("%s: MISMATCH at [%zu, %zu]\n", label, r + 7, c + 11);
                return 1;
            }
    std::string codecs;
    for (const auto& c : a.codecs())
        codecs += (codecs.empty() ? "" : ", ") + c.name;
    std::printf("%s: v%d %s shape [%zu, %zu] chunks [%zu, %zu] codecs [%s]\n", label, a.zarr_format(),
                std::string(zx::name(a.dtype)).c_str(), std::size_t(rows), std::size_t(cols),
                std::size_t(a.chunk_shape()[0]), std::size_t(a.chunk_shape()[1]), codecs.c_str());
    std::printf("  stored %llu bytes for %zu raw; write %.1f ms, read 256x256 at [7, 11] %.2f ms, values ok\n",
                static_cast<unsigned long long>(stored_bytes(dir)), std::size_t(rows * cols * 2), write_ms, read_ms);
    return 0;
}

int main(int argc, char** argv)
{
    const fs::path out = argc > 1 ? fs::path(argv[1]) : fs::temp_directory_path() / "zarrxt-quickstart";
    fs::create_directories(out);
    try
    {
        zx::filesystem_store v2_store(out / "v2.zarr");
        auto v2 = zx::create<std::uint16_t, 2>(v2_store, "image",
                                               zx::v2_options{.shape = {1024, 1024}, .chunks = {64, 64},
                                                              .compressor = zx::codec_spec("gzip", {{"level", 5}}),
                                                              .overwrite = true});
        zx::filesystem_store v3_store(out / "v3.zarr");
        auto v3 = zx::create<std::uint16_t, 2>(
            v3_store, "image",
            zx::v3_options{.shape = {1024, 1024},
                           .chunk_shape = {512, 512},
                           .codecs = {zx::sharded({64, 64}, {zx::codec::bytes{}, zx::codec::zstd{.level = 3}})},
                           .dimension_names = std::vector<std::optional<std::string>>{"y", "x"},
                           .overwrite = true});
        int rc = round_trip("v2", v2, out / "v2.zarr");
        rc |= round_trip("v3", v3, out / "v3.zarr");
        std::printf("arrays written under %s\n", out.c_str());
        return rc;
    }
    catch (const zx::error& e)
    {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
