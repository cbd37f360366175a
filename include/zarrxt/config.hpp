/** @file config.hpp
 *  Version macros and optional-feature detection.
 *
 *  Optional libraries are detected with __has_include so that a user who does not have, say,
 *  c-blosc still compiles everything else; the build system may force a feature off by defining
 *  the macro to 0 before including any zarrxt header.
 */
#pragma once

#define ZARRXT_VERSION_MAJOR 0
#define ZARRXT_VERSION_MINOR 1
#define ZARRXT_VERSION_PATCH 0
#define ZARRXT_VERSION_STRING "0.1.0"

#ifndef ZARRXT_HAS_LIBDEFLATE
#if __has_include(<libdeflate.h>)
#define ZARRXT_HAS_LIBDEFLATE 1
#else
#define ZARRXT_HAS_LIBDEFLATE 0
#endif
#endif

#ifndef ZARRXT_HAS_BLOSC
#if __has_include(<blosc.h>)
#define ZARRXT_HAS_BLOSC 1
#else
#define ZARRXT_HAS_BLOSC 0
#endif
#endif

#ifndef ZARRXT_HAS_LZ4
#if __has_include(<lz4.h>)
#define ZARRXT_HAS_LZ4 1
#else
#define ZARRXT_HAS_LZ4 0
#endif
#endif

#ifndef ZARRXT_HAS_BZ2
#if __has_include(<bzlib.h>)
#define ZARRXT_HAS_BZ2 1
#else
#define ZARRXT_HAS_BZ2 0
#endif
#endif

#ifndef ZARRXT_HAS_LZMA
#if __has_include(<lzma.h>)
#define ZARRXT_HAS_LZMA 1
#else
#define ZARRXT_HAS_LZMA 0
#endif
#endif

// libcurl: zarrxt/store/http.hpp needs it (included only by programs that use remote stores).
#ifndef ZARRXT_HAS_CURL
#if __has_include(<curl/curl.h>)
#define ZARRXT_HAS_CURL 1
#else
#define ZARRXT_HAS_CURL 0
#endif
#endif

// libcurl + libcrypto + expat: zarrxt/store/s3.hpp needs all three.
#ifndef ZARRXT_HAS_S3
#if ZARRXT_HAS_CURL && __has_include(<openssl/evp.h>) && __has_include(<expat.h>)
#define ZARRXT_HAS_S3 1
#else
#define ZARRXT_HAS_S3 0
#endif
#endif

// Separate compilation (the compile-time valve of a header-only library). By default every function
// is defined inline in the headers. A program that defines ZARRXT_SEPARATE_COMPILATION everywhere
// and includes <zarrxt/src.hpp> in exactly one translation unit gets the metadata parsers and the
// metadata-built codec registry (which instantiates every codec) compiled once, in that unit,
// instead of in every unit that opens an array.
#if defined(ZARRXT_SEPARATE_COMPILATION)
#define ZARRXT_DECL
#if defined(ZARRXT_SOURCE)
#define ZARRXT_DEFINITIONS 1
#else
#define ZARRXT_DEFINITIONS 0
#endif
#else
#define ZARRXT_DECL inline
#define ZARRXT_DEFINITIONS 1
#endif

// Hardware CRC32C: the SSE4.2 instruction is used through a target attribute, so the library
// still runs on CPUs without it (checked once at run time with cpuid).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ZARRXT_X86_64 1
#else
#define ZARRXT_X86_64 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define ZARRXT_LIKELY(x) __builtin_expect(!!(x), 1)
#define ZARRXT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define ZARRXT_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ZARRXT_LIKELY(x) (x)
#define ZARRXT_UNLIKELY(x) (x)
#define ZARRXT_ALWAYS_INLINE inline
#endif
