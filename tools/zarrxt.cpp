// zarrxt: look at, hash, print, convert and check Zarr arrays and hierarchies.
//
//   zarrxt info PATH                 zarrxt tree PATH              zarrxt hash PATH
//   zarrxt cat PATH [--region ...]   zarrxt convert SRC DST [...]  zarrxt verify PATH [--clean]
//   zarrxt consolidate PATH [--check]
//   zarrxt help [COMMAND]            zarrxt COMMAND --help         zarrxt --version
//
// PATH is the directory of an array or a group, or a URL (file://, http(s)://, s3://, or reference::REFS
// for a kerchunk reference file). Exit status: 0 success, 1 a data error (a Zarr error, whose id and
// context go to stderr, an I/O error, or problems found by verify), 2 a usage error. docs/tool.md is
// the manual; `help COMMAND` prints each command's page.
#include "sha256.hpp"

#include <zarrxt/store/open_store.hpp>
#include <zarrxt/store/zip_writer.hpp>
#include <zarrxt/zarrxt.hpp>

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

namespace zx = zarrxt;
namespace fs = std::filesystem;
using store_t = zx::any_store; // a directory, file://, http(s):// or s3:// (zarrxt::open_store)

namespace
{

constexpr int exit_ok = 0;
constexpr int exit_data_error = 1;
constexpr int exit_usage = 2;

struct usage_error : std::runtime_error
{
    using std::runtime_error::runtime_error;
};

/// A command: its synopsis and pages for `help`, and what runs it (with the arguments after its name).
struct command
{
    const char* name;
    const char* synopsis;
    const char* summary;
    const char* details;
    int (*run)(const std::vector<std::string>& args);
};

const char* exit_status_text = R"(exit status:
  0  success
  1  data error: no such array or group, unreadable or corrupt metadata or data (the message
     starts with the error id, e.g. [zarrxt.codec.3], and names the key), an I/O error, or
     problems found by verify
  2  usage error: unknown command or option, missing or malformed argument
)";

// ------------------------------------------------------------------------------------ formatting

/// A byte count for people: "512 B", "1.50 KiB", "12.3 MiB", "118 GiB" (binary units, 3 digits).
std::string human_size(std::uint64_t n)
{
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (n < 1024)
    {
        return std::to_string(n) + " B";
    }
    double v = static_cast<double>(n);
    std::size_t u = 0;
    while (v >= 1024.0 && u + 1 < std::size(units))
    {
        v /= 1024.0;
        ++u;
    }
    char buf[32];
    // Round first, so that 1023.96 KiB becomes "1.00 MiB", not "1024 KiB".
    if (v >= 999.5 && u + 1 < std::size(units))
    {
        v /= 1024.0;
        ++u;
    }
    std::snprintf(buf, sizeof buf, v < 9.995 ? "%.2f %s" : v < 99.95 ? "%.1f %s" : "%.0f %s", v, units[u]);
    return buf;
}

/// A duration in whole seconds: "0:07", "12:34", "1:02:03".
std::string clock_text(double seconds)
{
    const auto s = static_cast<std::uint64_t>(std::max(0.0, seconds) + 0.5);
    char buf[32];
    if (s >= 3600)
    {
        std::snprintf(buf, sizeof buf, "%" PRIu64 ":%02u:%02u", s / 3600, static_cast<unsigned>(s / 60 % 60),
                      static_cast<unsigned>(s % 60));
    }
    else
    {
        std::snprintf(buf, sizeof buf, "%u:%02u", static_cast<unsigned>(s / 60),
                      static_cast<unsigned>(s % 60));
    }
    return buf;
}

std::string join(const std::vector<std::uint64_t>& v)
{
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i)
    {
        s += (i ? ", " : "") + std::to_string(v[i]);
    }
    return s + "]";
}

/// An array's chunks as `info` and `tree` print them: the shape of a regular grid, or
/// "rectilinear" and its chunk_shapes member.
std::string grid_text(const zx::array_metadata& m)
{
    return m.rectilinear ? "rectilinear " + m.rectilinear->to_json().dump() : join(m.chunk_shape);
}

/// The edge lengths of the chunks of a rectilinear grid that hold elements, per axis (to copy the
/// grid; refused past a million chunks on an axis, where a copy should choose its chunks).
std::vector<std::vector<std::uint64_t>> rectilinear_edges(const zx::array_metadata& m)
{
    std::vector<std::vector<std::uint64_t>> edges(m.rank());
    const auto grid = m.grid_shape();
    for (std::size_t d = 0; d < m.rank(); ++d)
    {
        if (grid[d] > (std::uint64_t{1} << 20))
        {
            throw usage_error("the source's rectilinear grid has " + std::to_string(grid[d]) +
                              " chunks along axis " + std::to_string(d) + "; pass --chunks");
        }
        for (std::uint64_t c = 0; c < grid[d]; ++c)
        {
            edges[d].push_back(m.chunk_edge(d, c));
        }
        if (edges[d].empty())
        {
            edges[d].push_back(m.rectilinear->edge(d, 0)); // an axis of length 0 keeps its first edge
        }
    }
    return edges;
}

std::uint64_t product(const std::vector<std::uint64_t>& v)
{
    return std::accumulate(v.begin(), v.end(), std::uint64_t{1}, std::multiplies<>());
}

/// A codec as one short phrase: its name and configuration values, e.g. "zstd(level=3, checksum=false)".
std::string codec_text(const zx::json& spec)
{
    const std::string name = spec.value("name", std::string("?"));
    const zx::json cfg = spec.value("configuration", zx::json::object());
    if (name == "sharding_indexed")
    {
        return "sharding_indexed";
    }
    std::string s = name;
    if (cfg.is_object() && !cfg.empty())
    {
        s += "(";
        bool first = true;
        for (const auto& [k, v] : cfg.items())
        {
            s += (first ? "" : ", ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
            first = false;
        }
        s += ")";
    }
    return s;
}

std::string codecs_text(const zx::json& list)
{
    std::string s;
    for (const auto& c : list)
    {
        s += (s.empty() ? "" : ", ") + codec_text(c);
    }
    return "[" + s + "]";
}

// -------------------------------------------------------------------------------------- progress

/// A progress line on stderr with a bar, the rate and the time left, redrawn at most ten times a
/// second; drawn only when stderr is a terminal (and --no-progress was not given), so logs and
/// pipes get none of it.
class progress
{
public:
    progress(bool enabled, std::string label, std::uint64_t total_bytes)
        : m_enabled(enabled)
        , m_label(std::move(label))
        , m_total(total_bytes)
        , m_start(clock::now())
    {
    }
    progress(const progress&) = delete;
    progress& operator=(const progress&) = delete;
    ~progress() { finish(); }

    static bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) != 0; }

    void set_label(std::string label) { m_label = std::move(label); }

    /// `bytes` more are done. The first step draws at once (it gives the first rate and ETA).
    void advance(std::uint64_t bytes)
    {
        m_done += bytes;
        ++m_steps;
        if (!m_enabled)
        {
            return;
        }
        const auto now = clock::now();
        if (m_steps == 1 || now - m_last_draw >= std::chrono::milliseconds(100))
        {
            draw(now, false);
        }
    }

    /// Erase the line, so that a message printed next starts on a clean one (redrawn on the next step).
    void clear()
    {
        if (m_enabled && m_drawn)
        {
            std::fputs("\r\033[K", stderr);
            std::fflush(stderr);
            m_drawn = false;
        }
    }

    void finish()
    {
        if (m_enabled && !m_finished)
        {
            m_finished = true;
            draw(clock::now(), true);
            std::fputs("\n", stderr);
            std::fflush(stderr);
        }
    }

private:
    using clock = std::chrono::steady_clock;

    static int terminal_width()
    {
        winsize w{};
        if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col >= 40)
        {
            return w.ws_col;
        }
        return 80;
    }

    void draw(clock::time_point now, bool final)
    {
        m_last_draw = now;
        const double elapsed = std::chrono::duration<double>(now - m_start).count();
        const double fraction =
            m_total == 0 ? 1.0 : std::min(1.0, static_cast<double>(m_done) / static_cast<double>(m_total));
        const double rate = elapsed > 0 ? static_cast<double>(m_done) / elapsed : 0.0;
        std::string tail = " " + std::to_string(static_cast<int>(fraction * 100.0)) + "% " +
                           human_size(m_done) + " / " + human_size(m_total) + " " +
                           human_size(static_cast<std::uint64_t>(rate)) + "/s ";
        if (final)
        {
            tail += "in " + clock_text(elapsed);
        }
        else if (rate > 0)
        {
            tail += "ETA " + clock_text(static_cast<double>(m_total - std::min(m_total, m_done)) / rate);
        }
        else
        {
            tail += "ETA --:--";
        }
        // The label gives way first (its end is kept: the array's name), then the bar, down to 10.
        const int room = terminal_width() - 1 - static_cast<int>(tail.size()) - 3; // label, space, brackets
        std::string label = m_label;
        const int label_max = room - 10;
        if (label_max < 6)
        {
            label.clear();
        }
        else if (static_cast<int>(label.size()) > label_max)
        {
            label = "..." + label.substr(label.size() - static_cast<std::size_t>(label_max - 3));
        }
        const int bar = std::clamp(room - static_cast<int>(label.size()), 10, 30);
        const int filled = static_cast<int>(fraction * bar);
        std::string line = "\r" + label + (label.empty() ? "" : " ") + "[" +
                           std::string(static_cast<std::size_t>(filled), '#') +
                           std::string(static_cast<std::size_t>(bar - filled), '.') + "]" + tail + "\033[K";
        std::fputs(line.c_str(), stderr);
        std::fflush(stderr);
        m_drawn = true;
    }

    bool m_enabled;
    std::string m_label;
    std::uint64_t m_total;
    std::uint64_t m_done = 0;
    std::uint64_t m_steps = 0;
    clock::time_point m_start;
    clock::time_point m_last_draw{};
    bool m_drawn = false;
    bool m_finished = false;
};

// ------------------------------------------------------------------------------------- arguments

/// The arguments of one command: positionals, flags and options with a value (`--opt VALUE`).
class arguments
{
public:
    arguments(const std::vector<std::string>& args, std::initializer_list<const char*> flags,
              std::initializer_list<const char*> valued)
    {
        for (std::size_t i = 0; i < args.size(); ++i)
        {
            const std::string& a = args[i];
            if (a.size() > 1 && a[0] == '-')
            {
                if (contains(flags, a))
                {
                    m_flags.push_back(a);
                }
                else if (contains(valued, a))
                {
                    if (i + 1 >= args.size())
                    {
                        throw usage_error(a + " needs a value");
                    }
                    m_values[a] = args[++i];
                }
                else
                {
                    throw usage_error("unknown option " + a);
                }
            }
            else
            {
                m_positional.push_back(a);
            }
        }
    }

    bool flag(const std::string& f) const
    {
        return std::find(m_flags.begin(), m_flags.end(), f) != m_flags.end();
    }
    std::optional<std::string> value(const std::string& o) const
    {
        auto it = m_values.find(o);
        return it == m_values.end() ? std::nullopt : std::optional<std::string>(it->second);
    }
    const std::vector<std::string>& positional() const { return m_positional; }
    void expect_positional(std::size_t n, const char* names) const
    {
        if (m_positional.size() != n)
        {
            throw usage_error(
                std::string(m_positional.size() < n ? "missing " : "too many arguments; expected ") + names);
        }
    }

private:
    static bool contains(std::initializer_list<const char*> list, const std::string& a)
    {
        return std::any_of(list.begin(), list.end(), [&](const char* x) { return a == x; });
    }

    std::vector<std::string> m_positional;
    std::vector<std::string> m_flags;
    std::map<std::string, std::string> m_values;
};

std::vector<std::uint64_t> parse_list(const std::string& s, const char* what)
{
    std::vector<std::uint64_t> v;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
    {
        if (item.empty() || item.size() > 19 || item.find_first_not_of("0123456789") != std::string::npos)
        {
            throw usage_error(std::string("invalid ") + what + ": \"" + s + "\"");
        }
        v.push_back(std::stoull(item));
    }
    if (v.empty())
    {
        throw usage_error(std::string("invalid ") + what + ": \"" + s + "\"");
    }
    return v;
}

// ---------------------------------------------------------------------------------------- arrays

/// A local path given as a path or a file:// URL, as a path.
std::string local_path(const std::string& path)
{
    return path.rfind("file://", 0) == 0 ? path.substr(7) : path;
}

/// The store holding PATH (a directory or a URL) as its root node. A store that cannot list (an
/// HTTP server) is read through its consolidated metadata when it has some, so that groups list.
store_t store_for(const std::string& path)
{
    if (zx::is_reference_url(path))
    {
        return zx::open_store(path); // a kerchunk reference file (reference::refs.json): it lists
    }
    if (const auto z = zx::split_zip_url(path); z && !zx::is_remote_url(path))
    {
        // A local archive (x.zarr.zip, x.zarr.zip/inner/node): open_store reads it by ranges.
        const fs::path archive = fs::path(local_path(z->base)) / z->archive;
        if (!fs::is_regular_file(archive))
        {
            throw zx::array_error(zx::array_errc::node_not_found, "no such zip archive: " + archive.string());
        }
        return zx::open_store(path);
    }
    if (zx::is_remote_url(path))
    {
        store_t s = zx::open_store(path);
        if (!s.listable())
        {
            auto c = zx::open_consolidated(s, "", zx::consolidated_mode::automatic);
            return store_t(std::move(c), s.describe());
        }
        return s;
    }
    const std::string dir = local_path(path);
    if (!fs::is_directory(dir))
    {
        throw zx::array_error(zx::array_errc::node_not_found, "no such directory: " + path);
    }
    return zx::open_store(path);
}

/// A zip archive this command is writing: committed by cmd_convert once it has written
/// everything (a failed command leaves the destination as it was).
std::optional<zx::zip_writer> pending_zip;

/// The store a command writes to: a directory (made when missing), a new zip archive (x.zarr.zip,
/// written as a whole, locally or as an object of a writable URL: s3://bucket/x.zarr.zip) or a
/// writable URL (s3://).
store_t output_store_for(const std::string& path, bool overwrite)
{
    if (zx::is_reference_url(path))
    {
        return zx::open_store(path); // read-only: a write is store.9
    }
    if (const auto z = zx::split_zip_url(path))
    {
        if (!z->root.empty())
        {
            throw usage_error("a zip archive is written as a whole: \"" + path +
                              "\" names a node inside one");
        }
        std::optional<store_t> base; // the store holding a remote archive
        std::string shown;
        bool exists = false;
        if (zx::is_remote_url(path))
        {
            base.emplace(zx::open_store(z->base));
            shown = base->describe() + "/" + z->archive;
            if (!base->writable())
            {
                // Refused before anything is staged, not after the whole conversion.
                throw zx::store_error(zx::store_errc::read_only,
                                      shown + ": the store of " + base->describe() + " cannot write");
            }
            exists = base->stat(z->archive).has_value();
        }
        else
        {
            shown = (fs::path(local_path(z->base)) / z->archive).string();
            exists = fs::exists(shown);
        }
        if (exists && !overwrite)
        {
            throw zx::array_error(zx::array_errc::node_exists, shown + " exists (--overwrite replaces it)");
        }
        if (base)
        {
            pending_zip.emplace(*base, z->archive);
        }
        else
        {
            pending_zip.emplace(fs::path(shown));
        }
        return store_t(*pending_zip, "zip:" + shown);
    }
    if (!zx::is_remote_url(path))
    {
        fs::create_directories(local_path(path));
    }
    return zx::open_store(path);
}

bool is_metadata_key(const std::string& key)
{
    const std::string base = key.substr(key.rfind('/') == std::string::npos ? 0 : key.rfind('/') + 1);
    return base == "zarr.json" || base == ".zarray" || base == ".zattrs" || base == ".zgroup" ||
           base == ".zmetadata";
}

struct stored_size
{
    std::uint64_t bytes = 0;   ///< chunks and shards, metadata excluded
    std::uint64_t objects = 0; ///< how many chunks (or shards) are stored
    bool known = true;         ///< false: the store cannot list, so nothing was counted
};

/// What the array at `path` (an array holds no other nodes) stores besides its metadata.
stored_size stored_of(const store_t& s, const std::string& path)
{
    stored_size out;
    if (!s.listable())
    {
        out.known = false; // an HTTP server without a listing: the chunks cannot be counted
        return out;
    }
    for (const auto& key : s.list(path))
    {
        if (is_metadata_key(key))
        {
            continue;
        }
        if (auto st = s.stat(key))
        {
            out.bytes += st->size;
            ++out.objects;
        }
    }
    return out;
}

/// The decoded size of the whole array; 0 for variable-length values, whose size is unknown
/// without reading them.
std::uint64_t raw_bytes_of(const zx::array_metadata& m)
{
    return zx::is_vlen(m.dtype) ? 0 : product(m.shape) * m.element_size();
}

/// "4.00" for raw / stored, or "-" when nothing is stored or the raw size is unknown.
std::string ratio_text(std::uint64_t raw, std::uint64_t stored)
{
    if (stored == 0 || raw == 0)
    {
        return "-";
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(raw) / static_cast<double>(stored));
    return buf;
}

/// Read the whole array in slabs along axis 0 (bounded memory), calling f(bytes, element count).
template <class F>
void for_each_slab(const zx::any_array<store_t>& a, std::uint64_t rows_per_slab, F&& f)
{
    const auto& shape = a.shape();
    const std::size_t width = a.metadata().element_size();
    // Variable-length values live in an arena while f looks at them (one slab at a time).
    const std::uint64_t cap = a.core()->limits().max_bytes_in_flight;
    if (shape.empty())
    {
        zx::buffer b(width);
        zx::value_arena arena(cap);
        a.read_bytes({}, {}, b.data(), nullptr, &arena);
        f(b.data(), std::uint64_t{1});
        return;
    }
    std::uint64_t row_elems = 1;
    for (std::size_t d = 1; d < shape.size(); ++d)
    {
        row_elems *= shape[d];
    }
    rows_per_slab = std::max<std::uint64_t>(1, rows_per_slab);
    zx::buffer b;
    for (std::uint64_t r = 0; r < shape[0]; r += rows_per_slab)
    {
        const std::uint64_t n = std::min(rows_per_slab, shape[0] - r);
        std::vector<std::uint64_t> off(shape.size(), 0);
        std::vector<std::uint64_t> ext = shape;
        off[0] = r;
        ext[0] = n;
        b.resize_discard(static_cast<std::size_t>(n * row_elems * width));
        zx::value_arena arena(cap);
        a.read_bytes(off, ext, b.data(), nullptr, &arena);
        f(b.data(), n * row_elems);
    }
}

/// The value of one element of a string type, fixed-width or variable-length.
std::string string_value(zx::dtype_id id, const std::byte* p, std::size_t width)
{
    if (zx::is_vlen(id))
    {
        zx::vlen_element e;
        std::memcpy(&e, p, sizeof e);
        return std::string(e.view());
    }
    return zx::decode_fixed_string(id, p, width);
}

/// A dtype's name, with the unit for times: "numpy.datetime64[ns]".
std::string dtype_text(const zx::array_metadata& m)
{
    std::string s(zx::name(m.dtype));
    if (zx::is_fixed_string(m.dtype))
    {
        return s + "[" + std::to_string(m.dtype.fixed_size) + " bytes]";
    }
    if (m.dtype == zx::dtype_id::structured)
    {
        return s + " " + zx::describe_fields(m.dtype.fields);
    }
    return zx::is_time(m.dtype) ? s + "[" + zx::to_string(m.dtype.unit) + "]" : s;
}

/// A string value quoted: printable ASCII as it is, \" \\ \n \t escaped, other bytes of |S values as
/// \xNN; UTF-8 text of <U values as it is (a terminal shows it).
std::string quoted(const std::string& v, bool text)
{
    std::string out = "\"";
    for (char ch : v)
    {
        const auto c = static_cast<unsigned char>(ch);
        if (ch == '"' || ch == '\\')
        {
            out += '\\';
            out += ch;
        }
        else if (ch == '\n')
        {
            out += "\\n";
        }
        else if (ch == '\t')
        {
            out += "\\t";
        }
        else if (c < 0x20 || c == 0x7f || (c >= 0x80 && !text))
        {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        }
        else
        {
            out += ch;
        }
    }
    return out + "\"";
}

std::string format_value(const zx::data_type& type, const std::byte* p)
{
    const zx::dtype_id id = type.id;
    const zx::time_unit& unit = type.unit;
    const std::vector<zx::record_field>* fields = &type.fields;
    char buf[96];
    auto get = [&](auto v)
    {
        std::memcpy(&v, p, sizeof(v));
        return v;
    };
    switch (id)
    {
        case zx::dtype_id::bool_:
            return get(std::uint8_t{}) ? "true" : "false";
        case zx::dtype_id::int8:
            return std::to_string(get(std::int8_t{}));
        case zx::dtype_id::int16:
            return std::to_string(get(std::int16_t{}));
        case zx::dtype_id::int32:
            return std::to_string(get(std::int32_t{}));
        case zx::dtype_id::int64:
            return std::to_string(get(std::int64_t{}));
        case zx::dtype_id::uint8:
            return std::to_string(get(std::uint8_t{}));
        case zx::dtype_id::uint16:
            return std::to_string(get(std::uint16_t{}));
        case zx::dtype_id::uint32:
            return std::to_string(get(std::uint32_t{}));
        case zx::dtype_id::uint64:
            return std::to_string(get(std::uint64_t{}));
        case zx::dtype_id::float16:
            std::snprintf(
                buf, sizeof buf, "%.5g",
                static_cast<double>(static_cast<float>(zx::detail::half_from_bits(get(std::uint16_t{})))));
            return buf;
        case zx::dtype_id::bfloat16:
        case zx::dtype_id::float8_e3m4:
        case zx::dtype_id::float8_e4m3:
        case zx::dtype_id::float8_e4m3b11fnuz:
        case zx::dtype_id::float8_e4m3fnuz:
        case zx::dtype_id::float8_e5m2:
        case zx::dtype_id::float8_e5m2fnuz:
        case zx::dtype_id::float8_e8m0fnu:
        {
            // As float16 prints (nan, inf): 5 digits tell every value of these types apart.
            const zx::minifloat_spec& spec = *zx::minifloat_spec_of(id);
            const std::uint16_t bits =
                spec.width == 2 ? get(std::uint16_t{}) : static_cast<std::uint16_t>(get(std::uint8_t{}));
            std::snprintf(buf, sizeof buf, "%.5g", zx::detail::minifloat_to_double(spec, bits));
            return buf;
        }
        case zx::dtype_id::float32:
            std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(get(float{})));
            return buf;
        case zx::dtype_id::float64:
            std::snprintf(buf, sizeof buf, "%.17g", get(double{}));
            return buf;
        case zx::dtype_id::complex64:
        {
            float c[2];
            std::memcpy(c, p, 8);
            std::snprintf(buf, sizeof buf, "%.9g%+.9gj", static_cast<double>(c[0]),
                          static_cast<double>(c[1]));
            return buf;
        }
        case zx::dtype_id::complex128:
        {
            double c[2];
            std::memcpy(c, p, 16);
            std::snprintf(buf, sizeof buf, "%.17g%+.17gj", c[0], c[1]);
            return buf;
        }
        case zx::dtype_id::datetime64:
            return zx::format_datetime(get(std::int64_t{}), unit);
        case zx::dtype_id::timedelta64:
            return zx::format_timedelta(get(std::int64_t{}), unit);
        case zx::dtype_id::fixed_bytes:
        case zx::dtype_id::fixed_utf32:
            return quoted(zx::decode_fixed_string(id, p, type.fixed_size), id == zx::dtype_id::fixed_utf32);
        case zx::dtype_id::string:
        case zx::dtype_id::vlen_bytes:
        {
            zx::vlen_element e;
            std::memcpy(&e, p, sizeof e);
            return quoted(std::string(e.view()), id == zx::dtype_id::string);
        }
        case zx::dtype_id::structured:
        {
            // {x: 1, y: 2.5, v: [3, 4]}: each field as its type prints, subarrays in brackets.
            std::string out = "{";
            for (std::size_t i = 0; fields != nullptr && i < fields->size(); ++i)
            {
                const auto& f = (*fields)[i];
                out += (i ? ", " : "") + f.name + ": ";
                const std::size_t one = f.type.size();
                const std::uint64_t n = f.count();
                std::string values;
                for (std::uint64_t k = 0; k < n; ++k)
                {
                    values += (k ? ", " : "") + format_value(f.type, p + f.offset + k * one);
                }
                out += f.shape.empty() ? values : "[" + values + "]";
            }
            return out + "}";
        }
        case zx::dtype_id::user:
            // The type's own text: its fill value form (the tool has no registry of its own, so
            // this is reached only through a program that passes one).
            return type.user ? type.user->fill_to_json(p).dump() : "?";
    }
    return "?";
}

// ------------------------------------------------------------------------------------------ info

int cmd_info(const std::vector<std::string>& argv)
{
    arguments args(argv, {}, {});
    args.expect_positional(1, "PATH");
    const std::string& path = args.positional()[0];
    store_t s = store_for(path);
    const auto lv = zx::limit_values::from(zx::default_limits{});
    auto node = zx::read_node(s, "", lv);
    if (!node)
    {
        throw zx::array_error(zx::array_errc::node_not_found, "no Zarr array or group at " + path);
    }
    std::cout << "path: " << path << "\n";
    if (node->kind == zx::node_kind::group)
    {
        auto g = zx::group<store_t>::open(s, "");
        std::cout << "node: group\nzarr_format: " << g.zarr_format()
                  << "\nattributes: " << g.attributes().dump() << "\nchildren:\n";
        for (const auto& c : g.children())
        {
            std::cout << "  " << c.name << " (" << (c.kind == zx::node_kind::array ? "array" : "group")
                      << ")\n";
        }
        return exit_ok;
    }
    auto a = zx::open_any(s, "");
    const auto& m = a.metadata();
    std::cout << "node: array\nzarr_format: " << m.zarr_format << "\ndtype: " << dtype_text(m);
    if (m.zarr_format == 2)
    {
        // The numpy type string, or a record's list of fields.
        const zx::json& v2 = m.document["dtype"];
        std::cout << " (" << (v2.is_string() ? v2.get<std::string>() : v2.dump()) << ")";
    }
    std::cout << "\nshape: " << join(m.shape) << "\n";
    if (const auto* sh = a.chain().any_sharding())
    {
        std::cout << "shards: " << grid_text(m) << "\n";
        std::cout << "inner chunks: " << join(sh->inner_chunk_shape().to_vector()) << "\n";
        const auto cfg = sh->configuration();
        std::cout << "shard index: " << (sh->index_at_end() ? "end" : "start") << ", "
                  << sh->index_encoded_size() << " bytes, codecs " << cfg["index_codecs"].dump() << "\n";
        std::cout << "inner codecs: " << cfg["codecs"].dump() << "\n";
    }
    else
    {
        std::cout << "chunks: " << grid_text(m) << "\n";
    }
    zx::json codecs = zx::json::array();
    for (const auto& c : a.codecs())
    {
        codecs.push_back(c.to_json());
    }
    std::cout << "codecs: " << codecs.dump() << "\n";
    std::cout << "fill_value: "
              << zx::fill_value_to_json(m.fill, m.dtype, m.zarr_format).dump();
    if (m.fill.is_null && m.attributes.contains("_FillValue") &&
        zx::fill_value_to_json(m.fill, m.dtype, 3) !=
            zx::fill_value_to_json(zx::fill_value{}, m.dtype, 3))
    {
        std::cout << " (missing chunks read as "
                  << zx::fill_value_to_json(m.fill, m.dtype, 3).dump()
                  << ", the _FillValue attribute)";
    }
    std::cout << "\n";
    const auto& enc = m.key_encoding;
    std::cout << "chunk_key_encoding: "
              << (m.zarr_format == 2                                       ? "v2 (zarr v2)"
                  : enc.encoding == zx::chunk_key_encoding::kind::default_ ? "default"
                                                                           : "v2")
              << " \"" << enc.separator << "\"\n";
    if (m.dimension_names)
    {
        std::cout << "dimension_names: [";
        for (std::size_t i = 0; i < m.dimension_names->size(); ++i)
        {
            const auto& n = (*m.dimension_names)[i];
            std::cout << (i ? ", " : "") << (n ? "\"" + *n + "\"" : std::string("null"));
        }
        std::cout << "]\n";
    }
    else if (m.zarr_format == 2 && m.attributes.contains(zx::v2_dimension_names_attribute))
    {
        std::cout << "dimension_names: none (the _ARRAY_DIMENSIONS attribute is not a list of " << m.rank()
                  << " strings or nulls; kept as an attribute)\n";
    }
    const stored_size stored = stored_of(s, "");
    const std::uint64_t raw = raw_bytes_of(m);
    if (zx::is_vlen(m.dtype))
    {
        std::cout << "raw_bytes: unknown (values of variable length)\n";
    }
    else
    {
        std::cout << "raw_bytes: " << raw << " (" << human_size(raw) << ")\n";
    }
    if (stored.known)
    {
        std::cout << "stored_bytes: " << stored.bytes << " (" << human_size(stored.bytes) << ")\n";
        std::cout << "ratio: " << ratio_text(raw, stored.bytes) << "\n";
    }
    else
    {
        std::cout << "stored_bytes: unknown (the store cannot list its chunks)\nratio: -\n";
    }
    std::cout << (a.chain().any_sharding() ? "shards_stored: " : "chunks_stored: ")
              << (stored.known ? std::to_string(stored.objects) : std::string("unknown")) << " of "
              << product(m.grid_shape()) << "\n";
    std::cout << "attributes: " << m.attributes.dump() << "\n";
    return exit_ok;
}

// ------------------------------------------------------------------------------------------ tree

struct tree_totals
{
    std::uint64_t arrays = 0;
    std::uint64_t groups = 0;
    std::uint64_t raw = 0;
    std::uint64_t stored = 0;
    std::uint64_t errors = 0;
};

/// One array as a line: format, dtype, shape, chunking (and shards), codecs, stored size and ratio.
std::string array_line(const store_t& s, const std::string& path, tree_totals& t)
{
    auto a = zx::open_any(s, path);
    const auto& m = a.metadata();
    std::string line = "array v" + std::to_string(m.zarr_format) + "  " + dtype_text(m) + " " + join(m.shape);
    zx::json codecs = zx::json::array();
    for (const auto& c : a.codecs())
    {
        codecs.push_back(c.to_json());
    }
    if (const auto* sh = a.chain().any_sharding())
    {
        const auto cfg = sh->configuration();
        line += "  shards " + grid_text(m) + " of chunks " + join(sh->inner_chunk_shape().to_vector());
        line += "  codecs " + codecs_text(cfg["codecs"]) + " index " + codecs_text(cfg["index_codecs"]) +
                " at " + (sh->index_at_end() ? "end" : "start");
    }
    else
    {
        line += "  chunks " + grid_text(m) + "  codecs " + codecs_text(codecs);
    }
    const stored_size stored = stored_of(s, path);
    const std::uint64_t raw = raw_bytes_of(m);
    line += stored.known ? "  stored " + human_size(stored.bytes) + " of " + human_size(raw) + ", ratio " +
                               ratio_text(raw, stored.bytes)
                         : "  " + human_size(raw) + ", stored size unknown";
    ++t.arrays;
    t.raw += raw;
    t.stored += stored.bytes;
    return line;
}

/// The names under a group that may be nodes, sorted. Unlike group::children() this does not read
/// them: a child whose metadata is broken is shown with its error instead of hiding its siblings.
std::vector<std::string> child_names(const store_t& s, const std::string& path)
{
    std::vector<std::string> out;
    for (const auto& name : s.list_dir(path))
    {
        if (is_metadata_key(name) || zx::filesystem_store::is_internal_name(name))
        {
            continue;
        }
        try
        {
            zx::validate_key(zx::join_key(path, name));
        }
        catch (const zx::store_error&)
        {
            continue; // a name no key can have is not a child
        }
        if (!s.stat(zx::join_key(path, name))) // an object is not a node; a prefix may be one
        {
            out.push_back(name);
        }
    }
    return out;
}

void tree_node(const store_t& s, const std::string& path, const std::string& name, const std::string& prefix,
               const std::string& child_prefix, tree_totals& t)
{
    const auto lv = zx::limit_values::from(zx::default_limits{});
    std::string text;
    std::vector<std::string> children;
    try
    {
        auto node = zx::read_node(s, path, lv);
        if (!node)
        {
            throw zx::array_error(zx::array_errc::node_not_found, "no Zarr array or group here");
        }
        if (node->kind == zx::node_kind::array)
        {
            text = array_line(s, path, t);
        }
        else
        {
            text = "group v" + std::to_string(node->group.zarr_format);
            ++t.groups;
            // Directories without node metadata (not Zarr nodes) are left out, as group::children() does.
            for (auto& c : child_names(s, path))
            {
                const std::string p = zx::join_key(path, c);
                try
                {
                    if (!zx::peek_node_kind(s, p, lv))
                    {
                        continue;
                    }
                }
                catch (const zx::error&)
                {
                    // listed: tree_node shows the error
                }
                children.push_back(std::move(c));
            }
        }
    }
    catch (const zx::error& e)
    {
        text = std::string("ERROR ") + e.what();
        ++t.errors;
    }
    std::cout << prefix << name << "  " << text << "\n";
    for (std::size_t i = 0; i < children.size(); ++i)
    {
        const bool last = i + 1 == children.size();
        tree_node(s, zx::join_key(path, children[i]), children[i], child_prefix + (last ? "└── " : "├── "),
                  child_prefix + (last ? "    " : "│   "), t);
    }
}

int cmd_tree(const std::vector<std::string>& argv)
{
    arguments args(argv, {}, {});
    args.expect_positional(1, "PATH");
    const std::string& path = args.positional()[0];
    store_t s = store_for(path);
    tree_totals t;
    tree_node(s, "", path, "", "", t);
    std::cout << t.arrays << (t.arrays == 1 ? " array, " : " arrays, ") << t.groups
              << (t.groups == 1 ? " group" : " groups") << ", stored " << human_size(t.stored) << " of "
              << human_size(t.raw) << ", ratio " << ratio_text(t.raw, t.stored);
    if (t.errors != 0)
    {
        std::cout << ", " << t.errors << (t.errors == 1 ? " node" : " nodes") << " unreadable";
    }
    std::cout << "\n";
    return t.errors == 0 ? exit_ok : exit_data_error;
}

// ------------------------------------------------------------------------------------------ hash

int cmd_hash(const std::vector<std::string>& argv)
{
    arguments args(argv, {}, {});
    args.expect_positional(1, "PATH");
    store_t s = store_for(args.positional()[0]);
    auto a = zx::open_any(s, "");
    zarrxt_tool::sha256 h;
    const std::size_t width = a.metadata().element_size();
    const std::size_t word = a.metadata().dtype.swap_word();
    const std::uint64_t rows = a.shape().empty() ? 1 : a.chunk_shape()[0];
    for_each_slab(a, rows,
                  [&](std::byte* p, std::uint64_t n)
                  {
                      if (zx::is_string_like(a.dtype()))
                      {
                          // Strings: each value (UTF-8 for <U and string, the bytes without trailing
                          // NULs for |S, the bytes of bytes) after its byte length as a little-endian
                          // uint32 (docs/tool.md).
                          for (std::uint64_t i = 0; i < n; ++i)
                          {
                              const std::string v = string_value(a.dtype(), p + i * width, width);
                              const auto len = static_cast<std::uint32_t>(v.size());
                              const unsigned char le[4] = {static_cast<unsigned char>(len),
                                                           static_cast<unsigned char>(len >> 8),
                                                           static_cast<unsigned char>(len >> 16),
                                                           static_cast<unsigned char>(len >> 24)};
                              h.update(reinterpret_cast<const std::byte*>(le), 4);
                              h.update(reinterpret_cast<const std::byte*>(v.data()), v.size());
                          }
                          return;
                      }
                      if (zx::native_endian != zx::endian::little)
                      {
                          // The convention is little-endian: a record's scalars field by field.
                          if (a.dtype() == zx::dtype_id::structured)
                          {
                              std::vector<zx::swap_run> runs = zx::record_swap_runs(a.metadata().dtype.fields);
                              for (auto& r : runs)
                              {
                                  r.order.reset();
                              }
                              zx::swap_records(p, n, width, runs, zx::endian::little);
                          }
                          else
                          {
                              zx::detail::byteswap_in_place(p, n * width, word);
                          }
                      }
                      h.update(p, static_cast<std::size_t>(n * width));
                  });
    std::cout << zarrxt_tool::sha256::hex(h.finish(), 16) << "\n";
    return exit_ok;
}

// ------------------------------------------------------------------------------------------- cat

int cmd_cat(const std::vector<std::string>& argv)
{
    arguments args(argv, {}, {"--region"});
    args.expect_positional(1, "PATH");
    store_t s = store_for(args.positional()[0]);
    auto a = zx::open_any(s, "");
    const auto& shape = a.shape();
    std::vector<std::uint64_t> off(shape.size(), 0);
    std::vector<std::uint64_t> ext = shape;
    if (const auto region_text = args.value("--region"))
    {
        const std::string need =
            "--region needs START:STOP for each of the " + std::to_string(shape.size()) + " axes";
        std::stringstream ss(*region_text);
        std::string item;
        std::size_t d = 0;
        while (std::getline(ss, item, ','))
        {
            const auto colon = item.find(':');
            if (d >= shape.size() || colon == std::string::npos)
            {
                throw usage_error(need);
            }
            const auto b = parse_list(item.substr(0, colon), "region start");
            const auto e = parse_list(item.substr(colon + 1), "region stop");
            if (b.size() != 1 || e.size() != 1 || e[0] < b[0])
            {
                throw usage_error("invalid region axis: " + item);
            }
            if (e[0] > shape[d])
            {
                throw usage_error("region axis " + std::to_string(d) + " (" + item +
                                  ") ends past the shape " + join(shape));
            }
            off[d] = b[0];
            ext[d] = e[0] - b[0];
            ++d;
        }
        if (d != shape.size())
        {
            throw usage_error(need);
        }
    }
    const std::size_t width = a.metadata().element_size();
    const std::uint64_t count = product(ext);
    zx::buffer b(static_cast<std::size_t>(count * width));
    zx::value_arena arena(a.core()->limits().max_bytes_in_flight);
    a.read_bytes(off, ext, b.data(), nullptr, &arena);
    if (shape.empty())
    {
        std::cout << format_value(a.metadata().dtype, b.data())
                  << "\n";
        return exit_ok;
    }
    const std::uint64_t row = ext.back();
    std::vector<std::uint64_t> idx(shape.size() - 1, 0);
    for (std::uint64_t r = 0; row != 0 && r < count / row; ++r)
    {
        std::string line = "[";
        std::uint64_t rem = r;
        for (std::size_t d = idx.size(); d-- > 0;)
        {
            idx[d] = rem % ext[d] + off[d];
            rem /= ext[d];
        }
        for (std::size_t d = 0; d < idx.size(); ++d)
        {
            line += std::to_string(idx[d]) + ", ";
        }
        line += std::to_string(off.back()) + ":" + std::to_string(off.back() + row) + "]";
        for (std::uint64_t c = 0; c < row; ++c)
        {
            line += ' ';
            line += format_value(a.metadata().dtype, b.data() + (r * row + c) * width);
        }
        std::cout << line << "\n";
    }
    return exit_ok;
}

// --------------------------------------------------------------------------------------- convert

zx::codec_spec parse_codec(const std::string& text)
{
    std::vector<std::string> parts;
    std::stringstream ss(text);
    std::string p;
    while (std::getline(ss, p, ':'))
    {
        parts.push_back(p);
    }
    auto level = [&](std::size_t i, int def)
    {
        if (parts.size() <= i)
        {
            return def;
        }
        const auto v = parse_list(parts[i], "codec level");
        if (v.size() != 1 || v[0] > 22)
        {
            throw usage_error("invalid codec level in \"" + text + "\"");
        }
        return static_cast<int>(v[0]);
    };
    if (parts.empty())
    {
        throw usage_error("empty --codec");
    }
    if (parts[0] == "gzip")
    {
        return zx::codec_spec("gzip", {{"level", level(1, 5)}});
    }
    if (parts[0] == "zlib")
    {
        return zx::codec_spec("numcodecs.zlib", {{"level", level(1, 1)}});
    }
    if (parts[0] == "bz2")
    {
        return zx::codec_spec("numcodecs.bz2", {{"level", level(1, 1)}});
    }
    if (parts[0] == "lzma")
    {
        const zx::json preset = parts.size() > 1 ? zx::json(level(1, 6)) : zx::json(nullptr);
        return zx::codec_spec("numcodecs.lzma",
                              {{"format", 1}, {"check", -1}, {"preset", preset}, {"filters", nullptr}});
    }
    if (parts[0] == "zstd")
    {
        return zx::codec_spec("zstd", {{"level", level(1, 3)}, {"checksum", false}});
    }
    if (parts[0] == "blosc")
    {
        const std::string cname = parts.size() > 1 ? parts[1] : "lz4";
        return zx::codec_spec(
            "blosc", {{"cname", cname}, {"clevel", level(2, 5)}, {"shuffle", "shuffle"}, {"blocksize", 0}});
    }
    throw usage_error("unknown codec \"" + text +
                      "\" (gzip:L, zlib:L, zstd:L, blosc:CNAME:L, bz2:L, lzma:PRESET or none)");
}

/// What `zarrxt convert` was asked for, applied to each array it copies.
struct convert_settings
{
    int format = 0; ///< 0: the source node's format (3 with --shards)
    std::vector<std::uint64_t> chunks;
    std::vector<std::uint64_t> shards;
    std::optional<std::string> codec_text; ///< --codec as given ("none" included)
    std::optional<zx::codec_spec> codec;   ///< --codec parsed (not for "none")
    bool overwrite = false;
};

/// Copy the array `src` to a new array at `dst_node` of `dst_store`, with the same dtype, shape,
/// fill value, attributes and dimension names. Returns its format.
int convert_array(const zx::any_array<store_t>& src, store_t& dst_store, const std::string& dst_node,
                  const convert_settings& cs, bool overwrite, progress& bar)
{
    const auto& m = src.metadata();
    const int format = cs.format != 0 ? cs.format : (cs.shards.empty() ? m.zarr_format : 3);
    std::vector<std::uint64_t> chunks = cs.chunks;
    const std::vector<std::uint64_t>& shards = cs.shards;
    if (chunks.empty())
    {
        chunks = src.chain().any_sharding() ? src.chain().any_sharding()->inner_chunk_shape().to_vector()
                                            : m.chunk_shape;
    }
    if (chunks.size() != m.rank() || (!shards.empty() && shards.size() != m.rank()))
    {
        throw usage_error("--chunks/--shards need " + std::to_string(m.rank()) + " values");
    }
    // The source's array->array filters (numcodecs.delta, numcodecs.packbits, ...) are kept, before
    // the bytes codec; the compressor is as given, else the source's bytes->bytes codecs.
    std::vector<zx::codec_spec> filters;
    std::vector<zx::codec_spec> compressors;
    {
        const auto* sh = src.chain().any_sharding();
        std::vector<zx::codec_spec> specs;
        if (sh != nullptr)
        {
            // configuration() returns a value: it must outlive the loop (a range-for over a member
            // of the temporary read freed memory; ASan found it converting a sharded array).
            const zx::json config = sh->configuration();
            for (const auto& c : config["codecs"])
            {
                specs.emplace_back(c["name"].get<std::string>(),
                                   c.value("configuration", zx::json::object()));
            }
        }
        else
        {
            specs = src.codecs();
        }
        for (const auto& c : specs)
        {
            // The serializer is chosen again for the new array (bytes, or a vlen codec for
            // variable-length data, which create() puts where the bytes codec is).
            if (c.name == "bytes" || c.name == "vlen-utf8" || c.name == "vlen-bytes" ||
                c.name == "transpose" || c.name == "sharding_indexed" || c.name == "crc32c")
            {
                continue;
            }
            if (zx::codec::detail::builtin_codec_kind(c.name) == 0)
            {
                filters.push_back(c);
            }
            else if (!cs.codec_text)
            {
                compressors.push_back(c);
            }
        }
        if (cs.codec)
        {
            compressors.push_back(*cs.codec);
        }
    }
    // A v2 null fill value stays null in v2; v3 has no null and gets the value missing chunks
    // read as (zero, or the netCDF _FillValue NCZarr arrays carry).
    const zx::json fill = zx::fill_value_to_json(m.fill, m.dtype, format == 2 ? m.zarr_format : 3);
    std::shared_ptr<zx::any_array<store_t>::core_type> core;
    if (format == 3)
    {
        zx::v3_options o;
        o.shape = m.shape;
        o.chunk_shape = shards.empty() ? chunks : shards;
        if (m.rectilinear && cs.chunks.empty() && shards.empty() && !src.chain().any_sharding())
        {
            // A rectilinear grid is kept (v3 only: a v2 copy gets the longest edges as its
            // chunks, and a sharded source's copy its inner chunks, as for a regular grid).
            o.chunk_edges = rectilinear_edges(m);
            o.chunk_shape.clear();
        }
        o.codecs = filters;
        o.codecs.push_back(zx::codec_spec("bytes", {{"endian", "little"}}));
        for (const auto& c : compressors)
        {
            o.codecs.push_back(c);
        }
        if (!shards.empty())
        {
            o.codecs = {zx::sharded(chunks, o.codecs)};
        }
        o.fill_value = fill.is_null() ? zx::scalar() : zx::scalar::from_json(fill);
        o.dimension_names = m.dimension_names;
        o.attributes = m.attributes;
        o.overwrite = overwrite;
        if (zx::is_time(m.dtype))
        {
            o.unit = m.dtype.unit;
        }
        if (zx::is_string_like(m.dtype))
        {
            o.string = zx::string_type{m.dtype, m.dtype == zx::dtype_id::fixed_utf32 ? m.dtype.fixed_size / 4
                                                                                     : m.dtype.fixed_size};
        }
        o.fields = m.dtype.fields;
        core = zx::any_array<store_t>::core_type::create(dst_store, dst_node, m.dtype, o, {}, {});
    }
    else
    {
        // v2 keeps byte filters (numcodecs.shuffle) with the array filters, before the compressor.
        while (!compressors.empty() && compressors.front().name == "numcodecs.shuffle")
        {
            filters.push_back(compressors.front());
            compressors.erase(compressors.begin());
        }
        if (compressors.size() > 1)
        {
            throw usage_error("Zarr v2 holds one compressor; pass --codec");
        }
        zx::v2_options o;
        o.shape = m.shape;
        o.filters = filters;
        o.chunks = chunks;
        o.compressor = compressors.empty() ? std::nullopt : std::optional<zx::codec_spec>(compressors[0]);
        o.fill_value = fill.is_null() ? zx::scalar() : zx::scalar::from_json(fill);
        o.null_fill_value = fill.is_null();
        o.dimension_names = m.dimension_names; // written as the _ARRAY_DIMENSIONS attribute
        o.attributes = m.attributes;
        o.overwrite = overwrite;
        if (zx::is_time(m.dtype))
        {
            o.unit = m.dtype.unit;
        }
        if (zx::is_string_like(m.dtype))
        {
            o.string = zx::string_type{m.dtype, m.dtype == zx::dtype_id::fixed_utf32 ? m.dtype.fixed_size / 4
                                                                                     : m.dtype.fixed_size};
        }
        o.fields = m.dtype.fields;
        core = zx::any_array<store_t>::core_type::create(dst_store, dst_node, m.dtype, o, {}, {});
    }
    zx::any_array<store_t> dst(core);
    // Copy in slabs of whole destination chunk rows along axis 0: no read-modify-write.
    const std::uint64_t rows = m.shape.empty() ? 1 : dst.chunk_shape()[0];
    const std::size_t width = m.element_size();
    const std::uint64_t row_elems =
        m.shape.empty() ? 1 : product(m.shape) / std::max<std::uint64_t>(1, m.shape[0]);
    std::uint64_t r0 = 0;
    for_each_slab(src, rows,
                  [&](std::byte* p, std::uint64_t n)
                  {
                      if (m.shape.empty())
                      {
                          dst.write_bytes({}, {}, p);
                      }
                      else
                      {
                          std::vector<std::uint64_t> off(m.rank(), 0);
                          std::vector<std::uint64_t> ext = m.shape;
                          off[0] = r0;
                          ext[0] = n / std::max<std::uint64_t>(1, row_elems);
                          dst.write_bytes(off, ext, p);
                          r0 += ext[0];
                      }
                      bar.advance(n * width);
                  });
    return format;
}

/// A node of the hierarchy `zarrxt convert` copies, opened once: an array or a group.
struct source_node
{
    std::string path;
    std::optional<zx::any_array<store_t>> array;
    std::optional<zx::group<store_t>> group;
};

/// The nodes of the hierarchy at `path` (itself first, then its children depth-first, each
/// group before what is below it), opened.
void collect_nodes(const store_t& s, const std::string& path, std::vector<source_node>& out)
{
    const auto lv = zx::limit_values::from(zx::default_limits{});
    const auto kind = zx::peek_node_kind(s, path, lv);
    if (!kind)
    {
        zx::read_node(s, path, lv); // names the pre-final v3 draft where there is one
        zx::array_error e(zx::array_errc::node_not_found, "no Zarr array or group at \"" + path + "\"");
        e.with_key(path.empty() ? std::string("/") : path);
        throw e;
    }
    if (*kind == zx::node_kind::array)
    {
        out.push_back({path, zx::open_any(s, path), std::nullopt});
        return;
    }
    auto g = zx::group<store_t>::open(s, path, lv);
    const auto children = g.children();
    out.push_back({path, std::nullopt, std::move(g)});
    for (const auto& c : children)
    {
        collect_nodes(s, c.path, out);
    }
}

/// Whether the group at the root of `s` has consolidated metadata (then the copy gets some too).
bool has_consolidated_metadata(const store_t& s)
{
    try
    {
        zx::open_consolidated(s, "", zx::consolidated_mode::always);
        return true;
    }
    catch (const zx::metadata_error& e)
    {
        if (e.code() == static_cast<int>(zx::metadata_errc::no_consolidated_metadata))
        {
            return false;
        }
        throw;
    }
}

int cmd_convert(const std::vector<std::string>& argv)
{
    arguments args(argv, {"--overwrite", "--no-progress"},
                   {"--zarr-format", "--chunks", "--shards", "--codec"});
    args.expect_positional(2, "SRC and DST");
    const std::string src_path = args.positional()[0];
    const std::string dst_path = args.positional()[1];
    convert_settings cs;
    if (const auto v = args.value("--zarr-format"))
    {
        if (*v != "2" && *v != "3")
        {
            throw usage_error("--zarr-format must be 2 or 3");
        }
        cs.format = (*v)[0] - '0';
    }
    if (const auto v = args.value("--chunks"))
    {
        cs.chunks = parse_list(*v, "--chunks");
    }
    if (const auto v = args.value("--shards"))
    {
        cs.shards = parse_list(*v, "--shards");
    }
    cs.codec_text = args.value("--codec");
    if (cs.codec_text && *cs.codec_text != "none")
    {
        cs.codec = parse_codec(*cs.codec_text); // usage errors before any data is touched
    }
    if (!cs.shards.empty() && cs.format == 2)
    {
        throw usage_error("--shards needs Zarr format 3");
    }
    cs.overwrite = args.flag("--overwrite");
    store_t src_store = store_for(src_path);
    std::vector<source_node> nodes;
    collect_nodes(src_store, "", nodes);
    const bool hierarchy = nodes.front().group.has_value();
    if (hierarchy && (!cs.chunks.empty() || !cs.shards.empty()))
    {
        throw usage_error(
            "--chunks and --shards take one array; SRC is a group (its arrays keep their chunks)");
    }
    std::uint64_t total = 0;
    std::size_t arrays = 0;
    for (const auto& n : nodes)
    {
        if (n.array)
        {
            total += raw_bytes_of(n.array->metadata());
            ++arrays;
        }
    }
    store_t dst_store = output_store_for(dst_path, cs.overwrite);
    progress bar(!args.flag("--no-progress") && progress::stderr_is_terminal(), "convert", total);
    const int src_format = nodes.front().array ? nodes.front().array->metadata().zarr_format
                                               : nodes.front().group->zarr_format();
    int dst_format = 0;
    for (const auto& n : nodes)
    {
        // Only the root may replace what is at DST: below it, everything is new.
        const bool overwrite = cs.overwrite && n.path.empty();
        int format = 0;
        if (n.array)
        {
            format = convert_array(*n.array, dst_store, n.path, cs, overwrite, bar);
        }
        else
        {
            zx::group_options o;
            o.zarr_format = cs.format != 0 ? cs.format : n.group->zarr_format();
            o.attributes = n.group->attributes();
            o.overwrite = overwrite;
            zx::group<store_t>::create(dst_store, n.path, o);
            format = o.zarr_format;
        }
        if (n.path.empty())
        {
            dst_format = format;
        }
    }
    bar.finish();
    if (hierarchy && has_consolidated_metadata(src_store))
    {
        zx::consolidate(dst_store, "");
    }
    if (pending_zip)
    {
        pending_zip->commit();
        pending_zip.reset();
    }
    std::cout << "converted " << src_path << " (v" << src_format;
    if (hierarchy)
    {
        std::cout << " group, " << arrays << " array" << (arrays == 1 ? "" : "s") << ", "
                  << nodes.size() - arrays << " group" << (nodes.size() - arrays == 1 ? "" : "s");
    }
    std::cout << ") to " << dst_path << " (v" << dst_format << ")\n";
    return exit_ok;
}

// ---------------------------------------------------------------------------------------- verify

struct verify_state
{
    std::uint64_t arrays = 0;
    std::uint64_t chunks = 0;
    std::uint64_t problems = 0;
    progress* bar = nullptr;
};

void report_problem(const std::string& where, const std::string& what, verify_state& t)
{
    if (t.bar != nullptr)
    {
        t.bar->clear();
    }
    std::cout << "PROBLEM " << where << ": " << what << "\n" << std::flush;
    ++t.problems;
}

std::string where_of(const std::string& path)
{
    return path.empty() ? std::string("/") : path;
}

/// Every array under `path` that opens; each node that does not is reported as a problem.
void collect_arrays(const store_t& s, const std::string& path,
                    std::vector<std::pair<std::string, zx::any_array<store_t>>>& out, verify_state& t)
{
    const auto lv = zx::limit_values::from(zx::default_limits{});
    try
    {
        const auto kind = zx::peek_node_kind(s, path, lv);
        if (!kind)
        {
            zx::read_node(s, path, lv); // refuses the pre-final draft with a clear error
            report_problem(where_of(path), "no Zarr array or group here", t);
            return;
        }
        if (*kind == zx::node_kind::array)
        {
            ++t.arrays;
            out.emplace_back(path, zx::open_any(s, path));
            return;
        }
        auto g = zx::group<store_t>::open(s, path, lv);
        for (const auto& c : g.children())
        {
            collect_arrays(s, c.path, out, t);
        }
    }
    catch (const zx::error& e)
    {
        report_problem(where_of(path), e.what(), t);
    }
}

void verify_array(const std::string& path, const zx::any_array<store_t>& a, verify_state& t)
{
    const auto& m = a.metadata();
    const auto grid = m.grid_shape();
    const std::uint64_t total = product(grid);
    const std::size_t width = m.element_size();
    zx::buffer b;
    // One chunk (or shard) at a time: memory stays at one decoded chunk.
    for (std::uint64_t i = 0; i < total; ++i)
    {
        std::vector<std::uint64_t> off(m.rank()), ext(m.rank());
        std::uint64_t rem = i;
        std::uint64_t elems = 1;
        for (std::size_t d = m.rank(); d-- > 0;)
        {
            const std::uint64_t c = rem % grid[d];
            rem /= grid[d];
            off[d] = m.chunk_start(d, c);
            ext[d] = std::min(m.chunk_edge(d, c), m.shape[d] - off[d]);
            elems *= ext[d];
        }
        b.resize_discard(static_cast<std::size_t>(elems * width));
        zx::problem_list problems;
        try
        {
            zx::value_arena arena(a.core()->limits().max_bytes_in_flight);
            a.read_bytes(off, ext, b.data(), &problems, &arena);
        }
        catch (const zx::error& e)
        {
            report_problem(where_of(path), e.what(), t);
        }
        for (const auto& p : problems.take())
        {
            std::string where = p.key;
            if (p.range)
            {
                where += " bytes " + std::to_string(p.range->offset) + ".." +
                         std::to_string(p.range->offset + p.range->length);
            }
            report_problem(where, p.message, t);
        }
        ++t.chunks;
        if (t.bar != nullptr)
        {
            t.bar->advance(elems * width);
        }
    }
}

int cmd_verify(const std::vector<std::string>& argv)
{
    arguments args(argv, {"--clean", "--no-progress"}, {});
    args.expect_positional(1, "PATH");
    const std::string& path = args.positional()[0];
    const bool clean = args.flag("--clean");
    store_t s = store_for(path);
    verify_state t;
    std::vector<std::pair<std::string, zx::any_array<store_t>>> arrays;
    collect_arrays(s, "", arrays, t);
    std::uint64_t total = 0;
    for (const auto& [p, a] : arrays)
    {
        total += raw_bytes_of(a.metadata());
    }
    {
        progress bar(!args.flag("--no-progress") && progress::stderr_is_terminal(), "verify", total);
        t.bar = &bar;
        for (const auto& [p, a] : arrays)
        {
            bar.set_label("verify " + where_of(p));
            verify_array(p, a, t);
        }
        bar.finish();
        t.bar = nullptr;
    }
    // Temporary files of interrupted writers are never read as data; report (and remove) them.
    std::uint64_t temps = 0;
    std::vector<fs::path> found;
    for (auto it = zx::is_remote_url(path) || zx::split_zip_url(path) ? fs::recursive_directory_iterator()
                                           : fs::recursive_directory_iterator(path);
         it != fs::recursive_directory_iterator(); ++it)
    {
        // Remote stores have no temporary objects (a PUT is atomic; http is read-only), nor has a
        // zip archive (published whole).
        if (it->is_regular_file() && zx::filesystem_store::is_temp_name(it->path().filename().string()))
        {
            found.push_back(it->path());
        }
    }
    for (const auto& f : found)
    {
        ++temps;
        if (clean)
        {
            fs::remove(f);
        }
        else
        {
            std::cout << "note: leftover temporary file " << fs::relative(f, path).generic_string()
                      << " (ignored by readers; --clean removes it)\n";
        }
    }
    std::cout << t.arrays << " arrays, " << t.chunks << " chunks checked, " << t.problems << " problems";
    if (temps != 0)
    {
        std::cout << ", " << temps << " temporary files" << (clean ? " removed" : "");
    }
    std::cout << "\n";
    return t.problems == 0 ? exit_ok : exit_data_error;
}

// ----------------------------------------------------------------------------------- consolidate

/// The metadata member of a consolidated document (v2 .zmetadata or a v3 group's zarr.json), or
/// null when the document has none; v3 entries without their own consolidated_metadata member,
/// which zarr-python 3 gives child groups and zarrxt leaves out (the same hierarchy either way).
zx::json consolidated_entries(const zx::json& doc)
{
    if (doc.contains("zarr_consolidated_format"))
    {
        return doc.value("metadata", zx::json());
    }
    const auto cm = doc.find("consolidated_metadata");
    if (cm == doc.end() || !cm->is_object() || !cm->contains("metadata") || !(*cm)["metadata"].is_object())
    {
        return nullptr;
    }
    zx::json out = (*cm)["metadata"];
    for (auto& [k, v] : out.items())
    {
        if (v.is_object())
        {
            v.erase("consolidated_metadata");
        }
    }
    return out;
}

int cmd_consolidate(const std::vector<std::string>& argv)
{
    arguments args(argv, {"--check"}, {});
    args.expect_positional(1, "PATH");
    const std::string& path = args.positional()[0];
    const std::string scheme = zx::store_scheme(path);
    if (scheme == "http" || scheme == "https")
    {
        throw usage_error(
            "consolidate works on a directory or an s3:// URL (an HTTP server is read-only and cannot "
            "be listed: consolidate the hierarchy before publishing it)");
    }
    store_t s = store_for(path);
    const auto lv = zx::limit_values::from(zx::default_limits{});
    const zx::json want = zx::consolidated_document(s, "", lv);
    const bool v2 = want.contains("zarr_consolidated_format");
    const std::string key = v2 ? ".zmetadata" : "zarr.json";
    const zx::json want_entries = consolidated_entries(want);
    if (!args.flag("--check"))
    {
        const std::size_t nodes = zx::consolidate(s, "", lv);
        std::cout << "wrote " << (v2 ? ".zmetadata" : "consolidated_metadata in zarr.json") << ": " << nodes
                  << (nodes == 1 ? " node, " : " nodes, ") << want_entries.size() << " documents\n";
        return exit_ok;
    }
    const zx::json have_entries = [&]
    {
        auto bytes = zx::get(s, key);
        return bytes ? consolidated_entries(zx::parse_document(bytes->view(), lv, key)) : zx::json();
    }();
    if (have_entries.is_null())
    {
        std::cout << "no consolidated metadata ("
                  << (v2 ? ".zmetadata" : "consolidated_metadata in zarr.json") << ")\n";
        return exit_data_error;
    }
    // Which documents differ: compared as JSON values, whatever the spacing or member order.
    std::size_t stale = 0;
    for (const auto& [k, v] : want_entries.items())
    {
        const auto it = have_entries.find(k);
        if (it == have_entries.end() || *it != v)
        {
            std::cout << "STALE " << k << ": " << (it == have_entries.end() ? "missing from" : "differs in")
                      << " the consolidated metadata\n";
            ++stale;
        }
    }
    for (const auto& [k, v] : have_entries.items())
    {
        if (!want_entries.contains(k))
        {
            std::cout << "STALE " << k << ": in the consolidated metadata, no longer in the hierarchy\n";
            ++stale;
        }
    }
    std::cout << want_entries.size() << " documents, " << stale << " stale\n";
    return stale == 0 ? exit_ok : exit_data_error;
}

// ------------------------------------------------------------------------------------------ help

int cmd_help(const std::vector<std::string>& argv);

const command commands[] = {
    {"info", "PATH", "the metadata of an array or group",
     R"(Prints the node's metadata as "key: value" lines. For an array: format, dtype, shape, chunks (or
shards and inner chunks, with the shard index's place, size and codecs), the codec chain as JSON,
fill value, chunk key encoding, dimension names, raw and stored size (chunks and shards only,
metadata excluded; exact bytes and human-readable), the compression ratio (raw / stored), how many
chunks or shards are stored, and the attributes. For a group: format, attributes and children.
)",
     cmd_info},
    {"tree", "PATH", "the hierarchy, with shape, dtype, chunks, codecs and stored size per array",
     R"(Prints the group (or array) at PATH and everything below it as a tree, one line per node. An
array's line gives its format, dtype and shape, its chunks (or "shards [...] of chunks [...]"), its
codecs (for a sharded array the inner codecs and the shard index's codecs and place), and
"stored S of R, ratio X": S the bytes of its chunks or shards (metadata excluded), R the size of all
its elements decoded, X = R / S ("-" when nothing is stored). A last line sums them up. A node that
cannot be read is shown with its error and makes the exit status 1.
)",
     cmd_tree},
    {"hash", "PATH", "SHA-256 of the array's elements",
     R"(Prints the first 16 hex digits of the SHA-256 of every element of the array in C order,
little-endian, fill values included: the same for the same values whatever the format, chunking,
sharding or codecs (compare two arrays after a convert). Bytes are read one row of chunks at a time.
)",
     cmd_hash},
    {"cat", "PATH [--region START:STOP,...]", "print elements",
     R"(Prints the elements of an array, one line per row of the last axis, each line starting with its
index ("[2, 5:9] ..."). --region takes START:STOP (STOP excluded) for every axis, e.g.
--region 0:10,5:7; without it the whole array is printed.
)",
     cmd_cat},
    {"convert",
     "SRC DST [--zarr-format 2|3] [--chunks N,...] [--shards N,...] [--codec C] [--overwrite] "
     "[--no-progress]",
     "copy an array into another format, chunking, sharding or codec",
     R"(Writes the array SRC as a new array DST, keeping dtype, shape, fill value, attributes and (v3)
dimension names (v2 _ARRAY_DIMENSIONS <-> v3 dimension_names), array filters, and every value.
  --zarr-format 2|3   the format of DST (default: SRC's, or 3 with --shards)
  --chunks N,...      chunk shape (inner chunk shape with --shards; default: SRC's chunks)
  --shards N,...      shard shape: DST is sharded (Zarr v3), each shard holding whole chunks
  --codec C           gzip:LEVEL, zlib:LEVEL, zstd:LEVEL, blosc:CNAME:LEVEL, bz2:LEVEL,
                      lzma:PRESET or none
                      (default: SRC's compressor)
  --overwrite         replace an existing array at DST (otherwise that is error zarrxt.array.6)
  --no-progress       no progress bar
On a terminal a progress bar on stderr shows the bytes copied, the rate and the time left.
Memory: one row of DST's chunks (or shards) at a time.
)",
     cmd_convert},
    {"verify", "PATH [--clean] [--no-progress]", "decode every chunk and shard index; report each problem",
     R"(Opens every array of the hierarchy at PATH and decodes every chunk (every inner chunk and shard
index of a sharded array), one chunk at a time. Each problem is printed on stdout as
"PROBLEM <key> [bytes A..B]: <error>" and reading goes on; a last line counts arrays, chunks and
problems. Temporary files left by interrupted writers are reported (they are never read as data);
--clean removes them. On a terminal a progress bar on stderr shows the bytes decoded, the rate and the
time left (--no-progress turns it off). Exit status 1 when any problem was found.
)",
     cmd_verify},
    {"consolidate", "PATH [--check]", "write the hierarchy's consolidated metadata, or check it is current",
     R"(Writes the consolidated metadata of the group at PATH and every node below it, read from the
nodes' own metadata: for a v2 group .zmetadata (zarr-python 2's layout), for a v3 group the
consolidated_metadata member of its zarr.json (zarr-python 3's, kind "inline"). Readers that use it
(zarrxt's open_consolidated, zarr-python, zarrita) open the whole hierarchy with one read, and can
list it where the store cannot (HTTP). It is a snapshot: a later change of any node's metadata, by
zarrxt or anyone, is not in it until consolidate runs again.
  --check   write nothing; print "STALE <key>: ..." for each document that differs from the nodes'
            own, and exit with status 1 when one does or there is no consolidated metadata
)",
     cmd_consolidate},
    {"help", "[COMMAND]", "this overview, or a command's page", "Prints the overview, or COMMAND's page.\n",
     cmd_help},
};

const command* find_command(const std::string& name)
{
    for (const auto& c : commands)
    {
        if (name == c.name)
        {
            return &c;
        }
    }
    return nullptr;
}

void print_overview(std::ostream& out)
{
    out << "usage: zarrxt COMMAND ARGS...   (zarrxt help COMMAND, or zarrxt COMMAND --help, for its page)\n\n"
           "commands:\n";
    for (const auto& c : commands)
    {
        out << "  " << c.name << std::string(13 - std::strlen(c.name), ' ') << c.summary << "\n";
    }
    out << "\nPATH is the directory of a Zarr array or group (v2 or v3), or its URL: file:///..., "
           "http(s)://...\n"
           "(read-only; groups list through consolidated metadata) or s3://bucket/prefix (credentials, "
           "region and\n"
           "endpoint from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, "
           "AWS_ENDPOINT_URL).\n"
           "reference::REFS reads the hierarchy a kerchunk reference file REFS (a path or URL) describes "
           "(read-only).\n\n"
        << exit_status_text;
}

void print_command_help(const command& c, std::ostream& out)
{
    out << "usage: zarrxt " << c.name << " " << c.synopsis << "\n\n"
        << c.summary << ".\n\n"
        << c.details << "\n"
        << exit_status_text;
}

int cmd_help(const std::vector<std::string>& argv)
{
    arguments args(argv, {}, {});
    if (args.positional().empty())
    {
        print_overview(std::cout);
        return exit_ok;
    }
    args.expect_positional(1, "COMMAND");
    const command* c = find_command(args.positional()[0]);
    if (c == nullptr)
    {
        throw usage_error("no command \"" + args.positional()[0] + "\"");
    }
    print_command_help(*c, std::cout);
    return exit_ok;
}

} // namespace

int main(int argc, char** argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);
    const command* cmd = nullptr;
    try
    {
        if (args.empty())
        {
            std::cerr << "zarrxt: no command given\n";
            print_overview(std::cerr);
            return exit_usage;
        }
        if (args[0] == "--help" || args[0] == "-h")
        {
            print_overview(std::cout);
            return exit_ok;
        }
        if (args[0] == "--version")
        {
            std::cout << "zarrxt " << ZARRXT_VERSION_STRING << "\n";
            return exit_ok;
        }
        cmd = find_command(args[0]);
        if (cmd == nullptr)
        {
            throw usage_error("unknown command \"" + args[0] + "\"");
        }
        std::vector<std::string> rest(args.begin() + 1, args.end());
        if (std::find(rest.begin(), rest.end(), "--help") != rest.end() ||
            std::find(rest.begin(), rest.end(), "-h") != rest.end())
        {
            print_command_help(*cmd, std::cout);
            return exit_ok;
        }
        return cmd->run(rest);
    }
    catch (const usage_error& e)
    {
        std::cerr << "zarrxt: " << e.what() << "\n";
        if (cmd != nullptr && std::strcmp(cmd->name, "help") != 0)
        {
            std::cerr << "usage: zarrxt " << cmd->name << " " << cmd->synopsis << "   (zarrxt help "
                      << cmd->name << ")\n";
        }
        else
        {
            std::cerr << "run `zarrxt help` for the commands\n";
        }
        return exit_usage;
    }
    catch (const zx::error& e)
    {
        std::cerr << "zarrxt: error: " << e.what() << "\n";
        return exit_data_error;
    }
    catch (const std::exception& e)
    {
        std::cerr << "zarrxt: error: " << e.what() << "\n";
        return exit_data_error;
    }
}
