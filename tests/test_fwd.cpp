// The forward header alone is enough to name every public template with its defaults.
#include <zarrxt/zarrxt_fwd.hpp>

#include <type_traits>

using default_array = zarrxt::array<float, 2>;
static_assert(std::is_same_v<default_array,
                             zarrxt::array<float, 2, zarrxt::dynamic_chain, zarrxt::filesystem_store,
                                           zarrxt::operation_index_cache<>, zarrxt::inline_executor, zarrxt::default_limits>>);
