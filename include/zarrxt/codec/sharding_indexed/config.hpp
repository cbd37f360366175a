/** @file codec/sharding_indexed/config.hpp
 *  The sharding codec's configuration: `from_json` binds it (inner chunk shape, inner and index
 *  chains, index location, the index size checked against the limits) and `configuration` writes it
 *  back; `origin_of` is the shard geometry that follows from it. Decided once when the codec is
 *  bound, then only used by the index, read and write parts.
 */
#pragma once

#include "../../detail/checked.hpp"
#include "../../detail/json_member.hpp"
#include "../codec_spec.hpp"
#include "declaration.hpp"

#include <string>
#include <vector>

namespace zarrxt
{
namespace codec
{

namespace detail
{

inline std::vector<codec_spec> parse_codec_list(const json& j, std::string_view member)
{
    if (!j.is_array() || j.empty())
    {
        bad_config("sharding_indexed", "\"" + std::string(member) + "\" must be a non-empty array of codecs");
    }
    std::vector<codec_spec> out;
    for (const auto& c : j)
    {
        if (c.is_string())
        {
            out.emplace_back(c.get<std::string>());
        }
        else if (c.is_object() && c.contains("name") && c["name"].is_string())
        {
            json cfg = c.contains("configuration") ? c["configuration"] : json::object();
            if (!cfg.is_object())
            {
                bad_config("sharding_indexed", "codec configuration must be an object");
            }
            out.emplace_back(c["name"].get<std::string>(), std::move(cfg));
        }
        else
        {
            bad_config("sharding_indexed", "invalid codec in \"" + std::string(member) + "\": " + c.dump());
        }
    }
    return out;
}

inline json specs_to_json(const std::vector<codec_spec>& specs)
{
    json a = json::array();
    for (const auto& s : specs)
    {
        a.push_back(s.to_json());
    }
    return a;
}

} // namespace detail

template <class InnerChain, class IndexChain, class IndexCache>
sharding_indexed<InnerChain, IndexChain, IndexCache>
sharding_indexed<InnerChain, IndexChain, IndexCache>::from_json(const json& cfg, const codec_context& ctx)
{
    detail::check_keys(name, cfg, {"chunk_shape", "codecs", "index_codecs", "index_location"});
    sharding_indexed s;
    s.m_ctx = ctx;
    const std::size_t rank = ctx.chunk_shape.size();
    auto cs = cfg.find("chunk_shape");
    if (cs == cfg.end() || !cs->is_array() || cs->size() != rank)
    {
        detail::bad_config(name, "\"chunk_shape\" must list " + std::to_string(rank) + " extents");
    }
    for (std::size_t d = 0; d < rank; ++d)
    {
        const json& e = (*cs)[d];
        if (!zarrxt::detail::is_nonnegative_integer(e) || e.get<std::uint64_t>() == 0)
        {
            detail::bad_config(name, "\"chunk_shape\" extents must be positive integers, got " + cs->dump());
        }
        const auto inner = e.get<std::uint64_t>();
        if (ctx.chunk_shape[d] % inner != 0)
        {
            detail::bad_config(name, "inner chunk shape " + cs->dump() +
                                         " does not divide the shard shape on axis " + std::to_string(d));
        }
        s.m_inner.push_back(inner);
        s.m_grid.push_back(ctx.chunk_shape[d] / inner);
    }
    s.m_count = zarrxt::detail::to_size(zarrxt::detail::checked_product(s.m_grid, "inner chunks per shard"),
                                        "inner chunks per shard");
    s.m_inner_bytes = zarrxt::detail::to_size(
        zarrxt::detail::checked_mul(zarrxt::detail::checked_product(s.m_inner, "inner chunk elements"),
                                    ctx.element_size(), "inner chunk bytes"),
        "inner chunk bytes");
    if (auto loc = cfg.find("index_location"); loc != cfg.end())
    {
        if (!loc->is_string() || (*loc != "start" && *loc != "end"))
        {
            detail::bad_config(name, "\"index_location\" must be \"start\" or \"end\", got " + loc->dump());
        }
        s.m_at_end = *loc == "end";
    }
    auto codecs = cfg.find("codecs");
    if (codecs == cfg.end())
    {
        detail::bad_config(name, "\"codecs\" is required");
    }
    auto index_codecs = cfg.find("index_codecs");
    if (index_codecs == cfg.end())
    {
        detail::bad_config(name, "\"index_codecs\" is required");
    }

    codec_context inner_ctx = ctx;
    inner_ctx.chunk_shape = s.m_inner;
    s.m_inner_chain = InnerChain::from_specs(detail::parse_codec_list(*codecs, "codecs"), inner_ctx);

    codec_context index_ctx;
    index_ctx.dtype = dtype_id::uint64;
    index_ctx.chunk_shape = s.m_grid;
    index_ctx.chunk_shape.push_back(2);
    index_ctx.fill = fill_value::of(shard_index::missing);
    index_ctx.limits = ctx.limits;
    index_ctx.registry = ctx.registry; // the array's user codecs hold for the index chain too
    // The index has its own cap: check it before binding the index chain (16 bytes per entry
    // decoded), and hold the chain's codecs, whose decoded size is the index, to that cap.
    check_limit("max_shard_index_bytes", zarrxt::detail::checked_mul(s.m_count, 16, "shard index bytes"),
                ctx.limits.max_shard_index_bytes);
    index_ctx.limits.max_chunk_bytes = ctx.limits.max_shard_index_bytes;
    s.m_index_chain =
        IndexChain::from_specs(detail::parse_codec_list(*index_codecs, "index_codecs"), index_ctx);
    auto fixed = s.m_index_chain.fixed_encoded_size();
    if (!fixed)
    {
        detail::bad_config(name,
                           "\"index_codecs\" must produce a fixed size (e.g. bytes, optionally crc32c); "
                           "compressors are not allowed there");
    }
    s.m_index_size = *fixed;
    check_limit("max_shard_index_bytes", s.m_index_size, ctx.limits.max_shard_index_bytes);
    return s;
}

template <class InnerChain, class IndexChain, class IndexCache>
json sharding_indexed<InnerChain, IndexChain, IndexCache>::configuration() const
{
    // The chains as bound: defaults filled in the same way as a top-level chain's.
    json j = json::object();
    j["chunk_shape"] = m_inner.to_vector();
    j["codecs"] = detail::specs_to_json(m_inner_chain.specs());
    j["index_codecs"] = detail::specs_to_json(m_index_chain.specs());
    j["index_location"] = m_at_end ? "end" : "start";
    return j;
}

template <class InnerChain, class IndexChain, class IndexCache>
dims sharding_indexed<InnerChain, IndexChain, IndexCache>::origin_of(std::size_t linear) const
{
    dims o(m_grid.size());
    for (std::size_t d = m_grid.size(); d-- > 0;)
    {
        o[d] = (linear % m_grid[d]) * m_inner[d];
        linear /= m_grid[d];
    }
    return o;
}

} // namespace codec
} // namespace zarrxt
