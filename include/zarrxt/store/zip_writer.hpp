/** @file store/zip_writer.hpp
 *  `zip_writer`: a writable store that builds a new zip archive at a local path. Arrays and groups
 *  are created and written through it as through any store (objects live in a staging directory
 *  beside the destination until then, so partial writes, rewrites and erases cost what they cost on
 *  a directory); `commit()` packs every object as a STORED entry (ZIP64 where sizes or offsets need
 *  it) into a temporary file and renames it over the destination: readers of the path see the old
 *  archive or the new one, never a part. A writer whose copies are all destroyed without commit()
 *  leaves the destination untouched and removes its staging directory.
 *
 *  STORED entries, because chunks are compressed already by their codecs and because a STORED
 *  entry's ranges are ranges of the archive (zip_store reads shards inside it by range). Entries
 *  are written in key order with a fixed timestamp (1980-01-01), so the same objects make the same
 *  archive, byte for byte. The cost is writing the data twice (staging, then the archive).
 *
 *  The archive can also be published as a key of another writable store (an s3_store, the any_store
 *  of an s3:// URL): staging and packing then happen in the system's temporary directory and
 *  commit() stores the packed file with one set() of the whole archive, mapped from the file rather
 *  than read into memory. An S3 PUT replaces an object atomically, so readers of the key see the
 *  old archive or the new one there too.
 */
#pragma once

#include "../detail/zip_format.hpp"
#include "concepts.hpp"
#include "filesystem.hpp"
#include "key.hpp"

#include <algorithm>
#include <atomic>
#include <concepts>
#include <filesystem>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace zarrxt
{

struct zip_write_options
{
    /// ZIP64 records for every entry and the end of the archive, needed or not (for readers that
    /// are to be tested on them without writing 4 GiB).
    bool force_zip64 = false;
    /// How the archive is published: durability::fsync also syncs it and its directory.
    durability publish = durability::atomic;
};

class zip_writer
{
public:
    /// A new archive to be published at `destination` (a file; replaced by commit() if it exists).
    explicit zip_writer(std::filesystem::path destination, zip_write_options options = {});

    /// A new archive to be published as `key` of `target` (replaced by commit() if it exists).
    /// The writer keeps a copy of `target` (copies of a store share its state). A commit whose
    /// set() fails throws that error and may be retried: nothing is staged anew.
    template <class Target>
    requires writable_store<Target> && std::copy_constructible<Target> zip_writer(
        Target target, std::string key, zip_write_options options = {});

    std::optional<read_result> read(std::string_view key, byte_range r, std::uint64_t max_bytes) const
    {
        return m_state->staging.read(key, r, max_bytes);
    }
    std::optional<object_info> stat(std::string_view key) const { return m_state->staging.stat(key); }
    std::vector<std::string> list(std::string_view prefix) const { return m_state->staging.list(prefix); }
    std::vector<std::string> list_dir(std::string_view prefix) const
    {
        return m_state->staging.list_dir(prefix);
    }
    filesystem_store::key_guard lock_key(std::string_view key) const
    {
        return m_state->staging.lock_key(key);
    }
    void set(std::string_view key, byte_view data)
    {
        std::shared_lock<std::shared_mutex> g(m_state->mutex);
        check_open(key);
        m_state->staging.set(key, data);
    }
    bool erase(std::string_view key)
    {
        std::shared_lock<std::shared_mutex> g(m_state->mutex);
        check_open(key);
        return m_state->staging.erase(key);
    }

    /// Packs every object into the archive and publishes it at the destination. Afterwards the
    /// writer reads as before and refuses writes (store.9). Returns the number of entries.
    std::size_t commit();

    bool committed() const noexcept { return m_state->committed.load(); }
    /// The local file the archive is packed into: the destination, or for a writer to a store the
    /// temporary file that commit() stores and then removes.
    const std::filesystem::path& destination() const noexcept { return m_state->destination; }

private:
    struct state
    {
        std::filesystem::path destination;
        std::filesystem::path staging_dir;
        filesystem_store staging;
        zip_write_options options;
        std::shared_mutex mutex; ///< writes share it; commit() takes it alone
        std::atomic<bool> committed{false};
        /// For a writer to a store: stores the packed archive under its key.
        std::function<void(byte_view)> upload;
        std::string name; ///< the archive as errors name it

        state(std::filesystem::path dest, std::filesystem::path dir, zip_write_options o)
            : destination(std::move(dest))
            , staging_dir(std::move(dir))
            , staging(staging_dir)
            , options(o)
        {
        }
        state(const state&) = delete;
        state& operator=(const state&) = delete;
        ~state()
        {
            std::error_code ec;
            std::filesystem::remove_all(staging_dir, ec); // nothing to report from a destructor
        }
    };

    void check_open(std::string_view key) const
    {
        if (m_state->committed.load())
        {
            store_error e(store_errc::read_only, "the zip archive " + m_state->name +
                                                     " was committed: a write needs a new zip_writer");
            e.with_key(key);
            throw e;
        }
    }

    /// Makes the staging directory `.<stem>.zarrxt-staging-<pid>-<n>` in `parent` and the state.
    void start(std::filesystem::path destination, const std::filesystem::path& parent,
               zip_write_options options);
    /// Stores the packed archive through the state's upload, then removes the packed file.
    void upload_packed() const;

    std::shared_ptr<state> m_state;
};

/******************
 * implementation *
 ******************/

inline zip_writer::zip_writer(std::filesystem::path destination, zip_write_options options)
{
    if (destination.filename().empty())
    {
        throw store_error(store_errc::invalid_key,
                          "a zip archive needs a file name, not \"" + destination.string() + "\"");
    }
    std::filesystem::path parent = destination.parent_path();
    if (parent.empty())
    {
        parent = ".";
    }
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    // The staging directory sits beside the destination (same file system: the pack reads it at
    // disk speed), hidden, and unique to this writer.
    start(std::move(destination), parent, options);
    m_state->name = m_state->destination.string();
}

template <class Target>
requires writable_store<Target> && std::copy_constructible<Target> zip_writer::zip_writer(
    Target target, std::string key, zip_write_options options)
{
    validate_key(key);
    const std::string file = key.substr(key.rfind('/') + 1); // npos + 1 == 0: the whole key
    std::error_code ec;
    const std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
    if (ec)
    {
        throw store_error(store_errc::io,
                          "no temporary directory to pack the zip archive " + key + " in: " + ec.message());
    }
    start(tmp / file, tmp, options);
    // The archive is packed beside the staging directory, under its unique name, and removed once
    // commit() has stored it.
    m_state->destination = m_state->staging_dir.string() + ".zip";
    m_state->name = key;
    m_state->upload = [t = std::move(target), k = std::move(key)](byte_view archive) mutable
    { t.set(k, archive); };
}

inline void zip_writer::start(std::filesystem::path destination, const std::filesystem::path& parent,
                              zip_write_options options)
{
    static std::atomic<unsigned> counter{0};
    const std::string name = "." + destination.filename().string() + ".zarrxt-staging-" +
                             std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
    std::filesystem::path dir = parent / name;
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (!std::filesystem::create_directory(dir, ec) || ec)
    {
        throw store_error(store_errc::io,
                          "cannot create the staging directory " + dir.string() + ": " + ec.message());
    }
    m_state = std::make_shared<state>(std::move(destination), std::move(dir), options);
}

inline void zip_writer::upload_packed() const
{
    const std::filesystem::path& packed = m_state->destination;
    // The packed file goes whatever happens: a retried commit packs it again from the staging.
    struct remove_packed
    {
        const std::filesystem::path& p;
        ~remove_packed()
        {
            std::error_code ec;
            std::filesystem::remove(p, ec);
        }
    } cleanup{packed};
    const int fd = ::open(packed.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
    {
        throw store_error(store_errc::io, "cannot open the packed zip archive " + packed.string() + ": " +
                                              std::system_category().message(errno));
    }
    struct stat st
    {
    };
    void* map = MAP_FAILED;
    if (::fstat(fd, &st) == 0 && st.st_size > 0)
    {
        map = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    }
    const int err = errno;
    ::close(fd);
    if (map == MAP_FAILED)
    {
        throw store_error(store_errc::io, "cannot map the packed zip archive " + packed.string() + ": " +
                                              std::system_category().message(err));
    }
    struct unmap
    {
        void* p;
        std::size_t n;
        ~unmap() { ::munmap(p, n); }
    } mapped{map, static_cast<std::size_t>(st.st_size)};
    m_state->upload(byte_view(static_cast<const std::byte*>(map), mapped.n));
}

inline std::size_t zip_writer::commit()
{
    namespace z = detail::zip;
    std::unique_lock<std::shared_mutex> g(m_state->mutex);
    if (m_state->committed.load())
    {
        check_open(m_state->destination.filename().string());
    }
    auto keys = m_state->staging.list("");
    std::sort(keys.begin(), keys.end());
    std::filesystem::path parent = m_state->destination.parent_path();
    filesystem_store out_dir(parent.empty() ? std::filesystem::path(".") : parent, m_state->options.publish);
    auto out = out_dir.begin_write(m_state->destination.filename().string());
    const bool force = m_state->options.force_zip64;
    std::vector<z::entry> entries;
    entries.reserve(keys.size());
    constexpr std::uint64_t piece = std::uint64_t{8} << 20;
    buffer data;
    for (const auto& key : keys)
    {
        if (key.size() > 0xFFFF)
        {
            throw store_error(store_errc::invalid_key, "a key of " + std::to_string(key.size()) +
                                                           " bytes does not fit a zip entry name");
        }
        auto h = m_state->staging.open_object(key);
        if (!h)
        {
            continue; // erased between the listing and now: not possible under the lock, harmless
        }
        z::entry e;
        e.name = key;
        e.size = h->info().size;
        e.compressed_size = e.size;
        e.local_offset = out.size();
        // The CRC is known only after the data: the header goes first with 0 and is patched.
        out.append(z::local_header(key, e.size, 0, force || e.size >= 0xFFFFFFFF).view());
        std::uint32_t crc = 0;
        for (std::uint64_t at = 0; at < e.size; at += piece)
        {
            h->read_to(byte_range::of(at, piece), piece, data);
            crc = z::crc32(crc, data.view());
            out.append(data.view());
        }
        e.crc = crc;
        std::byte le[4];
        detail::store_le32(le, crc);
        out.write_at(e.local_offset + 14, byte_view(le, 4));
        entries.push_back(std::move(e));
    }
    buffer directory;
    for (const auto& e : entries)
    {
        z::append_central_header(directory, e, force);
    }
    const std::uint64_t directory_offset = out.size();
    out.append(directory.view());
    out.append(z::end_records(entries.size(), directory_offset, directory.size(), force).view());
    out.commit();
    if (m_state->upload)
    {
        upload_packed();
    }
    m_state->committed.store(true);
    return entries.size();
}

} // namespace zarrxt
