/** @file codec/numcodecs/lzma.hpp
 *  `numcodecs.lzma` (bytes -> bytes): LZMA through liblzma, in the containers of Python's lzma
 *  module. Zarr v2: numcodecs compressor {"id": "lzma", "format": 1, "check": -1, "preset": null,
 *  "filters": null} (numcodecs 0.11's defaults); v3: "numcodecs.lzma" with the same members.
 *  Compiled when <lzma.h> is available (Debian liblzma-dev); otherwise the codec reports error 7.
 *
 *  Supported: format 1 (.xz), 2 (.lzma, "alone") and 3 (raw, which needs `filters`); check -1
 *  (the container's default: CRC64 for .xz, none otherwise), 0, 1 (CRC32), 4 (CRC64), 10 (SHA-256)
 *  for .xz; preset 0..9, optionally with LZMA_PRESET_EXTREME (2^31); filter chains of delta
 *  ({"id": 3, "dist"}) filters ending in LZMA1 ({"id": 4611686018427387905}) or LZMA2
 *  ({"id": 33}) with Python's option names (preset, dict_size, lc, lp, pb, mode, nice_len, mf,
 *  depth). Refused with metadata error 12: format 0 (auto-detection: Python cannot encode it, so
 *  no numcodecs array uses it), the branch/call/jump filters (meant for executables), and what
 *  Python itself refuses (a preset together with filters, a check outside .xz).
 *
 *  Memory: a stream names the dictionary its decoder must allocate (up to 4 GiB for LZMA2, from a
 *  few header bytes). zarrxt never allocates more dictionary than the output it may still produce:
 *  .xz blocks are decoded one by one with their dictionary clamped to that size (the index and
 *  footer are verified with liblzma's index hash), the .lzma header is read with its dictionary
 *  size clamped the same way, and raw streams use the clamped configuration. A dictionary at least
 *  as large as the data decodes it exactly. The encoder's dictionary is likewise clamped to the
 *  chunk (as the xz tool does for small files), so preset 9 does not cost 674 MiB per chunk.
 *  Decoding is strict: .xz streams may be followed by stream padding and further streams, but
 *  other bytes after the end are an error (Python's lzma.decompress silently drops them).
 */
#pragma once

#include "../../config.hpp"
#include "../../detail/bounded_output.hpp"
#include "../concepts.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#if ZARRXT_HAS_LZMA
#include <lzma.h>
#endif

namespace zarrxt::codec::numcodecs
{

class lzma
{
public:
    using codec_kind = bytes_to_bytes_tag;
    static constexpr std::string_view name = "numcodecs.lzma";

    static constexpr std::uint64_t id_delta = 0x03;
    static constexpr std::uint64_t id_lzma1 = 0x4000000000000001ull;
    static constexpr std::uint64_t id_lzma2 = 0x21;
    static constexpr std::uint32_t preset_extreme = std::uint32_t{1} << 31;

    int format = 1;                      ///< 1: .xz, 2: .lzma ("alone"), 3: raw
    int check = -1;                      ///< -1: the container's default; 0, 1, 4, 10 (.xz only)
    std::optional<std::uint32_t> preset; ///< empty: null in the metadata, which means 6
    json filters = nullptr;              ///< numcodecs' filter chain, as written in the metadata

    static lzma from_json(const json& cfg, const codec_context&);
    json to_json() const
    {
        return {{"format", format},
                {"check", check},
                {"preset", preset ? json(*preset) : json(nullptr)},
                {"filters", filters}};
    }
    std::optional<std::size_t> encoded_size(std::size_t) const { return std::nullopt; }

    void encode(byte_view in, buffer& out) const;
    mutable_byte_view decode(mutable_byte_view in, buffer& out, const decode_hint& hint) const;

    /// One filter of the chain, as parsed from the configuration (independent of liblzma's types).
    struct filter_spec
    {
        std::uint64_t id = id_lzma2;
        std::uint32_t preset = 6;
        std::optional<std::uint32_t> dict_size, lc, lp, pb, mode, nice_len, mf, depth;
        std::uint32_t dist = 1; // delta
    };
    std::vector<filter_spec> m_chain; ///< the filters in use (from `filters`, else from the preset)

private:
#if ZARRXT_HAS_LZMA
    /// liblzma's filter array for the chain, with LZMA dictionaries clamped to `dict_cap` bytes.
    struct lzma_chain
    {
        std::array<lzma_filter, LZMA_FILTERS_MAX + 1> filters{};
        std::array<lzma_options_lzma, LZMA_FILTERS_MAX> lz{};
        std::array<lzma_options_delta, LZMA_FILTERS_MAX> delta{};
    };
    void build(lzma_chain& c, std::uint64_t dict_cap) const;
    mutable_byte_view decode_xz(mutable_byte_view in, zarrxt::detail::bounded_output& o) const;
    mutable_byte_view decode_alone(mutable_byte_view in, zarrxt::detail::bounded_output& o) const;
    mutable_byte_view decode_raw(mutable_byte_view in, zarrxt::detail::bounded_output& o) const;
#endif
};

/******************
 * implementation *
 ******************/

#if ZARRXT_HAS_LZMA
namespace lzma_impl
{

[[noreturn]] inline void fail(lzma_ret r, std::string_view what)
{
    if (r == LZMA_MEM_ERROR)
    {
        throw std::bad_alloc();
    }
    const char* why = r == LZMA_DATA_ERROR          ? "corrupt data or integrity check mismatch"
                      : r == LZMA_FORMAT_ERROR      ? "not a stream of this format"
                      : r == LZMA_OPTIONS_ERROR     ? "unsupported options in the stream"
                      : r == LZMA_UNSUPPORTED_CHECK ? "the stream's integrity check type is not supported"
                      : r == LZMA_BUF_ERROR         ? "truncated stream"
                                                    : "liblzma error";
    throw codec_error(r == LZMA_BUF_ERROR ? codec_errc::truncated : codec_errc::corrupt_stream, lzma::name,
                      std::string(what) + ": " + why + " (liblzma code " +
                          std::to_string(static_cast<int>(r)) + ")");
}

struct stream_guard
{
    lzma_stream s = LZMA_STREAM_INIT;
    stream_guard() = default;
    stream_guard(const stream_guard&) = delete;
    stream_guard& operator=(const stream_guard&) = delete;
    ~stream_guard() { lzma_end(&s); }
};

/// Runs a decoder over in[0, n) into `o`. With `last`, the input must end the stream (else the
/// stream is truncated); without it, returns when the input is used up. Returns the bytes consumed
/// and sets `ended` when the decoder reported the end of its stream.
inline std::size_t pump(lzma_stream& s, const std::byte* in, std::size_t n, zarrxt::detail::bounded_output& o,
                        bool last, bool& ended)
{
    s.next_in = reinterpret_cast<const std::uint8_t*>(in);
    s.avail_in = n;
    ended = false;
    while (true)
    {
        o.grow();
        const std::size_t room = o.avail();
        s.next_out = reinterpret_cast<std::uint8_t*>(o.next());
        s.avail_out = room;
        const lzma_ret r = lzma_code(&s, LZMA_RUN);
        o.produced(room - s.avail_out);
        if (r == LZMA_STREAM_END)
        {
            ended = true;
            return n - s.avail_in;
        }
        if (r != LZMA_OK && r != LZMA_BUF_ERROR)
        {
            fail(r, "decoding");
        }
        if (s.avail_in == 0 && s.avail_out != 0)
        {
            if (last)
            {
                throw codec_error(codec_errc::truncated, lzma::name, "input ends inside the stream");
            }
            return n;
        }
        if (r == LZMA_BUF_ERROR)
        {
            fail(r, "decoding"); // no progress possible although input and room remain
        }
    }
}

inline bool is_xz_magic(const std::byte* p, std::size_t n) noexcept
{
    static constexpr unsigned char magic[6] = {0xFD, '7', 'z', 'X', 'Z', 0x00};
    return n >= 6 && std::memcmp(p, magic, 6) == 0;
}

inline std::uint32_t dict_cap_of(std::size_t remaining) noexcept
{
    // A dictionary as large as the output still allowed decodes any valid stream exactly.
    const std::uint64_t r = remaining;
    return static_cast<std::uint32_t>(
        std::max<std::uint64_t>(LZMA_DICT_SIZE_MIN, std::min<std::uint64_t>(r, UINT32_MAX)));
}

} // namespace lzma_impl
#endif

inline lzma lzma::from_json(const json& cfg, const codec_context&)
{
    // A non-negative JSON integer, however nlohmann stores it (parsed: unsigned; built in C++: signed).
    auto unsigned_of = [](const json& j, std::uint64_t& v)
    {
        if (j.is_number_unsigned())
        {
            v = j.get<std::uint64_t>();
            return true;
        }
        if (j.is_number_integer() && j.get<std::int64_t>() >= 0)
        {
            v = static_cast<std::uint64_t>(j.get<std::int64_t>());
            return true;
        }
        return false;
    };
    detail::check_keys(name, cfg, {"format", "check", "preset", "filters", "id"});
    lzma c;
    c.format = static_cast<int>(detail::int_member(name, cfg, "format", 1, 0, 3));
    c.check = static_cast<int>(detail::int_member(name, cfg, "check", -1, -1, 15));
    if (c.format == 0)
    {
        detail::bad_config(name,
                           "\"format\" 0 (auto-detection) cannot encode; use 1 (.xz), 2 (.lzma) or 3 (raw)");
    }
    if (c.format == 1 && c.check != -1 && c.check != 0 && c.check != 1 && c.check != 4 && c.check != 10)
    {
        detail::bad_config(name,
                           "\"check\" must be -1, 0 (none), 1 (CRC32), 4 (CRC64) or 10 (SHA-256), got " +
                               std::to_string(c.check));
    }
    if (c.format != 1 && c.check != -1 && c.check != 0)
    {
        detail::bad_config(name,
                           "\"check\" is only supported by format 1 (.xz), got " + std::to_string(c.check));
    }
    if (auto it = cfg.find("preset"); it != cfg.end() && !it->is_null())
    {
        std::uint64_t v = 0;
        if (!unsigned_of(*it, v) || (v & ~std::uint64_t{preset_extreme}) > 9)
        {
            detail::bad_config(name, "\"preset\" must be null or 0..9, optionally | 2^31 (extreme), got " +
                                         it->dump());
        }
        c.preset = static_cast<std::uint32_t>(v);
    }
    if (auto it = cfg.find("filters"); it != cfg.end() && !it->is_null())
    {
        if (c.preset)
        {
            detail::bad_config(name, "\"preset\" and \"filters\" cannot both be given");
        }
        if (!it->is_array() || it->empty() || it->size() > 4)
        {
            detail::bad_config(name,
                               "\"filters\" must be null or a list of 1 to 4 filters, got " + it->dump());
        }
        c.filters = *it;
        for (const auto& f : *it)
        {
            filter_spec s;
            if (!f.is_object() || !f.contains("id") || !unsigned_of(f["id"], s.id))
            {
                detail::bad_config(name,
                                   "each filter must be an object with an integer \"id\", got " + f.dump());
            }
            auto u32 = [&](const char* k, std::uint64_t hi) -> std::optional<std::uint32_t>
            {
                auto m = f.find(k);
                if (m == f.end())
                {
                    return std::nullopt;
                }
                std::uint64_t v = 0;
                if (!unsigned_of(*m, v) || v > hi)
                {
                    detail::bad_config(name, std::string("filter option \"") + k +
                                                 "\" must be an integer in [0, " + std::to_string(hi) +
                                                 "], got " + m->dump());
                }
                return static_cast<std::uint32_t>(v);
            };
            if (s.id == id_lzma1 || s.id == id_lzma2)
            {
                detail::check_keys(
                    name, f,
                    {"id", "preset", "dict_size", "lc", "lp", "pb", "mode", "nice_len", "mf", "depth"});
                if (auto p = u32("preset", UINT32_MAX))
                {
                    if ((*p & ~preset_extreme) > 9)
                    {
                        detail::bad_config(name, "filter \"preset\" must be 0..9, optionally | 2^31, got " +
                                                     std::to_string(*p));
                    }
                    s.preset = *p;
                }
                s.dict_size = u32("dict_size", UINT32_MAX);
                s.lc = u32("lc", 4);
                s.lp = u32("lp", 4);
                s.pb = u32("pb", 4);
                s.mode = u32("mode", 2);
                s.nice_len = u32("nice_len", 273);
                s.mf = u32("mf", 0x14);
                s.depth = u32("depth", UINT32_MAX);
            }
            else if (s.id == id_delta)
            {
                detail::check_keys(name, f, {"id", "dist"});
                const auto d = u32("dist", 256);
                s.dist = d.value_or(1);
                if (s.dist < 1)
                {
                    detail::bad_config(name, "delta filter \"dist\" must be in [1, 256]");
                }
            }
            else
            {
                detail::bad_config(
                    name, "filter id " + std::to_string(s.id) +
                              " is not supported (supported: 3 delta, 33 LZMA2, 4611686018427387905 LZMA1)");
            }
            c.m_chain.push_back(s);
        }
        const std::uint64_t last = c.m_chain.back().id;
        bool delta_only_before = true;
        for (std::size_t i = 0; i + 1 < c.m_chain.size(); ++i)
        {
            delta_only_before = delta_only_before && c.m_chain[i].id == id_delta;
        }
        if (!delta_only_before || (last != id_lzma1 && last != id_lzma2))
        {
            detail::bad_config(name,
                               "\"filters\" must be delta filters followed by one LZMA1 or LZMA2 filter");
        }
        if (c.format == 1 && last != id_lzma2)
        {
            detail::bad_config(name, "format 1 (.xz) needs an LZMA2 filter last");
        }
        if (c.format == 2 && (c.m_chain.size() != 1 || last != id_lzma1))
        {
            detail::bad_config(name, "format 2 (.lzma) needs exactly one LZMA1 filter");
        }
    }
    else
    {
        if (c.format == 3)
        {
            detail::bad_config(name, "format 3 (raw) needs \"filters\"");
        }
        filter_spec s;
        s.id = c.format == 2 ? id_lzma1 : id_lzma2;
        s.preset = c.preset.value_or(6);
        c.m_chain.push_back(s);
    }
#if ZARRXT_HAS_LZMA
    // liblzma validates the options (lc + lp <= 4 for LZMA2, nice_len, match finder, ...).
    lzma_chain probe;
    c.build(probe, LZMA_DICT_SIZE_MIN);
    if (lzma_raw_decoder_memusage(probe.filters.data()) == UINT64_MAX ||
        lzma_raw_encoder_memusage(probe.filters.data()) == UINT64_MAX)
    {
        detail::bad_config(name, "liblzma refuses the filter options " + c.filters.dump());
    }
#else
    throw codec_error(codec_errc::unavailable, name, "zarrxt was built without liblzma");
#endif
    return c;
}

#if ZARRXT_HAS_LZMA

inline void lzma::build(lzma_chain& c, std::uint64_t dict_cap) const
{
    std::size_t i = 0;
    for (const auto& s : m_chain)
    {
        lzma_filter& f = c.filters[i];
        f.id = s.id;
        if (s.id == id_delta)
        {
            c.delta[i] = lzma_options_delta{};
            c.delta[i].type = LZMA_DELTA_TYPE_BYTE;
            c.delta[i].dist = s.dist;
            f.options = &c.delta[i];
        }
        else
        {
            lzma_options_lzma& o = c.lz[i];
            if (lzma_lzma_preset(&o, s.preset))
            {
                detail::bad_config(name, "unsupported preset " + std::to_string(s.preset));
            }
            o.dict_size = s.dict_size.value_or(o.dict_size);
            o.lc = s.lc.value_or(o.lc);
            o.lp = s.lp.value_or(o.lp);
            o.pb = s.pb.value_or(o.pb);
            o.mode = s.mode ? static_cast<lzma_mode>(*s.mode) : o.mode;
            o.nice_len = s.nice_len.value_or(o.nice_len);
            o.mf = s.mf ? static_cast<lzma_match_finder>(*s.mf) : o.mf;
            o.depth = s.depth.value_or(o.depth);
            o.dict_size = static_cast<std::uint32_t>(std::min<std::uint64_t>(o.dict_size, dict_cap));
            f.options = &o;
        }
        ++i;
    }
    c.filters[i].id = LZMA_VLI_UNKNOWN;
    c.filters[i].options = nullptr;
}

inline void lzma::encode(byte_view in, buffer& out) const
{
    lzma_chain c;
    // The dictionary need not be larger than the chunk: clamping saves the encoder's memory
    // (preset 9 would otherwise ask for 674 MiB) and any decoder decodes the result.
    build(c, std::max<std::uint64_t>(LZMA_DICT_SIZE_MIN, in.size()));
    lzma_impl::stream_guard g;
    lzma_ret r = LZMA_OK;
    if (format == 1)
    {
        const lzma_check k = check == -1 ? LZMA_CHECK_CRC64 : static_cast<lzma_check>(check);
        r = lzma_stream_encoder(&g.s, c.filters.data(), k);
    }
    else if (format == 2)
    {
        r = lzma_alone_encoder(&g.s, &c.lz[0]);
    }
    else
    {
        r = lzma_raw_encoder(&g.s, c.filters.data());
    }
    if (r != LZMA_OK)
    {
        if (r == LZMA_MEM_ERROR)
        {
            throw std::bad_alloc();
        }
        throw codec_error(codec_errc::encode_failed, name,
                          "liblzma refused the encoder options (code " + std::to_string(static_cast<int>(r)) +
                              ")");
    }
    const bool aliased = in.data() == out.data() && !in.empty();
    buffer tmp;
    buffer& dst = aliased ? tmp : out;
    dst.resize_discard(lzma_stream_buffer_bound(in.size()));
    g.s.next_in = reinterpret_cast<const std::uint8_t*>(in.data());
    g.s.avail_in = in.size();
    std::size_t pos = 0;
    while (true)
    {
        if (pos == dst.size())
        {
            dst.resize(dst.size() * 2);
        }
        g.s.next_out = reinterpret_cast<std::uint8_t*>(dst.data() + pos);
        g.s.avail_out = dst.size() - pos;
        const std::size_t before = g.s.avail_out;
        r = lzma_code(&g.s, LZMA_FINISH);
        pos += before - g.s.avail_out;
        if (r == LZMA_STREAM_END)
        {
            break;
        }
        if (r != LZMA_OK)
        {
            if (r == LZMA_MEM_ERROR)
            {
                throw std::bad_alloc();
            }
            throw codec_error(codec_errc::encode_failed, name,
                              "lzma_code returned " + std::to_string(static_cast<int>(r)));
        }
    }
    dst.resize(pos);
    if (aliased)
    {
        out = std::move(tmp);
    }
}

inline mutable_byte_view lzma::decode(mutable_byte_view in, buffer& out, const decode_hint& hint) const
{
    zarrxt::detail::bounded_output o(out, in.size(), hint.exact, hint.max, name);
    if (format == 1)
    {
        return decode_xz(in, o);
    }
    if (format == 2)
    {
        return decode_alone(in, o);
    }
    return decode_raw(in, o);
}

inline mutable_byte_view lzma::decode_xz(mutable_byte_view in, zarrxt::detail::bounded_output& o) const
{
    const std::byte* p = in.data();
    const std::size_t n = in.size();
    std::size_t pos = 0;
    bool first = true;
    while (first || pos < n)
    {
        // Stream header.
        if (n - pos < LZMA_STREAM_HEADER_SIZE)
        {
            if (!first)
            {
                throw codec_error(codec_errc::trailing_bytes, name,
                                  std::to_string(n - pos) + " bytes follow the end of the stream");
            }
            throw codec_error(codec_errc::truncated, name,
                              "input has " + std::to_string(n) + " bytes, an .xz header needs 12");
        }
        if (!lzma_impl::is_xz_magic(p + pos, n - pos))
        {
            throw codec_error(first ? codec_errc::corrupt_stream : codec_errc::trailing_bytes, name,
                              first ? std::string("not an .xz stream (bad magic bytes)")
                                    : std::to_string(n - pos) + " bytes follow the end of the stream");
        }
        first = false;
        lzma_stream_flags header{};
        lzma_ret r = lzma_stream_header_decode(&header, reinterpret_cast<const std::uint8_t*>(p + pos));
        if (r != LZMA_OK)
        {
            lzma_impl::fail(r, "stream header");
        }
        pos += LZMA_STREAM_HEADER_SIZE;
        struct hash_guard
        {
            lzma_index_hash* h;
            ~hash_guard() { lzma_index_hash_end(h, nullptr); }
        } ih{lzma_index_hash_init(nullptr, nullptr)};
        if (ih.h == nullptr)
        {
            throw std::bad_alloc();
        }
        // Blocks, each with its dictionary clamped to the output still allowed.
        while (true)
        {
            if (pos >= n)
            {
                throw codec_error(codec_errc::truncated, name, "input ends before the stream's index");
            }
            if (p[pos] == std::byte{0})
            {
                break; // the index indicator
            }
            std::array<lzma_filter, LZMA_FILTERS_MAX + 1> filters{};
            filters[0].id = LZMA_VLI_UNKNOWN;
            struct filters_guard
            {
                lzma_filter* f;
                ~filters_guard() { lzma_filters_free(f, nullptr); }
            } fg{filters.data()};
            lzma_block block{};
            block.version = 1;
            block.check = header.check;
            block.filters = filters.data();
            block.header_size = lzma_block_header_size_decode(static_cast<std::uint8_t>(p[pos]));
            if (n - pos < block.header_size)
            {
                throw codec_error(codec_errc::truncated, name, "input ends inside a block header");
            }
            r = lzma_block_header_decode(&block, nullptr, reinterpret_cast<const std::uint8_t*>(p + pos));
            if (r != LZMA_OK)
            {
                lzma_impl::fail(r, "block header");
            }
            for (std::size_t i = 0; filters[i].id != LZMA_VLI_UNKNOWN; ++i)
            {
                if ((filters[i].id == LZMA_FILTER_LZMA2 || filters[i].id == LZMA_FILTER_LZMA1) &&
                    filters[i].options)
                {
                    auto* lz = static_cast<lzma_options_lzma*>(filters[i].options);
                    lz->dict_size = std::min(lz->dict_size, lzma_impl::dict_cap_of(o.remaining()));
                }
            }
            lzma_impl::stream_guard g;
            r = lzma_block_decoder(&g.s, &block);
            if (r != LZMA_OK)
            {
                lzma_impl::fail(r, "block");
            }
            bool ended = false;
            pos += lzma_impl::pump(g.s, p + pos + block.header_size, n - pos - block.header_size, o, true,
                                   ended) +
                   block.header_size;
            r = lzma_index_hash_append(ih.h, lzma_block_unpadded_size(&block), block.uncompressed_size);
            if (r != LZMA_OK)
            {
                lzma_impl::fail(r, "index");
            }
        }
        // Index, checked against the blocks just decoded; then the footer.
        r = lzma_index_hash_decode(ih.h, reinterpret_cast<const std::uint8_t*>(p), &pos, n);
        if (r == LZMA_OK || r == LZMA_BUF_ERROR)
        {
            throw codec_error(codec_errc::truncated, name, "input ends inside the stream's index");
        }
        if (r != LZMA_STREAM_END)
        {
            lzma_impl::fail(r, "index (it does not match the blocks)");
        }
        if (n - pos < LZMA_STREAM_HEADER_SIZE)
        {
            throw codec_error(codec_errc::truncated, name, "input ends before the stream footer");
        }
        lzma_stream_flags footer{};
        r = lzma_stream_footer_decode(&footer, reinterpret_cast<const std::uint8_t*>(p + pos));
        if (r != LZMA_OK)
        {
            lzma_impl::fail(r, "stream footer");
        }
        if (lzma_stream_flags_compare(&header, &footer) != LZMA_OK ||
            footer.backward_size != lzma_index_hash_size(ih.h))
        {
            throw codec_error(codec_errc::corrupt_stream, name,
                              "the stream footer does not match its header and index");
        }
        pos += LZMA_STREAM_HEADER_SIZE;
        // Stream padding: zero bytes in groups of four, then possibly another stream.
        while (n - pos >= 4 && p[pos] == std::byte{0} && p[pos + 1] == std::byte{0} &&
               p[pos + 2] == std::byte{0} && p[pos + 3] == std::byte{0})
        {
            pos += 4;
        }
    }
    return o.finish();
}

inline mutable_byte_view lzma::decode_alone(mutable_byte_view in, zarrxt::detail::bounded_output& o) const
{
    // Header: properties (1 byte), dictionary size (4, little-endian), decoded size (8).
    constexpr std::size_t header_size = 13;
    if (in.size() < header_size)
    {
        throw codec_error(codec_errc::truncated, name,
                          "input has " + std::to_string(in.size()) + " bytes, an .lzma header needs 13");
    }
    std::array<std::byte, header_size> header;
    std::memcpy(header.data(), in.data(), header_size);
    std::uint32_t dict = 0;
    for (int i = 3; i >= 0; --i)
    {
        dict = (dict << 8) | static_cast<std::uint32_t>(header[1 + static_cast<std::size_t>(i)]);
    }
    dict = std::min(dict, lzma_impl::dict_cap_of(o.remaining()));
    for (std::size_t i = 0; i < 4; ++i)
    {
        header[1 + i] = static_cast<std::byte>((dict >> (8 * i)) & 0xff);
    }
    lzma_impl::stream_guard g;
    lzma_ret r = lzma_alone_decoder(&g.s, UINT64_MAX);
    if (r != LZMA_OK)
    {
        lzma_impl::fail(r, "decoder");
    }
    bool ended = false;
    lzma_impl::pump(g.s, header.data(), header_size, o, false, ended);
    std::size_t used = header_size;
    if (!ended)
    {
        used += lzma_impl::pump(g.s, in.data() + header_size, in.size() - header_size, o, true, ended);
    }
    if (used != in.size())
    {
        throw codec_error(codec_errc::trailing_bytes, name,
                          std::to_string(in.size() - used) + " bytes follow the end of the stream");
    }
    return o.finish();
}

inline mutable_byte_view lzma::decode_raw(mutable_byte_view in, zarrxt::detail::bounded_output& o) const
{
    lzma_chain c;
    build(c, lzma_impl::dict_cap_of(o.remaining()));
    lzma_impl::stream_guard g;
    lzma_ret r = lzma_raw_decoder(&g.s, c.filters.data());
    if (r != LZMA_OK)
    {
        lzma_impl::fail(r, "decoder");
    }
    bool ended = false;
    const std::size_t used = lzma_impl::pump(g.s, in.data(), in.size(), o, true, ended);
    if (used != in.size())
    {
        throw codec_error(codec_errc::trailing_bytes, name,
                          std::to_string(in.size() - used) + " bytes follow the end of the stream");
    }
    return o.finish();
}

#else

inline void lzma::encode(byte_view, buffer&) const
{
    throw codec_error(codec_errc::unavailable, name, "zarrxt was built without liblzma");
}

inline mutable_byte_view lzma::decode(mutable_byte_view, buffer&, const decode_hint&) const
{
    throw codec_error(codec_errc::unavailable, name, "zarrxt was built without liblzma");
}

#endif

static_assert(bytes_to_bytes_codec<lzma>, "lzma must meet the requirements of its codec kind");

} // namespace zarrxt::codec::numcodecs
