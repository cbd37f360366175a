/** @file error.hpp
 *  The error hierarchy. Every error zarrxt throws derives from zarrxt::error and carries a stable
 *  id of the form "[zarrxt.<category>.<number>]" plus context: the store key, the codec stage and
 *  the byte range involved. Ids are never reused or renumbered; docs/errors.md lists them all.
 *
 *  Context is added on the way out: a codec knows the stage but not the key, the kernel knows the
 *  key. `error::with_key` lets an outer layer attach what it knows and rethrow the same object.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace zarrxt
{

/*********
 * codes *
 *********/

/// Error codes, grouped by category. The number is the last part of the id.
enum class metadata_errc : int
{
    malformed_json = 1,      ///< the document is not valid JSON (or not UTF-8)
    missing_member = 2,      ///< a required member is absent
    wrong_type = 3,          ///< a member has the wrong JSON type
    invalid_value = 4,       ///< a member has a value outside its domain (negative shape, zero chunk, ...)
    unsupported_dtype = 5,   ///< the data type is valid Zarr but not supported by zarrxt
    invalid_fill_value = 6,  ///< the fill value cannot represent a value of the data type
    unknown_extension = 7,   ///< an unknown member or extension without must_understand: false
    unsupported_grid = 8,    ///< a chunk grid other than "regular" and "rectilinear" (kind "inline")
    unsupported_key_encoding = 9,
    pre_final_draft = 10,    ///< the pre-final v3 draft layout (meta/root/...)
    unknown_codec = 11,      ///< a codec name or v2 compressor/filter id zarrxt does not implement
    invalid_codec_config = 12,
    invalid_codec_order = 13,
    unsupported_feature = 14, ///< storage transformers, v2 filters, ...
    wrong_node_type = 15,    ///< an array was expected and a group was found, or the reverse
    version_mismatch = 16,   ///< zarr_format is not 2 or 3, or does not match the document kind
    no_consolidated_metadata = 17, ///< consolidated_mode::always on a group without consolidated metadata
};

enum class codec_errc : int
{
    corrupt_stream = 1,  ///< the compressed stream is invalid
    size_mismatch = 2,   ///< decoded size differs from the size the chunk geometry requires
    trailing_bytes = 3,  ///< bytes remain after the end of the compressed stream
    checksum_mismatch = 4, ///< crc32c (or a codec's own checksum) does not match
    truncated = 5,       ///< input shorter than the codec's minimal frame
    encode_failed = 6,   ///< the library refused to encode
    unavailable = 7,     ///< the codec was compiled out (optional library missing)
    value_out_of_range = 8, ///< a value has no representation in the target type (cast_value)
    invalid_text = 9,       ///< stored text is not well-formed UTF-8 (vlen-utf8)
};

enum class store_errc : int
{
    invalid_key = 1, ///< "..", absolute path, empty segment, NUL, backslash
    io = 2,          ///< an operating-system call failed
    lock = 3,        ///< an advisory lock could not be taken
    remote = 4,          ///< a remote request failed (transport error or HTTP status, after retries)
    remote_protocol = 5, ///< a server's answer does not match the request (Content-Range, length)
    changed = 6,         ///< an object changed while it was read through one handle (If-Match failed)
    not_listable = 7,    ///< a listing was asked of a store that cannot list, and no snapshot answers it
    denied = 8,          ///< the server refused the credentials or the signature (401, 403)
    read_only = 9,       ///< a write or erase through any_store to a store that cannot write
    archive = 10,        ///< a zip archive is malformed: no end record, a directory or entry outside it
    unsupported_archive = 11, ///< a zip feature zarrxt does not read: encryption, split archives, a method
                              ///< other than STORED and DEFLATE
    reference = 12,        ///< a kerchunk reference file is malformed: not JSON, a member of the wrong type,
                           ///< bad base64, a key that is not a valid key, an expression it cannot evaluate
    reference_target = 13, ///< a kerchunk reference's target is missing or shorter than its byte range
};

enum class array_errc : int
{
    dtype_mismatch = 1,
    rank_mismatch = 2,
    out_of_bounds = 3,    ///< the region is not inside the array
    shape_mismatch = 4,   ///< the value written does not have the region's shape
    chain_mismatch = 5,   ///< a static codec chain does not match the stored metadata
    node_exists = 6,      ///< create() without overwrite over an existing node
    node_not_found = 7,   ///< no array or group at the path
    invalid_argument = 8, ///< create() options that cannot describe an array
};

enum class shard_errc : int
{
    entry_out_of_range = 1, ///< an index entry points outside the shard
    entry_overlaps_index = 2,
    index_size = 3,         ///< the shard is smaller than its index or the index has the wrong size
    invalid_entry = 5,      ///< only one of offset/nbytes is the "missing" marker
    unstable = 6,           ///< the shard kept changing while it was being read
};

enum class limit_errc : int
{
    exceeded = 1,
};

/*********
 * error *
 *********/

/// Byte range named in an error message: [offset, offset + length).
struct error_range
{
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

class error : public std::runtime_error
{
public:
    error(std::string_view category, int code, std::string message, std::string_view stage = {});

    /// "zarrxt.codec.2"
    const std::string& id() const noexcept { return m_id; }
    const std::string& category() const noexcept { return m_category; }
    int code() const noexcept { return m_code; }
    /// The message without id and context.
    const std::string& message() const noexcept { return m_message; }
    const std::string& key() const noexcept { return m_key; }
    const std::string& stage() const noexcept { return m_stage; }
    const std::optional<error_range>& range() const noexcept { return m_range; }

    const char* what() const noexcept override { return m_what.c_str(); }

    /// Attach context; fields already set are kept (the innermost layer knows best).
    error& with_key(std::string_view key);
    error& with_stage(std::string_view stage);
    error& with_range(std::uint64_t offset, std::uint64_t length);
    /// Nest the stage inside an outer one: "crc32c" becomes "sharding_indexed/index/crc32c".
    error& within_stage(std::string_view outer);

private:
    void rebuild();

    std::string m_id;
    std::string m_category;
    int m_code;
    std::string m_message;
    std::string m_key;
    std::string m_stage;
    std::optional<error_range> m_range;
    std::string m_what;
};

class metadata_error : public error
{
public:
    metadata_error(metadata_errc code, std::string message)
        : error("metadata", static_cast<int>(code), std::move(message))
    {
    }
};

class codec_error : public error
{
public:
    /// `stage` names the codec ("zstd", "sharding_indexed/index") that failed.
    codec_error(codec_errc code, std::string_view stage, std::string message)
        : error("codec", static_cast<int>(code), std::move(message), stage)
    {
    }
};

class store_error : public error
{
public:
    store_error(store_errc code, std::string message)
        : error("store", static_cast<int>(code), std::move(message))
    {
    }
};

class array_error : public error
{
public:
    array_error(array_errc code, std::string message)
        : error("array", static_cast<int>(code), std::move(message))
    {
    }
};

/// The stored data type differs from the compile-time T.
class dtype_mismatch : public array_error
{
public:
    explicit dtype_mismatch(std::string message)
        : array_error(array_errc::dtype_mismatch, std::move(message))
    {
    }
};

/// The stored rank differs from the compile-time N.
class rank_mismatch : public array_error
{
public:
    explicit rank_mismatch(std::string message)
        : array_error(array_errc::rank_mismatch, std::move(message))
    {
    }
};

/// A static codec chain does not match the metadata of the array being opened.
class chain_mismatch : public array_error
{
public:
    explicit chain_mismatch(std::string message)
        : array_error(array_errc::chain_mismatch, std::move(message))
    {
    }
};

class shard_error : public error
{
public:
    shard_error(shard_errc code, std::string message)
        : error("shard", static_cast<int>(code), std::move(message), "sharding_indexed")
    {
    }
};

/// A resource limit of the Limits policy would be exceeded.
class limit_exceeded : public error
{
public:
    limit_exceeded(std::string_view limit_name, std::uint64_t value, std::uint64_t limit);

    const std::string& limit_name() const noexcept { return m_limit_name; }
    std::uint64_t value() const noexcept { return m_value; }
    std::uint64_t limit() const noexcept { return m_limit; }

private:
    std::string m_limit_name;
    std::uint64_t m_value;
    std::uint64_t m_limit;
};

/******************
 * implementation *
 ******************/

inline error::error(std::string_view category, int code, std::string message, std::string_view stage)
    : std::runtime_error("zarrxt error")
    , m_id("zarrxt." + std::string(category) + "." + std::to_string(code))
    , m_category(category)
    , m_code(code)
    , m_message(std::move(message))
    , m_stage(stage)
{
    rebuild();
}

inline error& error::with_key(std::string_view key)
{
    if (m_key.empty() && !key.empty())
    {
        m_key = std::string(key);
        rebuild();
    }
    return *this;
}

inline error& error::with_stage(std::string_view stage)
{
    if (m_stage.empty() && !stage.empty())
    {
        m_stage = std::string(stage);
        rebuild();
    }
    return *this;
}

inline error& error::within_stage(std::string_view outer)
{
    m_stage = m_stage.empty() ? std::string(outer) : std::string(outer) + "/" + m_stage;
    rebuild();
    return *this;
}

inline error& error::with_range(std::uint64_t offset, std::uint64_t length)
{
    if (!m_range)
    {
        m_range = error_range{offset, length};
        rebuild();
    }
    return *this;
}

inline void error::rebuild()
{
    // "[zarrxt.codec.2] zstd: decoded 4096 bytes, expected 8192 (key "a/c/0/1", bytes 0..100)"
    std::string s = "[" + m_id + "] ";
    if (!m_stage.empty())
    {
        s += m_stage;
        s += ": ";
    }
    s += m_message;
    if (!m_key.empty() || m_range)
    {
        s += " (";
        if (!m_key.empty())
        {
            s += "key \"";
            s += m_key;
            s += "\"";
        }
        if (m_range)
        {
            if (!m_key.empty())
            {
                s += ", ";
            }
            s += "bytes " + std::to_string(m_range->offset) + ".."
                 + std::to_string(m_range->offset + m_range->length);
        }
        s += ")";
    }
    m_what = std::move(s);
}

inline limit_exceeded::limit_exceeded(std::string_view limit_name, std::uint64_t value, std::uint64_t limit)
    : error("limit", static_cast<int>(limit_errc::exceeded),
            std::string(limit_name) + " would be " + std::to_string(value) + ", limit is "
                + std::to_string(limit))
    , m_limit_name(limit_name)
    , m_value(value)
    , m_limit(limit)
{
}

namespace detail
{
/// Run `f`; a zarrxt error escaping it gets `key` attached (when it has none) and is rethrown.
template <class F>
auto with_key_context(const std::string& key, F&& f) -> decltype(f())
{
    try
    {
        return f();
    }
    catch (error& e)
    {
        e.with_key(key);
        throw;
    }
}
} // namespace detail

} // namespace zarrxt
