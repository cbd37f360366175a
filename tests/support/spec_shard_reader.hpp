// An independent reader of sharded Zarr v3 arrays, written from the sharding_indexed specification
// (https://zarr-specs.readthedocs.io/en/latest/v3/codecs/sharding-indexed/) for the tests. It shares
// no code with zarrxt's codecs: its CRC-32C is the bitwise definition, gzip goes through zlib's
// inflate and zstd through ZSTD_decompress directly. It supports what the tests write: a chain of
// bytes (+ optional gzip / zstd / crc32c), nested sharding, index at the start or the end, and
// reads whole arrays of a fixed-size little- or big-endian element type into C order.
#pragma once

#include <zarrxt/detail/json.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>
#include <zlib.h>
#include <zstd.h>

namespace zxtest::spec
{

using bytes_t = std::vector<unsigned char>;
using zarrxt::json;

inline std::uint32_t crc32c_bitwise(const unsigned char* p, std::size_t n)
{
    std::uint32_t crc = 0xFFFFFFFFu;
    for (std::size_t i = 0; i < n; ++i)
    {
        crc ^= p[i];
        for (int k = 0; k < 8; ++k)
        {
            crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
        }
    }
    return ~crc;
}

inline std::uint64_t le64(const unsigned char* p)
{
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
    {
        v = (v << 8) | p[i];
    }
    return v;
}

inline bytes_t gunzip(const bytes_t& in)
{
    z_stream zs{};
    if (inflateInit2(&zs, 15 + 16) != Z_OK)
    {
        throw std::runtime_error("inflateInit2");
    }
    bytes_t out(1 << 16);
    zs.next_in = const_cast<unsigned char*>(in.data());
    zs.avail_in = static_cast<uInt>(in.size());
    int r = Z_OK;
    while (r != Z_STREAM_END)
    {
        if (zs.total_out == out.size())
        {
            out.resize(out.size() * 2);
        }
        zs.next_out = out.data() + zs.total_out;
        zs.avail_out = static_cast<uInt>(out.size() - zs.total_out);
        r = inflate(&zs, Z_NO_FLUSH);
        if (r != Z_OK && r != Z_STREAM_END)
        {
            inflateEnd(&zs);
            throw std::runtime_error("gzip stream invalid");
        }
    }
    out.resize(zs.total_out);
    inflateEnd(&zs);
    return out;
}

inline bytes_t unzstd(const bytes_t& in, std::size_t expected)
{
    bytes_t out(expected);
    const std::size_t n = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(n) || n != expected)
    {
        throw std::runtime_error("zstd frame invalid");
    }
    return out;
}

struct chunk_format
{
    std::vector<std::uint64_t> shape; ///< shape of the array this chain encodes
    std::size_t item = 0;            ///< bytes per element
    json codecs;                     ///< the codec list
};

inline std::uint64_t product(const std::vector<std::uint64_t>& v)
{
    std::uint64_t n = 1;
    for (auto e : v)
    {
        n *= e;
    }
    return n;
}

/// Decode `in` (an encoded chunk of `f`) into little-endian element bytes in C order.
inline bytes_t decode_chunk(bytes_t in, const chunk_format& f);

/// Decode a whole shard (the value of a sharding_indexed codec) into C-ordered element bytes;
/// missing inner chunks become `fill` (one element, little-endian).
inline bytes_t decode_shard(const bytes_t& shard, const chunk_format& f, const json& cfg, const bytes_t& fill)
{
    std::vector<std::uint64_t> inner;
    for (const auto& e : cfg["chunk_shape"])
    {
        inner.push_back(e.get<std::uint64_t>());
    }
    const std::size_t rank = inner.size();
    std::vector<std::uint64_t> grid(rank);
    for (std::size_t d = 0; d < rank; ++d)
    {
        grid[d] = f.shape[d] / inner[d];
    }
    const std::uint64_t n = product(grid);
    bool index_crc = false;
    for (const auto& c : cfg["index_codecs"])
    {
        const std::string name = c.is_string() ? c.get<std::string>() : c["name"].get<std::string>();
        if (name == "crc32c")
        {
            index_crc = true;
        }
        else if (name != "bytes")
        {
            throw std::runtime_error("spec reader: unsupported index codec " + name);
        }
    }
    const std::size_t index_size = static_cast<std::size_t>(16 * n + (index_crc ? 4 : 0));
    const bool at_end = !cfg.contains("index_location") || cfg["index_location"] == "end";
    if (shard.size() < index_size)
    {
        throw std::runtime_error("spec reader: shard smaller than its index");
    }
    const unsigned char* index = shard.data() + (at_end ? shard.size() - index_size : 0);
    if (index_crc)
    {
        std::uint32_t stored = 0;
        for (int i = 3; i >= 0; --i)
        {
            stored = (stored << 8) | index[16 * n + static_cast<std::uint64_t>(i)];
        }
        if (stored != crc32c_bitwise(index, static_cast<std::size_t>(16 * n)))
        {
            throw std::runtime_error("spec reader: index checksum mismatch");
        }
    }
    chunk_format inner_f{inner, f.item, cfg["codecs"]};
    const std::uint64_t total = product(f.shape);
    bytes_t out(static_cast<std::size_t>(total * f.item));
    for (std::uint64_t i = 0; i < total; ++i)
    {
        std::memcpy(out.data() + i * f.item, fill.data(), f.item);
    }
    for (std::uint64_t c = 0; c < n; ++c)
    {
        const std::uint64_t off = le64(index + 16 * c);
        const std::uint64_t len = le64(index + 16 * c + 8);
        if (off == ~0ull && len == ~0ull)
        {
            continue;
        }
        if (off + len > shard.size())
        {
            throw std::runtime_error("spec reader: entry outside the shard");
        }
        bytes_t enc(shard.begin() + static_cast<std::ptrdiff_t>(off), shard.begin() + static_cast<std::ptrdiff_t>(off + len));
        bytes_t dec;
        // Nested sharding: the inner chain is itself a sharding codec.
        if (inner_f.codecs.size() == 1 && inner_f.codecs[0]["name"] == "sharding_indexed")
        {
            dec = decode_shard(enc, inner_f, inner_f.codecs[0]["configuration"], fill);
        }
        else
        {
            dec = decode_chunk(enc, inner_f);
        }
        // Inner chunk coordinates, then copy its rows into the shard.
        std::vector<std::uint64_t> cc(rank);
        std::uint64_t rem = c;
        for (std::size_t d = rank; d-- > 0;)
        {
            cc[d] = rem % grid[d];
            rem /= grid[d];
        }
        const std::uint64_t inner_total = product(inner);
        for (std::uint64_t e = 0; e < inner_total; ++e)
        {
            std::uint64_t r = e;
            std::uint64_t dst = 0;
            std::uint64_t stride = 1;
            std::vector<std::uint64_t> idx(rank);
            for (std::size_t d = rank; d-- > 0;)
            {
                idx[d] = r % inner[d];
                r /= inner[d];
            }
            for (std::size_t d = rank; d-- > 0;)
            {
                dst += (cc[d] * inner[d] + idx[d]) * stride;
                stride *= f.shape[d];
            }
            std::memcpy(out.data() + dst * f.item, dec.data() + e * f.item, f.item);
        }
    }
    return out;
}

inline bytes_t decode_chunk(bytes_t in, const chunk_format& f)
{
    const std::size_t raw = static_cast<std::size_t>(product(f.shape) * f.item);
    // Undo bytes->bytes codecs from last to first.
    for (std::size_t i = f.codecs.size(); i-- > 1;)
    {
        const json& c = f.codecs[i];
        const std::string name = c.is_string() ? c.get<std::string>() : c["name"].get<std::string>();
        if (name == "crc32c")
        {
            if (in.size() < 4)
            {
                throw std::runtime_error("spec reader: chunk shorter than its checksum");
            }
            const std::size_t n = in.size() - 4;
            std::uint32_t stored = 0;
            for (int k = 3; k >= 0; --k)
            {
                stored = (stored << 8) | in[n + static_cast<std::size_t>(k)];
            }
            if (stored != crc32c_bitwise(in.data(), n))
            {
                throw std::runtime_error("spec reader: chunk checksum mismatch");
            }
            in.resize(n);
        }
        else if (name == "gzip")
        {
            in = gunzip(in);
        }
        else if (name == "zstd")
        {
            in = unzstd(in, raw);
        }
        else
        {
            throw std::runtime_error("spec reader: unsupported codec " + name);
        }
    }
    const json& first = f.codecs[0];
    const std::string name = first.is_string() ? first.get<std::string>() : first["name"].get<std::string>();
    if (name != "bytes")
    {
        throw std::runtime_error("spec reader: unsupported array->bytes codec " + name);
    }
    if (in.size() != raw)
    {
        throw std::runtime_error("spec reader: chunk has the wrong size");
    }
    const bool big = first.is_object() && first.contains("configuration") && first["configuration"].value("endian", "little") == "big";
    if (big && f.item > 1)
    {
        for (std::size_t i = 0; i < in.size(); i += f.item)
        {
            for (std::size_t a = 0, b = f.item - 1; a < b; ++a, --b)
            {
                std::swap(in[i + a], in[i + b]);
            }
        }
    }
    return in;
}

inline bytes_t read_file_bytes(const std::filesystem::path& p)
{
    std::ifstream f(p, std::ios::binary);
    return bytes_t(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

/// Read a whole v3 array whose only codec is sharding_indexed, from a directory; C order, LE bytes.
inline bytes_t read_sharded_array(const std::filesystem::path& dir, std::size_t item, const bytes_t& fill)
{
    const json meta = json::parse(read_file_bytes(dir / "zarr.json"));
    std::vector<std::uint64_t> shape, shard;
    for (const auto& e : meta["shape"])
    {
        shape.push_back(e.get<std::uint64_t>());
    }
    for (const auto& e : meta["chunk_grid"]["configuration"]["chunk_shape"])
    {
        shard.push_back(e.get<std::uint64_t>());
    }
    if (meta["codecs"].size() != 1 || meta["codecs"][0]["name"] != "sharding_indexed")
    {
        throw std::runtime_error("spec reader: expected a single sharding_indexed codec");
    }
    const json cfg = meta["codecs"][0]["configuration"];
    const std::size_t rank = shape.size();
    std::vector<std::uint64_t> grid(rank);
    for (std::size_t d = 0; d < rank; ++d)
    {
        grid[d] = (shape[d] + shard[d] - 1) / shard[d];
    }
    const std::uint64_t total = product(shape);
    bytes_t out(static_cast<std::size_t>(total * item));
    for (std::uint64_t i = 0; i < total; ++i)
    {
        std::memcpy(out.data() + i * item, fill.data(), item);
    }
    chunk_format sf{shard, item, meta["codecs"]};
    for (std::uint64_t s = 0; s < product(grid); ++s)
    {
        std::vector<std::uint64_t> sc(rank);
        std::uint64_t rem = s;
        for (std::size_t d = rank; d-- > 0;)
        {
            sc[d] = rem % grid[d];
            rem /= grid[d];
        }
        std::filesystem::path key = dir / "c";
        for (auto c : sc)
        {
            key /= std::to_string(c);
        }
        if (!std::filesystem::exists(key))
        {
            continue;
        }
        const bytes_t dec = decode_shard(read_file_bytes(key), sf, cfg, fill);
        const std::uint64_t shard_total = product(shard);
        for (std::uint64_t e = 0; e < shard_total; ++e)
        {
            std::uint64_t r = e;
            std::vector<std::uint64_t> idx(rank);
            for (std::size_t d = rank; d-- > 0;)
            {
                idx[d] = r % shard[d];
                r /= shard[d];
            }
            bool inside = true;
            std::uint64_t dst = 0;
            std::uint64_t stride = 1;
            for (std::size_t d = rank; d-- > 0;)
            {
                const std::uint64_t g = sc[d] * shard[d] + idx[d];
                inside = inside && g < shape[d];
                dst += g * stride;
                stride *= shape[d];
            }
            if (inside)
            {
                std::memcpy(out.data() + dst * item, dec.data() + e * item, item);
            }
        }
    }
    return out;
}

} // namespace zxtest::spec
