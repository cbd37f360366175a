// Fuzz target: one zarr.json document. Parsed as a v3 array or group; an array's codec chain is
// bound (that is where codec configurations are checked), and its model is written back as a
// document and parsed again: what zarrxt writes, zarrxt must read back to the same document.
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    using namespace zxfuzz;
    const zx::limit_values lv = limits();
    json doc;
    if (!guarded([&] { doc = zx::parse_document(bytes_of(data, size), lv, "zarr.json"); }))
    {
        return 0;
    }
    std::string node_type;
    if (!guarded([&] { node_type = zx::v3_node_type(doc); }))
    {
        return 0;
    }
    if (node_type == "group")
    {
        zx::group_metadata g;
        if (guarded([&] { g = zx::parse_v3_group(doc); }))
        {
            const json written = zx::make_v3_group_document(g.attributes);
            if (!guarded([&] { (void)zx::parse_v3_group(written); }))
            {
                fail("a group's own document is refused: " + written.dump());
            }
        }
        return 0;
    }
    zx::array_metadata m;
    if (!guarded([&] { m = zx::parse_v3_array(doc); }))
    {
        return 0;
    }
    guarded(
        [&]
        {
            const auto chain = zx::bind_chain<zx::dynamic_chain>(m, lv);
            (void)chain.specs();
            (void)chain.fixed_encoded_size();
        });
    // The key of the last chunk: the grid arithmetic on extreme shapes.
    std::vector<std::uint64_t> last = m.grid_shape();
    for (auto& c : last)
    {
        c = c == 0 ? 0 : c - 1;
    }
    (void)m.chunk_key(last);
    // Every axis's last element lies in the chunk the grid maps it to (rectilinear grids: runs
    // looked up by binary search, never expanded).
    for (std::size_t d = 0; d < m.rank(); ++d)
    {
        if (m.shape[d] == 0)
        {
            continue;
        }
        const std::uint64_t i = m.shape[d] - 1;
        const std::uint64_t c = m.chunk_index(d, i);
        const std::uint64_t start = m.chunk_start(d, c);
        if (c != last[d] || start > i || i - start >= m.chunk_edge(d, c) ||
            m.chunk_edge(d, c) > m.chunk_shape[d])
        {
            fail("the grid maps the last element of axis " + std::to_string(d) + " outside its chunk");
        }
    }

    json written;
    zx::array_metadata again;
    if (!guarded(
            [&]
            {
                written = zx::make_v3_array_document(m);
                again = zx::parse_v3_array(written);
            }))
    {
        fail("an array's own document is refused: " + written.dump());
    }
    const json rewritten = zx::make_v3_array_document(again);
    require(rewritten.dump() == written.dump(),
            "array document changes when read back:\n" + written.dump() + "\n" + rewritten.dump());
    return 0;
}
