#pragma once
// The one scripted ProcessRunner of the unit tests: answers commands by rule (the start of the argv line,
// or the subcommand argv[1]), records every command, and feeds stdout to on_stdout_line as the real
// runner does.
#include "util/Process.hpp"
#include "util/Strings.hpp"

#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace ddl::test {

class ScriptedProcess : public ProcessRunner {
public:
    struct Reply {
        int code = 0;
        std::string out, err;
    };

    // Commands whose argv line (joined by spaces) starts with `prefix` get `replies` in order; the last
    // one repeats. Rules are tried in the order they were added.
    void when(const std::string& prefix, std::vector<Reply> replies) {
        add([prefix](const Command&, const std::string& line) { return starts_with(line, prefix); },
            std::move(replies));
    }
    // Commands whose argv[1] is `sub` (a tool's subcommand, whatever the tool's path).
    void when_sub(const std::string& sub, std::vector<Reply> replies) {
        add([sub](const Command& c, const std::string&) { return c.argv.size() > 1 && c.argv[1] == sub; },
            std::move(replies));
    }
    // Drops every rule (a test that changes what a tool answers half way).
    void forget_rules() { m_rules.clear(); }
    // What a command no rule matches gets: an Error naming it (the default), or success with no output.
    bool unmatched_ok = false;

    std::vector<std::string> calls; // argv lines, in order
    std::vector<Command> commands;  // the commands themselves
    std::function<void(const std::string&)> on_call;

    Result<ProcessResult> run(const Command& c) override {
        const std::string line = join(c.argv, " ");
        calls.push_back(line);
        commands.push_back(c);
        if (on_call) on_call(line);
        for (auto& rule : m_rules) {
            if (!rule.matches(c, line)) continue;
            Reply r = rule.replies.front();
            if (rule.replies.size() > 1) rule.replies.pop_front();
            feed(c, r.out);
            return ProcessResult{r.code, 0, false, r.out, r.err};
        }
        if (unmatched_ok) return ProcessResult{0, 0, false, "", ""};
        return Error{"unexpected command: " + line};
    }
    int count(const std::string& prefix) const {
        int n = 0;
        for (const auto& c : calls)
            n += starts_with(c, prefix) ? 1 : 0;
        return n;
    }

private:
    struct Rule {
        std::function<bool(const Command&, const std::string&)> matches;
        std::deque<Reply> replies;
    };
    void add(std::function<bool(const Command&, const std::string&)> m, std::vector<Reply> replies) {
        if (replies.empty()) replies.push_back({});
        m_rules.push_back({std::move(m), std::deque<Reply>(replies.begin(), replies.end())});
    }
    static void feed(const Command& c, const std::string& out) {
        if (!c.on_stdout_line) return;
        std::size_t start = 0;
        while (start < out.size()) {
            auto nl = out.find('\n', start);
            c.on_stdout_line(out.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
            if (nl == std::string::npos) break;
            start = nl + 1;
        }
    }
    std::vector<Rule> m_rules;
};

} // namespace ddl::test
