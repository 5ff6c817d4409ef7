#!/bin/sh
# A real OOM kill on a cgroup v1 host, then its diagnosis (run as root).
# Creates a child of this shell's memory cgroup with a 64 MiB limit, runs an
# allocator in it until the kernel kills it, diagnoses, removes the cgroup.
set -u
own=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3}' /proc/self/cgroup)
cg=/sys/fs/cgroup/memory${own%/}/aimem-demo
mkdir "$cg" && echo $((64 << 20)) > "$cg/memory.limit_in_bytes"
sh -c "echo \$\$ > $cg/cgroup.procs; exec python3 -c 'a = []
while True: a.append(bytearray(1 << 20))'"
echo "exit status: $?"
./build/aimem diagnose --since 1m
rmdir "$cg"
