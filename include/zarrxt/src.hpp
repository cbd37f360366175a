/** @file src.hpp
 *  Include in exactly one translation unit of a program built with ZARRXT_SEPARATE_COMPILATION
 *  (defined for every unit): that unit then holds the compiled metadata parsers and the codec
 *  registry that other units only declare. See config.hpp.
 */
#pragma once

#if !defined(ZARRXT_SEPARATE_COMPILATION)
#error "zarrxt/src.hpp is for programs built with ZARRXT_SEPARATE_COMPILATION"
#endif
#define ZARRXT_SOURCE 1

#include "codec/registry.hpp"
#include "detail/kerchunk_refs.hpp"
#include "zarrxt.hpp"
