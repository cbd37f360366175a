// The error-expecting helper every test uses: an operation must throw one exact zarrxt error (id,
// class, key); nothing thrown, another error or a non-zarrxt exception is a failed check. Light
// (only zarrxt/error.hpp) so that unit tests of single headers can use it too.
#pragma once

#include <doctest/doctest.h>

#include <zarrxt/error.hpp>

#include <exception>
#include <optional>
#include <string>
#include <string_view>

namespace zxtest
{

namespace zx = zarrxt;

/// The exception class an id's category must come with (a codec error thrown as a plain
/// zarrxt::error, or an array error thrown as a metadata error, is a bug even with the right text).
inline bool class_matches(const zx::error& e)
{
    const std::string& c = e.category();
    if (c == "metadata")
    {
        return dynamic_cast<const zx::metadata_error*>(&e) != nullptr;
    }
    if (c == "codec")
    {
        return dynamic_cast<const zx::codec_error*>(&e) != nullptr;
    }
    if (c == "store")
    {
        return dynamic_cast<const zx::store_error*>(&e) != nullptr;
    }
    if (c == "array")
    {
        return dynamic_cast<const zx::array_error*>(&e) != nullptr;
    }
    if (c == "shard")
    {
        return dynamic_cast<const zx::shard_error*>(&e) != nullptr;
    }
    if (c == "limit")
    {
        return dynamic_cast<const zx::limit_exceeded*>(&e) != nullptr;
    }
    return false;
}

/// Runs `f`, which must throw E with exactly `id` and naming `key` (both as key() and in what()).
/// Returns the error for further checks; any other outcome is a failed check, never an escape.
template <class E, class F>
std::optional<E> expect_error(F&& f, std::string_view id, std::string_view key)
{
    try
    {
        f();
    }
    catch (const E& e)
    {
        const std::string what = e.what();
        INFO("what(): " << what);
        CHECK(e.id() == id);
        CHECK(what.rfind("[" + std::string(id) + "]", 0) == 0);
        CHECK(class_matches(e));
        CHECK(e.key() == key);
        if (!key.empty() && key.find('\0') == std::string_view::npos) // what() ends at a NUL
        {
            CHECK((what.find("key \"" + std::string(key) + "\"") != std::string::npos));
        }
        return e;
    }
    catch (const zx::error& e)
    {
        FAIL_CHECK("expected [" << id << "] for key \"" << key
                                << "\", got another zarrxt error: " << std::string(e.what()));
        return std::nullopt;
    }
    catch (const std::exception& e)
    {
        FAIL_CHECK("expected [" << id << "] for key \"" << key
                                << "\", got a non-zarrxt exception: " << std::string(e.what()));
        return std::nullopt;
    }
    FAIL_CHECK("expected [" << id << "] for key \"" << key << "\", but nothing was thrown");
    return std::nullopt;
}

/// ZX_EXPECT_ERROR(Type, "zarrxt.codec.4", "a/c/0/0", expression...): the expression comes last so
/// that template argument lists and braced regions need no extra parentheses.
#define ZX_EXPECT_ERROR(E, id, key, ...)                                                                     \
    [&]                                                                                                      \
    {                                                                                                        \
        INFO("expression: " #__VA_ARGS__);                                                                   \
        return ::zxtest::expect_error<E>([&] { (void)(__VA_ARGS__); }, id, key);                             \
    }()

} // namespace zxtest
