#pragma once
// The scripted HttpClient of the unit tests: every request goes through send(), answered by a function
// the test gives (none: an Error, as when no server answers). The older entry points (post_json, get)
// are not used by the code under test and fail loudly if they are.
#include "net/Curl.hpp"

#include <functional>
#include <utility>

namespace ddl::test {

class ScriptedHttp : public HttpClient {
public:
    using Answer = std::function<Result<HttpResponse>(const HttpRequest&)>;
    explicit ScriptedHttp(Answer answer = {}) : m_answer(std::move(answer)) {}

    Result<HttpResponse> post_json(const std::string&, const std::string&,
                                   std::chrono::milliseconds) override {
        return Error{"unexpected post_json"};
    }
    Result<HttpResponse> get(const std::string&, const std::vector<std::string>&,
                             std::chrono::milliseconds) override {
        return Error{"unexpected get"};
    }
    Result<HttpResponse> send(const HttpRequest& request) override {
        if (!m_answer) return Error{"unexpected send"};
        return m_answer(request);
    }

private:
    Answer m_answer;
};

} // namespace ddl::test
