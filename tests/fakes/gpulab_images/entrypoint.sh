#!/bin/sh
# Follows: Docker, "Dockerfile reference", section "Understand how CMD and ENTRYPOINT interact"
# (https://docs.docker.com/reference/dockerfile/#understand-how-cmd-and-entrypoint-interact): an exec-form
# ENTRYPOINT receives the container's command as its arguments.
# The ENTRYPOINT of the GPULab stand-in's test image, shaped like NGC images' /opt/nvidia/nvidia_entrypoint.sh
# (a banner, then `exec "$@"`): Docker runs it with the job's command as its arguments.
echo "== ddl test image: entrypoint ran with $# argument(s) =="
exec "$@"
