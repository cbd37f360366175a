// What every fuzz target shares: the small limits they run under, the one rule they check (hostile
// input ends in a zarrxt::error or in success, never in anything else), and the framing that packs
// several store keys into one fuzz input.
#pragma once

#include <zarrxt/zarrxt.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

namespace zxfuzz
{

namespace zx = zarrxt;
using zx::json;

/// Caps far below the defaults, so that an allocation a cap should have stopped shows up as an
/// allocation over the fuzzer's -malloc_limit_mb instead of passing unnoticed. A correct read
/// allocates at most a few chunks, a read result and an index, each within these.
/// Chunks stop at 2 MiB because a bomb decodes up to the cap and is then encoded again: with
/// 16 MiB, one bz2 bomb took 7 s under ASan on a quiet machine, close enough to the 10 s unit
/// timeout that a loaded machine can report it as a finding (the likeliest cause of a CI failure
/// that left no artifact).
struct fuzz_limits
{
    std::uint64_t max_metadata_bytes = 1 << 20;
    std::uint64_t max_json_depth = 64;
    std::uint64_t max_chunk_bytes = 2 << 20;
    std::uint64_t max_shard_index_bytes = 1 << 20;
    std::uint64_t max_bytes_in_flight = 48 << 20;
    std::uint64_t max_read_elements = 1 << 20;
};

inline zx::limit_values limits()
{
    return zx::limit_values::from(fuzz_limits{});
}

/// Ends the run with a message the fuzzer records as a crash (abort leaves an artifact).
[[noreturn]] inline void fail(const std::string& what)
{
    std::fprintf(stderr, "\nzarrxt fuzz contract violated: %s\n", what.c_str());
    std::fflush(stderr);
    std::abort();
}

/// The planted crash of the harness test (tests/fuzz/check_planted_crash.py): when
/// ZARRXT_FUZZ_PLANTED_CRASH is set, an input starting with `planted_mark` violates the contract,
/// so that test can show that a finding fails the suite. Inert otherwise.
inline constexpr std::string_view planted_mark = "zarrxt planted crash";

inline void planted_crash(const std::uint8_t* data, std::size_t size)
{
    static const bool armed = std::getenv("ZARRXT_FUZZ_PLANTED_CRASH") != nullptr;
    if (armed && size >= planted_mark.size() &&
        std::memcmp(data, planted_mark.data(), planted_mark.size()) == 0)
    {
        fail("planted crash (the harness test of tests/fuzz/meson.build)");
    }
}

inline void require(bool ok, const std::string& what)
{
    if (!ok)
    {
        fail(what);
    }
}

/// A zarrxt error must be well formed: "[zarrxt.<category>.<n>] ..." thrown as the class of its
/// category. A bare zarrxt::error for a codec failure would defeat callers that catch by type.
inline void check_error(const zx::error& e)
{
    const std::string& c = e.category();
    bool class_ok = false;
    if (c == "metadata")
    {
        class_ok = dynamic_cast<const zx::metadata_error*>(&e) != nullptr;
    }
    else if (c == "codec")
    {
        class_ok = dynamic_cast<const zx::codec_error*>(&e) != nullptr;
    }
    else if (c == "store")
    {
        class_ok = dynamic_cast<const zx::store_error*>(&e) != nullptr;
    }
    else if (c == "array")
    {
        class_ok = dynamic_cast<const zx::array_error*>(&e) != nullptr;
    }
    else if (c == "shard")
    {
        class_ok = dynamic_cast<const zx::shard_error*>(&e) != nullptr;
    }
    else if (c == "limit")
    {
        class_ok = dynamic_cast<const zx::limit_exceeded*>(&e) != nullptr;
    }
    require(class_ok, "error of category \"" + c + "\" thrown as the wrong class: " + e.what());
    const std::string what = e.what();
    require(what.rfind("[" + e.id() + "] ", 0) == 0, "error message does not start with its id: " + what);
}

/// ZARRXT_FUZZ_VERBOSE=1 prints every zarrxt error a target accepts (to see how deep seeds get).
inline bool verbose()
{
    static const bool v = std::getenv("ZARRXT_FUZZ_VERBOSE") != nullptr;
    return v;
}

/// Runs `f`; true when it returned. A zarrxt::error is an accepted outcome (false); any other
/// exception escaping is a bug and aborts with its type and message.
template <class F>
bool guarded(F&& f)
{
    try
    {
        f();
        return true;
    }
    catch (const zx::error& e)
    {
        check_error(e);
        if (verbose())
        {
            std::fprintf(stderr, "zarrxt fuzz: %s\n", e.what());
        }
        return false;
    }
    catch (const std::bad_alloc& e)
    {
        fail(std::string("std::bad_alloc escaped: ") + e.what());
    }
    catch (const std::exception& e)
    {
        fail(std::string("non-zarrxt exception escaped (") + typeid(e).name() + "): " + e.what());
    }
    catch (...)
    {
        fail("an exception of unknown type escaped");
    }
}

inline zx::byte_view bytes_of(const std::uint8_t* data, std::size_t size)
{
    return {reinterpret_cast<const std::byte*>(data), size};
}

/// Reads a fuzz input front to back; past the end it yields zeros, so every input is usable.
class input
{
public:
    input(const std::uint8_t* data, std::size_t size)
        : m_data(data)
        , m_size(size)
    {
    }

    std::uint8_t byte() { return m_pos < m_size ? m_data[m_pos++] : 0; }
    std::uint16_t u16()
    {
        const std::uint16_t lo = byte();
        return static_cast<std::uint16_t>(lo | (byte() << 8));
    }
    /// The bytes not consumed yet.
    zx::byte_view rest() const
    {
        return m_pos < m_size ? bytes_of(m_data + m_pos, m_size - m_pos) : zx::byte_view{};
    }

private:
    const std::uint8_t* m_data;
    std::size_t m_size;
    std::size_t m_pos = 0;
};

/*****************************************************************
 * framing of a store in one input (fuzz_array_read, make_corpus) *
 *****************************************************************/

/// Sections of a store input: a control section, then one "key\nvalue" section per stored key. The
/// mark is text so that the fuzzer's dictionary can insert it; make_corpus checks that no stored
/// value contains it.
inline constexpr std::string_view section_mark = "\n~zx~\n";

inline std::vector<std::string_view> split_sections(std::string_view in)
{
    std::vector<std::string_view> out;
    std::size_t start = 0;
    while (true)
    {
        const std::size_t at = in.find(section_mark, start);
        if (at == std::string_view::npos)
        {
            out.push_back(in.substr(start));
            return out;
        }
        out.push_back(in.substr(start, at - start));
        start = at + section_mark.size();
    }
}

inline std::string join_sections(const std::vector<std::string>& parts)
{
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i)
    {
        if (i != 0)
        {
            out += section_mark;
        }
        out += parts[i];
    }
    return out;
}

} // namespace zxfuzz
