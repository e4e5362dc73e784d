#pragma once
// Percent-encoding of URL parts (RFC 3986, section 2.1): what every query value, path segment and
// form body ddl sends is written with.
#include <string>

namespace ddl {

// `s` with every byte other than the unreserved characters (ALPHA, DIGIT, "-", ".", "_", "~"; RFC 3986,
// section 2.3) written as %XX in upper-case hex: a query value or path segment (OpenStack), and the
// encoding AWS Signature Version 4 requires of names and values.
std::string percent_encode(const std::string& s);

} // namespace ddl
