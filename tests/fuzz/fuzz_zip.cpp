// Fuzz target: a zip archive (store/zip_store.hpp).
//
// Input: the archive's bytes. It is opened from a memory store under the fuzz limits; every name
// it lists is read whole, then in a range and a suffix, and each part must equal the same bytes of
// the whole read (a STORED entry's range comes from the archive, a DEFLATE one's from inflating it
// all: two paths that must agree). Whatever the bytes, the outcome is a zarrxt::error or success.
#include "fuzz_support.hpp"

#include <zarrxt/store/memory.hpp>
#include <zarrxt/store/zip_store.hpp>

#include <cstring>

namespace
{

using namespace zxfuzz;

void read_entry(const zx::zip_store<zx::memory_store>& z, const std::string& key)
{
    const std::uint64_t cap = fuzz_limits{}.max_chunk_bytes;
    std::optional<zx::read_result> whole;
    guarded([&] { whole = z.read(key, zx::byte_range::all(), cap); });
    const auto info = z.stat(key);
    require(info.has_value(), "a listed name has no stat: " + key);
    if (!whole)
    {
        return;
    }
    require(whole->bytes.size() == info->size && whole->object_size == info->size,
            "a whole read's size differs from stat's: " + key);
    const std::uint64_t n = info->size;
    const zx::byte_range ranges[] = {zx::byte_range::of(n / 3, n / 3 + 1), zx::byte_range::last(n / 2 + 1)};
    for (const auto& r : ranges)
    {
        guarded(
            [&]
            {
                const auto part = z.read(key, r, cap);
                require(part.has_value(), "a range of a listed name is absent: " + key);
                const auto [begin, end] = zx::resolve_range(r, n);
                require(part->bytes.size() == end - begin, "a range has the wrong length: " + key);
                require(part->bytes.empty() || std::memcmp(part->bytes.data(), whole->bytes.data() + begin,
                                                           part->bytes.size()) == 0,
                        "a range differs from the same bytes of the whole read: " + key);
            });
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    zx::memory_store m;
    m.set("a.zip", bytes_of(data, size));
    zx::zip_options o;
    o.max_directory_bytes = fuzz_limits{}.max_metadata_bytes;
    o.max_inflated_entry_bytes = fuzz_limits{}.max_chunk_bytes;
    std::optional<zx::zip_store<zx::memory_store>> z;
    if (!guarded([&] { z.emplace(m, "a.zip", o); }))
    {
        return 0;
    }
    std::vector<std::string> names;
    guarded([&] { names = z->list(""); });
    for (const auto& name : names)
    {
        read_entry(*z, name);
    }
    guarded([&] { (void)z->list_dir(""); });
    return 0;
}
