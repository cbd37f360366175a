// Fuzz target: a kerchunk reference file (store/kerchunk.hpp, detail/kerchunk_refs.hpp).
//
// Input: the reference file's text. It is parsed under small caps (1,000 references, 1 MiB after
// expansion, JSON nesting 64); every target it names is the same 256-byte object of a memory
// store, whatever its URL. Every listed key is read whole and in a range, the range must equal the
// same bytes of the whole read, and stat must agree with the whole read's size; then all keys are
// announced to the fetch stage and read again, which must give the same bytes. Whatever the text,
// the outcome is a zarrxt::error or success.
#include "fuzz_support.hpp"

#include <zarrxt/store/kerchunk.hpp>
#include <zarrxt/store/memory.hpp>

#include <cstring>
#include <map>

namespace
{

using namespace zxfuzz;

zx::memory_store target_store()
{
    zx::memory_store m;
    std::string bytes(256, '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i)
    {
        bytes[i] = static_cast<char>(i * 7 + 3);
    }
    // The target's key is the URL's last segment: a few likely names, the rest absent (store.13).
    for (const char* name : {"t.bin", "data.bin", "a", "u", "x.nc", "target"})
    {
        m.set(name, zx::as_bytes(bytes));
    }
    return m;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const zx::memory_store m = target_store();
    zx::kerchunk_options o;
    o.max_refs = 1000;
    o.max_expanded_bytes = 1 << 20;
    o.max_reference_bytes = 1 << 20;
    o.target = "t.bin";
    std::optional<zx::kerchunk_store> k;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    if (!guarded(
            [&]
            { k.emplace(text, "dir/refs.json", o, [&](const std::string&) { return zx::any_store(m); }); }))
    {
        return 0;
    }
    require(k->size() <= o.max_refs, "more references than max_refs");
    const std::uint64_t cap = fuzz_limits{}.max_chunk_bytes;
    std::map<std::string, std::string> whole;
    const auto keys = k->list("");
    require(keys.size() == k->size(), "list(\"\") does not list every reference");
    for (const auto& key : keys)
    {
        guarded(
            [&]
            {
                const auto r = k->read(key, zx::byte_range::all(), cap);
                require(r.has_value(), "a listed key is absent: " + key);
                const auto info = k->stat(key);
                require(info.has_value() && info->size == r->bytes.size() && r->object_size == info->size,
                        "stat and a whole read disagree: " + key);
                whole.emplace(key, std::string(zx::as_string_view(r->bytes.view())));
                const std::uint64_t n = info->size;
                const auto part = k->read(key, zx::byte_range::of(n / 3, n / 3 + 1), cap);
                require(part.has_value(), "a range of a listed key is absent: " + key);
                const auto [begin, end] = zx::resolve_range(zx::byte_range::of(n / 3, n / 3 + 1), n);
                require(part->bytes.size() == end - begin &&
                            (part->bytes.empty() || std::memcmp(part->bytes.data(), r->bytes.data() + begin,
                                                                part->bytes.size()) == 0),
                        "a range differs from the same bytes of the whole read: " + key);
            });
    }
    guarded([&] { k->prefetch_objects(keys, cap); });
    for (const auto& entry : whole)
    {
        // Not a structured binding: clang 14 cannot capture one in the lambda below.
        const std::string& key = entry.first;
        const std::string& bytes = entry.second;
        guarded(
            [&]
            {
                const auto r = k->read(key, zx::byte_range::all(), cap);
                require(r.has_value() && zx::as_string_view(r->bytes.view()) == bytes,
                        "a read after the fetch stage differs: " + key);
            });
    }
    guarded([&] { k->cancel_prefetch(keys); });
    return 0;
}
