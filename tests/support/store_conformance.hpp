// The store conformance suite: every Store policy must pass it (called from test_store.cpp with each
// store type). It fixes the contract the rest of zarrxt relies on: absent keys are empty optionals,
// ranges clamp to the object, suffix ranges read the tail, sizes and generations are reported,
// set replaces atomically, erase reports whether something was removed, listing is exact and
// sorted, and every key is validated.
#pragma once

#include "expect_error.hpp"
#include "test_support.hpp"

#include <zarrxt/store/concepts.hpp>

#include <string>
#include <vector>

namespace zxtest
{

inline std::string as_string(const zarrxt::buffer& b)
{
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

/// `pinned_handles`: an object handle keeps reading its version after the key is replaced or
/// erased (files, memory). A remote store cannot keep an old version: its handles must refuse the
/// new one instead (store.6), never mix the two (false).
template <class Store>
void store_conformance(Store& s, bool pinned_handles = true)
{
    static_assert(zarrxt::store_policy<Store>);
    using zarrxt::byte_range;
    constexpr std::uint64_t unlimited = ~std::uint64_t{0};

    // Absent keys.
    CHECK_FALSE(s.read("nothing/here", byte_range::all(), unlimited).has_value());
    CHECK_FALSE(s.stat("nothing/here").has_value());
    CHECK_FALSE(s.erase("nothing/here"));

    // Set, read whole, read ranges.
    s.set("a/b/c", zarrxt::as_bytes("0123456789"));
    auto r = s.read("a/b/c", byte_range::all(), unlimited);
    REQUIRE(r.has_value());
    CHECK(as_string(r->bytes) == "0123456789");
    CHECK(r->object_size == 10);
    CHECK(as_string(s.read("a/b/c", byte_range::of(2, 3), unlimited)->bytes) == "234");
    CHECK(as_string(s.read("a/b/c", byte_range::last(4), unlimited)->bytes) == "6789");
    CHECK(as_string(s.read("a/b/c", byte_range::of(8, 100), unlimited)->bytes) == "89"); // clamped
    CHECK(s.read("a/b/c", byte_range::of(20, 5), unlimited)->bytes.size() == 0);
    CHECK(as_string(s.read("a/b/c", byte_range::last(50), unlimited)->bytes) == "0123456789");
    CHECK(s.read("a/b/c", byte_range::of(2, 3), unlimited)->object_size == 10);
    auto st = s.stat("a/b/c");
    REQUIRE(st.has_value());
    CHECK(st->size == 10);
    CHECK(st->generation == r->generation);

    // A read larger than the caller's cap is refused before allocating.
    CHECK_THROWS_AS(s.read("a/b/c", byte_range::all(), 5), zarrxt::limit_exceeded);
    CHECK(s.read("a/b/c", byte_range::of(0, 5), 5).has_value());

    // Replace: new content, new generation.
    s.set("a/b/c", zarrxt::as_bytes("xyz"));
    auto r2 = s.read("a/b/c", byte_range::all(), unlimited);
    CHECK(as_string(r2->bytes) == "xyz");
    CHECK(r2->generation != r->generation);

    // Empty values are values.
    s.set("empty", zarrxt::byte_view{});
    REQUIRE(s.read("empty", byte_range::all(), unlimited).has_value());
    CHECK(s.read("empty", byte_range::all(), unlimited)->bytes.size() == 0);

    // Listing.
    s.set("a/b/d", zarrxt::as_bytes("1"));
    s.set("a/e", zarrxt::as_bytes("2"));
    s.set("ab", zarrxt::as_bytes("3"));
    CHECK(s.list("a") == std::vector<std::string>{"a/b/c", "a/b/d", "a/e"});
    CHECK(s.list("a/b") == std::vector<std::string>{"a/b/c", "a/b/d"});
    CHECK(s.list("") == std::vector<std::string>{"a/b/c", "a/b/d", "a/e", "ab", "empty"});
    CHECK(s.list("zzz").empty());
    CHECK(s.list_dir("a") == std::vector<std::string>{"b", "e"});
    CHECK(s.list_dir("") == std::vector<std::string>{"a", "ab", "empty"});

    // Erase.
    CHECK(s.erase("a/b/d"));
    CHECK_FALSE(s.erase("a/b/d"));
    CHECK(s.list("a/b") == std::vector<std::string>{"a/b/c"});

    // Binary values survive unchanged.
    std::vector<std::byte> bin(256);
    for (std::size_t i = 0; i < bin.size(); ++i)
    {
        bin[i] = static_cast<std::byte>(i);
    }
    s.set("bin", zarrxt::byte_view(bin.data(), bin.size()));
    auto rb = s.read("bin", byte_range::all(), unlimited);
    CHECK(std::equal(bin.begin(), bin.end(), rb->bytes.data()));

    // Every operation validates keys.
    for (const char* bad : {"../escape", "a/../../x", "/abs", "a//b", "a/./b", "", "a\\b", "a/"})
    {
        CAPTURE(bad);
        CHECK_THROWS_AS(s.read(bad, byte_range::all(), unlimited), zarrxt::store_error);
        CHECK_THROWS_AS(s.set(bad, zarrxt::as_bytes("x")), zarrxt::store_error);
        CHECK_THROWS_AS(s.erase(bad), zarrxt::store_error);
        CHECK_THROWS_AS(s.stat(bad), zarrxt::store_error);
    }
    ZX_EXPECT_ERROR(zarrxt::store_error, "zarrxt.store.1", "../escape",
                    s.set("../escape", zarrxt::as_bytes("x")));

    // Object handles (stores that offer them): one open, ranges and batches from one version of
    // the object, kept when the key is replaced or erased behind the handle.
    if constexpr (zarrxt::object_store<Store>)
    {
        CHECK_FALSE(s.open_object("nothing/here").has_value());
        s.set("h", zarrxt::as_bytes("0123456789"));
        auto h = s.open_object("h");
        REQUIRE(h.has_value());
        const auto before = s.stat("h");
        CHECK(h->info().size == 10);
        CHECK(h->info().generation == before->generation);
        s.set("h", zarrxt::as_bytes("abc")); // replaced behind the open handle
        zarrxt::buffer out;
        if (!pinned_handles)
        {
            for (const auto r : {byte_range::of(2, 3), byte_range::last(2), byte_range::of(1, 1)})
            {
                ZX_EXPECT_ERROR(zarrxt::store_error, "zarrxt.store.6", "h", h->read_to(r, unlimited, out));
            }
            const byte_range ranges[] = {byte_range::of(0, 2), byte_range::of(4, 1)};
            std::vector<zarrxt::buffer> outs(2);
            ZX_EXPECT_ERROR(zarrxt::store_error, "zarrxt.store.6", "h", h->read_ranges(ranges, unlimited, outs));
            auto h2 = s.open_object("h");
            REQUIRE(h2.has_value());
            h2->read_to(byte_range::all(), unlimited, out);
            CHECK(as_string(out) == "abc");
            CHECK(s.erase("h"));
            ZX_EXPECT_ERROR(zarrxt::store_error, "zarrxt.store.6", "h", h2->read_to(byte_range::of(1, 1), unlimited, out));
            CHECK_THROWS_AS(s.open_object("../escape"), zarrxt::store_error);
            return;
        }
        h->read_to(byte_range::of(2, 3), unlimited, out);
        CHECK(as_string(out) == "234");
        h->read_to(byte_range::last(2), unlimited, out);
        CHECK(as_string(out) == "89");
        h->read_to(byte_range::of(8, 100), unlimited, out);
        CHECK(as_string(out) == "89");
        CHECK_THROWS_AS(h->read_to(byte_range::all(), 5, out), zarrxt::limit_exceeded);
        const byte_range ranges[] = {byte_range::of(0, 2), byte_range::last(3), byte_range::of(4, 1)};
        std::vector<zarrxt::buffer> outs(3);
        h->read_ranges(ranges, unlimited, outs);
        CHECK(as_string(outs[0]) == "01");
        CHECK(as_string(outs[1]) == "789");
        CHECK(as_string(outs[2]) == "4");
        CHECK(h->info().generation == before->generation); // still the old version
        CHECK(s.stat("h")->generation != before->generation);
        auto h2 = s.open_object("h");
        REQUIRE(h2.has_value());
        h2->read_to(byte_range::all(), unlimited, out);
        CHECK(as_string(out) == "abc");
        CHECK(s.erase("h"));
        h2->read_to(byte_range::all(), unlimited, out); // erased behind the handle: still readable
        CHECK(as_string(out) == "abc");
        CHECK_THROWS_AS(s.open_object("../escape"), zarrxt::store_error);
    }

    // The key lock serialises; taking two different keys from one thread does not deadlock.
    {
        auto l1 = s.lock_key("a/b/c");
        auto l2 = s.lock_key("completely/different/key/0");
        (void)l1;
        (void)l2;
    }
}

} // namespace zxtest
