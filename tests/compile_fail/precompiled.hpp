// What every compile-fail case includes first, precompiled once for all of them (meson.build).
// No include guard of its own: it is only ever named by -include, once per case.
#include <zarrxt/zarrxt.hpp>
