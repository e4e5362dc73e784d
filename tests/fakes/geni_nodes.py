"""What the testbed stand-ins (tests/fakes/jfed-cli, tests/fakes/geni_aggregate.py) share: reading a GENI v3
request RSpec as a Virtual Wall aggregate reads it, making the slice's nodes as real local nodes with
$DDL_FAKE_NODES, and writing the GENI v3 manifest RSpec that points at them.

Follows: "RSpec" (Fed4FIRE testbed docs) https://fed4fire-testbeds.ilabt.iminds.be/asciidoc/rspec.html and
the GENI v3 request/manifest schemas (http://www.geni.net/resources/rspec/3/request.xsd, manifest.xsd):
<node client_id component_manager_id exclusive> with <sliver_type name="raw-pc"> (optional <disk_image
name=URN>), <interface client_id>, <link> with <interface_ref> and <property capacity> in kbit/s; a manifest
adds component_id, sliver_id, <services><login authentication="ssh-keys" hostname port username> and <host>.
Python 3 standard library only. Errors are raised as RspecError (the caller says them its own way).
"""
import os
import re
import subprocess
import xml.etree.ElementTree as ET

GENI = "http://www.geni.net/resources/rspec/3"
AUTHORITIES = {
    "urn:publicid:IDN+wall1.ilabt.iminds.be+authority+cm",
    "urn:publicid:IDN+wall2.ilabt.iminds.be+authority+cm",
}


class RspecError(Exception):
    pass


def parse_request(text, label="rspec"):
    """(authority, node client ids) of a GENI v3 request RSpec for one Virtual Wall aggregate."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise RspecError(f"{label}: {e}")
    if root.tag != f"{{{GENI}}}rspec" or root.get("type") != "request":
        raise RspecError(f"{label}: not a GENI v3 request RSpec")
    first = root.find(f"{{{GENI}}}node")
    authority = first.get("component_manager_id") if first is not None else None
    if authority not in AUTHORITIES:
        raise RspecError(f"{label}: not for a Virtual Wall aggregate ({authority})")
    names, ifaces = [], set()
    for node in root.findall(f"{{{GENI}}}node"):
        cid = node.get("client_id")
        if not cid or cid in names:
            raise RspecError(f"{label}: node without client_id, or a repeated one ({cid})")
        if node.get("component_manager_id") != authority:
            raise RspecError(f"{label}: node {cid} is for {node.get('component_manager_id')}, not {authority}")
        sliver = node.find(f"{{{GENI}}}sliver_type")
        if sliver is None or sliver.get("name") != "raw-pc":
            raise RspecError(f"{label}: node {cid} is not a raw-pc")
        image = sliver.find(f"{{{GENI}}}disk_image")
        if image is not None and not image.get("name", "").startswith("urn:publicid:IDN+"):
            raise RspecError(f"{label}: node {cid} has a disk_image that is not a URN")
        for iface in node.findall(f"{{{GENI}}}interface"):
            ifaces.add(iface.get("client_id"))
        names.append(cid)
    if not names:
        raise RspecError(f"{label}: no nodes")
    for link in root.findall(f"{{{GENI}}}link"):
        for ref in link.findall(f"{{{GENI}}}interface_ref"):
            if ref.get("client_id") not in ifaces:
                raise RspecError(f"{label}: link refers to unknown interface {ref.get('client_id')}")
        for prop in link.findall(f"{{{GENI}}}property"):
            if not re.fullmatch(r"[1-9][0-9]*", prop.get("capacity", "")):
                raise RspecError(f"{label}: link capacity {prop.get('capacity')!r} is not kbit/s")
    return authority, names


def _fake_nodes(*args):
    tool = os.environ.get("DDL_FAKE_NODES")
    if not tool:
        raise RspecError("DDL_FAKE_NODES is not set")
    r = subprocess.run([tool, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise RspecError(f"the nodes: {r.stderr.strip()}")
    return r.stdout


def make_nodes(state_dir, slice_id, names, pubkey_file):
    """Real local nodes named after the RSpec's client ids, admitting the keys in pubkey_file."""
    import json
    out = _fake_nodes("up", "--id", slice_id, "--state-dir", state_dir, "--names", ",".join(names),
                      "--pubkey-file", pubkey_file)
    return json.loads(out)["nodes"]


def remove_nodes(state_dir, slice_id):
    _fake_nodes("down", "--id", slice_id, "--state-dir", state_dir)


def manifest(names, nodes, authority, generated_by, sliver_ids=None):
    """The GENI v3 manifest RSpec of the nodes (nodes[i] = {public_address, port, user})."""
    ET.register_namespace("", GENI)
    root = ET.Element(f"{{{GENI}}}rspec", {"type": "manifest", "generated_by": generated_by})
    host_domain = authority.split("+")[1]
    for i, (name, n) in enumerate(zip(names, nodes)):
        addr = n["public_address"]
        sliver_id = sliver_ids[i] if sliver_ids else f"urn:publicid:IDN+{host_domain}+sliver+{abs(hash(name)) % 100000}"
        node = ET.SubElement(root, f"{{{GENI}}}node", {
            "client_id": name, "exclusive": "true", "component_manager_id": authority,
            "component_id": f"urn:publicid:IDN+{host_domain}+node+fake-{name}",
            "sliver_id": sliver_id})
        ET.SubElement(node, f"{{{GENI}}}sliver_type", {"name": "raw-pc"})
        services = ET.SubElement(node, f"{{{GENI}}}services")
        ET.SubElement(services, f"{{{GENI}}}login", {"authentication": "ssh-keys", "hostname": addr,
                                                    "port": str(n["port"]), "username": n["user"]})
        ET.SubElement(node, f"{{{GENI}}}host", {"name": f"{name}.fake.{host_domain}", "ipv4": addr})
    return ET.tostring(root, encoding="unicode", xml_declaration=True)
