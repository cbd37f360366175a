/** @file corruption.hpp
 *  What a read does with a chunk it cannot decode.
 *
 *  - `throw_error` (default): the read fails with the chunk's typed error (key, stage, byte range).
 *  - `fill`: the chunk (or inner chunk, or the whole shard when its index is bad) reads as the fill
 *    value, as if it were missing; the read succeeds.
 *  - `collect`: like `fill`, and every bad chunk is reported with its error (`array::read_checked`).
 *  Only damaged data is tolerated: codec, shard and per-chunk limit errors. Store failures (I/O
 *  errors, invalid keys) and errors in the metadata always throw.
 */
#pragma once

#include "error.hpp"

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace zarrxt
{

enum class corruption_policy
{
    throw_error,
    fill,
    collect,
};

/// One chunk (or inner chunk, or shard index) that could not be read.
struct chunk_problem
{
    std::string key;                 ///< store key of the chunk or shard
    std::string id;                  ///< error id, e.g. "zarrxt.codec.4"
    std::string stage;               ///< codec stage ("crc32c", "sharding_indexed/index", ...)
    std::optional<error_range> range; ///< byte range inside a shard, when known
    std::string message;             ///< the full error message (what())
};

/// Thread-safe collector the kernels report into.
class problem_list
{
public:
    void add(const error& e)
    {
        std::lock_guard<std::mutex> g(m_mutex);
        m_items.push_back({e.key(), e.id(), e.stage(), e.range(), e.what()});
    }
    std::vector<chunk_problem> take()
    {
        std::lock_guard<std::mutex> g(m_mutex);
        return std::move(m_items);
    }

private:
    std::mutex m_mutex;
    std::vector<chunk_problem> m_items;
};

/// Errors that mean "this chunk's data is damaged" (tolerated under fill/collect).
inline bool is_data_corruption(const error& e) noexcept
{
    return e.category() == "codec" || e.category() == "shard" || e.category() == "limit";
}

} // namespace zarrxt
