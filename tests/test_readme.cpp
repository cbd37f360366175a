// The README's code, compiled and run (nlohmann's unit-readme idea: the README cannot rot). The
// blocks between the markers below are the README's ```cpp blocks, line for line: the first test
// case compares them with README.md, so neither can change without the other.
#include "support/http_servers.hpp"
#include "support/test_support.hpp"

#include <zarrxt/zarrxt.hpp>
#if ZARRXT_HAS_CURL
#include <zarrxt/store/http.hpp> // block 3 includes it again, where the README shows it
#endif

#include <xtensor/xview.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace
{

std::vector<std::string> split_lines(const std::string& text)
{
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at <= text.size())
    {
        const std::size_t nl = text.find('\n', at);
        std::string line = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
        line.erase(line.find_last_not_of(" \t\r") + 1);
        out.push_back(line);
        if (nl == std::string::npos)
        {
            break;
        }
        at = nl + 1;
    }
    return out;
}

/// Lines without their common indentation, and without leading or trailing blank lines.
std::vector<std::string> dedent(std::vector<std::string> lines)
{
    while (!lines.empty() && lines.front().empty())
    {
        lines.erase(lines.begin());
    }
    while (!lines.empty() && lines.back().empty())
    {
        lines.pop_back();
    }
    std::size_t indent = std::string::npos;
    for (const auto& l : lines)
    {
        if (!l.empty())
        {
            indent = std::min(indent, l.find_first_not_of(' '));
        }
    }
    for (auto& l : lines)
    {
        l = l.empty() ? l : l.substr(indent);
    }
    return lines;
}

/// The README's ```cpp blocks.
std::vector<std::vector<std::string>> readme_blocks(const std::string& readme)
{
    std::vector<std::vector<std::string>> blocks;
    bool inside = false;
    for (const auto& l : split_lines(readme))
    {
        if (!inside && l == "```cpp")
        {
            inside = true;
            blocks.emplace_back();
        }
        else if (inside && l == "```")
        {
            inside = false;
        }
        else if (inside)
        {
            blocks.back().push_back(l);
        }
    }
    for (auto& b : blocks)
    {
        b = dedent(b);
    }
    return blocks;
}

/// The blocks of this file between "README block N begins" and "README block N ends" markers.
std::vector<std::vector<std::string>> marked_blocks(const std::string& source)
{
    std::vector<std::vector<std::string>> blocks;
    bool inside = false;
    for (const auto& l : split_lines(source))
    {
        const std::string t = l.substr(std::min(l.size(), l.find_first_not_of(' ')));
        const bool marker = t.rfind("// --- README block ", 0) == 0;
        const bool begins = marker && t.size() > 7 && t.compare(t.size() - 7, 7, " begins") == 0;
        const bool ends = marker && t.size() > 5 && t.compare(t.size() - 5, 5, " ends") == 0;
        if (begins)
        {
            inside = true;
            blocks.emplace_back();
        }
        else if (ends)
        {
            inside = false;
        }
        else if (inside)
        {
            blocks.back().push_back(l);
        }
    }
    for (auto& b : blocks)
    {
        b = dedent(b);
    }
    return blocks;
}

std::string joined(const std::vector<std::string>& lines)
{
    std::string out;
    for (const auto& l : lines)
    {
        out += l + "\n";
    }
    return out;
}

/// The value the prefill puts at (z, y, x): non-zero everywhere, different at every element.
float prefill_value(std::size_t z, std::size_t y, std::size_t x)
{
    return 1.0f + static_cast<float>(z * 10000 + y * 100 + x % 100) * 0.5f;
}

} // namespace

TEST_CASE("the README's code blocks are the ones compiled here")
{
    const std::string root = zxtest::env("ZARRXT_SOURCE_DIR");
    REQUIRE_MESSAGE(!root.empty(), "ZARRXT_SOURCE_DIR is set by tests/meson.build");
    const auto readme = readme_blocks(zxtest::read_file(root + "/README.md"));
    const auto here = marked_blocks(zxtest::read_file(root + "/tests/test_readme.cpp"));
    REQUIRE(readme.size() == 3);
    REQUIRE(here.size() == 3);
    for (std::size_t i = 0; i < readme.size(); ++i)
    {
        CAPTURE(i);
        CHECK(joined(here[i]) == joined(readme[i]));
    }
}

TEST_CASE("README example")
{
    zxtest::temp_dir dir;
    const auto cwd = std::filesystem::current_path();
    std::filesystem::current_path(dir.path());
    {
        namespace zx = zarrxt;
        // The array the example opens, with non-zero data in the region it reads and rewrites, so
        // that a read or write that did nothing cannot pass.
        zx::filesystem_store prep{"volume.zarr"};
        auto raw = zx::create<float, 3>(prep, "raw",
                                        zx::v3_options{.shape = {32, 256, 256}, .chunk_shape = {16, 64, 64}});
        xt::xtensor<float, 3> before = xt::xtensor<float, 3>::from_shape({16, 64, 64});
        for (std::size_t z = 0; z < 16; ++z)
        {
            for (std::size_t y = 0; y < 64; ++y)
            {
                for (std::size_t x = 0; x < 64; ++x)
                {
                    before(z, y, x) = prefill_value(z, y + 64, x + 128);
                }
            }
        }
        raw.write({{0, 64, 128}, {16, 64, 64}}, before);
        {
// clang-format off
            // --- README block 1 begins
            #include <zarrxt/zarrxt.hpp>
            namespace zx = zarrxt;

            zx::filesystem_store store{"volume.zarr"};
            auto img = zx::open<float, 3>(store, "raw");                       // v2 or v3, checked against <float, 3>
            xt::xtensor<float, 3> block = img.read({{0, 64, 128}, {16, 64, 64}}); // offset, extent
            img.write({{0, 64, 128}, {16, 64, 64}}, block * 2.0f);
            // --- README block 1 ends
            // clang-format on
            CHECK(block == before);
            const xt::xtensor<float, 3> doubled = before * 2.0f;
            CHECK(img.read({{0, 64, 128}, {16, 64, 64}}) == doubled);
            // Outside the region nothing was written: still the fill value.
            CHECK(img.read({{0, 64, 127}, {1, 1, 1}})(0, 0, 0) == 0.0f);

            // clang-format off
            // --- README block 2 begins
            auto labels = zx::create<std::uint16_t, 3>(store, "labels", zx::v3_options{
                .shape = {1024, 1024, 1024}, .chunk_shape = {256, 256, 256},                  // 256^3 shards ...
                .codecs = {zx::sharded({64, 64, 64}, {zx::codec::bytes{}, zx::codec::zstd{.level = 3}})}});  // ... of 64^3 chunks

            auto old = zx::create<double, 2>(store, "v2/field", zx::v2_options{
                .shape = {1000, 1000}, .chunks = {100, 100}, .compressor = zx::codec_spec("zlib", {{"level", 1}}), .order = 'F'});
            // --- README block 2 ends
            // clang-format on
            CHECK(labels.shape() == std::array<std::uint64_t, 3>{1024, 1024, 1024});
            const auto reopened = zx::open<std::uint16_t, 3>(store, "labels");
            REQUIRE(reopened.metadata().codecs.size() == 1);
            const auto& shard = reopened.metadata().codecs[0];
            CHECK(shard.name == "sharding_indexed");
            CHECK(shard.configuration["chunk_shape"] == zx::json{64, 64, 64});
            CHECK(shard.configuration["codecs"][1]["name"] == "zstd");
            CHECK(shard.configuration["codecs"][1]["configuration"]["level"] == 3);
            CHECK(reopened.metadata().chunk_shape == std::vector<std::uint64_t>{256, 256, 256});
            CHECK(old.metadata().zarr_format == 2);
            const auto field = zx::json::parse(zxtest::read_file("volume.zarr/v2/field/.zarray"));
            CHECK(field["order"] == "F");
            CHECK(field["compressor"] == zx::json{{"id", "zlib"}, {"level", 1}});
            CHECK(field["chunks"] == zx::json{100, 100});
            CHECK(field["dtype"] == "<f8");
#if ZARRXT_HAS_CURL
            // The remote example, against nginx serving the directory block 1 wrote.
            zxtest::nginx_server nginx(dir.path());
            if (!nginx.ok())
            {
                std::filesystem::current_path(cwd);
                ZX_SKIP_PEER(nginx.problem());
            }
            const std::string url = nginx.url("volume.zarr");
            // clang-format off
            // --- README block 3 begins
            #include <zarrxt/store/http.hpp>                       // url: "https://example.org/data/volume.zarr"
            zarrxt::http_store web{url};
            auto remote = zarrxt::open<float, 3>(web, "raw");
            auto tile = remote.read({{0, 64, 128}, {16, 64, 64}});
            // --- README block 3 ends
            // clang-format on
            CHECK(tile == doubled);
#endif
        }
    }
    std::filesystem::current_path(cwd);
}

// ODR check, part A: the library used from two translation units linked together, this one and
// test_odr_b.cpp, both header-only. Every function in the header-only library must be inline or a
// template, or the link fails. (Part A lives here rather than in a unit of its own: a header-only
// unit costs about 20 s of compile time on its own.)
float odr_b_read(zarrxt::memory_store& s);

TEST_CASE("two translation units share one array through the same headers")
{
    zarrxt::memory_store s;
    auto a = zarrxt::create<float, 1>(s, "x", zarrxt::v2_options{.shape = {3}, .chunks = {2}});
    a.write({{0}, {3}}, xt::xtensor<float, 1>{1.5f, 2.5f, 3.5f});
    CHECK(odr_b_read(s) == 3.5f);
}
