#include "util/Result.hpp"

#include <cerrno>
#include <cstring>

namespace ddl {

Error errno_error(const std::string& what) {
    return Error{what + ": " + std::strerror(errno)};
}

} // namespace ddl
