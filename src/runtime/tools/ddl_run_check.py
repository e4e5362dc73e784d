"""What `ddl-run` checks before it queues a job: that its program (and the script an interpreter is given)
exists on the master, where the job will start, so a mistyped name is refused at once (exit 2) instead of
becoming a job that fails later (README.md, "Jobs")."""
import os
import re
import shutil

# Interpreters whose first operand is a script file, and the options after which the code is inline.
_INTERPRETERS = {re.compile(r"python[0-9.]*$"): ("-c", "-m"), re.compile(r"(ba|da)?sh$"): ("-c",)}


def _script_of(command):
    """The script file an interpreter command names, or None (not an interpreter, or inline code)."""
    name = os.path.basename(command[0])
    for pattern, inline in _INTERPRETERS.items():
        if not pattern.match(name):
            continue
        for arg in command[1:]:
            if arg in inline:
                return None
            if not arg.startswith("-"):
                return arg
        return None
    return None


def missing(command, workdir, path):
    """Why `command` cannot start in `workdir` with `path` as PATH, or None when its program (and script)
    are there."""
    program = command[0]
    if "/" in program:
        full = program if os.path.isabs(program) else os.path.join(workdir, program)
        if not (os.path.isfile(full) and os.access(full, os.X_OK)):
            return "%s: no such program on the master (in %s)" % (program, workdir)
    elif shutil.which(program, path=path) is None:
        return "%s: no such program on the master's PATH; install it in the spec's setup, or name it by path" % program
    script = _script_of(command)
    if script is not None and not os.path.isfile(os.path.join(workdir, script)):
        return "%s: no such file in the job's folder %s on the master; `ddl sync` sends the workdir" % (script, workdir)
    return None
