// Exemplars: the smallest user-written model of each policy concept, kept compiling by the test
// suite and quoted by docs/concepts/*.md. Each is also used once so that it must work, not only
// compile.
#include "../support/array_support.hpp"

namespace zx = zarrxt;

//[exemplar_codec: a bytes->bytes codec that stores the chunk bit-inverted
struct invert_codec
{
    using codec_kind = zx::codec::bytes_to_bytes_tag;
    static constexpr std::string_view name = "example.invert";

    static invert_codec from_json(const zx::json&, const zx::codec::codec_context&) { return {}; }
    zx::json to_json() const { return zx::json::object(); }
    std::optional<std::size_t> encoded_size(std::size_t n) const { return n; }
    void encode(zx::byte_view in, zx::buffer& out) const
    {
        zx::buffer r(in.size());
        for (std::size_t i = 0; i < in.size(); ++i)
            r.data()[i] = ~in[i];
        out = std::move(r);
    }
    zx::mutable_byte_view decode(zx::mutable_byte_view in, zx::buffer&, const zx::codec::decode_hint& hint) const
    {
        if (hint.exact && *hint.exact != in.size())
            throw zx::codec_error(zx::codec_errc::size_mismatch, name, "wrong size");
        for (auto& b : in)
            b = ~b;
        return in;
    }
};
static_assert(zx::codec::bytes_to_bytes_codec<invert_codec>);
//]

//[exemplar_store: a store that forwards to a memory_store (logging, remote access, ... go here)
class forwarding_store
{
public:
    std::optional<zx::read_result> read(std::string_view k, zx::byte_range r, std::uint64_t max) const { return m_s.read(k, r, max); }
    std::optional<zx::object_info> stat(std::string_view k) const { return m_s.stat(k); }
    void set(std::string_view k, zx::byte_view v) { m_s.set(k, v); }
    bool erase(std::string_view k) { return m_s.erase(k); }
    std::vector<std::string> list(std::string_view p) const { return m_s.list(p); }
    std::vector<std::string> list_dir(std::string_view p) const { return m_s.list_dir(p); }
    auto lock_key(std::string_view k) const { return m_s.lock_key(k); }

private:
    zx::memory_store m_s;
};
static_assert(zx::array_writable_store<forwarding_store>);
//]

//[exemplar_read_only_store: a read-only snapshot of objects held in memory, with object handles
class snapshot_store
{
public:
    using object_map = std::map<std::string, std::string, std::less<>>;
    explicit snapshot_store(object_map objects) : m_objects(std::make_shared<const object_map>(std::move(objects))) {}

    // One object for many range reads (a shard): found once, read many times.
    class object_handle
    {
    public:
        explicit object_handle(const std::string& bytes) : m_bytes(&bytes) {}
        zx::object_info info() const noexcept { return {m_bytes->size(), 1}; } // a snapshot never changes
        void read_to(zx::byte_range r, std::uint64_t max, zx::buffer& out) const
        {
            // Clamp the range to the object; refuse more than `max` bytes before allocating.
            const auto [b, e] = zx::resolve_capped_range(r, m_bytes->size(), max, "snapshot");
            out = zx::buffer::copy_of(zx::as_bytes(std::string_view(*m_bytes).substr(b, e - b)));
        }
        void read_ranges(std::span<const zx::byte_range> rs, std::uint64_t max, std::span<zx::buffer> out) const
        {
            zx::read_ranges_one_by_one(*this, rs, max, out); // nothing to gain from batching in memory
        }

    private:
        const std::string* m_bytes;
    };

    std::optional<object_handle> open_object(std::string_view key) const
    {
        zx::validate_key(key); // every entry point validates its key
        auto it = m_objects->find(key);
        if (it == m_objects->end())
            return std::nullopt;
        return object_handle(it->second);
    }
    std::optional<zx::read_result> read(std::string_view key, zx::byte_range r, std::uint64_t max) const
    {
        auto h = open_object(key);
        if (!h)
            return std::nullopt;
        zx::read_result res;
        h->read_to(r, max, res.bytes);
        res.object_size = h->info().size;
        res.generation = h->info().generation;
        return res;
    }
    std::optional<zx::object_info> stat(std::string_view key) const
    {
        auto h = open_object(key);
        return h ? std::optional<zx::object_info>(h->info()) : std::nullopt;
    }

private:
    std::shared_ptr<const object_map> m_objects; // copies share the snapshot
};
static_assert(zx::store_policy<snapshot_store> && zx::object_store<snapshot_store>);
static_assert(!zx::array_writable_store<snapshot_store>); // create and write do not compile on it
//]

//[exemplar_index_cache: keep the last index only
class last_index_cache
{
public:
    static constexpr bool per_operation = false;
    zx::shard_index_ptr find(std::string_view key)
    {
        std::lock_guard<std::mutex> g(m_mutex);
        return key == m_key ? m_index : nullptr;
    }
    void insert(std::string_view key, zx::shard_index_ptr index)
    {
        std::lock_guard<std::mutex> g(m_mutex);
        m_key = key;
        m_index = std::move(index);
    }
    void invalidate(std::string_view key)
    {
        std::lock_guard<std::mutex> g(m_mutex);
        if (key == m_key)
            m_index = nullptr;
    }
    std::size_t cached_bytes() const
    {
        std::lock_guard<std::mutex> g(m_mutex);
        return m_index ? m_index->memory_bytes() : 0;
    }

private:
    mutable std::mutex m_mutex;
    std::string m_key;
    zx::shard_index_ptr m_index;
};
static_assert(zx::index_cache_policy<last_index_cache>);
//]

//[exemplar_executor: run chunk tasks in reverse order on the calling thread
struct reverse_executor
{
    std::size_t concurrency() const { return 1; }
    template <class F>
    void bulk(std::size_t n, F&& f) const
    {
        for (std::size_t i = n; i-- > 0;)
            f(i, std::size_t{0});
    }
};
static_assert(zx::executor_policy<reverse_executor>);
//]

//[exemplar_limits: small caps for an untrusted upload service
struct upload_limits : zx::default_limits
{
    upload_limits()
    {
        max_metadata_bytes = 64 << 10;
        max_chunk_bytes = 8 << 20;
    }
};
static_assert(zx::limits_policy<upload_limits>);
//]

//[exemplar_dtype: a strong type stored as uint32
enum class label : std::uint32_t
{
};
template <>
struct zarrxt::dtype_traits<label>
{
    static constexpr zarrxt::dtype_id id = zarrxt::dtype_id::uint32;
};
static_assert(zx::element_type<label>);
//]

TEST_SUITE("exemplars")
{
    TEST_CASE("every exemplar policy works in an array")
    {
        forwarding_store s;
        using ex_array = zx::array<label, 1, zx::chain<zx::codec::bytes<>, invert_codec>, forwarding_store,
                                   last_index_cache, reverse_executor, upload_limits>;
        auto a = ex_array::create(s, "x", zx::v3_options{.shape = {6}, .chunk_shape = {4},
                                                          .codecs = {zx::codec::bytes{}, invert_codec{}}});
        xt::xtensor<label, 1> v = xt::xtensor<label, 1>::from_shape({6});
        for (std::size_t i = 0; i < 6; ++i)
            v(i) = static_cast<label>(i * 3);
        a.write({{0}, {6}}, v);
        auto raw = s.read("x/c/0", zx::byte_range::all(), 1 << 20);
        REQUIRE(raw.has_value());
        CHECK(raw->bytes.data()[0] == std::byte{0xff}); // stored inverted: ~0
        auto r = ex_array::open(s, "x").read();
        for (std::size_t i = 0; i < 6; ++i)
            CHECK(static_cast<std::uint32_t>(r(i)) == i * 3);
        // The read-only store: a snapshot of what was written, opened and read.
        snapshot_store::object_map objects;
        for (const auto& key : s.list(""))
            objects[key] = zxtest::as_string_of(zx::get(s, key));
        const snapshot_store snap(std::move(objects));
        using snap_array = zx::array<label, 1, zx::chain<zx::codec::bytes<>, invert_codec>, snapshot_store>;
        const auto got = snap_array::open(snap, "x").read({{1}, {4}});
        for (std::size_t i = 0; i < 4; ++i)
            CHECK(static_cast<std::uint32_t>(got(i)) == (i + 1) * 3);
        // The limits policy applies: a 16 MiB chunk exceeds the 8 MiB cap at create.
        CHECK_THROWS_AS(ex_array::create(s, "big", zx::v3_options{.shape = {1u << 22}, .chunk_shape = {1u << 22},
                                                                   .codecs = {zx::codec::bytes{}, invert_codec{}}}),
                        zx::limit_exceeded);
    }
}
