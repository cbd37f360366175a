// What the W1 and W2 reads need from storage (the objects and, in shards, the inner chunks), as
// the floors fetch them. `dir` is a directory or a URL base: paths are joined with '/'. Shared by
// seed_reads and w2 (local files) and remote (the same objects over HTTP).
#pragma once

#include "floor.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace zxb
{

/// A W1 array (BENCHMARKS.md): square, uint16, chunked or sharded.
struct w1_layout
{
    std::string name;
    codec_kind codec;
    bool v2_keys;        ///< "r.c" (Zarr v2) rather than "c/r/c"
    std::uint64_t shape; ///< square arrays
    std::uint64_t chunk; ///< chunk edge, or shard edge when sharded
    std::uint64_t inner; ///< inner chunk edge; 0 when not sharded
};

inline const w1_layout& w1_layout_of(const std::string& name)
{
    static const std::vector<w1_layout> all = {
        {"v2_gzip", codec_kind::gzip, true, 4096, 64, 0},
        {"v3_raw", codec_kind::none, false, 4096, 64, 0},
        {"v3_gzip", codec_kind::gzip, false, 4096, 64, 0},
        {"v3_sharded", codec_kind::gzip, false, 4096, 512, 64},
        {"index_stress", codec_kind::none, false, 1024, 1024, 8},
    };
    for (const auto& l : all)
    {
        if (l.name == name)
        {
            return l;
        }
    }
    fail("unknown array " + name);
}

/// The objects and inner chunks a read of the box [r0, r0 + e) x [c0, c0 + e) needs.
inline read_plan w1_plan(const w1_layout& l, const std::string& dir, std::uint64_t r0, std::uint64_t c0,
                         std::uint64_t e)
{
    read_plan p;
    p.codec = l.codec;
    p.sharded = l.inner != 0;
    const std::uint64_t cell = p.sharded ? l.inner : l.chunk;
    p.chunk_bytes = cell * cell * 2;
    p.inner_count = p.sharded ? (l.chunk / l.inner) * (l.chunk / l.inner) : 0;
    p.output_bytes = e * e * 2;
    const std::string base = dir + "/" + l.name + "/";
    for (std::uint64_t sr = r0 / l.chunk; sr <= (r0 + e - 1) / l.chunk; ++sr)
    {
        for (std::uint64_t sc = c0 / l.chunk; sc <= (c0 + e - 1) / l.chunk; ++sc)
        {
            read_object o;
            o.path = base + (l.v2_keys ? std::to_string(sr) + "." + std::to_string(sc)
                                       : "c/" + std::to_string(sr) + "/" + std::to_string(sc));
            if (p.sharded)
            {
                const std::uint64_t g = l.chunk / l.inner;
                for (std::uint64_t ir = 0; ir < g; ++ir)
                {
                    for (std::uint64_t ic = 0; ic < g; ++ic)
                    {
                        const std::uint64_t row = sr * l.chunk + ir * l.inner;
                        const std::uint64_t col = sc * l.chunk + ic * l.inner;
                        if (row < r0 + e && row + l.inner > r0 && col < c0 + e && col + l.inner > c0)
                        {
                            o.inner.push_back(ir * g + ic);
                        }
                    }
                }
            }
            p.objects.push_back(std::move(o));
        }
    }
    return p;
}

/// The objects a read of a whole W2 array at `dir` needs: v3 keys c/0, c/1, ..., or, with `v2`,
/// keys 0, 1, ... (a 1-d array's v2 key has no separator). `shard` 0: not sharded.
inline read_plan w2_plan(const std::string& dir, std::uint64_t n, std::uint64_t chunk, std::uint64_t shard,
                         codec_kind codec, bool v2)
{
    if (v2 && shard != 0)
    {
        fail("a Zarr v2 array has no shards; pass --shard 0");
    }
    read_plan p;
    p.codec = codec;
    p.sharded = shard != 0;
    p.chunk_bytes = chunk;
    p.inner_count = p.sharded ? shard / chunk : 0;
    p.output_bytes = n;
    const std::uint64_t outer = p.sharded ? shard : chunk;
    for (std::uint64_t i = 0; i < n / outer; ++i)
    {
        read_object o;
        o.path = dir + (v2 ? "/" : "/c/") + std::to_string(i);
        for (std::uint64_t k = 0; k < p.inner_count; ++k)
        {
            o.inner.push_back(k);
        }
        p.objects.push_back(std::move(o));
    }
    return p;
}

/// w2_plan for a local array: v2 when the directory holds a .zarray.
inline read_plan w2_plan(const std::string& dir, std::uint64_t n, std::uint64_t chunk, std::uint64_t shard,
                         codec_kind codec)
{
    return w2_plan(dir, n, chunk, shard, codec,
                   std::filesystem::exists(std::filesystem::path(dir) / ".zarray"));
}

} // namespace zxb
