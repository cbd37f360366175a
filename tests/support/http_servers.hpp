// Servers for the remote-store tests, on loopback only, started and stopped by the test itself:
// - nginx_server: Debian's nginx serving a directory (ranges, ETags, keep-alive), with a location
//   that ignores ranges (/noranges/) and one that always answers 503 (/unavailable/);
// - canned_server: a small HTTP/1.1 server on a thread that answers each request with the next of
//   a list of raw responses (the faults nginx cannot be made to commit: a wrong Content-Range, a
//   body shorter than promised, a 429 before the answer);
// - fault_proxy: a proxy in front of an nginx_server that passes requests through, except those
//   the test told it to spoil (a status, a stall, a reset, a truncated body, a lying header).
#pragma once

#include "test_support.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace zxtest
{

/// A test server (nginx_server, s3_server) that did not start: a skip, or under
/// ZARRXT_REQUIRE_PEERS=1 (the test script installed it) a failure.
#define ZX_REQUIRE_SERVER(server)                                                                            \
    do                                                                                                       \
    {                                                                                                        \
        if (!(server).ok())                                                                                  \
        {                                                                                                    \
            ZX_SKIP_PEER((server).problem());                                                                \
        }                                                                                                    \
    } while (0)

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

/// How nginx_server listens: plain HTTP/1.1, or TLS with HTTP/2 offered by ALPN (a self-signed
/// certificate made for the run with the openssl tool; clients must not verify it).
enum class nginx_mode
{
    http,
    https_h2
};

class nginx_server
{
public:
    /// Serves `root` on a free loopback port; ok() is false when nginx is missing or did not start.
    /// Every request is logged to access_log() as "PROTOCOL CONNECTION URI".
    explicit nginx_server(const std::filesystem::path& root, nginx_mode mode = nginx_mode::http)
        : m_dir("zarrxt-nginx")
        , m_tls(mode == nginx_mode::https_h2)
    {
        const std::string bin = nginx_binary();
        if (bin.empty())
        {
            m_problem = "nginx is not installed (Debian package nginx-light)";
            return;
        }
        const auto cert = m_dir.path() / "cert.pem";
        const auto key = m_dir.path() / "key.pem";
        if (m_tls)
        {
            const std::string cmd =
                "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -keyout " +
                key.string() + " -out " + cert.string() + " >/dev/null 2>&1";
            if (std::system(cmd.c_str()) != 0)
            {
                m_problem = "openssl could not make a certificate (Debian package openssl)";
                return;
            }
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
                 << "http {\n  log_format zx '$server_protocol $connection $request_uri';\n"
                 << "  access_log " << (d / "access.log").string() << " zx;\n"
                 << "  default_type application/octet-stream;\n"
                 << "  client_body_temp_path " << (d / "tmp").string() << ";\n"
                 << "  proxy_temp_path " << (d / "tmp").string() << ";\n"
                 << "  fastcgi_temp_path " << (d / "tmp").string() << ";\n"
                 << "  uwsgi_temp_path " << (d / "tmp").string() << ";\n"
                 << "  scgi_temp_path " << (d / "tmp").string() << ";\n"
                 << "  keepalive_requests 100000;\n  etag on;\n"
                 << "  server {\n    listen 127.0.0.1:" << m_port << (m_tls ? " ssl http2" : "") << ";\n"
                 << (m_tls ? "    ssl_certificate " + cert.string() + ";\n    ssl_certificate_key " +
                                 key.string() + ";\n"
                           : std::string())
                 << "    root " << r << ";\n"
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
        return std::string(m_tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(m_port) +
               (path.empty() ? "" : "/" + path);
    }
    /// The requests served so far, one line each: "HTTP/1.1 3 /a/c/0" (protocol, connection, URI).
    std::vector<std::string> access_log() const
    {
        std::vector<std::string> lines;
        std::ifstream in(m_dir.path() / "access.log");
        for (std::string line; std::getline(in, line);)
        {
            lines.push_back(line);
        }
        return lines;
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
    bool m_tls = false;
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

    std::string url(const std::string& path) const
    {
        return "http://127.0.0.1:" + std::to_string(m_port) + "/" + path;
    }
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
            // The body too, as long as Content-Length says (tests check what a POST sent).
            if (const auto end = req.find("\r\n\r\n"); end != std::string::npos)
            {
                std::string head = req.substr(0, end);
                for (auto& ch : head)
                {
                    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
                }
                if (const auto at = head.find("\r\ncontent-length:"); at != std::string::npos)
                {
                    const std::size_t want = end + 4 + std::strtoull(head.c_str() + at + 17, nullptr, 10);
                    while (req.size() < want && want - end < (1u << 20))
                    {
                        const ssize_t n = ::recv(c, buf, sizeof(buf), 0);
                        if (n <= 0)
                        {
                            break;
                        }
                        req.append(buf, static_cast<std::size_t>(n));
                    }
                }
            }
            const int i = m_count.fetch_add(1);
            {
                std::lock_guard<std::mutex> g(m_mutex);
                m_received.push_back(req);
            }
            const std::string& r =
                m_responses[std::min<std::size_t>(static_cast<std::size_t>(i), m_responses.size() - 1)];
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

/// What fault_proxy can do to one request instead of passing it through untouched.
enum class fault
{
    status_503,        ///< answer 503 (nginx is not asked)
    status_429,        ///< answer 429 with Retry-After: 0
    status_503_wait_1, ///< answer 503 with Retry-After: 1 (seconds)
    stall,             ///< send nothing until the client gives up
    stall_mid_body,    ///< send the headers and half the body, then nothing
    reset,             ///< reset the connection before answering
    reset_mid_headers, ///< send half the headers, then reset
    reset_mid_body,    ///< send the headers and half the body, then reset
    truncate,          ///< send the headers and half the body, then close (Content-Length unmet)
    short_body,        ///< a 206 with half its body and a Content-Length saying so (Content-Range unmet)
    shift_range,       ///< a 206 whose Content-Range names the range one byte later, same bytes
    wrong_total,       ///< a 206 whose Content-Range gives the object 1000 bytes more
};

/// A thread-based HTTP/1.1 proxy on a free loopback port, in front of `upstream_port` (nginx).
/// Each request is passed to nginx on a connection of its own and its answer returned on the
/// client's kept-alive connection, unless a programmed fault matches it (see inject). Every
/// thread is joined and every socket closed by the destructor.
class fault_proxy
{
public:
    explicit fault_proxy(int upstream_port)
        : m_upstream(upstream_port)
    {
        m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
        const int one = 1;
        ::setsockopt(m_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        sockaddr_in a = loopback_address(0);
        socklen_t len = sizeof(a);
        if (m_fd < 0 || ::bind(m_fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
            ::listen(m_fd, 64) != 0 || ::getsockname(m_fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
        {
            if (m_fd >= 0)
            {
                ::close(m_fd);
            }
            throw std::runtime_error("fault_proxy: cannot listen on loopback");
        }
        m_port = ntohs(a.sin_port);
        m_accept = std::thread([this] { accept_loop(); });
    }
    fault_proxy(const fault_proxy&) = delete;
    fault_proxy& operator=(const fault_proxy&) = delete;
    ~fault_proxy()
    {
        // Every thread polls with a short timeout and checks m_stop, so each closes its own
        // sockets: no descriptor is closed by one thread while another may still use it.
        m_stop = true;
        m_accept.join();
        std::vector<std::thread> conns;
        {
            std::lock_guard<std::mutex> g(m_mutex);
            conns.swap(m_conns);
        }
        for (auto& t : conns)
        {
            t.join();
        }
        ::close(m_fd);
    }

    std::string url(const std::string& path = "") const
    {
        return "http://127.0.0.1:" + std::to_string(m_port) + (path.empty() ? "" : "/" + path);
    }

    /// Spoils requests whose request line ("GET /a/obj HTTP/1.1") contains `match`: every
    /// `period`-th of them, `count` times (-1: for ever). Rules are tried in the order given; the
    /// first whose turn it is takes the request.
    void inject(fault f, int count = 1, std::string match = "", int period = 1)
    {
        std::lock_guard<std::mutex> g(m_mutex);
        m_rules.push_back({f, count, std::move(match), std::max(1, period), 0});
    }
    /// Forgets every rule not used up yet.
    void clear()
    {
        std::lock_guard<std::mutex> g(m_mutex);
        m_rules.clear();
    }
    /// Requests received, and faults committed (a fault that does not apply to its answer, such
    /// as a Content-Range lie on a 200, passes the answer through and is not counted).
    int requests() const { return m_requests.load(); }
    int faults() const { return m_faults.load(); }
    int faults(fault f) const
    {
        std::lock_guard<std::mutex> g(m_mutex);
        return static_cast<int>(std::count(m_committed.begin(), m_committed.end(), f));
    }

private:
    struct rule
    {
        fault what;
        int remaining;
        std::string match;
        int period;
        int seen;
    };
    struct response
    {
        std::string head; ///< the status line and headers, without the blank line
        std::string body;
    };

    static constexpr int poll_ms = 20;

    std::optional<fault> take_fault(const std::string& request_line)
    {
        std::lock_guard<std::mutex> g(m_mutex);
        std::optional<fault> chosen;
        for (auto& r : m_rules)
        {
            if (r.remaining == 0 || request_line.find(r.match) == std::string::npos)
            {
                continue;
            }
            ++r.seen;
            if (!chosen && r.seen % r.period == 0)
            {
                chosen = r.what;
                if (r.remaining > 0)
                {
                    --r.remaining;
                }
            }
        }
        return chosen;
    }
    void committed(fault f)
    {
        std::lock_guard<std::mutex> g(m_mutex);
        m_committed.push_back(f);
        ++m_faults;
    }

    /// Waits until `fd` is readable; false when the proxy stops first.
    bool readable(int fd) const
    {
        while (!m_stop)
        {
            pollfd p{fd, POLLIN, 0};
            const int n = ::poll(&p, 1, poll_ms);
            if (n > 0)
            {
                return true;
            }
            if (n < 0 && errno != EINTR)
            {
                return false;
            }
        }
        return false;
    }
    static bool send_all(int fd, std::string_view s)
    {
        while (!s.empty())
        {
            const ssize_t n = ::send(fd, s.data(), s.size(), MSG_NOSIGNAL);
            if (n <= 0)
            {
                return false;
            }
            s.remove_prefix(static_cast<std::size_t>(n));
        }
        return true;
    }
    /// Sends a whole answer on a kept-alive connection; false (and closed) when the client is gone.
    static bool reply(int fd, std::string_view s)
    {
        if (send_all(fd, s))
        {
            return true;
        }
        ::close(fd);
        return false;
    }
    /// Closes with an RST instead of a FIN (SO_LINGER 0), after a moment for what was sent to arrive.
    static void reset_close(int fd)
    {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        linger l{1, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
        ::close(fd);
    }
    /// Holds the connection, sending nothing, until the client closes it or the proxy stops.
    void hold(int fd) const
    {
        char buf[4096];
        while (readable(fd))
        {
            if (::recv(fd, buf, sizeof(buf), 0) <= 0)
            {
                return;
            }
        }
    }

    static std::string lower(std::string s)
    {
        std::transform(s.begin(), s.end(), s.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        return s;
    }
    /// The header lines of `head` (after the first line) without those called `name`.
    static std::string without_header(const std::string& head, const std::string& name)
    {
        std::string out;
        std::size_t at = 0;
        bool first = true;
        while (at <= head.size())
        {
            std::size_t eol = head.find("\r\n", at);
            if (eol == std::string::npos)
            {
                eol = head.size();
            }
            const std::string line = head.substr(at, eol - at);
            if (first || lower(line.substr(0, name.size() + 1)) != lower(name) + ":")
            {
                out += (out.empty() ? "" : "\r\n") + line;
            }
            first = false;
            at = eol + 2;
        }
        return out;
    }
    static std::optional<std::string> header(const std::string& head, const std::string& name)
    {
        const std::string l = lower(head);
        const auto at = l.find("\r\n" + lower(name) + ":");
        if (at == std::string::npos)
        {
            return std::nullopt;
        }
        auto begin = at + 2 + name.size() + 1;
        const auto end = head.find("\r\n", begin);
        while (begin < head.size() && head[begin] == ' ')
        {
            ++begin;
        }
        return head.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    }

    /// nginx's answer to `request` (sent with Connection: close, read to the end).
    std::optional<response> upstream(const std::string& request) const
    {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a = loopback_address(m_upstream);
        if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0)
        {
            if (fd >= 0)
            {
                ::close(fd);
            }
            return std::nullopt;
        }
        const std::string head = without_header(request.substr(0, request.size() - 4), "connection");
        std::string got;
        if (send_all(fd, head + "\r\nConnection: close\r\n\r\n"))
        {
            char buf[16384];
            while (readable(fd))
            {
                const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
                if (n <= 0)
                {
                    break;
                }
                got.append(buf, static_cast<std::size_t>(n));
            }
        }
        ::close(fd);
        const auto end = got.find("\r\n\r\n");
        if (end == std::string::npos)
        {
            return std::nullopt;
        }
        return response{without_header(got.substr(0, end), "connection"), got.substr(end + 4)};
    }

    void accept_loop()
    {
        while (readable(m_fd))
        {
            const int c = ::accept(m_fd, nullptr, nullptr);
            if (c < 0)
            {
                continue;
            }
            std::lock_guard<std::mutex> g(m_mutex);
            m_conns.emplace_back([this, c] { serve(c); });
        }
    }

    /// One client connection: its requests in turn, until it closes, a fault ends it, or the
    /// proxy stops. Owns `c` (closes it on every path).
    void serve(int c)
    {
        std::string in;
        char buf[4096];
        while (true)
        {
            auto end = in.find("\r\n\r\n");
            while (end == std::string::npos)
            {
                if (!readable(c))
                {
                    ::close(c);
                    return;
                }
                const ssize_t n = ::recv(c, buf, sizeof(buf), 0);
                if (n <= 0)
                {
                    ::close(c);
                    return;
                }
                in.append(buf, static_cast<std::size_t>(n));
                end = in.find("\r\n\r\n");
            }
            const std::string request = in.substr(0, end + 4); // GET and HEAD: no request body
            in.erase(0, end + 4);
            ++m_requests;
            const std::string line = request.substr(0, request.find("\r\n"));
            const bool is_head = line.rfind("HEAD ", 0) == 0;
            if (!answer(c, request, line, is_head))
            {
                return; // the fault closed (or holds, then closed) the connection
            }
        }
    }

    /// Answers one request; false when the connection was closed.
    bool answer(int c, const std::string& request, const std::string& line, bool is_head)
    {
        const auto f = take_fault(line);
        if (f == fault::status_503 || f == fault::status_429 || f == fault::status_503_wait_1)
        {
            committed(*f);
            return reply(
                c, *f == fault::status_503   ? "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n"
                   : *f == fault::status_429 ? "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 0\r\n"
                                               "Content-Length: 0\r\n\r\n"
                                             : "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n"
                                               "Content-Length: 0\r\n\r\n");
        }
        if (f == fault::stall)
        {
            committed(*f);
            hold(c);
            ::close(c);
            return false;
        }
        if (f == fault::reset)
        {
            committed(*f);
            reset_close(c);
            return false;
        }
        auto res = upstream(request);
        if (!res)
        {
            send_all(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            ::close(c);
            return false;
        }
        const bool partial = res->head.find(" 206 ") != std::string::npos;
        const std::string half = res->body.substr(0, res->body.size() / 2);
        auto whole = [&](const std::string& head) { return head + "\r\n\r\n" + res->body; };
        if (!f)
        {
            // Without a length the end of the body is the end of the connection.
            const bool delimited = is_head || header(res->head, "content-length").has_value();
            if (!delimited)
            {
                send_all(c, whole(res->head));
                ::close(c);
                return false;
            }
            return reply(c, whole(res->head));
        }
        switch (*f)
        {
            case fault::reset_mid_headers:
                committed(*f);
                send_all(c, res->head.substr(0, res->head.size() / 2));
                reset_close(c);
                return false;
            case fault::stall_mid_body:
            case fault::reset_mid_body:
            case fault::truncate:
                if (is_head || res->body.empty())
                {
                    break; // no body to spoil
                }
                committed(*f);
                send_all(c, res->head + "\r\n\r\n" + half);
                if (*f == fault::stall_mid_body)
                {
                    hold(c);
                    ::close(c);
                }
                else if (*f == fault::reset_mid_body)
                {
                    reset_close(c);
                }
                else
                {
                    ::shutdown(c, SHUT_WR);
                    hold(c); // until the client has read what was sent and closes
                    ::close(c);
                }
                return false;
            case fault::short_body:
                if (!partial)
                {
                    break;
                }
                committed(*f);
                res->body = half;
                return reply(c, whole(without_header(res->head, "content-length") +
                                      "\r\nContent-Length: " + std::to_string(half.size())));
            case fault::shift_range:
            case fault::wrong_total:
            {
                const auto cr = header(res->head, "content-range");
                unsigned long long first = 0, last = 0, total = 0;
                if (!partial || !cr ||
                    std::sscanf(cr->c_str(), "bytes %llu-%llu/%llu", &first, &last, &total) != 3)
                {
                    break;
                }
                committed(*f);
                if (*f == fault::shift_range)
                {
                    ++first;
                    ++last;
                }
                else
                {
                    total += 1000;
                }
                const std::string lie = "bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" +
                                        std::to_string(total);
                return reply(c,
                             whole(without_header(res->head, "content-range") + "\r\nContent-Range: " + lie));
            }
            default:
                break;
        }
        // The fault does not apply to this answer: passed through.
        return reply(c, whole(res->head));
    }

    int m_upstream;
    int m_fd = -1;
    int m_port = 0;
    std::atomic<bool> m_stop{false};
    std::atomic<int> m_requests{0};
    std::atomic<int> m_faults{0};
    mutable std::mutex m_mutex;
    std::vector<rule> m_rules;
    std::vector<fault> m_committed;
    std::vector<std::thread> m_conns;
    std::thread m_accept;
};

} // namespace zxtest
