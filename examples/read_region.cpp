// read_region: open an existing array without knowing how it is stored and read a region of it.
//   usage: read_region DIR
#include <zarrxt/zarrxt.hpp>

#include <iostream>

namespace zx = zarrxt;

int main(int argc, char** argv)
{
    if (argc < 2)
    {
        std::cerr << "usage: read_region DIR\n";
        return 2;
    }
    zx::filesystem_store store(argv[1]);
    // Some other program wrote this array (here we write it first so the example stands alone).
    auto w = zx::create<std::int32_t, 2>(store, "temperature", zx::v2_options{.shape = {6, 8}, .chunks = {4, 4}});
    xt::xtensor<std::int32_t, 2> t = xt::xtensor<std::int32_t, 2>::from_shape({6, 8});
    for (std::size_t i = 0; i < 6; ++i)
        for (std::size_t j = 0; j < 8; ++j)
            t(i, j) = static_cast<std::int32_t>(10 * i + j);
    w.write({{0, 0}, {6, 8}}, t);

    // The reader states what it expects; the format (v2 here) is found from the metadata.
    auto a = zx::open<std::int32_t, 2>(store, "temperature");
    auto block = a.read({{2, 3}, {3, 4}}); // rows 2..4, columns 3..6: spans four chunks
    std::cout << "zarr_format " << a.zarr_format() << ", shape " << a.shape()[0] << "x" << a.shape()[1] << "\n";
    for (std::size_t i = 0; i < block.shape()[0]; ++i)
    {
        for (std::size_t j = 0; j < block.shape()[1]; ++j)
            std::cout << (j ? " " : "") << block(i, j);
        std::cout << "\n";
    }
    try
    {
        zx::open<float, 2>(store, "temperature");
    }
    catch (const zx::dtype_mismatch& e)
    {
        std::cout << "as float: " << e.id() << "\n";
    }
}
