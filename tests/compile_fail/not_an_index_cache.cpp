// A type without the named requirements of an index cache is refused with the policy's message.
#include <zarrxt/zarrxt.hpp>

namespace zx = zarrxt;
struct not_a_cache
{
    static constexpr bool per_operation = true;
};

int main()
{
    zx::memory_store s;
    auto a = zx::open<float, 1, zx::dynamic_chain, not_a_cache>(s, "a");
    return a.rank == 1 ? 0 : 1;
}
