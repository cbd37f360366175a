/** @file codec/sharding_indexed/declaration.hpp
 *  The `sharding_indexed` codec as a type: `sharding_base` (what the kernels see of any sharding
 *  codec) and the class template with its members. Its member definitions live in the other headers
 *  of this directory, one concept each; each of them includes this one, so every part compiles on
 *  its own, and codec/sharding_indexed.hpp includes them all.
 */
#pragma once

#include "../../cache/index_cache.hpp"
#include "../../kernel/io.hpp"
#include "../../zarrxt_fwd.hpp"
#include "../concepts.hpp"
#include "../partial_decode.hpp"
#include "../partial_encode.hpp"
#include "index_format.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace zarrxt
{
namespace codec
{

/// What the kernels see of a sharding codec, whatever its inner and index chain types.
class sharding_base
    : public partial_decoder
    , public partial_encoder
{
public:
    // plan_read() fetches and validates the index (through the index cache), delivers missing
    // inner chunks as fill and reads nested shards, then groups the remaining inner chunks into
    // batches of byte ranges (sorted by offset, coalesced across small gaps); read_batch()
    // fetches one batch and decodes its inner chunks. write_region() streams a new version of
    // the shard (see stream_shard).

    /// The validated index of a shard (nullptr when the shard does not exist).
    virtual shard_index_ptr read_index(range_reader& src, read_context& ctx) const = 0;

    /// Decode every inner chunk of a shard (verification).
    virtual void verify(range_reader& src, read_context& ctx) const = 0;

    virtual const dims& inner_chunk_shape() const noexcept = 0;
    virtual bool index_at_end() const noexcept = 0;
    virtual std::size_t index_encoded_size() const noexcept = 0;
    virtual json configuration() const = 0;
};

template <class InnerChain, class IndexChain, class IndexCache>
class sharding_indexed final : public sharding_base
{
public:
    using codec_kind = array_to_bytes_tag;
    using inner_chain_type = InnerChain;
    using index_chain_type = IndexChain;
    using index_cache_type = IndexCache;
    static constexpr std::string_view name = "sharding_indexed";

    static sharding_indexed from_json(const json& cfg, const codec_context& ctx);
    json to_json() const { return configuration(); }
    json configuration() const override;

    /// Whole-shard decode/encode: used when the shard is not the only codec of its chain
    /// (a transpose before it or a compressor after it) and for nested shards being rewritten.
    mutable_byte_view decode(mutable_byte_view in, buffer& out, value_arena* arena = nullptr) const;
    byte_view encode(byte_view in, buffer& out) const;

    bool plan_read(range_reader& src, const box& region, piece_sink& sink, read_context& ctx,
                   std::size_t workers, std::uint64_t budget, read_plan& plan) const override;
    bool read_batch(range_reader& src, const read_plan& plan, std::size_t b, piece_sink& sink,
                    read_context& ctx) const override;
    void write_region(object_io& io, const box& region, const box& bounds, const array_view& src,
                      write_context& ctx) const override;
    shard_index_ptr read_index(range_reader& src, read_context& ctx) const override;
    void verify(range_reader& src, read_context& ctx) const override;

    const dims& inner_chunk_shape() const noexcept override { return m_inner; }
    bool index_at_end() const noexcept override { return m_at_end; }
    std::size_t index_encoded_size() const noexcept override { return m_index_size; }
    const InnerChain& inner_chain() const noexcept { return m_inner_chain; }

    /// A shard write copies untouched inner chunks of the old shard in reads of at most this size.
    static constexpr std::uint64_t copy_window = 4u << 20;

private:
    using hit = read_plan::hit;

    /// Call `f` with the operation's index cache: as IndexCache itself (direct, inlinable calls)
    /// when this codec was compiled for the array's cache type, else through the erased reference
    /// (a codec bound at run time, IndexCache = any_index_cache). Never called without a cache.
    template <class F>
    static decltype(auto) with_cache(const index_cache_ref& ref, F&& f)
    {
        if constexpr (!std::is_same_v<IndexCache, any_index_cache>)
        {
            if (IndexCache* c = ref.template get<IndexCache>())
            {
                return f(*c);
            }
        }
        return f(ref);
    }

    shard_index_ptr fetch_index(range_reader& src, read_context& ctx, bool& from_cache) const;
    shard_index_ptr parse_index(mutable_byte_view bytes, std::uint64_t object_size, std::uint64_t generation,
                                const std::string& key) const;
    /// The index's bytes of the shard read into `out` (nullopt: no shard), under the index limit.
    std::optional<object_info> read_index_bytes(range_reader& src, read_context& ctx, buffer& out) const;
    /// The index's bytes decoded by the index chain (the view may point into `local` or `bytes`).
    array_view decode_index(mutable_byte_view bytes, scratch_space& local, std::uint64_t object_size,
                            const std::string& key) const;
    /// A decoded index (any strides) copied into a validated table in C order.
    shard_index_ptr index_from(const array_view& v, std::uint64_t object_size, std::uint64_t generation,
                               const std::string& key) const;
    /// Every entry of a decoded index (native pairs in C order) missing, or inside the shard and
    /// clear of the index; a shard_error naming the first that is not.
    void validate_index(const std::byte* entries, std::uint64_t object_size, const std::string& key) const;
    dims origin_of(std::size_t linear) const;
    bool stream_shard(object_output& out, const box& region, const box& bounds, const array_view* src,
                      range_reader* old_src, const shard_index* old, write_context& ctx) const;

    codec_context m_ctx; // the shard as an array (shape = shard shape)
    dims m_inner;        // inner chunk shape
    dims m_grid;         // inner chunks per axis
    std::size_t m_count = 0;
    bool m_at_end = true;
    std::size_t m_index_size = 0;
    std::size_t m_inner_bytes = 0;
    InnerChain m_inner_chain;
    IndexChain m_index_chain;
};

} // namespace codec
} // namespace zarrxt
