// zarrxt: inspect, hash, print and convert Zarr arrays.
//
//   zarrxt info PATH
//   zarrxt hash PATH
//   zarrxt cat PATH [--region 0:10,5:7]
//   zarrxt convert SRC DST [--zarr-format 2|3] [--chunks 64,64] [--shards 512,512]
//                          [--codec gzip:5|zstd:3|blosc:lz4:5|none] [--overwrite]
//   zarrxt verify PATH [--clean]
//
// PATH is the directory of an array (or group). Errors go to stderr with exit status 1 (a Zarr
// error, whose id and context are printed) or 2 (usage).
#include "sha256.hpp"

#include <zarrxt/zarrxt.hpp>

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

namespace zx = zarrxt;
namespace fs = std::filesystem;
using store_t = zx::filesystem_store;

namespace
{

struct usage_error : std::runtime_error
{
    using std::runtime_error::runtime_error;
};

const char* usage_text = R"(usage:
  zarrxt info PATH
  zarrxt hash PATH
  zarrxt cat PATH [--region START:STOP,...]
  zarrxt convert SRC DST [--zarr-format 2|3] [--chunks N,...] [--shards N,...]
                         [--codec gzip:LEVEL|zlib:LEVEL|zstd:LEVEL|blosc:CNAME:LEVEL|none] [--overwrite]
  zarrxt verify PATH [--clean]      decode every chunk and shard index of an array or hierarchy;
                                    --clean removes temporary files left by interrupted writers
)";

std::string join(const std::vector<std::uint64_t>& v)
{
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i)
    {
        s += (i ? ", " : "") + std::to_string(v[i]);
    }
    return s + "]";
}

std::vector<std::uint64_t> parse_list(const std::string& s, const char* what)
{
    std::vector<std::uint64_t> v;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
    {
        if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos)
        {
            throw usage_error(std::string("invalid ") + what + ": \"" + s + "\"");
        }
        v.push_back(std::stoull(item));
    }
    return v;
}

/// The store holding PATH as its root node.
store_t store_for(const std::string& path)
{
    if (!fs::exists(path))
    {
        throw zx::array_error(zx::array_errc::node_not_found, "no such directory: " + path);
    }
    return store_t(path);
}

bool is_metadata_key(const std::string& key)
{
    const std::string base = key.substr(key.rfind('/') == std::string::npos ? 0 : key.rfind('/') + 1);
    return base == "zarr.json" || base == ".zarray" || base == ".zattrs" || base == ".zgroup" || base == ".zmetadata";
}

/// Read the whole array in slabs along axis 0 (bounded memory), calling f(bytes, count).
template <class F>
void for_each_slab(const zx::any_array<store_t>& a, std::uint64_t rows_per_slab, F&& f)
{
    const auto& shape = a.shape();
    const std::size_t width = zx::info(a.dtype()).size;
    if (shape.empty())
    {
        zx::buffer b(width);
        a.read_bytes({}, {}, b.data());
        f(b.data(), std::uint64_t{1});
        return;
    }
    std::uint64_t row_elems = 1;
    for (std::size_t d = 1; d < shape.size(); ++d)
    {
        row_elems *= shape[d];
    }
    rows_per_slab = std::max<std::uint64_t>(1, rows_per_slab);
    zx::buffer b;
    for (std::uint64_t r = 0; r < shape[0]; r += rows_per_slab)
    {
        const std::uint64_t n = std::min(rows_per_slab, shape[0] - r);
        std::vector<std::uint64_t> off(shape.size(), 0);
        std::vector<std::uint64_t> ext = shape;
        off[0] = r;
        ext[0] = n;
        b.resize_discard(static_cast<std::size_t>(n * row_elems * width));
        a.read_bytes(off, ext, b.data());
        f(b.data(), n * row_elems);
    }
}

std::string format_value(zx::dtype_id id, const std::byte* p)
{
    char buf[96];
    auto get = [&](auto v) {
        std::memcpy(&v, p, sizeof(v));
        return v;
    };
    switch (id)
    {
    case zx::dtype_id::bool_:
        return get(std::uint8_t{}) ? "true" : "false";
    case zx::dtype_id::int8:
        return std::to_string(get(std::int8_t{}));
    case zx::dtype_id::int16:
        return std::to_string(get(std::int16_t{}));
    case zx::dtype_id::int32:
        return std::to_string(get(std::int32_t{}));
    case zx::dtype_id::int64:
        return std::to_string(get(std::int64_t{}));
    case zx::dtype_id::uint8:
        return std::to_string(get(std::uint8_t{}));
    case zx::dtype_id::uint16:
        return std::to_string(get(std::uint16_t{}));
    case zx::dtype_id::uint32:
        return std::to_string(get(std::uint32_t{}));
    case zx::dtype_id::uint64:
        return std::to_string(get(std::uint64_t{}));
    case zx::dtype_id::float16:
        std::snprintf(buf, sizeof buf, "%.5g", static_cast<double>(static_cast<float>(zx::detail::half_from_bits(get(std::uint16_t{})))));
        return buf;
    case zx::dtype_id::float32:
        std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(get(float{})));
        return buf;
    case zx::dtype_id::float64:
        std::snprintf(buf, sizeof buf, "%.17g", get(double{}));
        return buf;
    case zx::dtype_id::complex64:
    {
        float c[2];
        std::memcpy(c, p, 8);
        std::snprintf(buf, sizeof buf, "%.9g%+.9gj", static_cast<double>(c[0]), static_cast<double>(c[1]));
        return buf;
    }
    case zx::dtype_id::complex128:
    {
        double c[2];
        std::memcpy(c, p, 16);
        std::snprintf(buf, sizeof buf, "%.17g%+.17gj", c[0], c[1]);
        return buf;
    }
    }
    return "?";
}

int cmd_info(const std::string& path)
{
    store_t s = store_for(path);
    const auto lv = zx::limit_values::from(zx::default_limits{});
    auto node = zx::read_node(s, "", lv);
    if (!node)
    {
        throw zx::array_error(zx::array_errc::node_not_found, "no Zarr array or group at " + path);
    }
    std::cout << "path: " << path << "\n";
    if (node->kind == zx::node_kind::group)
    {
        auto g = zx::group<store_t>::open(s, "");
        std::cout << "node: group\nzarr_format: " << g.zarr_format() << "\nattributes: " << g.attributes().dump()
                  << "\nchildren:\n";
        for (const auto& c : g.children())
        {
            std::cout << "  " << c.name << " (" << (c.kind == zx::node_kind::array ? "array" : "group") << ")\n";
        }
        return 0;
    }
    auto a = zx::open_any(s, "");
    const auto& m = a.metadata();
    std::cout << "node: array\nzarr_format: " << m.zarr_format << "\ndtype: " << zx::name(m.dtype);
    if (m.zarr_format == 2)
    {
        std::cout << " (" << m.document["dtype"].get<std::string>() << ")";
    }
    std::cout << "\nshape: " << join(m.shape) << "\n";
    if (const auto* sh = a.chain().any_sharding())
    {
        std::cout << "shards: " << join(m.chunk_shape) << "\n";
        std::cout << "inner chunks: " << join(sh->inner_chunk_shape().to_vector()) << "\n";
        const auto cfg = sh->configuration();
        std::cout << "shard index: " << (sh->index_at_end() ? "end" : "start") << ", " << sh->index_encoded_size()
                  << " bytes, codecs " << cfg["index_codecs"].dump() << "\n";
        std::cout << "inner codecs: " << cfg["codecs"].dump() << "\n";
    }
    else
    {
        std::cout << "chunks: " << join(m.chunk_shape) << "\n";
    }
    zx::json codecs = zx::json::array();
    for (const auto& c : a.codecs())
    {
        codecs.push_back(c.to_json());
    }
    std::cout << "codecs: " << codecs.dump() << "\n";
    std::cout << "fill_value: " << zx::fill_value_to_json(m.fill, m.dtype, m.zarr_format).dump();
    if (m.fill.is_null && m.attributes.contains("_FillValue") &&
        zx::fill_value_to_json(m.fill, m.dtype, 3) != zx::fill_value_to_json(zx::fill_value{}, m.dtype, 3))
    {
        std::cout << " (missing chunks read as " << zx::fill_value_to_json(m.fill, m.dtype, 3).dump()
                  << ", the _FillValue attribute)";
    }
    std::cout << "\n";
    const auto& enc = m.key_encoding;
    std::cout << "chunk_key_encoding: "
              << (m.zarr_format == 2 ? "v2 (zarr v2)" : enc.encoding == zx::chunk_key_encoding::kind::default_ ? "default" : "v2")
              << " \"" << enc.separator << "\"\n";
    if (m.dimension_names)
    {
        std::cout << "dimension_names: [";
        for (std::size_t i = 0; i < m.dimension_names->size(); ++i)
        {
            const auto& n = (*m.dimension_names)[i];
            std::cout << (i ? ", " : "") << (n ? "\"" + *n + "\"" : std::string("null"));
        }
        std::cout << "]\n";
    }
    else if (m.zarr_format == 2 && m.attributes.contains(zx::v2_dimension_names_attribute))
    {
        std::cout << "dimension_names: none (the _ARRAY_DIMENSIONS attribute is not a list of " << m.rank()
                  << " strings or nulls; kept as an attribute)\n";
    }
    std::uint64_t stored = 0;
    std::uint64_t objects = 0;
    for (const auto& key : s.list(""))
    {
        if (is_metadata_key(key))
        {
            continue;
        }
        if (auto st = s.stat(key))
        {
            stored += st->size;
            ++objects;
        }
    }
    const auto grid = m.grid_shape();
    const std::uint64_t total = std::accumulate(grid.begin(), grid.end(), std::uint64_t{1}, std::multiplies<>());
    std::cout << "stored_bytes: " << stored << "\n";
    std::cout << (a.chain().any_sharding() ? "shards_stored: " : "chunks_stored: ") << objects << " of " << total << "\n";
    std::cout << "attributes: " << m.attributes.dump() << "\n";
    return 0;
}

int cmd_hash(const std::string& path)
{
    store_t s = store_for(path);
    auto a = zx::open_any(s, "");
    zarrxt_tool::sha256 h;
    const std::size_t width = zx::info(a.dtype()).size;
    const std::size_t word = zx::info(a.dtype()).word;
    const std::uint64_t rows = a.shape().empty() ? 1 : a.chunk_shape()[0];
    for_each_slab(a, rows, [&](std::byte* p, std::uint64_t n) {
        if (zx::native_endian != zx::endian::little)
        {
            zx::detail::byteswap_in_place(p, n * width, word); // the convention is little-endian
        }
        h.update(p, static_cast<std::size_t>(n * width));
    });
    std::cout << zarrxt_tool::sha256::hex(h.finish(), 16) << "\n";
    return 0;
}

int cmd_cat(const std::string& path, const std::string& region_text)
{
    store_t s = store_for(path);
    auto a = zx::open_any(s, "");
    const auto& shape = a.shape();
    std::vector<std::uint64_t> off(shape.size(), 0);
    std::vector<std::uint64_t> ext = shape;
    if (!region_text.empty())
    {
        std::stringstream ss(region_text);
        std::string item;
        std::size_t d = 0;
        while (std::getline(ss, item, ','))
        {
            const auto colon = item.find(':');
            if (d >= shape.size() || colon == std::string::npos)
            {
                throw usage_error("--region needs START:STOP for each of the " + std::to_string(shape.size()) + " axes");
            }
            const auto b = parse_list(item.substr(0, colon), "region start");
            const auto e = parse_list(item.substr(colon + 1), "region stop");
            if (b.size() != 1 || e.size() != 1 || e[0] < b[0])
            {
                std::string msg = "invalid region axis: ";
                msg += item;
                throw usage_error(msg);
            }
            off[d] = b[0];
            ext[d] = e[0] - b[0];
            ++d;
        }
        if (d != shape.size())
        {
            throw usage_error("--region needs START:STOP for each of the " + std::to_string(shape.size()) + " axes");
        }
    }
    const std::size_t width = zx::info(a.dtype()).size;
    std::uint64_t count = 1;
    for (auto e : ext)
    {
        count *= e;
    }
    zx::buffer b(static_cast<std::size_t>(count * width));
    a.read_bytes(off, ext, b.data());
    if (shape.empty())
    {
        std::cout << format_value(a.dtype(), b.data()) << "\n";
        return 0;
    }
    const std::uint64_t row = ext.back();
    std::vector<std::uint64_t> idx(shape.size() > 0 ? shape.size() - 1 : 0, 0);
    for (std::uint64_t r = 0; row != 0 && r < count / row; ++r)
    {
        std::string line = "[";
        std::uint64_t rem = r;
        for (std::size_t d = idx.size(); d-- > 0;)
        {
            idx[d] = rem % ext[d] + off[d];
            rem /= ext[d];
        }
        for (std::size_t d = 0; d < idx.size(); ++d)
        {
            line += std::to_string(idx[d]) + ", ";
        }
        line += std::to_string(off.back()) + ":" + std::to_string(off.back() + row) + "]";
        for (std::uint64_t c = 0; c < row; ++c)
        {
            line += ' ';
            line += format_value(a.dtype(), b.data() + (r * row + c) * width);
        }
        std::cout << line << "\n";
    }
    return 0;
}

zx::codec_spec parse_codec(const std::string& text)
{
    std::vector<std::string> parts;
    std::stringstream ss(text);
    std::string p;
    while (std::getline(ss, p, ':'))
    {
        parts.push_back(p);
    }
    auto level = [&](std::size_t i, int def) {
        if (parts.size() <= i)
        {
            return def;
        }
        const auto v = parse_list(parts[i], "codec level");
        return static_cast<int>(v.at(0));
    };
    if (parts.empty())
    {
        throw usage_error("empty --codec");
    }
    if (parts[0] == "gzip" || parts[0] == "zlib")
    {
        return zx::codec_spec(parts[0], {{"level", level(1, parts[0] == "gzip" ? 5 : 1)}});
    }
    if (parts[0] == "zstd")
    {
        return zx::codec_spec("zstd", {{"level", level(1, 3)}, {"checksum", false}});
    }
    if (parts[0] == "blosc")
    {
        const std::string cname = parts.size() > 1 ? parts[1] : "lz4";
        return zx::codec_spec("blosc", {{"cname", cname}, {"clevel", level(2, 5)}, {"shuffle", "shuffle"}, {"blocksize", 0}});
    }
    throw usage_error("unknown codec \"" + text + "\" (gzip:L, zlib:L, zstd:L, blosc:CNAME:L or none)");
}

int cmd_convert(const std::vector<std::string>& args)
{
    if (args.size() < 2)
    {
        throw usage_error("convert needs SRC and DST");
    }
    const std::string src_path = args[0];
    const std::string dst_path = args[1];
    int format = 0;
    std::vector<std::uint64_t> chunks;
    std::vector<std::uint64_t> shards;
    std::optional<std::string> codec_text;
    bool overwrite = false;
    for (std::size_t i = 2; i < args.size(); ++i)
    {
        auto value = [&] {
            if (i + 1 >= args.size())
            {
                throw usage_error(args[i] + " needs a value");
            }
            return args[++i];
        };
        if (args[i] == "--zarr-format")
        {
            const auto v = value();
            if (v != "2" && v != "3")
            {
                throw usage_error("--zarr-format must be 2 or 3");
            }
            format = v[0] - '0';
        }
        else if (args[i] == "--chunks")
        {
            chunks = parse_list(value(), "--chunks");
        }
        else if (args[i] == "--shards")
        {
            shards = parse_list(value(), "--shards");
        }
        else if (args[i] == "--codec")
        {
            codec_text = value();
        }
        else if (args[i] == "--overwrite")
        {
            overwrite = true;
        }
        else
        {
            throw usage_error("unknown option " + args[i]);
        }
    }
    store_t src_store = store_for(src_path);
    auto src = zx::open_any(src_store, "");
    const auto& m = src.metadata();
    if (format == 0)
    {
        format = shards.empty() ? m.zarr_format : 3;
    }
    if (!shards.empty() && format != 3)
    {
        throw usage_error("--shards needs Zarr format 3");
    }
    if (chunks.empty())
    {
        chunks = src.chain().any_sharding() ? src.chain().any_sharding()->inner_chunk_shape().to_vector() : m.chunk_shape;
    }
    if (chunks.size() != m.rank() || (!shards.empty() && shards.size() != m.rank()))
    {
        throw usage_error("--chunks/--shards need " + std::to_string(m.rank()) + " values");
    }
    // The compressor: as given, else the source's bytes->bytes codecs.
    std::vector<zx::codec_spec> compressors;
    if (codec_text)
    {
        if (*codec_text != "none")
        {
            compressors.push_back(parse_codec(*codec_text));
        }
    }
    else
    {
        const auto* sh = src.chain().any_sharding();
        std::vector<zx::codec_spec> specs;
        if (sh != nullptr)
        {
            for (const auto& c : sh->configuration()["codecs"])
            {
                specs.emplace_back(c["name"].get<std::string>(), c.value("configuration", zx::json::object()));
            }
        }
        else
        {
            specs = src.codecs();
        }
        for (const auto& c : specs)
        {
            if (c.name != "bytes" && c.name != "transpose" && c.name != "sharding_indexed" && c.name != "crc32c")
            {
                compressors.push_back(c);
            }
        }
    }
    // A v2 null fill value stays null in v2; v3 has no null and gets the value missing chunks
    // read as (zero, or the netCDF _FillValue NCZarr arrays carry).
    const zx::json fill = zx::fill_value_to_json(m.fill, m.dtype, format == 2 ? m.zarr_format : 3);
    fs::create_directories(dst_path);
    store_t dst_store(dst_path);
    std::shared_ptr<zx::any_array<store_t>::core_type> core;
    if (format == 3)
    {
        zx::v3_options o;
        o.shape = m.shape;
        o.chunk_shape = shards.empty() ? chunks : shards;
        o.codecs = {zx::codec_spec("bytes", {{"endian", "little"}})};
        for (const auto& c : compressors)
        {
            o.codecs.push_back(c);
        }
        if (!shards.empty())
        {
            o.codecs = {zx::sharded(chunks, o.codecs)};
        }
        o.fill_value = fill.is_null() ? zx::scalar() : zx::scalar::from_json(fill);
        o.dimension_names = m.dimension_names;
        o.attributes = m.attributes;
        o.overwrite = overwrite;
        core = zx::any_array<store_t>::core_type::create(dst_store, "", m.dtype, o, {}, {});
    }
    else
    {
        if (compressors.size() > 1)
        {
            throw usage_error("Zarr v2 holds one compressor; pass --codec");
        }
        zx::v2_options o;
        o.shape = m.shape;
        o.chunks = chunks;
        o.compressor = compressors.empty() ? std::nullopt : std::optional<zx::codec_spec>(compressors[0]);
        o.fill_value = fill.is_null() ? zx::scalar() : zx::scalar::from_json(fill);
        o.null_fill_value = fill.is_null();
        o.dimension_names = m.dimension_names; // written as the _ARRAY_DIMENSIONS attribute
        o.attributes = m.attributes;
        o.overwrite = overwrite;
        core = zx::any_array<store_t>::core_type::create(dst_store, "", m.dtype, o, {}, {});
    }
    zx::any_array<store_t> dst(core);
    // Copy in slabs of whole destination chunk rows along axis 0: no read-modify-write.
    const std::uint64_t rows = m.shape.empty() ? 1 : dst.chunk_shape()[0];
    std::uint64_t r0 = 0;
    const std::size_t width = zx::info(m.dtype).size;
    for_each_slab(src, rows, [&](std::byte* p, std::uint64_t n) {
        if (m.shape.empty())
        {
            dst.write_bytes({}, {}, p);
            return;
        }
        std::vector<std::uint64_t> off(m.rank(), 0);
        std::vector<std::uint64_t> ext = m.shape;
        off[0] = r0;
        ext[0] = n / std::max<std::uint64_t>(1, std::accumulate(m.shape.begin() + 1, m.shape.end(), std::uint64_t{1},
                                                                std::multiplies<>()));
        dst.write_bytes(off, ext, p);
        r0 += ext[0];
        (void)width;
    });
    std::cout << "converted " << src_path << " (v" << m.zarr_format << ") to " << dst_path << " (v" << format << ")\n";
    return 0;
}

struct verify_totals
{
    std::uint64_t arrays = 0;
    std::uint64_t chunks = 0;
    std::uint64_t problems = 0;
};

void report_problem(const std::string& where, const std::string& what, verify_totals& t)
{
    std::cout << "PROBLEM " << where << ": " << what << "\n";
    ++t.problems;
}

void verify_array(store_t& s, const std::string& path, verify_totals& t, bool progress)
{
    ++t.arrays;
    std::optional<zx::any_array<store_t>> a;
    try
    {
        a.emplace(zx::open_any(s, path));
    }
    catch (const zx::error& e)
    {
        report_problem(path.empty() ? "/" : path, e.what(), t);
        return;
    }
    const auto& m = a->metadata();
    const auto grid = m.grid_shape();
    const std::uint64_t total = std::accumulate(grid.begin(), grid.end(), std::uint64_t{1}, std::multiplies<>());
    const std::size_t width = zx::info(m.dtype).size;
    zx::buffer b;
    // One chunk (or shard) at a time: memory stays at one decoded chunk.
    for (std::uint64_t i = 0; i < total; ++i)
    {
        std::vector<std::uint64_t> off(m.rank()), ext(m.rank());
        std::uint64_t rem = i;
        std::uint64_t elems = 1;
        for (std::size_t d = m.rank(); d-- > 0;)
        {
            const std::uint64_t c = rem % grid[d];
            rem /= grid[d];
            off[d] = c * m.chunk_shape[d];
            ext[d] = std::min(m.chunk_shape[d], m.shape[d] - off[d]);
            elems *= ext[d];
        }
        b.resize_discard(static_cast<std::size_t>(elems * width));
        zx::problem_list problems;
        try
        {
            a->read_bytes(off, ext, b.data(), &problems);
        }
        catch (const zx::error& e)
        {
            report_problem(path.empty() ? "/" : path, e.what(), t);
        }
        for (const auto& p : problems.take())
        {
            std::string where = p.key;
            if (p.range)
            {
                where += " bytes " + std::to_string(p.range->offset) + ".." + std::to_string(p.range->offset + p.range->length);
            }
            report_problem(where, p.message, t);
        }
        ++t.chunks;
        if (progress && (i % 64 == 0 || i + 1 == total))
        {
            std::cerr << "\rverifying " << (path.empty() ? "/" : path) << ": " << (i + 1) << "/" << total << " chunks"
                      << std::flush;
        }
    }
    if (progress)
    {
        std::cerr << "\n";
    }
}

void verify_node(store_t& s, const std::string& path, verify_totals& t, bool progress)
{
    const auto lv = zx::limit_values::from(zx::default_limits{});
    std::optional<zx::node_kind> kind;
    try
    {
        kind = zx::peek_node_kind(s, path, lv);
        if (!kind)
        {
            zx::read_node(s, path, lv); // refuses the pre-final draft with a clear error
            report_problem(path.empty() ? "/" : path, "no Zarr array or group here", t);
            return;
        }
    }
    catch (const zx::error& e)
    {
        report_problem(path.empty() ? "/" : path, e.what(), t);
        return;
    }
    if (*kind == zx::node_kind::array)
    {
        verify_array(s, path, t, progress);
        return;
    }
    try
    {
        auto g = zx::group<store_t>::open(s, path, lv);
        for (const auto& c : g.children())
        {
            verify_node(s, c.path, t, progress);
        }
    }
    catch (const zx::error& e)
    {
        report_problem(path.empty() ? "/" : path, e.what(), t);
    }
}

int cmd_verify(const std::string& path, bool clean)
{
    store_t s = store_for(path);
    verify_totals t;
    verify_node(s, "", t, ::isatty(2) != 0);
    // Temporary files of interrupted writers are never read as data; report (and remove) them.
    std::uint64_t temps = 0;
    std::vector<fs::path> found;
    for (auto it = fs::recursive_directory_iterator(path); it != fs::recursive_directory_iterator(); ++it)
    {
        if (it->is_regular_file() && store_t::is_temp_name(it->path().filename().string()))
        {
            found.push_back(it->path());
        }
    }
    for (const auto& f : found)
    {
        ++temps;
        if (clean)
        {
            fs::remove(f);
        }
        else
        {
            std::cout << "note: leftover temporary file " << fs::relative(f, path).generic_string()
                      << " (ignored by readers; --clean removes it)\n";
        }
    }
    std::cout << t.arrays << " arrays, " << t.chunks << " chunks checked, " << t.problems << " problems";
    if (temps != 0)
    {
        std::cout << ", " << temps << " temporary files" << (clean ? " removed" : "");
    }
    std::cout << "\n";
    return t.problems == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);
    try
    {
        if (args.empty() || args[0] == "--help" || args[0] == "-h")
        {
            std::cout << usage_text;
            return args.empty() ? 2 : 0;
        }
        const std::string cmd = args[0];
        if (cmd == "info" && args.size() == 2)
        {
            return cmd_info(args[1]);
        }
        if (cmd == "hash" && args.size() == 2)
        {
            return cmd_hash(args[1]);
        }
        if (cmd == "cat" && (args.size() == 2 || (args.size() == 4 && args[2] == "--region")))
        {
            return cmd_cat(args[1], args.size() == 4 ? args[3] : "");
        }
        if (cmd == "verify" && (args.size() == 2 || (args.size() == 3 && args[2] == "--clean")))
        {
            return cmd_verify(args[1], args.size() == 3);
        }
        if (cmd == "convert")
        {
            return cmd_convert(std::vector<std::string>(args.begin() + 1, args.end()));
        }
        throw usage_error("unknown command or wrong arguments");
    }
    catch (const usage_error& e)
    {
        std::cerr << "zarrxt: " << e.what() << "\n" << usage_text;
        return 2;
    }
    catch (const zx::error& e)
    {
        std::cerr << "zarrxt: error: " << e.what() << "\n";
        return 1;
    }
    catch (const std::exception& e)
    {
        std::cerr << "zarrxt: error: " << e.what() << "\n";
        return 1;
    }
}
