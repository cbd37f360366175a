// A user codec for the codec_registry tests: bytes -> bytes, every byte XORed with `key` (a
// configuration member, so the written JSON shows it). Only a registry that adds it knows the name
// "test.xor", so an array written with it cannot be read without one.
#pragma once

#include <zarrxt/zarrxt.hpp>

#include <cstddef>
#include <optional>
#include <string_view>

namespace zxtest
{

struct xor_codec
{
    using codec_kind = zarrxt::codec::bytes_to_bytes_tag;
    static constexpr std::string_view name = "test.xor";
    int key = 0x5a;

    static xor_codec from_json(const zarrxt::json& cfg, const zarrxt::codec::codec_context&)
    {
        return xor_codec{cfg.value("key", 0x5a)};
    }
    zarrxt::json to_json() const { return {{"key", key}}; }
    std::optional<std::size_t> encoded_size(std::size_t n) const { return n; }
    void encode(zarrxt::byte_view in, zarrxt::buffer& out) const
    {
        zarrxt::buffer r(in.size());
        for (std::size_t i = 0; i < in.size(); ++i)
        {
            r.data()[i] = in[i] ^ static_cast<std::byte>(key);
        }
        out = std::move(r);
    }
    zarrxt::mutable_byte_view decode(zarrxt::mutable_byte_view in, zarrxt::buffer&,
                                     const zarrxt::codec::decode_hint&) const
    {
        for (auto& b : in)
        {
            b ^= static_cast<std::byte>(key);
        }
        return in;
    }
};
static_assert(zarrxt::codec::bytes_to_bytes_codec<xor_codec>);

} // namespace zxtest
