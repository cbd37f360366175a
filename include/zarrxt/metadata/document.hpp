/** @file metadata/document.hpp
 *  Reading metadata documents: size and depth checked before and while parsing, JSON errors
 *  turned into metadata_error with the byte position. Typed member access (the member named in
 *  every error) is in detail/json_member.hpp, which codec configurations use too.
 */
#pragma once

#include "../config.hpp"
#include "../detail/buffer.hpp"
#include "../detail/json.hpp"
#include "../detail/json_member.hpp"
#include "../error.hpp"
#include "../limits.hpp"

#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zarrxt
{

/// Parse a metadata document; `what` names it in errors (e.g. the key "a/zarr.json").
ZARRXT_DECL json parse_document(byte_view bytes, const limit_values& limits, std::string_view what);

/// Serialise a metadata document the way zarrxt writes them (4-space indent, trailing newline).
ZARRXT_DECL std::string dump_document(const json& doc);

#if ZARRXT_DEFINITIONS
namespace detail
{

/// `text` with the bare tokens NaN, Infinity and -Infinity outside strings replaced by the strings
/// "NaN", "Infinity" and "-Infinity" (the Zarr spelling of those fill values), or nullopt when it
/// has none. Python's json module writes the bare tokens by default (zarr-python's attributes,
/// NCZarr's fill values and attributes); they are not JSON, so this is tried only after the strict
/// parse failed.
inline bool value_start(std::string_view text, std::size_t i)
{
    while (i > 0 && std::isspace(static_cast<unsigned char>(text[i - 1])))
    {
        --i;
    }
    return i == 0 || text[i - 1] == '[' || text[i - 1] == ',' || text[i - 1] == ':';
}

inline bool value_end(std::string_view text, std::size_t i)
{
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
    {
        ++i;
    }
    return i == text.size() || text[i] == ',' || text[i] == ']' || text[i] == '}';
}

inline std::optional<std::string> quote_bare_non_finite(std::string_view text)
{
    static constexpr std::string_view tokens[] = {"-Infinity", "Infinity", "NaN"};
    std::string out;
    bool in_string = false;
    bool changed = false;
    for (std::size_t i = 0; i < text.size();)
    {
        const char c = text[i];
        if (in_string)
        {
            out += c;
            if (c == '\\' && i + 1 < text.size())
            {
                out += text[i + 1];
                i += 2;
                continue;
            }
            in_string = c != '"';
            ++i;
            continue;
        }
        if (c == '"')
        {
            in_string = true;
            out += c;
            ++i;
            continue;
        }
        bool replaced = false;
        for (const auto t : tokens)
        {
            // A whole value: after [ , : or the start, before , ] } or the end (never a key).
            const std::size_t end = i + t.size();
            if (text.substr(i, t.size()) == t && value_start(text, i) && value_end(text, end))
            {
                out += '"';
                out += t;
                out += '"';
                i = end;
                replaced = changed = true;
                break;
            }
        }
        if (!replaced)
        {
            out += c;
            ++i;
        }
    }
    if (!changed)
    {
        return std::nullopt;
    }
    return out;
}

} // namespace detail

ZARRXT_DECL json parse_document(byte_view bytes, const limit_values& limits, std::string_view what)
{
    if (bytes.size() > limits.max_metadata_bytes)
    {
        limit_exceeded e("max_metadata_bytes", bytes.size(), limits.max_metadata_bytes);
        e.with_key(what);
        throw e;
    }
    const std::uint64_t max_depth = limits.max_json_depth;
    // The callback sees each nesting level as it opens, so a deeply nested hostile document
    // is stopped before the parser recurses further.
    auto cb = [max_depth](int depth, json::parse_event_t event, json&) {
        if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start)
            && static_cast<std::uint64_t>(depth) >= max_depth)
        {
            throw limit_exceeded("max_json_depth", static_cast<std::uint64_t>(depth) + 1, max_depth);
        }
        return true;
    };
    const auto* p = reinterpret_cast<const char*>(bytes.data());
    try
    {
        return json::parse(p, p + bytes.size(), cb);
    }
    catch (limit_exceeded& e)
    {
        e.with_key(what);
        throw;
    }
    catch (const json::exception& e)
    {
        // Python's NaN, Infinity and -Infinity tokens, read as the strings Zarr spells them with.
        if (auto quoted = detail::quote_bare_non_finite(std::string_view(p, bytes.size())))
        {
            try
            {
                return json::parse(*quoted, cb);
            }
            catch (limit_exceeded& le)
            {
                le.with_key(what);
                throw;
            }
            catch (const json::exception&)
            {
                // not the only problem: report the original error below
            }
        }
        // nlohmann's message includes the byte position ("parse error at line 1, column 7: ...").
        std::string msg = e.what();
        const auto pos = msg.find("] ");
        if (pos != std::string::npos)
        {
            msg = msg.substr(pos + 2);
        }
        metadata_error err(metadata_errc::malformed_json, "malformed JSON: " + msg);
        err.with_key(what);
        throw err;
    }
}

ZARRXT_DECL std::string dump_document(const json& doc)
{
    // Non-ASCII characters are written as \u escapes: the same JSON to a UTF-8 reader, and
    // zarr-python 2 decodes metadata documents as ASCII (it fails on raw UTF-8 in .zattrs).
    return doc.dump(4, ' ', true) + "\n";
}
#endif // ZARRXT_DEFINITIONS

} // namespace zarrxt
