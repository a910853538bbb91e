#!/bin/bash
# One git recording with kernel.bpf_stats_enabled: per BPF program run count and time, sampled from the recorder's fdinfo.
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
(cd $M/root && exec $B record --root $M/root -o $W/t.trace -- sh -c "$CMD" >/dev/null 2>&1) & P=$!
: > $W/last
while kill -0 $P 2>/dev/null; do
  out=$(for f in /proc/$P/fdinfo/*; do if grep -q '^prog_type' $f 2>/dev/null; then echo "$(grep -h '^prog_tag\|^run_time_ns\|^run_cnt\|^prog_id' $f | tr '\n' ' ')"; fi; done 2>/dev/null)
  [ -n "$out" ] && echo "$out" >> $W/last
  sleep 0.02
done
python3 - $W/last <<'PY'
import sys,re
best={}
for line in open(sys.argv[1]):
    m=re.search(r"prog_tag:\s*(\S+) prog_id:\s*(\d+) run_time_ns:\s*(\d+) run_cnt:\s*(\d+)",line)
    if m:
        tag,pid,t,c=m.group(1),int(m.group(2)),int(m.group(3)),int(m.group(4))
        if t>=best.get(pid,(0,0,""))[0]: best[pid]=(t,c,tag)
tot=0
for pid,(t,c,tag) in sorted(best.items()):
    tot+=t; print(f"prog {pid} {tag}: {t/1e6:.1f} ms over {c} runs ({t/max(c,1):.0f} ns each)")
print(f"total {tot/1e6:.1f} ms")
PY
$B trace show --json $W/t.trace | python3 -c '
import json, sys
ev = [json.loads(l)["event"] for l in sys.stdin if l.startswith("{\"event\"")]
span = max(e["start_ns"] + e["dur_ns"] for e in ev) - min(e["start_ns"] for e in ev)
own = sum(e.get("recorder_ns", 0) for e in ev)
print("trace: %d events over %.0f ms; the probes measured %.1f ms of their own (recorder_ns)" % (len(ev), span / 1e6, own / 1e6))'
