/** @file detail/function_ref.hpp
 *  A non-owning reference to a callable: two pointers, no allocation. The kernels take their
 *  executor and store through such references so that one instantiation of a kernel serves every
 *  executor and store type; the callable must outlive the reference (it is always a local lambda
 *  of the caller, used during the call).
 */
#pragma once

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace zarrxt::detail
{

template <class Signature>
class function_ref;

template <class R, class... Args>
class function_ref<R(Args...)>
{
public:
    template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, function_ref> && std::is_invocable_r_v<R, F&, Args...>)
        function_ref(F&& f)
    noexcept // NOLINT(google-explicit-constructor): converts like std::function
        : m_obj(const_cast<void*>(static_cast<const void*>(std::addressof(f))))
        , m_call(
              [](void* obj, Args... args) -> R {
                  return std::invoke(*static_cast<std::remove_reference_t<F>*>(obj),
                                     std::forward<Args>(args)...);
              })
    {
    }

    R operator()(Args... args) const { return m_call(m_obj, std::forward<Args>(args)...); }

private:
    void* m_obj;
    R (*m_call)(void*, Args...);
};

} // namespace zarrxt::detail
