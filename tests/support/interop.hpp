// Shared by the interoperability tests (test_interop_python.cpp, test_interop_zarrita.cpp): the
// value formula every peer implements, manifests, dtype and rank dispatch, and bit-exact
// comparison of little-endian element bytes.
//
// The formula is stated once, in the docstring of tests/peers/zarr_python_peer.py; this file,
// that script and tests/peers/zarrita_peer.mjs each implement it independently. Briefly, element
// i (flat C index) of an array with seed s has k = i + 7919 s; integers take the top bits of
// k * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019 (mod 2^64); bool is (5k + 1) mod 7 < 3; floats are
// ((37k) mod 2001 - 1000) / 7 (/ 8 for float16) with NaN, +inf, -inf and -0.0 at k mod 97 = 5,
// 11, 23, 31; complex parts use 2k and 2k + 1.
#pragma once

#include "test_support.hpp"

#include <zarrxt/zarrxt.hpp>

#if __has_include(<xtensor/views/xstrided_view.hpp>)
#include <xtensor/views/xstrided_view.hpp>
#else
#include <xtensor/xstrided_view.hpp>
#endif

#include <algorithm>
#include <bit>
#include <complex>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace zxtest::interop
{
namespace zx = zarrxt;

using shape_t = std::vector<std::uint64_t>;

/*********************
 * dispatch on types *
 *********************/

/// Call f(std::integral_constant<std::size_t, N>{}) for a rank from 0 to 4.
template <class F>
void with_rank(std::size_t rank, F&& f)
{
    switch (rank)
    {
        case 0:
            return f(std::integral_constant<std::size_t, 0>{});
        case 1:
            return f(std::integral_constant<std::size_t, 1>{});
        case 2:
            return f(std::integral_constant<std::size_t, 2>{});
        case 3:
            return f(std::integral_constant<std::size_t, 3>{});
        case 4:
            return f(std::integral_constant<std::size_t, 4>{});
    }
    throw std::logic_error("the interop tests use ranks 0 to 4, not " + std::to_string(rank));
}

inline zx::dtype_id dtype_named(const std::string& v3_name)
{
    auto id = zx::dtype_from_v3_name(v3_name);
    if (!id)
    {
        throw std::runtime_error("manifest names an unknown dtype \"" + v3_name + "\"");
    }
    return *id;
}

/***********
 * formula *
 ***********/

inline std::uint64_t formula_k(std::uint64_t index, std::uint64_t seed)
{
    return index + 7919 * seed;
}

/// The float formula as a double; specials are handled by the callers (their bit patterns are
/// fixed per width, so they are built from bits, never converted).
inline double formula_real(std::uint64_t k, bool half)
{
    const double r = static_cast<double>(static_cast<std::int64_t>((k * 37) % 2001) - 1000);
    return half ? r / 8.0 : r / 7.0;
}

/// 0 = ordinary value, else which special value k maps to.
inline int formula_special(std::uint64_t k)
{
    switch (k % 97)
    {
        case 5:
            return 1; // NaN
        case 11:
            return 2; // +inf
        case 23:
            return 3; // -inf
        case 31:
            return 4; // -0.0
        default:
            return 0;
    }
}

template <class F>
F formula_float(std::uint64_t k)
{
    using bits_t = std::conditional_t<sizeof(F) == 2, std::uint16_t,
                                      std::conditional_t<sizeof(F) == 4, std::uint32_t, std::uint64_t>>;
    // Default quiet NaN, +inf, -inf, -0.0 of each width.
    constexpr std::uint64_t table[3][4] = {
        {0x7e00, 0x7c00, 0xfc00, 0x8000},
        {0x7fc00000, 0x7f800000, 0xff800000, 0x80000000},
        {0x7ff8000000000000, 0x7ff0000000000000, 0xfff0000000000000, 0x8000000000000000}};
    if (const int s = formula_special(k); s != 0)
    {
        const std::size_t w = sizeof(F) == 2 ? 0 : sizeof(F) == 4 ? 1 : 2;
        return std::bit_cast<F>(static_cast<bits_t>(table[w][s - 1]));
    }
    if constexpr (sizeof(F) == 2)
    {
        // r / 8 with |r| <= 1000 is exact in binary16, so the float detour cannot round.
        return F(static_cast<float>(formula_real(k, true)));
    }
    else
    {
        return static_cast<F>(formula_real(k, false));
    }
}

template <class T>
T formula_value(std::uint64_t k)
{
    if constexpr (std::is_same_v<T, bool>)
    {
        return (5 * k + 1) % 7 < 3;
    }
    else if constexpr (std::is_integral_v<T>)
    {
        const std::uint64_t u = k * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(u >> (64 - 8 * sizeof(T))));
    }
    else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
    {
        using F = typename T::value_type;
        return T(formula_float<F>(2 * k), formula_float<F>(2 * k + 1));
    }
    else if constexpr (requires { T::from_bits(typename T::bits_type{}); })
    {
        // bfloat16 and the float8 types (no peer writes them yet): every bit pattern in turn.
        const std::uint64_t u = k * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
        return T::from_bits(static_cast<typename T::bits_type>(u >> (64 - 8 * sizeof(T))));
    }
    else
    {
        return formula_float<T>(k);
    }
}

/**********************************
 * little-endian element bytes    *
 **********************************/

/// Append n elements as little-endian bytes (bool as one byte 0/1).
template <class T>
void append_le(std::string& out, const T* p, std::size_t n)
{
    const std::size_t at = out.size();
    if (n == 0)
    {
        return; // an empty region's data() may be null, which memcpy must not see
    }
    out.resize(at + n * sizeof(T));
    std::memcpy(out.data() + at, p, n * sizeof(T));
    if constexpr (std::endian::native == std::endian::big)
    {
        constexpr std::size_t word =
            sizeof(T) == 1 ? 1
            : std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>
                ? sizeof(T) / 2
                : sizeof(T);
        for (std::size_t i = at; i < out.size(); i += word)
        {
            std::reverse(out.begin() + static_cast<std::ptrdiff_t>(i),
                         out.begin() + static_cast<std::ptrdiff_t>(i + word));
        }
    }
}

/// Little-endian bytes back into native elements (a plain array: std::vector<bool> has no data()).
template <class T>
std::unique_ptr<T[]> from_le(const std::string& bytes)
{
    const std::size_t n = bytes.size() / sizeof(T);
    auto v = std::make_unique<T[]>(n);
    std::memcpy(static_cast<void*>(v.get()), bytes.data(), n * sizeof(T));
    if constexpr (std::endian::native == std::endian::big)
    {
        std::string swapped;
        append_le(swapped, v.get(), n); // the swap is its own inverse
        std::memcpy(static_cast<void*>(v.get()), swapped.data(), n * sizeof(T));
    }
    return v;
}

inline std::uint64_t product(const shape_t& s)
{
    std::uint64_t n = 1;
    for (auto e : s)
    {
        n *= e;
    }
    return n;
}

/// n formula values from flat index 0, as little-endian bytes.
inline std::string formula_bytes(zx::dtype_id id, std::uint64_t n, std::uint64_t seed)
{
    return zx::with_element_type(id,
                                 [&](auto t)
                                 {
                                     using T = typename decltype(t)::type;
                                     std::string out;
                                     out.reserve(n * sizeof(T));
                                     for (std::uint64_t i = 0; i < n; ++i)
                                     {
                                         const T v = formula_value<T>(formula_k(i, seed));
                                         append_le(out, &v, 1);
                                     }
                                     return out;
                                 });
}

/// A float (or complex part) from its JSON fill value form. The named specials get each width's
/// default bit pattern, as numpy and zarrita produce them.
template <class F>
F json_real(const zx::json& x)
{
    if (x.is_string())
    {
        const auto s = x.get<std::string>();
        const int special = s == "NaN" ? 1 : s == "Infinity" ? 2 : s == "-Infinity" ? 3 : 0;
        if (special == 0)
        {
            throw std::runtime_error("fill value form not used by the interop tests: " + s);
        }
        // formula_float maps k = 5, 11, 23 (mod 97) to exactly these three specials.
        constexpr std::uint64_t k_of[4] = {0, 5, 11, 23};
        return formula_float<F>(k_of[special]);
    }
    if constexpr (sizeof(F) == 2)
    {
        return F(static_cast<float>(x.get<double>())); // the fill values used are exact in binary16
    }
    else
    {
        return static_cast<F>(x.get<double>());
    }
}

/// One element of a JSON fill value (v2 or v3 form; null means zero) as little-endian bytes.
/// Deliberately independent of zarrxt's own fill-value parser.
inline std::string fill_bytes(zx::dtype_id id, const zx::json& j)
{
    return zx::with_element_type(id,
                                 [&](auto t)
                                 {
                                     using T = typename decltype(t)::type;
                                     T v{};
                                     if (j.is_null())
                                     {
                                         v = T{};
                                     }
                                     else if constexpr (std::is_same_v<T, bool>)
                                     {
                                         v = j.get<bool>();
                                     }
                                     else if constexpr (std::is_integral_v<T>)
                                     {
                                         v = j.is_number_unsigned() ? static_cast<T>(j.get<std::uint64_t>())
                                                                    : static_cast<T>(j.get<std::int64_t>());
                                     }
                                     else if constexpr (std::is_same_v<T, std::complex<float>> ||
                                                        std::is_same_v<T, std::complex<double>>)
                                     {
                                         using F = typename T::value_type;
                                         v = j.is_array() ? T(json_real<F>(j[0]), json_real<F>(j[1]))
                                                          : T(json_real<F>(j), F(0));
                                     }
                                     else if constexpr (requires { T::from_bits(typename T::bits_type{}); })
                                     {
                                         // bfloat16 and the float8 types: no peer writes them yet.
                                         throw std::logic_error("fill_bytes: no independent fill value "
                                                                "form for " + std::string(zx::name(id)));
                                     }
                                     else
                                     {
                                         v = json_real<T>(j);
                                     }
                                     std::string out;
                                     append_le(out, &v, 1);
                                     return out;
                                 });
}

/// The C-order sub-box [offset, offset + extent) of a whole array's bytes.
inline std::string slice_bytes(const std::string& whole, const shape_t& shape, std::size_t width,
                               const shape_t& offset, const shape_t& extent)
{
    const std::size_t rank = shape.size();
    std::string out;
    const std::uint64_t n = product(extent);
    if (n == 0)
    {
        return out;
    }
    out.reserve(n * width);
    shape_t idx(rank, 0);
    for (std::uint64_t e = 0; e < n; ++e)
    {
        std::uint64_t flat = 0;
        for (std::size_t d = 0; d < rank; ++d)
        {
            flat = flat * shape[d] + offset[d] + idx[d];
        }
        out.append(whole, flat * width, width);
        for (std::size_t d = rank; d-- > 0;)
        {
            if (++idx[d] < extent[d])
            {
                break;
            }
            idx[d] = 0;
        }
    }
    return out;
}

/// Overwrite the sub-box [offset, offset + extent) of `whole` with the same box of `src`.
inline void paste_box(std::string& whole, const std::string& src, const shape_t& shape, std::size_t width,
                      const shape_t& offset, const shape_t& extent)
{
    const std::size_t rank = shape.size();
    const std::uint64_t n = product(extent);
    shape_t idx(rank, 0);
    for (std::uint64_t e = 0; e < n; ++e)
    {
        std::uint64_t flat = 0;
        for (std::size_t d = 0; d < rank; ++d)
        {
            flat = flat * shape[d] + offset[d] + idx[d];
        }
        std::memcpy(whole.data() + flat * width, src.data() + flat * width, width);
        for (std::size_t d = rank; d-- > 0;)
        {
            if (++idx[d] < extent[d])
            {
                break;
            }
            idx[d] = 0;
        }
    }
}

/*************
 * manifests *
 *************/

inline zx::json read_json(const std::filesystem::path& p)
{
    return zx::json::parse(read_file(p));
}

inline shape_t to_shape(const zx::json& j)
{
    return j.get<std::vector<std::uint64_t>>();
}

/// What a manifest entry says the whole array holds: the formula inside the written region
/// (everywhere when "written" is null) and the fill value elsewhere.
inline std::string expected_from_formula(const zx::json& entry)
{
    const auto id = dtype_named(entry.at("dtype").get<std::string>());
    const auto shape = to_shape(entry.at("shape"));
    const std::uint64_t n = product(shape);
    std::string values = formula_bytes(id, n, entry.at("seed").get<std::uint64_t>());
    const auto& written = entry.at("written");
    if (written.is_null())
    {
        return values;
    }
    const std::string one = fill_bytes(id, entry.at("fill_value"));
    std::string out;
    out.reserve(values.size());
    for (std::uint64_t i = 0; i < n; ++i)
    {
        out += one;
    }
    paste_box(out, values, shape, one.size(), to_shape(written.at("offset")), to_shape(written.at("extent")));
    return out;
}

/**************
 * comparison *
 **************/

inline std::string hex(const std::string& b)
{
    static const char* digits = "0123456789abcdef";
    std::string s;
    for (unsigned char c : b)
    {
        s += digits[c >> 4];
        s += digits[c & 15];
    }
    return s;
}

/// "" when equal, else how many elements differ and the first few (bits in little-endian hex).
/// Element-wise bit comparison: NaN equals NaN exactly when the bit patterns match.
inline std::string describe_difference(const std::string& got, const std::string& want, std::size_t width)
{
    if (got == want)
    {
        return {};
    }
    if (got.size() != want.size())
    {
        return "got " + std::to_string(got.size()) + " bytes, expected " + std::to_string(want.size());
    }
    std::size_t bad = 0;
    std::string first;
    for (std::size_t i = 0; i * width < got.size(); ++i)
    {
        if (got.compare(i * width, width, want, i * width, width) != 0)
        {
            if (++bad <= 3)
            {
                first += " [" + std::to_string(i) + "] got " + hex(got.substr(i * width, width)) +
                         " expected " + hex(want.substr(i * width, width)) + ";";
            }
        }
    }
    return std::to_string(bad) + " of " + std::to_string(got.size() / width) + " elements differ:" + first;
}

/// A typed array's region as little-endian bytes.
template <class A>
std::string read_le(const A& a, const typename A::region_type& r)
{
    const auto t = a.read(r);
    std::string out;
    append_le(out, t.data(), t.size());
    return out;
}

template <std::size_t N>
zx::region<N> make_region(const shape_t& offset, const shape_t& extent)
{
    zx::region<N> r;
    for (std::size_t d = 0; d < N; ++d)
    {
        r.offset[d] = offset[d];
        r.extent[d] = extent[d];
    }
    return r;
}

inline std::string fmt_shape(const shape_t& s)
{
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i)
    {
        out += (i ? ", " : "") + std::to_string(s[i]);
    }
    return out + "]";
}

/// Sub-regions worth reading from an array of `shape` with chunk shape `chunks`: one inside the
/// first chunk, one straddling chunk boundaries away from the origin, and one ending at the
/// (ragged) far corner. Empty for rank 0 and for empty arrays.
inline std::vector<std::pair<shape_t, shape_t>> interesting_regions(const shape_t& shape,
                                                                    const shape_t& chunks)
{
    std::vector<std::pair<shape_t, shape_t>> out;
    const std::size_t rank = shape.size();
    if (rank == 0 || product(shape) == 0)
    {
        return out;
    }
    shape_t off(rank), ext(rank);
    for (std::size_t d = 0; d < rank; ++d)
    {
        off[d] = 0;
        ext[d] = std::min(shape[d], std::max<std::uint64_t>(1, chunks[d] - 1));
    }
    out.emplace_back(off, ext);
    for (std::size_t d = 0; d < rank; ++d)
    {
        off[d] = std::min(shape[d] - 1, chunks[d] / 2 + 1);
        ext[d] = std::max<std::uint64_t>(1, std::min(shape[d] - off[d], chunks[d] + 1));
    }
    out.emplace_back(off, ext);
    for (std::size_t d = 0; d < rank; ++d)
    {
        ext[d] = std::min<std::uint64_t>(shape[d], 2);
        off[d] = shape[d] - ext[d];
    }
    out.emplace_back(off, ext);
    return out;
}

/// Check a peer-written array value for value against the peer's own read-back, whole and in
/// sub-regions (read, read_raw and read_into a strided view of a larger tensor).
template <class A>
void check_typed_array(const A& a, const std::string& want, const shape_t& shape, const shape_t& chunks)
{
    using T = typename A::value_type;
    constexpr std::size_t N = A::rank;
    const std::size_t width = sizeof(T);
    const shape_t zero(N, 0);
    {
        const std::string got = read_le(a, make_region<N>(zero, shape));
        const std::string diff = describe_difference(got, want, width);
        CHECK_MESSAGE(diff.empty(), "whole array: " << diff);
    }
    for (const auto& box : interesting_regions(shape, chunks))
    {
        const shape_t& off = box.first; // not a structured binding: clang 14 cannot capture those
        const shape_t& ext = box.second;
        const auto r = make_region<N>(off, ext);
        const std::string sub_want = slice_bytes(want, shape, width, off, ext);
        {
            const std::string diff = describe_difference(read_le(a, r), sub_want, width);
            CHECK_MESSAGE(diff.empty(),
                          "read of region " << fmt_shape(off) << " + " << fmt_shape(ext) << ": " << diff);
        }
        if constexpr (N > 0)
        {
            // Into a strided view: every other element of a larger tensor along the last axis.
            typename xt::xtensor<T, N>::shape_type big;
            for (std::size_t d = 0; d < N; ++d)
            {
                big[d] = static_cast<std::size_t>(ext[d]) + (d + 1 == N ? ext[d] : 0);
            }
            xt::xtensor<T, N> host = xt::xtensor<T, N>::from_shape(big);
            xt::xstrided_slice_vector sv(N - 1, xt::all());
            sv.push_back(xt::range(0, static_cast<std::ptrdiff_t>(2 * ext[N - 1]), 2));
            auto view = xt::strided_view(host, sv);
            a.read_into(r, view);
            // Copied out through the view's own (row-major) iterator.
            const std::size_t count = view.size();
            auto copy = std::make_unique<T[]>(count);
            std::copy(view.begin(), view.end(), copy.get());
            std::string got;
            append_le(got, copy.get(), count);
            const std::string diff = describe_difference(got, sub_want, width);
            CHECK_MESSAGE(diff.empty(), "read_into a strided view of region "
                                            << fmt_shape(off) << " + " << fmt_shape(ext) << ": " << diff);
        }
    }
}

/// `zarrxt hash` (the tool at `tool`) of every array in a peer's manifest prints the digest the
/// peer computed from its own bytes.
inline void check_tool_hashes(const std::string& tool, const std::filesystem::path& root,
                              const zx::json& manifest)
{
    for (const auto& e : manifest.at("arrays"))
    {
        const std::string name = e.at("name").get<std::string>();
        INFO("array ", name);
        const auto r =
            zxtest::run(zxtest::quote(tool) + " hash " + zxtest::quote((root / "arrays" / name).string()));
        CHECK_MESSAGE(r.status == 0, r.output);
        CHECK(r.output == e.at("digest").get<std::string>() + "\n");
    }
}

/// Read every array of a manifest with zarrxt and compare with the expected bytes the writer
/// stored next to it; also check that the writer's values follow the shared formula.
inline void check_manifest_arrays(const std::filesystem::path& root, const zx::json& manifest)
{
    zx::filesystem_store store{(root / "arrays").string()};
    const auto& arrays = manifest.at("arrays");
    REQUIRE(arrays.size() > 0);
    for (const auto& e : arrays)
    {
        const std::string name = e.at("name").get<std::string>();
        INFO("array ", name);
        const std::string want = zxtest::read_file(root / e.at("expected").get<std::string>());
        const auto id = dtype_named(e.at("dtype").get<std::string>());
        const std::size_t width = zx::info(id).size;
        // The formula is implemented three times (Python, JavaScript, C++); if they drift apart the
        // write-direction tests would compare different things, so pin them together here.
        const std::string formula_diff = describe_difference(expected_from_formula(e), want, width);
        CHECK_MESSAGE(formula_diff.empty(),
                      "the writer's values do not follow the shared formula: " << formula_diff);
        try
        {
            auto any = zx::open_any(store, name);
            CHECK(std::string(zx::name(any.dtype())) == e.at("dtype").get<std::string>());
            CHECK(any.shape() == to_shape(e.at("shape")));
            zx::visit(any, [&](auto& a)
                      { check_typed_array(a, want, to_shape(e.at("shape")), to_shape(e.at("chunks"))); });
        }
        catch (const zx::error& err)
        {
            FAIL_CHECK("zarrxt refused an array it should read: " << err.what());
        }
    }
}

/// Write a manifest entry's formula values into an open typed array. Whole
/// arrays are written as two halves split along the last axis at a point that is usually not a
/// chunk boundary, each from a strided view, so partly covered chunks go through
/// read-modify-write.
template <class A>
void write_formula(A& a, const zx::json& entry)
{
    using T = typename A::value_type;
    constexpr std::size_t N = A::rank;
    const auto shape = to_shape(entry.at("shape"));
    const auto id = dtype_named(entry.at("dtype").get<std::string>());
    const std::uint64_t n = product(shape);
    const auto values = from_le<T>(formula_bytes(id, n, entry.at("seed").get<std::uint64_t>()));
    typename xt::xtensor<T, N>::shape_type sh;
    for (std::size_t d = 0; d < N; ++d)
    {
        sh[d] = static_cast<std::size_t>(shape[d]);
    }
    xt::xtensor<T, N> full = xt::xtensor<T, N>::from_shape(sh);
    std::copy(values.get(), values.get() + n, full.begin());
    const auto& written = entry.at("written");
    if constexpr (N == 0)
    {
        a.write(zx::region<0>{}, full);
    }
    else if (!written.is_null())
    {
        const auto off = to_shape(written.at("offset"));
        const auto ext = to_shape(written.at("extent"));
        xt::xstrided_slice_vector sv;
        for (std::size_t d = 0; d < N; ++d)
        {
            sv.push_back(
                xt::range(static_cast<std::ptrdiff_t>(off[d]), static_cast<std::ptrdiff_t>(off[d] + ext[d])));
        }
        a.write(make_region<N>(off, ext), xt::strided_view(full, sv));
    }
    else if (product(shape) > 0)
    {
        const std::uint64_t last = shape[N - 1];
        const std::uint64_t split = last / 2 + 1 > last ? last : last / 2 + 1;
        shape_t off(N, 0), ext = shape;
        for (int part = 0; part < 2; ++part)
        {
            off[N - 1] = part == 0 ? 0 : split;
            ext[N - 1] = part == 0 ? split : last - split;
            if (ext[N - 1] == 0)
            {
                continue;
            }
            xt::xstrided_slice_vector sv(N - 1, xt::all());
            sv.push_back(xt::range(static_cast<std::ptrdiff_t>(off[N - 1]),
                                   static_cast<std::ptrdiff_t>(off[N - 1] + ext[N - 1])));
            a.write(make_region<N>(off, ext), xt::strided_view(full, sv));
        }
    }
}

/// Create the array of a manifest entry with zarrxt (typed by the entry's dtype and rank, with
/// options `o` for either format) and write the entry's formula values into it.
template <class Store, class Options>
void create_with_formula(Store& store, const std::string& name, const Options& o, const zx::json& entry)
{
    zx::with_element_type(dtype_named(entry.at("dtype").get<std::string>()),
                          [&](auto t)
                          {
                              using T = typename decltype(t)::type;
                              with_rank(o.shape.size(),
                                        [&](auto n)
                                        {
                                            auto a = zx::create<T, n.value>(store, name, o);
                                            write_formula(a, entry);
                                        });
                          });
}

/// The box that an in-place update rewrites: the sub-region straddling chunk boundaries.
inline std::optional<zx::json> overlay_for(const zx::json& entry)
{
    const auto regions = interesting_regions(to_shape(entry.at("shape")), to_shape(entry.at("chunks")));
    if (regions.size() < 2)
    {
        return std::nullopt;
    }
    return zx::json{{"offset", regions[1].first},
                    {"extent", regions[1].second},
                    {"seed", entry.at("seed").get<std::uint64_t>() + 100000}};
}

/// Rewrite an overlay box of an existing array with the formula of the overlay's seed, from raw
/// C-ordered memory (write_raw): chunks the peer wrote are decoded, patched and re-encoded.
template <class A>
void write_overlay(A& a, const zx::json& entry, const zx::json& overlay)
{
    using T = typename A::value_type;
    constexpr std::size_t N = A::rank;
    const auto shape = to_shape(entry.at("shape"));
    const auto id = dtype_named(entry.at("dtype").get<std::string>());
    const auto off = to_shape(overlay.at("offset"));
    const auto ext = to_shape(overlay.at("extent"));
    const std::string whole = formula_bytes(id, product(shape), overlay.at("seed").get<std::uint64_t>());
    const auto box = from_le<T>(slice_bytes(whole, shape, sizeof(T), off, ext));
    a.write_raw(make_region<N>(off, ext), box.get());
}

/// Copy a peer's arrays and their manifest entries, update every non-empty array of rank >= 1
/// in place with zarrxt (write_overlay) and return the manifest for the peer to verify.
inline zx::json update_in_place(const std::filesystem::path& from, const zx::json& manifest,
                                const std::filesystem::path& to)
{
    std::filesystem::copy(from / "arrays", to / "arrays", std::filesystem::copy_options::recursive);
    zx::filesystem_store store{(to / "arrays").string()};
    zx::json out = {
        {"writer", manifest.at("writer").get<std::string>() + ", then updated in place by zarrxt"},
        {"arrays", zx::json::array()}};
    for (const auto& e : manifest.at("arrays"))
    {
        const std::string name = e.at("name").get<std::string>();
        INFO("array ", name);
        zx::json entry = e;
        entry.erase("expected");
        entry.erase("digest");
        if (const auto overlay = overlay_for(e))
        {
            try
            {
                zx::visit(zx::open_any(store, name),
                          [&](auto& a)
                          {
                              if constexpr (std::decay_t<decltype(a)>::rank > 0)
                              {
                                  write_overlay(a, e, *overlay);
                              }
                          });
            }
            catch (const zx::error& err)
            {
                FAIL_CHECK("zarrxt could not update the array: " << err.what());
                continue;
            }
            entry["overlay"] = *overlay;
        }
        out["arrays"].push_back(entry);
    }
    return out;
}

} // namespace zxtest::interop
