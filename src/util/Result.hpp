#pragma once
// Result<T>: the return type of every low-level call that can fail for reasons outside the program
// (a file, a process, a socket). Exceptions are kept for fatal errors only.
#include <string>
#include <utility>
#include <variant>

namespace ddl {

struct Error {
    std::string message;
    // Refused as asked (a clash, a missing approval, input that cannot work): the command exits 2, not 1.
    bool refused = false;
};

inline Error refusal_error(std::string message) {
    return Error{std::move(message), true};
}

template <typename T> class [[nodiscard]] Result {
public:
    Result(T value) : m_v(std::in_place_index<0>, std::move(value)) {}
    Result(Error error) : m_v(std::in_place_index<1>, std::move(error)) {}

    bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }
    T& value() & { return std::get<0>(m_v); }
    const T& value() const& { return std::get<0>(m_v); }
    T&& value() && { return std::get<0>(std::move(m_v)); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    const Error& error() const { return std::get<1>(m_v); }
    T value_or(T fallback) const { return ok() ? value() : std::move(fallback); }

private:
    std::variant<T, Error> m_v;
};

// Status: a Result that carries no value.
class [[nodiscard]] Status {
public:
    Status() = default;
    Status(Error error) : m_error(std::move(error)), m_failed(true) {}
    static Status success() { return {}; }
    bool ok() const { return !m_failed; }
    explicit operator bool() const { return ok(); }
    const Error& error() const { return m_error; }

private:
    Error m_error;
    bool m_failed = false;
};

// Error with errno's text appended: "what: strerror(errno)".
Error errno_error(const std::string& what);

} // namespace ddl
