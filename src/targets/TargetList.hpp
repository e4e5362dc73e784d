#pragma once
// The one list of targets, in the order ddl lists them (messages, `ddl init`, completion). Each entry is
// X(name, Name): the folder src/targets/name/, its spec side `name_kind()` (NameSection.hpp, listed by
// Kinds.cpp) and its driver `NameTarget` (NameTarget.hpp, listed by Registry.cpp). Adding a target: a line
// here, its header in each of those two files, its name in src/targets/CMakeLists.txt.
#define DDL_TARGETS(X)                                                                                       \
    X(openstack, Openstack)                                                                                  \
    X(aws, Aws)                                                                                              \
    X(virtualwall, Virtualwall)                                                                              \
    X(gpulab, Gpulab)                                                                                        \
    X(ssh, Ssh)                                                                                              \
    X(slurm, Slurm)                                                                                          \
    X(local, Local)
