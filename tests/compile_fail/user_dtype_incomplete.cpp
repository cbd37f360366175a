// A user data type whose dtype_traits states no fill value conversions must not compile: zarrxt
// could not read or write the array's fill_value.
#include <zarrxt/zarrxt.hpp>

struct pixel
{
    unsigned char r, g, b;
};
template <>
struct zarrxt::dtype_traits<pixel>
{
    static constexpr zarrxt::dtype_id id = zarrxt::dtype_id::user;
    static constexpr std::string_view name = "example.pixel";
};
int main()
{
    return sizeof(zarrxt::array<pixel, 2>) > 0 ? 0 : 1;
}
