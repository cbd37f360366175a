/** @file detail/small_vector.hpp
 *  A vector with a fixed capacity of `max_rank` elements stored inline. Shapes, strides and chunk
 *  coordinates have at most 32 entries; keeping them off the heap removes every allocation from
 *  the per-chunk path of the untyped code (decoded views, boxes, inner-chunk iteration).
 */
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <vector>

namespace zarrxt
{

/// The largest rank zarrxt accepts (numpy allows 32 or 64; larger shapes are refused at open).
inline constexpr std::size_t max_rank = 32;

namespace detail
{

template <class T, std::size_t Capacity = max_rank>
class small_vector
{
public:
    using value_type = T;
    using iterator = T*;
    using const_iterator = const T*;

    small_vector() noexcept {}
    explicit small_vector(std::size_t n, T value = T{}) { assign(n, value); }
    // Copies move only the elements in use: the storage past them is left uninitialised, so a
    // copy or a fresh vector costs its rank, not the 32 slots (zeroing and copying all of them
    // was most of the per-inner-chunk time of a scattered sharded read).
    small_vector(const small_vector& o) noexcept
        : m_size(o.m_size)
    {
        std::copy_n(o.m_data.begin(), o.m_size, m_data.begin());
    }
    small_vector& operator=(const small_vector& o) noexcept
    {
        if (this != &o)
        {
            std::copy_n(o.m_data.begin(), o.m_size, m_data.begin());
            m_size = o.m_size;
        }
        return *this;
    }
    small_vector(std::initializer_list<T> init)
    {
        check(init.size());
        std::copy(init.begin(), init.end(), m_data.begin());
        m_size = init.size();
    }
    template <class U>
    explicit small_vector(const std::vector<U>& v)
    {
        check(v.size());
        for (std::size_t i = 0; i < v.size(); ++i)
        {
            m_data[i] = static_cast<T>(v[i]);
        }
        m_size = v.size();
    }

    void assign(std::size_t n, T value)
    {
        check(n);
        std::fill_n(m_data.begin(), n, value);
        m_size = n;
    }
    void resize(std::size_t n, T value = T{})
    {
        check(n);
        for (std::size_t i = m_size; i < n; ++i)
        {
            m_data[i] = value;
        }
        m_size = n;
    }
    void push_back(T v)
    {
        check(m_size + 1);
        m_data[m_size++] = v;
    }
    void clear() noexcept { m_size = 0; }

    std::size_t size() const noexcept { return m_size; }
    bool empty() const noexcept { return m_size == 0; }
    T* data() noexcept { return m_data.data(); }
    const T* data() const noexcept { return m_data.data(); }
    T& operator[](std::size_t i) noexcept { return m_data[i]; }
    const T& operator[](std::size_t i) const noexcept { return m_data[i]; }
    T& back() noexcept { return m_data[m_size - 1]; }
    const T& back() const noexcept { return m_data[m_size - 1]; }
    T* begin() noexcept { return m_data.data(); }
    T* end() noexcept { return m_data.data() + m_size; }
    const T* begin() const noexcept { return m_data.data(); }
    const T* end() const noexcept { return m_data.data() + m_size; }

    std::vector<T> to_vector() const { return std::vector<T>(begin(), end()); }

    friend bool operator==(const small_vector& a, const small_vector& b) noexcept
    {
        return a.m_size == b.m_size && std::equal(a.begin(), a.end(), b.begin());
    }

private:
    static void check(std::size_t n)
    {
        if (n > Capacity)
        {
            throw std::length_error("zarrxt: rank exceeds the supported maximum");
        }
    }

    std::array<T, Capacity> m_data; // only [0, m_size) is ever written or read
    std::size_t m_size = 0;
};

} // namespace detail

/// Extents or coordinates (unsigned) and strides (signed, in elements), inline storage.
using dims = detail::small_vector<std::uint64_t>;
using sdims = detail::small_vector<std::int64_t>;

} // namespace zarrxt
