// visit_unknown: handle arrays whose dtype and rank are known only from their metadata.
//   usage: visit_unknown DIR
#include <zarrxt/zarrxt.hpp>

#include <iostream>

namespace zx = zarrxt;

int main(int argc, char** argv)
{
    if (argc < 2)
        return 2;
    zx::filesystem_store store(argv[1]);
    zx::create<std::uint8_t, 3>(store, "mask", zx::v3_options{.shape = {2, 3, 4}, .chunk_shape = {1, 3, 4}})
        .write({{0, 0, 0}, {2, 3, 4}}, xt::ones<std::uint8_t>({2, 3, 4}));
    zx::create<double, 1>(store, "series", zx::v2_options{.shape = {3}, .chunks = {2}})
        .write({{0}, {3}}, xt::xtensor<double, 1>{0.5, 1.5, 2.5});

    for (const char* path : {"mask", "series"})
    {
        auto any = zx::open_any(store, path);
        // The lambda is compiled for each element type and for ranks 0..4.
        zx::visit(any, [&](auto& typed) {
            auto values = typed.read();
            double sum = 0;
            for (auto v : values)
            {
                if constexpr (requires { v.real(); })
                    sum += static_cast<double>(v.real()); // complex: sum the real parts
                else
                    sum += static_cast<double>(v);
            }
            std::cout << path << ": " << zx::name(typed.dtype) << ", rank " << typed.rank << ", sum " << sum << "\n";
        });
    }
}
