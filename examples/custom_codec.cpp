// custom_codec: a user-defined bytes->bytes codec, "example.xor", which XORs every byte with a key.
// The codec is a type with a kind tag, a name and the operations of its kind (docs/concepts/codec.md).
// A static chain names it in its type (zx::chain<zx::codec::bytes<>, xor_codec>); arrays whose
// chain is built from metadata know it through a codec_registry passed where they are opened or
// created: no global table, nothing registered at start-up, and it works inside shards too.
//   usage: custom_codec DIR
#include <zarrxt/zarrxt.hpp>

#include <iostream>

namespace zx = zarrxt;

struct xor_codec
{
    using codec_kind = zx::codec::bytes_to_bytes_tag;
    static constexpr std::string_view name = "example.xor";
    int key = 0x5a;

    static xor_codec from_json(const zx::json& cfg, const zx::codec::codec_context&)
    {
        return xor_codec{cfg.value("key", 0x5a)};
    }
    zx::json to_json() const { return {{"key", key}}; }
    std::optional<std::size_t> encoded_size(std::size_t n) const { return n; }

    void encode(zx::byte_view in, zx::buffer& out) const
    {
        zx::buffer r(in.size());
        for (std::size_t i = 0; i < in.size(); ++i)
            r.data()[i] = in[i] ^ static_cast<std::byte>(key);
        out = std::move(r);
    }
    zx::mutable_byte_view decode(zx::mutable_byte_view in, zx::buffer&, const zx::codec::decode_hint&) const
    {
        for (auto& b : in)
            b ^= static_cast<std::byte>(key); // in place
        return in;
    }
};
static_assert(zx::codec::bytes_to_bytes_codec<xor_codec>);

int main(int argc, char** argv)
{
    if (argc < 2)
        return 2;
    zx::codec_registry codecs; // a value: arrays opened without it know the built-ins only
    codecs.add<xor_codec>();
    zx::filesystem_store store(argv[1]);
    auto a = zx::create<std::uint8_t, 1>(
        store, "secret",
        zx::v3_options{.shape = {5}, .chunk_shape = {5}, .codecs = {zx::codec::bytes{}, xor_codec{}}},
        codecs);
    a.write({{0}, {5}}, xt::xtensor<std::uint8_t, 1>{1, 2, 3, 4, 5});
    const auto raw = zx::get(store, "secret/c/0");
    std::cout << "stored bytes:";
    for (std::size_t i = 0; i < raw->size(); ++i)
        std::cout << " " << std::to_integer<int>(raw->data()[i]);
    std::cout << "\nread back:";
    for (auto v : zx::open<std::uint8_t, 1>(store, "secret", codecs).read())
        std::cout << " " << int(v);
    // The same codec in a shard's inner chain.
    auto s = zx::create<std::uint8_t, 1>(
        store, "sharded",
        zx::v3_options{.shape = {8},
                       .chunk_shape = {8},
                       .codecs = {zx::sharded({4}, {zx::codec::bytes{}, xor_codec{}})}},
        codecs);
    s.write({{0}, {8}}, xt::xtensor<std::uint8_t, 1>{1, 2, 3, 4, 5, 6, 7, 8});
    std::cout << "\nsharded:";
    for (auto v : zx::open_any(store, "sharded", codecs).as<std::uint8_t, 1>().read())
        std::cout << " " << int(v);
    std::cout << "\n";
    try
    {
        zx::open<std::uint8_t, 1>(store, "secret"); // no registry: the built-ins only
    }
    catch (const zx::metadata_error& e)
    {
        std::cout << "without the registry: " << e.id() << "\n";
    }
}
