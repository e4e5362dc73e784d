#!/usr/bin/env python3
"""The worker half of the GPULab stand-in (gpulab_server.py, which names the documents both follow): a job's
container as Docker runs it, in a node made by ddl-fake-nodes. Docker ("Dockerfile reference", "Understand
how CMD and ENTRYPOINT interact", https://docs.docker.com/reference/dockerfile/#understand-how-cmd-and-
entrypoint-interact) executes the image's ENTRYPOINT followed by the command, the first word found on PATH,
without a shell; docker-py (docker/docker-py, docker/types/containers.py -> split_command in
docker/utils/utils.py) turns a string command into shlex words first. An executable that cannot be run
fails the container's start (runc: "exec: ...: executable file not found in $PATH").

Run as a script, it is the container's init inside the node's network namespace and fresh mount and UTS
namespaces: `gpulab_worker.py SPEC-JSON` binds the container's own files, then executes the command.
Python 3 standard library only.
"""
import json
import os
import shlex
import shutil
import subprocess
import sys

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"  # Docker's default PATH


def container_argv(job, images):
    """What Docker executes: the image's ENTRYPOINT, then the command as docker-py passes it (a string
    split into shlex words, a list as it is)."""
    d = job["request"]["docker"]
    cmd = d.get("command", [])
    words = shlex.split(cmd) if isinstance(cmd, str) else list(cmd)
    return images.get(d["image"].split("@")[-1], []) + words


def start_container(job, made, images, root, log_path, log_event, project_share=""):
    """Starts the job's container process in its node (made: ddl-fake-nodes' record of it; root: a folder
    for the container's own /root, /tmp and /etc/ssh). Returns (process, None) once the command was
    executed, or (None, why) when it could not be (Docker then fails the container's start)."""
    def refused(why):
        with open(log_path, "a", encoding="utf-8") as log:
            log.write(why + "\n")
        return None, why

    try:
        argv = container_argv(job, images)
    except ValueError as e:  # shlex (docker-py's split_command) refuses an unbalanced quote
        return refused(f"docker-py cannot split the command into words: {e}")
    log_event(f"exec {job['uuid']} {json.dumps(argv)}")
    if not argv:
        return refused("docker: Error response from daemon: No command specified.")
    for sub, mode in (("root", 0o700), ("tmp", 0o1777), ("etc_ssh", 0o755)):
        os.makedirs(os.path.join(root, sub), exist_ok=True)
        os.chmod(os.path.join(root, sub), mode)
    # The image's /etc/ssh: the machine's configuration without its host keys (the command makes its own).
    for name in os.listdir("/etc/ssh"):
        src = os.path.join("/etc/ssh", name)
        if name.startswith("ssh_host_"):
            continue
        dst = os.path.join(root, "etc_ssh", name)
        if os.path.isdir(src):
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dst)
    env = {"PATH": DEFAULT_PATH, "HOSTNAME": made["name"], "HOME": "/root"}
    env.update({k: str(v) for k, v in job["request"]["docker"].get("environment", {}).items()})
    # Storage: the project's share where the job asks for PROJECT_SHARE_AUTO (imec's job2 model: "magic
    # project share"; the site's /project_<site>/<project> folder, here the stand-in's --project-share).
    shares = []
    for st in job["request"]["docker"].get("storage", []):
        host = (st if isinstance(st, str) else st.get("hostPath", "")).rstrip("/")
        if host == "PROJECT_SHARE_AUTO":
            if not project_share:
                return refused("docker: Error response from daemon: the project has no share on this site")
            shares.append((project_share, (None if isinstance(st, str) else st.get("containerPath")) or "/project"))
    spec = {"node_dir": made["node_dir"], "root": root, "hostname": made["name"], "env": env, "argv": argv,
            "shares": shares}
    r, w = os.pipe()
    spec["status_fd"] = w
    log = open(log_path, "ab")
    proc = subprocess.Popen(
        ["nsenter", f"--net=/run/netns/{made['netns']}", "unshare", "--mount", "--uts", "--propagation",
         "private", sys.executable, os.path.abspath(__file__), json.dumps(spec)],
        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, pass_fds=(w,), start_new_session=True,
        env={"PATH": DEFAULT_PATH})
    os.close(w)
    log.close()
    with os.fdopen(r, "rb") as status:
        why = status.read().decode("utf-8", "replace")  # EOF without a word: the command was executed
    if why:
        proc.wait()
        return None, why
    return proc, None


def container_init(spec_text):
    """Inside the node's namespaces: the container's own files, then exec the command (no shell)."""
    spec = json.loads(spec_text)
    status = spec["status_fd"]
    nd, root = spec["node_dir"], spec["root"]
    # /root and /tmp last: the other sources (and Python's own files) may lie below them.
    binds = [(f"{nd}/etc_ddl", "/etc/ddl"), (f"{nd}/opt_ddl", "/opt/ddl"), (f"{nd}/hosts", "/etc/hosts"),
             (f"{nd}/hostname", "/etc/hostname"), (f"{nd}/resolv.conf", "/etc/resolv.conf"),
             (f"{root}/etc_ssh", "/etc/ssh"), (f"{root}/root", "/root"), (f"{root}/tmp", "/tmp")]
    binds[:0] = [tuple(x) for x in spec.get("shares", [])]
    try:
        subprocess.run(["hostname", spec["hostname"]], check=True, capture_output=True)
        for _, dst in spec.get("shares", []):
            os.makedirs(dst, exist_ok=True)
        for src, dst in binds:
            subprocess.run(["mount", "--bind", src, dst], check=True, capture_output=True)
        os.chdir("/")
    except (subprocess.CalledProcessError, OSError) as e:
        os.write(status, f"docker: Error response from daemon: cannot set up the container: {e}".encode())
        sys.exit(125)
    os.set_inheritable(status, False)  # closed by a successful exec: the stand-in reads EOF
    argv = spec["argv"]
    try:
        os.execvpe(argv[0], argv, spec["env"])
    except OSError as e:
        what = "executable file not found in $PATH" if isinstance(e, FileNotFoundError) and "/" not in argv[0] \
            else ("no such file or directory" if isinstance(e, FileNotFoundError) else e.strerror.lower())
        msg = ("docker: Error response from daemon: failed to create task for container: failed to create shim "
               "task: OCI runtime create failed: runc create failed: unable to start container process: "
               f"exec: \"{argv[0]}\": {what}: unknown.")
        print(msg, flush=True)
        os.write(status, msg.encode())
        sys.exit(127)




if __name__ == "__main__":
    container_init(sys.argv[1])
