/** @file codec/codec_spec.hpp
 *  `codec_spec`: one entry of a codec chain as metadata names it (a name and its JSON
 *  configuration). Codecs and chains are built from specs; the metadata model holds a list of them.
 *  It lives with the codecs so that codecs never depend on the metadata model.
 */
#pragma once

#include "../detail/json.hpp"

#include <concepts>
#include <string>
#include <utility>

namespace zarrxt
{

/// One entry of a codec chain as it appears in metadata: a name and its configuration.
struct codec_spec
{
    std::string name;
    json configuration = json::object();

    codec_spec() = default;
    codec_spec(std::string n, json config = json::object())
        : name(std::move(n))
        , configuration(std::move(config))
    {
    }
    /// Any codec object (codec::zstd{.level = 5}) converts to its spec.
    template <class Codec>
    requires requires(const Codec& c)
    {
        Codec::name;
        {
            c.to_json()
            } -> std::convertible_to<json>;
    }
    codec_spec(const Codec& c)
        : name(Codec::name)
        , configuration(c.to_json())
    {
    }

    json to_json() const
    {
        json j = json::object();
        j["name"] = name;
        if (!configuration.empty())
        {
            j["configuration"] = configuration;
        }
        return j;
    }

    bool operator==(const codec_spec& o) const { return name == o.name && configuration == o.configuration; }
};

} // namespace zarrxt
