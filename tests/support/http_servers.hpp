// Servers for the remote-store tests, on loopback only, started and stopped by the test itself:
// - nginx_server: Debian's nginx serving a directory (ranges, ETags, keep-alive), with a location
//   that ignores ranges (/noranges/) and one that always answers 503 (/unavailable/);
// - canned_server: a small HTTP/1.1 server on a thread that answers each request with the next of
//   a list of raw responses (the faults nginx cannot be made to commit: a wrong Content-Range, a
//   body shorter than promised, a 429 before the answer).
#pragma once

#include "test_support.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace zxtest
{

/// 127.0.0.1:port (0: any free port).
inline sockaddr_in loopback_address(int port)
{
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    return a;
}

/// A free TCP port on 127.0.0.1 (bound, then released: the server binds it right after).
inline int free_loopback_port()
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = loopback_address(0);
    socklen_t len = sizeof(a);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    {
        if (fd >= 0)
        {
            ::close(fd);
        }
        return -1;
    }
    const int port = ntohs(a.sin_port);
    ::close(fd);
    return port;
}

/// True once something accepts connections on 127.0.0.1:port.
inline bool loopback_accepts(int port)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = loopback_address(port);
    const bool ok = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    if (fd >= 0)
    {
        ::close(fd);
    }
    return ok;
}

/// The nginx binary, or "" (Debian's nginx-light puts it in /usr/sbin).
inline std::string nginx_binary()
{
    for (const char* p : {"/usr/sbin/nginx", "/usr/bin/nginx"})
    {
        if (::access(p, X_OK) == 0)
        {
            return p;
        }
    }
    return {};
}

class nginx_server
{
public:
    /// Serves `root` on a free loopback port; ok() is false when nginx is missing or did not start.
    explicit nginx_server(const std::filesystem::path& root)
        : m_dir("zarrxt-nginx")
    {
        const std::string bin = nginx_binary();
        if (bin.empty())
        {
            m_problem = "nginx is not installed (Debian package nginx-light)";
            return;
        }
        for (int attempt = 0; attempt < 5 && m_pid <= 0; ++attempt)
        {
            m_port = free_loopback_port();
            const auto d = m_dir.path();
            std::filesystem::create_directories(d / "tmp");
            std::ofstream conf(d / "nginx.conf");
            const std::string r = std::filesystem::absolute(root).string();
            conf << "daemon off;\nmaster_process off;\nworker_processes 1;\n"
                 << "error_log " << (d / "error.log").string() << " warn;\n"
                 << "pid " << (d / "nginx.pid").string() << ";\n"
                 << "events { worker_connections 512; }\n"
                 << "http {\n  access_log off;\n  default_type application/octet-stream;\n"
                 << "  client_body_temp_path " << (d / "tmp").string() << ";\n"
                 << "  proxy_temp_path " << (d / "tmp").string() << ";\n"
                 << "  fastcgi_temp_path " << (d / "tmp").string() << ";\n"
                 << "  uwsgi_temp_path " << (d / "tmp").string() << ";\n"
                 << "  scgi_temp_path " << (d / "tmp").string() << ";\n"
                 << "  keepalive_requests 100000;\n  etag on;\n"
                 << "  server {\n    listen 127.0.0.1:" << m_port << ";\n    root " << r << ";\n"
                 << "    location /noranges/ { alias " << r << "/; max_ranges 0; }\n"
                 << "    location /unavailable/ { return 503; }\n  }\n}\n";
            conf.close();
            const pid_t pid = ::fork();
            if (pid == 0)
            {
                const std::string c = (d / "nginx.conf").string();
                const std::string p = d.string();
                ::execl(bin.c_str(), bin.c_str(), "-c", c.c_str(), "-p", p.c_str(), "-e",
                        (d / "error.log").string().c_str(), static_cast<char*>(nullptr));
                ::_exit(127);
            }
            m_pid = pid;
            const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
            while (!loopback_accepts(m_port) && std::chrono::steady_clock::now() < until)
            {
                int status = 0;
                if (::waitpid(m_pid, &status, WNOHANG) == m_pid)
                {
                    m_pid = -1; // exited (the port was taken meanwhile?): try another port
                    break;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            }
            if (m_pid > 0 && !loopback_accepts(m_port))
            {
                stop();
            }
        }
        if (m_pid <= 0)
        {
            m_problem = "nginx did not start: " + read_file(m_dir.path() / "error.log");
        }
    }
    nginx_server(const nginx_server&) = delete;
    nginx_server& operator=(const nginx_server&) = delete;
    ~nginx_server() { stop(); }

    bool ok() const { return m_pid > 0; }
    const std::string& problem() const { return m_problem; }
    int port() const { return m_port; }
    std::string url(const std::string& path = "") const
    {
        return "http://127.0.0.1:" + std::to_string(m_port) + (path.empty() ? "" : "/" + path);
    }

private:
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
    temp_dir m_dir;
    pid_t m_pid = -1;
    int m_port = -1;
    std::string m_problem;
};

/// Answers the n-th request it receives with responses[min(n, size - 1)], then closes the
/// connection (each response is sent as given: status line, headers, body).
class canned_server
{
public:
    explicit canned_server(std::vector<std::string> responses)
        : m_responses(std::move(responses))
    {
        m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
        const int one = 1;
        ::setsockopt(m_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        sockaddr_in a = loopback_address(0);
        socklen_t len = sizeof(a);
        if (::bind(m_fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 || ::listen(m_fd, 16) != 0 ||
            ::getsockname(m_fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
        {
            throw std::runtime_error("canned_server: cannot listen on loopback");
        }
        m_port = ntohs(a.sin_port);
        m_thread = std::thread([this] { serve(); });
    }
    canned_server(const canned_server&) = delete;
    canned_server& operator=(const canned_server&) = delete;
    ~canned_server()
    {
        m_stop = true;
        ::shutdown(m_fd, SHUT_RDWR);
        ::close(m_fd);
        m_thread.join();
    }

    std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(m_port) + "/" + path; }
    int requests() const { return m_count.load(); }
    /// The request lines and headers received so far.
    std::vector<std::string> received() const
    {
        std::lock_guard<std::mutex> g(m_mutex);
        return m_received;
    }

private:
    void serve()
    {
        while (!m_stop)
        {
            const int c = ::accept(m_fd, nullptr, nullptr);
            if (c < 0)
            {
                return;
            }
            timeval tv{2, 0}; // a client that never closes cannot hang the server
            ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
            std::string req;
            char buf[4096];
            while (req.find("\r\n\r\n") == std::string::npos)
            {
                const ssize_t n = ::recv(c, buf, sizeof(buf), 0);
                if (n <= 0)
                {
                    break;
                }
                req.append(buf, static_cast<std::size_t>(n));
            }
            const int i = m_count.fetch_add(1);
            {
                std::lock_guard<std::mutex> g(m_mutex);
                m_received.push_back(req);
            }
            const std::string& r = m_responses[std::min<std::size_t>(static_cast<std::size_t>(i), m_responses.size() - 1)];
            ::send(c, r.data(), r.size(), MSG_NOSIGNAL);
            ::shutdown(c, SHUT_WR);
            while (::recv(c, buf, sizeof(buf), 0) > 0)
            {
            }
            ::close(c);
        }
    }

    std::vector<std::string> m_responses;
    int m_fd = -1;
    int m_port = 0;
    std::atomic<bool> m_stop{false};
    std::atomic<int> m_count{0};
    mutable std::mutex m_mutex;
    std::vector<std::string> m_received;
    std::thread m_thread;
};

} // namespace zxtest
