// Fuzz target: one v2 .zarray (or .zgroup) document. An array is lowered into the v3-shaped model,
// its codec chain bound, and the model written back as a .zarray (v2_layout_of, filters included)
// and parsed again: the lowered chain, geometry, dtype and fill value must survive the trip.
#include "fuzz_support.hpp"

namespace
{

using namespace zxfuzz;

std::string specs_dump(const std::vector<zx::codec_spec>& specs)
{
    json a = json::array();
    for (const auto& s : specs)
    {
        a.push_back(s.to_json());
    }
    return a.dump();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    planted_crash(data, size);
    const zx::limit_values lv = limits();
    json doc;
    if (!guarded([&] { doc = zx::parse_document(bytes_of(data, size), lv, ".zarray"); }))
    {
        return 0;
    }
    if (doc.is_object() && !doc.contains("shape"))
    {
        guarded([&] { (void)zx::parse_v2_group(doc); });
        return 0;
    }
    zx::array_metadata m;
    if (!guarded([&] { m = zx::parse_v2_array(doc); }))
    {
        return 0;
    }
    guarded(
        [&]
        {
            const auto chain = zx::bind_chain<zx::dynamic_chain>(m, lv);
            (void)chain.specs();
        });
    std::vector<std::uint64_t> last = m.grid_shape();
    for (auto& c : last)
    {
        c = c == 0 ? 0 : c - 1;
    }
    (void)m.chunk_key(last);

    json written;
    zx::array_metadata again;
    if (!guarded(
            [&]
            {
                written =
                    zx::make_v2_array_document(m.shape, m.chunk_shape, m.dtype, m.fill, zx::v2_layout_of(m));
                again = zx::parse_v2_array(written);
            }))
    {
        fail("an array's own .zarray is refused: " + written.dump() + "\nread from: " + doc.dump());
    }
    require(again.shape == m.shape && again.chunk_shape == m.chunk_shape && again.dtype == m.dtype &&
                again.key_encoding == m.key_encoding,
            "geometry changes when read back: " + written.dump());
    require(specs_dump(again.codecs) == specs_dump(m.codecs),
            "lowered chain changes when read back: " + specs_dump(m.codecs) + " -> " +
                specs_dump(again.codecs));
    require(zx::fill_value_to_json(again.fill, again.dtype, 2).dump() ==
                zx::fill_value_to_json(m.fill, m.dtype, 2).dump(),
            "fill value changes when read back: " + written.dump());
    return 0;
}
