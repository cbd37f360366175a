// The error hierarchy: ids, context attached on the way out, and message layout.
#include "test_support.hpp"

#include <zarrxt/error.hpp>

namespace zx = zarrxt;

TEST_SUITE("error")
{
    TEST_CASE("ids are stable and context is appended once")
    {
        zx::codec_error e(zx::codec_errc::size_mismatch, "zstd", "frame decodes to 4096 bytes, expected 8192");
        CHECK(e.id() == "zarrxt.codec.2");
        CHECK(std::string(e.what()) == "[zarrxt.codec.2] zstd: frame decodes to 4096 bytes, expected 8192");
        e.with_key("labels/c/0/1/2");
        e.with_key("outer/key"); // the innermost context wins
        e.with_range(100, 50);
        CHECK(std::string(e.what())
              == "[zarrxt.codec.2] zstd: frame decodes to 4096 bytes, expected 8192 (key \"labels/c/0/1/2\", bytes "
                 "100..150)");
        CHECK(e.key() == "labels/c/0/1/2");
        CHECK(e.stage() == "zstd");
        CHECK(e.range()->offset == 100);
    }

    TEST_CASE("subclasses carry their category and can be caught as zarrxt::error")
    {
        try
        {
            throw zx::dtype_mismatch("stored int16, requested float32");
        }
        catch (const zx::array_error& e)
        {
            CHECK(e.id() == "zarrxt.array.1");
        }
        zx::limit_exceeded l("max_chunk_bytes", 10, 5);
        CHECK(std::string(l.what()) == "[zarrxt.limit.1] max_chunk_bytes would be 10, limit is 5");
        CHECK(l.limit_name() == "max_chunk_bytes");
        zx::shard_error s(zx::shard_errc::entry_out_of_range, "x");
        CHECK(s.id() == "zarrxt.shard.1");
        CHECK(s.stage() == "sharding_indexed");
        // Rethrowing after adding context keeps the dynamic type.
        try
        {
            try
            {
                throw zx::codec_error(zx::codec_errc::checksum_mismatch, "crc32c", "bad");
            }
            catch (zx::error& inner)
            {
                inner.with_key("k");
                throw;
            }
        }
        catch (const zx::codec_error& outer)
        {
            CHECK(outer.key() == "k");
        }
    }
}
