// The compiled part of zarrxt for programs built with ZARRXT_SEPARATE_COMPILATION: meson's
// `zarrxt_compiled_dep` links this unit (see config.hpp and docs/design.md, "Compile time").
#include <zarrxt/src.hpp>
