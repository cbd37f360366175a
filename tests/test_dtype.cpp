// dtype_traits and the runtime dtype table agree on every supported element type.
#include "test_support.hpp"

#include <zarrxt/dtype.hpp>

#include <complex>

namespace zx = zarrxt;

using all_types = std::tuple<bool, std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t, std::uint16_t,
                             std::uint32_t, std::uint64_t, zx::float16, float, double, std::complex<float>,
                             std::complex<double>>;

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
