// numpy's Y and M datetimes count calendar years and months; a sys_time<years> counts
// 365.2425-day years, so it must not compile as an element type.
#include <zarrxt/zarrxt.hpp>

#include <chrono>

int main()
{
    return sizeof(zarrxt::array<std::chrono::sys_time<std::chrono::years>, 1>) > 0 ? 0 : 1;
}
