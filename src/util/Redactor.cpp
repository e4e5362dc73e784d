#include "util/Redactor.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace ddl::redaction {
namespace {

std::mutex g_mutex;
std::vector<std::string> g_secrets;

// A line longer than this is passed on in parts; the last k_keep bytes stay behind so that a secret
// arriving across the cut is still whole when it is masked.
constexpr std::size_t k_max_pending = std::size_t{64} * 1024;
constexpr std::size_t k_keep = 4096;

// The form a JSON writer (nlohmann::json::dump) gives the value inside a string.
std::string json_escaped(const std::string& s) {
    std::string out;
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\b':
            out += "\\b";
            break;
        case '\f':
            out += "\\f";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += ch;
            }
        }
    }
    return out;
}

void mask(std::string& text, const std::string& secret) {
    if (secret.empty()) return;
    for (auto pos = text.find(secret); pos != std::string::npos; pos = text.find(secret, pos + 3))
        text.replace(pos, secret.size(), "***");
}

} // namespace

void register_secret(const std::string& secret) {
    if (secret.size() < 4) return;
    std::lock_guard lock(g_mutex);
    for (const auto& s : {secret, json_escaped(secret)}) {
        if (std::find(g_secrets.begin(), g_secrets.end(), s) != g_secrets.end()) continue;
        g_secrets.push_back(s);
        // Longest first: a secret that contains another is masked whole, not around the shorter one.
        std::stable_sort(g_secrets.begin(), g_secrets.end(),
                         [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    }
}

std::string redact(std::string text) {
    std::lock_guard lock(g_mutex);
    for (const auto& s : g_secrets)
        mask(text, s);
    return text;
}

std::string redact(std::string text, const std::vector<std::string>& secrets) {
    for (const auto& s : secrets)
        mask(text, s);
    return redact(std::move(text));
}

void write_unredacted(std::ostream& stream, const std::string& text) {
    stream.flush();
    auto* buf = dynamic_cast<RedactingStreambuf*>(stream.rdbuf());
    if (!buf) {
        stream << text << std::flush;
        return;
    }
    buf->target()->sputn(text.data(), static_cast<std::streamsize>(text.size()));
    buf->target()->pubsync();
}

RedactingStreambuf::~RedactingStreambuf() {
    std::lock_guard lock(m_mutex);
    if (!m_pending.empty()) emit(redact(std::exchange(m_pending, {})));
}

void RedactingStreambuf::emit(const std::string& text) {
    m_target->sputn(text.data(), static_cast<std::streamsize>(text.size()));
}

void RedactingStreambuf::emit_lines() {
    const auto end = m_pending.find_last_of("\n\r");
    if (end != std::string::npos) {
        emit(redact(m_pending.substr(0, end + 1)));
        m_pending.erase(0, end + 1);
    }
    if (m_pending.size() > k_max_pending) {
        m_pending = redact(std::move(m_pending));
        emit(m_pending.substr(0, m_pending.size() - k_keep));
        m_pending.erase(0, m_pending.size() - k_keep);
    }
}

RedactingStreambuf::int_type RedactingStreambuf::overflow(int_type c) {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    std::lock_guard lock(m_mutex);
    m_pending += traits_type::to_char_type(c);
    if (c == '\n' || c == '\r' || m_pending.size() > k_max_pending) emit_lines();
    return c;
}

std::streamsize RedactingStreambuf::xsputn(const char* s, std::streamsize n) {
    std::lock_guard lock(m_mutex);
    m_pending.append(s, static_cast<std::size_t>(n));
    emit_lines();
    return n;
}

int RedactingStreambuf::sync() {
    std::lock_guard lock(m_mutex);
    if (!m_pending.empty()) emit(redact(std::exchange(m_pending, {})));
    return m_target->pubsync();
}

StreamRedaction::StreamRedaction(std::ostream& stream)
    : m_stream(stream), m_buf(stream.rdbuf()), m_unitbuf((stream.flags() & std::ios::unitbuf) != 0) {
    m_stream.flush();
    m_stream.unsetf(std::ios::unitbuf);
    m_stream.rdbuf(&m_buf);
}

StreamRedaction::~StreamRedaction() {
    m_stream.flush();
    m_stream.rdbuf(m_buf.target());
    if (m_unitbuf) m_stream.setf(std::ios::unitbuf);
}

} // namespace ddl::redaction
