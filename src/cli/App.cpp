#include "cli/App.hpp"

#include "cli/Commands.hpp"
#include "cli/Completion.hpp"
#include "cli/SmokeTest.hpp"
#include "core/Diagnostics.hpp"
#include "core/Log.hpp"
#include "provision/Pipeline.hpp"
#include "spec/Spec.hpp"
#include "targets/Registry.hpp"
#include "util/Strings.hpp"

#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>

namespace ddl::cli {
namespace {

// Garbage in a flag is refused while parsing (exit 2), before any cluster or file is touched.
const CLI::Validator
    k_non_empty([](std::string& v) { return v.empty() ? std::string("must not be empty") : std::string(); },
                "NON-EMPTY");
// Seconds as a whole number in 1 s .. 7 days; says which of the two a bad value misses.
const CLI::Validator k_seconds(
    [](std::string& v) {
        auto n = parse_int(v);
        if (!n) return std::string("must be a whole number of seconds, e.g. 90 (got \"" + v + "\")");
        if (*n < 1 || *n > 7 * 86400) return std::string("must be between 1 and 604800 seconds (7 days)");
        return std::string();
    },
    "SECONDS");

} // namespace

int run_app(int argc, char** argv) {
    CLI::App app{"ddl — one cluster spec to a working GPU cluster for distributed deep learning", "ddl"};
    app.set_version_flag("--version", std::string("ddl ") + DDL_VERSION);
    app.require_subcommand(1);
    app.fallthrough();
    GlobalOptions g;
    int verbose = 0;
    bool quiet = false;
    std::string output = "text";
    app.add_option("--state-dir", g.state_dir, "Folder holding every cluster's state")
        ->check(k_non_empty)
        ->capture_default_str();
    app.add_flag("-v,--verbose", verbose, "Show the commands ddl runs");
    app.add_flag("-q,--quiet", quiet, "Only warnings and errors");
    app.add_option("--output", output, "Output format where a command prints data")
        ->check(CLI::IsMember({"text", "json"}));

    app.footer("Exit codes: 0 done; 1 failed (the message says what to do next); 2 bad input (nothing was "
               "changed); 3 partly done (e.g. gc: some clusters left); 130 interrupted (deploy resumes).\n"
               "`ddl help COMMAND` or `ddl COMMAND --help` shows one command's options.");
    std::function<int()> action;
    auto targets = target_names();

    auto* completion = app.add_subcommand(
        "completion", "Print a shell completion script: source <(ddl completion bash), or zsh");
    std::string completion_shell;
    completion->add_option("shell", completion_shell, "bash or zsh")
        ->required()
        ->check(CLI::IsMember({"bash", "zsh"}));
    completion->callback([&] {
        action = [&] {
            std::cout << completion_script(app, completion_shell);
            return exit_code::k_ok;
        };
    });

    auto* help = app.add_subcommand("help", "Show the commands, or one command's options: ddl help deploy");
    std::string help_topic;
    help->add_option("command", help_topic, "A command, e.g. deploy");
    help->callback([&] {
        action = [&] {
            if (help_topic.empty()) {
                // app.help() would describe the last parsed subcommand (this one).
                std::cout << app.get_formatter()->make_help(&app, "ddl", CLI::AppFormatMode::Normal);
                return exit_code::k_ok;
            }
            for (const auto* sub : app.get_subcommands([](CLI::App*) { return true; })) {
                if (sub->get_name() == help_topic && help_topic != "help") {
                    std::cout << sub->help();
                    return exit_code::k_ok;
                }
            }
            std::cerr << "ddl help: no command \"" << help_topic << "\"; `ddl help` lists them\n";
            return exit_code::k_bad_input;
        };
    });

    auto* init = app.add_subcommand("init", "Write a commented starter cluster.yaml");
    std::string init_target = "local", init_out = "cluster.yaml", init_name = "my-cluster";
    bool init_force = false;
    init->add_option("--target", init_target, "Target infrastructure")
        ->check(CLI::IsMember(targets))
        ->capture_default_str();
    init->add_option("-o,--output-file", init_out, "Where to write it ('-' for stdout)")
        ->check(k_non_empty)
        ->capture_default_str();
    init->add_option("--name", init_name, "Cluster name")->capture_default_str();
    init->add_flag("--force", init_force, "Overwrite an existing file");
    init->callback(
        [&] { action = [&] { return cmd_init(g, init_target, init_out, init_name, init_force); }; });

    auto* validate =
        app.add_subcommand("validate", "Check a spec; report every problem at once (exit 2 if any)");
    std::string file;
    validate->add_option("file", file, "cluster.yaml")->required();
    validate->callback([&] { action = [&] { return cmd_validate(g, file); }; });

    auto* render =
        app.add_subcommand("render", "Write the target's inputs (deterministic) without deploying");
    std::string render_out = "rendered";
    render->add_option("file", file, "cluster.yaml")->required();
    render->add_option("--out", render_out, "Output folder")->check(k_non_empty)->capture_default_str();
    std::string render_pubkey;
    render->add_option(
        "--public-key", render_pubkey,
        "OpenSSH public key file for the nodes (openstack; default: access.private_key's .pub, "
        "else the cluster's key in the state folder)");
    render->callback([&] { action = [&] { return cmd_render(g, file, render_out, render_pubkey); }; });

    auto* deploy =
        app.add_subcommand("deploy", "Validate, render, provision, configure, probe, write the hostfile");
    DeployArgs da;
    deploy->add_option("file", da.file, "cluster.yaml")->required();
    deploy->add_option("--only", da.only, "Run just this phase")->check(CLI::IsMember(phase_names()));
    deploy->add_flag("-y,--yes", da.yes, "Do not ask for confirmation");
    deploy->add_flag("--force-configure", da.force_configure,
                     "Run Ansible even when no node's configure inputs changed since the last configure "
                     "(to undo changes made on the nodes behind ddl's back)");
    deploy->add_option("--ssh-timeout", da.ssh_timeout_s, "Seconds to wait for SSH on every node")
        ->check(k_seconds)
        ->capture_default_str();
    deploy->add_option("--manifest", da.manifest,
                       "virtualwall without the jFed CLI: the manifest RSpec jFed's GUI saved for the slice");
    deploy->add_flag("--skip-preflight", da.skip_preflight,
                     "openstack: skip the cloud checks (flavors, image, network, quota) before creating");
    deploy->add_option("--terraform-bin", da.terraform_bin,
                       "openstack: terraform or tofu (name on PATH or a path); default: the spec's, else "
                       "whichever is on PATH");
    deploy->callback([&] { action = [&] { return cmd_deploy(g, da); }; });

    auto* destroy = app.add_subcommand("destroy", "Tear down everything ddl created for a cluster");
    std::string ref;
    bool destroy_yes = false;
    destroy->add_option("cluster", ref, "Cluster name or spec file (default: the only cluster)");
    destroy->add_flag("-y,--yes", destroy_yes, "Do not ask for confirmation");
    std::string destroy_tf;
    destroy->add_option("--terraform-bin", destroy_tf,
                        "openstack: terraform or tofu to destroy with (default: the one that deployed)");
    destroy->callback([&] { action = [&] { return cmd_destroy(g, ref, destroy_yes, destroy_tf); }; });

    auto* list =
        app.add_subcommand("list", "Every cluster in the state folder: target, nodes, state, age, lock");
    list->callback([&] { action = [&] { return cmd_list(g); }; });

    auto* status = app.add_subcommand("status", "Phases, nodes, addresses, GPUs and slots of a cluster");
    status->add_option("cluster", ref, "Cluster name or spec file");
    bool show_secrets = false;
    status->add_flag("--show-secrets", show_secrets,
                     "With --output json: include the cluster's secrets (the Jupyter token)");
    status->callback([&] { action = [&] { return cmd_status(g, ref, show_secrets); }; });

    auto* hostfile = app.add_subcommand("hostfile", "Print or write the hostfile from the probed nodes");
    std::string hf_format, hf_out;
    hostfile->add_option("--cluster", ref, "Cluster name or spec file");
    hostfile->add_option("--format", hf_format, "openmpi | horovod | mpich (default: the spec's)")
        ->check(CLI::IsMember({"openmpi", "horovod", "mpich"}));
    hostfile->add_option("-o,--output-file", hf_out, "Write to this file instead of stdout")
        ->check(k_non_empty);
    hostfile->callback([&] { action = [&] { return cmd_hostfile(g, ref, hf_format, hf_out); }; });

    auto* exec = app.add_subcommand("exec", "Run a command on all (or some) nodes in parallel");
    std::vector<std::string> exec_nodes, command;
    int exec_timeout = 600;
    exec->add_option("--cluster", ref, "Cluster name or spec file");
    exec->add_option("--nodes", exec_nodes, "Only these nodes (comma separated)")->delimiter(',');
    exec->add_option("--timeout", exec_timeout, "Seconds per node")->check(k_seconds)->capture_default_str();
    bool exec_container = false;
    exec->add_flag("--container", exec_container, "Run it inside each node's training container");
    exec->add_option("command", command, "Command after --");
    exec->callback([&] {
        action = [&] { return cmd_exec(g, ref, exec_nodes, command, exec_timeout, exec_container); };
    });

    auto* ssh = app.add_subcommand("ssh", "Open a shell (or run a command) on one node");
    std::string node;
    ssh->add_option("--cluster", ref, "Cluster name or spec file");
    ssh->add_option("node", node, "Node name, e.g. master or worker1")->required();
    ssh->add_option("command", command, "Optional command after --");
    ssh->callback([&] { action = [&] { return cmd_ssh(g, ref, node, command); }; });

    auto* tunnel = app.add_subcommand("tunnel", "Forward a service on a node's localhost to this machine");
    std::string service, tunnel_node;
    int tunnel_port = 0;
    tunnel->add_option("--cluster", ref, "Cluster name or spec file");
    tunnel->add_option("service", service, "jupyter, grafana, prometheus or a port number")->required();
    tunnel->add_option("--local-port", tunnel_port, "Port on 127.0.0.1 (default: the service's port)")
        ->check(CLI::Range(1, 65535));
    tunnel->add_option("--node", tunnel_node, "Node the service runs on (default: the master)");
    tunnel->callback([&] { action = [&] { return cmd_tunnel(g, ref, service, tunnel_port, tunnel_node); }; });

    auto* run = app.add_subcommand("run", "Start a program on every slot (bundled runtime launcher)");
    RunArgs ra;
    run->add_option("-n,--np", ra.np, "Number of ranks (default: every slot); -np N works too")
        ->check(CLI::Range(1, 1 << 20));
    run->add_option("--cluster", ra.cluster, "Cluster name or spec file");
    run->add_option("--hostfile", ra.hostfile,
                    "Hostfile (openmpi/horovod/mpich) naming nodes of the cluster");
    run->add_option("--iface", ra.iface, "Network interface for the TCP ring and NCCL (default: the spec's)");
    run->add_option("--port", ra.port, "Rendezvous port on rank 0 (default: the spec's runtime.master_port)")
        ->check(CLI::Range(1024, 65535));
    run->add_option("--startup-timeout", ra.startup_timeout_s, "Seconds for every rank to start")
        ->check(k_seconds)
        ->capture_default_str();
    run->add_option("-x,--env", ra.env, "Pass NAME=VALUE (or NAME from this shell) to every rank; repeatable")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    run->add_flag("--container", ra.container, "Start each rank inside its node's training container");
    run->add_option("command", ra.command, "Program and arguments after --");
    run->callback([&] { action = [&] { return cmd_run(g, ra); }; });
    auto* bench = app.add_subcommand("bench", "Allreduce and training benchmarks");
    bench->require_subcommand(1);
    auto* bench_ar =
        bench->add_subcommand("allreduce", "nccl-tests style allreduce table with the link's limit");
    BenchArgs ba;
    bench_ar->add_option("--cluster", ba.run.cluster, "Cluster name or spec file");
    bench_ar->add_option("--hostfile", ba.run.hostfile, "Hostfile naming nodes of the cluster");
    bench_ar->add_option("-n,--np", ba.run.np, "Number of ranks (default: every slot)")
        ->check(CLI::Range(1, 1 << 20));
    bench_ar->add_option("--sizes", ba.sizes, "MIN:MAX message sizes, doubling")->capture_default_str();
    bench_ar->add_option("--iters", ba.iters, "Timed iterations per size")
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    bench_ar->add_option("--warmup", ba.warmup, "Untimed iterations per size")
        ->check(CLI::Range(0, 1000000))
        ->capture_default_str();
    bench_ar->add_option("--link-gbit", ba.link_gbit, "Link bandwidth for the limit (default: the spec's)")
        ->check(CLI::Range(0.001, 100000.0));
    bench_ar->add_option("--iface", ba.run.iface, "Network interface");
    bench_ar->add_option("--format", ba.format, "text, json or csv")
        ->check(CLI::IsMember({"text", "json", "csv"}));
    bench_ar->callback([&] {
        action = [&] {
            if (output == "json") ba.format = "json";
            return cmd_bench_allreduce(g, ba);
        };
    });
    auto* bench_train =
        bench->add_subcommand("train", "Training throughput and scaling over nodes x batch size");
    TrainBenchArgs tb;
    bench_train->add_option("--cluster", tb.run.cluster, "Cluster name or spec file");
    bench_train
        ->add_option("--model-profile", tb.profile,
                     "resnet50, resnet101 or custom:N1,N2,... (gradient layout)")
        ->capture_default_str();
    bench_train->add_option("--batch", tb.batches, "Batch sizes per rank, comma separated")
        ->capture_default_str();
    bench_train->add_option("--nodes", tb.nodes, "Node counts: 1..N or 1,2,4 (default: 1..all)");
    bench_train->add_option("--bandwidths", tb.bandwidths,
                            "Local target: re-shape links to each, e.g. 1gbit,10gbit");
    bench_train->add_option("--steps", tb.steps, "Timed steps")
        ->check(CLI::Range(1, 1000000))
        ->capture_default_str();
    bench_train->add_option("--warmup", tb.warmup, "Untimed steps")
        ->check(CLI::Range(0, 1000000))
        ->capture_default_str();
    bench_train->add_option("--out", tb.out_dir, "Folder for train.csv, train.json, train.png")
        ->check(k_non_empty)
        ->capture_default_str();
    bench_train->add_option("--format", tb.format, "text, json or csv")
        ->check(CLI::IsMember({"text", "json", "csv"}));
    bench_train->callback([&] {
        action = [&] {
            if (output == "json") tb.format = "json";
            return cmd_bench_train(g, tb);
        };
    });

    auto* smoke = app.add_subcommand("smoke-test", "Deploy, check, destroy (always); JUnit XML and notices");
    SmokeArgs sa;
    smoke->add_option("file", sa.file, "cluster.yaml")->required();
    smoke->add_option("--junit", sa.junit, "Write a JUnit XML report here")->check(k_non_empty);
    smoke
        ->add_option("--notify", sa.notify,
                     "mailto:ADDR or a webhook URL; repeatable (SMTP settings: DDL_SMTP_*)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    smoke->add_flag("--notify-always", sa.notify_always, "Send notices also when everything passed");
    smoke->add_flag("--keep-on-failure", sa.keep_on_failure, "Leave a failed cluster up for debugging");
    smoke->add_option("--before-checks", sa.before_checks,
                      "Local command to run between deploy and the checks");
    smoke->add_option("--ssh-timeout", sa.ssh_timeout_s, "Seconds to wait for SSH on every node")
        ->check(k_seconds)
        ->capture_default_str();
    smoke->callback([&] { action = [&] { return cmd_smoke_test(g, sa); }; });

    auto* gc = app.add_subcommand(
        "gc", "Destroy leaked clusters (by name prefix and age), as scheduled pipelines need");
    std::string gc_age = "24h", gc_prefix = "ci-";
    bool gc_dry = false;
    gc->add_option("--older-than", gc_age, "Untouched for at least this long: 90s, 30m, 24h, 7d")
        ->capture_default_str();
    gc->add_option("--prefix", gc_prefix, "Only clusters whose name starts with this")->capture_default_str();
    gc->add_flag("--dry-run", gc_dry, "Only list what would be destroyed");
    gc->callback([&] { action = [&] { return cmd_gc(g, gc_age, gc_prefix, gc_dry); }; });

    // Everything after the first "--" is the remote command, taken verbatim (CLI11 would otherwise
    // let an option just before "--" interpret the command's own flags).
    std::vector<std::string> before, after;
    bool dashdash = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (!dashdash && a == "--") {
            dashdash = true;
        } else if (dashdash) {
            after.push_back(a);
        } else {
            before.push_back(a == "-np" ? "--np" : a);
        }
    }
    std::vector<std::string> args(before.rbegin(), before.rend());
    try {
        app.parse(args);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return exit_code::k_bad_input;
    } catch (const std::exception& e) {
        std::cerr << "ddl: fatal: " << e.what() << "\n";
        return exit_code::k_failure;
    }
    log::init(quiet ? log::Level::quiet : verbose > 0 ? log::Level::verbose : log::Level::normal);
    g.json = output == "json";
    command.insert(command.end(), after.begin(), after.end());
    ra.command.insert(ra.command.end(), after.begin(), after.end());
    if ((exec->parsed() && command.empty()) || (run->parsed() && ra.command.empty())) {
        std::cerr << "ddl: give the command after --, e.g. ddl " << (run->parsed() ? "run" : "exec")
                  << " -- hostname\n";
        return exit_code::k_bad_input;
    }
    try {
        return action ? action() : exit_code::k_bad_input;
    } catch (const std::exception& e) {
        log::error(std::string("ddl: fatal: ") + e.what());
        return exit_code::k_failure;
    }
}

} // namespace ddl::cli
