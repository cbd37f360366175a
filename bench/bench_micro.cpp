// Microbenchmarks (BENCHMARKS.md, "Microbenchmarks"), driven by doctest: each TEST_CASE measures
// one of zarrxt's kernels next to the honest baseline for the same bytes and prints a line
//
//   BENCH {"name", "bytes", "ours_bytes_per_s", "baseline", "baseline_bytes_per_s", "ratio"}
//
// (a JSON object) that scripts/bench collects into the record. Nothing here asserts a speed (targets are
// judged in the record); the CHECKs only make sure both sides computed the same thing.
//
// Timing: the two sides run in alternating batches of about 20 ms each until `ZXB_MICRO_SECONDS`
// (default 0.4 s) per side have passed; the median batch throughput of each side is reported, so
// a burst of load from another process hits both sides alike.
#include "floor.hpp"

#include <doctest/doctest.h>
#include <zarrxt/kernel/scatter.hpp>
#include <zarrxt/zarrxt.hpp>

#include <blosc.h>
// xtensor 0.24 keeps its headers flat; later releases moved them into sub-folders.
#if __has_include(<xtensor/xview.hpp>)
#include <xtensor/xview.hpp>
#else
#include <xtensor/views/xview.hpp>
#endif

#include <functional>
#include <iostream>

namespace zx = zarrxt;

namespace
{

double seconds_per_side()
{
    const char* s = std::getenv("ZXB_MICRO_SECONDS");
    return s != nullptr ? std::atof(s) : 0.4;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

/// Runs `ours` and `base` (each processing `bytes` per call) in alternating batches; prints and
/// returns ours/base throughput ratio.
double compare(const std::string& name, std::uint64_t bytes, const std::function<void()>& ours,
               const std::string& baseline, const std::function<void()>& base)
{
    // Calls per batch so that one batch takes about 20 ms.
    auto calls_for = [](const std::function<void()>& f)
    {
        std::uint64_t n = 1;
        while (true)
        {
            const std::uint64_t t0 = zxb::now_ns();
            for (std::uint64_t i = 0; i < n; ++i)
            {
                f();
            }
            const std::uint64_t dt = zxb::now_ns() - t0;
            if (dt > 5'000'000 || n > (1u << 30))
            {
                return std::max<std::uint64_t>(1, n * 20'000'000 / std::max<std::uint64_t>(dt, 1));
            }
            n *= 4;
        }
    };
    const std::uint64_t n_ours = calls_for(ours);
    const std::uint64_t n_base = calls_for(base);
    std::vector<double> r_ours;
    std::vector<double> r_base;
    double spent_ours = 0;
    double spent_base = 0;
    const double budget = seconds_per_side();
    while (spent_ours < budget || spent_base < budget || r_ours.size() < 3)
    {
        auto batch =
            [&](const std::function<void()>& f, std::uint64_t n, std::vector<double>& rates, double& spent)
        {
            const std::uint64_t t0 = zxb::now_ns();
            for (std::uint64_t i = 0; i < n; ++i)
            {
                f();
            }
            const double dt = static_cast<double>(zxb::now_ns() - t0) * 1e-9;
            rates.push_back(static_cast<double>(bytes) * static_cast<double>(n) / dt);
            spent += dt;
        };
        batch(ours, n_ours, r_ours, spent_ours);
        batch(base, n_base, r_base, spent_base);
    }
    const double o = median(r_ours);
    const double b = median(r_base);
    const zxb::json j = {{"name", name},
                         {"bytes", bytes},
                         {"ours_bytes_per_s", o},
                         {"baseline", baseline},
                         {"baseline_bytes_per_s", b},
                         {"ratio", o / b},
                         {"batches", r_ours.size()}};
    std::cout << "BENCH " << j.dump() << std::endl;
    return o / b;
}

std::vector<std::byte> w1_chunk_bytes(std::uint64_t r0, std::uint64_t c0, std::uint64_t edge)
{
    std::vector<std::byte> v(edge * edge * 2);
    for (std::uint64_t r = 0; r < edge; ++r)
    {
        for (std::uint64_t c = 0; c < edge; ++c)
        {
            const std::uint16_t x = zxb::w1_value(r0 + r, c0 + c);
            std::memcpy(v.data() + 2 * (r * edge + c), &x, 2);
        }
    }
    return v;
}

std::vector<std::byte> w2_bytes(std::uint64_t n)
{
    std::vector<std::byte> v(n);
    zxb::w2_fill(true, 0, reinterpret_cast<std::uint8_t*>(v.data()), n);
    return v;
}

zx::byte_view view(const std::vector<std::byte>& v)
{
    return {v.data(), v.size()};
}

/// The part of each 64 x 64 chunk that an e x e region at [r0, c0] covers: calls
/// fn(chunk_row, chunk_col, first_row, end_row, first_col, end_col) in array coordinates.
template <class F>
void for_each_w1_box(std::uint64_t e, std::uint64_t r0, std::uint64_t c0, F&& fn)
{
    for (std::uint64_t cr = r0 / 64; cr <= (r0 + e - 1) / 64; ++cr)
    {
        for (std::uint64_t cc = c0 / 64; cc <= (c0 + e - 1) / 64; ++cc)
        {
            fn(cr, cc, std::max(cr * 64, r0), std::min(cr * 64 + 64, r0 + e), std::max(cc * 64, c0),
               std::min(cc * 64 + 64, c0 + e));
        }
    }
}

} // namespace

TEST_SUITE("bench")
{
    TEST_CASE("scatter: copy_box of decoded chunks vs memcpy of the same bytes")
    {
        // The W1 2048 x 2048 read at [7, 11]: 33 x 33 chunks of 64 x 64 uint16 land in the output,
        // most whole, the first and last row and column of chunks clipped.
        const std::uint64_t e = 2048;
        const std::uint64_t r0 = 7;
        const std::uint64_t c0 = 11;
        const auto chunk = w1_chunk_bytes(0, 0, 64);
        zxb::prefaulted out(e * e * 2);
        zxb::prefaulted flat(e * e * 2);
        const zx::kernel::strides_t<2> ds{static_cast<std::int64_t>(e), 1};
        const zx::kernel::strides_t<2> ss{64, 1};
        auto scatter = [&]
        {
            for_each_w1_box(e, r0, c0,
                            [&](std::uint64_t cr, std::uint64_t cc, std::uint64_t rb, std::uint64_t re,
                                std::uint64_t cb, std::uint64_t ce)
                            {
                                std::byte* d = out.data() + 2 * ((rb - r0) * e + (cb - c0));
                                const std::byte* s =
                                    chunk.data() + 2 * ((rb - cr * 64) * 64 + (cb - cc * 64));
                                zx::kernel::copy_box<2>(d, ds, s, ss, {re - rb, ce - cb}, 2);
                            });
            zxb::clobber(out.data());
        };
        auto memcpy_all = [&]
        {
            std::memcpy(out.data(), flat.data(), e * e * 2);
            zxb::clobber(out.data());
        };
        compare("scatter/w1_2048_region", e * e * 2, scatter, "one memcpy of the output", memcpy_all);

        // The same scatter with a plain row loop (the obvious hand-written code) as baseline.
        auto row_loop = [&]
        {
            for_each_w1_box(e, r0, c0,
                            [&](std::uint64_t cr, std::uint64_t cc, std::uint64_t rb, std::uint64_t re,
                                std::uint64_t cb, std::uint64_t ce)
                            {
                                for (std::uint64_t r = rb; r < re; ++r)
                                {
                                    std::memcpy(out.data() + 2 * ((r - r0) * e + (cb - c0)),
                                                chunk.data() + 2 * ((r - cr * 64) * 64 + (cb - cc * 64)),
                                                2 * (ce - cb));
                                }
                            });
            zxb::clobber(out.data());
        };
        compare("scatter/w1_2048_region_vs_rows", e * e * 2, scatter, "memcpy per row", row_loop);

        // A whole chunk into a matching contiguous destination: must collapse into one memcpy.
        const std::uint64_t n = 100'000;
        const auto src = w2_bytes(n);
        zxb::prefaulted dst(n);
        auto one = [&]
        {
            zx::kernel::copy_box<1>(dst.data(), {1}, src.data(), {1}, {n}, 1);
            zxb::clobber(dst.data());
        };
        auto raw = [&]
        {
            std::memcpy(dst.data(), src.data(), n);
            zxb::clobber(dst.data());
        };
        compare("scatter/w2_chunk_1d", n, one, "memcpy", raw);
    }

    TEST_CASE("xtensor view assignment baseline for the same scatter")
    {
        // What a user would write with xtensor alone: assign each chunk to a view of the output.
        const std::size_t e = 2048;
        xt::xtensor<std::uint16_t, 2> out = xt::zeros<std::uint16_t>({e, e});
        xt::xtensor<std::uint16_t, 2> chunk = xt::ones<std::uint16_t>({64, 64});
        auto ours = [&]
        {
            for (std::size_t cr = 0; cr < e / 64; ++cr)
            {
                for (std::size_t cc = 0; cc < e / 64; ++cc)
                {
                    zx::kernel::copy_box<2>(reinterpret_cast<std::byte*>(out.data() + cr * 64 * e + cc * 64),
                                            {static_cast<std::int64_t>(e), 1},
                                            reinterpret_cast<const std::byte*>(chunk.data()), {64, 1},
                                            {64, 64}, 2);
                }
            }
            zxb::clobber(out.data());
        };
        auto view_assign = [&]
        {
            for (std::size_t cr = 0; cr < e / 64; ++cr)
            {
                for (std::size_t cc = 0; cc < e / 64; ++cc)
                {
                    xt::view(out, xt::range(cr * 64, cr * 64 + 64), xt::range(cc * 64, cc * 64 + 64)) = chunk;
                }
            }
            zxb::clobber(out.data());
        };
        compare("scatter/aligned_2048_vs_xt_view", e * e * 2, ours, "xt::view assignment", view_assign);
    }

    TEST_CASE("codec wrappers vs the raw library calls on the same bytes")
    {
        const auto small = w1_chunk_bytes(7, 11, 64); // one W1 chunk (8 KiB)
        const auto big = w2_bytes(100'000);           // one W2 chunk of semi_random data
        const zx::codec::decode_hint hint_small{small.size(), 1u << 30};
        const zx::codec::decode_hint hint_big{big.size(), 1u << 30};
        zx::buffer out;
        std::vector<std::byte> raw_out(std::max(small.size(), big.size()) * 2 + 1024);

        for (const auto* data : {&small, &big})
        {
            const std::string tag = data == &small ? "w1_chunk_8KiB" : "w2_chunk_100KB";
            const zx::codec::decode_hint& hint = data == &small ? hint_small : hint_big;
            const std::size_t n = data->size();

            // gzip through libdeflate, as zarrxt uses it.
            zx::codec::gzip gz;
            gz.level = 5;
            zx::buffer enc;
            gz.encode(view(*data), enc);
            std::vector<std::byte> gz_in(enc.data(), enc.data() + enc.size());
            libdeflate_decompressor* d = libdeflate_alloc_decompressor();
            libdeflate_compressor* c5 = libdeflate_alloc_compressor(5);
            compare(
                "codec/gzip_decode/" + tag, n,
                [&] {
                    (void)gz.decode({gz_in.data(), gz_in.size()}, out, hint);
                },
                "libdeflate_gzip_decompress",
                [&]
                {
                    std::size_t got = 0;
                    CHECK(libdeflate_gzip_decompress(d, gz_in.data(), gz_in.size(), raw_out.data(), n,
                                                     &got) == LIBDEFLATE_SUCCESS);
                });
            compare(
                "codec/gzip_encode/" + tag, n, [&] { gz.encode(view(*data), out); },
                "libdeflate_gzip_compress(5)",
                [&] { (void)libdeflate_gzip_compress(c5, data->data(), n, raw_out.data(), raw_out.size()); });

            // zlib container.
            zx::codec::zlib zl;
            zl.level = 5;
            zl.encode(view(*data), enc);
            std::vector<std::byte> zl_in(enc.data(), enc.data() + enc.size());
            compare(
                "codec/zlib_decode/" + tag, n,
                [&] {
                    (void)zl.decode({zl_in.data(), zl_in.size()}, out, hint);
                },
                "libdeflate_zlib_decompress",
                [&]
                {
                    std::size_t got = 0;
                    (void)libdeflate_zlib_decompress(d, zl_in.data(), zl_in.size(), raw_out.data(), n, &got);
                });

            // zstd level 0 (libzstd's default), no checksum.
            zx::codec::zstd zs;
            zs.encode(view(*data), enc);
            std::vector<std::byte> zs_in(enc.data(), enc.data() + enc.size());
            ZSTD_DCtx* zd = ZSTD_createDCtx();
            ZSTD_CCtx* zc = ZSTD_createCCtx();
            compare(
                "codec/zstd_decode/" + tag, n,
                [&] {
                    (void)zs.decode({zs_in.data(), zs_in.size()}, out, hint);
                },
                "ZSTD_decompressDCtx",
                [&] { CHECK(ZSTD_decompressDCtx(zd, raw_out.data(), n, zs_in.data(), zs_in.size()) == n); });
            compare(
                "codec/zstd_encode/" + tag, n, [&] { zs.encode(view(*data), out); },
                "ZSTD_compressCCtx(level 0)",
                [&] { (void)ZSTD_compressCCtx(zc, raw_out.data(), raw_out.size(), data->data(), n, 0); });
            ZSTD_freeDCtx(zd);
            ZSTD_freeCCtx(zc);

            // blosc (lz4, byte shuffle) through the context API on both sides.
            zx::codec::blosc bl;
            bl.typesize = data == &small ? 2 : 1;
            bl.encode(view(*data), enc);
            std::vector<std::byte> bl_in(enc.data(), enc.data() + enc.size());
            compare(
                "codec/blosc_decode/" + tag, n,
                [&] {
                    (void)bl.decode({bl_in.data(), bl_in.size()}, out, hint);
                },
                "blosc_decompress_ctx",
                [&]
                { CHECK(blosc_decompress_ctx(bl_in.data(), raw_out.data(), n, 1) == static_cast<int>(n)); });

            // crc32c: verifying the trailer of a chunk, vs computing the checksum with the instruction.
            zx::codec::crc32c cr;
            cr.encode(view(*data), enc);
            std::vector<std::byte> cr_in(enc.data(), enc.data() + enc.size());
            compare(
                "codec/crc32c_decode/" + tag, n,
                [&] {
                    (void)cr.decode({cr_in.data(), cr_in.size()}, out, hint);
                },
                "sse4.2 crc32 loop", [&] { CHECK(zxb::floor_crc32c(data->data(), n) != 0); });
            libdeflate_free_decompressor(d);
            libdeflate_free_compressor(c5);
        }
    }

    TEST_CASE("crc32c: hardware vs table")
    {
        const auto data = w2_bytes(1u << 20);
        std::uint32_t sink = 0;
        compare(
            "crc32c/hardware_vs_table_1MiB", data.size(), [&] { sink ^= zx::detail::crc32c(view(data)); },
            "slicing-by-8 table (zarrxt's fallback)",
            [&] { sink ^= zx::detail::crc32c_portable(view(data)); });
        compare(
            "crc32c/hardware_vs_floor_1MiB", data.size(), [&] { sink ^= zx::detail::crc32c(view(data)); },
            "the floor's sse4.2 loop", [&] { sink ^= zxb::floor_crc32c(data.data(), data.size()); });
        CHECK(zx::detail::crc32c(view(data)) == zx::detail::crc32c_portable(view(data)));
        CHECK(zx::detail::crc32c(view(data)) == zxb::floor_crc32c(data.data(), data.size()));
        zxb::clobber(&sink);
    }

    TEST_CASE("shard index parse")
    {
        // The index stress shard: 128 x 128 inner chunks of 8 x 8 uint16, a 262,148-byte index.
        const std::uint64_t grid = 128;
        const std::uint64_t count = grid * grid;
        const std::uint64_t chunk = 8 * 8 * 2;
        std::vector<std::byte> shard(count * chunk + count * 16 + 4);
        std::vector<std::uint64_t> entries(2 * count);
        for (std::uint64_t i = 0; i < count; ++i)
        {
            entries[2 * i] = i * chunk;
            entries[2 * i + 1] = chunk;
        }
        std::byte* index = shard.data() + count * chunk;
        std::memcpy(index, entries.data(), count * 16);
        const std::uint32_t crc = zxb::floor_crc32c(index, count * 16);
        std::memcpy(index + count * 16, &crc, 4);

        zx::codec::codec_context ctx;
        ctx.dtype = zx::dtype_id::uint16;
        ctx.chunk_shape = zx::dims(std::vector<std::uint64_t>{1024, 1024});
        const zx::json cfg =
            zx::sharded({8, 8}, {zx::codec_spec("bytes", {{"endian", "little"}})}).configuration;
        const auto codec = zx::codec::sharding_indexed<>::from_json(cfg, ctx);
        zx::memory_reader reader({shard.data(), shard.size()}, "bench/shard");
        zx::codec::scratch_space scratch;
        zx::read_context rc;
        rc.scratch = &scratch;
        std::vector<std::uint64_t> parsed(2 * count);
        const std::uint64_t index_bytes = count * 16 + 4;
        compare(
            "shard_index/parse_16384_entries", index_bytes,
            [&]
            {
                auto idx = codec.read_index(reader, rc);
                CHECK(idx->chunks() == count);
            },
            "copy out + crc32c + bounds check",
            [&]
            {
                // The least a parser must do: take the bytes, verify the checksum, copy the
                // entries out and check each lies inside the shard.
                std::vector<std::byte> bytes(index, index + index_bytes);
                std::uint32_t stored;
                std::memcpy(&stored, bytes.data() + count * 16, 4);
                CHECK(zxb::floor_crc32c(bytes.data(), count * 16) == stored);
                std::memcpy(parsed.data(), bytes.data(), count * 16);
                bool ok = true;
                for (std::uint64_t i = 0; i < count; ++i)
                {
                    ok &= parsed[2 * i] + parsed[2 * i + 1] <= count * chunk;
                }
                CHECK(ok);
            });
    }

    TEST_CASE("chunk key formatting")
    {
        // The keys of the W1 2048 x 2048 read (33 x 33 chunks), as read_region formats them.
        zx::memory_store mem;
        auto a = zx::create<std::uint16_t, 2>(mem, "img",
                                              zx::v3_options{.shape = {4096, 4096}, .chunk_shape = {64, 64}});
        std::size_t total = 0;
        std::uint64_t bytes = 0;
        for (std::uint64_t r = 0; r < 33; ++r)
        {
            for (std::uint64_t c = 0; c < 33; ++c)
            {
                const std::uint64_t coords[2] = {r, c};
                bytes += a.core()->chunk_key(coords, 2).size();
            }
        }
        compare(
            "chunk_key/1089_keys_via_array", bytes,
            [&]
            {
                for (std::uint64_t r = 0; r < 33; ++r)
                {
                    for (std::uint64_t c = 0; c < 33; ++c)
                    {
                        const std::uint64_t coords[2] = {r, c};
                        total += a.core()->chunk_key(coords, 2).size();
                    }
                }
            },
            "snprintf(\"img/c/%llu/%llu\") into a std::string",
            [&]
            {
                char buf[64];
                for (std::uint64_t r = 0; r < 33; ++r)
                {
                    for (std::uint64_t c = 0; c < 33; ++c)
                    {
                        const int k = std::snprintf(buf, sizeof buf, "img/c/%llu/%llu",
                                                    static_cast<unsigned long long>(r),
                                                    static_cast<unsigned long long>(c));
                        std::string s(buf, static_cast<std::size_t>(k));
                        total += s.size();
                    }
                }
            });
        zxb::clobber(&total);
    }
}
