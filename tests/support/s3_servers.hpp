// The S3 server of the S3 tests, on loopback, started and stopped by the test itself: s3rver
// (npm, 3.7.1) storing in a temporary directory, behind tests/support/s3_sigv4_proxy.mjs, which
// checks every request's SigV4 signature with the AWS SDK's signer (s3rver checks only the access
// key). Clients talk to the proxy. Both run under Node.js from $ZARRXT_NODE_MODULES (scripts/test
// installs them into <build>/npm/node_modules).
#pragma once

#include "http_servers.hpp"
#include "test_support.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace zxtest
{

/// A child process started with execvp, killed (SIGTERM, then waited for) when destroyed.
class child_process
{
public:
    child_process() = default;
    child_process(const std::vector<std::string>& argv, const std::filesystem::path& log)
    {
        // Everything the child needs is made before fork: after it only async-signal-safe calls.
        std::vector<char*> args;
        for (const auto& a : argv)
        {
            args.push_back(const_cast<char*>(a.c_str()));
        }
        args.push_back(nullptr);
        const std::string l = log.string();
        const pid_t pid = ::fork();
        if (pid == 0)
        {
            const int fd = ::open(l.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (fd >= 0)
            {
                ::dup2(fd, 1);
                ::dup2(fd, 2);
            }
            ::execvp(args[0], args.data());
            ::_exit(127);
        }
        m_pid = pid;
    }
    child_process(const child_process&) = delete;
    child_process& operator=(const child_process&) = delete;
    child_process(child_process&& o) noexcept
        : m_pid(o.m_pid)
    {
        o.m_pid = -1;
    }
    child_process& operator=(child_process&& o) noexcept
    {
        if (this != &o)
        {
            stop();
            m_pid = o.m_pid;
            o.m_pid = -1;
        }
        return *this;
    }
    ~child_process() { stop(); }

    bool running()
    {
        int status = 0;
        if (m_pid > 0 && ::waitpid(m_pid, &status, WNOHANG) == m_pid)
        {
            m_pid = -1;
        }
        return m_pid > 0;
    }
    void stop()
    {
        if (m_pid > 0)
        {
            ::kill(m_pid, SIGTERM);
            int status = 0;
            ::waitpid(m_pid, &status, 0);
            m_pid = -1;
        }
    }

private:
    pid_t m_pid = -1;
};

/// Waits until `port` accepts or `p` exits; false on exit or after 20 s.
inline bool wait_for_port(child_process& p, int port)
{
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < until)
    {
        if (loopback_accepts(port))
        {
            return true;
        }
        if (!p.running())
        {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return false;
}

class s3_server
{
public:
    static constexpr const char* access_key = "S3RVER"; // the key s3rver accepts
    static constexpr const char* secret_key = "zarrxt-test-secret";
    static constexpr const char* region = "us-east-1";

    /// s3rver with the buckets `buckets`, behind the signature-checking proxy; ok() says whether
    /// both run (problem() says why not).
    explicit s3_server(const std::vector<std::string>& buckets)
        : m_dir("zarrxt-s3")
    {
        const std::string modules = env("ZARRXT_NODE_MODULES");
        const std::string source = env("ZARRXT_SOURCE_DIR");
        const std::filesystem::path s3rver = std::filesystem::path(modules) / "s3rver" / "bin" / "s3rver.js";
        if (modules.empty() || !std::filesystem::exists(s3rver))
        {
            m_problem = "s3rver is not installed (scripts/test installs s3rver@3.7.1 into <build>/npm)";
            return;
        }
        if (!std::filesystem::exists(std::filesystem::path(modules) / "@smithy" / "signature-v4"))
        {
            m_problem = "@smithy/signature-v4 is not installed (scripts/test installs it into <build>/npm)";
            return;
        }
        const auto log = m_dir.path() / "servers.log";
        for (int attempt = 0; attempt < 5 && !m_ok; ++attempt)
        {
            const int upstream = free_loopback_port();
            // s3rver 3.7 makes continuation tokens with DES, which OpenSSL 3 keeps in its legacy provider.
            std::vector<std::string> argv{"node",
                                          "--openssl-legacy-provider",
                                          s3rver.string(),
                                          "-d",
                                          (m_dir.path() / "data").string(),
                                          "-p",
                                          std::to_string(upstream),
                                          "-a",
                                          "127.0.0.1",
                                          "--silent"};
            for (const auto& b : buckets)
            {
                argv.push_back("--configure-bucket");
                argv.push_back(b);
            }
            std::filesystem::create_directories(m_dir.path() / "data");
            m_s3rver = child_process(argv, log);
            if (!wait_for_port(m_s3rver, upstream))
            {
                m_s3rver.stop();
                continue;
            }
            m_port = free_loopback_port();
            m_proxy = child_process({"node", source + "/tests/support/s3_sigv4_proxy.mjs", modules,
                                     std::to_string(m_port), std::to_string(upstream), access_key, secret_key,
                                     region},
                                    log);
            if (!wait_for_port(m_proxy, m_port))
            {
                m_proxy.stop();
                m_s3rver.stop();
                continue;
            }
            m_ok = true;
        }
        if (!m_ok)
        {
            m_problem = "s3rver or the SigV4 proxy did not start: " + read_file(log);
        }
    }

    bool ok() const { return m_ok; }
    const std::string& problem() const { return m_problem; }
    /// What clients use as the endpoint (the proxy).
    std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(m_port); }
    int port() const { return m_port; }

private:
    temp_dir m_dir;
    child_process m_s3rver;
    child_process m_proxy;
    int m_port = -1;
    bool m_ok = false;
    std::string m_problem;
};

} // namespace zxtest
