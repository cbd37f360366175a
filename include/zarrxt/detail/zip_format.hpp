/** @file detail/zip_format.hpp
 *  The bytes of a zip archive (PKWARE APPNOTE 6.3): the end records (classic and ZIP64), central
 *  directory headers, local headers, and CRC-32. Shared by zip_store (reading) and zip_writer.
 *
 *  Everything here reads from byte views that the caller fetched and checks every length against
 *  the view before touching it: an archive is untrusted input. Errors are store.10 (malformed) or
 *  store.11 (a zip feature zarrxt does not read), naming the archive and the entry.
 */
#pragma once

#include "../config.hpp"
#include "../error.hpp"
#include "buffer.hpp"
#include "endian.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#if ZARRXT_HAS_LIBDEFLATE
#include <libdeflate.h>
#endif
#include <zlib.h>

namespace zarrxt::detail::zip
{

inline constexpr std::uint32_t local_signature = 0x04034b50;
inline constexpr std::uint32_t central_signature = 0x02014b50;
inline constexpr std::uint32_t end_signature = 0x06054b50;
inline constexpr std::uint32_t end64_signature = 0x06064b50;
inline constexpr std::uint32_t locator64_signature = 0x07064b50;

inline constexpr std::size_t local_header_size = 30;
inline constexpr std::size_t central_header_size = 46;
inline constexpr std::size_t end_size = 22;
inline constexpr std::size_t end64_size = 56;
inline constexpr std::size_t locator64_size = 20;
/// The end record sits within the last end_size + 65535 (the longest comment) bytes.
inline constexpr std::size_t max_end_search = end_size + 0xFFFF;

inline constexpr std::uint16_t method_stored = 0;
inline constexpr std::uint16_t method_deflate = 8;
inline constexpr std::uint16_t flag_encrypted = 1u << 0;
inline constexpr std::uint16_t flag_strong_encryption = 1u << 6;
inline constexpr std::uint16_t flag_utf8 = 1u << 11;
inline constexpr std::uint16_t zip64_extra_id = 0x0001;

inline std::uint16_t load_le16(const std::byte* p) noexcept
{
    return static_cast<std::uint16_t>(std::to_integer<unsigned>(p[0]) |
                                      (std::to_integer<unsigned>(p[1]) << 8));
}

inline void store_le16(std::byte* p, std::uint16_t v) noexcept
{
    p[0] = static_cast<std::byte>(v & 0xFF);
    p[1] = static_cast<std::byte>(v >> 8);
}

[[noreturn]] inline void malformed(std::string_view archive, std::string what)
{
    store_error e(store_errc::archive, "zip archive " + std::string(archive) + ": " + std::move(what));
    e.with_key(archive);
    throw e;
}

[[noreturn]] inline void unsupported(std::string_view archive, std::string what)
{
    store_error e(store_errc::unsupported_archive,
                  "zip archive " + std::string(archive) + ": " + std::move(what));
    e.with_key(archive);
    throw e;
}

inline std::uint32_t crc32(std::uint32_t crc, byte_view data) noexcept
{
#if ZARRXT_HAS_LIBDEFLATE
    return libdeflate_crc32(crc, data.data(), data.size());
#else
    return static_cast<std::uint32_t>(
        ::crc32_z(crc, reinterpret_cast<const Bytef*>(data.data()), static_cast<z_size_t>(data.size())));
#endif
}

/// One file of the central directory.
struct entry
{
    std::string name;
    std::uint64_t local_offset = 0; ///< of its local header
    std::uint64_t compressed_size = 0;
    std::uint64_t size = 0; ///< uncompressed
    std::uint32_t crc = 0;
    std::uint16_t method = method_stored;
    std::uint16_t flags = 0;
};

/// Where the central directory is, from the end records.
struct directory_location
{
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
    std::uint64_t entries = 0;
    std::uint64_t end_offset = 0; ///< where the first end record (ZIP64 or classic) starts
};

/// The classic end record within `tail`, the last bytes of an archive of `archive_size` bytes
/// (`tail` starts at archive_size - tail.size()). Searched from the end for a signature whose
/// comment length reaches exactly the end of the archive, so a signature inside a comment does
/// not fool it. Returns its offset in the archive.
inline std::uint64_t find_end_record(byte_view tail, std::uint64_t archive_size, std::string_view archive)
{
    if (tail.size() < end_size)
    {
        malformed(archive, "too short to be a zip archive (" + std::to_string(archive_size) + " bytes)");
    }
    const std::uint64_t tail_start = archive_size - tail.size();
    for (std::size_t i = tail.size() - end_size + 1; i-- > 0;)
    {
        if (load_le32(tail.data() + i) != end_signature)
        {
            continue;
        }
        const std::size_t comment = load_le16(tail.data() + i + 20);
        if (i + end_size + comment == tail.size())
        {
            return tail_start + i;
        }
    }
    malformed(archive, "no end of central directory record (not a zip archive, or truncated)");
}

/// The central directory's place from the classic end record at `end` and, when present, the
/// ZIP64 end record. `read_at(offset, length)` returns archive bytes (from the tail already read
/// when it covers them).
template <class ReadAt>
directory_location locate_directory(std::uint64_t end, byte_view end_bytes, std::uint64_t archive_size,
                                    ReadAt&& read_at, std::string_view archive)
{
    const std::byte* p = end_bytes.data();
    const std::uint16_t disk = load_le16(p + 4);
    const std::uint16_t directory_disk = load_le16(p + 6);
    directory_location loc;
    loc.entries = load_le16(p + 10);
    loc.size = load_le32(p + 12);
    loc.offset = load_le32(p + 16);
    loc.end_offset = end;
    const bool needs64 = loc.entries == 0xFFFF || loc.size == 0xFFFFFFFF || loc.offset == 0xFFFFFFFF;
    if (end >= locator64_size)
    {
        const buffer locator = read_at(end - locator64_size, locator64_size);
        if (load_le32(locator.data()) == locator64_signature)
        {
            const std::uint64_t at = load_le64(locator.data() + 8);
            if (load_le32(locator.data() + 4) != 0 || load_le32(locator.data() + 16) > 1)
            {
                unsupported(archive, "spans several disks (split archives are not read)");
            }
            if (at > end - locator64_size || end - locator64_size - at < end64_size)
            {
                malformed(archive,
                          "the ZIP64 end record's offset " + std::to_string(at) + " is outside the archive");
            }
            const buffer rec = read_at(at, end64_size);
            if (load_le32(rec.data()) != end64_signature)
            {
                malformed(archive,
                          "no ZIP64 end record where its locator points (" + std::to_string(at) + ")");
            }
            if (load_le32(rec.data() + 16) != 0 || load_le32(rec.data() + 20) != 0)
            {
                unsupported(archive, "spans several disks (split archives are not read)");
            }
            loc.entries = load_le64(rec.data() + 32);
            loc.size = load_le64(rec.data() + 40);
            loc.offset = load_le64(rec.data() + 48);
            loc.end_offset = at;
        }
        else if (needs64)
        {
            malformed(archive, "the end record asks for ZIP64 values and there is no ZIP64 locator");
        }
    }
    else if (needs64)
    {
        malformed(archive, "the end record asks for ZIP64 values and there is no ZIP64 locator");
    }
    if (loc.end_offset == end && (disk != 0 || directory_disk != 0))
    {
        unsupported(archive, "spans several disks (split archives are not read)");
    }
    if (loc.offset > loc.end_offset || loc.size > loc.end_offset - loc.offset)
    {
        malformed(archive, "the central directory (offset " + std::to_string(loc.offset) + ", " +
                               std::to_string(loc.size) + " bytes) is not inside the archive's " +
                               std::to_string(archive_size) + " bytes");
    }
    // Every header is at least central_header_size bytes: a count the directory cannot hold is a lie.
    if (loc.entries > loc.size / central_header_size)
    {
        malformed(archive, "the end record counts " + std::to_string(loc.entries) + " entries in a " +
                               std::to_string(loc.size) + "-byte central directory");
    }
    return loc;
}

/// Parse the central directory `dir` (loc.size bytes at loc.offset). Directory entries (names
/// ending in '/') are left out. Every entry's local header must start before the directory.
inline std::vector<entry> parse_directory(byte_view dir, const directory_location& loc,
                                          std::string_view archive)
{
    std::vector<entry> out;
    out.reserve(static_cast<std::size_t>(loc.entries));
    std::size_t pos = 0;
    for (std::uint64_t n = 0; n < loc.entries; ++n)
    {
        if (dir.size() - pos < central_header_size || load_le32(dir.data() + pos) != central_signature)
        {
            malformed(archive, "central directory header " + std::to_string(n) + " is missing or damaged");
        }
        const std::byte* h = dir.data() + pos;
        entry e;
        e.flags = load_le16(h + 8);
        e.method = load_le16(h + 10);
        e.crc = load_le32(h + 16);
        e.compressed_size = load_le32(h + 20);
        e.size = load_le32(h + 24);
        const std::size_t name_len = load_le16(h + 28);
        const std::size_t extra_len = load_le16(h + 30);
        const std::size_t comment_len = load_le16(h + 32);
        const std::uint16_t disk_start = load_le16(h + 34);
        e.local_offset = load_le32(h + 42);
        const std::size_t total = central_header_size + name_len + extra_len + comment_len;
        if (dir.size() - pos < total)
        {
            malformed(archive, "central directory header " + std::to_string(n) + " runs past the directory");
        }
        e.name.assign(reinterpret_cast<const char*>(h + central_header_size), name_len);
        // ZIP64 extra: the 64-bit values of exactly those fields that hold their 0xFFFF... marker.
        const std::byte* x = h + central_header_size + name_len;
        const std::byte* x_end = x + extra_len;
        const bool want_size = e.size == 0xFFFFFFFF;
        const bool want_csize = e.compressed_size == 0xFFFFFFFF;
        const bool want_offset = e.local_offset == 0xFFFFFFFF;
        const bool want_disk = disk_start == 0xFFFF;
        bool found64 = false;
        while (x_end - x >= 4)
        {
            const std::uint16_t id = load_le16(x);
            const std::size_t len = load_le16(x + 2);
            if (static_cast<std::size_t>(x_end - x - 4) < len)
            {
                malformed(archive, "entry \"" + e.name + "\": an extra field runs past its header");
            }
            if (id == zip64_extra_id && !found64)
            {
                found64 = true;
                std::size_t need = 8 * (want_size + want_csize + want_offset) + 4 * want_disk;
                if (len < need)
                {
                    malformed(archive, "entry \"" + e.name + "\": its ZIP64 extra field is too short");
                }
                const std::byte* v = x + 4;
                if (want_size)
                {
                    e.size = load_le64(v);
                    v += 8;
                }
                if (want_csize)
                {
                    e.compressed_size = load_le64(v);
                    v += 8;
                }
                if (want_offset)
                {
                    e.local_offset = load_le64(v);
                    v += 8;
                }
                if (want_disk && load_le32(v) != 0)
                {
                    unsupported(archive, "spans several disks (split archives are not read)");
                }
            }
            x += 4 + len;
        }
        if ((want_size || want_csize || want_offset || want_disk) && !found64)
        {
            malformed(archive, "entry \"" + e.name + "\" has ZIP64 markers and no ZIP64 extra field");
        }
        if (!want_disk && disk_start != 0)
        {
            unsupported(archive, "spans several disks (split archives are not read)");
        }
        pos += total;
        if (!e.name.empty() && e.name.back() == '/')
        {
            continue; // a directory entry: it holds no object
        }
        if (e.local_offset > loc.offset || loc.offset - e.local_offset < local_header_size + name_len ||
            e.compressed_size > loc.offset - e.local_offset - local_header_size - name_len)
        {
            malformed(archive, "entry \"" + e.name + "\" (local header at " + std::to_string(e.local_offset) +
                                   ", " + std::to_string(e.compressed_size) +
                                   " bytes) does not lie before the central directory");
        }
        out.push_back(std::move(e));
    }
    return out;
}

/// The length of the local header at the start of `bytes` (30 + name + extra), after checking its
/// signature and that its name is the directory's.
inline std::size_t local_header_length(byte_view bytes, const entry& e, std::string_view archive)
{
    if (bytes.size() < local_header_size || load_le32(bytes.data()) != local_signature)
    {
        malformed(archive,
                  "entry \"" + e.name + "\": no local header at offset " + std::to_string(e.local_offset));
    }
    const std::size_t name_len = load_le16(bytes.data() + 26);
    const std::size_t extra_len = load_le16(bytes.data() + 28);
    if (name_len != e.name.size() ||
        (bytes.size() >= local_header_size + name_len &&
         std::memcmp(bytes.data() + local_header_size, e.name.data(), name_len) != 0))
    {
        malformed(archive, "entry \"" + e.name + "\": its local header names another file");
    }
    return local_header_size + name_len + extra_len;
}

/// MS-DOS date and time fields for 1980-01-01 00:00: a writer that stamps every entry with the
/// same time makes the same archive from the same objects.
inline constexpr std::uint16_t fixed_dos_time = 0;
inline constexpr std::uint16_t fixed_dos_date = (0 << 9) | (1 << 5) | 1;

/// A STORED entry's local header; with `zip64` the sizes are in a ZIP64 extra field.
inline buffer local_header(std::string_view name, std::uint64_t size, std::uint32_t crc, bool zip64)
{
    buffer b;
    const std::size_t extra = zip64 ? 20 : 0;
    b.resize_discard(local_header_size + name.size() + extra);
    std::byte* p = b.data();
    store_le32(p, local_signature);
    store_le16(p + 4, zip64 ? 45 : 20);
    store_le16(p + 6, flag_utf8);
    store_le16(p + 8, method_stored);
    store_le16(p + 10, fixed_dos_time);
    store_le16(p + 12, fixed_dos_date);
    store_le32(p + 14, crc);
    store_le32(p + 18, zip64 ? 0xFFFFFFFF : static_cast<std::uint32_t>(size));
    store_le32(p + 22, zip64 ? 0xFFFFFFFF : static_cast<std::uint32_t>(size));
    store_le16(p + 26, static_cast<std::uint16_t>(name.size()));
    store_le16(p + 28, static_cast<std::uint16_t>(extra));
    std::memcpy(p + local_header_size, name.data(), name.size());
    if (zip64)
    {
        std::byte* x = p + local_header_size + name.size();
        store_le16(x, zip64_extra_id);
        store_le16(x + 2, 16);
        store_le64(x + 4, size);
        store_le64(x + 12, size);
    }
    return b;
}

/// Append a STORED entry's central directory header to `out`.
inline void append_central_header(buffer& out, const entry& e, bool force_zip64)
{
    const bool big_size = force_zip64 || e.size >= 0xFFFFFFFF;
    const bool big_offset = force_zip64 || e.local_offset >= 0xFFFFFFFF;
    const std::size_t extra = (big_size || big_offset) ? 4 + 16 * big_size + 8 * big_offset : 0;
    const std::size_t at = out.size();
    out.resize(at + central_header_size + e.name.size() + extra);
    std::byte* p = out.data() + at;
    store_le32(p, central_signature);
    store_le16(p + 4, (3 << 8) | 45); // made by: Unix, spec 4.5
    store_le16(p + 6, extra != 0 ? 45 : 20);
    store_le16(p + 8, flag_utf8);
    store_le16(p + 10, method_stored);
    store_le16(p + 12, fixed_dos_time);
    store_le16(p + 14, fixed_dos_date);
    store_le32(p + 16, e.crc);
    store_le32(p + 20, big_size ? 0xFFFFFFFF : static_cast<std::uint32_t>(e.size));
    store_le32(p + 24, big_size ? 0xFFFFFFFF : static_cast<std::uint32_t>(e.size));
    store_le16(p + 28, static_cast<std::uint16_t>(e.name.size()));
    store_le16(p + 30, static_cast<std::uint16_t>(extra));
    store_le16(p + 32, 0);
    store_le16(p + 34, 0);
    store_le16(p + 36, 0);
    store_le32(p + 38, 0100644u << 16); // a regular file, rw-r--r--
    store_le32(p + 42, big_offset ? 0xFFFFFFFF : static_cast<std::uint32_t>(e.local_offset));
    std::memcpy(p + central_header_size, e.name.data(), e.name.size());
    if (extra != 0)
    {
        std::byte* x = p + central_header_size + e.name.size();
        store_le16(x, zip64_extra_id);
        store_le16(x + 2, static_cast<std::uint16_t>(extra - 4));
        x += 4;
        if (big_size)
        {
            store_le64(x, e.size);
            store_le64(x + 8, e.size);
            x += 16;
        }
        if (big_offset)
        {
            store_le64(x, e.local_offset);
        }
    }
}

/// The end records after a central directory of `count` entries, `size` bytes at `offset`: a ZIP64
/// end record and locator when any value needs them (or `force_zip64`), then the classic record.
inline buffer end_records(std::uint64_t count, std::uint64_t offset, std::uint64_t size, bool force_zip64)
{
    const bool zip64 = force_zip64 || count >= 0xFFFF || offset >= 0xFFFFFFFF || size >= 0xFFFFFFFF;
    buffer b;
    b.resize_discard((zip64 ? end64_size + locator64_size : 0) + end_size);
    std::byte* p = b.data();
    if (zip64)
    {
        store_le32(p, end64_signature);
        store_le64(p + 4, end64_size - 12);
        store_le16(p + 12, (3 << 8) | 45);
        store_le16(p + 14, 45);
        store_le32(p + 16, 0);
        store_le32(p + 20, 0);
        store_le64(p + 24, count);
        store_le64(p + 32, count);
        store_le64(p + 40, size);
        store_le64(p + 48, offset);
        p += end64_size;
        store_le32(p, locator64_signature);
        store_le32(p + 4, 0);
        store_le64(p + 8, offset + size);
        store_le32(p + 16, 1);
        p += locator64_size;
    }
    store_le32(p, end_signature);
    store_le16(p + 4, 0);
    store_le16(p + 6, 0);
    store_le16(p + 8, zip64 ? 0xFFFF : static_cast<std::uint16_t>(count));
    store_le16(p + 10, zip64 ? 0xFFFF : static_cast<std::uint16_t>(count));
    store_le32(p + 12, zip64 ? 0xFFFFFFFF : static_cast<std::uint32_t>(size));
    store_le32(p + 16, zip64 ? 0xFFFFFFFF : static_cast<std::uint32_t>(offset));
    store_le16(p + 20, 0);
    return b;
}

} // namespace zarrxt::detail::zip
