// Crash safety: a writer process is killed with SIGKILL at random moments, over and over, on v2, v3
// and sharded arrays. After every kill the array must open, every chunk must decode, every chunk must
// hold either its content before the interrupted operation or after it (never a mixture), the
// metadata must parse, the attributes must be exactly the old or the new ones, and no temporary
// file may ever be visible as a key. Each run must also show that kills landed mid-write (a new
// temporary file left behind by the killed writer, or a region written for some of its chunks
// only), or it proved nothing.
//
// The writer runs a deterministic sequence of operations (random regions filled with the operation's
// number, and attribute rewrites) and publishes how many it completed in shared memory; the parent
// replays the same sequence in memory to know the state before and after the interrupted operation.
#include "array_support.hpp"

#include <xtensor/xview.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>

namespace zx = zarrxt;

namespace
{

constexpr std::uint64_t side = 48;

struct op
{
    bool attributes = false;
    zx::region<2> region;
    std::int32_t value = 0;
};

/// Operation i of the sequence seeded by `seed` (the writer and the replay agree on it).
op op_at(std::uint64_t seed, std::uint64_t i)
{
    zxtest::lcg rng(seed * 1000003 + i);
    op o;
    o.value = static_cast<std::int32_t>(seed * 100000 + i + 1);
    if (rng.next() % 8 == 0)
    {
        o.attributes = true;
        return o;
    }
    for (std::size_t d = 0; d < 2; ++d)
    {
        o.region.offset[d] = rng.next() % side;
        o.region.extent[d] = 1 + rng.next() % (side - o.region.offset[d]);
    }
    return o;
}

void apply_op(xt::xtensor<std::int32_t, 2>& state, const op& o)
{
    if (!o.attributes)
    {
        xt::view(state, xt::range(o.region.offset[0], o.region.offset[0] + o.region.extent[0]),
                 xt::range(o.region.offset[1], o.region.offset[1] + o.region.extent[1])) = o.value;
    }
}

/// The attributes an attribute operation writes (the writer and the replay agree on them).
zx::json attributes_of(const op& o)
{
    return {{"last", o.value}, {"padding", std::string(static_cast<std::size_t>(o.value % 4096), 'x')}};
}

/// Temporary files in the store's folders (left by writers killed between creating and renaming one).
int temporary_files(const std::filesystem::path& root)
{
    int n = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(root))
    {
        n += zx::filesystem_store::is_temp_name(e.path().filename().string()) ? 1 : 0;
    }
    return n;
}

/// Shared between the parent and the writer: operations completed.
struct progress
{
    std::atomic<std::uint64_t> completed{0};
};

[[noreturn]] void run_writer(const std::filesystem::path& dir, std::uint64_t seed, progress* p)
{
    try
    {
        zx::filesystem_store s(dir);
        auto a = zx::open<std::int32_t, 2>(s, "a");
        for (std::uint64_t i = 0;; ++i)
        {
            const op o = op_at(seed, i);
            if (o.attributes)
            {
                a.set_attributes(attributes_of(o));
            }
            else
            {
                auto v = xt::xtensor<std::int32_t, 2>::from_shape({o.region.extent[0], o.region.extent[1]});
                v.fill(o.value);
                a.write(o.region, v);
            }
            p->completed.store(i + 1, std::memory_order_release);
        }
    }
    catch (...)
    {
        ::_exit(3);
    }
}

/// Each chunk of `actual` must equal that chunk in `before` or in `after`.
int torn_chunks(const xt::xtensor<std::int32_t, 2>& actual, const xt::xtensor<std::int32_t, 2>& before,
                const xt::xtensor<std::int32_t, 2>& after, std::uint64_t chunk)
{
    int torn = 0;
    for (std::uint64_t r = 0; r < side; r += chunk)
    {
        for (std::uint64_t c = 0; c < side; c += chunk)
        {
            auto box = [&](const xt::xtensor<std::int32_t, 2>& t) {
                return xt::xtensor<std::int32_t, 2>(
                    xt::view(t, xt::range(r, std::min(r + chunk, side)), xt::range(c, std::min(c + chunk, side))));
            };
            const auto a = box(actual);
            if (a != box(before) && a != box(after))
            {
                ++torn;
            }
        }
    }
    return torn;
}

void kill_loop(const char* label, std::function<void(zx::filesystem_store&)> create, std::uint64_t unit, int kills)
{
    zxtest::temp_dir dir("zarrxt-crash");
    zx::filesystem_store s(dir.path());
    create(s);
    auto* p = static_cast<progress*>(::mmap(nullptr, sizeof(progress), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    REQUIRE(p != MAP_FAILED);
    new (p) progress();
    xt::xtensor<std::int32_t, 2> state = xt::zeros<std::int32_t>({side, side});
    zx::json attributes = zx::open<std::int32_t, 2>(s, "a").attributes();
    int total_ops = 0;
    int attribute_checks = 0;
    int kills_mid_write = 0;
    int kills_leaving_temps = 0;
    int kills_partial = 0;
    int temps = temporary_files(dir.path());
    for (int k = 0; k < kills; ++k)
    {
        CAPTURE(label);
        CAPTURE(k);
        const std::uint64_t seed = static_cast<std::uint64_t>(k) + 1;
        p->completed.store(0);
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0)
        {
            run_writer(dir.path(), seed, p);
        }
        // Kill at a random moment: once the writer has completed a random number of operations
        // (0 to 19; waiting for them, not for a fixed time, keeps the test meaningful on a loaded
        // machine), plus a random delay within the next operation or two.
        zxtest::lcg rng(seed * 7919);
        const std::uint64_t target = rng.next() % 20;
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (p->completed.load(std::memory_order_acquire) < target &&
               std::chrono::steady_clock::now() < give_up)
        {
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
        std::this_thread::sleep_for(std::chrono::microseconds(rng.next() % 3000));
        ::kill(pid, SIGKILL);
        int status = 0;
        ::waitpid(pid, &status, 0);
        REQUIRE(WIFSIGNALED(status)); // it was killed, it did not fail on its own
        const std::uint64_t done = p->completed.load();
        total_ops += static_cast<int>(done);

        // Replay: the state after `done` operations, and after the interrupted one.
        for (std::uint64_t i = 0; i < done; ++i)
        {
            const op o = op_at(seed, i);
            apply_op(state, o);
            if (o.attributes)
            {
                attributes = attributes_of(o);
            }
        }
        auto after = state;
        const op interrupted = op_at(seed, done);
        apply_op(after, interrupted);
        const zx::json attributes_after = interrupted.attributes ? attributes_of(interrupted) : attributes;

        // The array opens, its metadata parses, every chunk decodes.
        auto a = zx::open<std::int32_t, 2>(s, "a");
        auto checked = a.read_checked({{0, 0}, {side, side}});
        REQUIRE_MESSAGE(checked.problems.empty(), (checked.problems.empty() ? std::string() : checked.problems.front().message));
        const int torn = torn_chunks(checked.data, state, after, unit);
        REQUIRE(torn == 0);
        const bool partial = !(checked.data == state) && !(checked.data == after);
        // The attributes are the old ones or the new ones, whole.
        const zx::json& got = a.attributes();
        const bool old_or_new = got == attributes || got == attributes_after;
        CHECK_MESSAGE(old_or_new, "attributes " << got.dump().substr(0, 80) << " are neither the old "
                                                << attributes.dump().substr(0, 80) << " nor the new "
                                                << attributes_after.dump().substr(0, 80));
        ++attribute_checks;
        // Whatever the interrupted operation did is now part of the state the next writer starts from.
        state = checked.data;
        attributes = got;
        for (const auto& key : s.list(""))
        {
            REQUIRE(key.find(".zarrxt-tmp-") == std::string::npos);
        }
        // The writer died mid-write when this kill left a temporary file behind (between creating
        // and renaming it), or when the interrupted operation was published for some chunks and
        // not others (every chunk old or new, the region neither).
        const int now = temporary_files(dir.path());
        kills_mid_write += now > temps || partial ? 1 : 0;
        kills_leaving_temps += now > temps ? 1 : 0;
        kills_partial += partial ? 1 : 0;
        temps = now;
    }
    MESSAGE(std::string(label) << ": " << kills << " kills, " << total_ops << " operations completed, "
                               << kills_mid_write << " kills landed mid-write (" << kills_leaving_temps
                               << " left a temporary file behind, " << kills_partial
                               << " left the operation published for some chunks only), "
                               << attribute_checks << " attribute checks");
    CHECK(total_ops > kills); // the writer made progress between kills: the kills hit real work
    CHECK(kills_mid_write > 0); // and some of them hit a write in progress
    ::munmap(p, sizeof(progress));
}

} // namespace

TEST_SUITE("crash safety")
{
    TEST_CASE("SIGKILLed writers never leave torn chunks, shards or metadata")
    {
        if (zxtest::env("ZARRXT_SANITIZE") == "1")
        {
            ZX_SKIP("fork + SIGKILL under ASan is too slow to be meaningful here; covered by the release build");
        }
        kill_loop(
            "v2 zlib",
            [](zx::filesystem_store& s) {
                zx::create<std::int32_t, 2>(s, "a", zx::v2_options{.shape = {side, side}, .chunks = {16, 16},
                                                                  .compressor = zx::codec_spec("zlib", {{"level", 1}})});
            },
            16, 70);
        kill_loop(
            "v3 zstd crc32c",
            [](zx::filesystem_store& s) {
                zx::create<std::int32_t, 2>(
                    s, "a",
                    zx::v3_options{.shape = {side, side}, .chunk_shape = {16, 16},
                                   .codecs = {zx::codec_spec("bytes", {{"endian", "little"}}), zx::codec_spec("zstd"), zx::codec_spec("crc32c")}});
            },
            16, 70);
        kill_loop(
            "v3 sharded",
            [](zx::filesystem_store& s) {
                zx::create<std::int32_t, 2>(s, "a",
                                            zx::v3_options{.shape = {side, side}, .chunk_shape = {24, 24},
                                                           .codecs = {zx::sharded({8, 8})}});
            },
            24, 70);
    }
}
