#!/bin/bash
# One git recording with the kernel's BPF run-time statistics on: each program's run count and time,
# read from the recorder's fdinfo every 20 ms by one Python process (no process spawned per
# sample: a sampler that forks would add its own faults and system calls to the system-wide hooks).
set -euo pipefail
B=${B:-/root/exp/fsbench-d8f0dbd-rel}
W=$(mktemp -d /var/tmp/bst.XXXXXX); M=$W/mnt; mkdir -p $M
cleanup() { sysctl -q kernel.bpf_stats_enabled=0; mountpoint -q $M && umount $M; for l in $(losetup -j $W/fs.img | cut -d: -f1); do losetup -d $l; done; rm -rf $W; }
trap cleanup EXIT INT TERM
truncate -s 4g $W/fs.img; l=$(losetup --find --show --direct-io=on $W/fs.img); mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $l; mount $l $M
git clone -q --bare --no-local /work/main $W/src.git
mkdir $M/root; cp -a $W/src.git $M/root/; sync; echo 3 > /proc/sys/vm/drop_caches
CMD="git clone -q --no-local src.git work && git -C work checkout -q \$(git -C work rev-list --max-count=1 --skip=200 HEAD)"
sysctl -q kernel.bpf_stats_enabled=1
(cd $M/root && exec /usr/bin/time -f "git and sh (waited for by the recorder): minor faults %R" $B record --root $M/root -o $W/t.trace -- sh -c "$CMD" >/dev/null 2>$W/time.err) & 
sleep 0.05
P=$(pgrep -n -f "record --root $M/root")
python3 - $P <<'PY'
import os, re, sys, time
pid = sys.argv[1]; best = {}
while os.path.exists(f"/proc/{pid}"):
    try:
        for fd in os.listdir(f"/proc/{pid}/fdinfo"):
            try:
                t = open(f"/proc/{pid}/fdinfo/{fd}").read()
            except OSError:
                continue
            if "prog_type" not in t: continue
            g = dict(re.findall(r"^(\w+):\s*(\S+)", t, re.M))
            i, rt, rc = int(g["prog_id"]), int(g["run_time_ns"]), int(g["run_cnt"])
            if rt >= best.get(i, (0, 0, ""))[0]: best[i] = (rt, rc, g["prog_tag"])
    except OSError:
        pass
    time.sleep(0.02)
tot = 0
for i, (rt, rc, tag) in sorted(best.items()):
    tot += rt; print(f"prog {i} {tag}: {rt / 1e6:.1f} ms over {rc} runs ({rt / max(rc, 1):.0f} ns each)")
print(f"total {tot / 1e6:.1f} ms")
PY
wait
cat $W/time.err | tail -1
$B trace show --json $W/t.trace | python3 -c '
import json, sys
ev = [json.loads(l)["event"] for l in sys.stdin if l.startswith("{\"event\"")]
span = max(e["start_ns"] + e["dur_ns"] for e in ev) - min(e["start_ns"] for e in ev)
own = sum(e.get("recorder_ns", 0) for e in ev)
print("trace: %d events over %.0f ms; the probes measured %.1f ms of their own (recorder_ns)" % (len(ev), span / 1e6, own / 1e6))'
