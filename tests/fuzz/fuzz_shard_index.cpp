// Fuzz target: one shard's bytes under a fixed sharding configuration (shard_cases()).
//
// Input: [case] [payload = the shard]. The index is read and validated; every entry it accepts is
// checked again here (inside the shard, clear of the index). Then the whole shard is read through
// the partial-read path, assembled from the pieces it delivers, and compared with the whole-shard
// decode: both paths must agree on every shard they both accept.
#include "fuzz_cases.hpp"

#include <cstring>

namespace
{

using namespace zxfuzz;
namespace codec = zx::codec;
using shard_codec = codec::sharding_indexed<zx::dynamic_chain, zx::dynamic_chain, zx::no_index_cache>;

/// Assembles the pieces of a shard into one C-ordered array, checking that each lies inside it.
class assembling_sink final : public zx::piece_sink
{
public:
    assembling_sink(const zx::dims& shape, std::size_t width, const zx::fill_value& fill)
        : m_shape(shape)
        , m_width(width)
        , m_fill(fill)
        , m_strides(codec::array_view::c_strides(shape))
    {
        std::uint64_t n = 1;
        for (auto e : shape)
        {
            n *= e;
        }
        m_data.resize_discard(static_cast<std::size_t>(n * width));
        std::memset(m_data.data(), 0xa5, m_data.size());
    }

    void piece(const codec::array_view& chunk, const zx::dims& origin) override
    {
        check_box(origin, chunk.shape, "piece");
        require(chunk.element_size == m_width, "piece has the wrong element size");
        zx::detail::strided_copy(at(origin), m_strides, chunk.data, chunk.strides, chunk.shape, m_width);
    }

    void fill(const zx::dims& origin, const zx::dims& extent) override
    {
        check_box(origin, extent, "fill");
        zx::detail::fill_box(at(origin), m_strides, extent, m_width, m_fill);
    }

    zx::byte_view bytes() const { return m_data.view(); }

private:
    void check_box(const zx::dims& origin, const zx::dims& extent, const char* what) const
    {
        require(origin.size() == m_shape.size() && extent.size() == m_shape.size(),
                std::string(what) + " of the wrong rank");
        for (std::size_t d = 0; d < m_shape.size(); ++d)
        {
            require(origin[d] <= m_shape[d] && extent[d] <= m_shape[d] - origin[d],
                    std::string(what) + " outside the shard");
        }
    }

    std::byte* at(const zx::dims& origin)
    {
        std::int64_t off = 0;
        for (std::size_t d = 0; d < origin.size(); ++d)
        {
            off += static_cast<std::int64_t>(origin[d]) * m_strides[d];
        }
        return m_data.data() + off * static_cast<std::int64_t>(m_width);
    }

    zx::dims m_shape;
    std::size_t m_width;
    zx::fill_value m_fill;
    zx::sdims m_strides;
    zx::buffer m_data;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    input in(data, size);
    const auto& cases = shard_cases();
    const shard_case& k = cases[in.byte() % cases.size()];
    const zx::byte_view shard = in.rest();
    const zx::limit_values lv = limits();

    codec::codec_context ctx;
    ctx.dtype = k.dtype;
    ctx.chunk_shape = zx::dims(k.shard_shape);
    ctx.limits = lv;
    ctx.fill = zx::fill_value::of(std::uint64_t{0x0102030405060708});
    const shard_codec sc = shard_codec::from_json(k.configuration, ctx);

    zx::memory_reader reader(shard, "s/c/0");
    codec::scratch_space scratch;
    zx::read_context rc;
    rc.limits = lv;
    rc.scratch = &scratch;
    zx::shard_index_ptr idx;
    if (!guarded([&] { idx = sc.read_index(reader, rc); }))
    {
        return 0;
    }
    require(idx != nullptr, "an object in memory read as missing");
    const std::uint64_t index_size = sc.index_encoded_size();
    const std::uint64_t begin = sc.index_at_end() ? 0 : index_size;
    const std::uint64_t end = sc.index_at_end() ? shard.size() - index_size : shard.size();
    for (std::size_t i = 0; i < idx->entries.size() / 2; ++i)
    {
        if (idx->is_missing(i))
        {
            continue;
        }
        const std::uint64_t off = idx->offset(i);
        const std::uint64_t n = idx->nbytes(i);
        require(off >= begin && off <= end && n <= end - off,
                "an accepted index entry lies outside the payload");
    }

    const std::size_t width = ctx.element_size();
    assembling_sink partial(ctx.chunk_shape, width, ctx.fill);
    zx::box whole{zx::dims(ctx.chunk_shape.size(), 0), ctx.chunk_shape};
    const bool ok_partial = guarded([&] { codec::read_region(sc, reader, whole, partial, rc); });
    guarded([&] { sc.verify(reader, rc); });

    zx::buffer copy = zx::buffer::copy_of(shard);
    zx::buffer out;
    zx::byte_view decoded;
    const bool ok_whole = guarded([&] { decoded = sc.decode(copy.mutable_view(), out); });
    if (ok_partial && ok_whole)
    {
        require(decoded.size() == partial.bytes().size() &&
                    std::memcmp(decoded.data(), partial.bytes().data(), decoded.size()) == 0,
                "partial read and whole-shard decode disagree");
    }
    return 0;
}
