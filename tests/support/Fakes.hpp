#pragma once
// Recording fakes for the pipeline's side-effect interfaces: the remote executor (every exec and wait,
// with a scripted probe answer; what each command was given on its input), the progress sink, and a target
// driver that makes three nodes.
#include "provision/Context.hpp"
#include "provision/TargetDriver.hpp"

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace ddl::test {

class FakeRemote : public RemoteExecutor {
public:
    std::mutex mutex;
    std::vector<std::string> calls;
    std::map<std::string, std::string> inputs;   // host -> the input of the last command given one
    std::map<std::string, std::string> commands; // host -> that command
    std::string probe_output =
        "@gpus\n@cpus 8\n@mem 32000\n@os Ubuntu 22.04\n@kernel 6.1\n@hostname n\n@end\n";
    std::vector<std::string> unreachable;
    std::vector<std::string> sudo_refuses; // hosts where a command given input fails as `sudo -n` would

    Result<ExecResult> exec(const SshEndpoint& ep, const std::string& command,
                            std::chrono::milliseconds) override {
        std::lock_guard lock(mutex);
        calls.push_back(ep.host + ": " + command.substr(0, 20));
        return ExecResult{0, probe_output, ""};
    }
    Result<ExecResult> exec_with_input(const SshEndpoint& ep, const std::string& command,
                                       const std::string& input, std::chrono::milliseconds timeout) override {
        {
            std::lock_guard lock(mutex);
            inputs[ep.host] = input;
            commands[ep.host] = command;
        }
        if (input.empty()) return exec(ep, command, timeout);
        std::lock_guard lock(mutex);
        calls.push_back(ep.host + ": " + command.substr(0, 20));
        for (const auto& h : sudo_refuses)
            if (h == ep.host) return ExecResult{1, "", "sudo: a password is required\n"};
        return ExecResult{0, "", ""};
    }
    // The scripted answer of exec, handed on as one piece.
    Result<ExecResult> exec_streaming(const SshEndpoint& ep, const std::string& command,
                                      const std::function<bool(std::string_view)>& on_out,
                                      std::chrono::milliseconds idle) override {
        auto r = exec(ep, command, idle);
        if (r && !r->out.empty()) (void)on_out(r->out);
        if (r) r->out.clear();
        return r;
    }
    Status wait_ready(const SshEndpoint& ep, std::chrono::milliseconds) override {
        std::lock_guard lock(mutex);
        calls.push_back(ep.host + ": wait");
        for (const auto& u : unreachable)
            if (u == ep.host) return Error{"SSH to " + ep.host + " not ready"};
        return {};
    }
};

class FakeProgress : public Progress {
public:
    std::vector<std::string> lines;
    std::vector<std::string> notes;
    void phase_start(const std::string& p, const std::string&) override { lines.push_back("start " + p); }
    void phase_done(const std::string& p, double, double, bool skipped) override {
        lines.push_back((skipped ? "skip " : "done ") + p);
    }
    void phase_failed(const std::string& p, const std::string& m) override {
        lines.push_back("fail " + p + ": " + m);
    }
    void node(const std::string&, const std::string&) override {}
    void note(const std::string& m) override { notes.push_back(m); }
};

class FakeTarget : public TargetDriver {
public:
    int provisions = 0, destroys = 0;
    int fail_provisions = 0; // fail this many times first
    int nodes = 3;
    std::vector<std::string> destructive; // asked for approval before provisioning, as a cloud plan would
    Result<RenderedFiles> render(const Spec&, const RenderInputs&) const override { return RenderedFiles{}; }
    Status preflight(const Context&) override { return {}; }
    Status provision(Context& ctx) override {
        ++provisions;
        if (fail_provisions-- > 0) return Error{"cloud said no"};
        if (auto s = ctx.approve_destructive("the fake plan", destructive); !s) return s;
        ctx.state.nodes.clear();
        for (int i = 0; i < nodes; ++i) {
            NodeState n;
            n.name = i == 0 ? "master" : "worker" + std::to_string(i);
            n.group = i == 0 ? "master" : "workers";
            n.address = "192.0.2." + std::to_string(10 + i);
            n.user = "root";
            ctx.state.nodes.push_back(n);
        }
        return {};
    }
    Status destroy(Context&) override {
        ++destroys;
        return {};
    }
};

} // namespace ddl::test
