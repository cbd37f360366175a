// Fuzz target: a whole hierarchy in a memory_store, opened and read.
//
// Input: sections joined by section_mark (fuzz_support.hpp). The first is a control section
// ([flags] [path choice] [region bytes...]); each further one is "key\nvalue", stored as is. The
// array at "" or "a" is opened with fuzz_limits, read whole and in a sub-region (under the throw
// policy, or under collect when flags bit 0 is set), and with flags bit 1 the sub-region is
// written (keeping all-fill chunks when bit 2 is set) and read back. Oracles: the two reads agree
// where they overlap, booleans read as 0 or 1, and a region written is read back as written
// (unless a lossy filter rounds it).
#include "fuzz_support.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace
{

using namespace zxfuzz;
using core_type = zx::detail::array_core<zx::dynamic_chain, zx::memory_store, zx::operation_index_cache<>,
                                         zx::inline_executor, fuzz_limits>;
constexpr std::size_t max_read_rank = 4;

struct control
{
    std::uint8_t flags = 0;
    std::uint8_t path = 0;
    std::string_view region; ///< bytes choosing the sub-region
};

std::uint8_t at(std::string_view s, std::size_t i)
{
    return i < s.size() ? static_cast<std::uint8_t>(s[i]) : 0;
}

/// Variable-length values made comparable byte for byte: each vlen_element (a pointer into one
/// read's arena) becomes its length and an FNV-1a hash of its bytes.
void canonical_vlen(zx::buffer& b)
{
    for (std::size_t i = 0; i + sizeof(zx::vlen_element) <= b.size(); i += sizeof(zx::vlen_element))
    {
        zx::vlen_element e;
        std::memcpy(&e, b.data() + i, sizeof e);
        std::uint64_t h = 14695981039346656037ull;
        for (char ch : e.view())
        {
            h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
        }
        const std::uint64_t pair[2] = {e.size, h};
        std::memcpy(b.data() + i, pair, sizeof pair);
    }
}

/// Reads `r` into a new buffer; nothing (and false) when the read fails with a zarrxt error.
template <std::size_t N>
bool read(core_type& core, const zx::region<N>& r, zx::corruption_policy policy, zx::buffer& out)
{
    return guarded(
        [&]
        {
            zx::detail::check_region(r, core.metadata().shape);
            zx::check_limit("max_read_elements", r.elements(), core.limits().max_read_elements);
            out.resize_discard(static_cast<std::size_t>(r.elements() * core.metadata().element_size()));
            zx::problem_list problems;
            zx::value_arena arena(core.limits().max_bytes_in_flight);
            core.template read<N>(r, out.data(), zx::kernel::c_strides<N>(r.extent), policy,
                                  policy == zx::corruption_policy::collect ? &problems : nullptr, &arena);
            if (zx::is_vlen(core.metadata().dtype))
            {
                canonical_vlen(out);
                return;
            }
            if (core.metadata().dtype == zx::dtype_id::bool_)
            {
                for (std::size_t i = 0; i < out.size(); ++i)
                {
                    require(static_cast<std::uint8_t>(out.data()[i]) <= 1, "a bool read as neither 0 nor 1");
                }
            }
        });
}

/// A sub-region chosen by the control bytes: anywhere in the array, up to 32 elements per axis.
template <std::size_t N>
zx::region<N> sub_region(const std::vector<std::uint64_t>& shape, std::string_view bytes)
{
    zx::region<N> r;
    for (std::size_t d = 0; d < N; ++d)
    {
        const auto s = static_cast<unsigned __int128>(shape[d]);
        r.offset[d] = static_cast<std::uint64_t>(s * at(bytes, 2 * d) / 256);
        r.extent[d] = std::min<std::uint64_t>(shape[d] - r.offset[d], at(bytes, 2 * d + 1) % 33);
    }
    return r;
}

/// True when `part` (a read of `sub`) equals the same elements of `whole` (a read of `all`).
template <std::size_t N>
bool same_elements(const zx::buffer& whole, const zx::region<N>& all, const zx::buffer& part,
                   const zx::region<N>& sub, std::size_t width)
{
    if constexpr (N == 0)
    {
        return std::memcmp(whole.data(), part.data(), width) == 0;
    }
    else
    {
        // Row by row: runs along the last axis, located through each buffer's own strides.
        const auto ws = zx::kernel::c_strides<N>(all.extent);
        const auto ps = zx::kernel::c_strides<N>(sub.extent);
        const std::uint64_t rows = sub.elements() / sub.extent[N - 1];
        const std::size_t run = static_cast<std::size_t>(sub.extent[N - 1]) * width;
        for (std::uint64_t row = 0; row < rows; ++row)
        {
            std::uint64_t rest = row;
            auto woff = static_cast<std::int64_t>(sub.offset[N - 1]);
            std::int64_t poff = 0;
            for (std::size_t d = N - 1; d-- > 0;)
            {
                const std::uint64_t i = rest % sub.extent[d];
                rest /= sub.extent[d];
                woff += static_cast<std::int64_t>(sub.offset[d] + i) * ws[d];
                poff += static_cast<std::int64_t>(i) * ps[d];
            }
            if (std::memcmp(whole.data() + woff * static_cast<std::int64_t>(width),
                            part.data() + poff * static_cast<std::int64_t>(width), run) != 0)
            {
                return false;
            }
        }
        return true;
    }
}

/// True when the chain (inner chains included) rounds values on encode, so a write need not read
/// back bit for bit.
bool lossy(const core_type& core)
{
    json codecs = json::array();
    for (const auto& c : core.chain().specs())
    {
        codecs.push_back(c.to_json());
    }
    const std::string text = codecs.dump();
    // Rounding filters, casts and scalings, and packbits keeping only some bits of each value.
    return text.find("numcodecs.bitround") != std::string::npos ||
           text.find("numcodecs.fixedscaleoffset") != std::string::npos ||
           text.find("\"cast_value\"") != std::string::npos || text.find("\"scale_offset\"") != std::string::npos ||
           text.find("\"first_bit\"") != std::string::npos || text.find("\"last_bit\"") != std::string::npos;
}

template <std::size_t N>
void exercise(core_type& core, const control& c)
{
    const auto& shape = core.metadata().shape;
    const std::size_t width = core.metadata().element_size();
    const auto policy = (c.flags & 1) ? zx::corruption_policy::collect : zx::corruption_policy::throw_error;

    zx::region<N> all;
    for (std::size_t d = 0; d < N; ++d)
    {
        all.extent[d] = shape[d];
    }
    zx::buffer whole;
    const bool whole_ok = read<N>(core, all, policy, whole);

    const zx::region<N> sub = sub_region<N>(shape, c.region);
    zx::buffer part;
    if (!read<N>(core, sub, policy, part))
    {
        return;
    }
    if (whole_ok && !sub.empty())
    {
        require(same_elements<N>(whole, all, part, sub, width),
                "a sub-region read differs from the same elements "
                "of the whole read");
    }
    if (!(c.flags & 2) || sub.empty() || policy != zx::corruption_policy::throw_error)
    {
        return;
    }
    zx::buffer pattern(part.size());
    for (std::size_t i = 0; i < pattern.size(); ++i)
    {
        const auto v = static_cast<std::uint8_t>(i * 131 + c.flags);
        pattern.data()[i] = static_cast<std::byte>(core.metadata().dtype == zx::dtype_id::bool_ ? v & 1 : v);
    }
    // Variable-length arrays: the elements point at strings (ASCII text, so vlen-utf8 takes them).
    std::vector<std::string> values;
    if (zx::is_vlen(core.metadata().dtype))
    {
        const std::size_t n = pattern.size() / sizeof(zx::vlen_element);
        values.resize(n);
        for (std::size_t i = 0; i < n; ++i)
        {
            values[i] = std::string((i * 7 + c.flags) % 11, static_cast<char>('a' + i % 26));
            const zx::vlen_element e{values[i].empty() ? nullptr : values[i].data(), values[i].size()};
            std::memcpy(pattern.data() + i * sizeof e, &e, sizeof e);
        }
    }
    if (!guarded(
            [&] {
                core.template write<N>(sub, pattern.data(), zx::kernel::c_strides<N>(sub.extent),
                                       (c.flags & 4) != 0);
            }))
    {
        return;
    }
    zx::buffer back;
    require(read<N>(core, sub, zx::corruption_policy::throw_error, back),
            "a region just written cannot be read");
    if (!values.empty())
    {
        canonical_vlen(pattern); // compared by value, as read() gives them
    }
    require(lossy(core) || std::memcmp(back.data(), pattern.data(), pattern.size()) == 0,
            "a region reads back other than written");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto sections = split_sections({reinterpret_cast<const char*>(data), size});
    control c;
    c.flags = at(sections[0], 0);
    c.path = at(sections[0], 1);
    c.region = sections[0].size() > 2 ? sections[0].substr(2) : std::string_view{};

    zx::memory_store store;
    for (std::size_t i = 1; i < sections.size(); ++i)
    {
        const std::string_view s = sections[i];
        const std::size_t nl = s.find('\n');
        if (nl == std::string_view::npos)
        {
            continue;
        }
        // An invalid key is the store's to refuse; the rest of the hierarchy is still read.
        guarded([&] { store.set(s.substr(0, nl), zx::as_bytes(s.substr(nl + 1))); });
    }
    std::shared_ptr<core_type> core;
    if (!guarded([&] { core = core_type::open(store, (c.path & 1) ? "a" : "", {}, fuzz_limits{}); }))
    {
        return 0;
    }
    const std::size_t rank = core->metadata().rank();
    zx::detail::static_for<0, max_read_rank + 1>(
        [&](auto n)
        {
            if (n.value == rank)
            {
                exercise<n.value>(*core, c);
            }
        });
    return 0;
}
