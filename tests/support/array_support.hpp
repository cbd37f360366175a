// Shared helpers for array-level tests: deterministic values for every element type, bitwise
// comparison, and the list of element types the typed tests run over.
#pragma once

#include "test_support.hpp"

#include <zarrxt/zarrxt.hpp>

#include <chrono>
#include <complex>
#include <thread>
#include <cstring>
#include <tuple>

namespace zxtest
{

namespace zx = zarrxt;

using all_element_types = std::tuple<bool, std::int8_t, std::int16_t, std::int32_t, std::int64_t, std::uint8_t,
                                     std::uint16_t, std::uint32_t, std::uint64_t, zx::float16, float, double,
                                     std::complex<float>, std::complex<double>>;

/// A value of T derived from an index by a fixed formula (distinct neighbours, all types).
template <class T>
T value_at(std::uint64_t i)
{
    if constexpr (std::is_same_v<T, bool>)
    {
        return (i * 7) % 3 == 0;
    }
    else if constexpr (std::is_integral_v<T>)
    {
        return static_cast<T>((i * 2654435761ull) >> 3);
    }
    else if constexpr (std::is_same_v<T, zx::float16>)
    {
        return zx::float16(static_cast<float>(i % 2048) * 0.5f - 300.0f);
    }
    else if constexpr (std::is_floating_point_v<T>)
    {
        return static_cast<T>(static_cast<double>(i) * 0.25 - 100.0);
    }
    else
    {
        using V = typename T::value_type;
        return T(static_cast<V>(static_cast<double>(i) * 0.5), static_cast<V>(-static_cast<double>(i) * 0.125));
    }
}

inline std::string as_string_of(const std::optional<zx::buffer>& b)
{
    return b ? std::string(reinterpret_cast<const char*>(b->data()), b->size()) : std::string();
}

template <class T>
bool same_bits(const T& a, const T& b)
{
    return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// A tensor of `shape` filled with value_at(linear index + offset).
template <class T, std::size_t N>
xt::xtensor<T, N> make_data(const std::array<std::size_t, N>& shape, std::uint64_t offset = 0)
{
    auto t = xt::xtensor<T, N>::from_shape(shape);
    for (std::size_t i = 0; i < t.size(); ++i)
    {
        t.data()[i] = value_at<T>(i + offset);
    }
    return t;
}

/// Compare two tensors element by element (bitwise), reporting the first difference.
template <class A, class B>
bool tensors_equal(const A& a, const B& b)
{
    if (a.shape() != b.shape())
    {
        MESSAGE("shapes differ");
        return false;
    }
    auto ia = a.begin();
    auto ib = b.begin();
    std::size_t i = 0;
    for (; ia != a.end(); ++ia, ++ib, ++i)
    {
        if (!same_bits(*ia, *ib))
        {
            MESSAGE("first difference at flat index " << i);
            return false;
        }
    }
    return true;
}

/// A store that pauses after every read, so that a read-modify-write takes long enough for other
/// threads to interleave with it: a lost-update race then happens on every run instead of rarely.
template <class S>
class slow_store
{
public:
    explicit slow_store(S inner, std::chrono::microseconds pause = std::chrono::microseconds(300))
        : m_inner(std::move(inner))
        , m_pause(pause)
    {
    }
    std::optional<zx::read_result> read(std::string_view key, zx::byte_range r, std::uint64_t max) const
    {
        auto res = m_inner.read(key, r, max);
        std::this_thread::sleep_for(m_pause);
        return res;
    }
    std::optional<zx::object_info> stat(std::string_view key) const { return m_inner.stat(key); }
    void set(std::string_view key, zx::byte_view data) { m_inner.set(key, data); }
    bool erase(std::string_view key) { return m_inner.erase(key); }
    std::vector<std::string> list(std::string_view prefix) const { return m_inner.list(prefix); }
    std::vector<std::string> list_dir(std::string_view prefix) const { return m_inner.list_dir(prefix); }
    auto lock_key(std::string_view key) const { return m_inner.lock_key(key); }

private:
    S m_inner;
    std::chrono::microseconds m_pause;
};

} // namespace zxtest
