/** @file detail/kerchunk_refs.hpp
 *  Parsing a kerchunk reference file (fsspec's ReferenceFileSystem format, versions 0 and 1) into
 *  one flat map key -> reference, for store/kerchunk.hpp. Version 1's templates and generators are
 *  expanded here, once, with a small evaluator for the `{{ ... }}` expressions: names (generator
 *  dimensions, templates), integer literals, + - * // % and parentheses, as Python computes them.
 *  Anything else jinja could do (filters, calls, `{% %}` blocks) is store.12, never a guess.
 *
 *  Declared here, defined under ZARRXT_DEFINITIONS (config.hpp): the JSON parser is compiled
 *  once in a separately compiled program, not in every unit that opens a store by URL.
 */
#pragma once

#include "../config.hpp"
#include "../error.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zarrxt::detail::kerchunk
{

enum class ref_kind : std::uint8_t
{
    inline_data, ///< the bytes are in the reference file (a string, "base64:..." or a JSON object)
    whole,       ///< [url]: the whole target object
    range,       ///< [url, offset, length]: a byte range of the target object
};

struct ref
{
    ref_kind kind = ref_kind::inline_data;
    std::uint32_t url = 0; ///< index into reference_set::urls
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    std::string data; ///< inline_data only
};

struct reference_set
{
    /// The distinct target URLs as written (templates rendered), each once; nullopt is a null URL
    /// (fsspec's default target).
    std::vector<std::optional<std::string>> urls;
    std::map<std::string, ref, std::less<>> refs;
    int version = 0;
};

struct parse_limits
{
    std::uint64_t max_refs;
    std::uint64_t max_expanded_bytes; ///< keys, inline data and URLs, after expansion
    std::uint64_t max_json_depth;
};

/// Parses `text` (a whole reference file); `what` names it in errors (their key).
ZARRXT_DECL reference_set parse_references(std::string_view text, const parse_limits& limits,
                                           std::string_view what);

/// A value an expression may name: an integer (a generator dimension) or a string (a template).
struct value
{
    bool is_int = false;
    std::int64_t i = 0;
    std::string s;
};

/// Renders one jinja string: every `{{ expression }}` replaced by its value. `lookup` answers a
/// name or returns nullptr. Throws store.12 (without key: the caller adds it).
ZARRXT_DECL std::string render(std::string_view text,
                               const std::function<const value*(std::string_view)>& lookup);

} // namespace zarrxt::detail::kerchunk

#if ZARRXT_DEFINITIONS
#include "../store/key.hpp"
#include "json.hpp"
#include "text.hpp"

#include <limits>

namespace zarrxt::detail::kerchunk
{

[[noreturn]] inline void malformed(std::string msg, std::string_view key = {})
{
    store_error e(store_errc::reference, std::move(msg));
    if (!key.empty())
    {
        e.with_key(key);
    }
    throw e;
}

/// The evaluator of one `{{ ... }}` expression: recursive descent with a depth bound (a hostile
/// "- - - - ..." or "((((...))))" stops at 64 levels, far from the stack's end).
class expression
{
public:
    expression(std::string_view text, const std::function<const value*(std::string_view)>& lookup)
        : m_text(text)
        , m_lookup(lookup)
    {
    }

    value evaluate()
    {
        value v = sum();
        skip_space();
        if (m_pos != m_text.size())
        {
            fail("unexpected \"" + std::string(m_text.substr(m_pos, 1)) + "\"");
        }
        return v;
    }

private:
    static constexpr int max_depth = 64;

    [[noreturn]] void fail(const std::string& why) const
    {
        malformed("expression \"{{" + std::string(m_text) + "}}\": " + why +
                  " (names, integers, + - * // % and parentheses are evaluated)");
    }
    void skip_space()
    {
        while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\t' ||
                                         m_text[m_pos] == '\n' || m_text[m_pos] == '\r'))
        {
            ++m_pos;
        }
    }
    bool take(std::string_view op)
    {
        skip_space();
        if (m_text.substr(m_pos, op.size()) == op)
        {
            m_pos += op.size();
            return true;
        }
        return false;
    }
    std::int64_t integer(const value& v, const char* op) const
    {
        if (!v.is_int)
        {
            fail(std::string("\"") + op + "\" needs integers, got the string \"" + v.s + "\"");
        }
        return v.i;
    }
    static value of(std::int64_t i)
    {
        value v;
        v.is_int = true;
        v.i = i;
        return v;
    }
    value sum()
    {
        value left = product();
        while (true)
        {
            if (take("+"))
            {
                const value right = product();
                std::int64_t r = 0;
                if (__builtin_add_overflow(integer(left, "+"), integer(right, "+"), &r))
                {
                    fail("integer overflow");
                }
                left = of(r);
            }
            else if (take("-"))
            {
                const value right = product();
                std::int64_t r = 0;
                if (__builtin_sub_overflow(integer(left, "-"), integer(right, "-"), &r))
                {
                    fail("integer overflow");
                }
                left = of(r);
            }
            else
            {
                return left;
            }
        }
    }
    value product()
    {
        value left = unary();
        while (true)
        {
            if (take("*"))
            {
                if (m_pos < m_text.size() && m_text[m_pos] == '*')
                {
                    fail("\"**\" is not evaluated");
                }
                const value right = unary();
                std::int64_t r = 0;
                if (__builtin_mul_overflow(integer(left, "*"), integer(right, "*"), &r))
                {
                    fail("integer overflow");
                }
                left = of(r);
            }
            else if (take("//"))
            {
                const std::int64_t a = integer(left, "//");
                const std::int64_t b = integer(unary(), "//");
                check_division(a, b);
                // Python's floor division: rounds toward minus infinity.
                std::int64_t q = a / b;
                if ((a % b != 0) && ((a < 0) != (b < 0)))
                {
                    --q;
                }
                left = of(q);
            }
            else if (take("%"))
            {
                const std::int64_t a = integer(left, "%");
                const std::int64_t b = integer(unary(), "%");
                check_division(a, b);
                // Python's modulo: the result has the divisor's sign.
                std::int64_t m = a % b;
                if (m != 0 && ((m < 0) != (b < 0)))
                {
                    m += b;
                }
                left = of(m);
            }
            else if (take("/"))
            {
                fail("\"/\" (true division) is not evaluated; \"//\" is");
            }
            else
            {
                return left;
            }
        }
    }
    void check_division(std::int64_t a, std::int64_t b) const
    {
        if (b == 0)
        {
            fail("division by zero");
        }
        if (a == std::numeric_limits<std::int64_t>::min() && b == -1)
        {
            fail("integer overflow");
        }
    }
    value unary()
    {
        if (++m_depth > max_depth)
        {
            fail("nested more than 64 levels deep");
        }
        value v;
        if (take("-"))
        {
            const std::int64_t a = integer(unary(), "-");
            if (a == std::numeric_limits<std::int64_t>::min())
            {
                fail("integer overflow");
            }
            v = of(-a);
        }
        else if (take("+"))
        {
            v = of(integer(unary(), "+"));
        }
        else
        {
            v = primary();
        }
        --m_depth;
        return v;
    }
    value primary()
    {
        skip_space();
        if (m_pos == m_text.size())
        {
            fail("ends where a value was expected");
        }
        const char c = m_text[m_pos];
        if (c == '(')
        {
            ++m_pos;
            value v = sum();
            if (!take(")"))
            {
                fail("a \"(\" is not closed");
            }
            return v;
        }
        if (c >= '0' && c <= '9')
        {
            std::uint64_t n = 0;
            while (m_pos < m_text.size() && m_text[m_pos] >= '0' && m_text[m_pos] <= '9')
            {
                if (__builtin_mul_overflow(n, 10u, &n) ||
                    __builtin_add_overflow(n, static_cast<unsigned>(m_text[m_pos] - '0'), &n))
                {
                    fail("integer overflow");
                }
                ++m_pos;
            }
            if (n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            {
                fail("integer overflow");
            }
            return of(static_cast<std::int64_t>(n));
        }
        if (c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        {
            const std::size_t start = m_pos;
            while (m_pos < m_text.size() &&
                   (m_text[m_pos] == '_' || (m_text[m_pos] >= 'a' && m_text[m_pos] <= 'z') ||
                    (m_text[m_pos] >= 'A' && m_text[m_pos] <= 'Z') ||
                    (m_text[m_pos] >= '0' && m_text[m_pos] <= '9')))
            {
                ++m_pos;
            }
            const std::string_view name = m_text.substr(start, m_pos - start);
            skip_space();
            if (m_pos < m_text.size() && (m_text[m_pos] == '(' || m_text[m_pos] == '.' ||
                                          m_text[m_pos] == '|' || m_text[m_pos] == '['))
            {
                fail("\"" + std::string(name) + std::string(1, m_text[m_pos]) +
                     "\": calls, attributes, filters and subscripts are not evaluated");
            }
            const value* v = m_lookup(name);
            if (v == nullptr)
            {
                fail("\"" + std::string(name) + "\" is neither a dimension nor a template");
            }
            return *v;
        }
        fail("unexpected \"" + std::string(1, c) + "\"");
    }

    std::string_view m_text;
    const std::function<const value*(std::string_view)>& m_lookup;
    std::size_t m_pos = 0;
    int m_depth = 0;
};

ZARRXT_DECL std::string render(std::string_view text,
                               const std::function<const value*(std::string_view)>& lookup)
{
    std::string out;
    std::size_t pos = 0;
    while (pos < text.size())
    {
        const std::size_t open = text.find('{', pos);
        if (open == std::string_view::npos || open + 1 >= text.size())
        {
            break;
        }
        const char next = text[open + 1];
        if (next == '%' || next == '#')
        {
            malformed("\"" + std::string(text) + "\": jinja statements and comments (\"{" + next +
                      "\") are not evaluated");
        }
        if (next != '{')
        {
            out.append(text.substr(pos, open + 1 - pos));
            pos = open + 1;
            continue;
        }
        const std::size_t close = text.find("}}", open + 2);
        if (close == std::string_view::npos)
        {
            malformed("\"" + std::string(text) + "\": a \"{{\" is not closed by \"}}\"");
        }
        out.append(text.substr(pos, open - pos));
        const value v = expression(text.substr(open + 2, close - open - 2), lookup).evaluate();
        out += v.is_int ? std::to_string(v.i) : v.s;
        pos = close + 2;
    }
    out.append(text.substr(pos));
    return out;
}

namespace parse_detail
{

using lookup_fn = std::function<const value*(std::string_view)>;

struct builder
{
    reference_set set;
    std::map<std::optional<std::string>, std::uint32_t> url_index;
    const parse_limits& limits;
    std::string_view what;
    std::uint64_t bytes = 0;

    void count_bytes(std::uint64_t n)
    {
        bytes += n;
        if (bytes > limits.max_expanded_bytes)
        {
            limit_exceeded e("max_expanded_bytes", bytes, limits.max_expanded_bytes);
            e.with_key(what);
            throw e;
        }
    }
    std::uint32_t url(std::optional<std::string> u)
    {
        auto it = url_index.find(u);
        if (it != url_index.end())
        {
            return it->second;
        }
        if (set.urls.size() >= std::numeric_limits<std::uint32_t>::max())
        {
            malformed("too many distinct URLs", what);
        }
        count_bytes(u ? u->size() : 0);
        const auto i = static_cast<std::uint32_t>(set.urls.size());
        set.urls.push_back(u);
        url_index.emplace(std::move(u), i);
        return i;
    }
    void add(std::string key, ref r)
    {
        try
        {
            validate_key(key);
        }
        catch (const store_error& bad)
        {
            malformed("the reference key is not a valid Zarr key: " + bad.message(), key);
        }
        if (set.refs.size() >= limits.max_refs && set.refs.find(key) == set.refs.end())
        {
            limit_exceeded e("max_refs", set.refs.size() + 1, limits.max_refs);
            e.with_key(what);
            throw e;
        }
        count_bytes(key.size() + r.data.size());
        set.refs.insert_or_assign(std::move(key), std::move(r));
    }
};

inline std::uint64_t uint_member(const json& j, std::string_view key, const char* which)
{
    if (j.is_number_unsigned() || (j.is_number_integer() && j.get<std::int64_t>() >= 0))
    {
        return j.is_number_unsigned() ? j.get<std::uint64_t>()
                                      : static_cast<std::uint64_t>(j.get<std::int64_t>());
    }
    malformed(std::string("the reference's ") + which + " must be a non-negative integer, got " + j.dump(),
              key);
}

/// One value of "refs" (or of a version 0 file).
inline void add_value(builder& b, const std::string& key, const json& v, const lookup_fn* templates)
{
    ref r;
    if (v.is_string())
    {
        const auto& s = v.get_ref<const std::string&>();
        if (s.rfind("base64:", 0) == 0)
        {
            auto decoded = base64_decode(std::string_view(s).substr(7));
            if (!decoded)
            {
                malformed("the reference's inline \"base64:\" data is not valid base64", key);
            }
            r.data = std::move(*decoded);
        }
        else
        {
            r.data = s;
        }
    }
    else if (v.is_object())
    {
        r.data = v.dump(); // a JSON document given as an object (kerchunk writes .zarray so)
    }
    else if (v.is_array() && (v.size() == 1 || v.size() == 3))
    {
        std::optional<std::string> url;
        if (v[0].is_string())
        {
            url = v[0].get<std::string>();
            if (templates != nullptr)
            {
                try
                {
                    url = render(*url, *templates);
                }
                catch (error& e)
                {
                    e.with_key(key);
                    throw;
                }
            }
            if (url->empty())
            {
                malformed("the reference's URL is empty", key);
            }
        }
        else if (!v[0].is_null())
        {
            malformed("the reference's URL must be a string or null, got " + v[0].dump(), key);
        }
        r.url = b.url(std::move(url));
        if (v.size() == 1)
        {
            r.kind = ref_kind::whole;
        }
        else
        {
            r.kind = ref_kind::range;
            r.offset = uint_member(v[1], key, "offset");
            r.length = uint_member(v[2], key, "length");
            if (r.length > std::numeric_limits<std::uint64_t>::max() - r.offset)
            {
                malformed("the reference's offset + length overflows 64 bits", key);
            }
        }
    }
    else
    {
        malformed("a reference must be a string, an object, [url] or [url, offset, length]; got " +
                      v.dump().substr(0, 200),
                  key);
    }
    b.add(key, std::move(r));
}

inline std::uint64_t rendered_uint(const std::string& text, const std::string& key, const char* which)
{
    std::size_t begin = text.find_first_not_of(" \t\n\r");
    std::size_t end = text.find_last_not_of(" \t\n\r");
    std::uint64_t n = 0;
    bool ok = begin != std::string::npos;
    if (ok && text[begin] == '+')
    {
        ++begin;
    }
    ok = ok && begin <= end;
    for (std::size_t i = begin; ok && i <= end; ++i)
    {
        ok = text[i] >= '0' && text[i] <= '9' && !__builtin_mul_overflow(n, 10u, &n) &&
             !__builtin_add_overflow(n, static_cast<unsigned>(text[i] - '0'), &n);
    }
    if (!ok)
    {
        malformed(std::string("the generator's ") + which + " renders as \"" + text.substr(0, 100) +
                      "\", not a non-negative integer",
                  key);
    }
    return n;
}

inline std::int64_t int_of(const json& j, const std::string& what)
{
    if (j.is_number_integer())
    {
        if (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
        {
            malformed(what + " is out of range: " + j.dump());
        }
        return j.get<std::int64_t>();
    }
    malformed(what + " must be an integer, got " + j.dump().substr(0, 100));
}

/// A generator dimension: the integers of Python's range(start, stop, step), or a list.
inline std::vector<std::int64_t> dimension_values(const std::string& name, const json& d,
                                                  std::uint64_t max_refs, std::string_view what)
{
    std::vector<std::int64_t> out;
    const std::string label = "generator dimension \"" + name + "\"";
    if (d.is_array())
    {
        if (d.size() > max_refs)
        {
            limit_exceeded e("max_refs", d.size(), max_refs);
            e.with_key(what);
            throw e;
        }
        for (const auto& x : d)
        {
            out.push_back(int_of(x, label + " values"));
        }
        return out;
    }
    if (!d.is_object())
    {
        malformed(label + " must be an object {start, stop, step} or a list of integers");
    }
    for (const auto& [k, v] : d.items())
    {
        if (k != "start" && k != "stop" && k != "step")
        {
            malformed(label + " has an unknown member \"" + k + "\"");
        }
    }
    if (!d.contains("stop"))
    {
        malformed(label + " needs \"stop\"");
    }
    const std::int64_t start = d.contains("start") ? int_of(d["start"], label + " \"start\"") : 0;
    const std::int64_t stop = int_of(d["stop"], label + " \"stop\"");
    const std::int64_t step = d.contains("step") ? int_of(d["step"], label + " \"step\"") : 1;
    if (step == 0)
    {
        malformed(label + " has \"step\" 0");
    }
    // The count in unsigned 64-bit arithmetic: no overflow for any 64-bit start, stop and step.
    std::uint64_t count = 0;
    if (step > 0 && stop > start)
    {
        count = (static_cast<std::uint64_t>(stop) - static_cast<std::uint64_t>(start) - 1) /
                    static_cast<std::uint64_t>(step) +
                1;
    }
    else if (step < 0 && start > stop)
    {
        const std::uint64_t mag = static_cast<std::uint64_t>(-(step + 1)) + 1;
        count = (static_cast<std::uint64_t>(start) - static_cast<std::uint64_t>(stop) - 1) / mag + 1;
    }
    if (count > max_refs)
    {
        limit_exceeded e("max_refs", count, max_refs);
        e.with_key(what);
        throw e;
    }
    out.reserve(count);
    for (std::uint64_t i = 0; i < count; ++i)
    {
        // start + i * step lies between start and stop: exact in wrapping unsigned arithmetic.
        out.push_back(static_cast<std::int64_t>(static_cast<std::uint64_t>(start) +
                                                i * static_cast<std::uint64_t>(step)));
    }
    return out;
}

inline const std::string& string_member(const json& obj, const char* name, const std::string& where)
{
    const auto it = obj.find(name);
    if (it == obj.end())
    {
        malformed(where + " needs \"" + name + "\"");
    }
    if (!it->is_string())
    {
        malformed(where + " \"" + name + "\" must be a string, got " + it->dump().substr(0, 100));
    }
    return it->get_ref<const std::string&>();
}

/// A generator's offset or length: a jinja string, or an integer written as one.
inline std::string string_or_number(const json& j, const std::string& where)
{
    if (j.is_string())
    {
        return j.get<std::string>();
    }
    if (j.is_number_unsigned() || (j.is_number_integer() && j.get<std::int64_t>() >= 0))
    {
        return j.dump();
    }
    malformed(where + " must be a string or a non-negative integer, got " + j.dump().substr(0, 100));
}

inline void expand_generator(builder& b, const json& gen, std::size_t index,
                             const std::map<std::string, value, std::less<>>& templates)
{
    const std::string where = "generator " + std::to_string(index);
    if (!gen.is_object())
    {
        malformed(where + " must be an object", b.what);
    }
    try
    {
        const std::string& key_t = string_member(gen, "key", where);
        const std::string& url_t = string_member(gen, "url", where);
        const bool has_offset = gen.contains("offset");
        if (has_offset != gen.contains("length"))
        {
            malformed(where + " needs both \"offset\" and \"length\" or neither");
        }
        const std::string offset_t = has_offset ? string_or_number(gen["offset"], where + " \"offset\"") : "";
        const std::string length_t = has_offset ? string_or_number(gen["length"], where + " \"length\"") : "";
        const auto dims_it = gen.find("dimensions");
        if (dims_it == gen.end() || !dims_it->is_object() || dims_it->empty())
        {
            malformed(where + " needs \"dimensions\", an object with at least one member");
        }
        std::vector<std::string> names;
        std::vector<std::vector<std::int64_t>> values;
        std::uint64_t total = 1;
        for (const auto& [name, d] : dims_it->items())
        {
            names.push_back(name);
            values.push_back(dimension_values(name, d, b.limits.max_refs, b.what));
            if (__builtin_mul_overflow(total, values.back().size(), &total) ||
                total > b.limits.max_refs - std::min<std::uint64_t>(b.limits.max_refs, b.set.refs.size()))
            {
                limit_exceeded e("max_refs", b.set.refs.size() + values.back().size(), b.limits.max_refs);
                e.with_key(b.what);
                throw e;
            }
        }
        if (total == 0)
        {
            return;
        }
        std::vector<value> current(names.size());
        for (auto& c : current)
        {
            c.is_int = true;
        }
        const lookup_fn lookup = [&](std::string_view name) -> const value*
        {
            for (std::size_t d = 0; d < names.size(); ++d)
            {
                if (names[d] == name)
                {
                    return &current[d];
                }
            }
            const auto it = templates.find(name);
            return it == templates.end() ? nullptr : &it->second;
        };
        // The cartesian product, the last dimension fastest (Python's itertools.product).
        std::vector<std::size_t> at(names.size(), 0);
        while (true)
        {
            for (std::size_t d = 0; d < names.size(); ++d)
            {
                current[d].i = values[d][at[d]];
            }
            std::string key = render(key_t, lookup);
            ref r;
            r.kind = has_offset ? ref_kind::range : ref_kind::whole;
            std::string url = render(url_t, lookup);
            if (url.empty())
            {
                malformed("the generated reference's URL is empty", key);
            }
            r.url = b.url(std::move(url));
            if (has_offset)
            {
                r.offset = rendered_uint(render(offset_t, lookup), key, "offset");
                r.length = rendered_uint(render(length_t, lookup), key, "length");
                if (r.length > std::numeric_limits<std::uint64_t>::max() - r.offset)
                {
                    malformed("the reference's offset + length overflows 64 bits", key);
                }
            }
            b.add(std::move(key), std::move(r));
            std::size_t d = names.size();
            while (d > 0)
            {
                --d;
                if (++at[d] < values[d].size())
                {
                    break;
                }
                at[d] = 0;
                if (d == 0)
                {
                    return;
                }
            }
        }
    }
    catch (store_error& e)
    {
        e.with_key(b.what); // a generated key, when there is one, was attached first
        throw;
    }
}

} // namespace parse_detail

ZARRXT_DECL reference_set parse_references(std::string_view text, const parse_limits& limits,
                                           std::string_view what)
{
    using namespace parse_detail;
    const std::uint64_t max_depth = limits.max_json_depth;
    auto cb = [max_depth](int depth, json::parse_event_t event, json&)
    {
        if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
            static_cast<std::uint64_t>(depth) >= max_depth)
        {
            throw limit_exceeded("max_json_depth", static_cast<std::uint64_t>(depth) + 1, max_depth);
        }
        return true;
    };
    json doc;
    try
    {
        doc = json::parse(text.begin(), text.end(), cb);
    }
    catch (limit_exceeded& e)
    {
        e.with_key(what);
        throw;
    }
    catch (const json::exception& e)
    {
        std::string msg = e.what();
        const auto pos = msg.find("] ");
        malformed("the reference file is not JSON: " + (pos == std::string::npos ? msg : msg.substr(pos + 2)),
                  what);
    }
    if (!doc.is_object())
    {
        malformed("the reference file must hold a JSON object, not " + std::string(doc.type_name()), what);
    }
    builder b{{}, {}, limits, what};
    const auto version = doc.find("version");
    if (version == doc.end())
    {
        b.set.version = 0;
        for (const auto& [k, v] : doc.items())
        {
            add_value(b, k, v, nullptr);
        }
        return std::move(b.set);
    }
    if (!version->is_number_integer() || version->get<std::int64_t>() != 1)
    {
        malformed("unknown reference file version " + version->dump().substr(0, 50) + " (0 and 1 are read)",
                  what);
    }
    b.set.version = 1;
    std::map<std::string, value, std::less<>> templates;
    if (const auto t = doc.find("templates"); t != doc.end() && !t->is_null())
    {
        if (!t->is_object())
        {
            malformed("\"templates\" must be an object", what);
        }
        for (const auto& [k, v] : t->items())
        {
            if (!v.is_string())
            {
                malformed("template \"" + k + "\" must be a string", what);
            }
            value tv;
            tv.s = v.get<std::string>();
            templates.emplace(k, std::move(tv));
        }
    }
    const lookup_fn lookup = [&](std::string_view name) -> const value*
    {
        const auto it = templates.find(name);
        return it == templates.end() ? nullptr : &it->second;
    };
    if (const auto r = doc.find("refs"); r != doc.end() && !r->is_null())
    {
        if (!r->is_object())
        {
            malformed("\"refs\" must be an object", what);
        }
        for (const auto& [k, v] : r->items())
        {
            add_value(b, k, v, &lookup);
        }
    }
    if (const auto g = doc.find("gen"); g != doc.end() && !g->is_null())
    {
        if (!g->is_array())
        {
            malformed("\"gen\" must be a list", what);
        }
        for (std::size_t i = 0; i < g->size(); ++i)
        {
            expand_generator(b, (*g)[i], i, templates);
        }
    }
    return std::move(b.set);
}

} // namespace zarrxt::detail::kerchunk
#endif
