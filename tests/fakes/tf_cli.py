"""What the Terraform stand-in (tests/fakes/terraform) shares between its providers: the CLI's output, flags
and errors, the module's variables and inputs, the state and the backend.

Follows:
  - Terraform CLI documentation, "Command: plan", "Command: apply", "Command: init", "Command: destroy",
    "Command: output", "Command: state list": https://developer.hashicorp.com/terraform/cli/commands (flag
    parsing: an unknown flag is "flag provided but not defined", exit 1)
  - "Machine-readable UI" (the -json stream, UI version 1.2):
    https://developer.hashicorp.com/terraform/internals/machine-readable-ui
  - "Input Variables" and "Assigning values to root module variables"
    (https://developer.hashicorp.com/terraform/language/values/variables): a variable without a default is
    required; a value of the wrong type or failing a validation block is an error.
  - "Environment Variables", TF_DATA_DIR (where init keeps providers and the backend's settings instead of
    ./.terraform): https://developer.hashicorp.com/terraform/cli/config/environment-variables#tf_data_dir
  - "Backend Type: http" (https://developer.hashicorp.com/terraform/language/backend/http) through
    tests/fakes/tf_http_backend.py; without backend.tf.json the state is ./terraform.tfstate ("local").
"""
import datetime
import hashlib
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from tf_http_backend import Client as HttpBackend, config as http_backend_config  # noqa: E402

TOOL = "tofu" if os.path.basename(sys.argv[0]).startswith("tofu") else "terraform"
VERSION = os.environ.get("FAKE_TF_VERSION", "1.7.5")
STATE = "terraform.tfstate"
BACKEND = None  # the http backend's client when backend.tf.json names it (set by main)
PROVIDERS = ("aws", "openstack")  # the providers the stand-in models: tests/fakes/terraform_<name>.py


def cidr_network(c):
    """cidrhost(c, 0) works and cidrsubnet(c, 0, 0) == c: a network address with its prefix, no host bits."""
    import ipaddress
    try:
        return str(ipaddress.ip_network(c, strict=True)) == c
    except ValueError:
        return False


def rfc3339_ok(v):
    """Terraform's formatdate() reads it (a real date and time)."""
    try:
        datetime.datetime.strptime(v, "%Y-%m-%dT%H:%M:%SZ")
        return True
    except ValueError:
        return False


# The validation blocks of the inputs every module shares (src/terraform/module/common.tf); each provider's
# VALIDATIONS add those of its own variables.tf.
COMMON_VALIDATIONS = {
    "cluster_name": (lambda v: len(v) <= 40 and re.match(r"^[a-z]([-a-z0-9]*[a-z0-9])?$", v),
                     "cluster_name must be 1-40 lowercase letters, digits and '-', start with a letter and not end with '-'."),
    "ssh_user": (lambda v: re.match(r"^[a-z_][a-z0-9_-]*$", v), "ssh_user must be a valid Unix user name."),
    "public_key": (lambda v: re.match(r"^(ssh-(ed25519|rsa|dss)|ecdsa-sha2-nistp(256|384|521)|sk-[a-z0-9@.-]+) [A-Za-z0-9+/=]+", v.strip()),
                   'public_key must be an OpenSSH public key ("ssh-ed25519 AAAA...").'),
    "worker_count": (lambda v: 0 <= v <= 256 and v == int(v), "worker_count must be a whole number from 0 to 256."),
    "network_cidr": (lambda v: cidr_network(v) and "." in v,
                     "network_cidr must be an IPv4 network address with its prefix, such as 192.168.42.0/24 (no host bits set)."),
    "allowed_cidrs": (lambda v: len(v) > 0 and all(cidr_network(c) for c in v),
                      "Every entry of allowed_cidrs must be a network address with its prefix, such as 203.0.113.0/24 or 2001:db8::/32 (no host bits set)."),
    "expires": (lambda v: v == "" or (re.match(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$", v) and rfc3339_ok(v)),
                "expires must be empty or a UTC time in RFC 3339 with whole seconds, such as 2026-11-28T00:00:00Z."),
}
COMMON_DEFAULTS = {"state_dir": "", "allow_any_source": False, "user_data": "", "expires": "", "stopped": False,
                   "node_credential": False}


def ssh_from_anywhere(json_mode, values, group):
    """common.tf's refusal of a /0 entry without allow_any_source: a precondition of the SSH security group
    (GROUP, the resource address) that fails the plan before anything is created."""
    world = [c for c in values["allowed_cidrs"] if c.endswith("/0")]
    if world and not values["allow_any_source"]:
        fail(json_mode, "Resource precondition failed",
             "allowed_cidrs contains %s, which opens SSH to the whole Internet; list your own networks or set "
             "allow_any_source = true." % ", ".join(world), group)


def now():
    return datetime.datetime.now(datetime.timezone.utc).astimezone().isoformat()


def product():
    return "OpenTofu" if TOOL == "tofu" else "Terraform"


def ui(type_, message, level="info", **extra):
    msg = {"@level": level, "@message": message, "@module": TOOL + ".ui", "@timestamp": now(), "type": type_}
    msg.update(extra)
    print(json.dumps(msg), flush=True)


def ui_version():
    ui("version", "%s %s" % (TOOL.capitalize(), VERSION), terraform=VERSION, ui="1.2")


def usage_error(message):
    # The real CLI's flag parser: message, then usage on stderr, exit 1.
    sys.stderr.write("Error parsing command-line flags: %s\n\nFor more help on using this command, run:\n"
                     "  %s %s -help\n" % (message, TOOL, sys.argv[1] if len(sys.argv) > 1 else ""))
    sys.exit(1)


def parse_flags(args, allowed_bool, allowed_value, max_positional=0):
    """-name, -name=value (also --name). Unknown flag -> the real tool's message."""
    flags, positional = {}, []
    for a in args:
        if a.startswith("-") and len(a) > 1:
            name, eq, value = a.lstrip("-").partition("=")
            if name in allowed_bool:
                if eq and value not in ("true", "false", "1", "0"):
                    usage_error('invalid boolean value "%s" for -%s: parse error' % (value, name))
                flags[name] = (value in ("true", "1")) if eq else True
            elif name in allowed_value:
                if not eq:
                    usage_error("flag needs an argument: -%s" % name)
                flags.setdefault(name, []).append(value)
            else:
                usage_error("flag provided but not defined: -%s" % name)
        else:
            positional.append(a)
    if len(positional) > max_positional:
        sys.stderr.write("Error: Too many command line arguments\n\nExpected at most %d positional argument(s).\n"
                         % max_positional)
        sys.exit(1)
    return flags, positional


def diag_error(json_mode, summary, detail, address=None):
    d = {"severity": "error", "summary": summary, "detail": detail}
    if address:
        d["address"] = address
    if json_mode:
        ui("diagnostic", "Error: " + summary, level="error", diagnostic=d)
    else:
        sys.stderr.write("\nError: %s\n\n%s\n" % (summary, detail))


def fail(json_mode, summary, detail, address=None):
    diag_error(json_mode, summary, detail, address)
    sys.exit(1)


# ---- the module: HCL as far as the stand-in reads it ---------------------------------------------------

def strip_comments(text):
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif c == "#" or text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            i = text.find("*/", i) + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def block_body(text, start):
    """text[start] is '{'; returns the body up to the matching brace (strings skipped)."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c == '"':
            i += 1
            while text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1:i]
        i += 1
    raise ValueError("unbalanced braces")


def top_level_attrs(body):
    """Attribute names written at depth 0 of a block body."""
    names, depth = set(), 0
    for line in body.split("\n"):
        if depth == 0:
            m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_-]*)\s*=", line)
            if m:
                names.add(m.group(1))
        depth += line.count("{") + line.count("[") + line.count("(") - line.count("}") - line.count("]") - line.count(")")
    return names


def module_texts():
    return [(f, strip_comments(open(f).read())) for f in sorted(os.listdir(".")) if f.endswith(".tf")]


def module_provider():
    """The provider the module's .tf files configure (`provider "aws"` / `provider "openstack"`), the
    stand-in's mode; None when they configure neither."""
    for _, text in module_texts():
        for name in PROVIDERS:
            if re.search(r'(?m)^provider\s+"%s"' % name, text):
                return name
    return None


def has_configuration():
    return any(f.endswith(".tf") or f.endswith(".tf.json") for f in os.listdir("."))


def require_configuration():
    if not has_configuration():
        fail(False, "No configuration files",
             "Plan requires configuration to be present. Planning without a configuration would mark "
             "everything for destruction, which is normally not what is desired.")


def load_variables():
    require_configuration()
    variables = {}
    for f, text in module_texts():
        for m in re.finditer(r'(?m)^variable\s+"([^"]+)"\s*\{', text):
            body = block_body(text, m.end() - 1)
            attrs = top_level_attrs(body)
            t = re.search(r"(?m)^\s*type\s*=\s*(.+)$", body)
            variables[m.group(1)] = {"required": "default" not in attrs, "type": t.group(1).strip() if t else "any",
                                     "file": f}
    return variables


def type_ok(type_, value):
    if type_ == "string":
        return isinstance(value, str)
    if type_ == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if type_ == "bool":
        return isinstance(value, bool)
    if type_ == "list(string)":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return True


def load_inputs(json_mode, provider):
    """terraform.tfvars.json and *.auto.tfvars.json checked against the module's variables and PROVIDER's
    validation blocks; the values with the module's defaults filled in."""
    variables = load_variables()
    values, errors, given = {}, 0, set()
    if os.path.exists("terraform.tfvars"):
        fail(json_mode, "Unsupported by the stand-in", "terraform.tfvars (HCL) is not read by tests/fakes/terraform")
    # "Variable Definitions (.tfvars) Files": terraform.tfvars.json, then every *.auto.tfvars.json in
    # lexical order, a later file's value winning.
    files = [f for f in ["terraform.tfvars.json"] if os.path.exists(f)]
    files += sorted(f for f in os.listdir(".") if f.endswith(".auto.tfvars.json"))
    if any(f.endswith(".auto.tfvars") for f in os.listdir(".")):
        fail(json_mode, "Unsupported by the stand-in", "*.auto.tfvars (HCL) is not read by tests/fakes/terraform")
    for path in files:
        try:
            data = json.load(open(path))
        except ValueError as e:
            fail(json_mode, "Invalid JSON in " + path, str(e))
        if not isinstance(data, dict):
            fail(json_mode, "Root value must be object", "The root value in a JSON-based configuration must be an object.")
        given |= set(data)
        for name, value in sorted(data.items()):
            if name not in variables:
                # Real Terraform only warns about an undeclared variable in a .tfvars file; the stand-in
                # fails, because ddl promises to render no input the module does not use.
                diag_error(json_mode, "Value for undeclared variable",
                           'The root module does not declare a variable named "%s" but a value was found in file '
                           '"%s". If you meant to use this value, add a "variable" block to the '
                           'configuration.' % (name, path))
                errors += 1
                continue
            if not type_ok(variables[name]["type"], value):
                diag_error(json_mode, "Invalid value for input variable",
                           'The given value is not suitable for var.%s declared at %s: %s required.'
                           % (name, variables[name]["file"], variables[name]["type"]))
                errors += 1
                continue
            values[name] = value
    for name, v in sorted(variables.items()):
        if v["required"] and name not in given:
            diag_error(json_mode, "No value for required variable",
                       'The root module input variable "%s" is not set, and has no default value. Use a -var or '
                       '-var-file command line argument to provide a value for this variable.' % name)
            errors += 1
    for name, (check, message) in list(COMMON_VALIDATIONS.items()) + list(provider.VALIDATIONS.items()):
        if name in values and not check(values[name]):
            diag_error(json_mode, "Invalid value for variable", message + "\n\nThis was checked by the validation rule at %s." % variables[name]["file"])
            errors += 1
    if errors:
        sys.exit(1)
    for k, v in list(COMMON_DEFAULTS.items()) + list(provider.DEFAULTS.items()):
        values.setdefault(k, v)
    return values


def key_digest(values):
    """What the state records of the public key (a change of it replaces the key pair)."""
    return hashlib.sha256(values["public_key"].strip().encode()).hexdigest()[:16]


def fingerprint(values):
    files = sorted(f for f in os.listdir(".") if f.endswith(".tf") or f.endswith(".tf.json"))
    h = hashlib.sha256(json.dumps(values, sort_keys=True).encode())
    for f in files:
        h.update(open(f, "rb").read())
    return h.hexdigest()


# ---- the state and the backend -------------------------------------------------------------------------

def load_state():
    if BACKEND is not None:
        text = BACKEND.get()
        if text:
            return json.loads(text)
    elif os.path.exists(STATE):
        return json.load(open(STATE))
    return {"version": 4, "terraform_version": VERSION, "serial": 0, "lineage": hashlib.sha1(os.getcwd().encode()).hexdigest()[:36],
            "resources": [], "outputs": {}, "fake_nodes": None}


def save_state(st):
    st["serial"] += 1
    if BACKEND is not None:
        BACKEND.put(json.dumps(st, indent=2))
        return
    tmp = STATE + ".tmp"
    with open(tmp, "w") as f:
        json.dump(st, f, indent=2)
    os.chmod(tmp, 0o600)
    os.replace(tmp, STATE)


def state_id(st, addr):
    return next((r["id"] for r in st["resources"] if r["addr"] == addr), None)


def resource_parts(addr):
    m = re.match(r'^([a-z0-9_]+)\.([a-z0-9_]+)(\[.*\])?$', addr)
    key = None
    if m.group(3):
        k = m.group(3)[1:-1]
        key = json.loads(k) if k.startswith('"') else int(k)
    return {"addr": addr, "module": "", "resource": addr, "implied_provider": "aws" if addr.startswith("aws_") else "openstack",
            "resource_type": m.group(1), "resource_name": m.group(2), "resource_key": key}


def data_dir():
    return os.environ.get("TF_DATA_DIR") or ".terraform"


def require_init(json_mode):
    if not os.path.isdir(data_dir()):
        fail(json_mode, "Backend initialization required, please run \"%s init\"" % TOOL,
             'Reason: Initial configuration of the requested backend "local"')


def backend_block():
    """The backend's type and settings in backend.tf.json ("local" and none without the file)."""
    if not os.path.exists("backend.tf.json"):
        return "local", {}
    b = json.load(open("backend.tf.json"))["terraform"]["backend"]
    return list(b)[0], list(b.values())[0]


def http_backend():
    return HttpBackend(http_backend_config(backend_block()[1], os.environ))


# ---- the shared cloud ----------------------------------------------------------------------------------

class CloudError(RuntimeError):
    """A refusal of the cloud's API, as the provider reports it (summary, detail)."""

    def __init__(self, summary, detail):
        super().__init__(detail)
        self.summary = summary


def nodes_dir(values, registry):
    """Where the nodes' ddl-fake-nodes state lives: ./.fake-nodes, or with a shared cloud (REGISTRY, the
    path of its registry) outside the user's state folder (a cloud's VMs outlive it),
    <folder of the registry>/nodes/<cluster>."""
    if registry:
        return os.path.join(os.path.dirname(registry), "nodes", values["cluster_name"])
    return os.path.abspath(".fake-nodes")


def registry_from_env(variable):
    """The absolute path of a shared cloud's registry named by the environment VARIABLE, or None."""
    path = os.environ.get(variable)
    return os.path.abspath(path) if path else None


def api_module(name):
    """tests/fakes/<name>.py, the API stand-in whose registry and item shapes a shared cloud uses."""
    import importlib
    return importlib.import_module(name)


def node_of(addr):
    """The ddl-fake-nodes name of an instance's address: "master", or "worker<i+1>" for ...worker[i]."""
    return "master" if addr.endswith(".master") else "worker%d" % (int(addr.split("[")[1][:-1]) + 1)


def node_power(st, addr, on):
    """Without a shared cloud: powers the node of instance ADDR off or on (tests/fakes/openstack_registry.py
    fake_nodes_power) from what the state records of the nodes. Raises CloudError(summary) when it fails."""
    fn = st.get("fake_nodes")
    if not fn:
        return
    nodes = {"id": fn["id"], "state_dir": fn.get("dir") or os.path.abspath(".fake-nodes"), "node": node_of(addr)}
    error = api_module("openstack_registry").fake_nodes_power(nodes, [n["name"] for n in fn["nodes"]], on)
    if error:
        raise CloudError("Error %s the instance's node" % ("starting" if on else "stopping"), error)
