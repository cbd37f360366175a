/** @file mpi.hpp
 *  Many MPI processes writing and reading one Zarr array: collective create and open, a
 *  decomposition of the stored-object grid over a communicator, collective writes (with owner
 *  routing for writes that are not aligned to stored objects), collective reads, and
 *  consolidated metadata as a final step.
 *
 *  Optional: this is the only zarrxt header that includes <mpi.h>, and nothing else includes it.
 *  It uses only zarrxt's public API (create, open, read_raw, write, write_raw, shape,
 *  chunk_shape, codecs, groups and the store interface), so it works with any array policies.
 *
 *  The rules every function here keeps:
 *  - No two ranks ever write one stored object (a chunk, or a shard when the array is sharded)
 *    in one call. A piece of a region that shares an object with another rank's region is sent
 *    to the object's single owner rank, which assembles the object's new content and writes it
 *    once. No file locks are taken: they are unreliable on parallel file systems and absent on
 *    object stores.
 *  - Every collective function is called by every rank of the communicator, in the same order.
 *  - Every collective step ends with an agreement on errors: if any rank failed, every rank
 *    throws `collective_error` carrying the id, message and context of the lowest failing rank's
 *    error. No rank is left waiting in a collective because another one threw. Ranks that make
 *    different collective calls (another operation or another array) all throw `mpi.2`.
 *
 *  Errors of the MPI library itself keep MPI's error handler (by default MPI_ERRORS_ARE_FATAL:
 *  the job is aborted, which also hangs nobody).
 */
#pragma once

#include "array.hpp"
#include "codec/codec_registry.hpp"
#include "consolidated.hpp"
#include "detail/odometer.hpp"
#include "error.hpp"
#include "group.hpp"
#include "region.hpp"
#include "store/concepts.hpp"
#include "store/key.hpp"

// The deprecated MPI C++ bindings are not used; leaving them out saves compile time and warnings.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zarrxt
{

/// Errors only the MPI layer raises (category "mpi"; docs/errors.md).
enum class mpi_errc : int
{
    rank_failed = 1,       ///< a rank failed with an exception that is not a zarrxt::error
    inconsistent_call = 2, ///< the ranks did not make the same collective call on the same array
};

namespace mpi
{

/*********************
 * collective errors *
 *********************/

/// What every rank throws when any rank failed in a collective step. Its id, stage, key and byte
/// range are the failing rank's (the lowest one when several failed); the message starts with
/// "on rank R of P: ". A failure that was not a zarrxt::error has id zarrxt.mpi.1.
class collective_error : public error
{
public:
    collective_error(int origin_rank, int failed_ranks, std::string_view category, int code,
                     std::string message, std::string_view stage = {})
        : error(category, code, std::move(message), stage)
        , m_origin_rank(origin_rank)
        , m_failed_ranks(failed_ranks)
    {
    }

    /// The rank whose error this is (the lowest failing rank).
    int origin_rank() const noexcept { return m_origin_rank; }
    /// How many ranks failed in the step.
    int failed_ranks() const noexcept { return m_failed_ranks; }

private:
    int m_origin_rank;
    int m_failed_ranks;
};

/// Run `f` on every rank, then agree on errors (see collective_error). Returns what f returns.
template <class F>
auto collective(MPI_Comm comm, F&& f) -> decltype(f());

/// The error agreement step on its own: every rank passes what it caught (or nothing); if any
/// rank passes an exception, every rank throws the same collective_error. `fingerprint` must be
/// equal on all ranks (it names the operation and the array); otherwise every rank throws mpi.2.
void agree(MPI_Comm comm, std::exception_ptr local, std::uint64_t fingerprint = 0);

/*****************
 * decomposition *
 *****************/

/// Contiguous blocks of stored objects on a process grid (one region per rank, or none when
/// there are more ranks than objects along an axis). `process_grid` empty: chosen by
/// process_grid(); otherwise its product must equal the communicator size.
struct block
{
    std::vector<int> process_grid{};
};

/// Slabs of `block` stored objects along `axis`, dealt to the ranks in turn (rank r gets slabs
/// r, r + P, r + 2P, ...), each spanning the whole array on the other axes.
struct block_cyclic
{
    std::size_t axis = 0;
    std::uint64_t block = 1;
};

/// Factor `size` ranks over an object grid: every prime factor, largest first, goes to the axis
/// with the most objects per rank so far (the outermost on ties), so slabs along the outer axes
/// (contiguous in C order) are preferred and no axis gets more ranks than objects when avoidable.
std::vector<int> process_grid(int size, std::span<const std::uint64_t> object_grid);

/// This rank's regions of an array of `shape` stored in objects of `object_shape` (the chunk
/// shape, which is the shard shape of a sharded array). Every region is a union of whole
/// objects, clipped to the array: no two ranks' regions share an object.
template <std::size_t N>
std::vector<region<N>> decompose(const std::array<std::uint64_t, N>& shape,
                                 const std::array<std::uint64_t, N>& object_shape, int rank, int size,
                                 const block& layout = {});
template <std::size_t N>
std::vector<region<N>> decompose(const std::array<std::uint64_t, N>& shape,
                                 const std::array<std::uint64_t, N>& object_shape, int rank, int size,
                                 const block_cyclic& layout);
/// The same for an open array, over a communicator.
template <class Array, class Layout = block>
std::vector<region<Array::rank>> decompose(MPI_Comm comm, const Array& a, const Layout& layout = {});

/// The shape of the chunks inside the array's stored objects: the sharding codec's inner chunk
/// shape (read from codecs()), or the chunk shape when the array is not sharded.
template <class Array>
std::array<std::uint64_t, Array::rank> inner_chunk_shape(const Array& a);

/************************
 * create, write, read  *
 ************************/

/// Collective create: rank 0 creates the array (writes its metadata), the others wait, then every
/// rank opens it. Template arguments after T and N are the array policies, as for zarrxt::create.
/// `registry` holds the user codecs and data types the array's metadata may name
/// (codec/codec_registry.hpp); every rank must pass one that knows them, as every rank decodes.
template <class T, std::size_t N, class... Policies, class Store, class Options>
auto create(MPI_Comm comm, Store& store, std::string_view path, const Options& options,
            const codec_registry& registry = codec_registry{})
    -> decltype(zarrxt::create<T, N, Policies...>(store, path, options));

/// Collective open: every rank opens the array; an error on one rank reaches all.
template <class T, std::size_t N, class... Policies, class Store>
auto open(MPI_Comm comm, const Store& store, std::string_view path,
          const codec_registry& registry = codec_registry{})
    -> decltype(zarrxt::open<T, N, Policies...>(store, path));

/// One region of a collective write and its values, C order, `where.elements()` of them.
template <class T, std::size_t N>
struct piece
{
    region<N> where;
    const T* data = nullptr;
};

/// Collective write of each rank's pieces. Pieces may have any shape and may overlap other ranks'
/// pieces; where they overlap, the later piece in (rank, piece index) order wins. Objects touched
/// by one rank only are written by that rank; an object touched by several ranks is assembled
/// and written by one owner (the rank with the largest part of it, the lowest on ties), which
/// reads the object's old values first when the pieces do not cover what it rewrites.
template <class Array>
void write_pieces(MPI_Comm comm, Array& a,
                  std::span<const piece<typename Array::value_type, Array::rank>> pieces);

/// Collective write of one region per rank (an empty region when a rank has nothing to write).
template <class Array>
void write_raw(MPI_Comm comm, Array& a, const typename Array::region_type& r,
               const typename Array::value_type* data);

/// Collective write of an xtensor expression per rank. When no other rank touches this rank's
/// objects the expression is written straight through Array::write (no copy).
template <class Array, class E>
void write(MPI_Comm comm, Array& a, const typename Array::region_type& r, const xt::xexpression<E>& value);

/// Collective reads: every rank reads its own region (any regions, overlapping or not: reads
/// need no coordination), then the ranks agree on errors.
template <class Array>
typename Array::tensor_type read(MPI_Comm comm, const Array& a, const typename Array::region_type& r);
template <class Array, class E>
void read_into(MPI_Comm comm, const Array& a, const typename Array::region_type& r, E&& dest);
template <class Array>
void read_raw(MPI_Comm comm, const Array& a, const typename Array::region_type& r,
              typename Array::value_type* out);

/// The optional final step: wait for every rank, then rank 0 writes consolidated metadata for
/// the group at `group_path` and everything below it (v2: `.zmetadata` as zarr-python 2 writes
/// it; v3: the root zarr.json's `consolidated_metadata` member, kind "inline", as zarr-python 3
/// and zarrita read it), with zarrxt::consolidate (consolidated.hpp). zarrxt reads it through
/// open_consolidated; plain opens read nodes from their own metadata.
template <class Store>
void consolidate_metadata(MPI_Comm comm, Store& store, std::string_view group_path = "");

/******************
 * implementation *
 ******************/

namespace detail
{

inline int comm_rank(MPI_Comm comm)
{
    int r = 0;
    MPI_Comm_rank(comm, &r);
    return r;
}

inline int comm_size(MPI_Comm comm)
{
    int s = 1;
    MPI_Comm_size(comm, &s);
    return s;
}

/// FNV-1a, to fingerprint a collective call (operation + array) cheaply and identically on every rank.
class fingerprint
{
public:
    fingerprint& add(std::string_view s)
    {
        for (unsigned char c : s)
        {
            m_h = (m_h ^ c) * 0x100000001b3ull;
        }
        return add_word(s.size());
    }
    fingerprint& add_word(std::uint64_t v)
    {
        for (int i = 0; i < 8; ++i)
        {
            m_h = (m_h ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ull;
        }
        return *this;
    }
    std::uint64_t value() const noexcept { return m_h; }

private:
    std::uint64_t m_h = 0xcbf29ce484222325ull;
};

/// The decomposition and the owner of each stored object assume a regular grid; on a rectilinear
/// one (metadata/rectilinear.hpp) they would put two writers on one object, so it is refused.
template <class Array>
void require_regular_grid(const Array& a)
{
    if (a.core()->metadata().rectilinear)
    {
        array_error e(array_errc::invalid_argument,
                      "zarrxt::mpi needs a regular chunk grid; this array's grid is rectilinear");
        e.with_key(a.path().empty() ? std::string("/") : a.path());
        throw e;
    }
}

template <class Array>
std::uint64_t array_fingerprint(std::string_view op, const Array& a)
{
    fingerprint f;
    f.add(op).add(a.path()).add_word(Array::rank).add_word(static_cast<std::uint64_t>(Array::dtype));
    for (auto s : a.shape())
    {
        f.add_word(s);
    }
    for (auto c : a.chunk_shape())
    {
        f.add_word(c);
    }
    return f.value();
}

/// An error as bytes, to broadcast it: fields with 8-byte length prefixes.
struct wire_error
{
    std::string category = "mpi";
    int code = static_cast<int>(mpi_errc::rank_failed);
    std::string message;
    std::string key;
    std::string stage;
    bool has_range = false;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    int origin = -1; ///< already agreed (a collective_error): its origin rank and failure count
    int failed = 0;

    static wire_error from(std::exception_ptr p)
    {
        wire_error w;
        try
        {
            std::rethrow_exception(p);
        }
        catch (const collective_error& e)
        {
            // Already agreed once (a collective call nested in `collective`): keep it as it is.
            w.take(e);
            w.origin = e.origin_rank();
            w.failed = e.failed_ranks();
        }
        catch (const error& e)
        {
            w.take(e);
        }
        catch (const std::exception& e)
        {
            w.message = e.what();
        }
        catch (...)
        {
            w.message = "an exception that is not a std::exception";
        }
        return w;
    }

    void take(const error& e)
    {
        category = e.category();
        code = e.code();
        message = e.message();
        key = e.key();
        stage = e.stage();
        if (e.range())
        {
            has_range = true;
            offset = e.range()->offset;
            length = e.range()->length;
        }
    }

    std::string encode() const
    {
        std::string out;
        auto put_word = [&](std::uint64_t v)
        {
            for (int i = 0; i < 8; ++i)
            {
                out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
            }
        };
        auto put = [&](const std::string& s)
        {
            put_word(s.size());
            out += s;
        };
        put(category);
        put_word(static_cast<std::uint64_t>(static_cast<std::int64_t>(code)));
        put(message);
        put(key);
        put(stage);
        put_word(has_range ? 1 : 0);
        put_word(offset);
        put_word(length);
        put_word(static_cast<std::uint64_t>(static_cast<std::int64_t>(origin)));
        put_word(static_cast<std::uint64_t>(failed));
        return out;
    }

    static wire_error decode(const std::string& in)
    {
        wire_error w;
        std::size_t at = 0;
        auto word = [&]()
        {
            std::uint64_t v = 0;
            for (int i = 0; i < 8 && at < in.size(); ++i, ++at)
            {
                v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[at])) << (8 * i);
            }
            return v;
        };
        auto str = [&]()
        {
            const std::uint64_t n = std::min<std::uint64_t>(word(), in.size() - at);
            std::string s = in.substr(at, n);
            at += n;
            return s;
        };
        w.category = str();
        w.code = static_cast<int>(static_cast<std::int64_t>(word()));
        w.message = str();
        w.key = str();
        w.stage = str();
        w.has_range = word() != 0;
        w.offset = word();
        w.length = word();
        w.origin = static_cast<int>(static_cast<std::int64_t>(word()));
        w.failed = static_cast<int>(word());
        return w;
    }
};

} // namespace detail

inline void agree(MPI_Comm comm, std::exception_ptr local, std::uint64_t fingerprint)
{
    const int rank = detail::comm_rank(comm);
    const int size = detail::comm_size(comm);
    // One allreduce answers both questions: max(fp) and max(~fp) give the largest and smallest
    // fingerprint; size - max(size - r) is the lowest failing rank.
    std::uint64_t v[3] = {fingerprint, ~fingerprint,
                          local ? static_cast<std::uint64_t>(size - rank) : std::uint64_t{0}};
    std::uint64_t m[3] = {0, 0, 0};
    MPI_Allreduce(v, m, 3, MPI_UINT64_T, MPI_MAX, comm);
    const bool consistent = m[0] == ~m[1];
    if (m[2] != 0)
    {
        const int origin = size - static_cast<int>(m[2]);
        int failed = local ? 1 : 0;
        int failed_total = 0;
        MPI_Allreduce(&failed, &failed_total, 1, MPI_INT, MPI_SUM, comm);
        std::string bytes;
        if (rank == origin)
        {
            bytes = detail::wire_error::from(local).encode();
        }
        std::uint64_t n = bytes.size();
        MPI_Bcast(&n, 1, MPI_UINT64_T, origin, comm);
        bytes.resize(static_cast<std::size_t>(n));
        MPI_Bcast(bytes.data(), static_cast<int>(n), MPI_CHAR, origin, comm);
        const auto w = detail::wire_error::decode(bytes);
        std::string message = w.message;
        int from = w.origin, count = w.failed;
        if (from < 0) // a fresh failure; otherwise an agreed one passing through again, kept as it was
        {
            from = origin;
            count = failed_total;
            std::string where = "on rank " + std::to_string(origin) + " of " + std::to_string(size);
            if (failed_total > 1)
            {
                where += " (and " + std::to_string(failed_total - 1) + " other rank" +
                         (failed_total > 2 ? "s" : "") + ")";
            }
            message = where + ": " + message;
        }
        collective_error e(from, count, w.category, w.code, std::move(message), w.stage);
        e.with_key(w.key);
        if (w.has_range)
        {
            e.with_range(w.offset, w.length);
        }
        throw e;
    }
    if (!consistent)
    {
        throw collective_error(0, size, "mpi", static_cast<int>(mpi_errc::inconsistent_call),
                               "the ranks of the communicator made different collective calls (another "
                               "operation, or the same one on another array)");
    }
}

template <class F>
auto collective(MPI_Comm comm, F&& f) -> decltype(f())
{
    static const std::uint64_t fp = detail::fingerprint().add("collective").value();
    using R = decltype(f());
    std::exception_ptr failure;
    if constexpr (std::is_void_v<R>)
    {
        try
        {
            f();
        }
        catch (...)
        {
            failure = std::current_exception();
        }
        agree(comm, failure, fp);
    }
    else
    {
        std::optional<R> result;
        try
        {
            result.emplace(f());
        }
        catch (...)
        {
            failure = std::current_exception();
        }
        agree(comm, failure, fp);
        return std::move(*result);
    }
}

/*****************
 * decomposition *
 *****************/

inline std::vector<int> process_grid(int size, std::span<const std::uint64_t> object_grid)
{
    std::vector<int> dims(object_grid.size(), 1);
    if (dims.empty() || size <= 1)
    {
        return dims;
    }
    std::vector<int> primes;
    int n = size;
    for (int p = 2; p * p <= n; ++p)
    {
        while (n % p == 0)
        {
            primes.push_back(p);
            n /= p;
        }
    }
    if (n > 1)
    {
        primes.push_back(n);
    }
    std::sort(primes.rbegin(), primes.rend());
    for (int p : primes)
    {
        std::size_t best = 0;
        double best_load = -1.0;
        for (std::size_t d = 0; d < dims.size(); ++d)
        {
            // Objects per rank along d if d took this factor; an axis that would get more ranks
            // than objects scores below every axis that would not.
            const double load = static_cast<double>(object_grid[d]) / (static_cast<double>(dims[d]) * p);
            const double score = load >= 1.0 ? load : load - 1e18;
            if (score > best_load || best_load == -1.0)
            {
                best = d;
                best_load = score;
            }
        }
        dims[best] *= p;
    }
    return dims;
}

namespace detail
{

template <std::size_t N>
std::array<std::uint64_t, N> object_grid(const std::array<std::uint64_t, N>& shape,
                                         const std::array<std::uint64_t, N>& object_shape)
{
    std::array<std::uint64_t, N> g{};
    for (std::size_t d = 0; d < N; ++d)
    {
        if (object_shape[d] == 0)
        {
            throw array_error(array_errc::invalid_argument,
                              "decompose: the object shape has a zero extent on axis " + std::to_string(d));
        }
        g[d] = shape[d] / object_shape[d] + (shape[d] % object_shape[d] != 0 ? 1 : 0);
    }
    return g;
}

/// Objects [lo, hi) along one axis as array coordinates, clipped to the array.
inline std::pair<std::uint64_t, std::uint64_t> objects_to_span(std::uint64_t lo, std::uint64_t hi,
                                                               std::uint64_t object, std::uint64_t extent)
{
    return {std::min(lo * object, extent), std::min(hi * object, extent)};
}

} // namespace detail

template <std::size_t N>
std::vector<region<N>> decompose(const std::array<std::uint64_t, N>& shape,
                                 const std::array<std::uint64_t, N>& object_shape, int rank, int size,
                                 const block& layout)
{
    static_assert(N >= 1, "zarrxt::mpi::decompose: rank-0 arrays have one element; nothing to decompose");
    if (size < 1 || rank < 0 || rank >= size)
    {
        throw array_error(array_errc::invalid_argument, "decompose: rank " + std::to_string(rank) +
                                                            " is not in a communicator of size " +
                                                            std::to_string(size));
    }
    const auto grid = detail::object_grid(shape, object_shape);
    std::vector<int> dims = layout.process_grid;
    if (dims.empty())
    {
        dims = process_grid(size, grid);
    }
    long long product = 1;
    for (int d : dims)
    {
        product *= d;
    }
    if (dims.size() != N || product != size ||
        std::any_of(dims.begin(), dims.end(), [](int d) { return d < 1; }))
    {
        throw array_error(array_errc::invalid_argument,
                          "decompose: the process grid must have " + std::to_string(N) +
                              " positive extents whose product is the communicator size " +
                              std::to_string(size));
    }
    region<N> r;
    int rest = rank;
    for (std::size_t d = N; d-- > 0;)
    {
        const std::uint64_t coord = static_cast<std::uint64_t>(rest % dims[d]);
        rest /= dims[d];
        const std::uint64_t p = static_cast<std::uint64_t>(dims[d]);
        // Balanced split of grid[d] objects over p ranks: part sizes differ by at most one.
        const std::uint64_t lo = grid[d] / p * coord + std::min(coord, grid[d] % p);
        const std::uint64_t hi = lo + grid[d] / p + (coord < grid[d] % p ? 1 : 0);
        const auto [b, e] = detail::objects_to_span(lo, hi, object_shape[d], shape[d]);
        r.offset[d] = b;
        r.extent[d] = e - b;
    }
    if (r.empty())
    {
        return {};
    }
    return {r};
}

template <std::size_t N>
std::vector<region<N>> decompose(const std::array<std::uint64_t, N>& shape,
                                 const std::array<std::uint64_t, N>& object_shape, int rank, int size,
                                 const block_cyclic& layout)
{
    static_assert(N >= 1, "zarrxt::mpi::decompose: rank-0 arrays have one element; nothing to decompose");
    if (size < 1 || rank < 0 || rank >= size)
    {
        throw array_error(array_errc::invalid_argument, "decompose: rank " + std::to_string(rank) +
                                                            " is not in a communicator of size " +
                                                            std::to_string(size));
    }
    if (layout.axis >= N || layout.block == 0)
    {
        throw array_error(array_errc::invalid_argument,
                          "decompose: block_cyclic needs an axis below " + std::to_string(N) +
                              " and a block of at least one object (got axis " + std::to_string(layout.axis) +
                              ", block " + std::to_string(layout.block) + ")");
    }
    const auto grid = detail::object_grid(shape, object_shape);
    std::vector<region<N>> out;
    for (std::size_t d = 0; d < N; ++d)
    {
        if (grid[d] == 0)
        {
            return out;
        }
    }
    const std::size_t a = layout.axis;
    const std::uint64_t slabs = grid[a] / layout.block + (grid[a] % layout.block != 0 ? 1 : 0);
    for (std::uint64_t k = static_cast<std::uint64_t>(rank); k < slabs; k += static_cast<std::uint64_t>(size))
    {
        region<N> r = region<N>::all(shape);
        const auto [b, e] = detail::objects_to_span(
            k * layout.block, std::min((k + 1) * layout.block, grid[a]), object_shape[a], shape[a]);
        r.offset[a] = b;
        r.extent[a] = e - b;
        out.push_back(r);
    }
    return out;
}

template <class Array, class Layout>
std::vector<region<Array::rank>> decompose(MPI_Comm comm, const Array& a, const Layout& layout)
{
    detail::require_regular_grid(a);
    return decompose<Array::rank>(a.shape(), a.chunk_shape(), detail::comm_rank(comm),
                                  detail::comm_size(comm), layout);
}

template <class Array>
std::array<std::uint64_t, Array::rank> inner_chunk_shape(const Array& a)
{
    std::array<std::uint64_t, Array::rank> s = a.chunk_shape();
    for (const auto& c : a.codecs())
    {
        if (c.name == "sharding_indexed")
        {
            const auto& cs = c.configuration.at("chunk_shape");
            for (std::size_t d = 0; d < Array::rank && d < cs.size(); ++d)
            {
                s[d] = cs[d].template get<std::uint64_t>();
            }
            break;
        }
    }
    return s;
}

/************************
 * create, open         *
 ************************/

template <class T, std::size_t N, class... Policies, class Store, class Options>
auto create(MPI_Comm comm, Store& store, std::string_view path, const Options& options,
            const codec_registry& registry)
    -> decltype(zarrxt::create<T, N, Policies...>(store, path, options))
{
    using array_type = decltype(zarrxt::create<T, N, Policies...>(store, path, options));
    const int rank = detail::comm_rank(comm);
    const std::uint64_t fp = detail::fingerprint().add("create").add(path).add_word(N).value();
    std::optional<array_type> a;
    std::exception_ptr failure;
    try
    {
        if (rank == 0)
        {
            a.emplace(zarrxt::create<T, N, Policies...>(store, path, options, registry));
        }
    }
    catch (...)
    {
        failure = std::current_exception();
    }
    // The agreement is also the barrier: nobody opens before rank 0's metadata is in place.
    agree(comm, failure, fp);
    try
    {
        if (rank != 0)
        {
            a.emplace(zarrxt::open<T, N, Policies...>(std::as_const(store), path, registry));
        }
    }
    catch (...)
    {
        failure = std::current_exception();
    }
    agree(comm, failure, fp);
    return std::move(*a);
}

template <class T, std::size_t N, class... Policies, class Store>
auto open(MPI_Comm comm, const Store& store, std::string_view path, const codec_registry& registry)
    -> decltype(zarrxt::open<T, N, Policies...>(store, path))
{
    using array_type = decltype(zarrxt::open<T, N, Policies...>(store, path));
    const std::uint64_t fp = detail::fingerprint().add("open").add(path).add_word(N).value();
    std::optional<array_type> a;
    std::exception_ptr failure;
    try
    {
        a.emplace(zarrxt::open<T, N, Policies...>(store, path, registry));
    }
    catch (...)
    {
        failure = std::current_exception();
    }
    agree(comm, failure, fp);
    return std::move(*a);
}

/************************
 * collective writes    *
 ************************/

namespace detail
{

template <std::size_t N>
using coords = std::array<std::uint64_t, N>;

/// A box of stored objects [lo, hi) in object-grid coordinates.
template <std::size_t N>
struct object_box
{
    coords<N> lo{};
    coords<N> hi{};
};

template <std::size_t N>
object_box<N> objects_of(const region<N>& r, const coords<N>& object_shape)
{
    object_box<N> b;
    for (std::size_t d = 0; d < N; ++d)
    {
        b.lo[d] = r.offset[d] / object_shape[d];
        b.hi[d] = r.extent[d] == 0 ? b.lo[d] : (r.offset[d] + r.extent[d] - 1) / object_shape[d] + 1;
    }
    return b;
}

template <std::size_t N>
bool box_empty(const object_box<N>& b)
{
    for (std::size_t d = 0; d < N; ++d)
    {
        if (b.hi[d] <= b.lo[d])
        {
            return true;
        }
    }
    return false;
}

template <std::size_t N>
object_box<N> intersect(const object_box<N>& a, const object_box<N>& b)
{
    object_box<N> r;
    for (std::size_t d = 0; d < N; ++d)
    {
        r.lo[d] = std::max(a.lo[d], b.lo[d]);
        r.hi[d] = std::min(a.hi[d], b.hi[d]);
    }
    return r;
}

template <std::size_t N>
bool contains(const object_box<N>& b, const coords<N>& o)
{
    for (std::size_t d = 0; d < N; ++d)
    {
        if (o[d] < b.lo[d] || o[d] >= b.hi[d])
        {
            return false;
        }
    }
    return true;
}

/// Call f(object coordinates) for every object of a box, in C order.
template <std::size_t N, class F>
void for_each_object(const object_box<N>& b, F&& f)
{
    if (box_empty(b))
    {
        return;
    }
    coords<N> o = b.lo;
    while (true)
    {
        f(o);
        std::size_t d = N;
        while (d-- > 0)
        {
            if (++o[d] < b.hi[d])
            {
                break;
            }
            o[d] = b.lo[d];
        }
        if (d == static_cast<std::size_t>(-1))
        {
            return;
        }
    }
}

/// The region an object covers, clipped to the array.
template <std::size_t N>
region<N> object_region(const coords<N>& o, const coords<N>& object_shape, const coords<N>& shape)
{
    region<N> r;
    for (std::size_t d = 0; d < N; ++d)
    {
        r.offset[d] = std::min(o[d] * object_shape[d], shape[d]);
        r.extent[d] = std::min(object_shape[d], shape[d] - r.offset[d]);
    }
    return r;
}

template <std::size_t N>
void check_bounds(const region<N>& r, const coords<N>& shape)
{
    for (std::size_t d = 0; d < N; ++d)
    {
        if (r.offset[d] > shape[d] || r.extent[d] > shape[d] - r.offset[d])
        {
            auto list = [](const coords<N>& v)
            {
                std::string s = "[";
                for (std::size_t i = 0; i < N; ++i)
                {
                    s += (i ? ", " : "") + std::to_string(v[i]);
                }
                return s + "]";
            };
            throw array_error(array_errc::out_of_bounds, "region offset " + list(r.offset) + " extent " +
                                                             list(r.extent) + " is outside the array shape " +
                                                             list(shape));
        }
    }
}

template <std::size_t N>
region<N> intersect(const region<N>& a, const region<N>& b)
{
    region<N> r;
    for (std::size_t d = 0; d < N; ++d)
    {
        const std::uint64_t lo = std::max(a.offset[d], b.offset[d]);
        const std::uint64_t hi = std::min(a.offset[d] + a.extent[d], b.offset[d] + b.extent[d]);
        r.offset[d] = lo;
        r.extent[d] = hi > lo ? hi - lo : 0;
    }
    return r;
}

template <std::size_t N>
region<N> bounding_box(const region<N>& a, const region<N>& b)
{
    if (a.empty())
    {
        return b;
    }
    region<N> r;
    for (std::size_t d = 0; d < N; ++d)
    {
        const std::uint64_t lo = std::min(a.offset[d], b.offset[d]);
        const std::uint64_t hi = std::max(a.offset[d] + a.extent[d], b.offset[d] + b.extent[d]);
        r.offset[d] = lo;
        r.extent[d] = hi - lo;
    }
    return r;
}

/// Copy the box `box` (array coordinates) from dense C-ordered values of region `from` to dense
/// C-ordered values of region `to`; `box` lies inside both. One memcpy per innermost run.
template <std::size_t N>
void copy_box(const std::byte* src, const region<N>& from, std::byte* dst, const region<N>& to,
              const region<N>& box, std::size_t elem)
{
    if (box.empty())
    {
        return;
    }
    std::array<std::uint64_t, N> ss{}, ds{};
    std::uint64_t sa = 1, da = 1;
    for (std::size_t d = N; d-- > 0;)
    {
        ss[d] = sa;
        ds[d] = da;
        sa *= from.extent[d];
        da *= to.extent[d];
    }
    const std::size_t run = static_cast<std::size_t>(box.extent[N - 1]) * elem;
    coords<N> i{}; // index inside the box over the outer axes
    while (true)
    {
        std::uint64_t so = 0, dof = 0;
        for (std::size_t d = 0; d < N; ++d)
        {
            so += (box.offset[d] + i[d] - from.offset[d]) * ss[d];
            dof += (box.offset[d] + i[d] - to.offset[d]) * ds[d];
        }
        std::memcpy(dst + dof * elem, src + so * elem, run);
        if (!zarrxt::detail::next_index(i, box.extent, N - 1))
        {
            return;
        }
    }
}

template <std::size_t N>
std::uint64_t flat_index(const coords<N>& o, const coords<N>& grid)
{
    std::uint64_t f = 0;
    for (std::size_t d = 0; d < N; ++d)
    {
        f = f * grid[d] + o[d];
    }
    return f;
}

/// One region of one rank, as every rank sees it after the exchange of regions.
template <std::size_t N>
struct global_piece
{
    int rank = 0;
    std::size_t index = 0; ///< position in its rank's list
    region<N> where;
    object_box<N> objects;
};

/// Messages carry at most this many bytes (MPI counts are ints).
inline constexpr std::size_t max_message = std::size_t{1} << 30;

inline void post_bytes(std::vector<MPI_Request>& requests, bool send, std::byte* p, std::size_t n, int peer,
                       MPI_Comm comm)
{
    constexpr int tag = 0x2a7;
    for (std::size_t at = 0; at < n; at += max_message)
    {
        const int count = static_cast<int>(std::min(max_message, n - at));
        MPI_Request req;
        if (send)
        {
            MPI_Isend(p + at, count, MPI_BYTE, peer, tag, comm, &req);
        }
        else
        {
            MPI_Irecv(p + at, count, MPI_BYTE, peer, tag, comm, &req);
        }
        requests.push_back(req);
    }
}

/// The collective write. `whole(i)` writes this rank's piece i straight (no other rank touches
/// its objects); `data(i)` returns piece i's values, dense and C-ordered (it may evaluate lazily).
template <class Array, class Whole, class Data>
void write_impl(MPI_Comm comm, Array& a, const std::vector<region<Array::rank>>& mine, Whole&& whole,
                Data&& data)
{
    constexpr std::size_t N = Array::rank;
    static_assert(N >= 1, "zarrxt::mpi: collective writes need an array of rank 1 or more");
    using T = typename Array::value_type;
    constexpr std::size_t elem = sizeof(T);
    const int me = comm_rank(comm);
    const int size = comm_size(comm);
    const coords<N> shape = a.shape();
    const coords<N> cs = a.chunk_shape();
    const auto grid = object_grid(shape, cs);

    // Step 1: check the pieces locally and agree (the handshake also checks that every rank is
    // writing the same array).
    std::exception_ptr failure;
    try
    {
        require_regular_grid(a);
        for (const auto& r : mine)
        {
            check_bounds(r, shape);
        }
    }
    catch (error& e)
    {
        e.with_key(a.path().empty() ? std::string("/") : a.path());
        failure = std::current_exception();
    }
    catch (...)
    {
        failure = std::current_exception();
    }
    agree(comm, failure, array_fingerprint("write", a));

    // Step 2: every rank learns every rank's regions (2N words each).
    const int count = static_cast<int>(mine.size());
    std::vector<int> counts(static_cast<std::size_t>(size));
    MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
    std::vector<int> words(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
    int total = 0;
    for (int r = 0; r < size; ++r)
    {
        words[r] = counts[r] * static_cast<int>(2 * N);
        displs[r] = total;
        total += words[r];
    }
    std::vector<std::uint64_t> local(static_cast<std::size_t>(count) * 2 * N),
        all(static_cast<std::size_t>(total));
    for (std::size_t i = 0; i < mine.size(); ++i)
    {
        std::copy(mine[i].offset.begin(), mine[i].offset.end(),
                  local.begin() + static_cast<std::ptrdiff_t>(2 * N * i));
        std::copy(mine[i].extent.begin(), mine[i].extent.end(),
                  local.begin() + static_cast<std::ptrdiff_t>(2 * N * i + N));
    }
    MPI_Allgatherv(local.data(), words[me], MPI_UINT64_T, all.data(), words.data(), displs.data(),
                   MPI_UINT64_T, comm);

    // Step 3: plan. Objects of my pieces that another rank's piece also touches are "shared";
    // each has one owner, computed identically by every rank that touches it.
    std::vector<global_piece<N>> pieces;
    std::vector<std::size_t> my_pieces;
    struct shared_object
    {
        coords<N> o{};
        std::vector<std::size_t> touching; // indexes into `pieces`, in (rank, index) order
        int owner = 0;
    };
    std::map<std::uint64_t, shared_object> shared;
    std::vector<std::vector<std::byte>> send_buffers, recv_buffers;
    std::vector<std::size_t> recv_of; // the piece each receive buffer holds
    std::vector<bool> mine_is_shared;
    try
    {
        for (int r = 0, at = 0; r < size; ++r)
        {
            for (int i = 0; i < counts[r]; ++i, at += static_cast<int>(2 * N))
            {
                global_piece<N> g;
                g.rank = r;
                g.index = static_cast<std::size_t>(i);
                std::copy(all.begin() + at, all.begin() + at + static_cast<int>(N), g.where.offset.begin());
                std::copy(all.begin() + at + static_cast<int>(N), all.begin() + at + static_cast<int>(2 * N),
                          g.where.extent.begin());
                g.objects = objects_of(g.where, cs);
                if (r == me)
                {
                    my_pieces.push_back(pieces.size());
                }
                pieces.push_back(g);
            }
        }
        mine_is_shared.assign(my_pieces.size(), false);
        for (std::size_t k = 0; k < my_pieces.size(); ++k)
        {
            const auto& p = pieces[my_pieces[k]];
            for (const auto& q : pieces)
            {
                if (q.rank == me)
                {
                    continue;
                }
                const auto both = intersect(p.objects, q.objects);
                if (box_empty(both))
                {
                    continue;
                }
                mine_is_shared[k] = true;
                for_each_object(both, [&](const coords<N>& o) { shared[flat_index(o, grid)].o = o; });
            }
        }
        for (auto& [flat, s] : shared)
        {
            std::vector<std::uint64_t> share(static_cast<std::size_t>(size), 0);
            const region<N> box = object_region(s.o, cs, shape);
            for (std::size_t g = 0; g < pieces.size(); ++g)
            {
                if (contains(pieces[g].objects, s.o))
                {
                    s.touching.push_back(g);
                    share[static_cast<std::size_t>(pieces[g].rank)] +=
                        intersect(pieces[g].where, box).elements();
                }
            }
            s.owner = pieces[s.touching.front()].rank;
            for (int r = 0; r < size; ++r)
            {
                if (share[r] > share[s.owner])
                {
                    s.owner = r;
                }
            }
        }
        // Pack what I send: my part of each shared object I do not own, in object order.
        for (const auto& [flat, s] : shared)
        {
            if (s.owner == me)
            {
                continue;
            }
            const region<N> box = object_region(s.o, cs, shape);
            for (std::size_t g : s.touching)
            {
                if (pieces[g].rank != me)
                {
                    continue;
                }
                const region<N> part = intersect(pieces[g].where, box);
                std::vector<std::byte> buf(static_cast<std::size_t>(part.elements()) * elem);
                copy_box<N>(reinterpret_cast<const std::byte*>(data(pieces[g].index)), pieces[g].where,
                            buf.data(), part, part, elem);
                send_buffers.push_back(std::move(buf));
            }
        }
        for (const auto& [flat, s] : shared)
        {
            if (s.owner != me)
            {
                continue;
            }
            const region<N> box = object_region(s.o, cs, shape);
            for (std::size_t g : s.touching)
            {
                if (pieces[g].rank == me)
                {
                    continue;
                }
                recv_buffers.emplace_back(
                    static_cast<std::size_t>(intersect(pieces[g].where, box).elements()) * elem);
                recv_of.push_back(g);
            }
        }
    }
    catch (...)
    {
        failure = std::current_exception();
    }
    agree(comm, failure);

    // Step 4: exchange. Between two ranks messages are matched in posting order, and both sides
    // enumerate the shared objects (ascending) and their pieces ((rank, index) order) alike.
    {
        std::vector<MPI_Request> requests;
        std::size_t next_send = 0;
        for (const auto& [flat, s] : shared)
        {
            if (s.owner == me)
            {
                continue;
            }
            for (std::size_t g : s.touching)
            {
                if (pieces[g].rank == me)
                {
                    auto& b = send_buffers[next_send++];
                    post_bytes(requests, true, b.data(), b.size(), s.owner, comm);
                }
            }
        }
        for (std::size_t i = 0; i < recv_buffers.size(); ++i)
        {
            const auto& g = pieces[recv_of[i]];
            post_bytes(requests, false, recv_buffers[i].data(), recv_buffers[i].size(), g.rank, comm);
        }
        if (!requests.empty())
        {
            MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
        }
        send_buffers.clear();
    }

    // Step 5: write. Pieces whose objects nobody else touches go straight to the array; each owned
    // shared object is assembled from its pieces and written once.
    try
    {
        for (std::size_t k = 0; k < my_pieces.size(); ++k)
        {
            const auto& p = pieces[my_pieces[k]];
            if (p.where.empty())
            {
                continue;
            }
            if (!mine_is_shared[k])
            {
                whole(p.index);
                continue;
            }
            // Object by object, skipping the shared ones (their owners write them).
            const T* src = data(p.index);
            std::unique_ptr<T[]> tmp;
            for_each_object(p.objects,
                            [&](const coords<N>& o)
                            {
                                if (shared.count(flat_index(o, grid)) != 0)
                                {
                                    return;
                                }
                                const region<N> part = intersect(p.where, object_region(o, cs, shape));
                                tmp.reset(new T[static_cast<std::size_t>(part.elements())]);
                                copy_box<N>(reinterpret_cast<const std::byte*>(src), p.where,
                                            reinterpret_cast<std::byte*>(tmp.get()), part, part, elem);
                                a.write_raw(part, tmp.get());
                            });
        }
        std::size_t next_recv = 0;
        for (const auto& [flat, s] : shared)
        {
            if (s.owner != me)
            {
                continue;
            }
            const region<N> box = object_region(s.o, cs, shape);
            region<N> target{};
            for (std::size_t g : s.touching)
            {
                target = bounding_box(target, intersect(pieces[g].where, box));
            }
            const std::size_t n = static_cast<std::size_t>(target.elements());
            std::unique_ptr<T[]> values(new T[n]);
            auto* out = reinterpret_cast<std::byte*>(values.get());
            // Which elements of the target the pieces cover: the old values are read only when
            // some are not (then the owner is the only rank reading and rewriting this object).
            std::vector<unsigned char> covered(n, 0);
            for (std::size_t g : s.touching)
            {
                const region<N> part = intersect(pieces[g].where, box);
                const std::vector<unsigned char> ones(static_cast<std::size_t>(part.elements()), 1);
                copy_box<N>(reinterpret_cast<const std::byte*>(ones.data()), part,
                            reinterpret_cast<std::byte*>(covered.data()), target, part, 1);
            }
            if (std::find(covered.begin(), covered.end(), 0) != covered.end())
            {
                a.read_raw(target, values.get());
            }
            for (std::size_t g : s.touching)
            {
                const region<N> part = intersect(pieces[g].where, box);
                if (pieces[g].rank == me)
                {
                    copy_box<N>(reinterpret_cast<const std::byte*>(data(pieces[g].index)), pieces[g].where,
                                out, target, part, elem);
                }
                else
                {
                    copy_box<N>(recv_buffers[next_recv++].data(), part, out, target, part, elem);
                }
            }
            a.write_raw(target, values.get());
        }
    }
    catch (error& e)
    {
        e.with_key(a.path().empty() ? std::string("/") : a.path());
        failure = std::current_exception();
    }
    catch (...)
    {
        failure = std::current_exception();
    }
    agree(comm, failure);
}

} // namespace detail

template <class Array>
void write_pieces(MPI_Comm comm, Array& a,
                  std::span<const piece<typename Array::value_type, Array::rank>> pieces)
{
    std::vector<typename Array::region_type> regions;
    regions.reserve(pieces.size());
    for (const auto& p : pieces)
    {
        regions.push_back(p.where);
    }
    detail::write_impl(
        comm, a, regions, [&](std::size_t i) { a.write_raw(pieces[i].where, pieces[i].data); },
        [&](std::size_t i) { return pieces[i].data; });
}

template <class Array>
void write_raw(MPI_Comm comm, Array& a, const typename Array::region_type& r,
               const typename Array::value_type* data)
{
    const piece<typename Array::value_type, Array::rank> p{r, data};
    write_pieces(comm, a,
                 std::span<const piece<typename Array::value_type, Array::rank>>(&p, r.empty() ? 0 : 1));
}

template <class Array, class E>
void write(MPI_Comm comm, Array& a, const typename Array::region_type& r, const xt::xexpression<E>& value)
{
    using T = typename Array::value_type;
    std::vector<typename Array::region_type> regions;
    if (!r.empty())
    {
        regions.push_back(r);
    }
    std::optional<typename Array::tensor_type> evaluated;
    const E& expr = value.derived_cast();
    detail::write_impl(
        comm, a, regions, [&](std::size_t) { a.write(r, expr); },
        [&](std::size_t) -> const T*
        {
            if (!evaluated)
            {
                evaluated.emplace(expr); // C-ordered, evaluated once, only when pieces must travel
            }
            return evaluated->data();
        });
}

/************************
 * collective reads     *
 ************************/

template <class Array>
typename Array::tensor_type read(MPI_Comm comm, const Array& a, const typename Array::region_type& r)
{
    std::optional<typename Array::tensor_type> out;
    std::exception_ptr failure;
    try
    {
        out.emplace(a.read(r));
    }
    catch (...)
    {
        failure = std::current_exception();
    }
    agree(comm, failure, detail::array_fingerprint("read", a));
    return std::move(*out);
}

template <class Array, class E>
void read_into(MPI_Comm comm, const Array& a, const typename Array::region_type& r, E&& dest)
{
    std::exception_ptr failure;
    try
    {
        a.read_into(r, std::forward<E>(dest));
    }
    catch (...)
    {
        failure = std::current_exception();
    }
    agree(comm, failure, detail::array_fingerprint("read", a));
}

template <class Array>
void read_raw(MPI_Comm comm, const Array& a, const typename Array::region_type& r,
              typename Array::value_type* out)
{
    std::exception_ptr failure;
    try
    {
        a.read_raw(r, out);
    }
    catch (...)
    {
        failure = std::current_exception();
    }
    agree(comm, failure, detail::array_fingerprint("read", a));
}

/****************************
 * consolidated metadata    *
 ****************************/

template <class Store>
void consolidate_metadata(MPI_Comm comm, Store& store, std::string_view group_path)
{
    const std::string root = normalize_path(group_path);
    const std::uint64_t fp = detail::fingerprint().add("consolidate").add(root).value();
    // Everybody's writes are finished before rank 0 looks (the agreement is the barrier).
    agree(comm, nullptr, fp);
    std::exception_ptr failure;
    try
    {
        if (detail::comm_rank(comm) == 0)
        {
            zarrxt::consolidate(store, root);
        }
    }
    catch (...)
    {
        failure = std::current_exception();
    }
    agree(comm, failure, fp);
}

} // namespace mpi
} // namespace zarrxt
