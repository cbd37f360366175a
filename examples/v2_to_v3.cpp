// v2_to_v3: copy a Zarr v2 array (Fortran order, zlib) into a new Zarr v3 array with a different
// chunking and codec, keeping attributes, then compare.
//   usage: v2_to_v3 DIR
#include <zarrxt/zarrxt.hpp>

#include <iostream>

namespace zx = zarrxt;

int main(int argc, char** argv)
{
    if (argc < 2)
        return 2;
    zx::filesystem_store store(argv[1]);
    auto v2 = zx::create<double, 2>(store, "old",
                                    zx::v2_options{.shape = {5, 7}, .chunks = {2, 3},
                                                   .compressor = zx::codec_spec("zlib", {{"level", 1}}), .order = 'F',
                                                   .attributes = {{"units", "m/s"}}});
    xt::xtensor<double, 2> d = xt::xtensor<double, 2>::from_shape({5, 7});
    for (std::size_t i = 0; i < d.size(); ++i)
        d.data()[i] = 0.5 * static_cast<double>(i);
    v2.write({{0, 0}, {5, 7}}, d);

    auto src = zx::open<double, 2>(store, "old");
    auto dst = zx::create<double, 2>(store, "new",
                                     zx::v3_options{.shape = {5, 7}, .chunk_shape = {5, 4},
                                                    .codecs = {zx::codec::bytes{}, zx::codec::gzip{.level = 6}},
                                                    .attributes = src.attributes()});
    dst.write({{0, 0}, {5, 7}}, src.read());

    auto check = zx::open<double, 2>(store, "new");
    std::cout << "v" << src.zarr_format() << " codecs:";
    for (const auto& c : src.codecs())
        std::cout << " " << c.name;
    std::cout << "\nv" << check.zarr_format() << " codecs:";
    for (const auto& c : check.codecs())
        std::cout << " " << c.name;
    std::cout << "\nattributes: " << check.attributes().dump() << "\n";
    std::cout << "identical: " << (check.read() == d ? "yes" : "no") << "\n";
}
