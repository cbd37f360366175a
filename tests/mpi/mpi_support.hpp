// Helpers of the MPI tests (test_mpi.cpp, mpi_tool.cpp): a directory every rank shares, a store
// that records which keys this rank wrote and read, and gathering strings from every rank.
#pragma once

#include <zarrxt/mpi.hpp>
#include <zarrxt/zarrxt.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace zxtest::mpi
{
namespace zx = zarrxt;

inline int rank(MPI_Comm comm = MPI_COMM_WORLD)
{
    int r = 0;
    MPI_Comm_rank(comm, &r);
    return r;
}

inline int size(MPI_Comm comm = MPI_COMM_WORLD)
{
    int s = 1;
    MPI_Comm_size(comm, &s);
    return s;
}

/// A fresh directory made by rank 0 and known to every rank; removed by rank 0 once every rank
/// is done with it.
class shared_dir
{
public:
    explicit shared_dir(MPI_Comm comm = MPI_COMM_WORLD)
        : m_comm(comm)
    {
        std::string path;
        if (rank(comm) == 0)
        {
            std::string tmpl = (std::filesystem::temp_directory_path() / "zarrxt-mpi-XXXXXX").string();
            if (::mkdtemp(tmpl.data()) == nullptr)
            {
                MPI_Abort(comm, 2);
            }
            path = tmpl;
        }
        unsigned long n = path.size();
        MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG, 0, comm);
        path.resize(n);
        MPI_Bcast(path.data(), static_cast<int>(n), MPI_CHAR, 0, comm);
        m_path = path;
    }
    shared_dir(const shared_dir&) = delete;
    shared_dir& operator=(const shared_dir&) = delete;
    ~shared_dir()
    {
        MPI_Barrier(m_comm);
        if (rank(m_comm) == 0)
        {
            std::error_code ec;
            std::filesystem::remove_all(m_path, ec);
        }
    }
    const std::filesystem::path& path() const noexcept { return m_path; }
    std::string str() const { return m_path.string(); }

private:
    MPI_Comm m_comm;
    std::filesystem::path m_path;
};

/// The keys a store handle (and its copies) wrote, erased and read.
struct key_log
{
    std::mutex m;
    std::set<std::string> written;
    std::set<std::string> read;
    void clear()
    {
        std::lock_guard<std::mutex> g(m);
        written.clear();
        read.clear();
    }
};

/// filesystem_store that records the keys it writes and reads (every array copy shares the log).
class recording_store : public zx::filesystem_store
{
public:
    explicit recording_store(const std::filesystem::path& root)
        : zx::filesystem_store(root)
        , m_log(std::make_shared<key_log>())
    {
    }

    void set(std::string_view key, zx::byte_view data)
    {
        note(m_log->written, key);
        zx::filesystem_store::set(key, data);
    }
    bool erase(std::string_view key)
    {
        note(m_log->written, key);
        return zx::filesystem_store::erase(key);
    }
    std::optional<zx::read_result> read(std::string_view key, zx::byte_range r, std::uint64_t max) const
    {
        note(m_log->read, key);
        return zx::filesystem_store::read(key, r, max);
    }
    std::optional<zx::object_info> read_to(std::string_view key, zx::byte_range r, std::uint64_t max,
                                           zx::buffer& out) const
    {
        note(m_log->read, key);
        return zx::filesystem_store::read_to(key, r, max, out);
    }
    std::optional<zx::object_info> read_into(std::string_view key, std::uint64_t offset,
                                             zx::mutable_byte_view dest) const
    {
        note(m_log->read, key);
        return zx::filesystem_store::read_into(key, offset, dest);
    }

    key_log& log() const { return *m_log; }

private:
    void note(std::set<std::string>& s, std::string_view key) const
    {
        std::lock_guard<std::mutex> g(m_log->m);
        s.insert(std::string(key));
    }
    std::shared_ptr<key_log> m_log;
};

/// Every rank's list of strings, on every rank.
inline std::vector<std::vector<std::string>> allgather_strings(const std::set<std::string>& mine,
                                                               MPI_Comm comm = MPI_COMM_WORLD)
{
    std::string packed;
    for (const auto& s : mine)
    {
        packed += s;
        packed += '\n';
    }
    const int n = static_cast<int>(packed.size());
    const int p = size(comm);
    std::vector<int> counts(static_cast<std::size_t>(p)), displs(static_cast<std::size_t>(p));
    MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
    int total = 0;
    for (int r = 0; r < p; ++r)
    {
        displs[r] = total;
        total += counts[r];
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    MPI_Allgatherv(packed.data(), n, MPI_CHAR, all.data(), counts.data(), displs.data(), MPI_CHAR, comm);
    std::vector<std::vector<std::string>> out(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r)
    {
        std::size_t at = static_cast<std::size_t>(displs[r]);
        const std::size_t end = at + static_cast<std::size_t>(counts[r]);
        while (at < end)
        {
            const std::size_t nl = all.find('\n', at);
            out[r].push_back(all.substr(at, nl - at));
            at = nl + 1;
        }
    }
    return out;
}

/// A chunk or shard key (not metadata, not zarrxt's own files).
inline bool is_data_key(const std::string& key)
{
    const auto slash = key.rfind('/');
    const std::string last = slash == std::string::npos ? key : key.substr(slash + 1);
    return last != "zarr.json" && last != ".zarray" && last != ".zattrs" && last != ".zgroup" &&
           last != ".zmetadata";
}

} // namespace zxtest::mpi
