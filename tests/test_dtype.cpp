// dtype_traits and the runtime dtype table agree on every supported element type; numpy's time
// units, their std::chrono mapping and their ISO text; datetime arrays in v3 documents.
#include "array_support.hpp"
#include "expect_error.hpp"
#include "test_support.hpp"

#include <zarrxt/datetime.hpp>
#include <zarrxt/dtype.hpp>
#include <zarrxt/zarrxt.hpp>

#include <chrono>
#include <complex>
#include <cstring>
#include <limits>

namespace zx = zarrxt;

using all_types =
    std::tuple<bool, std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t,
               std::uint32_t, std::uint64_t, zx::float16, float, double, std::complex<float>,
               std::complex<double>, std::chrono::sys_time<std::chrono::nanoseconds>, std::chrono::sys_days,
               std::chrono::seconds, std::chrono::duration<std::int64_t, std::ratio<10>>, zx::bfloat16,
               zx::float8_e3m4, zx::float8_e4m3, zx::float8_e4m3b11fnuz, zx::float8_e4m3fnuz, zx::float8_e5m2,
               zx::float8_e5m2fnuz, zx::float8_e8m0fnu>;

TEST_SUITE("dtype")
{
    TEST_CASE_TEMPLATE_DEFINE("dtype_traits matches the table", T, dtype_traits_case)
    {
        static_assert(zx::element_type<T>);
        constexpr auto id = zx::dtype_of<T>();
        CHECK(zx::info(id).size == sizeof(T));
        CHECK(zx::info(id).id == id);
        CHECK(zx::dtype_from_v3_name(zx::name(id)) == id);
    }
    TEST_CASE_TEMPLATE_APPLY(dtype_traits_case, all_types);

    TEST_CASE("types without traits are not element types")
    {
        struct rgb
        {
            char r, g, b;
        };
        static_assert(!zx::element_type<rgb>);
        static_assert(!zx::element_type<long double>);
        CHECK(zx::info(zx::dtype_id::complex64).word == 4);
        CHECK(zx::detail::half_bits(zx::detail::half_from_bits(0x3c00)) == 0x3c00);
        CHECK(static_cast<float>(zx::detail::half_from_bits(0x3c00)) == 1.0f);
    }
}

namespace
{
// The registry's layouts, written out here from the zarr-extensions READMEs (not read from the
// code under test): exponent and mantissa bits, bias, conventions, the bits of "NaN".
enum class conv
{
    ieee, // infinities and NaNs at the top exponent, signed zeros
    fnuz, // no infinity, NaN is 0x80 only, no -0
    fnu,  // unsigned, no zero, NaN is 0xff only, no mantissa
};
struct registry_format
{
    zx::dtype_id id;
    int ebits, mbits, bias;
    conv c;
    unsigned nan;
};
const registry_format registry_formats[] = {
    {zx::dtype_id::bfloat16, 8, 7, 127, conv::ieee, 0x7fc0},
    {zx::dtype_id::float8_e3m4, 3, 4, 3, conv::ieee, 0x78},
    {zx::dtype_id::float8_e4m3, 4, 3, 7, conv::ieee, 0x7c},
    {zx::dtype_id::float8_e4m3b11fnuz, 4, 3, 11, conv::fnuz, 0x80},
    {zx::dtype_id::float8_e4m3fnuz, 4, 3, 8, conv::fnuz, 0x80},
    {zx::dtype_id::float8_e5m2, 5, 2, 15, conv::ieee, 0x7e},
    {zx::dtype_id::float8_e5m2fnuz, 5, 2, 16, conv::fnuz, 0x80},
    {zx::dtype_id::float8_e8m0fnu, 8, 0, 127, conv::fnu, 0xff},
};

// sign * 2^(e - bias) * (1 + m / 2^mbits), subnormals 2^(1 - bias) * (m / 2^mbits), the specials
// as the registry states them; pow, not ldexp, and no bit tricks shared with the library.
double registry_value(const registry_format& f, unsigned b)
{
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const unsigned emax = (1u << f.ebits) - 1;
    const unsigned e = (b >> f.mbits) & emax;
    const unsigned m = b & ((1u << f.mbits) - 1);
    const bool negative = f.c != conv::fnu && ((b >> (f.ebits + f.mbits)) & 1u) != 0;
    const double scale = std::pow(2.0, f.mbits);
    double v;
    if (f.c == conv::fnu)
    {
        return b == 0xff ? nan : std::pow(2.0, static_cast<double>(e) - f.bias);
    }
    if (f.c == conv::fnuz && b == 0x80)
    {
        return nan;
    }
    if (f.c == conv::ieee && e == emax)
    {
        v = m == 0 ? std::numeric_limits<double>::infinity() : nan;
    }
    else if (e == 0)
    {
        v = std::pow(2.0, 1 - f.bias) * (m / scale);
    }
    else
    {
        v = std::pow(2.0, static_cast<double>(e) - f.bias) * (1 + m / scale);
    }
    return negative ? -v : v;
}

unsigned bit_count(const registry_format& f)
{
    return f.id == zx::dtype_id::bfloat16 ? 65536u : 256u;
}

template <class F>
void with_minifloat(zx::dtype_id id, F&& f)
{
    zx::with_element_type(id,
                          [&](auto t)
                          {
                              using T = typename decltype(t)::type;
                              if constexpr (requires { T::spec; })
                              {
                                  f(t);
                              }
                          });
}
} // namespace

TEST_SUITE("minifloat")
{
    TEST_CASE("the layouts are the registry's, and every bit pattern decodes to the registry's value")
    {
        for (const auto& f : registry_formats)
        {
            INFO(zx::name(f.id));
            const auto* s = zx::minifloat_spec_of(f.id);
            REQUIRE(s != nullptr);
            CHECK(s->exponent_bits == f.ebits);
            CHECK(s->mantissa_bits == f.mbits);
            CHECK(s->bias == f.bias);
            CHECK(s->canonical_nan == f.nan);
            CHECK(s->width == zx::info(f.id).size);
            CHECK(zx::info(f.id).word == zx::info(f.id).size); // bfloat16 swaps as one 2-byte word
            with_minifloat(f.id,
                           [&](auto t)
                           {
                               using T = typename decltype(t)::type;
                               std::size_t bad = 0;
                               for (unsigned b = 0; b < bit_count(f); ++b)
                               {
                                   const T x = T::from_bits(static_cast<typename T::bits_type>(b));
                                   const double want = registry_value(f, b);
                                   const double got = static_cast<double>(x);
                                   const float got_f = x;
                                   const bool same =
                                       std::isnan(want)
                                           ? std::isnan(got) && std::isnan(got_f) && zx::isnan(x)
                                           : got == want && std::signbit(got) == std::signbit(want) &&
                                                 static_cast<double>(got_f) == want && !zx::isnan(x);
                                   bad += same && zx::isinf(x) == std::isinf(want) ? 0 : 1;
                               }
                               CHECK(bad == 0);
                           });
        }
    }

    TEST_CASE(
        "decode then encode gives the same bits (NaNs: the registry's NaN, with their sign where signed)")
    {
        for (const auto& f : registry_formats)
        {
            INFO(zx::name(f.id));
            with_minifloat(f.id,
                           [&](auto t)
                           {
                               using T = typename decltype(t)::type;
                               const unsigned sign = f.c == conv::fnu ? 0u : 1u << (f.ebits + f.mbits);
                               std::size_t bad = 0;
                               for (unsigned b = 0; b < bit_count(f); ++b)
                               {
                                   const T x = T::from_bits(static_cast<typename T::bits_type>(b));
                                   unsigned want = b;
                                   if (zx::isnan(x))
                                   {
                                       want = f.c == conv::ieee ? f.nan | (b & sign) : f.nan;
                                   }
                                   bad += T(static_cast<double>(x)).bits() == want ? 0 : 1;
                                   bad += T(static_cast<float>(x)).bits() == want ? 0 : 1;
                               }
                               CHECK(bad == 0);
                           });
        }
    }

    TEST_CASE(
        "from double: nearest value, ties to even, overflow to infinity or NaN, the edges of each convention")
    {
        for (const auto& f : registry_formats)
        {
            INFO(zx::name(f.id));
            with_minifloat(f.id,
                           [&](auto t)
                           {
                               using T = typename decltype(t)::type;
                               using B = typename T::bits_type;
                               const unsigned sign = f.c == conv::fnu ? 0u : 1u << (f.ebits + f.mbits);
                               // The positive finite values in order of their bits (which is their
                               // order of value), then each midpoint and its neighbours.
                               std::vector<unsigned> pos;
                               for (unsigned b = 0; b < (sign ? sign : 256u); ++b)
                               {
                                   const double v = registry_value(f, b);
                                   if (std::isfinite(v))
                                   {
                                       pos.push_back(b);
                                   }
                               }
                               std::size_t bad = 0;
                               for (std::size_t i = 0; i + 1 < pos.size(); ++i)
                               {
                                   const double lo = registry_value(f, pos[i]);
                                   const double hi = registry_value(f, pos[i + 1]);
                                   REQUIRE(lo < hi);
                                   const double mid = (lo + hi) / 2; // exact in double
                                   // With no mantissa bit (e8m0) the tie goes up, as in ml_dtypes.
                                   const unsigned even =
                                       f.mbits == 0 ? pos[i + 1] : (pos[i] % 2 == 0 ? pos[i] : pos[i + 1]);
                                   bad += T(mid).bits() == even ? 0 : 1;
                                   bad += T(std::nextafter(mid, 0.0)).bits() == pos[i] ? 0 : 1;
                                   bad += T(std::nextafter(mid, 1e300)).bits() == pos[i + 1] ? 0 : 1;
                                   bad += T(lo).bits() == pos[i] ? 0 : 1;
                                   if (sign != 0 && lo != 0)
                                   {
                                       bad += T(-mid).bits() == (even | sign) ? 0 : 1;
                                   }
                               }
                               CHECK(bad == 0);
                               // Above the largest finite value: half an ulp more overflows.
                               const double max = registry_value(f, pos.back());
                               const double ulp = max - registry_value(f, pos[pos.size() - 2]);
                               const double over = f.mbits == 0 ? max * 1.5 : max + ulp / 2;
                               const unsigned inf_bits = ((1u << f.ebits) - 1) << f.mbits;
                               const unsigned overflow = f.c == conv::ieee ? inf_bits : f.nan;
                               CHECK(T(over).bits() == overflow);
                               CHECK(T(std::nextafter(over, 0.0)).bits() == pos.back());
                               CHECK(T(1e300).bits() == overflow);
                               CHECK(T(std::numeric_limits<double>::infinity()).bits() == overflow);
                               CHECK(zx::isnan(T(std::numeric_limits<double>::quiet_NaN())));
                               CHECK(T(std::numeric_limits<double>::quiet_NaN()).bits() == f.nan);
                               if (f.c == conv::ieee)
                               {
                                   CHECK(T(-1e300).bits() == (inf_bits | sign));
                                   CHECK(T(-0.0).bits() == sign);
                                   CHECK(T(-std::numeric_limits<double>::quiet_NaN()).bits() ==
                                         (f.nan | sign));
                                   CHECK(std::numeric_limits<T>::has_infinity);
                                   CHECK(std::isinf(static_cast<float>(std::numeric_limits<T>::infinity())));
                               }
                               if (f.c == conv::fnuz)
                               {
                                   CHECK(T(-0.0).bits() == 0);                      // no -0: 0x80 is NaN
                                   CHECK(T(-registry_value(f, 1) / 4).bits() == 0); // rounds to +0
                                   CHECK(T(-1e300).bits() == 0x80);
                                   CHECK(T(-std::numeric_limits<double>::infinity()).bits() == 0x80);
                                   CHECK_FALSE(std::numeric_limits<T>::has_infinity);
                               }
                               if (f.c == conv::fnu)
                               {
                                   CHECK(T(0.0).bits() == 0xff);    // no zero
                                   CHECK(T(-1.0).bits() == 0xff);   // unsigned
                                   CHECK(T(1e-300).bits() == 0x00); // 2^-127 is nearest
                                   CHECK(T(1.0).bits() == 127);
                                   CHECK(T(0.75).bits() == 127); // the tie goes up
                                   CHECK_FALSE(std::numeric_limits<T>::is_signed);
                               }
                               CHECK(static_cast<double>(std::numeric_limits<T>::max()) == max);
                               CHECK(std::numeric_limits<T>::quiet_NaN().bits() == f.nan);
                               (void)sizeof(B);
                           });
        }
    }

    TEST_CASE("bfloat16 from float: the top 16 bits rounded to nearest even, as bit arithmetic says")
    {
        // An independent formula: add 0x7fff plus the kept LSB, drop 16 bits (finite inputs).
        std::uint32_t state = 12345;
        std::size_t bad = 0;
        for (int i = 0; i < 2000000; ++i)
        {
            state = state * 1664525u + 1013904223u;
            std::uint32_t u = state;
            if (i % 3 == 0)
            {
                u = (u & 0xffff0000u) | 0x8000u; // exact ties
            }
            const float f = std::bit_cast<float>(u);
            if (!std::isfinite(f))
            {
                continue;
            }
            const std::uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
            bad += zx::bfloat16(f).bits() == r ? 0 : 1;
        }
        CHECK(bad == 0);
        CHECK(zx::bfloat16(1.0f).bits() == 0x3f80);
        CHECK(zx::bfloat16(std::numeric_limits<float>::max()).bits() == 0x7f80); // rounds past the max
    }

    TEST_CASE("v2 has no such types; with_arithmetic_type has no arithmetic type for them")
    {
        bool big = false;
        for (const auto& f : registry_formats)
        {
            ZX_EXPECT_ERROR(zx::metadata_error, "zarrxt.metadata.5", "", zx::v2_typestr(f.id, false));
            CHECK_FALSE(zx::with_arithmetic_type(f.id, [](auto) {}));
        }
        CHECK_FALSE(zx::dtype_from_v2_typestr("<V2", big));
        CHECK(zx::dtype_from_v3_name("float8_e4m3fn") == std::nullopt); // not in the registry
    }

    TEST_CASE("a v3 bfloat16 array with big-endian bytes: the stored bytes by hand, read back exactly")
    {
        zx::memory_store s;
        auto a = zx::create<zx::bfloat16, 1>(
            s, "b",
            zx::v3_options{.shape = {4},
                           .chunk_shape = {4},
                           .codecs = {zx::codec_spec("bytes", {{"endian", "big"}})},
                           .fill_value = zx::bfloat16::from_bits(0x7fc0)});
        const zx::json doc = zx::json::parse(zxtest::as_string_of(zx::get(s, "b/zarr.json")));
        CHECK(doc["data_type"] == "bfloat16");
        CHECK(doc["fill_value"] == "NaN");
        xt::xtensor<zx::bfloat16, 1> v = xt::xtensor<zx::bfloat16, 1>::from_shape({4});
        v(0) = zx::bfloat16(1.0);               // 0x3f80
        v(1) = zx::bfloat16(-2.5);              // 0xc020
        v(2) = zx::bfloat16::from_bits(0x7f80); // inf
        v(3) = zx::bfloat16::from_bits(0x0001); // smallest subnormal
        a.write({{0}, {4}}, v);
        const std::string stored = zxtest::as_string_of(zx::get(s, "b/c/0"));
        CHECK(stored == std::string("\x3f\x80\xc0\x20\x7f\x80\x00\x01", 8));
        const auto back = zx::open<zx::bfloat16, 1>(s, "b").read();
        for (std::size_t i = 0; i < 4; ++i)
        {
            CHECK(back(i).bits() == v(i).bits());
        }
        CHECK(static_cast<float>(back(1)) == -2.5f);
        // Through visit (the runtime dtype) as well.
        auto any = zx::open_any(s, "b");
        CHECK(any.dtype() == zx::dtype_id::bfloat16);
        std::uint16_t visited = 0;
        zx::visit(any,
                  [&](auto& typed)
                  {
                      const auto r = typed.read();
                      if constexpr (std::is_same_v<std::decay_t<decltype(r(0))>, zx::bfloat16>)
                      {
                          visited = r(1).bits();
                      }
                  });
        CHECK(visited == 0xc020);
        // The 1-byte types: endian has no effect, and a v2 array is refused.
        auto e = zx::create<zx::float8_e4m3fnuz, 1>(
            s, "e",
            zx::v3_options{.shape = {3},
                           .chunk_shape = {3},
                           .codecs = {zx::codec_spec("bytes", {{"endian", "big"}})},
                           .fill_value = zx::scalar::from_json("NaN")});
        e.write({{0}, {2}},
                xt::xtensor<zx::float8_e4m3fnuz, 1>{zx::float8_e4m3fnuz(0.5), zx::float8_e4m3fnuz(-3.0)});
        CHECK(zxtest::as_string_of(zx::get(s, "e/c/0")) == std::string("\x38\xcc\x80", 3));
        CHECK(zx::open<zx::float8_e4m3fnuz, 1>(s, "e").read()(1) == zx::float8_e4m3fnuz(-3.0));
        ZX_EXPECT_ERROR(zx::metadata_error, "zarrxt.metadata.5", "v2/.zarray",
                        zx::create<zx::bfloat16, 1>(s, "v2", zx::v2_options{.shape = {3}, .chunks = {3}}));
    }
}

TEST_SUITE("datetime")
{
    namespace ch = std::chrono;
    using zx::time_base;
    using zx::time_unit;

    TEST_CASE("std::chrono periods map onto numpy units, coarsest whole base first")
    {
        static_assert(zx::time_unit_of<std::nano>() == time_unit{time_base::ns, 1});
        static_assert(zx::time_unit_of<std::ratio<60>>() == time_unit{time_base::m, 1});
        static_assert(zx::time_unit_of<std::ratio<10>>() == time_unit{time_base::s, 10});
        static_assert(zx::time_unit_of<std::ratio<120>>() == time_unit{time_base::m, 2});
        static_assert(zx::time_unit_of<std::ratio<86400>>() == time_unit{time_base::D, 1});
        static_assert(zx::time_unit_of<std::ratio<604800>>() == time_unit{time_base::W, 1});
        static_assert(zx::time_unit_of<ch::years::period>() == time_unit{time_base::Y, 1});
        static_assert(zx::time_unit_of<ch::months::period>() == time_unit{time_base::M, 1});
        static_assert(zx::time_unit_of<std::atto>() == time_unit{time_base::as, 1});
        static_assert(!zx::time_unit_of<std::ratio<1, 3>>());
        static_assert(!zx::time_unit_of<std::ratio<4294967296>>()); // 2^32 s: no count fits a C int
        static_assert(zx::dtype_of<ch::sys_days>() == zx::dtype_id::datetime64);
        static_assert(zx::dtype_of<ch::milliseconds>() == zx::dtype_id::timedelta64);
        static_assert(zx::time_unit_for<ch::sys_days>() == time_unit{time_base::D, 1});
        static_assert(!zx::time_unit_for<std::int64_t>());
        // Same length, so the same counts mean the same times.
        static_assert(zx::same_length({time_base::m, 1}, {time_base::s, 60}));
        static_assert(zx::same_length({time_base::D, 7}, {time_base::W, 1}));
        static_assert(!zx::same_length({time_base::s, 1}, {time_base::ms, 1}));
        static_assert(!zx::same_length({time_base::Y, 1}, {time_base::M, 12})); // calendar units
        static_assert(zx::same_length({time_base::as, 1000}, {time_base::fs, 1}));
        CHECK(zx::info(zx::dtype_id::datetime64).size == 8);
    }

    TEST_CASE("numpy's unit spellings parse and print; generic, zero and oversized counts do not")
    {
        CHECK(zx::parse_time_unit("ns") == time_unit{time_base::ns, 1});
        CHECK(zx::parse_time_unit("10s") == time_unit{time_base::s, 10});
        CHECK(zx::parse_time_unit("\xce\xbcs") == time_unit{time_base::us, 1});
        CHECK(zx::parse_time_unit("2147483647D") == time_unit{time_base::D, 2147483647});
        CHECK_FALSE(zx::parse_time_unit("0s"));
        CHECK_FALSE(zx::parse_time_unit("2147483648s"));
        CHECK_FALSE(zx::parse_time_unit("99999999999999999999999s"));
        CHECK_FALSE(zx::parse_time_unit("generic"));
        CHECK_FALSE(zx::parse_time_unit(""));
        CHECK_FALSE(zx::parse_time_unit("10"));
        CHECK_FALSE(zx::parse_time_unit("S"));
        CHECK(zx::to_string({time_base::s, 10}) == "10s");
        CHECK(zx::to_string({time_base::us, 1}) == "us");
        bool big = false;
        zx::time_unit u;
        CHECK(zx::dtype_from_v2_typestr(">m8[10m]", big, &u) == zx::dtype_id::timedelta64);
        CHECK(big);
        CHECK(u == time_unit{time_base::m, 10});
        CHECK(zx::dtype_from_v2_typestr("<M8[D]", big, &u) == zx::dtype_id::datetime64);
        CHECK(zx::v2_typestr(zx::dtype_id::datetime64, true, {time_base::ns, 1}) == ">M8[ns]");
        for (const char* bad :
             {"<M8", "<M8[]", "<M8[generic]", "|M8[s]", "<M4[s]", "<M8[s", "<M8[0s]", "<M16[s]"})
        {
            CAPTURE(bad);
            CHECK_FALSE(zx::dtype_from_v2_typestr(bad, big, &u));
        }
    }

    TEST_CASE("datetimes print as numpy 1.24 prints them, over the whole int64 range and every unit")
    {
        // The expected strings are numpy 1.24's str(np.datetime64(count, unit)).
        struct text_case
        {
            std::int64_t count;
            time_unit unit;
            const char* text;
        };
        const text_case cases[] = {
            {0, {time_base::s, 1}, "1970-01-01T00:00:00"},
            {-1, {time_base::D, 1}, "1969-12-31"},
            {11016, {time_base::D, 1}, "2000-02-29"},
            {1, {time_base::ns, 1}, "1970-01-01T00:00:00.000000001"},
            {601, {time_base::M, 1}, "2020-02"},
            {-1971, {time_base::Y, 1}, "-001"},
            {-2970, {time_base::Y, 1}, "-1000"},
            {-971, {time_base::Y, 1}, "0999"},
            {-365000, {time_base::D, 1}, "0970-08-31"},
            {1, {time_base::W, 1}, "1970-01-08"},
            {-1, {time_base::h, 1}, "1969-12-31T23"},
            {1, {time_base::m, 1}, "1970-01-01T00:01"},
            {6, {time_base::s, 10}, "1970-01-01T00:01:00"},
            {std::numeric_limits<std::int64_t>::max(), {time_base::s, 1}, "292277026596-12-04T15:30:07"},
            {-1, {time_base::as, 1}, "1969-12-31T23:59:59.999999999999999999"},
            {1234, {time_base::ms, 1}, "1970-01-01T00:00:01.234"},
            {-1, {time_base::us, 1}, "1969-12-31T23:59:59.999999"},
            {zx::nat, {time_base::ns, 1}, "NaT"},
        };
        for (const auto& c : cases)
        {
            CAPTURE(c.count);
            CAPTURE(zx::to_string(c.unit));
            CHECK(zx::format_datetime(c.count, c.unit) == c.text);
        }
        // Timedeltas as ISO 8601 durations.
        CHECK(zx::format_timedelta(42, {time_base::s, 1}) == "PT42S");
        CHECK(zx::format_timedelta(-3, {time_base::D, 1}) == "-P3D");
        CHECK(zx::format_timedelta(42, {time_base::ns, 1}) == "PT0.000000042S");
        CHECK(zx::format_timedelta(1500, {time_base::ms, 1}) == "PT1.500S");
        CHECK(zx::format_timedelta(0, {time_base::s, 1}) == "PT0S");
        CHECK(zx::format_timedelta(7, {time_base::s, 10}) == "PT70S");
        CHECK(zx::format_timedelta(-90, {time_base::m, 1}) == "-PT90M");
        CHECK(zx::format_timedelta(2, {time_base::M, 1}) == "P2M");
        CHECK(zx::format_timedelta(zx::nat, {time_base::s, 1}) == "NaT");
    }

    TEST_CASE("v3 datetime arrays: zarr-python 3's data_type and NaT fill, written and read back exactly")
    {
        zx::memory_store s;
        using ns_time = ch::sys_time<ch::nanoseconds>;
        auto a = zx::create<ns_time, 1>(
            s, "t",
            zx::v3_options{.shape = {5}, .chunk_shape = {2}, .fill_value = zx::scalar::from_json("NaT")});
        const zx::json doc = zx::json::parse(zxtest::as_string_of(zx::get(s, "t/zarr.json")));
        CHECK(doc["data_type"] ==
              zx::json::parse(
                  R"({"name": "numpy.datetime64", "configuration": {"unit": "ns", "scale_factor": 1}})"));
        CHECK(doc["fill_value"] == "NaT");
        const xt::xtensor<ns_time, 1> v = {ns_time(ch::nanoseconds(std::numeric_limits<std::int64_t>::max())),
                                           ns_time(ch::nanoseconds(-1)), ns_time(ch::nanoseconds(zx::nat))};
        a.write({{0}, {3}}, v);
        const auto back = zx::open<ns_time, 1>(s, "t").read();
        for (std::size_t i = 0; i < 3; ++i)
        {
            CHECK(back(i) == v(i));
        }
        CHECK(back(4).time_since_epoch().count() == zx::nat); // a missing chunk: the fill value
        CHECK(zx::open<std::int64_t, 1>(s, "t").read()(1) == -1);
        // A timedelta with a scale factor; a unit the element type does not count is refused.
        using tens = ch::duration<std::int64_t, std::ratio<10>>;
        zx::create<tens, 1>(s, "d", zx::v3_options{.shape = {2}, .chunk_shape = {2}, .fill_value = tens(3)});
        const zx::json d = zx::json::parse(zxtest::as_string_of(zx::get(s, "d/zarr.json")));
        CHECK(d["data_type"] ==
              zx::json::parse(
                  R"({"name": "numpy.timedelta64", "configuration": {"unit": "s", "scale_factor": 10}})"));
        CHECK(d["fill_value"] == 3);
        CHECK(zx::open<tens, 1>(s, "d").read()(0) == tens(3));
        ZX_EXPECT_ERROR(zx::dtype_mismatch, "zarrxt.array.1", "d", zx::open<ch::seconds, 1>(s, "d"));
        ZX_EXPECT_ERROR(zx::dtype_mismatch, "zarrxt.array.1", "d", zx::open<ch::sys_time<tens>, 1>(s, "d"));
        ZX_EXPECT_ERROR(
            zx::array_error, "zarrxt.array.8", "",
            zx::create<tens, 1>(
                s, "e",
                zx::v3_options{.shape = {2}, .chunk_shape = {2}, .unit = time_unit{time_base::s, 1}}));
        // A fill value made from a std::chrono value says its unit: another unit is refused, not
        // reinterpreted (5 s is no fill of 5 ms), and so is a time fill for a number array.
        using ms_time = ch::sys_time<ch::milliseconds>;
        ZX_EXPECT_ERROR(
            zx::array_error, "zarrxt.array.8", "",
            zx::create<ms_time, 1>(
                s, "f", zx::v3_options{.shape = {2}, .chunk_shape = {2}, .fill_value = ch::seconds(5)}));
        ZX_EXPECT_ERROR(
            zx::array_error, "zarrxt.array.8", "",
            zx::create<ms_time, 1>(
                s, "f", zx::v2_options{.shape = {2}, .chunks = {2}, .fill_value = ch::seconds(5)}));
        ZX_EXPECT_ERROR(
            zx::array_error, "zarrxt.array.8", "",
            zx::create<std::int64_t, 1>(
                s, "f", zx::v3_options{.shape = {2}, .chunk_shape = {2}, .fill_value = ch::seconds(5)}));
        CHECK_FALSE(s.stat("f/zarr.json").has_value());
        CHECK_FALSE(s.stat("f/.zarray").has_value());
        auto f = zx::create<ms_time, 1>(
            s, "f",
            zx::v3_options{.shape = {2}, .chunk_shape = {2}, .fill_value = ms_time(ch::milliseconds(-7))});
        CHECK(f.read()(1) == ms_time(ch::milliseconds(-7)));
        CHECK(zx::create<ch::minutes, 1>(
                  s, "g",
                  zx::v2_options{.shape = {1},
                                 .chunks = {1},
                                 .fill_value = ch::duration<std::int64_t, std::ratio<60>>(2)})
                  .read()(0) == ch::minutes(2));
        // The unit given at run time, for a dtype given at run time.
        zx::v2_options o{.shape = {2}, .chunks = {2}, .unit = time_unit{time_base::m, 10}};
        auto core =
            zx::any_array<zx::memory_store>::core_type::create(s, "r", zx::dtype_id::timedelta64, o, {}, {});
        CHECK(zx::json::parse(zxtest::as_string_of(zx::get(s, "r/.zarray")))["dtype"] == "<m8[10m]");
        ZX_EXPECT_ERROR(
            zx::array_error, "zarrxt.array.8", "",
            zx::any_array<zx::memory_store>::core_type::create(
                s, "q", zx::dtype_id::timedelta64, zx::v2_options{.shape = {2}, .chunks = {2}}, {}, {}));
    }

    TEST_CASE("zarr-python 3's datetime document (corpus) opens as sys_time<nanoseconds>")
    {
        const std::string path =
            zxtest::env("ZARRXT_CORPUS") + "/zarr-python-metadata/v3/array/datatype_named_config.json";
        if (!std::filesystem::exists(path))
        {
            ZX_SKIP_CORPUS("corpus folder absent: datatype_named_config.json not checked");
        }
        zx::memory_store s;
        s.set("t/zarr.json", zx::as_bytes(zxtest::read_file(path)));
        auto a = zx::open<ch::sys_time<ch::nanoseconds>, 1>(s, "t");
        CHECK(a.shape()[0] == 10);
        CHECK(a.read()(9).time_since_epoch().count() == 0); // fill value 0: the epoch
        const auto& m = a.core()->metadata();
        CHECK(m.dtype.unit == time_unit{time_base::ns, 1});
        CHECK(zx::make_v3_array_document(m)["data_type"] ==
              zx::json::parse(zxtest::read_file(path))["data_type"]);
        // The corpus's data type documents: the same units written back the same way.
        const std::string types = zxtest::env("ZARRXT_CORPUS") + "/zarr-python-metadata/v3/data_type/";
        for (const auto& type : {std::pair{"numpy_datetime64", time_unit{time_base::ns, 1}},
                                 std::pair{"numpy_timedelta64", time_unit{time_base::s, 1}}})
        {
            const std::string folder = type.first;
            const time_unit unit = type.second;
            CAPTURE(folder);
            const zx::json dt = zx::json::parse(zxtest::read_file(types + folder + "/data_type.json"));
            zx::json doc = zx::json::parse(zxtest::read_file(path));
            doc["data_type"] = dt;
            const auto parsed = zx::parse_v3_array(doc);
            CHECK(parsed.dtype.unit == unit);
            CHECK(zx::make_v3_array_document(parsed)["data_type"] == dt);
        }
    }
}

TEST_SUITE("fixed strings")
{
    using namespace std::string_literals;

    TEST_CASE("numpy's |S n, <U n, >U n type strings parse and print; what numpy does not spell does not")
    {
        struct row
        {
            const char* text;
            zx::dtype_id id;
            std::size_t size;
            bool big;
        };
        for (const row r : {row{"|S7", zx::dtype_id::fixed_bytes, 7, false},
                            row{"<U13", zx::dtype_id::fixed_utf32, 52, false},
                            row{">U13", zx::dtype_id::fixed_utf32, 52, true},
                            row{"|S1", zx::dtype_id::fixed_bytes, 1, false},
                            row{"<U536870911", zx::dtype_id::fixed_utf32, 2147483644, false}})
        {
            CAPTURE(r.text);
            bool big = !r.big;
            std::size_t size = 0;
            CHECK(zx::dtype_from_v2_typestr(r.text, big, nullptr, &size) == r.id);
            CHECK(size == r.size);
            CHECK(big == r.big);
            CHECK(zx::v2_typestr(r.id, r.big, {}, r.size) == r.text);
        }
        for (const char* bad : {"|S0", "<U0", "<S3", ">S3", "|U3", "<U536870912", "|S2147483645", "|S", "<U",
                                "|S-1", "|S1x", "<U99999999999999"})
        {
            CAPTURE(bad);
            bool big = false;
            CHECK_FALSE(zx::dtype_from_v2_typestr(bad, big).has_value());
        }
    }

    TEST_CASE("base64 as RFC 4648 gives it; anything else is no base64")
    {
        const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                               {"f", "Zg=="},
                                                               {"fo", "Zm8="},
                                                               {"foo", "Zm9v"},
                                                               {"foob", "Zm9vYg=="},
                                                               {"fooba", "Zm9vYmE="},
                                                               {"foobar", "Zm9vYmFy"}};
        for (const auto& [plain, coded] : vectors)
        {
            CHECK(zx::detail::base64_encode(plain) == coded);
            CHECK(zx::detail::base64_decode(coded) == std::string(plain));
        }
        CHECK(zx::detail::base64_decode("/w==") == "\xff"s);
        for (const char* bad : {"Zg=", "Zg", "Z===", "Zh==", "Zm9=", "Zm 9", "Zg==Zg==", "=Zg=", "Zm8\xc3"})
        {
            CAPTURE(bad);
            CHECK_FALSE(zx::detail::base64_decode(bad).has_value());
        }
    }

    TEST_CASE("element values: trailing NULs pad, inner NULs stay; UTF-32 text is strict both ways")
    {
        std::byte e[12];
        zx::encode_fixed_string(zx::dtype_id::fixed_bytes, "a\0b"s, e, 5);
        CHECK(std::memcmp(e, "a\0b\0\0", 5) == 0);
        CHECK(zx::decode_fixed_string(zx::dtype_id::fixed_bytes, e, 5) == "a\0b"s);
        zx::encode_fixed_string(zx::dtype_id::fixed_utf32, "\u00e9\U0001F600", e, 12);
        const char32_t want[3] = {0xe9, 0x1f600, 0};
        CHECK(std::memcmp(e, want, 12) == 0);
        CHECK(zx::decode_fixed_string(zx::dtype_id::fixed_utf32, e, 12) == "\u00e9\U0001F600");
        // What cannot be stored as it is given is refused, never cut or replaced.
        ZX_EXPECT_ERROR(zx::array_error, "zarrxt.array.8", "",
                        zx::encode_fixed_string(zx::dtype_id::fixed_bytes, "toolong", e, 3));
        ZX_EXPECT_ERROR(zx::array_error, "zarrxt.array.8", "",
                        zx::encode_fixed_string(zx::dtype_id::fixed_bytes, "ab\0"s, e, 5));
        ZX_EXPECT_ERROR(zx::array_error, "zarrxt.array.8", "",
                        zx::encode_fixed_string(zx::dtype_id::fixed_utf32, "abcd", e, 12));
        for (const char* bad : {"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "a\xe2\x82", "\x80"})
        {
            CAPTURE(bad);
            ZX_EXPECT_ERROR(zx::array_error, "zarrxt.array.8", "",
                            zx::encode_fixed_string(zx::dtype_id::fixed_utf32, bad, e, 12));
        }
        // A stored code unit that is no code point has no text.
        for (const char32_t bad : {char32_t{0xd800}, char32_t{0x110000}, char32_t{0xffffffff}})
        {
            const char32_t units[3] = {'a', bad, 0};
            std::memcpy(e, units, 12);
            ZX_EXPECT_ERROR(zx::codec_error, "zarrxt.codec.8", "",
                            zx::decode_fixed_string(zx::dtype_id::fixed_utf32, e, 12));
        }
    }

    TEST_CASE("std::string arrays in v2 and v3: fill values, missing chunks, partial writes, selections, "
              "sharding, F order, read_checked")
    {
        zx::memory_store s;
        // v3 <U3 sharded, F order inside: the documents zarr-python 3 writes for these types.
        auto a = zx::create<std::string, 2>(
            s, "u",
            zx::v3_options{.shape = {4, 5},
                           .chunk_shape = {4, 4},
                           .codecs = {zx::sharded({2, 2}, {zx::codec_spec("transpose", {{"order", {1, 0}}}),
                                                           zx::codec_spec("bytes", {{"endian", "big"}}),
                                                           zx::codec_spec("zstd", {{"level", 1}})})},
                           .fill_value = "\u00f8",
                           .string = zx::fixed_length_utf32(3)});
        const zx::json doc = zx::json::parse(zxtest::as_string_of(zx::get(s, "u/zarr.json")));
        CHECK(doc["data_type"] ==
              zx::json::parse(R"({"name": "fixed_length_utf32", "configuration": {"length_bytes": 12}})"));
        CHECK(doc["fill_value"] == "\u00f8");
        CHECK(a.fill_value() == "\u00f8");
        a.write({{0, 0}, {2, 3}}, xt::xtensor<std::string, 2>{{"a", "bb", "ccc"}, {"", "\u65e5", "x\0y"s}});
        a.write({{1, 1}, {1, 1}},
                xt::xtensor<std::string, 2>{{"new"}}); // read-modify-write of an inner chunk
        auto all = zx::open<std::string, 2>(s, "u").read();
        CHECK(all(0, 2) == "ccc");
        CHECK(all(1, 0) == "");
        CHECK(all(1, 1) == "new");
        CHECK(all(1, 2) == "x\0y"s);
        CHECK(all(3, 4) == "\u00f8"); // never written: the fill value
        CHECK(a.at(0, 1) == "bb");
        const auto picked = a.read(xt::range(0, 2), 2);
        REQUIRE(picked.size() == 2);
        CHECK(picked(1) == "x\0y"s);
        a.write(zx::select(xt::keep(3), xt::keep(0, 4)), xt::xtensor<std::string, 2>{{"p", "q"}});
        CHECK(a.read_points({{3, 0}, {3, 4}, {3, 1}}) == xt::xtensor<std::string, 1>{"p", "q", "\u00f8"});
        // Writing only the fill value leaves nothing stored (the chunk equals its fill bytes).
        zx::memory_store s2;
        auto e = zx::create<std::string, 1>(
            s2, "e",
            zx::v3_options{.shape = {4}, .chunk_shape = {2}, .string = zx::null_terminated_bytes(2)});
        e.write({{0}, {4}}, xt::xtensor<std::string, 1>{"", "", "ab", ""});
        CHECK_FALSE(s2.stat("e/c/0").has_value());
        CHECK(s2.stat("e/c/1").has_value());
        const zx::json edoc = zx::json::parse(zxtest::as_string_of(zx::get(s2, "e/zarr.json")));
        CHECK(edoc["data_type"] ==
              zx::json::parse(R"({"name": "null_terminated_bytes", "configuration": {"length_bytes": 2}})"));
        CHECK(edoc["fill_value"] == "");
        CHECK(edoc["codecs"][0] == zx::json::parse(R"({"name": "bytes"})"));
        // v2 |S with a base64 fill; a value that does not fit is refused before any chunk changes.
        auto b = zx::create<std::string, 1>(
            s, "b",
            zx::v2_options{
                .shape = {3}, .chunks = {3}, .fill_value = "\x01", .string = zx::null_terminated_bytes(2)});
        CHECK(zx::json::parse(zxtest::as_string_of(zx::get(s, "b/.zarray")))["fill_value"] == "AQ==");
        ZX_EXPECT_ERROR(zx::array_error, "zarrxt.array.8", "",
                        b.write({{0}, {3}}, xt::xtensor<std::string, 1>{"ok", "xyz", "ok"}));
        CHECK_FALSE(s.stat("b/0").has_value());
        CHECK(b.read() == xt::xtensor<std::string, 1>{"\x01", "\x01", "\x01"});
        // Other element types do not open a string array, nor std::string a number array.
        ZX_EXPECT_ERROR(zx::dtype_mismatch, "zarrxt.array.1", "b", zx::open<std::uint8_t, 1>(s, "b"));
        zx::create<float, 1>(s, "f", zx::v2_options{.shape = {1}, .chunks = {1}});
        ZX_EXPECT_ERROR(zx::dtype_mismatch, "zarrxt.array.1", "f", zx::open<std::string, 1>(s, "f"));
        ZX_EXPECT_ERROR(zx::array_error, "zarrxt.array.8", "",
                        zx::create<std::string, 1>(s, "n", zx::v2_options{.shape = {1}, .chunks = {1}}));
        ZX_EXPECT_ERROR(
            zx::array_error, "zarrxt.array.8", "",
            zx::create<std::string, 1>(
                s, "n", zx::v2_options{.shape = {1}, .chunks = {1}, .string = zx::fixed_length_utf32(0)}));
        ZX_EXPECT_ERROR(
            zx::array_error, "zarrxt.array.8", "",
            zx::create<float, 1>(
                s, "n", zx::v2_options{.shape = {1}, .chunks = {1}, .string = zx::fixed_length_utf32(2)}));
        ZX_EXPECT_ERROR(zx::metadata_error, "zarrxt.metadata.6", "n/.zarray",
                        zx::create<std::string, 1>(s, "n",
                                                   zx::v2_options{.shape = {1},
                                                                  .chunks = {1},
                                                                  .fill_value = "long",
                                                                  .string = zx::fixed_length_utf32(2)}));
        // A stored <U code unit that is no code point: an error naming the chunk, or with
        // read_checked the fill value and a problem.
        auto c = zx::create<std::string, 1>(s, "c",
                                            zx::v2_options{.shape = {4},
                                                           .chunks = {2},
                                                           .compressor = std::nullopt,
                                                           .fill_value = "z",
                                                           .string = zx::fixed_length_utf32(1)});
        c.write({{0}, {4}}, xt::xtensor<std::string, 1>{"a", "b", "c", "d"});
        const std::uint32_t junk[2] = {0xd800, 'f'};
        s.set("c/1", zx::byte_view(reinterpret_cast<const std::byte*>(junk), 8));
        ZX_EXPECT_ERROR(zx::codec_error, "zarrxt.codec.8", "c/1", c.read());
        const auto checked = c.read_checked({{0}, {4}});
        CHECK(checked.data == xt::xtensor<std::string, 1>{"a", "b", "z", "f"});
        REQUIRE(checked.problems.size() == 1);
        CHECK(checked.problems[0].key == "c/1");
        CHECK(checked.problems[0].id == "zarrxt.codec.8");
    }
}
