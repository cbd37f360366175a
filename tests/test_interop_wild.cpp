// Interoperability with the wild writers, GDAL 3.6 and NCZarr (netCDF-C 4.9.0), in both directions.
// Every fixture is generated here, at test time, by the real tools: GDAL's gdal_translate and
// gdalmdimtranslate from rasters and netCDF files that tests/peers/gdal_peer.py makes with
// python3-gdal, and NCZarr's ncgen and nccopy from a CDL text written below. The values come from
// the shared formula of interop.hpp (never from zarrxt), go in as raw little-endian files or CDL
// numbers, and are compared bit for bit with what zarrxt reads. The other direction writes
// hierarchies with zarrxt and compares the numbers GDAL (its JSON, python3-gdal's bytes, a copy
// made by gdalmdimtranslate) and ncdump (its CDL text) report.
//
// What these tools do that the Zarr specs do not say is recorded in docs/compat.md ("GDAL" and
// "NCZarr"); the checks below pin each of those findings, so a tool update that changes one fails
// here rather than silently invalidating the page. A missing tool is a skip (ZX_SKIP_PEER: a failure
// when scripts/test installed the tools and set ZARRXT_REQUIRE_PEERS=1); a tool that
// runs and fails is a failure.
#include "interop.hpp"

#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

namespace zi = zxtest::interop;
namespace zx = zarrxt;
using zi::shape_t;
using zxtest::quote;

namespace
{

namespace fs = std::filesystem;
using store_t = zx::filesystem_store;

/*****************
 * running tools *
 *****************/

/// The programs among `names` that are not on PATH, space-separated ("" when all are).
std::string missing_programs(std::initializer_list<const char*> names)
{
    std::string missing;
    for (const char* n : names)
    {
        if (zxtest::run(std::string("command -v ") + n).status != 0)
        {
            missing += std::string(missing.empty() ? "" : " ") + n;
        }
    }
    return missing;
}

/// Why the GDAL peers cannot run here ("" when they can).
std::string gdal_missing()
{
    static const std::string why = []
    {
        std::string m = missing_programs({"gdal_translate", "gdalmdimtranslate", "gdalmdiminfo"});
        if (zxtest::debian_python().empty() ||
            zxtest::run(zxtest::debian_python() + " -c 'from osgeo import gdal'").status != 0)
        {
            m += std::string(m.empty() ? "" : " ") + "python3-gdal";
        }
        return m;
    }();
    return why;
}

std::string nczarr_missing()
{
    static const std::string why = missing_programs({"ncgen", "nccopy", "ncdump"});
    return why;
}

#define ZX_NEED_GDAL()                                                                                       \
    if (!gdal_missing().empty())                                                                             \
    ZX_SKIP_PEER("GDAL peers missing: " + gdal_missing() + " (Debian gdal-bin, python3-gdal)")
#define ZX_NEED_NCZARR()                                                                                     \
    if (!nczarr_missing().empty())                                                                           \
    ZX_SKIP_PEER("NCZarr tools missing: " + nczarr_missing() + " (Debian netcdf-bin)")

/// Run a command that must succeed; its output is returned.
std::string must_run(const std::string& cmd)
{
    const auto r = zxtest::run(cmd);
    INFO(cmd);
    REQUIRE_MESSAGE(r.status == 0, r.output);
    return r.output;
}

std::string gdal_peer(const std::string& args)
{
    return must_run(zxtest::debian_python() + " " +
                    quote(zxtest::env("ZARRXT_SOURCE_DIR") + "/tests/peers/gdal_peer.py") + " " + args);
}

/// netCDF-C's URL for a Zarr store on the file system, in "nczarr" or "zarr" mode.
std::string nc_url(const fs::path& p, const char* mode)
{
    return "file://" + fs::absolute(p).string() + "#mode=" + mode + ",file";
}

/**************************************
 * expected values (the shared formula) *
 **************************************/

/// A manifest-style entry (interop.hpp's expected_from_formula reads it): the formula of `seed`
/// in the box `written` (the whole array when null) and `fill` elsewhere.
zx::json entry(const std::string& name, zx::dtype_id dtype, const shape_t& shape, std::uint64_t seed,
               zx::json fill = nullptr, zx::json written = nullptr)
{
    return {{"name", name},       {"dtype", std::string(zx::name(dtype))},
            {"shape", shape},     {"seed", seed},
            {"fill_value", fill}, {"written", written}};
}

zx::json box(const shape_t& offset, const shape_t& extent)
{
    return {{"offset", offset}, {"extent", extent}};
}

/// `want` (little-endian elements of `from`) converted element by element to `to` (the widening
/// conversions GDAL applies: int8 to int16, bool to uint8, float16 to float32).
std::string convert_le(const std::string& want, zx::dtype_id from, zx::dtype_id to)
{
    if (from == to)
    {
        return want;
    }
    return zx::with_element_type(
        from,
        [&](auto f)
        {
            using F = typename decltype(f)::type;
            const auto values = zi::from_le<F>(want);
            const std::size_t n = want.size() / sizeof(F);
            return zx::with_element_type(
                to,
                [&](auto t)
                {
                    using T = typename decltype(t)::type;
                    std::string out;
                    if constexpr (std::is_same_v<F, zx::float16> && std::is_same_v<T, float>)
                    {
                        for (std::size_t i = 0; i < n; ++i)
                        {
                            // T, not float: a cast that does not depend on T is checked by clang 14
                            // for every F (complex too) before the branch is discarded.
                            const T v = static_cast<T>(values[i]);
                            zi::append_le(out, &v, 1);
                        }
                    }
                    else if constexpr (std::is_integral_v<F> && std::is_integral_v<T>)
                    {
                        for (std::size_t i = 0; i < n; ++i)
                        {
                            const T v = static_cast<T>(values[i]);
                            zi::append_le(out, &v, 1);
                        }
                    }
                    else
                    {
                        throw std::logic_error("no such conversion in GDAL");
                    }
                    return out;
                });
        });
}

/// Read the array at `path` of `store` with zarrxt (whole and in sub-regions) and compare with
/// `want`; returns the untyped handle for metadata checks.
zx::any_array<store_t> check_zarrxt_reads(const store_t& store, const std::string& path,
                                          const std::string& want)
{
    INFO("zarrxt reads ", path);
    auto any = zx::open_any(store, path);
    zx::visit<zx::ranks<1, 2, 3>>(any, [&](auto& a)
                                  { zi::check_typed_array(a, want, any.shape(), any.chunk_shape()); });
    return any;
}

zx::dimension_name_list names(std::initializer_list<const char*> n)
{
    zx::dimension_name_list out;
    for (const char* s : n)
    {
        out.emplace_back(s);
    }
    return out;
}

/// The fill value of an untyped array as little-endian bytes.
std::string fill_le(const zx::any_array<store_t>& a)
{
    return zi::fill_bytes(a.dtype(), zx::fill_value_to_json(a.metadata().fill, a.dtype(), 3));
}

/************
 * GDAL     *
 ************/

const char* gdal_type(zx::dtype_id d)
{
    switch (d)
    {
        case zx::dtype_id::uint8:
            return "Byte";
        case zx::dtype_id::uint16:
            return "UInt16";
        case zx::dtype_id::int16:
            return "Int16";
        case zx::dtype_id::uint32:
            return "UInt32";
        case zx::dtype_id::int32:
            return "Int32";
        case zx::dtype_id::uint64:
            return "UInt64";
        case zx::dtype_id::int64:
            return "Int64";
        case zx::dtype_id::float32:
            return "Float32";
        case zx::dtype_id::float64:
            return "Float64";
        case zx::dtype_id::complex64:
            return "CFloat32";
        case zx::dtype_id::complex128:
            return "CFloat64";
        default:
            throw std::logic_error("GDAL 3.6 has no data type for " + std::string(zx::name(d)));
    }
}

/// The dtype GDAL 3.6 reads a Zarr dtype as (it has no int8, bool or float16 data type).
zx::dtype_id gdal_reads_as(zx::dtype_id d)
{
    switch (d)
    {
        case zx::dtype_id::int8:
            return zx::dtype_id::int16;
        case zx::dtype_id::bool_:
            return zx::dtype_id::uint8;
        case zx::dtype_id::float16:
            return zx::dtype_id::float32;
        default:
            return d;
    }
}

zx::dtype_id dtype_of_gdal(const std::string& t)
{
    for (auto d : {zx::dtype_id::uint8, zx::dtype_id::uint16, zx::dtype_id::int16, zx::dtype_id::uint32,
                   zx::dtype_id::int32, zx::dtype_id::uint64, zx::dtype_id::int64, zx::dtype_id::float32,
                   zx::dtype_id::float64, zx::dtype_id::complex64, zx::dtype_id::complex128})
    {
        if (t == gdal_type(d))
        {
            return d;
        }
    }
    throw std::runtime_error("unexpected GDAL data type " + t);
}

/// A number from GDAL's JSON (numbers, or "NaN"/"Infinity"/"-Infinity" strings) as a double.
double json_double(const zx::json& j)
{
    if (j.is_string())
    {
        const auto s = j.get<std::string>();
        return s == "NaN"         ? std::nan("")
               : s == "Infinity"  ? HUGE_VAL
               : s == "-Infinity" ? -HUGE_VAL
                                  : std::stod(s);
    }
    return j.get<double>();
}

/// GDAL prints -0.0 as "-0", which JSON parsers (nlohmann's too) read as the integer 0: spell it
/// "-0.0" so the sign survives the parse.
std::string keep_negative_zero(const std::string& text)
{
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i)
    {
        const bool token = text.compare(i, 2, "-0") == 0 && i > 0 &&
                           std::string("[, :").find(text[i - 1]) != std::string::npos &&
                           i + 2 < text.size() &&
                           std::string(",] \n}").find(text[i + 2]) != std::string::npos;
        if (token)
        {
            out += "-0.0";
            ++i;
            continue;
        }
        out += text[i];
    }
    return out;
}

/// gdalmdiminfo -detailed's "values" (nested one list per axis) in C order.
void flatten_values(const zx::json& v, zx::json& out)
{
    if (v.is_array())
    {
        for (const auto& x : v)
        {
            flatten_values(x, out);
        }
        return;
    }
    out.push_back(v);
}

/// The same members with the same values, in any order (zx::json keeps and compares order).
bool same_members(const zx::json& a, const zx::json& b)
{
    if (!a.is_object() || !b.is_object() || a.size() != b.size())
    {
        return false;
    }
    for (const auto& [k, v] : b.items())
    {
        if (!a.contains(k) || a.at(k) != v)
        {
            return false;
        }
    }
    return true;
}

/// gdalmdiminfo -detailed's "values" (flattened C order) against the expected little-endian bytes
/// of `dtype`: integers exactly, floats bit for bit after GDAL's double, complex as {real, imag}.
std::string compare_gdal_values(const zx::json& nested, const std::string& want, zx::dtype_id dtype)
{
    zx::json values = zx::json::array();
    flatten_values(nested, values);
    return zx::with_element_type(
        dtype,
        [&](auto t) -> std::string
        {
            using T = typename decltype(t)::type;
            const auto expect = zi::from_le<T>(want);
            const std::size_t n = want.size() / sizeof(T);
            if (values.size() != n)
            {
                return "gdalmdiminfo printed " + std::to_string(values.size()) + " values, expected " +
                       std::to_string(n);
            }
            for (std::size_t i = 0; i < n; ++i)
            {
                const auto& v = values[i];
                bool same = false;
                if constexpr (std::is_same_v<T, std::complex<float>> ||
                              std::is_same_v<T, std::complex<double>>)
                {
                    using F = typename T::value_type;
                    const F re = static_cast<F>(json_double(v.at("real")));
                    const F im = static_cast<F>(json_double(v.at("imag")));
                    same = (std::isnan(re) ? std::isnan(expect[i].real()) : re == expect[i].real()) &&
                           (std::isnan(im) ? std::isnan(expect[i].imag()) : im == expect[i].imag());
                }
                else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
                {
                    same = v.is_number_integer() && v.get<std::int64_t>() == expect[i];
                }
                else if constexpr (std::is_integral_v<T>)
                {
                    same = v.is_number_integer() &&
                           v.get<std::uint64_t>() == static_cast<std::uint64_t>(expect[i]);
                }
                else if constexpr (std::is_same_v<T, zx::float16>)
                {
                    return "GDAL has no float16";
                }
                else
                {
                    const T got = static_cast<T>(json_double(v));
                    same = std::isnan(got) ? std::isnan(expect[i])
                                           : got == expect[i] && std::signbit(got) == std::signbit(expect[i]);
                }
                if (!same)
                {
                    return "value [" + std::to_string(i) + "] is " + v.dump();
                }
            }
            return {};
        });
}

/**********
 * NCZarr *
 **********/

/// A number written in CDL so that ncgen stores exactly `v` (floats with 9 and 17 significant
/// digits, which round-trip; NaN and the infinities by name).
template <class T>
std::string cdl_number(T v)
{
    if constexpr (std::is_floating_point_v<T>)
    {
        const char* suffix = sizeof(T) == 4 ? "f" : "";
        if (std::isnan(v))
        {
            return std::string("NaN") + suffix;
        }
        if (std::isinf(v))
        {
            return std::string(v > 0 ? "Infinity" : "-Infinity") + suffix;
        }
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.*g", sizeof(T) == 4 ? 9 : 17, static_cast<double>(v));
        std::string s = buf;
        if (s.find_first_of(".e") == std::string::npos)
        {
            s += ".";
        }
        return s + suffix;
    }
    else
    {
        return std::to_string(v);
    }
}

const char* cdl_type(zx::dtype_id d)
{
    switch (d)
    {
        case zx::dtype_id::int8:
            return "byte";
        case zx::dtype_id::uint8:
            return "ubyte";
        case zx::dtype_id::int16:
            return "short";
        case zx::dtype_id::uint16:
            return "ushort";
        case zx::dtype_id::int32:
            return "int";
        case zx::dtype_id::uint32:
            return "uint";
        case zx::dtype_id::int64:
            return "int64";
        case zx::dtype_id::uint64:
            return "uint64";
        case zx::dtype_id::float32:
            return "float";
        case zx::dtype_id::float64:
            return "double";
        default:
            throw std::logic_error("netCDF has no type for " + std::string(zx::name(d)));
    }
}

/// Little-endian elements as a CDL data list.
std::string cdl_values(const std::string& le, zx::dtype_id d)
{
    return zx::with_element_type(d,
                                 [&](auto t)
                                 {
                                     using T = typename decltype(t)::type;
                                     std::string out;
                                     if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
                                     {
                                         const auto v = zi::from_le<T>(le);
                                         for (std::size_t i = 0; i < le.size() / sizeof(T); ++i)
                                         {
                                             out += (i ? ", " : "") + cdl_number(v[i]);
                                         }
                                     }
                                     else
                                     {
                                         throw std::logic_error("not a netCDF number type");
                                     }
                                     return out;
                                 });
}

/// What ncdump printed, by group path ("" for the root, "sub" for group sub).
struct nc_var
{
    std::string type;
    std::vector<std::string> dims;
    std::map<std::string, std::vector<std::string>> attributes; ///< raw CDL tokens
    std::vector<std::string> values;                            ///< raw CDL tokens
};
struct nc_group
{
    std::map<std::string, std::uint64_t> dims;
    std::map<std::string, std::vector<std::string>> attributes;
    std::map<std::string, nc_var> vars;
};

std::string trim(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t\r\n");
    const auto e = s.find_last_not_of(" \t\r\n");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// Comma-separated CDL tokens (strings stay quoted).
std::vector<std::string> split_tokens(const std::string& s)
{
    std::vector<std::string> out;
    std::string cur;
    bool in_string = false;
    for (std::size_t i = 0; i < s.size(); ++i)
    {
        const char c = s[i];
        if (in_string && c == '\\' && i + 1 < s.size())
        {
            cur += c;
            cur += s[++i];
            continue;
        }
        if (c == '"')
        {
            in_string = !in_string;
        }
        if (c == ',' && !in_string)
        {
            out.push_back(trim(cur));
            cur.clear();
            continue;
        }
        cur += c;
    }
    if (!trim(cur).empty())
    {
        out.push_back(trim(cur));
    }
    return out;
}

std::map<std::string, nc_group> parse_ncdump(const std::string& text)
{
    std::map<std::string, nc_group> groups;
    std::vector<std::string> path;
    auto group_name = [&]
    {
        std::string p;
        for (const auto& s : path)
        {
            p += (p.empty() ? "" : "/") + s;
        }
        return p;
    };
    std::string section;
    std::istringstream in(text);
    std::string line;
    std::string pending; // a data statement spanning lines
    groups[""];
    while (std::getline(in, line))
    {
        const std::string t = trim(line);
        if (!pending.empty())
        {
            pending += " " + t;
            if (!t.empty() && t.back() == ';')
            {
                const auto eq = pending.find('=');
                const std::string name = trim(pending.substr(0, eq));
                std::string vals = trim(pending.substr(eq + 1));
                vals.pop_back();
                groups[group_name()].vars[name].values = split_tokens(vals);
                pending.clear();
            }
            continue;
        }
        if (t.empty() || t.rfind("netcdf ", 0) == 0 || t.rfind("// global", 0) == 0 ||
            t.rfind("// group attributes", 0) == 0)
        {
            continue;
        }
        if (t.rfind("group: ", 0) == 0)
        {
            path.push_back(trim(t.substr(7, t.find('{') - 7)));
            groups[group_name()];
            section.clear();
            continue;
        }
        if (t[0] == '}')
        {
            if (!path.empty())
            {
                path.pop_back();
            }
            continue;
        }
        if (t == "dimensions:" || t == "variables:" || t == "data:" || t == "types:")
        {
            section = t;
            continue;
        }
        auto& g = groups[group_name()];
        if (section == "dimensions:")
        {
            const auto eq = t.find('=');
            std::string size = trim(t.substr(eq + 1, t.find(';') - eq - 1));
            g.dims[trim(t.substr(0, eq))] = std::stoull(size.substr(0, size.find(' ')));
        }
        else if (section == "variables:")
        {
            const auto colon = t.find(':');
            const auto eq = t.find('=');
            if (colon != std::string::npos && eq != std::string::npos && colon < eq)
            {
                const std::string owner = t.substr(0, colon);
                const std::string name = trim(t.substr(colon + 1, eq - colon - 1));
                std::string vals = trim(t.substr(eq + 1));
                vals.pop_back(); // ';'
                auto& attrs = owner.empty() ? g.attributes : g.vars[owner].attributes;
                attrs[name] = split_tokens(vals);
            }
            else
            {
                const auto sp = t.find(' ');
                const std::string type = t.substr(0, sp);
                std::string rest = trim(t.substr(sp + 1));
                rest.pop_back(); // ';'
                const auto paren = rest.find('(');
                nc_var& v = g.vars[trim(rest.substr(0, paren))];
                v.type = type;
                if (paren != std::string::npos)
                {
                    for (auto& d : split_tokens(rest.substr(paren + 1, rest.find(')') - paren - 1)))
                    {
                        v.dims.push_back(d);
                    }
                }
            }
        }
        else if (section == "data:" && t.find('=') != std::string::npos)
        {
            pending = t;
            if (t.back() == ';')
            {
                const auto eq = t.find('=');
                std::string vals = trim(t.substr(eq + 1));
                vals.pop_back();
                g.vars[trim(t.substr(0, eq))].values = split_tokens(vals);
                pending.clear();
            }
        }
    }
    return groups;
}

/// A CDL number token (with or without its type suffix) as T.
template <class T>
T cdl_parse(std::string tok)
{
    const bool neg = !tok.empty() && tok[0] == '-';
    const std::string body = neg ? tok.substr(1) : tok;
    if constexpr (std::is_floating_point_v<T>)
    {
        if (body.rfind("NaN", 0) == 0)
        {
            return std::numeric_limits<T>::quiet_NaN();
        }
        if (body.rfind("Infinity", 0) == 0)
        {
            return neg ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
        }
    }
    while (!tok.empty() && std::isalpha(static_cast<unsigned char>(tok.back())) && tok.back() != 'e' &&
           tok.back() != 'E')
    {
        tok.pop_back();
    }
    if constexpr (std::is_same_v<T, float>)
    {
        return std::strtof(tok.c_str(), nullptr);
    }
    else if constexpr (std::is_same_v<T, double>)
    {
        return std::strtod(tok.c_str(), nullptr);
    }
    else if constexpr (std::is_signed_v<T>)
    {
        return static_cast<T>(std::strtoll(tok.c_str(), nullptr, 10));
    }
    else
    {
        return static_cast<T>(std::strtoull(tok.c_str(), nullptr, 10));
    }
}

/// ncdump's data tokens of one variable as little-endian bytes of `d` ("_" is `fill`).
std::string ncdump_le(const std::vector<std::string>& tokens, zx::dtype_id d, const std::string& fill)
{
    return zx::with_element_type(d,
                                 [&](auto t)
                                 {
                                     using T = typename decltype(t)::type;
                                     std::string out;
                                     if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
                                     {
                                         for (const auto& tok : tokens)
                                         {
                                             if (tok == "_")
                                             {
                                                 out += fill;
                                                 continue;
                                             }
                                             const T v = cdl_parse<T>(tok);
                                             zi::append_le(out, &v, 1);
                                         }
                                     }
                                     return out;
                                 });
}

/// The default quiet NaN comparison: ncdump prints every NaN as "NaN", so the parsed NaN is the
/// default one; the expected bytes of the formula use the default NaN too.
std::string compare_le(const std::string& got, const std::string& want, zx::dtype_id d)
{
    return zi::describe_difference(got, want, zx::info(d).size);
}

/***********************************************
 * the hierarchy zarrxt writes for both peers *
 ***********************************************/

struct written_array
{
    zx::json entry; ///< name (path in the hierarchy), dtype, shape, seed, fill_value, written
    zx::v2_options v2;
    zx::dimension_name_list dims;
};

/// Arrays of every dtype `dtypes` lists over dimensions y (6) and x (5), with coordinate arrays y
/// and x, a partly written array with a fill value, and a group "sub" with its own dimension t.
/// `compressed`: vary compressor, order, byte order and key separator (GDAL reads them all;
/// Debian's NCZarr reads none of them correctly, see docs/compat.md).
std::vector<written_array> zarrxt_hierarchy(const std::vector<zx::dtype_id>& dtypes, bool compressed)
{
    std::vector<written_array> out;
    const std::vector<std::optional<zx::codec_spec>> compressors = {
        std::nullopt,
        zx::codec_spec("gzip", {{"level", 5}}),
        zx::codec_spec("zlib", {{"level", 1}}),
        zx::codec_spec("zstd", {{"level", 3}}),
#if ZARRXT_HAS_BLOSC
        zx::codec_spec("blosc", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}}),
#endif
    };
    std::uint64_t seed = 40;
    auto add = [&](const std::string& name, zx::dtype_id d, shape_t shape, shape_t chunks,
                   zx::dimension_name_list dims, zx::json fill = nullptr, zx::json written = nullptr)
    {
        written_array w;
        w.entry = entry(name, d, shape, seed++, fill, written);
        w.v2.shape = shape;
        w.v2.chunks = chunks;
        w.v2.compressor = std::nullopt;
        w.v2.dimension_names = dims;
        w.v2.null_fill_value = fill.is_null();
        if (!fill.is_null())
        {
            w.v2.fill_value = zx::scalar::from_json(fill);
        }
        w.v2.attributes = {{"long_name", "array " + name}, {"seed", w.entry["seed"]}};
        if (compressed)
        {
            const std::size_t i = out.size();
            w.v2.compressor = compressors[i % compressors.size()];
            w.v2.order = i % 3 == 1 && shape.size() > 1 ? 'F' : 'C';
            w.v2.big_endian = i % 4 == 2 && zx::info(d).size > 1;
            w.v2.dimension_separator = i % 5 == 3 ? '/' : '.';
        }
        w.dims = std::move(dims);
        out.push_back(std::move(w));
    };
    for (auto d : dtypes)
    {
        // "v_": CDL spells some dtype names as keywords (int64, uint64).
        add("v_" + std::string(zx::name(d)), d, {6, 5}, {4, 3}, names({"y", "x"}));
    }
    add("y", zx::dtype_id::float64, {6}, {6}, names({"y"}));
    add("x", zx::dtype_id::float64, {5}, {5}, names({"x"}));
    // Written only in part: the rest reads as the fill value.
    add("partial", zx::dtype_id::int16, {6, 5}, {3, 3}, names({"y", "x"}), -9, box({0, 0}, {3, 4}));
    add("sub/v", zx::dtype_id::float32, {4, 5}, {2, 5}, names({"t", "x"}), -2.5, box({0, 0}, {2, 5}));
    add("sub/t", zx::dtype_id::int32, {4}, {4}, names({"t"}));
    return out;
}

/// Write the hierarchy: root group attributes, group "sub" with attributes, every array.
void write_hierarchy(const fs::path& root, const std::vector<written_array>& arrays, int zarr_format)
{
    store_t store{root.string()};
    zx::group<store_t>::create(store, "",
                               zx::group_options{.zarr_format = zarr_format,
                                                 .attributes = {{"title", "written by zarrxt"},
                                                                {"version", 3},
                                                                {"ratio", 0.25},
                                                                {"levels", {1, 2, 3}}}});
    zx::group<store_t>::create(
        store, "sub", zx::group_options{.zarr_format = zarr_format, .attributes = {{"where", "in sub"}}});
    for (const auto& w : arrays)
    {
        if (zarr_format == 2)
        {
            zi::create_with_formula(store, w.entry["name"].get<std::string>(), w.v2, w.entry);
        }
        else
        {
            zx::v3_options o;
            o.shape = w.v2.shape;
            o.chunk_shape = w.v2.chunks;
            o.dimension_names = w.dims;
            o.attributes = w.v2.attributes;
            if (!w.entry["fill_value"].is_null())
            {
                o.fill_value = w.v2.fill_value;
            }
            zi::create_with_formula(store, w.entry["name"].get<std::string>(), o, w.entry);
        }
    }
}

} // namespace

TEST_SUITE("interop")
{
    /************************
     * GDAL -> zarrxt        *
     ************************/

    TEST_CASE(
        "GDAL gdal_translate -of Zarr (v2): rasters of every GDAL type and creation options, read by zarrxt")
    {
        ZX_NEED_GDAL();
        zxtest::temp_dir dir("zarrxt-gdal-raster");
        const shape_t shape = {9, 11}; // rows (Y), columns (X)
        const std::vector<double> gt = {100.0, 10.0, 0.0, 500.0, 0.0, -10.0};

        // The rasters: the formula per band; where a raster has nodata, the box [0,4)x[0,5) holds
        // it (GDAL then stores no chunk there when a chunk is exactly that box).
        struct raster
        {
            std::string file;
            zx::dtype_id dtype;
            std::vector<std::uint64_t> seeds; // one per band
            zx::json nodata;
            bool georeferenced;
        };
        const std::vector<raster> rasters = {
            {"int16", zx::dtype_id::int16, {1}, -7, true},
            {"uint8", zx::dtype_id::uint8, {2}, 255, false},
            {"uint16", zx::dtype_id::uint16, {3}, nullptr, false},
            {"int32", zx::dtype_id::int32, {4}, -1, false},
            {"uint32", zx::dtype_id::uint32, {5}, nullptr, false},
            {"int64", zx::dtype_id::int64, {6}, nullptr, false},
            {"uint64", zx::dtype_id::uint64, {7}, nullptr, false},
            {"float32", zx::dtype_id::float32, {8}, "NaN", false},
            {"float64", zx::dtype_id::float64, {9, 10}, -9999.5, true},
            {"complex64", zx::dtype_id::complex64, {11}, nullptr, false},
            {"complex128", zx::dtype_id::complex128, {12}, nullptr, false},
        };
        zx::json spec = {{"rasters", zx::json::array()}};
        std::map<std::string, std::vector<std::string>> band_values; // raster -> expected bytes per band
        for (const auto& r : rasters)
        {
            zx::json bands = zx::json::array();
            for (std::size_t b = 0; b < r.seeds.size(); ++b)
            {
                std::string values = zi::formula_bytes(r.dtype, zi::product(shape), r.seeds[b]);
                if (!r.nodata.is_null())
                {
                    const std::string one = zi::fill_bytes(r.dtype, r.nodata);
                    std::string all;
                    for (std::uint64_t i = 0; i < zi::product(shape); ++i)
                    {
                        all += one;
                    }
                    zi::paste_box(values, all, shape, one.size(), {0, 0}, {4, 5});
                }
                const std::string file = r.file + "_b" + std::to_string(b + 1) + ".bin";
                zxtest::write_file(dir.path() / file, values);
                band_values[r.file].push_back(values);
                bands.push_back({{"data", file}, {"nodata", r.nodata}});
            }
            zx::json one = {{"path", r.file + ".tif"},
                            {"type", gdal_type(r.dtype)},
                            {"width", shape[1]},
                            {"height", shape[0]},
                            {"bands", bands}};
            if (r.georeferenced)
            {
                one["geotransform"] = gt;
                one["epsg"] = 32631;
            }
            spec["rasters"].push_back(one);
        }
        zxtest::write_file(dir.path() / "rasters.json", spec.dump());
        gdal_peer("rasters " + quote((dir.path() / "rasters.json").string()));

        struct run
        {
            std::string raster;
            std::string options; // gdal_translate creation options
            std::string codec;   // the compressor zarrxt must see ("" for none)
            shape_t chunks;      // the chunk shape zarrxt must see
            char order = 'C';
        };
        std::vector<run> runs = {
            {"int16", "", "", {9, 11}},
            {"int16", "-co COMPRESS=GZIP -co GZIP_LEVEL=6 -co BLOCKSIZE=4,5", "gzip", {4, 5}},
            {"int16", "-co COMPRESS=ZSTD -co ZSTD_LEVEL=3 -co BLOCKSIZE=3,4", "zstd", {3, 4}},
            {"int16", "-co COMPRESS=ZLIB -co ZLIB_LEVEL=1 -co BLOCKSIZE=4,5", "numcodecs.zlib", {4, 5}},
            {"int16", "-co CHUNK_MEMORY_LAYOUT=F -co BLOCKSIZE=4,5", "", {4, 5}, 'F'},
            {"int16", "-co DIM_SEPARATOR=/ -co BLOCKSIZE=4,5", "", {4, 5}},
            {"int16", "-co FILTER=DELTA -co 'DELTA_DTYPE=<i2' -co BLOCKSIZE=4,5", "", {4, 5}},
        };
#if ZARRXT_HAS_LZMA
        runs.push_back({"int16", "-co COMPRESS=LZMA -co BLOCKSIZE=4,5", "numcodecs.lzma", {4, 5}});
#endif
#if ZARRXT_HAS_LZ4
        runs.push_back({"int16", "-co COMPRESS=LZ4 -co BLOCKSIZE=2,11", "numcodecs.lz4", {2, 11}});
#endif
#if ZARRXT_HAS_BLOSC
        runs.push_back({"int16",
                        "-co COMPRESS=BLOSC -co BLOSC_CNAME=zstd -co BLOSC_SHUFFLE=BIT -co BLOSC_CLEVEL=3 "
                        "-co BLOCKSIZE=4,4",
                        "blosc",
                        {4, 4}});
#endif
        for (const auto& r : rasters)
        {
            if (r.file != "int16")
            {
                runs.push_back({r.file, "-co COMPRESS=ZSTD -co BLOCKSIZE=4,5", "zstd", {4, 5}});
            }
        }
        int n = 0;
        for (const auto& run : runs)
        {
            CAPTURE(run.raster);
            CAPTURE(run.options);
            const raster& r = *std::find_if(rasters.begin(), rasters.end(),
                                            [&](const raster& x) { return x.file == run.raster; });
            const fs::path out = dir.path() / ("out" + std::to_string(n++) + ".zarr");
            must_run("gdal_translate -q -of Zarr -co ARRAY_NAME=data " + run.options + " " +
                     quote((dir.path() / (r.file + ".tif")).string()) + " " + quote(out.string()));
            store_t store{out.string()};
            const auto root = zx::group<store_t>::open(store, "");
            std::set<std::string> children;
            for (const auto& c : root.children())
            {
                children.insert(c.name);
            }
            const std::size_t bands = r.seeds.size();
            for (std::size_t b = 0; b < bands; ++b)
            {
                // One band: "data"; several: "data_band1", ... (GDAL's naming).
                const std::string name = bands == 1 ? "data" : "data_band" + std::to_string(b + 1);
                CAPTURE(name);
                REQUIRE(children.count(name) == 1);
                try
                {
                    const auto a = check_zarrxt_reads(store, name, band_values[r.file][b]);
                    CHECK(a.dtype() == r.dtype);
                    CHECK(a.shape() == shape);
                    CHECK(a.chunk_shape() == run.chunks);
                    const auto codecs = a.codecs();
                    CHECK(codecs.back().name == (run.codec.empty() ? std::string("bytes") : run.codec));
                    CHECK((codecs.front().name == "transpose") == (run.order == 'F'));
                    if (r.nodata.is_null())
                    {
                        CHECK(a.metadata().fill.is_null); // GDAL writes null without nodata
                    }
                    else
                    {
                        CHECK(zi::hex(fill_le(a)) == zi::hex(zi::fill_bytes(r.dtype, r.nodata)));
                    }
                    if (r.georeferenced)
                    {
                        // _ARRAY_DIMENSIONS ["Y", "X"], lifted out of the attributes; GDAL's _CRS stays.
                        CHECK(a.dimension_names() == names({"Y", "X"}));
                        CHECK_FALSE(a.metadata().attributes.contains("_ARRAY_DIMENSIONS"));
                        const auto& crs = a.metadata().attributes.at("_CRS");
                        CHECK(crs.at("url").get<std::string>().find("EPSG/0/32631") != std::string::npos);
                        CHECK(crs.at("wkt").get<std::string>().find("UTM zone 31N") != std::string::npos);
                    }
                    else
                    {
                        CHECK_FALSE(a.dimension_names().has_value());
                    }
                }
                catch (const zx::error& e)
                {
                    FAIL_CHECK("zarrxt refused GDAL's array: " << std::string(e.what()));
                }
            }
            if (r.georeferenced)
            {
                // The coordinate arrays: pixel centres of the geotransform, named after themselves.
                std::string x, y;
                for (std::uint64_t i = 0; i < shape[1]; ++i)
                {
                    const double v = gt[0] + (static_cast<double>(i) + 0.5) * gt[1];
                    zi::append_le(x, &v, 1);
                }
                for (std::uint64_t j = 0; j < shape[0]; ++j)
                {
                    const double v = gt[3] + (static_cast<double>(j) + 0.5) * gt[5];
                    zi::append_le(y, &v, 1);
                }
                CHECK(check_zarrxt_reads(store, "X", x).dimension_names() == names({"X"}));
                CHECK(check_zarrxt_reads(store, "Y", y).dimension_names() == names({"Y"}));
            }
        }

    }

    TEST_CASE(
        "GDAL gdalmdimtranslate -of Zarr (v2): groups, dimensions, attributes and fill values read by zarrxt")
    {
        ZX_NEED_GDAL();
        zxtest::temp_dir dir("zarrxt-gdal-mdim");
        // A netCDF-4 hierarchy made with GDAL's multidimensional API: every dimension of the root
        // has a coordinate array; the group's dimension t has none.
        struct arr
        {
            std::string path;
            zx::dtype_id dtype;
            std::vector<std::string> dims;
            std::uint64_t seed;
            zx::json nodata;
            shape_t blocksize;
        };
        const std::map<std::string, std::uint64_t> dim_size = {{"time", 3}, {"y", 5}, {"x", 6}, {"t", 4}};
        const std::vector<arr> arrays = {
            {"time", zx::dtype_id::float64, {"time"}, 20, nullptr, {}},
            {"y", zx::dtype_id::float64, {"y"}, 21, nullptr, {}},
            {"x", zx::dtype_id::float64, {"x"}, 22, nullptr, {}},
            {"temp", zx::dtype_id::float32, {"time", "y", "x"}, 23, -99.5, {2, 3, 4}},
            {"counts", zx::dtype_id::int32, {"y", "x"}, 24, -1, {}},
            {"big", zx::dtype_id::int64, {"y"}, 25, nullptr, {}},
            {"ubig", zx::dtype_id::uint64, {"x"}, 26, nullptr, {}},
            {"bytes", zx::dtype_id::uint8, {"y", "x"}, 27, nullptr, {}},
            {"sub/v", zx::dtype_id::uint16, {"t", "x"}, 28, 7, {}},
            {"sub/w", zx::dtype_id::float64, {"t"}, 29, nullptr, {}},
        };
        auto shape_of = [&](const arr& a)
        {
            shape_t s;
            for (const auto& d : a.dims)
            {
                s.push_back(dim_size.at(d));
            }
            return s;
        };
        zx::json root = {{"attributes", {{"title", "wild mdim"}, {"count", 3}, {"scales", {0.5, 2.5}}}},
                         {"dimensions", zx::json::array()},
                         {"arrays", zx::json::array()},
                         {"groups",
                          {{"sub",
                            {{"attributes", {{"where", "in sub"}}},
                             {"dimensions", {{{"name", "t"}, {"size", 4}}}},
                             {"arrays", zx::json::array()}}}}}};
        for (const char* d : {"time", "y", "x"})
        {
            root["dimensions"].push_back({{"name", d}, {"size", dim_size.at(d)}});
        }
        std::map<std::string, std::string> want;
        for (const auto& a : arrays)
        {
            const std::string file = std::to_string(a.seed) + ".bin";
            want[a.path] = zi::formula_bytes(a.dtype, zi::product(shape_of(a)), a.seed);
            zxtest::write_file(dir.path() / file, want[a.path]);
            const bool in_sub = a.path.rfind("sub/", 0) == 0;
            zx::json j = {{"name", in_sub ? a.path.substr(4) : a.path},
                          {"type", gdal_type(a.dtype)},
                          {"dimensions", a.dims},
                          {"data", file},
                          {"nodata", a.nodata},
                          {"attributes", {{"long_name", "array " + a.path}}}};
            if (!a.blocksize.empty())
            {
                j["blocksize"] = a.blocksize;
            }
            if (a.path == "temp")
            {
                j["unit"] = "K";
            }
            (in_sub ? root["groups"]["sub"]["arrays"] : root["arrays"]).push_back(j);
        }
        zxtest::write_file(dir.path() / "mdim.json", root.dump());
        const fs::path src = dir.path() / "src.nc";
        gdal_peer("mdim " + quote((dir.path() / "mdim.json").string()) + " " + quote(src.string()));

        const fs::path out = dir.path() / "gzip.zarr";
        must_run("gdalmdimtranslate -q -of Zarr -co FORMAT=ZARR_V2 -co ARRAY:COMPRESS=GZIP " +
                 quote(src.string()) + " " + quote(out.string()));
        store_t store{out.string()};
        const auto g = zx::group<store_t>::open(store, "");
        CHECK(g.zarr_format() == 2);
        CHECK(g.attributes().at("title") == "wild mdim");
        CHECK(g.attributes().at("count") == 3);
        CHECK(g.attributes().at("scales") == zx::json({0.5, 2.5}));
        std::set<std::string> children;
        for (const auto& c : g.children())
        {
            children.insert(c.name + (c.kind == zx::node_kind::group ? "/" : ""));
        }
        CHECK(children ==
              std::set<std::string>{"big", "bytes", "counts", "sub/", "temp", "time", "ubig", "x", "y"});
        CHECK(zx::group<store_t>::open(store, "sub").attributes().at("where") == "in sub");
        for (const auto& a : arrays)
        {
            CAPTURE(a.path);
            try
            {
                const auto z = check_zarrxt_reads(store, a.path, want[a.path]);
                CHECK(z.dtype() == a.dtype);
                CHECK(z.shape() == shape_of(a));
                CHECK(z.codecs().back().name == "gzip");
                CHECK(z.metadata().attributes.at("long_name") == "array " + a.path);
                if (a.nodata.is_null())
                {
                    CHECK(z.metadata().fill.is_null);
                }
                else
                {
                    CHECK(zi::hex(fill_le(z)) == zi::hex(zi::fill_bytes(a.dtype, a.nodata)));
                }
                // GDAL 3.6 writes _ARRAY_DIMENSIONS for 1-D arrays, and for others only when each of
                // their dimensions has a coordinate array (sub/v's t has none: no names).
                if (a.path == "sub/v")
                {
                    CHECK_FALSE(z.dimension_names().has_value());
                }
                else
                {
                    zx::dimension_name_list dims(a.dims.begin(), a.dims.end());
                    CHECK(z.dimension_names() == dims);
                }
            }
            catch (const zx::error& e)
            {
                FAIL_CHECK("zarrxt refused GDAL's array: " << std::string(e.what()));
            }
        }
        // The unit becomes a "units" attribute.
        CHECK(zx::open_any(store, "temp").metadata().attributes.at("units") == "K");

        // Blocks and blosc: BLOCKSIZE applies to every array, so only the 3-D one is translated.
        const fs::path blocks = dir.path() / "blocks.zarr";
        std::string codec = "-co ARRAY:COMPRESS=ZSTD";
#if ZARRXT_HAS_BLOSC
        codec = "-co ARRAY:COMPRESS=BLOSC -co ARRAY:BLOSC_CNAME=lz4 -co ARRAY:BLOSC_SHUFFLE=BYTE";
#endif
        must_run("gdalmdimtranslate -q -of Zarr -co FORMAT=ZARR_V2 -array temp -co ARRAY:BLOCKSIZE=2,3,4 " +
                 codec + " " + quote(src.string()) + " " + quote(blocks.string()));
        const auto t = check_zarrxt_reads(store_t{blocks.string()}, "temp", want["temp"]);
        CHECK(t.chunk_shape() == shape_t{2, 3, 4});
        CHECK(t.codecs().back().name == (ZARRXT_HAS_BLOSC ? "blosc" : "zstd"));
    }

    TEST_CASE("GDAL 3.6's Zarr v3 is the pre-final draft, which zarrxt refuses with metadata.10")
    {
        ZX_NEED_GDAL();
        zxtest::temp_dir dir("zarrxt-gdal-v3");
        zx::json spec = {{"rasters",
                          {{{"path", "r.tif"},
                            {"type", "Int16"},
                            {"width", 4},
                            {"height", 3},
                            {"bands", {{{"data", "r.bin"}}}}}}}};
        zxtest::write_file(dir.path() / "r.bin", zi::formula_bytes(zx::dtype_id::int16, 12, 1));
        zxtest::write_file(dir.path() / "r.json", spec.dump());
        gdal_peer("rasters " + quote((dir.path() / "r.json").string()));
        const fs::path raster = dir.path() / "v3.zarr";
        must_run("gdal_translate -q -of Zarr -co FORMAT=ZARR_V3 -co COMPRESS=GZIP " +
                 quote((dir.path() / "r.tif").string()) + " " + quote(raster.string()));
        const fs::path mdim = dir.path() / "mdim3.zarr";
        must_run("gdalmdimtranslate -q -of Zarr -co FORMAT=ZARR_V3 " +
                 quote((dir.path() / "r.tif").string()) + " " + quote(mdim.string()));
        for (const auto& p : {raster, mdim})
        {
            CAPTURE(p);
            CHECK(fs::exists(p / "meta" / "root.group.json")); // the draft's layout
            CHECK_THROWS_WITH_AS(zx::group<store_t>::open(store_t{p.string()}, ""),
                                 doctest::Contains("[zarrxt.metadata.10]"), zx::metadata_error);
        }
    }

    /************************
     * zarrxt -> GDAL        *
     ************************/

    TEST_CASE("zarrxt v2 hierarchies open in GDAL: gdalmdiminfo, python3-gdal and gdalmdimtranslate agree "
              "value for value")
    {
        ZX_NEED_GDAL();
        zxtest::temp_dir dir("zarrxt-to-gdal");
        const auto arrays = zarrxt_hierarchy(
            {zx::dtype_id::uint8, zx::dtype_id::int8, zx::dtype_id::bool_, zx::dtype_id::int16,
             zx::dtype_id::uint16, zx::dtype_id::int32, zx::dtype_id::uint32, zx::dtype_id::int64,
             zx::dtype_id::uint64, zx::dtype_id::float16, zx::dtype_id::float32, zx::dtype_id::float64,
             zx::dtype_id::complex64, zx::dtype_id::complex128},
            true);
        const fs::path root = dir.path() / "h.zarr";
        write_hierarchy(root, arrays, 2);

        // python3-gdal's multidimensional API: bytes, dimensions, blocks, nodata, attributes.
        const fs::path dump = dir.path() / "dump";
        gdal_peer("dump " + quote(root.string()) + " " + quote(dump.string()));
        const auto d = zi::read_json(dump / "dump.json");
        CHECK(same_members(
            d.at("groups").at("/").at("attributes"),
            zx::json::parse(
                R"({"title": "written by zarrxt", "version": 3, "ratio": 0.25, "levels": [1, 2, 3]})")));
        CHECK(d.at("groups").at("/sub").at("attributes") == zx::json{{"where", "in sub"}});
        // gdalmdiminfo's JSON, with the values.
        const auto info =
            zx::json::parse(keep_negative_zero(must_run("gdalmdiminfo -detailed " + quote(root.string()))));
        for (const auto& w : arrays)
        {
            const std::string path = w.entry["name"].get<std::string>();
            CAPTURE(path);
            const auto dtype = zi::dtype_named(w.entry["dtype"].get<std::string>());
            const auto as = gdal_reads_as(dtype);
            const std::string want = convert_le(zi::expected_from_formula(w.entry), dtype, as);
            const auto& a = d.at("arrays").at("/" + path);
            CHECK(dtype_of_gdal(a.at("type").get<std::string>()) == as);
            // GDAL looks the names up in the array's own group: sub/v's "x" is a dimension /sub/x,
            // not the root's /x.
            std::vector<std::string> full;
            for (const auto& n : w.dims)
            {
                full.push_back((path.rfind("sub/", 0) == 0 ? "/sub/" : "/") + *n);
            }
            CHECK(a.at("dimensions").get<std::vector<std::string>>() == full);
            CHECK(a.at("block_size").get<shape_t>() == w.v2.chunks);
            CHECK(a.at("attributes").at("long_name") == "array " + path);
            CHECK_FALSE(a.at("attributes").contains("_ARRAY_DIMENSIONS"));
            if (!w.entry["fill_value"].is_null())
            {
                CHECK(json_double(a.at("nodata")) == json_double(w.entry["fill_value"]));
            }
            const std::string got = zxtest::read_file(dump / a.at("data").get<std::string>());
            CHECK_MESSAGE(zi::describe_difference(got, want, zx::info(as).size).empty(),
                          "python3-gdal read: " << zi::describe_difference(got, want, zx::info(as).size));

            // The same array in gdalmdiminfo's JSON tree.
            const zx::json* node = &info;
            std::string rest = path;
            while (rest.find('/') != std::string::npos)
            {
                node = &node->at("groups").at(rest.substr(0, rest.find('/')));
                rest = rest.substr(rest.find('/') + 1);
            }
            const auto& ia = node->at("arrays").at(rest);
            CHECK(ia.at("datatype") == a.at("type"));
            const std::string diff = compare_gdal_values(ia.at("values"), want, as);
            CHECK_MESSAGE(diff.empty(), "gdalmdiminfo: " << diff);
        }

        // gdalmdimtranslate copies the hierarchy into a Zarr of GDAL's own; zarrxt reads it back.
        const fs::path copy = dir.path() / "copy.zarr";
        must_run("gdalmdimtranslate -q -of Zarr -co FORMAT=ZARR_V2 " + quote(root.string()) + " " +
                 quote(copy.string()));
        store_t copied{copy.string()};
        for (const auto& w : arrays)
        {
            const std::string path = w.entry["name"].get<std::string>();
            CAPTURE(path);
            const auto dtype = zi::dtype_named(w.entry["dtype"].get<std::string>());
            try
            {
                const auto z = check_zarrxt_reads(
                    copied, path,
                    convert_le(zi::expected_from_formula(w.entry), dtype, gdal_reads_as(dtype)));
                CHECK(z.dimension_names() == w.dims); // every dimension has a coordinate array
                CHECK(z.metadata().attributes.at("long_name") == "array " + path);
            }
            catch (const zx::error& e)
            {
                FAIL_CHECK("zarrxt refused GDAL's copy: " << std::string(e.what()));
            }
        }
    }

    TEST_CASE("zarrxt v3 hierarchies are invisible to GDAL 3.6 (it reads only the pre-final v3 draft)")
    {
        ZX_NEED_GDAL();
        zxtest::temp_dir dir("zarrxt-v3-to-gdal");
        const auto arrays = zarrxt_hierarchy({zx::dtype_id::int16, zx::dtype_id::float64}, false);
        const fs::path root = dir.path() / "h3.zarr";
        write_hierarchy(root, arrays, 3);
        const auto info = zx::json::parse(must_run("gdalmdiminfo " + quote(root.string())));
        CHECK(info.at("type") == "group");
        CHECK_FALSE(info.contains("arrays"));
        CHECK_FALSE(info.contains("groups"));
        CHECK_FALSE(info.contains("attributes"));
    }

    /************************
     * NCZarr -> zarrxt      *
     ************************/

    TEST_CASE("NCZarr (ncgen, nccopy; nczarr and zarr modes) hierarchies read by zarrxt value for value")
    {
        ZX_NEED_NCZARR();
        zxtest::temp_dir dir("zarrxt-nczarr");
        struct var
        {
            std::string path;
            zx::dtype_id dtype;
            std::vector<std::string> dims;
            std::uint64_t seed;
            zx::json fill;    // _FillValue, or null
            bool data = true; // false: no data section (never written)
        };
        const std::map<std::string, std::uint64_t> dim_size = {{"y", 5}, {"x", 7}, {"t", 3}};
        const std::vector<var> vars = {
            {"b", zx::dtype_id::int8, {"y", "x"}, 60, -5},
            {"ub", zx::dtype_id::uint8, {"y", "x"}, 61, nullptr},
            {"s", zx::dtype_id::int16, {"y", "x"}, 62, -3},
            {"us", zx::dtype_id::uint16, {"y", "x"}, 63, nullptr},
            {"i", zx::dtype_id::int32, {"y", "x"}, 64, nullptr},
            {"ui", zx::dtype_id::uint32, {"y", "x"}, 65, nullptr},
            {"i64", zx::dtype_id::int64, {"y", "x"}, 66, nullptr},
            {"u64", zx::dtype_id::uint64, {"y", "x"}, 67, nullptr},
            {"f", zx::dtype_id::float32, {"y", "x"}, 68, "NaN"},
            {"d", zx::dtype_id::float64, {"y", "x"}, 69, nullptr},
            {"y", zx::dtype_id::float64, {"y"}, 70, nullptr},
            {"empty", zx::dtype_id::int16, {"y", "x"}, 71, -9, false},
            {"sub/v", zx::dtype_id::float32, {"t", "x"}, 72, nullptr},
            {"sub/w", zx::dtype_id::float64, {"t"}, 73, nullptr},
        };
        auto shape_of = [&](const var& v)
        {
            shape_t s;
            for (const auto& d : v.dims)
            {
                s.push_back(dim_size.at(d));
            }
            return s;
        };
        auto want_of = [&](const var& v)
        {
            if (v.data)
            {
                return zi::formula_bytes(v.dtype, zi::product(shape_of(v)), v.seed);
            }
            std::string all;
            for (std::uint64_t i = 0; i < zi::product(shape_of(v)); ++i)
            {
                all += zi::fill_bytes(v.dtype, v.fill);
            }
            return all;
        };
        // The CDL: chunked 2 x 3 (ncgen honours _ChunkSizes when it writes NCZarr itself).
        auto declare = [&](const var& v, const std::string& indent)
        {
            const std::string name = v.path.substr(v.path.rfind('/') + 1);
            std::string s = indent + cdl_type(v.dtype) + " " + name + "(";
            for (std::size_t i = 0; i < v.dims.size(); ++i)
            {
                s += (i ? ", " : "") + v.dims[i];
            }
            s += ") ;\n";
            if (!v.fill.is_null())
            {
                std::string one = zi::fill_bytes(v.dtype, v.fill);
                std::string num = cdl_values(one, v.dtype);
                const char* suffix = v.dtype == zx::dtype_id::int8    ? "b"
                                     : v.dtype == zx::dtype_id::int16 ? "s"
                                                                      : "";
                s += indent + "  " + name + ":_FillValue = " + num + suffix + " ;\n";
            }
            s += indent + "  " + name + ":long_name = \"var " + v.path + "\" ;\n";
            if (v.dims.size() == 2)
            {
                s += indent + "  " + name + ":_ChunkSizes = 2, 3 ;\n";
            }
            return s;
        };
        std::string cdl = "netcdf wild {\ndimensions:\n  y = 5 ;\n  x = 7 ;\nvariables:\n";
        std::string sub_decl, data, sub_data;
        for (const auto& v : vars)
        {
            const bool in_sub = v.path.rfind("sub/", 0) == 0;
            (in_sub ? sub_decl : cdl) += declare(v, in_sub ? "    " : "  ");
            if (v.data)
            {
                (in_sub ? sub_data : data) += "  " + v.path.substr(v.path.rfind('/') + 1) + " = " +
                                              cdl_values(want_of(v), v.dtype) + " ;\n";
            }
        }
        cdl += "  char c(x) ;\n  :title = \"wild nczarr\" ;\n  :version = 3 ;\n  :ratio = 0.25 ;\n  :levels "
               "= 1s, 2s, 3s ;\n";
        cdl += "data:\n" + data + "  c = \"abc\" ;\n";
        cdl += "group: sub {\n  dimensions:\n    t = 3 ;\n  variables:\n" + sub_decl +
               "  :where = \"in sub\" ;\n  data:\n" + sub_data + "  }\n}\n";
        zxtest::write_file(dir.path() / "wild.cdl", cdl);
        INFO(cdl);

        const fs::path nc = dir.path() / "wild.nc";
        must_run("ncgen -4 -o " + quote(nc.string()) + " " + quote((dir.path() / "wild.cdl").string()));
        struct store_case
        {
            std::string name;
            bool nczarr_mode;
            bool direct; // written by ncgen itself (chunked) rather than nccopy
        };
        const std::vector<store_case> cases = {
            {"nccopy-nczarr", true, false}, {"nccopy-zarr", false, false}, {"ncgen-nczarr", true, true}};
        for (const auto& c : cases)
        {
            CAPTURE(c.name);
            const fs::path p = dir.path() / (c.name + ".zarr");
            const std::string url = nc_url(p, c.nczarr_mode ? "nczarr" : "zarr");
            if (c.direct)
            {
                must_run("ncgen -4 -o " + quote(url) + " " + quote((dir.path() / "wild.cdl").string()));
            }
            else
            {
                must_run("nccopy " + quote(nc.string()) + " " + quote(url));
            }
            store_t store{p.string()};
            const auto root = zx::group<store_t>::open(store, "");
            CHECK(root.zarr_format() == 2);
            CHECK(root.attributes().at("title") == "wild nczarr");
            CHECK(root.attributes().at("version") == 3);
            CHECK(root.attributes().at("ratio") == 0.25);
            CHECK(root.attributes().at("levels") == zx::json({1, 2, 3}));
            // NCZarr's own bookkeeping is in the nczarr mode only, as ordinary attributes.
            CHECK(root.attributes().contains("_NCZARR_ATTR") == c.nczarr_mode);
            CHECK(zx::group<store_t>::open(store, "sub").attributes().at("where") == "in sub");
            std::set<std::string> children;
            for (const auto& ch : root.children())
            {
                children.insert(ch.name);
            }
            CHECK(children == std::set<std::string>{"b", "c", "d", "empty", "f", "i", "i64", "s", "sub",
                                                    "u64", "ub", "ui", "us", "y"});
            for (const auto& v : vars)
            {
                CAPTURE(v.path);
                try
                {
                    const auto a = check_zarrxt_reads(store, v.path, want_of(v));
                    CHECK(a.dtype() == v.dtype);
                    CHECK(a.shape() == shape_of(v));
                    CHECK(a.chunk_shape() == (c.direct && v.dims.size() == 2 ? shape_t{2, 3} : shape_of(v)));
                    CHECK(a.metadata().attributes.at("long_name") == "var " + v.path);
                    // The fill: nccopy writes fill_value null and the _FillValue attribute, which
                    // zarrxt then reads missing chunks as; ncgen writes fill_value itself.
                    if (!v.fill.is_null())
                    {
                        CHECK(a.metadata().fill.is_null == !c.direct);
                        CHECK(zi::hex(fill_le(a)) == zi::hex(zi::fill_bytes(v.dtype, v.fill)));
                    }
                    // _ARRAY_DIMENSIONS: written for the root's variables only (NCZarr 4.9.0 writes
                    // none in sub-groups, in either mode).
                    if (v.path.rfind("sub/", 0) == 0)
                    {
                        CHECK_FALSE(a.dimension_names().has_value());
                    }
                    else
                    {
                        CHECK(a.dimension_names() == zx::dimension_name_list(v.dims.begin(), v.dims.end()));
                    }
                }
                catch (const zx::error& e)
                {
                    FAIL_CHECK("zarrxt refused NCZarr's array: " << std::string(e.what()));
                }
            }
            // The never-written variable has no chunk when ncgen writes NCZarr directly.
            CHECK(fs::exists(p / "empty" / "0.0") == !c.direct);
            // char variables are "<U1" (4 bytes an element) but stored one byte per character: the
            // array opens, its chunk is the wrong size (zarr-python 2.13 fails on it too:
            // "When changing to a larger dtype, its size must be a divisor ...").
            const auto chars = zx::open<std::string, 1>(store, "c");
            CHECK(chars.metadata().dtype == zx::dtype_id::fixed_utf32);
            CHECK(chars.metadata().dtype.fixed_size == 4);
            CHECK_THROWS_WITH_AS(chars.read(), doctest::Contains("[zarrxt.codec.2]"), zx::codec_error);
        }
    }

    /************************
     * zarrxt -> NCZarr      *
     ************************/

    TEST_CASE("zarrxt v2 hierarchies read by ncdump (zarr and nczarr modes) with the same values")
    {
        ZX_NEED_NCZARR();
        zxtest::temp_dir dir("zarrxt-to-nczarr");
        // Uncompressed and little-endian: Debian's NCZarr has no codec plugins and ignores byte
        // order (docs/compat.md).
        const auto arrays = zarrxt_hierarchy({zx::dtype_id::int8, zx::dtype_id::uint8, zx::dtype_id::int16,
                                              zx::dtype_id::uint16, zx::dtype_id::int32, zx::dtype_id::uint32,
                                              zx::dtype_id::int64, zx::dtype_id::uint64,
                                              zx::dtype_id::float32, zx::dtype_id::float64},
                                             false);
        const fs::path root = dir.path() / "h.zarr";
        write_hierarchy(root, arrays, 2);
        for (const char* mode : {"zarr", "nczarr"})
        {
            CAPTURE(mode);
            const std::string text = must_run("ncdump -p 9,17 " + quote(nc_url(root, mode)));
            INFO(text);
            const auto groups = parse_ncdump(text);
            REQUIRE(groups.count("sub") == 1);
            const auto& top = groups.at("");
            // NCZarr declares every _ARRAY_DIMENSIONS name in the root group, including sub/v's t
            // (GDAL declares it in the array's own group).
            CHECK(top.dims == std::map<std::string, std::uint64_t>{{"t", 4}, {"x", 5}, {"y", 6}});
            CHECK(groups.at("sub").dims.empty());
            CHECK(top.attributes.at("title") == std::vector<std::string>{"\"written by zarrxt\""});
            CHECK(cdl_parse<std::int64_t>(top.attributes.at("version").at(0)) == 3);
            CHECK(cdl_parse<double>(top.attributes.at("ratio").at(0)) == 0.25);
            REQUIRE(top.attributes.at("levels").size() == 3);
            CHECK(cdl_parse<std::int64_t>(top.attributes.at("levels")[2]) == 3);
            CHECK(groups.at("sub").attributes.at("where") == std::vector<std::string>{"\"in sub\""});
            for (const auto& w : arrays)
            {
                const std::string path = w.entry["name"].get<std::string>();
                CAPTURE(path);
                const auto dtype = zi::dtype_named(w.entry["dtype"].get<std::string>());
                const bool in_sub = path.rfind("sub/", 0) == 0;
                const auto& g = groups.at(in_sub ? "sub" : "");
                const std::string name = in_sub ? path.substr(4) : path;
                REQUIRE(g.vars.count(name) == 1);
                const auto& v = g.vars.at(name);
                CHECK(v.type == cdl_type(dtype));
                std::vector<std::string> dims;
                for (const auto& n : w.dims)
                {
                    dims.push_back(*n);
                }
                CHECK(v.dims == dims);
                CHECK(v.attributes.at("long_name") == std::vector<std::string>{"\"array " + path + "\""});
                CHECK(v.attributes.count("_ARRAY_DIMENSIONS") == 0);
                const std::string want = zi::expected_from_formula(w.entry);
                const std::string fill = zi::fill_bytes(dtype, w.entry["fill_value"]);
                const std::string got = ncdump_le(v.values, dtype, fill);
                CHECK_MESSAGE(compare_le(got, want, dtype).empty(), compare_le(got, want, dtype));
            }
        }
    }

    TEST_CASE("zarrxt v3 hierarchies are invisible to NCZarr 4.9.0 (it has no Zarr v3)")
    {
        ZX_NEED_NCZARR();
        zxtest::temp_dir dir("zarrxt-v3-to-nczarr");
        const auto arrays = zarrxt_hierarchy({zx::dtype_id::int16}, false);
        const fs::path root = dir.path() / "h3.zarr";
        write_hierarchy(root, arrays, 3);
        for (const char* mode : {"zarr", "nczarr"})
        {
            CAPTURE(mode);
            const auto groups = parse_ncdump(must_run("ncdump " + quote(nc_url(root, mode))));
            REQUIRE(groups.count("") == 1);
            CHECK(groups.size() == 1);
            CHECK(groups.at("").vars.empty());
            CHECK(groups.at("").attributes.empty());
        }
    }
}
