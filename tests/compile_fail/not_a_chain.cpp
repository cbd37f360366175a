// A Codecs parameter that is neither a chain nor a codec is refused where the array names it.
#include <zarrxt/zarrxt.hpp>

namespace zx = zarrxt;
struct not_a_chain
{
};

int main()
{
    zx::memory_store s;
    auto a = zx::open<float, 1, not_a_chain>(s, "a");
    return a.rank == 1 ? 0 : 1;
}
