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
/// Only for what a build may lack on purpose (a sanitizer, an optional library, the tool); a
/// missing peer or corpus uses ZX_SKIP_PEER / ZX_SKIP_CORPUS.
#define ZX_SKIP(msg)                                                                                         \
    do                                                                                                       \
    {                                                                                                        \
        std::cout << "ZARRXT-SKIP: " << (msg) << std::endl;                                                  \
        return;                                                                                              \
    } while (0)

/// A peer (python3-zarr, zarrita) or the conformance corpus is missing: a skip, except when
/// ZARRXT_REQUIRE_PEERS=1 (scripts/test sets it after installing the peers; CI has the corpus),
/// where it is a failure. The summary script fails these lines under that variable too.
#define ZX_SKIP_REQUIRED_(kind, msg)                                                                         \
    do                                                                                                       \
    {                                                                                                        \
        if (::zxtest::peers_required())                                                                      \
        {                                                                                                    \
            FAIL("ZARRXT_REQUIRE_PEERS=1, but the " kind " is not usable: " << (msg));                       \
        }                                                                                                    \
        std::cout << "ZARRXT-SKIP: " kind ": " << (msg) << std::endl;                                        \
        return;                                                                                              \
    } while (0)
#define ZX_SKIP_PEER(msg) ZX_SKIP_REQUIRED_("peer", msg)
#define ZX_SKIP_CORPUS(msg) ZX_SKIP_REQUIRED_("corpus", msg)

inline std::string env(const char* name, const std::string& fallback = "")
{
    const char* v = std::getenv(name);
    return v != nullptr ? std::string(v) : fallback;
}

/// A peer program under tests/peers/ of the source tree.
inline std::string peer_script(const char* name)
{
    return env("ZARRXT_SOURCE_DIR") + "/tests/peers/" + name;
}

inline bool peers_required()
{
    return env("ZARRXT_REQUIRE_PEERS") == "1";
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
    int status = -1;    ///< exit status, or -1 when the program did not exit normally
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
    explicit lcg(std::uint64_t seed = 1)
        : m_state(seed)
    {
    }
    std::uint64_t next()
    {
        m_state = m_state * 6364136223846793005ull + 1442695040888963407ull;
        return m_state >> 11;
    }

private:
    std::uint64_t m_state;
};

/// Node.js from $PATH (Debian installs it as /usr/bin/node), or "" when there is none.
inline std::string node_program()
{
    std::stringstream path(env("PATH", "/usr/bin"));
    std::string dir;
    while (std::getline(path, dir, ':'))
    {
        const auto p = std::filesystem::path(dir.empty() ? "." : dir) / "node";
        if (::access(p.c_str(), X_OK) == 0)
        {
            return p.string();
        }
    }
    return {};
}

/// Debian's python3 (the one that sees python3-zarr), or "" when absent.
inline std::string debian_python()
{
    return std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "";
}

/// What the v2 peer is: Debian's python3-zarr 2.13.x and python3-numcodecs 0.11.x, imported by
/// /usr/bin/python3 from Debian's /usr/lib/python3/dist-packages. `missing` says why it cannot be
/// imported; `wrong` that something else answers to the name (a pip-installed zarr 3 in
/// /usr/local, say), which is never a skip: the tests were written against that version.
struct python_peer
{
    std::string missing;
    std::string wrong;
    std::string description;
};

inline const python_peer& python_zarr()
{
    static const python_peer peer = []
    {
        python_peer p;
        const auto py = debian_python();
        if (py.empty())
        {
            p.missing = "/usr/bin/python3 does not exist (Debian package python3)";
            return p;
        }
        const auto r = run(py + " -c 'import zarr, numcodecs; print(zarr.__version__); print(zarr.__file__); "
                                "print(numcodecs.__version__); print(numcodecs.__file__)'");
        if (r.status != 0)
        {
            p.missing =
                "/usr/bin/python3 cannot import zarr and numcodecs (Debian python3-zarr): " + r.output;
            return p;
        }
        std::istringstream lines(r.output);
        std::string zarr_version, zarr_file, numcodecs_version, numcodecs_file;
        std::getline(lines, zarr_version);
        std::getline(lines, zarr_file);
        std::getline(lines, numcodecs_version);
        std::getline(lines, numcodecs_file);
        p.description = "zarr " + zarr_version + " (" + zarr_file + "), numcodecs " + numcodecs_version +
                        " (" + numcodecs_file + ")";
        const std::string debian = "/usr/lib/python3/dist-packages/";
        if (zarr_version.rfind("2.13.", 0) != 0 || zarr_file.rfind(debian, 0) != 0 ||
            numcodecs_version.rfind("0.11.", 0) != 0 || numcodecs_file.rfind(debian, 0) != 0)
        {
            p.wrong = "the v2 peer must be Debian's python3-zarr 2.13.x and numcodecs 0.11.x from " + debian +
                      "; /usr/bin/python3 imports " + p.description;
        }
        return p;
    }();
    return peer;
}

/// In a test case: fail when another zarr answers for python3-zarr, skip (or fail, see
/// ZX_SKIP_PEER) when there is none.
#define ZX_REQUIRE_PYTHON_ZARR()                                                                             \
    do                                                                                                       \
    {                                                                                                        \
        const auto& zx_peer_ = ::zxtest::python_zarr();                                                      \
        if (!zx_peer_.wrong.empty())                                                                         \
        {                                                                                                    \
            FAIL(zx_peer_.wrong);                                                                            \
        }                                                                                                    \
        if (!zx_peer_.missing.empty())                                                                       \
        {                                                                                                    \
            ZX_SKIP_PEER(zx_peer_.missing);                                                                  \
        }                                                                                                    \
    } while (0)

} // namespace zxtest
