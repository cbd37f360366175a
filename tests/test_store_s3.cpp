// s3_store (store/s3.hpp) against a real S3 server on loopback: s3rver behind a proxy that checks
// every SigV4 signature with the AWS SDK's signer (tests/support/s3_servers.hpp). What zarrxt
// writes is read back by the AWS SDK for JavaScript and by zarrita over plain HTTP; what the SDK
// uploads is read by zarrxt.
#include "../tools/sha256.hpp"
#include "expect_error.hpp"
#include "s3_servers.hpp"
#include "store_conformance.hpp"
#include "test_support.hpp"

#if ZARRXT_HAS_S3
#include <zarrxt/store/open_store.hpp>
#include <zarrxt/store/s3.hpp>
#include <zarrxt/store/zip_writer.hpp>
#include <zarrxt/zarrxt.hpp>

#include <xtensor/xview.hpp>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace zx = zarrxt;

namespace
{

zx::s3_options options_for(const zxtest::s3_server& server,
                           std::string secret = zxtest::s3_server::secret_key)
{
    zx::s3_options o;
    o.endpoint = server.endpoint();
    o.region = zxtest::s3_server::region;
    o.access_key_id = zxtest::s3_server::access_key;
    o.secret_access_key = std::move(secret);
    o.http.retry_base = std::chrono::milliseconds(5);
    o.http.retry_cap = std::chrono::milliseconds(20);
    o.http.request_timeout = std::chrono::milliseconds(10000);
    o.http.deadline = std::chrono::milliseconds(30000);
    return o;
}

/// The proxy's counts: requests whose signature it checked, and refused.
zx::json proxy_stats(const zxtest::s3_server& server)
{
    const zx::http_store h(server.endpoint());
    auto b = zx::get(h, "__proxy/stats");
    REQUIRE(b.has_value());
    return zx::json::parse(std::string(reinterpret_cast<const char*>(b->data()), b->size()));
}

/// `node tests/peers/s3_peer.mjs ARGS` with the test's credentials.
zxtest::command_result s3_peer(const std::string& args,
                               const std::string& secret = zxtest::s3_server::secret_key)
{
    const std::string script = zxtest::env("ZARRXT_SOURCE_DIR") + "/tests/peers/s3_peer.mjs";
    return zxtest::run("NODE_NO_WARNINGS=1 AWS_ACCESS_KEY_ID=" + std::string(zxtest::s3_server::access_key) +
                       " AWS_SECRET_ACCESS_KEY=" + zxtest::quote(secret) +
                       " ZARRXT_NODE_MODULES=" + zxtest::quote(zxtest::env("ZARRXT_NODE_MODULES")) +
                       " node " + zxtest::quote(script) + " " + args);
}

/// Elements of `a` C order, little-endian, SHA-256's first 16 hex digits (the peers' digest).
template <class T, std::size_t N, class A>
std::string digest_of(const A& a)
{
    const auto v = a.read();
    zarrxt_tool::sha256 h;
    h.update(v.data(), v.size() * sizeof(T));
    return zarrxt_tool::sha256::hex(h.finish(), 16);
}

/// Environment variables set or cleared by a test, all put back when it ends.
struct saved_env
{
    std::vector<std::pair<std::string, std::optional<std::string>>> old;
    void set(const char* name, const char* value)
    {
        const char* v = std::getenv(name);
        old.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
        if (value)
        {
            ::setenv(name, value, 1);
        }
        else
        {
            ::unsetenv(name);
        }
    }
    ~saved_env()
    {
        for (auto it = old.rbegin(); it != old.rend(); ++it)
        {
            if (it->second)
            {
                ::setenv(it->first.c_str(), it->second->c_str(), 1);
            }
            else
            {
                ::unsetenv(it->first.c_str());
            }
        }
    }
};

/// An HTTP/1.1 answer for zxtest::canned_server.
std::string http_answer(int status, const std::string& body)
{
    return "HTTP/1.1 " + std::to_string(status) + (status == 200 ? " OK" : " Refused") +
           "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

/// The UTC time `in` from now as AWS writes it ("2026-12-07T23:59:59Z").
std::string utc_in(std::chrono::seconds in)
{
    const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now() + in);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return when;
}

/// What STS answers AssumeRoleWithWebIdentity: credentials expiring `in` from now.
std::string sts_document(const std::string& secret, std::chrono::seconds in)
{
    return R"(<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">)"
           "<AssumeRoleWithWebIdentityResult><SubjectFromWebIdentityToken>system:serviceaccount:ns:reader"
           "</SubjectFromWebIdentityToken><Credentials><SessionToken>session-token-for-the-test</"
           "SessionToken>"
           "<SecretAccessKey>" +
           secret + "</SecretAccessKey><Expiration>" + utc_in(in) + "</Expiration><AccessKeyId>" +
           zxtest::s3_server::access_key +
           "</AccessKeyId></Credentials></AssumeRoleWithWebIdentityResult></"
           "AssumeRoleWithWebIdentityResponse>";
}

/// What the container and instance metadata endpoints answer: credentials expiring `in` from now.
std::string credentials_document(const std::string& secret, std::chrono::seconds in)
{
    const std::string when = utc_in(in);
    return std::string(R"({"Code": "Success", "Type": "AWS-HMAC", "AccessKeyId": ")") +
           zxtest::s3_server::access_key + R"(", "SecretAccessKey": ")" + secret +
           R"(", "Token": "session-token-for-the-test", "Expiration": ")" + when + R"("})";
}

} // namespace

TEST_SUITE("remote")
{
    TEST_CASE("s3_store against s3rver: the store contract, signed requests, every listing page")
    {
        zxtest::s3_server server({"zarr"});
        ZX_REQUIRE_SERVER(server);
        zx::s3_options o = options_for(server);
        o.list_page_size = 4; // listings below need several pages
        zx::s3_store s("zarr", "conformance", o);
        CHECK(s.signs_requests());
        CHECK(s.url() == "s3://zarr/conformance");
        zxtest::store_conformance(s, false);

        // More keys than pages hold: every page is read (continuation tokens), keys are exact.
        std::vector<std::string> want;
        for (int i = 0; i < 23; ++i)
        {
            const std::string k = "many/k" + std::to_string(100 + i) + (i % 3 == 0 ? "/x" : "");
            s.set(k, zx::as_bytes(k));
            want.push_back(k);
        }
        std::sort(want.begin(), want.end());
        CHECK(s.list("many") == want);
        // s3rver 3.7 drops common prefixes from delimited listings that span pages, and those of
        // keys two or more levels deeper than the prefix (real S3 does neither): list_dir is checked
        // on one page, over keys at most one level deeper.
        zx::s3_store one_page("zarr", "conformance", options_for(server));
        const auto dir = one_page.list_dir("many");
        CHECK(dir.size() == 23);
        CHECK(dir.front() == "k100");
        const auto top = one_page.list_dir("");
        CHECK(std::find(top.begin(), top.end(), std::string("many")) != top.end());
        // Keys of another prefix of the bucket are not this store's.
        zx::s3_store other("zarr", "elsewhere", o);
        other.set("many/k999", zx::as_bytes("x"));
        CHECK(s.list("many") == want);
        CHECK(other.list("") == std::vector<std::string>{"many/k999"});

        // Every request was signed and every signature checked by the AWS SDK's signer.
        const auto st = proxy_stats(server);
        CHECK(st.at("checked").get<int>() > 50);
        CHECK(st.at("refused").get<int>() == 0);
    }

    TEST_CASE("s3_store: a wrong secret is a typed authentication error, never data or a silent success")
    {
        zxtest::s3_server server({"zarr"});
        ZX_REQUIRE_SERVER(server);
        zx::s3_store good("zarr", "", options_for(server));
        good.set("a/b", zx::as_bytes("content"));
        const std::string wrong_secret = "not-the-secret-4f1c";
        zx::s3_store bad("zarr", "", options_for(server, wrong_secret));
        for (int op = 0; op < 4; ++op)
        {
            CAPTURE(op);
            auto e = zxtest::expect_error<zx::store_error>(
                [&]
                {
                    switch (op)
                    {
                        case 0:
                            bad.read("a/b", zx::byte_range::all(), 1 << 20);
                            break;
                        case 1:
                            bad.set("a/b", zx::as_bytes("overwritten"));
                            break;
                        case 2:
                            bad.list("a");
                            break;
                        default:
                            bad.stat("a/b");
                            break;
                    }
                },
                "zarrxt.store.8", op == 2 ? "a" : "a/b");
            if (e)
            {
                const std::string what = e->what();
                CHECK(what.find(wrong_secret) == std::string::npos);
                CHECK(what.find(zxtest::s3_server::secret_key) == std::string::npos);
                if (op != 3) // a HEAD answer has no body to quote
                {
                    CHECK(what.find("SignatureDoesNotMatch") != std::string::npos);
                }
            }
        }
        // Nothing was written by the refused PUT.
        auto r = good.read("a/b", zx::byte_range::all(), 1 << 20);
        REQUIRE(r.has_value());
        CHECK(zxtest::as_string(r->bytes) == "content");
        // The independent client agrees: a wrong secret is refused, the right one reads.
        zxtest::temp_dir d("zarrxt-s3-peer");
        CHECK(s3_peer("download " + server.endpoint() + " zarr a " + zxtest::quote(d.path().string()),
                      wrong_secret)
                  .status != 0);
        const auto ok =
            s3_peer("download " + server.endpoint() + " zarr a " + zxtest::quote(d.path().string()));
        CHECK_MESSAGE(ok.status == 0, ok.output);
        CHECK(zxtest::read_file(d.path() / "b") == "content");
    }

    TEST_CASE("arrays on S3: written by zarrxt, read back by zarrxt, the AWS SDK and zarrita; all-fill "
              "chunks deleted")
    {
        zxtest::s3_server server({"zarr"});
        ZX_REQUIRE_SERVER(server);
        zx::s3_store s("zarr", "data/volume.zarr", options_for(server));
        xt::xtensor<std::int32_t, 2> a = xt::xtensor<std::int32_t, 2>::from_shape({60, 50});
        for (std::size_t i = 0; i < a.size(); ++i)
        {
            a.data()[i] = static_cast<std::int32_t>((i * 2654435761u) % 100003) - 50000;
        }
        auto sharded = zx::create<std::int32_t, 2>(
            s, "sharded",
            zx::v3_options{.shape = {60, 50},
                           .chunk_shape = {32, 32},
                           .codecs = {zx::sharded({8, 16}, {zx::codec_spec("bytes", {{"endian", "little"}}),
                                                            zx::codec_spec("zstd", {{"level", 1}})})}});
        sharded.write({{0, 0}, {60, 50}}, a);
        auto plain = zx::create<float, 2>(
            s, "plain", zx::v3_options{.shape = {60, 50}, .chunk_shape = {20, 25}, .fill_value = 0.0});
        const xt::xtensor<float, 2> f = xt::cast<float>(a) * 0.25f;
        plain.write({{0, 0}, {60, 50}}, f);
        auto v2 = zx::create<std::int32_t, 2>(s, "v2", zx::v2_options{.shape = {60, 50}, .chunks = {16, 16}});
        v2.write({{0, 0}, {60, 50}}, a);

        // zarrxt reads its writes back through S3 (a fresh store handle: nothing cached).
        zx::s3_store fresh("zarr", "data/volume.zarr", options_for(server));
        CHECK(zx::open<std::int32_t, 2>(fresh, "sharded").read() == a);
        CHECK(zx::open<std::int32_t, 2>(fresh, "sharded").read({{5, 7}, {40, 20}}) ==
              xt::xtensor<std::int32_t, 2>(xt::view(a, xt::range(5, 45), xt::range(7, 27))));
        CHECK(zx::open<float, 2>(fresh, "plain").read() == f);
        CHECK(zx::open<std::int32_t, 2>(fresh, "v2").read() == a);

        // A chunk rewritten with only the fill value is deleted from the bucket.
        CHECK(fresh.stat("plain/c/1/1").has_value());
        plain.write({{20, 25}, {20, 25}}, xt::xtensor<float, 2>(xt::zeros<float>({20, 25})));
        CHECK_FALSE(fresh.stat("plain/c/1/1").has_value());
        xt::xtensor<float, 2> f2 = f;
        xt::view(f2, xt::range(20, 40), xt::range(25, 50)) = 0.0f;
        CHECK(zx::open<float, 2>(fresh, "plain").read() == f2);

        // The AWS SDK downloads every object; zarrxt reads the copy from disk: the same arrays.
        zxtest::temp_dir d("zarrxt-s3-download");
        const auto dl = s3_peer("download " + server.endpoint() + " zarr data/volume.zarr " +
                                zxtest::quote(d.path().string()));
        REQUIRE_MESSAGE(dl.status == 0, dl.output);
        zx::filesystem_store local{d.path().string()};
        CHECK(zx::open<std::int32_t, 2>(local, "sharded").read() == a);
        CHECK(zx::open<float, 2>(local, "plain").read() == f2);
        CHECK(zx::open<std::int32_t, 2>(local, "v2").read() == a);

        // zarrita reads the v3 arrays over plain HTTP (unsigned GETs and ranges, the shard index
        // by a suffix range) to the digest of zarrxt's values.
        const std::string url = server.endpoint() + "/zarr/data/volume.zarr";
        for (const char* name : {"sharded", "plain"})
        {
            CAPTURE(name);
            const auto z = s3_peer("zarrita-digest " + zxtest::quote(url) + " " + name);
            REQUIRE_MESSAGE(z.status == 0, z.output);
            const std::string want = std::string(name) == "sharded"
                                         ? digest_of<std::int32_t, 2>(zx::open<std::int32_t, 2>(fresh, name))
                                         : digest_of<float, 2>(zx::open<float, 2>(fresh, name));
            CHECK(z.output.substr(0, 16) == want);
        }
    }

    TEST_CASE("s3_store reads what the AWS SDK uploaded (an array written by zarrxt to disk, uploaded by "
              "another client)")
    {
        zxtest::s3_server server({"zarr"});
        ZX_REQUIRE_SERVER(server);
        zxtest::temp_dir d("zarrxt-s3-upload");
        xt::xtensor<std::uint16_t, 3> a = xt::xtensor<std::uint16_t, 3>::from_shape({9, 10, 11});
        for (std::size_t i = 0; i < a.size(); ++i)
        {
            a.data()[i] = static_cast<std::uint16_t>(i * 37 % 65521);
        }
        {
            zx::filesystem_store fs{d.path().string()};
            auto arr = zx::create<std::uint16_t, 3>(
                fs, "grp/arr",
                zx::v3_options{
                    .shape = {9, 10, 11},
                    .chunk_shape = {9, 10, 12},
                    .codecs = {zx::sharded({3, 5, 4}, {zx::codec_spec("bytes", {{"endian", "big"}})})}});
            arr.write({{0, 0, 0}, {9, 10, 11}}, a);
        }
        const auto up =
            s3_peer("upload " + zxtest::quote(d.path().string()) + " " + server.endpoint() + " zarr up.zarr");
        REQUIRE_MESSAGE(up.status == 0, up.output);
        zx::s3_store s("zarr", "up.zarr", options_for(server));
        auto g = zx::group<zx::s3_store>::open(s, "grp");
        REQUIRE(g.children().size() == 1);
        CHECK(g.children()[0].name == "arr");
        auto arr = zx::open<std::uint16_t, 3>(s, "grp/arr");
        CHECK(arr.read() == a);
        // One inner chunk of the uncompressed shard: the index by one suffix request, then one range.
        const auto before = s.requests_started();
        CHECK(arr.read({{3, 5, 4}, {3, 5, 4}}) ==
              xt::xtensor<std::uint16_t, 3>(xt::view(a, xt::range(3, 6), xt::range(5, 10), xt::range(4, 8))));
        CHECK(s.requests_started() - before <= 3);
    }

    TEST_CASE("open_store: s3:// and https:// URLs give stores that arrays and groups accept")
    {
        zxtest::s3_server server({"zarr"});
        ZX_REQUIRE_SERVER(server);
        zx::store_options so;
        so.s3 = options_for(server);
        zx::any_store s = zx::open_store("s3://zarr/via/url.zarr", so);
        CHECK(s.describe() == "s3://zarr/via/url.zarr");
        CHECK(s.writable());
        auto a = zx::create<std::uint8_t, 1>(s, "a", zx::v2_options{.shape = {1000}, .chunks = {300}});
        a.write({{0}, {1000}},
                xt::xtensor<std::uint8_t, 1>(xt::cast<std::uint8_t>(xt::arange<int>(1000) % 251)));
        zx::s3_store direct("zarr", "via/url.zarr", options_for(server));
        CHECK(zx::open<std::uint8_t, 1>(direct, "a").read() == a.read());
        CHECK(zx::group<zx::any_store>::open(s, "").children().size() == 1);

        // The same objects over plain HTTP (unsigned GETs): read-only, not listable, typed errors.
        zx::any_store web = zx::open_store(server.endpoint() + "/zarr/via/url.zarr");
        CHECK_FALSE(web.writable());
        CHECK(zx::open<std::uint8_t, 1>(web, "a").read() == a.read());
        ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.7", "/",
                        zx::group<zx::any_store>::open(web, "").children());
        ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.9", "a/0",
                        zx::open<std::uint8_t, 1>(web, "a").write(
                            {{0}, {10}}, xt::xtensor<std::uint8_t, 1>(xt::zeros<std::uint8_t>({10}))));
    }

    TEST_CASE(
        "the zarrxt tool takes URLs: hash over http://, convert to and from s3://, info and tree of s3://")
    {
        const std::string tool = zxtest::env("ZARRXT_TOOL");
        if (tool.empty())
        {
            ZX_SKIP("ZARRXT_TOOL not set (built without tools)");
        }
        const std::filesystem::path corpus = zxtest::env("ZARRXT_CORPUS");
        if (corpus.empty() || !std::filesystem::exists(corpus / "MANIFEST.jsonl"))
        {
            ZX_SKIP_CORPUS("no conformance corpus ($ZARRXT_CORPUS/MANIFEST.jsonl)");
        }
        // Arrays other implementations wrote, served by nginx: `zarrxt hash http://...` gives the
        // digest the manifest agreed on.
        zxtest::nginx_server nginx(corpus);
        ZX_REQUIRE_SERVER(nginx);
        std::istringstream lines(zxtest::read_file(corpus / "MANIFEST.jsonl"));
        std::string line;
        int hashed = 0;
        std::string v2_path;
        while (std::getline(lines, line) && hashed < 12)
        {
            const auto entry = zx::json::parse(line);
            if (entry.at("digest").is_null() ||
                entry.value("notes", std::string()).find("refused") != std::string::npos)
            {
                continue;
            }
            const std::string path = entry.at("path").get<std::string>();
            const auto r = zxtest::run(zxtest::quote(tool) + " hash " + zxtest::quote(nginx.url(path)));
            if (r.status != 0)
            {
                continue; // the arrays zarrxt refuses on disk too (the corpus test covers them)
            }
            CAPTURE(path);
            CHECK(r.output.substr(0, 16) == entry.at("digest").get<std::string>());
            if (v2_path.empty() && entry.at("zarr_format") == 2)
            {
                v2_path = path;
            }
            ++hashed;
        }
        CHECK(hashed >= 10);
        REQUIRE_FALSE(v2_path.empty());

        zxtest::s3_server server({"zarr"});
        ZX_REQUIRE_SERVER(server);
        const std::string env_vars = "AWS_ACCESS_KEY_ID=" + std::string(zxtest::s3_server::access_key) +
                                     " AWS_SECRET_ACCESS_KEY=" + zxtest::s3_server::secret_key +
                                     " AWS_REGION=us-east-1 AWS_ENDPOINT_URL=" + server.endpoint() + " ";
        // http -> s3 (convert to v3 sharded), then s3 -> local: the values survive both hops.
        const auto local_hash =
            zxtest::run(zxtest::quote(tool) + " hash " + zxtest::quote((corpus / v2_path).string()));
        REQUIRE(local_hash.status == 0);
        auto conv =
            zxtest::run(env_vars + zxtest::quote(tool) + " convert " + zxtest::quote(nginx.url(v2_path)) +
                        " s3://zarr/converted.zarr --zarr-format 3 --no-progress");
        REQUIRE_MESSAGE(conv.status == 0, conv.output);
        auto h = zxtest::run(env_vars + zxtest::quote(tool) + " hash s3://zarr/converted.zarr");
        CHECK_MESSAGE(h.output == local_hash.output, h.output);
        zxtest::temp_dir d("zarrxt-tool-s3");
        conv = zxtest::run(env_vars + zxtest::quote(tool) + " convert s3://zarr/converted.zarr " +
                           zxtest::quote((d.path() / "back.zarr").string()));
        REQUIRE_MESSAGE(conv.status == 0, conv.output);
        h = zxtest::run(zxtest::quote(tool) + " hash " + zxtest::quote((d.path() / "back.zarr").string()));
        CHECK(h.output == local_hash.output);
        // info and tree list the bucket; no credential is printed.
        const auto info = zxtest::run(env_vars + zxtest::quote(tool) + " info s3://zarr/converted.zarr");
        CHECK_MESSAGE(info.status == 0, info.output);
        CHECK(info.output.find("zarr_format: 3") != std::string::npos);
        CHECK(info.output.find("stored_bytes: ") != std::string::npos);
        CHECK(info.output.find(zxtest::s3_server::secret_key) == std::string::npos);
        const auto tree = zxtest::run(env_vars + zxtest::quote(tool) + " verify s3://zarr/converted.zarr");
        CHECK_MESSAGE(tree.status == 0, tree.output);
        // A wrong secret: the typed error, exit status 1, and the secret nowhere.
        const auto bad =
            zxtest::run("AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=wrong-secret-77 AWS_REGION=us-east-1 "
                        "AWS_ENDPOINT_URL=" +
                        server.endpoint() + " " + zxtest::quote(tool) + " hash s3://zarr/converted.zarr");
        CHECK(bad.status == 1);
        CHECK(bad.output.find("[zarrxt.store.8]") != std::string::npos);
        CHECK(bad.output.find("wrong-secret-77") == std::string::npos);
        // Writing to plain HTTP is refused with the typed error.
        const auto ro =
            zxtest::run(zxtest::quote(tool) + " convert " + zxtest::quote((corpus / v2_path).string()) + " " +
                        zxtest::quote(nginx.url("new.zarr")));
        CHECK(ro.status == 1);
        CHECK(ro.output.find("[zarrxt.store.9]") != std::string::npos);

        // A zip archive as one object of the bucket: converted there and back, the values survive.
        const std::string zipped = "s3://zarr/zipped/x.zarr.zip";
        conv = zxtest::run(env_vars + zxtest::quote(tool) + " convert " +
                           zxtest::quote((corpus / v2_path).string()) + " " + zipped + " --no-progress");
        REQUIRE_MESSAGE(conv.status == 0, conv.output);
        h = zxtest::run(env_vars + zxtest::quote(tool) + " hash " + zipped);
        CHECK_MESSAGE(h.output == local_hash.output, h.output);
        conv = zxtest::run(env_vars + zxtest::quote(tool) + " convert " +
                           zxtest::quote((corpus / v2_path).string()) + " " + zipped + " --no-progress");
        CHECK(conv.status == 1);
        CHECK_MESSAGE(conv.output.find("[zarrxt.array.6]") != std::string::npos, conv.output);
        conv = zxtest::run(env_vars + zxtest::quote(tool) + " convert " + zipped + " " +
                           zxtest::quote((d.path() / "from_zip.zarr").string()));
        REQUIRE_MESSAGE(conv.status == 0, conv.output);
        h = zxtest::run(zxtest::quote(tool) + " hash " +
                        zxtest::quote((d.path() / "from_zip.zarr").string()));
        CHECK(h.output == local_hash.output);
        // A server that cannot store it is refused before the conversion starts.
        const auto ro_zip =
            zxtest::run(zxtest::quote(tool) + " convert " + zxtest::quote((corpus / v2_path).string()) + " " +
                        zxtest::quote(nginx.url("new.zarr.zip")));
        CHECK(ro_zip.status == 1);
        CHECK_MESSAGE(ro_zip.output.find("[zarrxt.store.9]") != std::string::npos, ro_zip.output);
    }

    TEST_CASE("s3_store: an object above multipart_threshold is a multipart upload, its parts in flight "
              "together; posted chunk writes too")
    {
        zxtest::s3_server server({"zarr"});
        ZX_REQUIRE_SERVER(server);
        zx::s3_options o = options_for(server);
        o.multipart_threshold = 6u << 20;
        o.multipart_part_size = 1u << 20; // below S3's minimum: 5 MiB parts are sent
        const zx::s3_store s("zarr", "mp", o);
        std::vector<std::byte> data((17u << 20) + 123);
        std::uint64_t x = 88172645463325252ull;
        for (auto& b : data)
        {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b = static_cast<std::byte>(x);
        }
        const auto before = proxy_stats(server).at("requests");
        const auto count = [](const zx::json& j, const char* k) { return j.value(k, 0); };
        zx::s3_store writer = s;
        writer.set("big/object", zx::byte_view(data));
        auto after = proxy_stats(server).at("requests");
        CHECK(count(after, "POST uploads") - count(before, "POST uploads") == 1);
        CHECK(count(after, "PUT part") - count(before, "PUT part") == 4); // 5 + 5 + 5 + 2 MiB and 123 bytes
        CHECK(count(after, "POST uploadId") - count(before, "POST uploadId") == 1);
        CHECK(count(after, "PUT") == count(before, "PUT")); // no single PUT of the object
        CHECK(writer.peak_in_flight() >= 2);
        const auto back = zx::get(s, "big/object");
        REQUIRE(back.has_value());
        CHECK(back->size() == data.size());
        CHECK((back->size() == data.size() && std::equal(data.begin(), data.end(), back->data())));
        // At the threshold or below: one PUT.
        writer.set("small", zx::byte_view(data).first(6u << 20));
        CHECK(count(proxy_stats(server).at("requests"), "PUT") == count(before, "PUT") + 1);
        CHECK(zx::get(s, "small")->size() == (6u << 20));

        // An array whose (uncompressed) chunk is larger than the threshold: the write kernel posts
        // it, and the posted write is a multipart upload too.
        auto a = zx::create<float, 2>(writer, "arr",
                                      zx::v3_options{.shape = {1024, 2048},
                                                     .chunk_shape = {1024, 2048},
                                                     .codecs = {zx::codec::bytes{}}});
        xt::xtensor<float, 2> v = xt::xtensor<float, 2>::from_shape({1024, 2048});
        for (std::size_t i = 0; i < v.size(); ++i)
        {
            v.data()[i] = static_cast<float>(i % 1000003) * 0.5f;
        }
        const auto uploads = count(proxy_stats(server).at("requests"), "POST uploads");
        a.write({{0, 0}, {1024, 2048}}, v);
        CHECK(count(proxy_stats(server).at("requests"), "POST uploads") == uploads + 1);
        CHECK(zx::open<float, 2>(s, "arr").read() == v);

        // The completion's answer lost on the way: the retry is refused (s3rver answers 500, AWS
        // NoSuchUpload; before the check below this write failed with store.4 after 5 attempts),
        // but the object is stored whole, so the write succeeds (its ETag is checked against ours).
        std::reverse(data.begin(), data.end());
        (void)zx::get(zx::http_store(server.endpoint()), "__proxy/lose-next-completion");
        writer.set("big/lost-answer", zx::byte_view(data));
        CHECK(proxy_stats(server).at("lost_completions") == 1);
        const auto kept = zx::get(s, "big/lost-answer");
        REQUIRE(kept.has_value());
        CHECK((kept->size() == data.size() && std::equal(data.begin(), data.end(), kept->data())));
        // Not when the key holds something else (an upload aborted meanwhile, the key holding an
        // earlier object of the same size): the failure stands, and the earlier object is kept.
        std::reverse(data.begin(), data.end());
        const auto refusals = proxy_stats(server).at("reasons").value("NoSuchUpload", 0);
        (void)zx::get(zx::http_store(server.endpoint()), "__proxy/refuse-next-completion");
        ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.4", "big/lost-answer",
                        writer.set("big/lost-answer", zx::byte_view(data)));
        CHECK(proxy_stats(server).at("reasons").value("NoSuchUpload", 0) == refusals + 1);
        const auto earlier = zx::get(s, "big/lost-answer");
        REQUIRE(earlier.has_value());
        CHECK((earlier->size() == data.size() && std::equal(data.rbegin(), data.rend(), earlier->data())));

        // A bucket that does not exist: the typed error, and no object anywhere.
        zx::s3_options m = o;
        m.http.max_retries = 0;
        zx::s3_store missing("no-such-bucket", "", m);
        CHECK_THROWS_AS(missing.set("big", zx::byte_view(data)), zx::store_error);
        // The signature of every step was checked and none refused but the planted NoSuchUpload.
        CHECK(proxy_stats(server).at("refused") == 1);
    }

    TEST_CASE("s3_store: the ETag AWS gives the object of a multipart upload, from its parts' ETags")
    {
        // Reference values from Python's hashlib: the MD5s of b"first part" and b"second part",
        // and the MD5 of their two 16-byte digests one after the other, then "-2".
        CHECK(zx::detail::multipart_etag(
                  {"\"550cf6b6e60f65a0e3104a26e70fea42\"", "920B914BCA0A70780B40881B8F376135"}) ==
              "2f2f82eceacf5bd0ac5d7c3d3d388849-2");
        // Parts whose ETags are not MD5s (SSE-KMS, SSE-C) make no ETag to compare with.
        CHECK(zx::detail::multipart_etag({"550cf6b6e60f65a0e3104a26e70fea42", "kms-etag"}).empty());
        CHECK(zx::detail::multipart_etag({"550cf6b6e60f65a0e3104a26e70fea4g"}).empty());
        CHECK(zx::detail::unquoted_etag("W/\"abc\"") == "abc");
        CHECK(zx::detail::unquoted_etag("abc") == "abc");
    }

    TEST_CASE("zip_writer publishes an archive as one object of a bucket: absent until commit, the same "
              "bytes as a local archive, read back through s3:// URLs")
    {
        zxtest::s3_server server({"zarr"});
        ZX_REQUIRE_SERVER(server);
        const zx::s3_store bucket("zarr", "", options_for(server));
        xt::xtensor<std::uint16_t, 2> values = xt::xtensor<std::uint16_t, 2>::from_shape({40, 30});
        for (std::size_t i = 0; i < values.size(); ++i)
        {
            values.data()[i] = static_cast<std::uint16_t>((i * 40503u) & 0xffffu);
        }
        // The same hierarchy through any writer: a group with an attribute and a sharded array.
        const auto fill = [&](auto& w)
        {
            auto g = zx::group<std::decay_t<decltype(w)>>::create(w, "");
            g.set_attributes({{"made_by", "zarrxt"}});
            auto a = zx::create<std::uint16_t, 2>(
                w, "a",
                zx::v3_options{
                    .shape = {40, 30},
                    .chunk_shape = {20, 30},
                    .codecs = {zx::sharded({10, 15}, {zx::codec::bytes{}, zx::codec::zstd{.level = 1}})}});
            a.write({{0, 0}, {40, 30}}, values);
        };
        const std::string marker = ".h.zarr.zip.zarrxt-staging-" + std::to_string(::getpid()) + "-";
        const auto scratch_left = [&]
        {
            int n = 0;
            for (const auto& e : std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
            {
                n += e.path().filename().string().rfind(marker, 0) == 0;
            }
            return n;
        };
        {
            zx::zip_writer w(bucket, "zips/h.zarr.zip");
            fill(w);
            CHECK(scratch_left() >= 1);
            CHECK_FALSE(bucket.stat("zips/h.zarr.zip").has_value()); // nothing is published before commit
            const std::filesystem::path packed = w.destination();
            CHECK(w.commit() == 4); // zarr.json, a/zarr.json, two shards
            CHECK(w.committed());
            CHECK_FALSE(std::filesystem::exists(packed)); // the packed file went after the PUT
            ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.9", "a/c/0/0", w.set("a/c/0/0", zx::byte_view()));
        }
        CHECK(scratch_left() == 0); // and the staging directory with the writer

        // Deterministic archives: the object holds exactly what a local writer packs.
        zxtest::temp_dir d("zarrxt-zip-s3");
        {
            zx::zip_writer local(d.path() / "h.zarr.zip");
            fill(local);
            local.commit();
        }
        const auto object = zx::get(bucket, "zips/h.zarr.zip");
        REQUIRE(object.has_value());
        const std::string file = zxtest::read_file(d.path() / "h.zarr.zip");
        CHECK(std::string(reinterpret_cast<const char*>(object->data()), object->size()) == file);

        // Read back by range through URLs: the archive, and a node inside it.
        zx::store_options so;
        so.s3 = options_for(server);
        auto z = zx::open_store("s3://zarr/zips/h.zarr.zip", so);
        CHECK(zx::open<std::uint16_t, 2>(z, "a").read() == values);
        CHECK(zx::group<zx::any_store>::open(z, "").attributes() == zx::json{{"made_by", "zarrxt"}});
        CHECK(zx::open<std::uint16_t, 2>(zx::open_store("s3://zarr/zips/h.zarr.zip/a", so), "").read() ==
              values);

        // A commit whose PUT fails throws, publishes nothing, leaves no packed file, and can be
        // retried once the target is there.
        zx::s3_options missing = options_for(server);
        missing.http.max_retries = 0;
        zx::zip_writer w(zx::s3_store("no-such-bucket", "", missing), "x.zarr.zip");
        fill(w);
        CHECK_THROWS_AS(w.commit(), zx::store_error);
        CHECK_FALSE(w.committed());
        CHECK_FALSE(std::filesystem::exists(w.destination()));
        // A bad key is refused when the writer is made, not at commit.
        ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.1", "../x.zip", zx::zip_writer(bucket, "../x.zip"));
    }

    TEST_CASE("s3_store: URLs, addressing and credentials from the standard variables")
    {
        // No server needed: what the store would send, and where.
        zx::s3_options o;
        o.region = "eu-west-2";
        o.access_key_id = "AKIDEXAMPLE";
        o.secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
        const auto v = zx::s3_store::from_url("s3://my-bucket/path/to/x.zarr", o);
        CHECK(v.bucket() == "my-bucket");
        CHECK(v.prefix() == "path/to/x.zarr");
        CHECK(v.base_url() == "https://my-bucket.s3.eu-west-2.amazonaws.com/path/to/x.zarr");
        // A bucket name with dots cannot be a TLS host label: path style.
        CHECK(zx::s3_store("my.bucket", "", o).base_url() == "https://s3.eu-west-2.amazonaws.com/my.bucket");
        o.addressing = zx::s3_addressing::path;
        CHECK(zx::s3_store("my-bucket", "p", o).base_url() ==
              "https://s3.eu-west-2.amazonaws.com/my-bucket/p");
        o.endpoint = "http://127.0.0.1:9000/";
        o.addressing = zx::s3_addressing::automatic;
        CHECK(zx::s3_store("b", "", o).base_url() == "http://127.0.0.1:9000/b");
        o.addressing = zx::s3_addressing::virtual_host;
        CHECK(zx::s3_store("bkt", "", o).base_url() == "http://bkt.127.0.0.1:9000");
        // The secret is nowhere a user can see it.
        CHECK(v.base_url().find("wJalr") == std::string::npos);
        CHECK(v.url() == "s3://my-bucket/path/to/x.zarr");
        zxtest::expect_error<zx::store_error>([] { zx::s3_store::from_url("http://x/y"); }, "zarrxt.store.1",
                                              "");
        zxtest::expect_error<zx::store_error>([] { zx::s3_store::from_url("s3://b/../etc"); },
                                              "zarrxt.store.1", "../etc");
        zxtest::expect_error<zx::store_error>([] { zx::s3_store::from_url("s3:///x"); }, "zarrxt.store.1",
                                              "");
        zx::s3_options anon;
        anon.anonymous = true;
        anon.region = "us-east-1";
        CHECK_FALSE(zx::s3_store("b", "", anon).signs_requests());
    }

    TEST_CASE("s3_store: credentials, region and endpoint from the AWS shared files and a profile")
    {
        zxtest::s3_server server({"zarr"});
        ZX_REQUIRE_SERVER(server);
        zxtest::temp_dir d("zarrxt-aws-files");
        // The default profile holds a wrong secret; "bench" the right one, with region and endpoint
        // in the config file (with a nested s3 section that is not read).
        zxtest::write_file(d.path() / "credentials",
                           "# a comment\r\n[default]\naws_access_key_id = S3RVER\naws_secret_access_key = "
                           "wrong-secret-41\n\n[bench]\nAWS_ACCESS_KEY_ID=S3RVER\naws_secret_access_key = " +
                               std::string(zxtest::s3_server::secret_key) + "\n");
        zxtest::write_file(d.path() / "config",
                           "[default]\nregion = us-east-1\nendpoint_url = " + server.endpoint() +
                               "\n[profile bench]\nregion = us-east-1\ns3 =\n  endpoint_url = "
                               "http://127.0.0.1:1\nendpoint_url = " +
                               server.endpoint() + "\n");
        // The variables the files stand in for are cleared, and everything is put back at the end.
        saved_env env;
        for (const char* v : {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
                              "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"})
        {
            env.set(v, nullptr);
        }
        env.set("AWS_SHARED_CREDENTIALS_FILE", (d.path() / "credentials").c_str());
        env.set("AWS_CONFIG_FILE", (d.path() / "config").c_str());
        env.set("AWS_PROFILE", "bench");
        zx::s3_options o; // nothing but the files
        o.http.max_retries = 0;
        const zx::s3_store s("zarr", "profiles", o);
        CHECK(s.signs_requests());
        CHECK(s.base_url() == server.endpoint() + "/zarr/profiles");
        const std::string text = "signed with the profile's secret";
        zx::s3_store w = s;
        w.set("k", zx::byte_view(reinterpret_cast<const std::byte*>(text.data()), text.size()));
        const auto back = zx::get(s, "k");
        REQUIRE(back.has_value());
        CHECK(std::string(reinterpret_cast<const char*>(back->data()), back->size()) == text);

        // The default profile's wrong secret: the server's refusal, without the secret.
        env.set("AWS_PROFILE", nullptr);
        const zx::s3_store wrong("zarr", "profiles", o);
        CHECK(wrong.signs_requests());
        const auto e = ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.8", "k", zx::get(wrong, "k"));
        CHECK((e && std::string(e->what()).find("wrong-secret-41") == std::string::npos));
        // A key in the variables wins over the files (its secret comes from the variables too).
        env.set("AWS_ACCESS_KEY_ID", "S3RVER");
        env.set("AWS_SECRET_ACCESS_KEY", zxtest::s3_server::secret_key);
        CHECK(zx::get(zx::s3_store("zarr", "profiles", o), "k").has_value());
        env.set("AWS_ACCESS_KEY_ID", nullptr);
        env.set("AWS_SECRET_ACCESS_KEY", nullptr);
        // The options name a profile too; one that neither file has is refused at once.
        o.profile = "bench";
        CHECK(zx::get(zx::s3_store("zarr", "profiles", o), "k").has_value());
        o.profile = "nosuch";
        const auto np = ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.8", "", zx::s3_store("zarr", "", o));
        CHECK((np && std::string(np->what()).find("\"nosuch\"") != std::string::npos));
        // No files at all and no profile named: unsigned, as before.
        env.set("AWS_SHARED_CREDENTIALS_FILE", (d.path() / "none").c_str());
        env.set("AWS_CONFIG_FILE", (d.path() / "none").c_str());
        o.profile.clear();
        o.endpoint = server.endpoint();
        env.set("AWS_EC2_METADATA_DISABLED", "true"); // this machine's metadata service, if any, is not asked
        CHECK_FALSE(zx::s3_store("zarr", "", o).signs_requests());
    }

    TEST_CASE("s3_store: temporary credentials from a web identity token (STS), the container endpoint "
              "and the instance metadata service (IMDSv2), renewed before they expire")
    {
        zxtest::s3_server server({"zarr"});
        ZX_REQUIRE_SERVER(server);
        zxtest::temp_dir d("zarrxt-aws-temporary");
        saved_env env;
        for (const char* v :
             {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
              "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
              "AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
              "AWS_EC2_METADATA_DISABLED", "AWS_METADATA_SERVICE_NUM_ATTEMPTS", "AWS_WEB_IDENTITY_TOKEN_FILE",
              "AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME", "AWS_ENDPOINT_URL_STS"})
        {
            env.set(v, nullptr);
        }
        env.set("AWS_SHARED_CREDENTIALS_FILE", (d.path() / "none").c_str());
        env.set("AWS_CONFIG_FILE", (d.path() / "none").c_str());
        env.set("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:1"); // nothing listens there
        zx::s3_options o = options_for(server);
        o.access_key_id.clear();
        o.secret_access_key.clear();
        o.http.max_retries = 0;
        const std::string right = zxtest::s3_server::secret_key;
        const std::string text = "signed with temporary credentials";
        const zx::byte_view payload(reinterpret_cast<const std::byte*>(text.data()), text.size());
        const auto round_trip = [&](const zx::s3_store& st, const std::string& key)
        {
            zx::s3_store w = st;
            w.set(key, payload);
            const auto back = zx::get(st, key);
            REQUIRE(back.has_value());
            CHECK(std::string(reinterpret_cast<const char*>(back->data()), back->size()) == text);
        };
        const auto has = [](const std::string& request, const std::string& part)
        { return request.find(part) != std::string::npos; };

        // No metadata service: unsigned, as before (the endpoint refuses the connection at once).
        CHECK_FALSE(zx::s3_store("zarr", "", o).signs_requests());

        // IMDSv2: a session token by PUT, the role's name, then its credentials, each asked with the token.
        {
            zxtest::canned_server imds(
                {http_answer(200, "imds-token-7"), http_answer(200, "zarrxt-test-role\n"),
                 http_answer(200, credentials_document(right, std::chrono::hours(6)))});
            env.set("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url("").c_str());
            const zx::s3_store s("zarr", "imds", o);
            CHECK(s.signs_requests());
            round_trip(s, "k");
            const auto got = imds.received();
            REQUIRE(got.size() == 3);
            CHECK(got[0].rfind("PUT /latest/api/token HTTP/1.1", 0) == 0);
            CHECK(has(got[0], "X-aws-ec2-metadata-token-ttl-seconds: 21600"));
            CHECK(got[1].rfind("GET /latest/meta-data/iam/security-credentials/ HTTP/1.1", 0) == 0);
            CHECK(has(got[1], "X-aws-ec2-metadata-token: imds-token-7"));
            CHECK(got[2].rfind("GET /latest/meta-data/iam/security-credentials/zarrxt-test-role HTTP/1.1",
                               0) == 0);
            CHECK(has(got[2], "X-aws-ec2-metadata-token: imds-token-7"));
            CHECK(imds.requests() == 3); // six hours left: nothing renewed
            // A service that will not give a token (IMDSv1 only, or not EC2): unsigned, not an error.
            zxtest::canned_server v1({http_answer(403, "")});
            env.set("AWS_EC2_METADATA_SERVICE_ENDPOINT", v1.url("").c_str());
            CHECK_FALSE(zx::s3_store("zarr", "", o).signs_requests());
            CHECK(v1.requests() == 1);
            // Turned off by the variable or by the options: not asked at all.
            env.set("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url("").c_str());
            env.set("AWS_EC2_METADATA_DISABLED", "true");
            CHECK_FALSE(zx::s3_store("zarr", "", o).signs_requests());
            env.set("AWS_EC2_METADATA_DISABLED", nullptr);
            zx::s3_options off = o;
            off.instance_metadata = false;
            CHECK_FALSE(zx::s3_store("zarr", "", off).signs_requests());
            off = o;
            off.anonymous = true;
            CHECK_FALSE(zx::s3_store("zarr", "", off).signs_requests());
            CHECK(imds.requests() == 3);
        }

        // Credentials two minutes from expiring (inside the five-minute window): the first request
        // renews them, once; the server's check of every signature shows the new keys work.
        {
            zxtest::canned_server imds(
                {http_answer(200, "t1"), http_answer(200, "role\n"),
                 http_answer(200, credentials_document(right, std::chrono::minutes(2))),
                 http_answer(200, "t2"), http_answer(200, "role\n"),
                 http_answer(200, credentials_document(right, std::chrono::hours(6)))});
            env.set("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url("").c_str());
            const zx::s3_store s("zarr", "renewed", o);
            CHECK(imds.requests() == 3);
            round_trip(s, "k");
            CHECK(imds.requests() == 6);
            CHECK(has(imds.received()[4], "X-aws-ec2-metadata-token: t2"));
            round_trip(s, "k2");
            CHECK(imds.requests() == 6);
        }

        // Credentials that have expired and cannot be renewed: store.8, and nothing is sent with them.
        {
            zxtest::canned_server imds(
                {http_answer(200, "t1"), http_answer(200, "role\n"),
                 http_answer(200, credentials_document(right, -std::chrono::minutes(1))),
                 http_answer(404, "")});
            env.set("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url("").c_str());
            const zx::s3_store s("zarr", "expired", o);
            const auto e = ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.8", "k", zx::get(s, "k"));
            CHECK((e && has(e->what(), "instance metadata service")));
            CHECK((e && !has(e->what(), right)));
        }
        env.set("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:1");

        // A web identity token exchanged at STS (AssumeRoleWithWebIdentity, unsigned, a form POST);
        // renewal reads the token file again, since its issuer rotates it.
        {
            zxtest::write_file(d.path() / "web-token", "eyJ.first+token/=\n");
            zxtest::canned_server sts({http_answer(200, sts_document(right, std::chrono::minutes(2))),
                                       http_answer(200, sts_document(right, std::chrono::hours(1)))});
            env.set("AWS_ENDPOINT_URL_STS", sts.url("").c_str());
            env.set("AWS_WEB_IDENTITY_TOKEN_FILE", (d.path() / "web-token").c_str());
            env.set("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/zarrxt-test");
            env.set("AWS_ROLE_SESSION_NAME", "zarrxt-test-session");
            const zx::s3_store s("zarr", "web", o);
            CHECK(s.signs_requests());
            REQUIRE(sts.requests() == 1);
            const std::string first = sts.received()[0];
            CHECK(first.rfind("POST / HTTP/1.1", 0) == 0);
            CHECK(has(first, "Content-Type: application/x-www-form-urlencoded"));
            CHECK_FALSE(has(first, "Authorization:"));
            CHECK(has(first, "Action=AssumeRoleWithWebIdentity&Version=2011-06-15"));
            CHECK(has(first, "RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fzarrxt-test"));
            CHECK(has(first, "RoleSessionName=zarrxt-test-session"));
            CHECK(has(first, "WebIdentityToken=eyJ.first%2Btoken%2F%3D"));
            zxtest::write_file(d.path() / "web-token", "second-token");
            round_trip(s, "k"); // two minutes left: the first request renews, with the new token
            REQUIRE(sts.requests() == 2);
            CHECK(has(sts.received()[1], "WebIdentityToken=second-token"));
            round_trip(s, "k2");
            CHECK(sts.requests() == 2);
            // STS refusing the token: store.8 with its code, never the token.
            zxtest::canned_server refusing({http_answer(
                400, "<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code><Message>No "
                     "OpenIDConnect provider found</Message></Error></ErrorResponse>")});
            env.set("AWS_ENDPOINT_URL_STS", refusing.url("").c_str());
            const auto e =
                ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.8", "", zx::s3_store("zarr", "", o));
            CHECK((e && has(e->what(), "InvalidIdentityToken")));
            CHECK((e && !has(e->what(), "second-token")));
            CHECK(refusing.requests() == 1); // a refusal is not tried again
            env.set("AWS_WEB_IDENTITY_TOKEN_FILE", nullptr);
            env.set("AWS_ROLE_ARN", nullptr);
        }

        // The container endpoint, with its authorization token (from the variable, then from a file).
        {
            zxtest::canned_server ecs({http_answer(200, credentials_document(right, std::chrono::hours(6)))});
            env.set("AWS_CONTAINER_CREDENTIALS_FULL_URI", ecs.url("v2/credentials/abc").c_str());
            env.set("AWS_CONTAINER_AUTHORIZATION_TOKEN", "Bearer container-token-3");
            const zx::s3_store s("zarr", "container", o);
            CHECK(s.signs_requests());
            round_trip(s, "k");
            REQUIRE(ecs.requests() == 1);
            CHECK(ecs.received()[0].rfind("GET /v2/credentials/abc HTTP/1.1", 0) == 0);
            CHECK(has(ecs.received()[0], "Authorization: Bearer container-token-3"));
            zxtest::write_file(d.path() / "token", "Bearer from-the-file\n");
            env.set("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", (d.path() / "token").c_str());
            CHECK(zx::s3_store("zarr", "container", o).signs_requests());
            REQUIRE(ecs.requests() == 2);
            CHECK(has(ecs.received()[1], "Authorization: Bearer from-the-file\r\n"));
        }
        // A configured endpoint that refuses, or answers no secret, is store.8 at once; the token and
        // the answer never appear in the message.
        {
            zxtest::canned_server refusing({http_answer(401, "")});
            env.set("AWS_CONTAINER_CREDENTIALS_FULL_URI", refusing.url("creds").c_str());
            const auto e =
                ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.8", "", zx::s3_store("zarr", "", o));
            CHECK((e && has(e->what(), "HTTP 401")));
            CHECK((e && !has(e->what(), "from-the-file")));
            zxtest::canned_server partial({http_answer(200, R"({"AccessKeyId": "S3RVER", "Token": "x"})")});
            env.set("AWS_CONTAINER_CREDENTIALS_FULL_URI", partial.url("creds").c_str());
            const auto p =
                ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.8", "", zx::s3_store("zarr", "", o));
            CHECK((p && has(p->what(), "no SecretAccessKey")));
            // Plain http:// to a host that is not loopback would hand the token to anyone on the way.
            env.set("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://192.0.2.1/creds");
            ZX_EXPECT_ERROR(zx::store_error, "zarrxt.store.8", "", zx::s3_store("zarr", "", o));
        }
        // Keys given in the options or the variables win: no endpoint is asked.
        {
            zxtest::canned_server ecs(
                {http_answer(200, credentials_document("wrong-secret", std::chrono::hours(6)))});
            env.set("AWS_CONTAINER_CREDENTIALS_FULL_URI", ecs.url("creds").c_str());
            round_trip(zx::s3_store("zarr", "keys", options_for(server)), "k");
            CHECK(ecs.requests() == 0);
        }
    }

    TEST_CASE("s3_store: a ListObjectsV2 answer that is not one is store.5, never a listing")
    {
        for (const char* body :
             {"<html>not xml", "<?xml version=\"1.0\"?><Other/>",
              "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",
              "<!DOCTYPE l [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\"><!ENTITY "
              "c "
              "\"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\"><!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\"><!ENTITY e "
              "\"&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;\"><!ENTITY f \"&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;\"><!ENTITY g "
              "\"&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;\"><!ENTITY h \"&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;\">]>"
              "<ListBucketResult><Contents><Key>&h;</Key></Contents></ListBucketResult>"})
        {
            CAPTURE(body);
            zxtest::expect_error<zx::store_error>(
                [&] { zx::detail::s3_list_parser::parse(zx::as_bytes(body), "test"); }, "zarrxt.store.5", "");
        }
        const auto page = zx::detail::s3_list_parser::parse(
            zx::as_bytes(
                "<?xml version=\"1.0\"?><ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
                "<IsTruncated>true</IsTruncated><NextContinuationToken>1/a+b=</NextContinuationToken>"
                "<Contents><Key>p/a&amp;b</Key></Contents><CommonPrefixes><Prefix>p/c/</Prefix></"
                "CommonPrefixes>"
                "</ListBucketResult>"),
            "test");
        CHECK(page.truncated);
        CHECK(page.next_token == "1/a+b=");
        CHECK(page.keys == std::vector<std::string>{"p/a&b"});
        CHECK(page.prefixes == std::vector<std::string>{"p/c/"});
        CHECK(zx::detail::s3_query_encode("1/a+b= c") == "1%2Fa%2Bb%3D%20c");
    }
}

#else
TEST_CASE("s3_store: not built (ZARRXT_HAS_S3 is 0)")
{
    ZX_SKIP("this build has no libcrypto or expat: the S3 store is not built");
}
#endif
