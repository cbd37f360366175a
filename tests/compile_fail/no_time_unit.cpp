// A std::chrono period that no numpy unit divides into a whole count must not compile.
#include <zarrxt/zarrxt.hpp>

#include <chrono>
#include <ratio>

int main()
{
    return sizeof(zarrxt::array<std::chrono::duration<std::int64_t, std::ratio<1, 3>>, 1>) > 0 ? 0 : 1;
}
