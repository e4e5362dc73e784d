#pragma once
// The one redactor: the secret values ddl holds (tokens, passwords, values read from this machine's
// environment for the spec's `env:`) and the one function that masks them. The log, logged command lines
// and everything ddl prints on stdout and stderr (messages, JSON, diagnostics, progress) pass through it,
// so a secret registered anywhere is masked everywhere (docs/security.md, "Secrets in output").
#include <mutex>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

namespace ddl::redaction {

// Adds a value that must never be printed or logged; it is shown as "***" from then on. Values shorter
// than 4 characters are ignored: masking them would mangle ordinary text. The value's JSON-escaped form
// (quotes, backslashes, control characters) is masked too, for `--output json`.
void register_secret(const std::string& secret);
// `text` with every registered secret replaced by "***".
std::string redact(std::string text);
// `text` with each of `secrets` (any length but empty) replaced by "***", then redact().
std::string redact(std::string text, const std::vector<std::string>& secrets);

// Writes `text` to `stream` unmasked, after what the stream already holds: for the few places where a
// command hands a secret to its user on purpose (`ddl tunnel`'s token URL, `ddl status --show-secrets`).
void write_unredacted(std::ostream& stream, const std::string& text);

// A stream buffer that passes what is written to `target` a line at a time (at '\n' or '\r'), each line
// redacted, and the rest when flushed. Holding a line back until its end means a secret written in
// pieces is still masked. Writes are serialised: threads may share one.
class RedactingStreambuf : public std::streambuf {
public:
    explicit RedactingStreambuf(std::streambuf* target) : m_target(target) {}
    ~RedactingStreambuf() override;
    std::streambuf* target() const { return m_target; }

protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;
    int sync() override;

private:
    void emit_lines(); // with m_mutex held
    void emit(const std::string& text);

    std::streambuf* m_target;
    std::mutex m_mutex;
    std::string m_pending; // the line not yet ended
};

// While it lives, `stream` writes through a RedactingStreambuf over the buffer it had; on destruction what
// is pending is written and the buffer put back. The stream's unitbuf flag is cleared meanwhile (a
// flush after every `<<` would pass a line on in pieces), and set again after.
class StreamRedaction {
public:
    explicit StreamRedaction(std::ostream& stream);
    ~StreamRedaction();
    StreamRedaction(const StreamRedaction&) = delete;
    StreamRedaction& operator=(const StreamRedaction&) = delete;

private:
    std::ostream& m_stream;
    RedactingStreambuf m_buf;
    bool m_unitbuf;
};

} // namespace ddl::redaction
