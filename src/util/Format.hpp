#pragma once
// printf's formatting into a string. Tables and reports go to std::cout through it, so that what ddl
// prints passes the stream redactor (util/Redactor.hpp), which printf to the C stream would go around.
#include <cstdarg>
#include <cstdio>
#include <string>

namespace ddl {

inline std::string strprintf(const char* format, ...) __attribute__((format(printf, 1, 2)));

inline std::string strprintf(const char* format, ...) {
    va_list args;
    va_start(args, format);
    va_list again;
    va_copy(again, args);
    const int n = std::vsnprintf(nullptr, 0, format, args);
    va_end(args);
    std::string out;
    if (n > 0) {
        out.resize(static_cast<std::size_t>(n) + 1);
        std::vsnprintf(out.data(), out.size(), format, again);
        out.resize(static_cast<std::size_t>(n));
    }
    va_end(again);
    return out;
}

} // namespace ddl
