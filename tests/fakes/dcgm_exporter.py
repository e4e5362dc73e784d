#!/usr/bin/env python3
"""Follows NVIDIA's DCGM exporter (NVIDIA/dcgm-exporter, README "Quickstart": GET :9400/metrics; its
etc/default-counters.csv: "DCGM_FI_DEV_GPU_UTIL, gauge, GPU utilization (in %)"), in Prometheus's text
exposition format ("Exposition formats", "Text-based format", https://prometheus.io/docs/instrumenting/
exposition_formats/): a # HELP and a # TYPE line, then one sample per GPU labelled gpu, UUID, pci_bus_id,
device, modelName, Hostname and DCGM_FI_DRIVER_VERSION, as the exporter labels them.

A stand-in for the exporter on a machine without an NVIDIA GPU (real dcgm-exporter needs DCGM and a GPU):
`dcgm_exporter.py --port-file F --gpus FILE` serves GET /metrics with one GPU per line of FILE (its
utilisation in percent, read at each scrape, so a test changes it between scrapes); any other path is 404,
any other method 501 (http.server's own answer). Python 3 standard library only.
"""
import argparse
import os
import http.server
import socket

HELP = "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"


def metrics(gpus_file):
    with open(gpus_file) as f:
        utils = [line.strip() for line in f if line.strip()]
    host = socket.gethostname()
    out = [HELP]
    for i, u in enumerate(utils):
        out.append('DCGM_FI_DEV_GPU_UTIL{gpu="%d",UUID="GPU-00000000-0000-0000-0000-00000000000%d",'
                   'pci_bus_id="00000000:%02X:00.0",device="nvidia%d",modelName="NVIDIA H100 80GB HBM3",'
                   'Hostname="%s",DCGM_FI_DRIVER_VERSION="580.65.06"} %d\n' % (i, i, 0x18 + i, i, host, int(u)))
    return "".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--gpus", required=True)
    a = ap.parse_args()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404)
                return
            body = metrics(a.gpus).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    tmp = a.port_file + ".tmp"  # the port appears whole or not at all
    with open(tmp, "w") as f:
        print(server.server_address[1], file=f)
    os.rename(tmp, a.port_file)
    server.serve_forever()


main()
