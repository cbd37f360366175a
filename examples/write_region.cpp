// write_region: write parts of an array; chunks that were never written read as the fill value,
// and chunks that become all fill value are removed from the store.
//   usage: write_region DIR
#include <zarrxt/zarrxt.hpp>

#include <iostream>

namespace zx = zarrxt;

int main(int argc, char** argv)
{
    if (argc < 2)
        return 2;
    zx::filesystem_store store(argv[1]);
    auto a = zx::create<float, 2>(store, "field",
                                  zx::v3_options{.shape = {4, 6}, .chunk_shape = {2, 3}, .fill_value = -1.0f});
    a.write({{1, 1}, {2, 2}}, xt::xtensor<float, 2>{{1.5f, 2.5f}, {3.5f, 4.5f}}); // touches two chunks
    auto all = a.read();
    for (std::size_t i = 0; i < 4; ++i)
    {
        for (std::size_t j = 0; j < 6; ++j)
            std::cout << (j ? " " : "") << all(i, j);
        std::cout << "\n";
    }
    std::cout << "chunks stored: " << store.list("field/c").size() << "\n";
    a.write({{0, 0}, {2, 3}}, xt::xtensor<float, 2>{{-1, -1, -1}, {-1, -1, -1}}); // chunk (0,0) is all fill now
    std::cout << "chunks stored after clearing one: " << store.list("field/c").size() << "\n";
    a.write({{0, 0}, {4, 6}}, xt::xtensor<float, 2>(2.0f * a.read() + 1.0f)); // any xtensor expression
    std::cout << "corner after 2x+1: " << a.read({{3, 5}, {1, 1}})(0, 0) << "\n";
}
