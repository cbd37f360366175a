/** @file detail/digest.hpp
 *  The digests S3 asks of a request body, from OpenSSL's libcrypto (the library libcurl's TLS
 *  uses already): the hex SHA-256 (x-amz-content-sha256, part of the signed request), the
 *  base64 MD5 (Content-MD5, which the server checks against what arrived) and the hex MD5 (what
 *  an ETag of S3 is made of). Needs libcrypto
 *  (ZARRXT_HAS_S3). No digest is computed here by hand.
 */
#pragma once

#include "../error.hpp"
#include "buffer.hpp"

#include <openssl/evp.h>

#include <string>

namespace zarrxt::detail
{

inline void evp_digest(byte_view data, const EVP_MD* md, unsigned char* out, unsigned int& len)
{
    if (EVP_Digest(data.data(), data.size(), out, &len, md, nullptr) != 1)
    {
        throw store_error(store_errc::remote, "libcrypto: EVP_Digest failed");
    }
}

/// Lower-case hex of the digest `md` of `data`.
inline std::string digest_hex(byte_view data, const EVP_MD* md)
{
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    evp_digest(data, md, out, len);
    static const char* hex = "0123456789abcdef";
    std::string text;
    text.reserve(2 * len);
    for (unsigned int i = 0; i < len; ++i)
    {
        text += hex[out[i] >> 4];
        text += hex[out[i] & 15];
    }
    return text;
}

/// Lower-case hex SHA-256 of `data`.
inline std::string sha256_hex(byte_view data)
{
    return digest_hex(data, EVP_sha256());
}

/// The MD5 of `data` in lower-case hex (what an S3 ETag of a single PUT is).
inline std::string md5_hex(byte_view data)
{
    return digest_hex(data, EVP_md5());
}

/// Base64 of the MD5 of `data` (the value of a Content-MD5 header).
inline std::string md5_base64(byte_view data)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    evp_digest(data, EVP_md5(), md, len);
    unsigned char b64[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
    const int n = EVP_EncodeBlock(b64, md, static_cast<int>(len));
    return std::string(reinterpret_cast<const char*>(b64), static_cast<std::size_t>(n));
}

} // namespace zarrxt::detail
