/** @file codec/transpose.hpp
 *  `transpose` (array -> array): stores the chunk with its axes permuted.
 *  Spec: https://zarr-specs.readthedocs.io/en/latest/v3/codecs/transpose/index.html
 *  Zarr v2 `order: "F"` is lowered to this codec with the reversed axis order.
 *
 *  Encoded axis j is decoded axis order[j]. Decoding never moves data: it only permutes the
 *  strides of the view, and the read kernel folds them into its copy. Encoding materialises the
 *  permuted chunk.
 */
#pragma once

#include "../detail/json_member.hpp"
#include "../detail/strided_copy.hpp"
#include "concepts.hpp"

#include <string>
#include <vector>

namespace zarrxt::codec
{

class transpose
{
public:
    using codec_kind = array_to_array_tag;
    static constexpr std::string_view name = "transpose";

    std::vector<std::size_t> order;

    static transpose from_json(const json& cfg, const codec_context& ctx);
    json to_json() const;

    dims encoded_shape(const dims& shape) const;
    array_view decode(array_view encoded, buffer& out) const;
    array_view encode(array_view decoded, buffer& out) const;

    bool is_identity() const noexcept
    {
        for (std::size_t i = 0; i < order.size(); ++i)
        {
            if (order[i] != i)
            {
                return false;
            }
        }
        return true;
    }

private:
    json m_original; // keeps legacy "C"/"F" spellings for write-back
};

/******************
 * implementation *
 ******************/

inline transpose transpose::from_json(const json& cfg, const codec_context& ctx)
{
    detail::check_keys(name, cfg, {"order"});
    const std::size_t rank = ctx.chunk_shape.size();
    auto it = cfg.find("order");
    if (it == cfg.end())
    {
        detail::bad_config(name, "\"order\" is required");
    }
    transpose t;
    t.m_original = *it;
    if (it->is_string())
    {
        // Early zarr-python 3 pre-releases wrote "C" / "F".
        if (*it != "C" && *it != "F")
        {
            detail::bad_config(name, "\"order\" must be a permutation, got " + it->dump());
        }
        for (std::size_t i = 0; i < rank; ++i)
        {
            t.order.push_back(*it == "C" ? i : rank - 1 - i);
        }
        return t;
    }
    if (!it->is_array() || it->size() != rank)
    {
        detail::bad_config(name, "\"order\" must list " + std::to_string(rank) + " axes, got " + it->dump());
    }
    std::vector<bool> seen(rank, false);
    for (const auto& a : *it)
    {
        if (!zarrxt::detail::is_nonnegative_integer(a) || a.get<std::uint64_t>() >= rank || seen[a.get<std::size_t>()])
        {
            detail::bad_config(name, "\"order\" must be a permutation of 0.." + std::to_string(rank - 1)
                                         + ", got " + it->dump());
        }
        seen[a.get<std::size_t>()] = true;
        t.order.push_back(a.get<std::size_t>());
    }
    return t;
}

inline json transpose::to_json() const
{
    if (!m_original.is_null())
    {
        return {{"order", m_original}};
    }
    return {{"order", order}};
}

inline dims transpose::encoded_shape(const dims& shape) const
{
    dims e(shape.size());
    for (std::size_t j = 0; j < order.size(); ++j)
    {
        e[j] = shape[order[j]];
    }
    return e;
}

inline array_view transpose::decode(array_view encoded, buffer&) const
{
    array_view d;
    d.data = encoded.data;
    d.element_size = encoded.element_size;
    d.shape.resize(order.size());
    d.strides.resize(order.size());
    for (std::size_t j = 0; j < order.size(); ++j)
    {
        d.shape[order[j]] = encoded.shape[j];
        d.strides[order[j]] = encoded.strides[j];
    }
    return d;
}

inline array_view transpose::encode(array_view decoded, buffer& out) const
{
    // Write the permuted array C-contiguously: view the destination in decoded axis order.
    array_view e;
    e.element_size = decoded.element_size;
    e.shape = encoded_shape(decoded.shape);
    e.strides = array_view::c_strides(e.shape);
    out.resize_discard(static_cast<std::size_t>(e.elements() * e.element_size));
    e.data = out.data();
    sdims dst_strides(order.size());
    for (std::size_t j = 0; j < order.size(); ++j)
    {
        dst_strides[order[j]] = e.strides[j];
    }
    zarrxt::detail::strided_copy(e.data, dst_strides, decoded.data, decoded.strides, decoded.shape,
                                 decoded.element_size);
    return e;
}

} // namespace zarrxt::codec
