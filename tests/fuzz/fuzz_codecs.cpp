// Fuzz target: every codec's decode on hostile bytes.
//
// Input: [selector] [options] [payload...]. The selector picks one bytes->bytes codec of
// single_codecs(), the bytes codec, transpose, a vlen codec, or a whole chain of chain_cases(); the
// options byte picks the hint or the geometry. Anything decoded successfully is encoded again and must decode
// to the same bytes, so a decoder that accepts garbage it cannot reproduce is caught too.
#include "fuzz_cases.hpp"

#include <cstring>

namespace
{

using namespace zxfuzz;
namespace codec = zx::codec;

constexpr std::size_t dtype_count = 14;

std::string hex_prefix(zx::byte_view b)
{
    static const char* digits = "0123456789abcdef";
    std::string s;
    for (std::size_t i = 0; i < b.size() && i < 32; ++i)
    {
        const auto v = static_cast<unsigned>(b[i]);
        s += digits[v >> 4];
        s += digits[v & 15];
    }
    return s;
}

bool same_bytes(zx::byte_view a, zx::byte_view b)
{
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

zx::buffer copy(zx::byte_view b)
{
    return zx::buffer::copy_of(b);
}

/// A bytes->bytes codec on its own: decode with or without a known size, decode_to when the
/// codec has it, then the round trip.
void fuzz_b2b(const json& spec, input& in)
{
    const std::uint8_t options = in.byte();
    std::optional<std::size_t> exact;
    if (options & 1)
    {
        exact = in.u16();
    }
    const zx::byte_view payload = in.rest();
    const zx::limit_values lv = limits();
    codec::codec_context ctx;
    ctx.limits = lv;
    const zx::codec_spec s(spec["name"].get<std::string>(), spec["configuration"]);
    auto made = codec::detail::make_builtin_codec(s, ctx);
    require(made.b2b != nullptr, "not a bytes->bytes codec: " + s.name);
    const auto& c = *made.b2b;

    zx::buffer encoded = copy(payload);
    zx::buffer out;
    zx::byte_view decoded;
    zx::buffer decoded_copy;
    const bool ok = guarded(
        [&]
        {
            decoded =
                c.decode(encoded.mutable_view(), out, {exact, static_cast<std::size_t>(lv.max_chunk_bytes)});
            require(decoded.size() <= lv.max_chunk_bytes, s.name + " decoded past the cap");
            require(!exact || decoded.size() == *exact, s.name + " decoded a size other than the exact hint");
            decoded_copy = copy(decoded);
        });
    if (exact && (options & 2))
    {
        // decode_to writes into caller memory of exactly the decoded size; it must agree with decode.
        zx::buffer again = copy(payload);
        zx::buffer dest(*exact);
        bool direct = false;
        const bool ok_to = guarded([&] { direct = c.decode_to(again.mutable_view(), dest.mutable_view()); });
        if (ok_to && direct)
        {
            require(ok, s.name + ": decode_to accepted what decode refused, input " + hex_prefix(payload));
            require(same_bytes(dest.view(), decoded_copy.view()), s.name + ": decode_to and decode disagree");
        }
    }
    if (!ok)
    {
        return;
    }
    zx::buffer reencoded;
    zx::buffer round;
    if (!guarded([&] { c.encode(decoded_copy.view(), reencoded); }))
    {
        fail(s.name + ": cannot encode what it decoded");
    }
    zx::byte_view back;
    const bool ok2 = guarded(
        [&]
        {
            back = c.decode(reencoded.mutable_view(), round,
                            {decoded_copy.size(), static_cast<std::size_t>(lv.max_chunk_bytes)});
        });
    require(ok2 && same_bytes(back, decoded_copy.view()), s.name + ": round trip of decoded bytes differs");
}

/// The bytes codec: any dtype, either byte order, a chunk of the payload's size (or one element
/// off, which must fail as a size mismatch).
void fuzz_bytes(input& in)
{
    const std::uint8_t options = in.byte();
    codec::codec_context ctx;
    ctx.limits = limits();
    ctx.dtype = static_cast<zx::dtype_id>((options & 0x3f) % dtype_count);
    const std::size_t width = ctx.element_size();
    const zx::byte_view payload = in.rest();
    std::uint64_t n = payload.size() / width;
    if (options & 0x40)
    {
        ++n;
    }
    ctx.chunk_shape = zx::dims{n};
    const json cfg = (options & 0x80) ? json{{"endian", "big"}} : json{{"endian", "little"}};
    guarded(
        [&]
        {
            auto c = codec::bytes<>::from_json(cfg, ctx);
            zx::buffer encoded = copy(payload);
            zx::buffer scratch;
            zx::byte_view decoded = c.decode(encoded.mutable_view(), scratch);
            require(decoded.size() == n * width, "bytes decoded the wrong size");
            zx::buffer back;
            zx::byte_view re = c.encode(decoded, back);
            require(same_bytes(re, payload.first(static_cast<std::size_t>(n * width))),
                    "bytes round trip differs");
        });
}

/// vlen-utf8 / vlen-bytes: a chunk of (options & 0x7f) values. What decodes is canonical, so
/// encoding the decoded values must give back the payload byte for byte; a value equal to the fill
/// must point at the fill's bytes.
void fuzz_vlen(input& in)
{
    const std::uint8_t options = in.byte();
    const bool text = (options & 0x80) != 0;
    codec::codec_context ctx;
    ctx.limits = limits();
    ctx.dtype = text ? zx::dtype_id::string : zx::dtype_id::vlen_bytes;
    ctx.chunk_shape = zx::dims{static_cast<std::uint64_t>(options & 0x7f)};
    ctx.fill = zx::parse_fill_value(json(text ? "ab" : "YWI="), ctx.dtype, 3); // "ab" either way
    const zx::byte_view payload = in.rest();
    zx::value_arena arena(ctx.limits.max_bytes_in_flight);
    auto check = [&](const auto& c)
    {
        zx::buffer encoded = copy(payload);
        zx::buffer out;
        zx::byte_view decoded;
        if (!guarded([&] { decoded = c.decode(encoded.mutable_view(), out, &arena); }))
        {
            return;
        }
        require(decoded.size() == (options & 0x7f) * sizeof(zx::vlen_element), "vlen decoded the wrong count");
        zx::vlen_element fill;
        std::memcpy(&fill, ctx.fill.data(), sizeof fill);
        for (std::size_t i = 0; i < decoded.size() / sizeof(zx::vlen_element); ++i)
        {
            zx::vlen_element e;
            std::memcpy(&e, decoded.data() + i * sizeof e, sizeof e);
            require(e.view() != fill.view() || e.data == fill.data, "a fill-equal value not at the fill's bytes");
            require(!text || !zx::detail::first_invalid_utf8(e.view()), "vlen-utf8 decoded text that is no UTF-8");
        }
        zx::buffer back;
        zx::byte_view re;
        if (!guarded([&] { re = c.encode(decoded, back); }))
        {
            fail("vlen cannot encode what it decoded");
        }
        require(same_bytes(re, payload), "vlen round trip differs, input " + hex_prefix(payload));
    };
    guarded(
        [&]
        {
            if (text)
            {
                check(codec::vlen_utf8::from_json(json::object(), ctx));
            }
            else
            {
                check(codec::vlen_bytes::from_json(json::object(), ctx));
            }
        });
}

/// transpose over a chunk of up to rank 4: decoding only permutes strides; materialising the view
/// and encoding it again must give back the payload.
void fuzz_transpose(input& in)
{
    const std::uint8_t options = in.byte();
    const std::size_t rank = 1 + options % 4;
    codec::codec_context ctx;
    ctx.limits = limits();
    ctx.dtype = static_cast<zx::dtype_id>((options >> 2) % dtype_count);
    zx::dims shape;
    for (std::size_t d = 0; d < rank; ++d)
    {
        shape.push_back(1 + in.byte() % 6);
    }
    json order = json::array();
    std::vector<std::size_t> axes(rank);
    for (std::size_t d = 0; d < rank; ++d)
    {
        axes[d] = d;
    }
    for (std::size_t d = rank; d-- > 1;)
    {
        std::swap(axes[d], axes[in.byte() % (d + 1)]);
    }
    for (auto a : axes)
    {
        order.push_back(a);
    }
    ctx.chunk_shape = shape;
    const zx::byte_view payload = in.rest();
    guarded(
        [&]
        {
            auto t = codec::transpose::from_json({{"order", order}}, ctx);
            const zx::dims enc_shape = t.encoded_shape(shape);
            codec::array_view v;
            v.element_size = ctx.element_size();
            v.shape = enc_shape;
            v.strides = codec::array_view::c_strides(enc_shape);
            const std::size_t bytes = static_cast<std::size_t>(v.elements() * v.element_size);
            if (payload.size() < bytes)
            {
                return;
            }
            zx::buffer encoded = copy(payload.first(bytes));
            v.data = encoded.data();
            zx::buffer unused;
            codec::array_view d = t.decode(v, unused);
            require(d.shape == shape, "transpose decoded the wrong shape");
            zx::buffer dense(bytes);
            zx::detail::strided_copy(dense.data(), codec::array_view::c_strides(d.shape), d.data, d.strides,
                                     d.shape, d.element_size);
            codec::array_view c;
            c.data = dense.data();
            c.element_size = d.element_size;
            c.shape = d.shape;
            c.strides = codec::array_view::c_strides(d.shape);
            zx::buffer out;
            codec::array_view e = t.encode(c, out);
            require(same_bytes({e.data, bytes}, payload.first(bytes)), "transpose round trip differs");
        });
}

/// A whole chain: decode (and decode_into where the chain allows it), then encode the decoded
/// chunk and decode it again.
void fuzz_chain(input& in)
{
    const auto& cases = chain_cases();
    const chain_case& k = cases[in.byte() % cases.size()];
    const zx::limit_values lv = limits();
    codec::codec_context ctx;
    ctx.dtype = k.dtype;
    ctx.chunk_shape = zx::dims(k.chunk_shape);
    ctx.limits = lv;
    std::vector<zx::codec_spec> specs;
    for (const auto& c : k.codecs)
    {
        specs.emplace_back(c["name"].get<std::string>(), c["configuration"]);
    }
    zx::dynamic_chain chain = zx::dynamic_chain::from_specs(specs, ctx);
    const zx::byte_view payload = in.rest();
    std::uint64_t elements = 1;
    for (auto e : k.chunk_shape)
    {
        elements *= e;
    }
    const std::size_t chunk_bytes = static_cast<std::size_t>(elements * ctx.element_size());

    codec::scratch_space scratch;
    zx::buffer encoded = copy(payload);
    zx::buffer dense(chunk_bytes);
    const bool ok = guarded(
        [&]
        {
            codec::array_view v = chain.decode(encoded.mutable_view(), scratch, lv);
            require(v.shape == ctx.chunk_shape, "chain decoded the wrong shape");
            zx::detail::strided_copy(dense.data(), codec::array_view::c_strides(v.shape), v.data, v.strides,
                                     v.shape, v.element_size);
        });
    zx::buffer direct(chunk_bytes);
    zx::buffer again = copy(payload);
    codec::scratch_space scratch2;
    bool used = false;
    const bool ok_into =
        guarded([&] { used = chain.decode_into(again.mutable_view(), direct.mutable_view(), scratch2, lv); });
    if (ok_into && used)
    {
        require(ok, "decode_into accepted what decode refused");
        require(same_bytes(direct.view(), dense.view()), "decode_into and decode disagree");
    }
    if (!ok)
    {
        return;
    }
    codec::array_view c;
    c.data = dense.data();
    c.element_size = ctx.element_size();
    c.shape = ctx.chunk_shape;
    c.strides = codec::array_view::c_strides(c.shape);
    codec::scratch_space s3;
    zx::buffer reencoded;
    if (!guarded([&] { reencoded = copy(chain.encode(c, s3)); }))
    {
        fail("chain cannot encode what it decoded");
    }
    zx::buffer round(chunk_bytes);
    codec::scratch_space s4;
    const bool ok2 = guarded(
        [&]
        {
            codec::array_view v = chain.decode(reencoded.mutable_view(), s4, lv);
            zx::detail::strided_copy(round.data(), codec::array_view::c_strides(v.shape), v.data, v.strides,
                                     v.shape, v.element_size);
        });
    require(ok2, "chain cannot decode what it encoded");
    // Lossy filters (bitround, fixedscaleoffset) round on encode: only the lossless must match.
    require(!k.lossless || same_bytes(round.view(), dense.view()), "chain round trip differs");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    input in(data, size);
    const std::uint8_t selector = in.byte();
    const auto& singles = single_codecs();
    const std::size_t choices = singles.size() + 4;
    const std::size_t pick = selector % choices;
    if (pick < singles.size())
    {
        fuzz_b2b(singles[pick], in);
    }
    else if (pick == singles.size())
    {
        fuzz_bytes(in);
    }
    else if (pick == singles.size() + 1)
    {
        fuzz_transpose(in);
    }
    else if (pick == singles.size() + 2)
    {
        fuzz_chain(in);
    }
    else
    {
        fuzz_vlen(in); // last, so that the selectors of older inputs keep their meaning
    }
    return 0;
}
