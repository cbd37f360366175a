/** @file codec/numcodecs/delta.hpp
 *  `numcodecs.delta` (array -> array): stores the first element, then the difference of each
 *  element from the one before it, in the array's flattened order.
 *  Zarr v2: numcodecs filter {"id": "delta", "dtype": "<i2", "astype": "<i2"}; Zarr v3 (zarr-python 3):
 *  {"name": "numcodecs.delta", "configuration": {"dtype": "int16"}}.
 *
 *  Integers wrap around (numpy's integer arithmetic), computed in the unsigned type of the same
 *  width so that overflow is defined. zarrxt requires `astype` to equal `dtype` and `dtype` to be
 *  the array's type (byte order aside: the codec works on values, before the bytes codec).
 */
#pragma once

#include "../concepts.hpp"

#include <cstring>
#include <string>
#include <type_traits>

namespace zarrxt::codec::numcodecs
{

class delta
{
public:
    using codec_kind = array_to_array_tag;
    static constexpr std::string_view name = "numcodecs.delta";

    dtype_id dtype = dtype_id::int32;

    static delta from_json(const json& cfg, const codec_context& ctx)
    {
        detail::check_keys(name, cfg, {"dtype", "astype", "id"});
        delta d;
        d.dtype = ctx.dtype;
        for (const char* k : {"dtype", "astype"})
        {
            auto it = cfg.find(k);
            if (it == cfg.end())
            {
                continue;
            }
            const auto id = it->is_string() ? dtype_from_any_name(it->get<std::string>()) : std::nullopt;
            if (!id || *id != ctx.dtype)
            {
                detail::bad_config(name, "\"" + std::string(k) + "\" must be the array's data type ("
                                             + std::string(zarrxt::name(ctx.dtype)) + "), got " + it->dump());
            }
        }
        if (!with_arithmetic_type(ctx.dtype, [](auto) {}))
        {
            detail::bad_config(name, "delta needs an integer or floating-point data type, not "
                                         + std::string(zarrxt::name(ctx.dtype)));
        }
        return d;
    }
    json to_json() const { return {{"dtype", std::string(zarrxt::name(dtype))}}; }

    dims encoded_shape(const dims& shape) const { return shape; }

    array_view decode(array_view encoded, buffer&) const
    {
        // In place: a running sum over the flattened, C-contiguous array.
        with_arithmetic_type(dtype, [&](auto t) { run<typename decltype(t)::type>(encoded, true); });
        return encoded;
    }

    array_view encode(array_view decoded, buffer& out) const
    {
        const std::size_t n = static_cast<std::size_t>(decoded.elements()) * decoded.element_size;
        out.resize_discard(n);
        if (n != 0)
        {
            std::memcpy(out.data(), decoded.data, n); // chains hand a2a codecs C-contiguous arrays
        }
        array_view e = decoded;
        e.data = out.data();
        with_arithmetic_type(dtype, [&](auto t) { run<typename decltype(t)::type>(e, false); });
        return e;
    }

private:
    template <class T, bool = std::is_integral_v<T>>
    struct unsigned_or_same
    {
        using type = T;
    };
    template <class T>
    struct unsigned_or_same<T, true>
    {
        using type = std::make_unsigned_t<T>;
    };

    template <class T>
    static void run(const array_view& v, bool decode)
    {
        const std::uint64_t n = v.elements();
        using U = typename unsigned_or_same<T>::type;
        auto at = [&](std::uint64_t i) {
            U x;
            std::memcpy(&x, v.data + i * sizeof(T), sizeof(T));
            return x;
        };
        auto put = [&](std::uint64_t i, U x) { std::memcpy(v.data + i * sizeof(T), &x, sizeof(T)); };
        if (decode)
        {
            for (std::uint64_t i = 1; i < n; ++i)
            {
                put(i, static_cast<U>(at(i) + at(i - 1)));
            }
        }
        else
        {
            for (std::uint64_t i = n; i-- > 1;)
            {
                put(i, static_cast<U>(at(i) - at(i - 1)));
            }
        }
    }
};

} // namespace zarrxt::codec::numcodecs
