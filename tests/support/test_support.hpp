// Helpers shared by the test executables: temporary directories, environment lookups, running peer
// programs, deterministic data, and the skip convention read by scripts/summarize_tests.py.
#pragma once

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace zxtest
{

/// A test case that cannot run here says so on a line the summary script counts as skipped.
#define ZX_SKIP(msg)                                                                                          \
    do                                                                                                        \
    {                                                                                                         \
        std::cout << "ZARRXT-SKIP: " << (msg) << std::endl;                                                   \
        return;                                                                                               \
    } while (0)

inline std::string env(const char* name, const std::string& fallback = "")
{
    const char* v = std::getenv(name);
    return v != nullptr ? std::string(v) : fallback;
}

/// A fresh directory, removed with everything in it at scope exit.
class temp_dir
{
public:
    explicit temp_dir(const std::string& tag = "zarrxt")
    {
        std::string tmpl = (std::filesystem::temp_directory_path() / (tag + "-XXXXXX")).string();
        if (::mkdtemp(tmpl.data()) == nullptr)
        {
            throw std::runtime_error("mkdtemp failed");
        }
        m_path = tmpl;
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
    ~temp_dir()
    {
        std::error_code ec;
        std::filesystem::remove_all(m_path, ec);
    }
    const std::filesystem::path& path() const noexcept { return m_path; }
    std::string str() const { return m_path.string(); }

private:
    std::filesystem::path m_path;
};

struct command_result
{
    int status = -1; ///< exit status, or -1 when the program did not exit normally
    std::string output; ///< stdout and stderr together
};

/// Run a shell command, capturing its combined output.
inline command_result run(const std::string& cmd)
{
    command_result r;
    FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
    if (p == nullptr)
    {
        return r;
    }
    std::array<char, 4096> buf;
    std::size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0)
    {
        r.output.append(buf.data(), n);
    }
    const int st = ::pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

inline std::string quote(const std::string& s)
{
    std::string q = "'";
    for (char c : s)
    {
        if (c == '\'')
        {
            q += "'\\''";
        }
        else
        {
            q += c;
        }
    }
    return q + "'";
}

inline std::string read_file(const std::filesystem::path& p)
{
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

inline void write_file(const std::filesystem::path& p, const std::string& s)
{
    std::filesystem::create_directories(p.parent_path());
    std::ofstream f(p, std::ios::binary);
    f << s;
}

/// Deterministic pseudo-random numbers (64-bit LCG, Knuth's constants): no RNG dependency.
class lcg
{
public:
    explicit lcg(std::uint64_t seed = 1) : m_state(seed) {}
    std::uint64_t next()
    {
        m_state = m_state * 6364136223846793005ull + 1442695040888963407ull;
        return m_state >> 11;
    }

private:
    std::uint64_t m_state;
};

/// Debian's python3 (the one that sees python3-zarr), or "" when absent.
inline std::string debian_python()
{
    return std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "";
}

inline bool python_has_zarr()
{
    static const bool has = [] {
        const auto py = debian_python();
        return !py.empty() && run(py + " -c 'import zarr, numcodecs'").status == 0;
    }();
    return has;
}

} // namespace zxtest
