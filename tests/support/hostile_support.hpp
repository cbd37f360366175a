// Helpers for the hostile-input tests (test_bad_input.cpp, test_limits.cpp): checking that an
// operation fails with one exact zarrxt error, running an operation in a child process so that a
// crash, a hang or a runaway allocation fails one check instead of the whole executable, and
// measuring the peak memory an operation costs.
#pragma once

#include "expect_error.hpp"
#include "test_support.hpp"

#include <zarrxt/zarrxt.hpp>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace zxhostile
{

namespace zx = zarrxt;
using zx::json;
using zxtest::class_matches;
using zxtest::expect_error;

inline bool contains(std::string_view haystack, std::string_view needle)
{
    return haystack.find(needle) != std::string_view::npos;
}

/// The little-endian `bytes` codec spec the hostile tests build chains from.
inline zx::codec_spec bytes_le()
{
    return zx::codec_spec("bytes", {{"endian", "little"}});
}

/// Runs `f` and reports the outcome as one line: "ok", "<id> <key>" for a zarrxt error, or a
/// description of anything else. Used where a child process reports back to the test.
template <class F>
std::string outcome_of(F&& f)
{
    try
    {
        f();
        return "ok";
    }
    catch (const zx::error& e)
    {
        return e.id() + " " + e.key();
    }
    catch (const std::bad_alloc&)
    {
        return "std::bad_alloc";
    }
    catch (const std::exception& e)
    {
        return std::string("std::exception: ") + e.what();
    }
}

struct isolated_result
{
    bool exited = false;    ///< the child returned normally (no crash, no timeout)
    bool timed_out = false; ///< the child was killed after the timeout
    int signal = 0;         ///< the signal that ended the child, when it did not exit
    std::string output;     ///< what the child reported
};

/// Runs `body` in a forked child with a deadline. A crash (sanitizer abort, segfault, OOM kill) or a
/// hang ends only the child; the parent gets the child's report string. The test process has no
/// threads of its own at this point (zarrxt starts none), so fork is safe.
inline isolated_result run_isolated(const std::function<std::string()>& body, std::chrono::seconds timeout)
{
    isolated_result r;
    int fds[2];
    if (::pipe(fds) != 0)
    {
        r.output = "pipe failed";
        return r;
    }
    std::cout.flush();
    std::cerr.flush();
    const pid_t pid = ::fork();
    if (pid < 0)
    {
        ::close(fds[0]);
        ::close(fds[1]);
        r.output = "fork failed";
        return r;
    }
    if (pid == 0)
    {
        ::close(fds[0]);
        std::string out;
        try
        {
            out = body();
        }
        catch (...)
        {
            out = "body threw";
        }
        std::size_t done = 0;
        while (done < out.size())
        {
            const ssize_t n = ::write(fds[1], out.data() + done, out.size() - done);
            if (n <= 0)
            {
                break;
            }
            done += static_cast<std::size_t>(n);
        }
        ::close(fds[1]);
        ::_exit(0); // no destructors, no leak report: the parent judges the outcome
    }
    ::close(fds[1]);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (true)
    {
        const pid_t w = ::waitpid(pid, &status, WNOHANG);
        if (w == pid)
        {
            break;
        }
        if (std::chrono::steady_clock::now() > deadline)
        {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            r.timed_out = true;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0)
    {
        r.output.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    if (!r.timed_out)
    {
        r.exited = WIFEXITED(status);
        r.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    }
    return r;
}

/// Resident memory of this process in KiB ("VmRSS" / "VmHWM" of /proc/self/status), -1 if unknown.
inline long status_kib(const char* field)
{
    std::ifstream f("/proc/self/status");
    std::string line;
    const std::string prefix = std::string(field) + ":";
    while (std::getline(f, line))
    {
        if (line.rfind(prefix, 0) == 0)
        {
            return std::stol(line.substr(prefix.size()));
        }
    }
    return -1;
}

/// Resets the peak-RSS mark to the current RSS (Linux clear_refs "5"); false when not permitted.
inline bool reset_peak_rss()
{
    std::ofstream f("/proc/self/clear_refs");
    if (!f)
    {
        return false;
    }
    f << "5";
    f.flush();
    return static_cast<bool>(f);
}

/// How much the peak RSS rose while `f` ran, in bytes; nullopt when the peak cannot be reset.
template <class F>
std::optional<std::uint64_t> peak_rss_growth(F&& f)
{
    const long before = status_kib("VmRSS");
    if (before < 0 || !reset_peak_rss())
    {
        f();
        return std::nullopt;
    }
    f();
    const long peak = status_kib("VmHWM");
    return peak > before ? static_cast<std::uint64_t>(peak - before) * 1024 : 0;
}

/***********************
 * bytes and documents *
 ***********************/

inline std::string to_string(zx::byte_view b)
{
    return std::string(zx::as_string_view(b));
}

/// The stored bytes of `key` (the key must exist).
template <class Store>
std::string get_bytes(const Store& s, const std::string& key)
{
    auto b = zx::get(s, key);
    REQUIRE(b.has_value());
    return to_string(b->view());
}

template <class Store>
void put_bytes(Store& s, const std::string& key, const std::string& bytes)
{
    s.set(key, zx::as_bytes(bytes));
}

inline void put_le32(std::string& s, std::size_t at, std::uint32_t v)
{
    for (int i = 0; i < 4; ++i)
    {
        s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
    }
}

inline void put_le64(std::string& s, std::size_t at, std::uint64_t v)
{
    for (int i = 0; i < 8; ++i)
    {
        s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
    }
}

/// Deterministic junk.
inline std::string random_bytes(std::size_t n, std::uint64_t seed)
{
    zxtest::lcg g(seed);
    std::string s(n, '\0');
    for (auto& c : s)
    {
        c = static_cast<char>(g.next() & 0xff);
    }
    return s;
}

/// A valid v3 array document: float32 [8, 8] in [4, 4] chunks, raw little-endian bytes.
inline json v3_array_doc()
{
    json doc = json::object();
    doc["zarr_format"] = 3;
    doc["node_type"] = "array";
    doc["shape"] = json::array({8, 8});
    doc["data_type"] = "float32";
    doc["chunk_grid"] = {{"name", "regular"}, {"configuration", {{"chunk_shape", json::array({4, 4})}}}};
    doc["chunk_key_encoding"] = {{"name", "default"}, {"configuration", {{"separator", "/"}}}};
    doc["fill_value"] = 0;
    doc["codecs"] = json::array({json{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}});
    doc["attributes"] = json::object();
    return doc;
}

/// A valid v2 array document: little-endian float32 [8, 8] in [4, 4] chunks, no compressor.
inline json v2_array_doc()
{
    json doc = json::object();
    doc["zarr_format"] = 2;
    doc["shape"] = json::array({8, 8});
    doc["chunks"] = json::array({4, 4});
    doc["dtype"] = "<f4";
    doc["order"] = "C";
    doc["fill_value"] = 0;
    doc["compressor"] = nullptr;
    doc["filters"] = nullptr;
    return doc;
}

/// A codec list entry {"name": ..., "configuration": ...}.
inline json codec_json(const std::string& name, json configuration = json::object())
{
    return {{"name", name}, {"configuration", std::move(configuration)}};
}

} // namespace zxhostile
