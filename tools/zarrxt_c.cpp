// The C API (include/zarrxt.h, docs/c-api.md) over the runtime-typed C++ entry points: any_store,
// any_array and group<any_store>. Every exported function runs its body through `guarded`, which
// turns every exception into a status and this thread's last error, so none crosses into C.
#include <zarrxt.h>

#include <zarrxt/consolidated.hpp>
#include <zarrxt/store/open_store.hpp>
#include <zarrxt/zarrxt.hpp>

#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <vector>

namespace zx = zarrxt;

namespace
{

/// Misuse of the C interface itself. Ids: zarrxt.capi.1 (a NULL handle or pointer, a flag or value
/// out of range), .2 (a data buffer whose size is not the region's), .3 (a text buffer too small).
enum class capi_errc : int
{
    invalid_argument = 1,
    buffer_size = 2,
    text_buffer = 3,
};

class capi_error : public zx::error
{
public:
    capi_error(capi_errc code, std::string message)
        : zx::error("capi", static_cast<int>(code), std::move(message))
    {
    }
};

struct last_error
{
    zarrxt_status status = ZARRXT_OK;
    std::string id;
    std::string message;
};

thread_local last_error t_last;

zarrxt_status status_of_category(const std::string& c)
{
    if (c == "metadata")
    {
        return ZARRXT_ERR_METADATA;
    }
    if (c == "codec")
    {
        return ZARRXT_ERR_CODEC;
    }
    if (c == "store")
    {
        return ZARRXT_ERR_STORE;
    }
    if (c == "array")
    {
        return ZARRXT_ERR_ARRAY;
    }
    if (c == "shard")
    {
        return ZARRXT_ERR_SHARD;
    }
    if (c == "limit")
    {
        return ZARRXT_ERR_LIMIT;
    }
    if (c == "capi")
    {
        return ZARRXT_ERR_USAGE;
    }
    return ZARRXT_ERR_OTHER;
}

zarrxt_status fail(zarrxt_status s, std::string id, const char* message) noexcept
{
    try
    {
        t_last.status = s;
        t_last.id = std::move(id);
        t_last.message = message;
    }
    catch (...)
    {
        // Out of memory while recording the failure: the status still says what happened.
        t_last.status = ZARRXT_ERR_NO_MEMORY;
        t_last.id.clear();
        t_last.message.clear();
        return ZARRXT_ERR_NO_MEMORY;
    }
    return s;
}

/// Run `f` (which returns nothing and reports through its outputs), mapping exceptions to statuses.
template <class F>
zarrxt_status guarded(F&& f) noexcept
{
    t_last.status = ZARRXT_OK;
    t_last.id.clear();
    t_last.message.clear();
    try
    {
        f();
        return ZARRXT_OK;
    }
    catch (const zx::error& e)
    {
        return fail(status_of_category(e.category()), e.id(), e.what());
    }
    catch (const std::bad_alloc&)
    {
        return fail(ZARRXT_ERR_NO_MEMORY, "", "out of memory");
    }
    catch (const std::exception& e)
    {
        return fail(ZARRXT_ERR_OTHER, "", e.what());
    }
    catch (...)
    {
        return fail(ZARRXT_ERR_OTHER, "", "an unknown exception");
    }
}

template <class T>
T& need(T* p, const char* what)
{
    if (p == nullptr)
    {
        throw capi_error(capi_errc::invalid_argument, std::string(what) + " is NULL");
    }
    return *p;
}

void need_pointer(const void* p, const char* what)
{
    if (p == nullptr)
    {
        throw capi_error(capi_errc::invalid_argument, std::string(what) + " is NULL");
    }
}

/// Copy `text` to a caller's buffer under the header's conventions.
void put_text(const std::string& text, char* buf, std::size_t cap, std::size_t* len)
{
    need(len, "len");
    *len = text.size();
    if (buf == nullptr && cap == 0)
    {
        return; // only the length was asked for
    }
    need(buf, "buf");
    if (cap <= text.size())
    {
        throw capi_error(capi_errc::text_buffer, "the buffer has " + std::to_string(cap) +
                                                     " bytes; the text needs " +
                                                     std::to_string(text.size() + 1) + " with its NUL");
    }
    std::memcpy(buf, text.data(), text.size());
    buf[text.size()] = '\0';
}

std::string path_arg(const char* path)
{
    return path == nullptr ? std::string() : std::string(path);
}

zx::json parse_json_arg(const char* text, const char* what)
{
    need(text, what);
    const std::string s(text);
    return zx::parse_document(zx::as_bytes(s), zx::limit_values::from(zx::default_limits{}), what);
}

using store_t = zx::any_store;
using array_t = zx::any_array<store_t>;
using group_t = zx::group<store_t>;

} // namespace

struct zarrxt_store
{
    store_t store;
};

struct zarrxt_node
{
    explicit zarrxt_node(array_t a)
        : array(std::move(a))
    {
    }
    explicit zarrxt_node(group_t g)
        : group(std::move(g))
    {
    }

    std::optional<array_t> array;
    std::optional<group_t> group;
    // Attributes (group metadata, or the array core's metadata) and the children list are state of
    // the handle that calls may change; this mutex orders those calls. Reads and writes of array
    // data need no lock here (the core is thread-safe).
    mutable std::mutex mutex;
    std::vector<group_t::child> children;

    array_t& need_array() const
    {
        if (!array)
        {
            throw zx::metadata_error(zx::metadata_errc::wrong_node_type,
                                     "the node at \"" + group->path() + "\" is a group, not an array");
        }
        return const_cast<array_t&>(*array);
    }
    group_t& need_group() const
    {
        if (!group)
        {
            throw zx::metadata_error(zx::metadata_errc::wrong_node_type,
                                     "the node at \"" + array->path() + "\" is an array, not a group");
        }
        return const_cast<group_t&>(*group);
    }
    const std::string& path() const { return array ? array->path() : group->path(); }
    int zarr_format() const { return array ? array->metadata().zarr_format : group->zarr_format(); }
    store_t& store() const { return array ? array->store() : const_cast<group_t&>(*group).store(); }
};

struct zarrxt_strings
{
    explicit zarrxt_strings(std::uint64_t cap)
        : arena(cap)
    {
    }
    zx::value_arena arena;
    std::vector<zx::vlen_element> values;
};

namespace
{

zarrxt_node* open_node(const store_t& s, const std::string& path)
{
    const zx::limit_values lv = zx::limit_values::from(zx::default_limits{});
    const std::string p = zx::normalize_path(path);
    const auto kind = zx::peek_node_kind(s, p, lv);
    if (!kind)
    {
        // read_node names a pre-final v3 layout (metadata.10) where there is one.
        (void)zx::read_node(s, p, lv);
        zx::array_error e(zx::array_errc::node_not_found, "no Zarr array or group at \"" + p + "\"");
        e.with_key(p.empty() ? std::string("/") : p);
        throw e;
    }
    if (*kind == zx::node_kind::array)
    {
        return new zarrxt_node(zx::open_any(s, p));
    }
    return new zarrxt_node(group_t::open(s, p, lv));
}

store_t open_store_url(const char* url, unsigned flags)
{
    need(url, "url");
    if ((flags & ~ZARRXT_CONSOLIDATED) != 0)
    {
        throw capi_error(capi_errc::invalid_argument,
                         "zarrxt_store_open: unknown flags " + std::to_string(flags & ~ZARRXT_CONSOLIDATED));
    }
    store_t s = zx::open_store(url);
    if ((flags & ZARRXT_CONSOLIDATED) != 0)
    {
        auto c = zx::open_consolidated(s, "", zx::consolidated_mode::always);
        return store_t(std::move(c), s.describe());
    }
    if (!s.listable())
    {
        // As zarr-python does over HTTP: consolidated metadata, when there is some, lists groups.
        auto c = zx::open_consolidated(s, "", zx::consolidated_mode::automatic);
        return store_t(std::move(c), s.describe());
    }
    return s;
}

std::vector<std::uint64_t> to_vector(const std::uint64_t* p, std::size_t n)
{
    return n == 0 ? std::vector<std::uint64_t>{} : std::vector<std::uint64_t>(p, p + n);
}

/// A region given by C pointers (`rank` values each; NULL allowed for rank 0) as vectors.
struct region_args
{
    std::vector<std::uint64_t> offset;
    std::vector<std::uint64_t> extent;
};

region_args region_of(const array_t& a, const std::uint64_t* offset, const std::uint64_t* extent)
{
    const std::size_t rank = a.rank();
    if (rank == 0)
    {
        return {};
    }
    need_pointer(offset, "offset");
    need_pointer(extent, "extent");
    return {to_vector(offset, rank), to_vector(extent, rank)};
}

/// The region's size in bytes of caller memory, checked against `bytes`.
void check_buffer(const array_t& a, const std::vector<std::uint64_t>& extent, std::size_t bytes,
                  const char* what)
{
    if (zx::is_vlen(a.dtype()))
    {
        throw zx::array_error(zx::array_errc::dtype_mismatch,
                              std::string(zx::name(a.dtype())) +
                                  " values are read and written with zarrxt_array_read_strings and "
                                  "zarrxt_array_write_strings");
    }
    const std::uint64_t n = zx::detail::checked_product(extent, "region elements");
    const std::uint64_t need_bytes = zx::detail::checked_mul(n, a.metadata().element_size(), "region bytes");
    if (need_bytes != bytes)
    {
        throw capi_error(capi_errc::buffer_size, std::string(what) + " has " + std::to_string(bytes) +
                                                     " bytes; the region needs " +
                                                     std::to_string(need_bytes));
    }
}

void put_shape(const std::vector<std::uint64_t>& shape, std::uint64_t* out, std::size_t cap)
{
    if (shape.empty())
    {
        return;
    }
    need(out, "out");
    if (cap < shape.size())
    {
        throw capi_error(capi_errc::buffer_size, "room for " + std::to_string(cap) + " values; the rank is " +
                                                     std::to_string(shape.size()));
    }
    std::copy(shape.begin(), shape.end(), out);
}

std::optional<zx::dtype_id> dtype_of_c(int d)
{
    const int i = d - 1;
    // A user data type lives in a C++ program's codec_registry, which the C API has no way to hold.
    if (i < 0 || i >= static_cast<int>(zx::dtype_table.size()) ||
        static_cast<zx::dtype_id>(i) == zx::dtype_id::user)
    {
        return std::nullopt;
    }
    return static_cast<zx::dtype_id>(i);
}

} // namespace

// The definitions of the functions zarrxt.h declares (C linkage comes from the declarations).

const char* zarrxt_version(void)
{
    return ZARRXT_VERSION_STRING;
}

int zarrxt_c_api_version(void)
{
    return ZARRXT_C_API_VERSION;
}

const char* zarrxt_last_error_message(void)
{
    return t_last.message.c_str();
}

const char* zarrxt_last_error_id(void)
{
    return t_last.id.c_str();
}

zarrxt_status zarrxt_last_error_status(void)
{
    return t_last.status;
}

const char* zarrxt_status_name(int status)
{
    switch (status)
    {
        case ZARRXT_OK:
            return "ok";
        case ZARRXT_ERR_METADATA:
            return "metadata error";
        case ZARRXT_ERR_CODEC:
            return "codec error";
        case ZARRXT_ERR_STORE:
            return "store error";
        case ZARRXT_ERR_ARRAY:
            return "array error";
        case ZARRXT_ERR_SHARD:
            return "shard error";
        case ZARRXT_ERR_LIMIT:
            return "limit exceeded";
        case ZARRXT_ERR_USAGE:
            return "usage error";
        case ZARRXT_ERR_NO_MEMORY:
            return "out of memory";
        case ZARRXT_ERR_OTHER:
            return "other error";
    }
    return "unknown status";
}

zarrxt_status zarrxt_store_open(const char* url, unsigned flags, zarrxt_store** out)
{
    return guarded(
        [&]
        {
            need(out, "out") = nullptr;
            *out = new zarrxt_store{open_store_url(url, flags)};
        });
}

void zarrxt_store_close(zarrxt_store* store)
{
    delete store;
}

zarrxt_status zarrxt_store_consolidate(zarrxt_store* store, const char* path)
{
    return guarded([&] { zx::consolidate(need(store, "store").store, path_arg(path)); });
}

zarrxt_status zarrxt_node_open(zarrxt_store* store, const char* path, zarrxt_node** out)
{
    return guarded(
        [&]
        {
            need(out, "out") = nullptr;
            *out = open_node(need(store, "store").store, path_arg(path));
        });
}

zarrxt_status zarrxt_open(const char* url, unsigned flags, zarrxt_node** out)
{
    return guarded(
        [&]
        {
            need(out, "out") = nullptr;
            *out = open_node(open_store_url(url, flags), "");
        });
}

void zarrxt_node_close(zarrxt_node* node)
{
    delete node;
}

zarrxt_status zarrxt_node_kind_of(const zarrxt_node* node, zarrxt_node_kind* kind)
{
    return guarded(
        [&] { need(kind, "kind") = need(node, "node").array ? ZARRXT_NODE_ARRAY : ZARRXT_NODE_GROUP; });
}

zarrxt_status zarrxt_node_zarr_format(const zarrxt_node* node, int* format)
{
    return guarded([&] { need(format, "format") = need(node, "node").zarr_format(); });
}

zarrxt_status zarrxt_node_path(const zarrxt_node* node, char* buf, std::size_t cap, std::size_t* len)
{
    return guarded([&] { put_text(need(node, "node").path(), buf, cap, len); });
}

zarrxt_status zarrxt_node_attributes(const zarrxt_node* node, char* buf, std::size_t cap, std::size_t* len)
{
    return guarded(
        [&]
        {
            const zarrxt_node& n = need(node, "node");
            std::string text;
            {
                std::lock_guard<std::mutex> g(n.mutex);
                text = n.array ? n.array->metadata().attributes.dump() : n.group->attributes().dump();
            }
            put_text(text, buf, cap, len);
        });
}

zarrxt_status zarrxt_node_set_attributes(zarrxt_node* node, const char* json)
{
    return guarded(
        [&]
        {
            zarrxt_node& n = need(node, "node");
            zx::json attrs = parse_json_arg(json, "attributes");
            if (!attrs.is_object())
            {
                throw zx::metadata_error(zx::metadata_errc::wrong_type, "attributes must be a JSON object");
            }
            std::lock_guard<std::mutex> g(n.mutex);
            if (n.array)
            {
                n.array->core()->set_attributes(std::move(attrs));
            }
            else
            {
                n.group->set_attributes(std::move(attrs));
            }
        });
}

zarrxt_status zarrxt_node_metadata(const zarrxt_node* node, char* buf, std::size_t cap, std::size_t* len)
{
    return guarded(
        [&]
        {
            const zarrxt_node& n = need(node, "node");
            const char* name = n.zarr_format() == 3 ? "zarr.json" : (n.array ? ".zarray" : ".zgroup");
            const std::string key = zx::join_key(n.path(), name);
            const zx::limit_values lv = zx::limit_values::from(zx::default_limits{});
            auto r = n.store().read(key, zx::byte_range::all(), lv.max_metadata_bytes);
            if (!r)
            {
                zx::array_error e(zx::array_errc::node_not_found, "the node's metadata is gone");
                e.with_key(key);
                throw e;
            }
            const auto v = r->bytes.view();
            put_text(std::string(reinterpret_cast<const char*>(v.data()), v.size()), buf, cap, len);
        });
}

zarrxt_status zarrxt_group_create(zarrxt_store* store, const char* path, int zarr_format,
                                  const char* attributes_json, unsigned flags, zarrxt_node** out)
{
    return guarded(
        [&]
        {
            need(out, "out") = nullptr;
            store_t& s = need(store, "store").store;
            if ((flags & ~ZARRXT_OVERWRITE) != 0)
            {
                throw capi_error(capi_errc::invalid_argument, "zarrxt_group_create: unknown flags");
            }
            zx::group_options o;
            o.zarr_format = zarr_format;
            o.overwrite = (flags & ZARRXT_OVERWRITE) != 0;
            if (attributes_json != nullptr)
            {
                o.attributes = parse_json_arg(attributes_json, "attributes");
            }
            *out = new zarrxt_node(group_t::create(s, path_arg(path), o));
        });
}

zarrxt_status zarrxt_group_child_count(zarrxt_node* group, std::size_t* count)
{
    return guarded(
        [&]
        {
            need(count, "count");
            zarrxt_node& n = need(group, "group");
            auto list = n.need_group().children();
            std::lock_guard<std::mutex> g(n.mutex);
            n.children = std::move(list);
            *count = n.children.size();
        });
}

zarrxt_status zarrxt_group_child(const zarrxt_node* group, std::size_t index, char* name, std::size_t cap,
                                 std::size_t* len, zarrxt_node_kind* kind)
{
    return guarded(
        [&]
        {
            const zarrxt_node& n = need(group, "group");
            n.need_group();
            std::lock_guard<std::mutex> g(n.mutex);
            if (index >= n.children.size())
            {
                throw capi_error(capi_errc::invalid_argument,
                                 "child " + std::to_string(index) + " of " +
                                     std::to_string(n.children.size()) +
                                     " (zarrxt_group_child_count makes the list)");
            }
            const auto& c = n.children[index];
            if (kind != nullptr)
            {
                *kind = c.kind == zx::node_kind::array ? ZARRXT_NODE_ARRAY : ZARRXT_NODE_GROUP;
            }
            put_text(c.name, name, cap, len);
        });
}

zarrxt_status zarrxt_array_rank(const zarrxt_node* array, std::size_t* rank)
{
    return guarded([&] { need(rank, "rank") = need(array, "array").need_array().rank(); });
}

zarrxt_status zarrxt_array_shape(const zarrxt_node* array, std::uint64_t* out, std::size_t cap)
{
    return guarded(
        [&]
        {
            const zarrxt_node& n = need(array, "array");
            std::lock_guard<std::mutex> g(n.mutex);
            put_shape(n.need_array().shape(), out, cap);
        });
}

zarrxt_status zarrxt_array_chunk_shape(const zarrxt_node* array, std::uint64_t* out, std::size_t cap)
{
    return guarded([&] { put_shape(need(array, "array").need_array().chunk_shape(), out, cap); });
}

zarrxt_status zarrxt_array_inner_chunk_shape(const zarrxt_node* array, std::uint64_t* out, std::size_t cap)
{
    return guarded(
        [&]
        {
            // The bound sharding codec knows its inner chunks (as `zarrxt convert` asks it).
            const array_t& a = need(array, "array").need_array();
            const auto* sh = a.chain().any_sharding();
            put_shape(sh != nullptr ? sh->inner_chunk_shape().to_vector() : a.chunk_shape(), out, cap);
        });
}

zarrxt_status zarrxt_array_dtype(const zarrxt_node* array, zarrxt_dtype* dtype)
{
    return guarded(
        [&]
        {
            const auto id = need(array, "array").need_array().dtype();
            need(dtype, "dtype") = static_cast<zarrxt_dtype>(static_cast<int>(id) + 1);
        });
}

zarrxt_status zarrxt_array_item_size(const zarrxt_node* array, std::size_t* size)
{
    return guarded(
        [&]
        {
            const array_t& a = need(array, "array").need_array();
            need(size, "size") = zx::is_vlen(a.dtype()) ? 0 : a.metadata().element_size();
        });
}

zarrxt_status zarrxt_array_dimension_name(const zarrxt_node* array, std::size_t dim, char* buf,
                                          std::size_t cap, std::size_t* len)
{
    return guarded(
        [&]
        {
            const zarrxt_node& n = need(array, "array");
            const array_t& a = n.need_array();
            if (dim >= a.rank())
            {
                throw capi_error(capi_errc::invalid_argument, "dimension " + std::to_string(dim) +
                                                                  " of an array of rank " +
                                                                  std::to_string(a.rank()));
            }
            std::string name;
            {
                std::lock_guard<std::mutex> g(n.mutex);
                if (const auto& names = a.dimension_names(); names && (*names)[dim])
                {
                    name = *(*names)[dim];
                }
            }
            put_text(name, buf, cap, len);
        });
}

zarrxt_status zarrxt_array_read(const zarrxt_node* array, const std::uint64_t* offset,
                                const std::uint64_t* extent, void* out, std::size_t out_bytes)
{
    return guarded(
        [&]
        {
            const zarrxt_node& n = need(array, "array");
            const array_t& a = n.need_array();
            const auto [off, ext] = region_of(a, offset, extent);
            check_buffer(a, ext, out_bytes, "out");
            if (out_bytes > 0)
            {
                need_pointer(out, "out");
            }
            a.read_bytes(off, ext, static_cast<std::byte*>(out));
        });
}

zarrxt_status zarrxt_array_write(zarrxt_node* array, const std::uint64_t* offset, const std::uint64_t* extent,
                                 const void* in, std::size_t in_bytes)
{
    return guarded(
        [&]
        {
            zarrxt_node& n = need(array, "array");
            array_t& a = n.need_array();
            const auto [off, ext] = region_of(a, offset, extent);
            check_buffer(a, ext, in_bytes, "in");
            if (in_bytes > 0)
            {
                need_pointer(in, "in");
            }
            a.write_bytes(off, ext, static_cast<const std::byte*>(in));
        });
}

zarrxt_status zarrxt_array_read_strings(const zarrxt_node* array, const std::uint64_t* offset,
                                        const std::uint64_t* extent, zarrxt_strings** out)
{
    return guarded(
        [&]
        {
            need(out, "out") = nullptr;
            const zarrxt_node& n = need(array, "array");
            const array_t& a = n.need_array();
            const auto [off, ext] = region_of(a, offset, extent);
            if (!zx::is_vlen(a.dtype()))
            {
                throw zx::array_error(zx::array_errc::dtype_mismatch,
                                      "zarrxt_array_read_strings on a " + std::string(zx::name(a.dtype())) +
                                          " array (zarrxt_array_read reads it)");
            }
            const std::uint64_t count = zx::detail::checked_product(ext, "region elements");
            zx::check_limit("max_read_elements", count, a.core()->limits().max_read_elements);
            auto v = std::make_unique<zarrxt_strings>(a.core()->limits().max_bytes_in_flight);
            v->values.resize(zx::detail::to_size(count, "region elements"));
            a.read_bytes(off, ext, reinterpret_cast<std::byte*>(v->values.data()), nullptr, &v->arena);
            *out = v.release();
        });
}

std::size_t zarrxt_strings_count(const zarrxt_strings* values)
{
    return values == nullptr ? 0 : values->values.size();
}

zarrxt_status zarrxt_strings_get(const zarrxt_strings* values, std::size_t index, const char** data,
                                 std::size_t* size)
{
    return guarded(
        [&]
        {
            const zarrxt_strings& v = need(values, "values");
            if (index >= v.values.size())
            {
                throw capi_error(capi_errc::invalid_argument,
                                 "value " + std::to_string(index) + " of " + std::to_string(v.values.size()));
            }
            need(data, "data") = v.values[index].data;
            need(size, "size") = static_cast<std::size_t>(v.values[index].size);
        });
}

void zarrxt_strings_free(zarrxt_strings* values)
{
    delete values;
}

zarrxt_status zarrxt_array_write_strings(zarrxt_node* array, const std::uint64_t* offset,
                                         const std::uint64_t* extent, const char* const* data,
                                         const std::size_t* sizes, std::size_t count)
{
    return guarded(
        [&]
        {
            zarrxt_node& n = need(array, "array");
            array_t& a = n.need_array();
            const auto [off, ext] = region_of(a, offset, extent);
            if (!zx::is_vlen(a.dtype()))
            {
                throw zx::array_error(zx::array_errc::dtype_mismatch,
                                      "zarrxt_array_write_strings on a " + std::string(zx::name(a.dtype())) +
                                          " array (zarrxt_array_write writes it)");
            }
            const std::uint64_t elements = zx::detail::checked_product(ext, "region elements");
            if (elements != count)
            {
                throw capi_error(capi_errc::buffer_size, std::to_string(count) + " values for a region of " +
                                                             std::to_string(elements) + " elements");
            }
            if (count > 0)
            {
                need(data, "data");
                need(sizes, "sizes");
            }
            std::vector<zx::vlen_element> values(count);
            for (std::size_t i = 0; i < count; ++i)
            {
                if (sizes[i] > 0 && data[i] == nullptr)
                {
                    throw capi_error(capi_errc::invalid_argument, "data[" + std::to_string(i) + "] is NULL");
                }
                values[i] = zx::vlen_element{data[i], sizes[i]};
            }
            a.write_bytes(off, ext, reinterpret_cast<const std::byte*>(values.data()));
        });
}

zarrxt_status zarrxt_array_create(zarrxt_store* store, const char* path, const char* metadata_json,
                                  unsigned flags, zarrxt_node** out)
{
    return guarded(
        [&]
        {
            need(out, "out") = nullptr;
            store_t& s = need(store, "store").store;
            if ((flags & ~ZARRXT_OVERWRITE) != 0)
            {
                throw capi_error(capi_errc::invalid_argument, "zarrxt_array_create: unknown flags");
            }
            const zx::json doc = parse_json_arg(metadata_json, "metadata");
            const std::string p = zx::normalize_path(path_arg(path));
            zx::array_metadata m;
            if (doc.is_object() && doc.contains("zarr_format") && doc["zarr_format"] == 2)
            {
                m = zx::detail::with_key_context(zx::join_key(p, ".zarray"),
                                                 [&] { return zx::parse_v2_array(doc); });
            }
            else
            {
                m = zx::detail::with_key_context(zx::join_key(p, "zarr.json"),
                                                 [&]
                                                 {
                                                     if (!doc.is_object() || zx::v3_node_type(doc) != "array")
                                                     {
                                                         throw zx::metadata_error(
                                                             zx::metadata_errc::wrong_node_type,
                                                             "the document does not describe an array");
                                                     }
                                                     return zx::parse_v3_array(doc);
                                                 });
            }
            auto core = array_t::core_type::create_from_metadata(s, p, std::move(m),
                                                                 (flags & ZARRXT_OVERWRITE) != 0, {}, {});
            *out = new zarrxt_node(array_t(std::move(core)));
        });
}

zarrxt_status zarrxt_array_create_simple(zarrxt_store* store, const char* path, int zarr_format, int dtype,
                                         std::size_t rank, const std::uint64_t* shape,
                                         const std::uint64_t* chunk_shape, unsigned flags, zarrxt_node** out)
{
    return guarded(
        [&]
        {
            need(out, "out") = nullptr;
            store_t& s = need(store, "store").store;
            if ((flags & ~ZARRXT_OVERWRITE) != 0)
            {
                throw capi_error(capi_errc::invalid_argument, "zarrxt_array_create_simple: unknown flags");
            }
            const auto id = dtype_of_c(dtype);
            if (!id)
            {
                throw capi_error(capi_errc::invalid_argument,
                                 "unknown zarrxt_dtype " + std::to_string(dtype));
            }
            if (zx::is_time(*id) || *id == zx::dtype_id::fixed_bytes || *id == zx::dtype_id::fixed_utf32 ||
                *id == zx::dtype_id::structured)
            {
                throw capi_error(capi_errc::invalid_argument,
                                 std::string(zx::name(*id)) +
                                     " needs a unit, a length or fields: create it with zarrxt_array_create");
            }
            if (rank > 0)
            {
                need(shape, "shape");
                need(chunk_shape, "chunk_shape");
            }
            const bool overwrite = (flags & ZARRXT_OVERWRITE) != 0;
            std::shared_ptr<array_t::core_type> core;
            if (zarr_format == 3)
            {
                zx::v3_options o;
                o.shape = to_vector(shape, rank);
                o.chunk_shape = to_vector(chunk_shape, rank);
                o.overwrite = overwrite;
                core = array_t::core_type::create(s, path_arg(path), *id, o, {}, {});
            }
            else if (zarr_format == 2)
            {
                zx::v2_options o;
                o.shape = to_vector(shape, rank);
                o.chunks = to_vector(chunk_shape, rank);
                o.overwrite = overwrite;
                core = array_t::core_type::create(s, path_arg(path), *id, o, {}, {});
            }
            else
            {
                throw capi_error(capi_errc::invalid_argument,
                                 "zarr_format must be 2 or 3, not " + std::to_string(zarr_format));
            }
            *out = new zarrxt_node(array_t(std::move(core)));
        });
}
