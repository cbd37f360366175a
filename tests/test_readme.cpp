// The README's example, compiled and run (nlohmann's unit-readme idea: the README cannot rot).
#include "support/test_support.hpp"

#include <zarrxt/zarrxt.hpp>

TEST_CASE("README example")
{
    zxtest::temp_dir dir;
    const auto here = std::filesystem::current_path();
    std::filesystem::current_path(dir.path());
    {
        namespace zx = zarrxt;
        zx::filesystem_store prep{"volume.zarr"};
        zx::create<float, 3>(prep, "raw", zx::v3_options{.shape = {32, 256, 256}, .chunk_shape = {16, 64, 64}});
        // --- README begins
        zx::filesystem_store store{"volume.zarr"};
        auto img = zx::open<float, 3>(store, "raw");                       // v2 or v3, checked against <float, 3>
        xt::xtensor<float, 3> block = img.read({{0, 64, 128}, {16, 64, 64}}); // offset, extent
        img.write({{0, 64, 128}, {16, 64, 64}}, block * 2.0f);
        // --- README ends
        CHECK(block.shape()[0] == 16);
        CHECK(img.read({{0, 64, 128}, {1, 1, 1}})(0, 0, 0) == 0.0f);
    }
    std::filesystem::current_path(here);
}
