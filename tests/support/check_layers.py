#!/usr/bin/env python3
"""The dependency rule of ARCHITECTURE.md ("## Dependency rule": one `library: allowed dependencies` line
per library) against the link lines of every CMakeLists.txt under src/: every ddl_* library a library
links must be allowed, and every library the rule names must exist. `--self-test` shows the check fails
on a link the rule does not allow and on a library the rule does not know."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def rule(text):
    block = text.split("## Dependency rule", 1)[1].split("```", 2)[1]
    allowed = {}
    for line in block.splitlines():
        if ":" in line:
            lib, deps = line.split(":", 1)
            allowed[lib.strip()] = set(deps.split())
    return allowed


def links(cmake_files):
    """{library: {ddl_* libraries it links}} from target_link_libraries and ddl_add_target(... LIBS ...)."""
    out = {}
    texts = [re.sub(r"#[^\n]*", "", path.read_text()) for path in cmake_files]
    libraries = {n.replace("${name}", "<name>") for t in texts for n in re.findall(r"add_library\(\s*(\S+)", t)}
    for text in texts:
        for lib, args in re.findall(r"target_link_libraries\(\s*(\S+)([^)]*)\)", text):
            lib = lib.replace("${name}", "<name>").replace("${t}", "<name>")
            if lib not in libraries:
                continue  # a program: it may link any library
            deps = {d.replace("${t}", "<name>") for d in args.split() if d.startswith("ddl_") and d != "ddl_warnings"}
            out.setdefault(lib, set()).update(d for d in deps if not d.startswith("ddl_cuda_headers"))
        for name, args in re.findall(r"ddl_add_target\(\s*(\w+)([^)]*)\)", text):
            deps = set(re.findall(r"\bddl_\w+", args.split("LIBS", 1)[1])) if "LIBS" in args else set()
            out.setdefault("ddl_target_<name>", set()).update(deps)
            out.setdefault(f"ddl_target_{name}", set())
    return out


def problems(allowed, linked):
    found = []
    for lib, deps in sorted(linked.items()):
        key = "ddl_target_<name>" if re.fullmatch(r"ddl_target_(?!kinds\b)\w+", lib) else lib
        if key not in allowed:
            found.append(f"{lib} is not in ARCHITECTURE.md's dependency rule")
            continue
        for d in sorted(deps):
            d_key = "ddl_target_<name>" if re.fullmatch(r"ddl_target_(?!kinds\b)\w+", d) else d
            if d_key not in allowed[key] and d_key != lib:
                found.append(f"{lib} links {d}, which the dependency rule does not allow it")
    for lib in sorted(set(allowed) - {("ddl_target_<name>" if l.startswith("ddl_target_") and l != "ddl_target_kinds" else l) for l in linked}):
        found.append(f"the dependency rule names {lib}, which no CMakeLists.txt defines")
    return found


def main():
    allowed = rule((ROOT / "ARCHITECTURE.md").read_text())
    linked = links(sorted((ROOT / "src").rglob("CMakeLists.txt")))
    if "--self-test" in sys.argv:
        bad = {k: set(v) for k, v in linked.items()}
        bad["ddl_util"].add("ddl_cli")
        bad["ddl_nowhere"] = set()
        found = problems(allowed, bad)
        assert "ddl_util links ddl_cli, which the dependency rule does not allow it" in found, found
        assert "ddl_nowhere is not in ARCHITECTURE.md's dependency rule" in found, found
        print("self-test: a forbidden link and an unknown library are named")
        return 0
    found = problems(allowed, linked)
    for f in found:
        print("layers:", f)
    print(f"layers: {len(linked)} libraries checked against {len(allowed)} rules")
    return 1 if found else 0


sys.exit(main())
