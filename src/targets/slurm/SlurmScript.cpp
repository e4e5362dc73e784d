#include "targets/slurm/SlurmScript.hpp"

#include "util/Strings.hpp"

namespace ddl {
namespace {

// The shell lines that write one hostfile line per node, in the spec's hostfile format.
std::string hostfile_lines(const Spec& s) {
    const std::string slots = std::to_string(s.target_section<SlurmSpec>().tasks());
    switch (s.hostfile_format) {
    case HostfileFormat::mpich:
        return "  for h in \"${hosts[@]}\"; do printf '%s:%s\\n' \"$h\" " + slots + "; done\n";
    case HostfileFormat::horovod: // Horovod's parser takes no comment lines
        return "  for h in \"${hosts[@]}\"; do printf '%s slots=%s\\n' \"$h\" " + slots + "; done\n";
    case HostfileFormat::openmpi:
        break;
    }
    return "  echo \"# Written by ddl inside Slurm job $SLURM_JOB_ID\"\n"
           "  for h in \"${hosts[@]}\"; do printf '%s slots=%s\\n' \"$h\" " +
           slots + "; done\n";
}

} // namespace

std::string SlurmScript::job_name(const Spec& spec) {
    return "ddl-" + spec.name;
}

std::string SlurmScript::output_pattern(const Spec& spec) {
    return job_name(spec) + "-%j.out";
}

std::string SlurmScript::hostfile_name(const Spec& spec, const std::string& job_id) {
    return job_name(spec) + "-" + job_id + ".hosts";
}

std::string SlurmScript::render(const Spec& s) {
    const auto& sl = s.target_section<SlurmSpec>();
    std::string o;
    o += "#!/bin/bash\n";
    o += "# Batch script of ddl cluster \"" + s.name +
         "\", written by `ddl render` from its spec (edit the spec,\n";
    o += "# not this file). Submit it from a directory the compute nodes share:\n";
    o += "#   sbatch job.sbatch                  holds the nodes until scancel or the time limit (ddl "
         "deploy)\n";
    o +=
        "#   sbatch job.sbatch PROG [ARGS...]   runs PROG once per task with srun, e.g. ddl-allreduce-test\n";
    o += "#SBATCH --job-name=" + job_name(s) + "\n";
    o += "#SBATCH --partition=" + sl.partition + "\n";
    o += "#SBATCH --nodes=" + std::to_string(sl.nodes) + "\n";
    o += "#SBATCH --ntasks-per-node=" + std::to_string(sl.tasks()) + "\n";
    if (sl.gpus_per_node > 0) o += "#SBATCH --gres=gpu:" + std::to_string(sl.gpus_per_node) + "\n";
    o += "#SBATCH --time=" + sl.time + "\n";
    if (!sl.account.empty()) o += "#SBATCH --account=" + sl.account + "\n";
    o += "#SBATCH --output=" + output_pattern(s) + "\n";
    o += "set -euo pipefail\n";
    o += ": \"${SLURM_JOB_ID:?submit this script with sbatch}\"\n\n";

    o += "# The bundled runtime (bin/, lib/) on a file system every node sees; DDL_RUNTIME_DIR overrides.\n";
    o += "runtime_dir=\"${DDL_RUNTIME_DIR:-" +
         (sl.runtime_dir.empty() ? std::string("$SLURM_SUBMIT_DIR/runtime") : sl.runtime_dir) + "}\"\n";
    o += "if [ ! -d \"$runtime_dir/bin\" ]; then\n";
    o += "  echo \"ddl: no bundled runtime in $runtime_dir: set slurm.runtime_dir or DDL_RUNTIME_DIR to a "
         "shared \"\\\n";
    o += "       \"folder holding ddl's dist/bin and dist/lib\" >&2\n";
    o += "  exit 2\n";
    o += "fi\n";
    o += "export PATH=\"$runtime_dir/bin:$PATH\"\n";
    o += "export LD_LIBRARY_PATH=\"$runtime_dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"\n";
    o += "export PYTHONPATH=\"$runtime_dir/python${PYTHONPATH:+:$PYTHONPATH}\"\n\n";

    o += "# The allocation as a hostfile: one line per node, its tasks as slots.\n";
    o += "mapfile -t hosts < <(scontrol show hostnames \"$SLURM_JOB_NODELIST\")\n";
    o += "hostfile=\"$SLURM_SUBMIT_DIR/" + job_name(s) + "-$SLURM_JOB_ID.hosts\"\n";
    o += "{\n" + hostfile_lines(s) + "} >\"$hostfile.tmp\"\n";
    o += "mv \"$hostfile.tmp\" \"$hostfile\"\n";
    o += "export DDL_HOSTFILE=\"$hostfile\"\n\n";

    o += "# Every task takes its rank from SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID; rank 0 runs on the first "
         "host.\n";
    o += "export DDL_MASTER_ADDR=\"${hosts[0]}\" MASTER_ADDR=\"${hosts[0]}\"\n";
    const std::string port = std::to_string(s.runtime.master_port);
    o += "export DDL_MASTER_PORT=" + port + " MASTER_PORT=" + port + "\n";
    if (s.runtime.backend != Backend::auto_select)
        o += "export DDL_BACKEND=" + to_string(s.runtime.backend) + "\n";
    if (!s.runtime.interface.empty())
        o += "export DDL_IFACE=" + shell_quote(s.runtime.interface) +
             " NCCL_SOCKET_IFNAME=" + shell_quote(s.runtime.interface) + "\n";
    o += "echo \"ddl: job $SLURM_JOB_ID running on ${hosts[*]}; hostfile $hostfile\"\n\n";

    o += "if [ \"$#\" -eq 0 ]; then\n";
    if (s.life.autostop.set()) {
        // The idle clock inside the job (ddl-idle loop): once no step ran and every GPU was idle for
        // autostop.idle_minutes, it records why in the state folder and this job's output, then scancels
        // the job. Should the clock itself stop, the allocation is held as without autostop.
        const std::string minutes = std::to_string(s.life.autostop.idle_minutes);
        o += "  echo \"ddl: holding the allocation until scancel, the time limit or " + minutes +
             " idle minutes (autostop)\"\n";
        o += "  DDL_IDLE_END=slurm DDL_IDLE_MINUTES=" + minutes +
             " DDL_IDLE_RECORD=\"$SLURM_SUBMIT_DIR/idle.json\" \\\n";
        o += "    python3 \"$runtime_dir/bin/ddl-idle\" loop ||\n";
        o += "    echo \"ddl: the idle clock stopped (exit $?); holding the allocation without it\" >&2\n";
    } else {
        o += "  echo \"ddl: holding the allocation until scancel or the time limit\"\n";
    }
    o += "  exec sleep infinity\n";
    o += "fi\n";
    o +=
        "# One failed rank stops the others, so a broken run ends instead of hanging until the time limit.\n";
    o += "exec srun --kill-on-bad-exit=1 \"$@\"\n";
    return o;
}

} // namespace ddl
