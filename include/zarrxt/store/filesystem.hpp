/** @file store/filesystem.hpp
 *  `filesystem_store`: keys are files below a root directory ("a/c/0/1" -> root/a/c/0/1).
 *
 *  Writes are atomic: the bytes go to a temporary file in the destination directory, which is then
 *  renamed over the key, so a reader (or a crash) sees the old object or the new one, never half of
 *  one. With `durability::fsync` the file is fsync'ed before the rename and the directory after it,
 *  so a completed write also survives power loss. Temporary files are named ".zarrxt-tmp-*" and are
 *  never listed as keys; a writer killed mid-write leaves one behind, which `zarrxt verify --clean`
 *  removes.
 *  Reads use open/fstat/pread/close: one object, one size, no stdio buffering.
 *
 *  Read-modify-write of a key is serialised between threads of one process by `lock_key`. With
 *  `process_locking::advisory` it is serialised between processes too: `lock_key` also takes an
 *  open-file-description lock (fcntl F_OFD_SETLKW) on one byte of `<root>/.zarrxt-locks` chosen by
 *  the key's hash, so writers in several processes sharing a shard do not lose updates. Without it,
 *  processes must write disjoint chunks/shards (docs/safety.md).
 */
#pragma once

#include "concepts.hpp"
#include "key.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zarrxt
{

enum class durability
{
    atomic, ///< temp file + rename: safe against process crashes (the default)
    fsync,  ///< additionally fsync the file and its directory: safe against power loss
};

enum class process_locking
{
    none,     ///< lock_key serialises threads of this process only (the default)
    advisory, ///< lock_key also takes an advisory lock shared by every process using the root
};

namespace detail
{

/// The most one write() call hands the kernel. On Linux the page cache sizes a file's folios by
/// the length of each write (up to 2 MiB on ext4), and 2 MiB folios come from the largest free
/// blocks, which a virtual machine with free page reporting (virtio-balloon) has returned to its
/// host: the first copy into each such block waits for the host. Measured on a 2-core virtual
/// machine with free page reporting (Linux 6.18, ext4), writing a fresh 2 GiB file took 6.3 s
/// as 2 MiB writes and 0.6-0.8 s as 256 KiB writes; with warm memory both take 30 ms per
/// 100 MB, as do 100 MB written in 512 KiB or 1 MiB calls (64 KiB: 33 ms). 256 KiB keeps the
/// large-folio gain without the cold blocks.
inline constexpr std::size_t write_step = std::size_t{256} << 10;

} // namespace detail

class filesystem_store
{
    struct state;

public:
    static constexpr std::string_view temp_prefix = ".zarrxt-tmp-";
    static constexpr std::string_view lock_file_name = ".zarrxt-locks";

    explicit filesystem_store(std::filesystem::path root, durability d = durability::atomic,
                              process_locking locking = process_locking::none)
        : m_state(std::make_shared<state>())
    {
        m_state->root = std::move(root);
        m_state->policy = d;
        m_state->locking = locking;
    }

    /// Holds the in-process lock of a key and, with advisory locking, its inter-process lock.
    class key_guard
    {
    public:
        key_guard(std::unique_lock<std::mutex> lock, int fd, off_t byte) : m_lock(std::move(lock)), m_fd(fd), m_byte(byte) {}
        key_guard(key_guard&& o) noexcept : m_lock(std::move(o.m_lock)), m_fd(std::exchange(o.m_fd, -1)), m_byte(o.m_byte) {}
        key_guard& operator=(key_guard&&) = delete;
        key_guard(const key_guard&) = delete;
        ~key_guard()
        {
            if (m_fd >= 0)
            {
                struct ::flock fl{};
                fl.l_type = F_UNLCK;
                fl.l_whence = SEEK_SET;
                fl.l_start = m_byte;
                fl.l_len = 1;
                ::fcntl(m_fd, F_OFD_SETLK, &fl);
            }
        }

    private:
        std::unique_lock<std::mutex> m_lock;
        int m_fd;
        off_t m_byte;
    };

    const std::filesystem::path& root() const noexcept { return m_state->root; }
    durability durability_policy() const noexcept { return m_state->policy; }

    std::optional<read_result> read(std::string_view key, byte_range r, std::uint64_t max_bytes) const;
    std::optional<object_info> stat(std::string_view key) const;
    void set(std::string_view key, byte_view data);
    bool erase(std::string_view key);
    std::vector<std::string> list(std::string_view prefix) const;
    std::vector<std::string> list_dir(std::string_view prefix) const;
    key_guard lock_key(std::string_view key) const;

    /// One object opened for reading (see zarrxt::object_handle). Ranges are pread from the inode
    /// that was opened; zarrxt replaces a key by renaming a new file over it, so a handle never
    /// mixes two versions, and the generation is taken once, at open. Reads may run concurrently.
    class object_handle
    {
    public:
        object_handle(object_handle&& o) noexcept
            : m_fd(std::exchange(o.m_fd, -1))
            , m_info(o.m_info)
            , m_key(std::move(o.m_key))
        {
        }
        object_handle& operator=(object_handle&& o) noexcept
        {
            std::swap(m_fd, o.m_fd);
            std::swap(m_info, o.m_info);
            std::swap(m_key, o.m_key);
            return *this;
        }
        object_handle(const object_handle&) = delete;
        object_handle& operator=(const object_handle&) = delete;
        ~object_handle()
        {
            if (m_fd >= 0)
            {
                ::close(m_fd);
            }
        }

        object_info info() const noexcept { return m_info; }
        /// The range (clamped to the object) into `out`, reusing its capacity.
        void read_to(byte_range r, std::uint64_t max_bytes, buffer& out) const;
        /// Bytes [offset, offset + dest.size()) of the object into `dest` (one pread).
        void read_into(std::uint64_t offset, mutable_byte_view dest) const;
        /// Several ranges, one buffer each (one pread per range).
        void read_ranges(std::span<const byte_range> ranges, std::uint64_t max_bytes,
                         std::span<buffer> out) const
        {
            read_ranges_one_by_one(*this, ranges, max_bytes, out);
        }

    private:
        friend class filesystem_store;
        object_handle(int fd, object_info info, std::string_view key)
            : m_fd(fd)
            , m_info(info)
            , m_key(key)
        {
        }
        int m_fd = -1;
        object_info m_info;
        std::string m_key;
    };

    /// Open `key` once for many range reads (nullopt when it does not exist or is not a file).
    std::optional<object_handle> open_object(std::string_view key) const;

    /// A new version of one key written piece by piece into a temporary file beside it (see
    /// zarrxt::object_writer); commit() publishes it like set() does (rename, fsync per policy).
    /// The file is written in whole, aligned pieces of `piece` bytes (appends are gathered up to
    /// a piece; the aligned middle of a large append goes to write() straight from the caller, one
    /// piece per call): measured on ext4 (Linux 6.x), writing a fresh 100 MB shard as 1,000 writes
    /// of 100 KB took 155-160 ms and as aligned 2 MiB writes 28 ms (the page cache then uses large
    /// folios); the piece is 256 KiB, not 2 MiB, for the reason at detail::write_step.
    class object_writer
    {
    public:
        object_writer(object_writer&& o) noexcept
            : m_state(std::move(o.m_state))
            , m_key(std::move(o.m_key))
            , m_target(std::move(o.m_target))
            , m_tmp(std::move(o.m_tmp))
            , m_fd(std::exchange(o.m_fd, -1))
            , m_size(o.m_size)
            , m_stage(std::move(o.m_stage))
        {
        }
        object_writer& operator=(object_writer&& o) noexcept
        {
            std::swap(m_state, o.m_state);
            std::swap(m_key, o.m_key);
            std::swap(m_target, o.m_target);
            std::swap(m_tmp, o.m_tmp);
            std::swap(m_fd, o.m_fd);
            std::swap(m_size, o.m_size);
            std::swap(m_stage, o.m_stage);
            return *this;
        }
        object_writer(const object_writer&) = delete;
        object_writer& operator=(const object_writer&) = delete;
        ~object_writer() { abandon(); }

        void append(byte_view data);
        void write_at(std::uint64_t offset, byte_view data);
        std::uint64_t size() const noexcept { return m_size; }
        void commit();

        static constexpr std::size_t piece = detail::write_step;

    private:
        friend class filesystem_store;
        object_writer(std::shared_ptr<state> st, std::string key, std::filesystem::path target,
                      std::string tmp, int fd)
            : m_state(std::move(st))
            , m_key(std::move(key))
            , m_target(std::move(target))
            , m_tmp(std::move(tmp))
            , m_fd(fd)
        {
        }
        void flush();
        [[noreturn]] void fail(const char* what);
        void abandon() noexcept
        {
            if (m_fd >= 0)
            {
                ::close(m_fd);
                ::unlink(m_tmp.c_str());
                m_fd = -1;
            }
        }

        std::shared_ptr<state> m_state;
        std::string m_key;
        std::filesystem::path m_target;
        std::string m_tmp;
        int m_fd = -1;
        std::uint64_t m_size = 0;
        buffer m_stage;
    };

    /// Start writing a new version of `key` (creating its directories).
    object_writer begin_write(std::string_view key);

    /// Like read(), into `out` (its capacity is reused: no allocation once it is large enough).
    std::optional<object_info> read_to(std::string_view key, byte_range r, std::uint64_t max_bytes, buffer& out) const;

    /// Read min(size - offset, dest.size()) bytes at `offset` straight into caller memory; returns the
    /// object's size and generation (nullopt if absent).
    std::optional<object_info> read_into(std::string_view key, std::uint64_t offset, mutable_byte_view dest) const;

    std::filesystem::path path_of(std::string_view key) const
    {
        validate_key(key);
        return m_state->root / std::filesystem::path(std::string(key));
    }

    static bool is_temp_name(std::string_view name) noexcept { return name.substr(0, temp_prefix.size()) == temp_prefix; }
    /// zarrxt's own bookkeeping files (temporaries, the lock file): never keys.
    static bool is_internal_name(std::string_view name) noexcept { return name.substr(0, 8) == ".zarrxt-"; }

private:
    struct state
    {
        std::filesystem::path root;
        durability policy = durability::atomic;
        detail::key_lock_table locks;
        std::atomic<std::uint64_t> temp_counter{0};
        process_locking locking = process_locking::none;
        std::once_flag lock_file_once;
        int lock_fd = -1;
        int lock_errno = 0;
        ~state()
        {
            if (lock_fd >= 0)
            {
                ::close(lock_fd);
            }
        }
    };
    std::shared_ptr<state> m_state;

    [[noreturn]] static void throw_io(std::string_view what, std::string_view key, int err)
    {
        store_error e(store_errc::io, std::string(what) + ": " + std::strerror(err));
        e.with_key(key);
        throw e;
    }
};

/******************
 * implementation *
 ******************/

namespace detail
{

struct fd_guard
{
    int fd = -1;
    ~fd_guard()
    {
        if (fd >= 0)
        {
            ::close(fd);
        }
    }
};

inline std::uint64_t generation_of(const struct ::stat& st) noexcept
{
    // A rewrite creates a new inode (rename over the key), so inode + mtime + size changes on
    // every replacement even when the clock is coarse.
    const std::uint64_t mt = static_cast<std::uint64_t>(st.st_mtim.tv_sec) * 1000000000ull
                             + static_cast<std::uint64_t>(st.st_mtim.tv_nsec);
    std::uint64_t h = mt;
    h ^= static_cast<std::uint64_t>(st.st_ino) * 0x9E3779B97F4A7C15ull;
    h ^= static_cast<std::uint64_t>(st.st_size) * 0xC2B2AE3D27D4EB4Full;
    return h;
}

inline bool pread_all(int fd, std::byte* dst, std::size_t n, std::uint64_t offset) noexcept
{
    while (n > 0)
    {
        const ssize_t r = ::pread(fd, dst, n, static_cast<off_t>(offset));
        if (r < 0)
        {
            if (errno == EINTR)
            {
                continue;
            }
            return false;
        }
        if (r == 0)
        {
            errno = EIO; // the file shrank under us
            return false;
        }
        dst += r;
        n -= static_cast<std::size_t>(r);
        offset += static_cast<std::uint64_t>(r);
    }
    return true;
}

inline bool write_all(int fd, const std::byte* src, std::size_t n) noexcept
{
    while (n > 0)
    {
        const ssize_t r = ::write(fd, src, std::min(n, write_step));
        if (r < 0)
        {
            if (errno == EINTR)
            {
                continue;
            }
            return false;
        }
        src += r;
        n -= static_cast<std::size_t>(r);
    }
    return true;
}

/// write_all at `offset` (pwrite: the file position is left alone), in the same steps.
inline bool pwrite_all(int fd, const std::byte* src, std::size_t n, std::uint64_t offset) noexcept
{
    while (n > 0)
    {
        const ssize_t r = ::pwrite(fd, src, std::min(n, write_step), static_cast<off_t>(offset));
        if (r < 0)
        {
            if (errno == EINTR)
            {
                continue;
            }
            return false;
        }
        src += r;
        n -= static_cast<std::size_t>(r);
        offset += static_cast<std::uint64_t>(r);
    }
    return true;
}

} // namespace detail

inline filesystem_store::key_guard filesystem_store::lock_key(std::string_view key) const
{
    auto in_process = m_state->locks.lock(key);
    if (m_state->locking == process_locking::none)
    {
        return key_guard(std::move(in_process), -1, 0);
    }
    std::call_once(m_state->lock_file_once, [&] {
        std::error_code ec;
        std::filesystem::create_directories(m_state->root, ec);
        const auto p = m_state->root / std::string(lock_file_name);
        m_state->lock_fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        m_state->lock_errno = m_state->lock_fd < 0 ? errno : 0;
    });
    if (m_state->lock_fd < 0)
    {
        store_error e(store_errc::lock, std::string("cannot open the lock file: ") + std::strerror(m_state->lock_errno));
        e.with_key(key);
        throw e;
    }
    // The byte is the key's stripe: keys that share a stripe already share the in-process mutex, so
    // no two threads of this process ever hold the same byte through the shared descriptor.
    const auto byte = static_cast<off_t>(detail::key_lock_table::stripe_of(key));
    struct ::flock fl{};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = byte;
    fl.l_len = 1;
    while (::fcntl(m_state->lock_fd, F_OFD_SETLKW, &fl) != 0)
    {
        if (errno != EINTR)
        {
            store_error e(store_errc::lock, std::string("advisory lock failed: ") + std::strerror(errno));
            e.with_key(key);
            throw e;
        }
    }
    return key_guard(std::move(in_process), m_state->lock_fd, byte);
}

inline std::optional<read_result> filesystem_store::read(std::string_view key, byte_range r, std::uint64_t max_bytes) const
{
    return read_via_read_to(*this, key, r, max_bytes);
}

inline std::optional<filesystem_store::object_handle> filesystem_store::open_object(
    std::string_view key) const
{
    const auto p = path_of(key);
    // O_NONBLOCK: a FIFO planted at a key must not block open() (no effect on regular files).
    detail::fd_guard f{::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
    if (f.fd < 0)
    {
        if (errno == ENOENT || errno == ENOTDIR)
        {
            return std::nullopt;
        }
        throw_io("open", key, errno);
    }
    struct ::stat st;
    if (::fstat(f.fd, &st) != 0)
    {
        throw_io("fstat", key, errno);
    }
    if (!S_ISREG(st.st_mode))
    {
        return std::nullopt; // a directory is not an object
    }
    return object_handle(std::exchange(f.fd, -1),
                         object_info{static_cast<std::uint64_t>(st.st_size), detail::generation_of(st)}, key);
}

inline void filesystem_store::object_handle::read_to(byte_range r, std::uint64_t max_bytes, buffer& out) const
{
    const auto [begin, end] = resolve_capped_range(r, m_info.size, max_bytes, m_key);
    out.resize_discard(static_cast<std::size_t>(end - begin));
    if (!detail::pread_all(m_fd, out.data(), out.size(), begin))
    {
        throw_io("read", m_key, errno);
    }
}

inline void filesystem_store::object_handle::read_into(std::uint64_t offset, mutable_byte_view dest) const
{
    if (offset > m_info.size || dest.size() > m_info.size - offset)
    {
        throw std::out_of_range("zarrxt: read_into past the end of " + m_key);
    }
    if (!detail::pread_all(m_fd, dest.data(), dest.size(), offset))
    {
        throw_io("read", m_key, errno);
    }
}

inline std::optional<object_info> filesystem_store::read_to(std::string_view key, byte_range r,
                                                            std::uint64_t max_bytes, buffer& out) const
{
    return read_to_via_handle(*this, key, r, max_bytes, out);
}

inline std::optional<object_info> filesystem_store::read_into(std::string_view key, std::uint64_t offset,
                                                              mutable_byte_view dest) const
{
    auto h = open_object(key);
    if (!h)
    {
        return std::nullopt;
    }
    std::size_t done = 0;
    while (done < dest.size())
    {
        const ssize_t r =
            ::pread(h->m_fd, dest.data() + done, dest.size() - done, static_cast<off_t>(offset + done));
        if (r < 0)
        {
            if (errno == EINTR)
            {
                continue;
            }
            throw_io("read", key, errno);
        }
        if (r == 0)
        {
            break;
        }
        done += static_cast<std::size_t>(r);
    }
    return h->info();
}

inline std::optional<object_info> filesystem_store::stat(std::string_view key) const
{
    const auto p = path_of(key);
    struct ::stat st;
    if (::stat(p.c_str(), &st) != 0)
    {
        if (errno == ENOENT || errno == ENOTDIR)
        {
            return std::nullopt;
        }
        throw_io("stat", key, errno);
    }
    if (!S_ISREG(st.st_mode))
    {
        return std::nullopt;
    }
    return object_info{static_cast<std::uint64_t>(st.st_size), detail::generation_of(st)};
}

inline filesystem_store::object_writer filesystem_store::begin_write(std::string_view key)
{
    auto p = path_of(key);
    const auto dir = p.parent_path();
    std::string tmp =
        (dir / (std::string(temp_prefix) + std::to_string(::getpid()) + "-" +
                std::to_string(m_state->temp_counter.fetch_add(1)) + "-" + p.filename().string()))
            .string();
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == ENOENT)
    {
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        if (ec)
        {
            throw_io("create directories", key, ec.value());
        }
        fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    }
    if (fd < 0)
    {
        throw_io("create temporary file", key, errno);
    }
    return object_writer(m_state, std::string(key), std::move(p), std::move(tmp), fd);
}

inline void filesystem_store::object_writer::fail(const char* what)
{
    const int err = errno;
    abandon();
    throw_io(what, m_key, err);
}

inline void filesystem_store::object_writer::flush()
{
    if (!m_stage.empty())
    {
        if (!detail::write_all(m_fd, m_stage.data(), m_stage.size()))
        {
            fail("write");
        }
        m_stage.clear();
    }
}

inline void filesystem_store::object_writer::append(byte_view data)
{
    if (m_fd < 0)
    {
        throw std::logic_error("zarrxt: object_writer used after commit or failure");
    }
    const std::byte* p = data.data();
    std::size_t n = data.size();
    m_size += n;
    if (!m_stage.empty() || n < piece)
    {
        // Top up the piece being gathered; write it once whole.
        if (m_stage.capacity() < piece)
        {
            m_stage.reserve(piece);
        }
        const std::size_t take = std::min(n, piece - m_stage.size());
        m_stage.append(byte_view(p, take));
        p += take;
        n -= take;
        if (m_stage.size() == piece)
        {
            flush();
        }
    }
    if (n >= piece)
    {
        // Whole pieces straight from the caller's memory (the gathered piece is empty here).
        const std::size_t whole = n - n % piece;
        if (!detail::write_all(m_fd, p, whole))
        {
            fail("write");
        }
        p += whole;
        n -= whole;
    }
    if (n > 0)
    {
        m_stage.append(byte_view(p, n));
    }
}

inline void filesystem_store::object_writer::write_at(std::uint64_t offset, byte_view data)
{
    if (m_fd < 0)
    {
        throw std::logic_error("zarrxt: object_writer used after commit or failure");
    }
    if (offset > m_size || data.size() > m_size - offset)
    {
        throw std::out_of_range("zarrxt: object_writer::write_at past the bytes appended so far");
    }
    flush();
    if (!detail::pwrite_all(m_fd, data.data(), data.size(), offset))
    {
        fail("write");
    }
}

inline void filesystem_store::object_writer::commit()
{
    if (m_fd < 0)
    {
        throw std::logic_error("zarrxt: object_writer used after commit or failure");
    }
    flush();
    if (m_state->policy == durability::fsync && ::fsync(m_fd) != 0)
    {
        fail("fsync");
    }
    const int fd = std::exchange(m_fd, -1);
    if (::close(fd) != 0)
    {
        const int err = errno;
        ::unlink(m_tmp.c_str());
        throw_io("close", m_key, err);
    }
    if (::rename(m_tmp.c_str(), m_target.c_str()) != 0)
    {
        const int err = errno;
        ::unlink(m_tmp.c_str());
        throw_io("rename", m_key, err);
    }
    if (m_state->policy == durability::fsync)
    {
        detail::fd_guard d{::open(m_target.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
        if (d.fd < 0 || ::fsync(d.fd) != 0)
        {
            throw_io("fsync directory", m_key, errno);
        }
    }
}

inline void filesystem_store::set(std::string_view key, byte_view data)
{
    // One write of the whole object, then the same publication as a streamed object.
    auto w = begin_write(key);
    if (!detail::write_all(w.m_fd, data.data(), data.size()))
    {
        w.fail("write");
    }
    w.m_size = data.size();
    w.commit();
}

inline bool filesystem_store::erase(std::string_view key)
{
    const auto p = path_of(key);
    if (::unlink(p.c_str()) != 0)
    {
        if (errno == ENOENT || errno == ENOTDIR)
        {
            return false;
        }
        if (errno == EISDIR || errno == EPERM)
        {
            return false; // a directory is not an object
        }
        throw_io("unlink", key, errno);
    }
    if (m_state->policy == durability::fsync)
    {
        detail::fd_guard d{::open(p.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
        if (d.fd >= 0)
        {
            ::fsync(d.fd);
        }
    }
    return true;
}

namespace detail
{

/// Visit the entries below `base` (recursively or not), skipping zarrxt's own files and stopping
/// quietly at errors (a missing prefix lists as empty).
template <class Iterator, class F>
void walk_store_dir(const std::filesystem::path& base, F&& f)
{
    std::error_code ec;
    Iterator it(base, ec);
    if (ec)
    {
        return;
    }
    for (; it != Iterator(); it.increment(ec))
    {
        if (ec)
        {
            break;
        }
        if (!filesystem_store::is_internal_name(it->path().filename().string()))
        {
            f(*it);
        }
    }
}

} // namespace detail

inline std::vector<std::string> filesystem_store::list(std::string_view prefix) const
{
    std::vector<std::string> out;
    const std::string pre = normalize_path(prefix);
    detail::walk_store_dir<std::filesystem::recursive_directory_iterator>(
        pre.empty() ? m_state->root : m_state->root / pre, [&](const std::filesystem::directory_entry& e) {
            std::error_code ec;
            if (e.is_regular_file(ec))
            {
                out.push_back(std::filesystem::relative(e.path(), m_state->root, ec).generic_string());
            }
        });
    std::sort(out.begin(), out.end());
    return out;
}

inline std::vector<std::string> filesystem_store::list_dir(std::string_view prefix) const
{
    std::vector<std::string> out;
    const std::string pre = normalize_path(prefix);
    detail::walk_store_dir<std::filesystem::directory_iterator>(
        pre.empty() ? m_state->root : m_state->root / pre,
        [&](const std::filesystem::directory_entry& e) { out.push_back(e.path().filename().string()); });
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace zarrxt
