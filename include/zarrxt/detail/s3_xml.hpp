/** @file detail/s3_xml.hpp
 *  S3's XML answers, read with expat (a maintained parser; Debian libexpat1-dev, ZARRXT_HAS_S3):
 *  ListObjectsV2 (the keys and common prefixes of one page and the token of the next), and the
 *  one-level result documents of multipart uploads (their root and its children's text: UploadId,
 *  or an <Error> with its Code and Message). Expat stops entity-expansion bombs itself (since
 *  2.4); an answer's size is capped before it is parsed.
 *
 *  Spec: Amazon S3 API Reference, ListObjectsV2 (ListBucketResult), CreateMultipartUpload,
 *  CompleteMultipartUpload.
 */
#pragma once

#include "../error.hpp"
#include "buffer.hpp"

#include <expat.h>

#include <map>
#include <string>
#include <vector>

namespace zarrxt::detail
{

/// Parses `xml` with expat, calling the handlers with `user`; returns what went wrong ("" when
/// nothing did): expat's error and its line.
inline std::string run_expat(byte_view xml, void* user, XML_StartElementHandler start,
                             XML_EndElementHandler end, XML_CharacterDataHandler text)
{
    XML_Parser x = XML_ParserCreate(nullptr);
    if (x == nullptr)
    {
        throw store_error(store_errc::remote, "expat: XML_ParserCreate failed");
    }
    XML_SetUserData(x, user);
    XML_SetElementHandler(x, start, end);
    XML_SetCharacterDataHandler(x, text);
    const auto status =
        XML_Parse(x, reinterpret_cast<const char*>(xml.data()), static_cast<int>(xml.size()), 1);
    std::string problem;
    if (status != XML_STATUS_OK)
    {
        problem = std::string(XML_ErrorString(XML_GetErrorCode(x))) + " at line " +
                  std::to_string(XML_GetCurrentLineNumber(x));
    }
    XML_ParserFree(x);
    return problem;
}

struct s3_list_page
{
    std::vector<std::string> keys;     ///< Contents/Key
    std::vector<std::string> prefixes; ///< CommonPrefixes/Prefix (each ends with the delimiter)
    bool truncated = false;            ///< IsTruncated: more pages follow
    std::string next_token;            ///< NextContinuationToken
};

class s3_list_parser
{
public:
    /// Parses one ListBucketResult; store.5 (naming `what`) when it is not one.
    static s3_list_page parse(byte_view xml, const std::string& what)
    {
        s3_list_parser p;
        std::string problem =
            run_expat(xml, &p, &s3_list_parser::on_start, &s3_list_parser::on_end, &s3_list_parser::on_text);
        if (problem.empty() && p.m_root != "ListBucketResult")
        {
            problem = "the root element is <" + p.m_root + ">, not <ListBucketResult>";
        }
        if (problem.empty() && p.m_page.truncated && p.m_page.next_token.empty())
        {
            problem = "IsTruncated without a NextContinuationToken";
        }
        if (!problem.empty())
        {
            throw store_error(store_errc::remote_protocol,
                              "a ListObjectsV2 answer that cannot be read: " + problem + " (" + what + ")");
        }
        return std::move(p.m_page);
    }

private:
    static void on_start(void* self, const XML_Char* name, const XML_Char**)
    {
        auto& p = *static_cast<s3_list_parser*>(self);
        if (p.m_path.empty())
        {
            p.m_root = name;
        }
        p.m_path.emplace_back(name);
        p.m_text.clear();
    }

    static void on_text(void* self, const XML_Char* s, int len)
    {
        auto& p = *static_cast<s3_list_parser*>(self);
        if (p.m_text.size() < (1u << 16)) // no key or token is longer; a runaway text is cut, not kept
        {
            p.m_text.append(s, static_cast<std::size_t>(len));
        }
    }

    static void on_end(void* self, const XML_Char*)
    {
        auto& p = *static_cast<s3_list_parser*>(self);
        const auto& path = p.m_path;
        const std::size_t d = path.size();
        if (d == 3 && path[1] == "Contents" && path[2] == "Key")
        {
            p.m_page.keys.push_back(p.m_text);
        }
        else if (d == 3 && path[1] == "CommonPrefixes" && path[2] == "Prefix")
        {
            p.m_page.prefixes.push_back(p.m_text);
        }
        else if (d == 2 && path[1] == "IsTruncated")
        {
            p.m_page.truncated = p.m_text == "true";
        }
        else if (d == 2 && path[1] == "NextContinuationToken")
        {
            p.m_page.next_token = p.m_text;
        }
        p.m_path.pop_back();
        p.m_text.clear();
    }

    std::vector<std::string> m_path;
    std::string m_root;
    std::string m_text;
    s3_list_page m_page;
};

/// A result document of one level: <Root><Name>text</Name>...</Root>.
struct s3_result
{
    std::string root;
    std::map<std::string, std::string> fields; ///< the root's children (the last of a name wins)

    std::string field(const std::string& name) const
    {
        const auto it = fields.find(name);
        return it == fields.end() ? std::string() : it->second;
    }
};

/// Parses a result document; store.5 (naming `what`) when it is not XML.
inline s3_result parse_s3_result(byte_view xml, const std::string& what)
{
    struct state
    {
        s3_result out;
        int depth = 0;
        std::string text;
    } st;
    const std::string problem = run_expat(
        xml, &st,
        [](void* self, const XML_Char* name, const XML_Char**)
        {
            auto& p = *static_cast<state*>(self);
            if (p.depth++ == 0)
            {
                p.out.root = name;
            }
            p.text.clear();
        },
        [](void* self, const XML_Char* name)
        {
            auto& p = *static_cast<state*>(self);
            if (p.depth-- == 2)
            {
                p.out.fields[name] = p.text;
            }
            p.text.clear();
        },
        [](void* self, const XML_Char* s, int len)
        {
            auto& p = *static_cast<state*>(self);
            if (p.text.size() < (1u << 16))
            {
                p.text.append(s, static_cast<std::size_t>(len));
            }
        });
    if (!problem.empty())
    {
        throw store_error(store_errc::remote_protocol,
                          "an answer that is not XML: " + problem + " (" + what + ")");
    }
    return std::move(st.out);
}

/// `text` escaped for an XML element's content.
inline std::string xml_escape(std::string_view text)
{
    std::string out;
    for (char c : text)
    {
        switch (c)
        {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

} // namespace zarrxt::detail
