"""The subcommands of the Terraform stand-in (tests/fakes/terraform), for every provider it models: what
differs by provider comes from the provider's module (tests/fakes/terraform_<name>.py, passed in as P).

Follows the Terraform CLI documentation (https://developer.hashicorp.com/terraform/cli/commands):
  - "Command: init": -input, -backend-config, -reconfigure, -upgrade; installs the providers and writes
    .terraform.lock.hcl; the backend's settings are kept in the data directory.
  - "Command: plan": -out saves the plan, -detailed-exitcode, -lock, -refresh, -replace=ADDRESS (a
    resource instance in the state destroyed and created again although its configuration is unchanged;
    repeatable; an address that matches no instance replaces nothing); each planned change is a
    "planned_change" message (a forced replacement's "reason" is "requested", "Machine-readable UI",
    planned_change) and the totals a "change_summary" in the -json stream.
  - "Command: apply": a saved plan that no longer matches the state is "Saved plan is stale"; the plan
    file is consumed.
  - "Command: destroy": -auto-approve (without it and without input, destroy is cancelled).
  - "Command: output": -json prints every output with its type and sensitivity.
  - "Command: state list", "Command: version" (-json).
and, for a resource's change, the provider's documented behaviour (in the provider's module): update in
place, replace, create, delete.
"""
import hashlib
import json
import os
import subprocess
import sys
import time

import tf_cli
from tf_cli import (fail, fingerprint, load_inputs, load_state, nodes_dir, parse_flags, product,
                    require_init, resource_parts, save_state, ui, ui_version)


# ---- nodes through ddl-fake-nodes ----------------------------------------------------------------------

def fake_nodes(*args):
    tool = os.environ.get("DDL_FAKE_NODES")
    if not tool:
        raise RuntimeError("DDL_FAKE_NODES is not set: the stand-in cannot create instances")
    r = subprocess.run([tool] + list(args), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s %s failed: %s" % (tool, args[0], (r.stderr or r.stdout).strip()[-500:]))
    return r.stdout


def nodes_up(P, values, replace=None):
    names = ["master"] + ["worker%d" % (i + 1) for i in range(int(values["worker_count"]))]
    d = nodes_dir(values, P.registry_path())
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "pubkey.pub"), "w") as f:
        f.write(values["public_key"].strip() + "\n")
    out = fake_nodes("up", "--id", values["cluster_name"], "--state-dir", d,
                     "--names", ",".join(names), "--pubkey-file", os.path.join(d, "pubkey.pub"), "--bastion",
                     *(["--replace", replace] if replace else []))
    return json.loads(out)["nodes"]


def nodes_down(st):
    if st.get("fake_nodes"):
        fake_nodes("down", "--id", st["fake_nodes"]["id"], "--state-dir",
                   st["fake_nodes"].get("dir") or os.path.abspath(".fake-nodes"))
        st["fake_nodes"] = None


# ---- one resource's change -----------------------------------------------------------------------------

def recorded(P, addr, values):
    return {k: value for k, (value, _) in P.attributes(addr, values).items()}


def change_action(P, resource, addr, v):
    """noop, update or replace for a resource in the state, from its recorded attributes."""
    want = P.attributes(addr, v)
    have = resource.get("attributes", {})
    changed = [k for k, (value, _) in want.items() if k in have and have[k] != value]
    if any(want[k][1] for k in changed):
        return "replace"
    return "update" if changed else "noop"


def apply_resource(P, addr, action, st, values):
    res = resource_parts(addr)
    if action == "update":
        ui("apply_start", "%s: Modifying..." % addr, hook={"resource": res, "action": action})
        r = next(r for r in st["resources"] if r["addr"] == addr)
        ident = r["id"]
        P.update(addr, ident, values, r.get("attributes", {}), st)  # the state keeps the old values if it fails
        r["attributes"] = recorded(P, addr, values)
        ui("apply_complete", "%s: Modifications complete after 31s [id=%s]" % (addr, ident),
           hook={"resource": res, "action": action, "id_key": "id", "id_value": ident, "elapsed_seconds": 31})
        return
    ui("apply_start", "%s: %s..." % (addr, "Creating" if action == "create" else "Destroying"),
       hook={"resource": res, "action": action})
    time.sleep(0.01)
    if action == "create":
        ui("apply_progress", "%s: Still creating... [10s elapsed]" % addr,
           hook={"resource": res, "action": action, "elapsed_seconds": 10})
        ident = P.create(addr, st, values) or hashlib.md5(addr.encode()).hexdigest()
        st["resources"].append({"addr": addr, "id": ident, "attributes": recorded(P, addr, values)})
        ui("apply_complete", "%s: Creation complete after 12s [id=%s]" % (addr, ident),
           hook={"resource": res, "action": action, "id_key": "id", "id_value": ident, "elapsed_seconds": 12})
    else:
        for r in st["resources"]:
            if r["addr"] == addr:
                P.delete(addr, r["id"])
        st["resources"] = [r for r in st["resources"] if r["addr"] != addr]
        (st.get("secrets") or {}).pop(addr, None)
        ui("apply_complete", "%s: Destruction complete after 2s" % addr,
           hook={"resource": res, "action": action, "elapsed_seconds": 2})


def fail_resource(addr, action, summary, detail):
    ui("apply_errored", "%s: %s errored after 5s" % (addr, "Creation" if action == "create" else "Destruction"),
       level="error", hook={"resource": resource_parts(addr), "action": action, "elapsed_seconds": 5})
    ui("diagnostic", "Error: " + summary, level="error",
       diagnostic={"severity": "error", "summary": summary, "detail": detail, "address": addr})


def fail_and_save(st, addr, action, summary, detail):
    fail_resource(addr, action, summary, detail)
    save_state(st)
    sys.exit(1)


def set_outputs(st, values, P=None):
    """common.tf's outputs, and the provider module's own (P.outputs) where it has some."""
    nodes = st["fake_nodes"]["nodes"] if st.get("fake_nodes") else []
    if not nodes:
        st["outputs"] = {}
        return
    st["outputs"] = {
        "cluster_name": {"sensitive": False, "type": "string", "value": values["cluster_name"]},
        "master_public_ip": {"sensitive": False, "type": "string", "value": nodes[0]["public_address"]},
        "master_private_ip": {"sensitive": False, "type": "string", "value": nodes[0]["private_address"]},
        "worker_private_ips": {"sensitive": False, "type": ["tuple", ["string"] * (len(nodes) - 1)],
                               "value": [n["private_address"] for n in nodes[1:]]},
        "ssh_user": {"sensitive": False, "type": "string", "value": values["ssh_user"]},
    }
    if P is not None and hasattr(P, "outputs"):
        st["outputs"].update(P.outputs(st, values))


# ---- subcommands ---------------------------------------------------------------------------------------

def configured(provider, json_mode):
    """What plan and destroy do first: the data directory must exist, the -json stream opens with the
    version, the module decides the mode (tests/fakes/terraform_<provider>.py), its inputs are read and
    checked, and the provider is configured."""
    require_init(json_mode)
    if json_mode:
        ui_version()
    P = provider()
    values = load_inputs(json_mode, P)
    P.check_env(json_mode, values)
    return P, values


def cmd_version(provider, args):
    flags, _ = parse_flags(args, {"json"}, set())
    if flags.get("json"):
        print(json.dumps({"terraform_version": tf_cli.VERSION, "platform": "linux_amd64", "provider_selections": {},
                          "terraform_outdated": False}, indent=2))
    else:
        print("%s v%s\non linux_amd64" % (product(), tf_cli.VERSION))


def cmd_init(provider, args):
    flags, _ = parse_flags(args, {"input", "no-color", "reconfigure", "upgrade"}, {"backend-config"})
    backend, block = tf_cli.backend_block()
    if backend not in ("local", "http"):
        sys.stderr.write("\nError: Failed to get existing workspaces: the stand-in supports only the local and http backends (got %s)\n" % backend)
        sys.exit(1)
    if flags.get("input", True) is not False:
        sys.stderr.write("\nError: the stand-in must be run with -input=false (ddl never lets Terraform prompt)\n")
        sys.exit(1)
    if backend == "http":
        # init reads the state once (it lists the backend's workspaces): an endpoint that refuses the
        # credentials fails here, as with Terraform.
        tf_cli.http_backend().get()
    if not tf_cli.has_configuration():
        print("\n%s initialized in an empty directory!\n\nThe directory has no %s configuration files. You may "
              "begin working with %s immediately by creating %s configuration files." % ((product(),) * 4))
        return
    P = provider()  # the module decides the mode: tests/fakes/terraform_<provider>.py
    os.makedirs(os.path.join(tf_cli.data_dir(), "providers"), exist_ok=True)
    with open(os.path.join(tf_cli.data_dir(), "terraform.tfstate"), "w") as f:
        # What Terraform records of the backend block (not the values it took from the environment).
        json.dump({"version": 3, "backend": {"type": backend, "config": block if backend == "http" else {}}}, f)
    with open(".terraform.lock.hcl", "w") as f:
        f.write('provider "%s" {\n  version = "%s"\n}\n' % P.LOCK)
    print("\nInitializing the backend...\n\nInitializing provider plugins...\n- Installing %s...\n\n"
          "%s has been successfully initialized!" % (P.INSTALL, product()))


def cmd_plan(provider, args):
    flags, _ = parse_flags(args, {"input", "json", "no-color", "refresh", "detailed-exitcode", "lock"},
                           {"out", "lock-timeout", "replace"})
    json_mode = flags.get("json", False)
    P, values = configured(provider, json_mode)
    P.preconditions(json_mode, values)
    st = load_state()
    if hasattr(P, "refresh") and flags.get("refresh", True) is not False:
        P.refresh(st)  # the provider's Read of what it models as changing behind Terraform's back
    have = {r["addr"]: r for r in st["resources"]}
    want = P.desired(values)
    add = [a for a in want if a not in have]
    remove = [a for a in have if a not in want and not a.startswith("data.")]
    forced = [a for a in flags.get("replace", []) if a in want and a in have]
    # What references a replaced resource's id in an argument that forces a new resource is replaced too.
    follows = [d for a in forced for d in P.replaced_with(a, values) if d in want and d in have and d not in forced]
    update = [a for a in want if a in have and a not in forced + follows
              and change_action(P, have[a], a, values) == "update"]
    replace = [a for a in want if a in have
               and (a in forced + follows or change_action(P, have[a], a, values) == "replace")]
    for a in remove:
        ui("planned_change", "%s: Plan to delete" % a, change={"resource": resource_parts(a), "action": "delete"})
    for a in replace:
        ui("planned_change", "%s: Plan to replace" % a,
           change={"resource": resource_parts(a), "action": "replace",
                   "reason": "requested" if a in forced else "cannot_update"})
    for a in update:
        ui("planned_change", "%s: Plan to update" % a, change={"resource": resource_parts(a), "action": "update"})
    for a in add:
        ui("planned_change", "%s: Plan to create" % a, change={"resource": resource_parts(a), "action": "create"})
    n_add, n_change, n_remove = len(add) + len(replace), len(update), len(remove) + len(replace)
    ui("change_summary", "Plan: %d to add, %d to change, %d to destroy." % (n_add, n_change, n_remove),
       changes={"add": n_add, "change": n_change, "import": 0, "remove": n_remove, "operation": "plan"})
    if "out" in flags:
        with open(flags["out"][-1], "w") as f:
            json.dump({"add": add, "remove": remove, "update": update, "replace": replace, "serial": st["serial"],
                       "fingerprint": fingerprint(values)}, f)


def cmd_apply(provider, args):
    flags, positional = parse_flags(args, {"input", "json", "no-color", "auto-approve"}, {"lock-timeout"}, 1)
    json_mode = flags.get("json", False)
    if not json_mode or not positional:
        sys.stderr.write("\nError: the stand-in applies only a saved plan with -json (ddl: apply -input=false -json tfplan)\n")
        sys.exit(1)
    require_init(json_mode)
    ui_version()
    if not os.path.exists(positional[0]):
        fail(True, "Failed to load \"%s\" as a plan file" % positional[0], "open %s: no such file or directory" % positional[0])
    plan = json.load(open(positional[0]))
    P = provider()  # the module decides the mode: tests/fakes/terraform_<provider>.py
    values = load_inputs(True, P)
    P.check_env(True, values)
    st = load_state()
    if plan["serial"] != st["serial"] or plan["fingerprint"] != fingerprint(values):
        fail(True, "Saved plan is stale", "The given plan file can no longer be applied because the state was "
             "changed by another operation after the plan was created.")
    st.setdefault("resources", [])
    if not any(r["addr"] == P.DATA_SOURCE for r in st["resources"]):
        st["resources"].insert(0, {"addr": P.DATA_SOURCE, "id": "image"})
    fail_once = os.environ.get("FAKE_TF_FAIL_APPLY") == "1" and not os.path.exists(".fake-failed-apply")
    # Instances the plan deletes while others stay: only their nodes go (nodes_up with the new count).
    keep_instances = [a for a in P.desired(values) if a.startswith(P.INSTANCE)]
    try:
        for addr in plan["remove"]:
            if addr.startswith(P.INSTANCE):
                if keep_instances and st.get("fake_nodes"):
                    if len(st["fake_nodes"]["nodes"]) != len(keep_instances):
                        st["fake_nodes"]["nodes"] = nodes_up(P, values)
                else:
                    nodes_down(st)
            apply_resource(P, addr, "delete", st, values)
        # What depends on resources the plan creates (P.CREATED_LAST) is created after them, also when it is
        # replaced: Terraform orders a replacement's create by its dependencies.
        last = [a for a in plan.get("replace", []) + plan["add"] if a in getattr(P, "CREATED_LAST", ())]
        for addr in plan.get("replace", []):
            if addr in last:
                apply_resource(P, addr, "delete", st, values)
                continue
            if addr.startswith(P.INSTANCE) and st.get("fake_nodes"):
                # A new server for this one: its node alone is made anew (new host key, empty folders).
                st["fake_nodes"]["nodes"] = nodes_up(P, values, replace=tf_cli.node_of(addr))
            apply_resource(P, addr, "delete", st, values)
            apply_resource(P, addr, "create", st, values)
        for addr in plan.get("update", []):
            apply_resource(P, addr, "update", st, values)
        for addr in [a for a in plan["add"] if a not in last] + last:
            if fail_once and addr == P.APPLY_FAILURE[0]:
                open(".fake-failed-apply", "w").close()
                fail_and_save(st, addr, "create", P.APPLY_FAILURE[1], P.APPLY_FAILURE[2])
            if addr.startswith(P.INSTANCE) and not st.get("fake_nodes"):
                st["fake_nodes"] = {"id": values["cluster_name"], "nodes": nodes_up(P, values),
                                    "dir": nodes_dir(values, P.registry_path())}
                save_state(st)
            apply_resource(P, addr, "create", st, values)
    except RuntimeError as e:
        fail_and_save(st, addr, "create", getattr(e, "summary", P.CREATE_SERVER_ERROR), str(e))
    set_outputs(st, values, P)
    save_state(st)
    os.remove(positional[0])
    n_add = len(plan["add"]) + len(plan.get("replace", []))
    n_change = len(plan.get("update", []))
    n_remove = len(plan["remove"]) + len(plan.get("replace", []))
    ui("change_summary", "Apply complete! Resources: %d added, %d changed, %d destroyed." % (n_add, n_change, n_remove),
       changes={"add": n_add, "change": n_change, "import": 0, "remove": n_remove, "operation": "apply"})
    ui("outputs", "Outputs: %d" % len(st["outputs"]), outputs=st["outputs"])


def cmd_output(provider, args):
    flags, positional = parse_flags(args, {"json", "no-color", "raw"}, {"state"}, 1)
    st = load_state()
    if flags.get("json"):
        print(json.dumps(st.get("outputs", {}), indent=2))
    else:
        for k, v in sorted(st.get("outputs", {}).items()):
            print("%s = %s" % (k, json.dumps(v["value"])))


def cmd_destroy(provider, args):
    flags, _ = parse_flags(args, {"input", "json", "no-color", "auto-approve"}, {"lock-timeout"})
    json_mode = flags.get("json", False)
    if not flags.get("auto-approve"):
        sys.stderr.write("\nError: Destroy cancelled: no -auto-approve and input is disabled\n")
        sys.exit(1)
    P, values = configured(provider, json_mode)
    st = load_state()
    remaining = int(os.environ.get("FAKE_TF_FAIL_DESTROY", "0") or 0)
    counter = ".fake-failed-destroys"
    failed_so_far = int(open(counter).read()) if os.path.exists(counter) else 0
    addrs = [r["addr"] for r in reversed(st["resources"]) if not r["addr"].startswith("data.")]
    for addr in addrs:
        if addr.startswith(P.DESTROY_FAILURE[0]) and failed_so_far < remaining:
            with open(counter, "w") as f:
                f.write(str(failed_so_far + 1))
            fail_and_save(st, addr, "delete", P.DESTROY_FAILURE[1], P.DESTROY_FAILURE[2])
        if addr.startswith(P.INSTANCE):
            try:
                nodes_down(st)
            except RuntimeError as e:
                fail_and_save(st, addr, "delete", P.DELETE_SERVER_ERROR, str(e))
        apply_resource(P, addr, "delete", st, values)
    st["resources"] = []
    st["outputs"] = {}
    save_state(st)
    if json_mode:
        ui("change_summary", "Destroy complete! Resources: %d destroyed." % len(addrs),
           changes={"add": 0, "change": 0, "import": 0, "remove": len(addrs), "operation": "destroy"})


def cmd_state(provider, args):
    if not args or args[0] != "list":
        sys.stderr.write("Usage: %s [global options] state <subcommand> [options] [args]\n" % tf_cli.TOOL)
        sys.exit(1)
    parse_flags(args[1:], set(), {"state", "id"})
    st = load_state()
    for r in st["resources"]:
        print(r["addr"])


COMMANDS = {"version": cmd_version, "init": cmd_init, "plan": cmd_plan, "apply": cmd_apply,
            "output": cmd_output, "destroy": cmd_destroy, "state": cmd_state}
