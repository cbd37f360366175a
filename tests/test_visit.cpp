// Runtime dispatch: open_any + visit reach the typed array of the stored dtype and rank.
#include "array_support.hpp"

#include <algorithm>

namespace zx = zarrxt;

TEST_SUITE("visit")
{
    TEST_CASE_TEMPLATE_DEFINE("visit reaches array<T, N> for the stored dtype", T, visit_case)
    {
        zx::memory_store s;
        auto a = zx::create<T, 2>(s, "x", zx::v3_options{.shape = {3, 4}, .chunk_shape = {2, 2}});
        a.write({{0, 0}, {3, 4}}, zxtest::make_data<T, 2>({3, 4}));
        auto any = zx::open_any(s, "x");
        CHECK(any.dtype() == zx::dtype_of<T>());
        CHECK(any.rank() == 2);
        // The lambda is instantiated for every dtype and rank (14 x 5 per T): it only records what
        // it saw, and the checks run once, outside (assertions inside would be compiled 980 times).
        struct seen
        {
            std::string dtype;
            std::size_t rank = 0;
            bool same_type = false;
            bool data_ok = false;
        };
        const seen got =
            zx::visit(any,
                      [](auto& typed)
                      {
                          using A = std::decay_t<decltype(typed)>;
                          seen r{std::string(zx::name(A::dtype)), A::rank,
                                 std::is_same_v<typename A::value_type, T>, false};
                          if constexpr (A::rank == 2 && std::is_same_v<typename A::value_type, T>)
                          {
                              const auto v = typed.read();
                              const auto want = zxtest::make_data<T, 2>({3, 4});
                              r.data_ok =
                                  v.shape() == want.shape() &&
                                  std::equal(v.begin(), v.end(), want.begin(),
                                             [](const T& x, const T& y) { return zxtest::same_bits(x, y); });
                          }
                          return r;
                      });
        CHECK(got.same_type);
        CHECK(got.rank == 2);
        CHECK(got.data_ok);
        CHECK(got.dtype == std::string(zx::name(zx::dtype_of<T>())));
        std::vector<std::byte> raw(12 * sizeof(T));
        any.read_bytes({0, 0}, {3, 4}, raw.data());
        T fifth;
        std::memcpy(&fifth, raw.data() + 5 * sizeof(T), sizeof(T));
        CHECK(zxtest::same_bits(fifth, zxtest::value_at<T>(5)));
    }
    TEST_CASE_TEMPLATE_APPLY(visit_case, zxtest::all_element_types);

    TEST_CASE("visit refuses ranks outside its list and as<> checks the type")
    {
        zx::memory_store s;
        zx::create<std::uint8_t, 5>(s, "r5", zx::v3_options{.shape = {1, 1, 1, 1, 2}, .chunk_shape = {1, 1, 1, 1, 2}});
        auto any = zx::open_any(s, "r5");
        CHECK_THROWS_AS(zx::visit(any, [](auto&) {}), zx::rank_mismatch);
        int hits = 0;
        zx::visit<zx::ranks<5>>(any, [&](auto& typed) { hits += static_cast<int>(typed.rank); });
        CHECK(hits == 5);
        CHECK_THROWS_AS((any.as<float, 5>()), zx::dtype_mismatch);
        std::vector<std::uint8_t> out(2, 9);
        any.write_bytes({0, 0, 0, 0, 0}, {1, 1, 1, 1, 2}, reinterpret_cast<const std::byte*>("\x01\x02"));
        any.read_bytes({0, 0, 0, 0, 0}, {1, 1, 1, 1, 2}, reinterpret_cast<std::byte*>(out.data()));
        CHECK(out == std::vector<std::uint8_t>{1, 2});
    }
}
