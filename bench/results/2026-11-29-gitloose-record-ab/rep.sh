#!/bin/bash
# git-loose: record once on fresh ext4 (cold), then replay it (recorded timing, cold) on fresh ext4; per-kind time in the replay vs in the trace
set -e
FSBENCH=/work/main/target/release/fsbench
REPO=/work/main
W=$(mktemp -d /var/tmp/fsbench-loose.XXXXXX); M=$W/mnt; mkdir -p $M; LOOP=
cleanup(){ set +e; mountpoint -q $M && umount $M; [ -n "$LOOP" ] && losetup -d $LOOP; rm -rf $W; }
trap cleanup EXIT INT TERM
fresh(){ mountpoint -q $M && umount $M; [ -n "$LOOP" ] && losetup -d $LOOP; LOOP=; rm -f $W/fs.img; truncate -s 4g $W/fs.img
 LOOP=$(losetup --find --show --direct-io=on $W/fs.img); mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $LOOP; mount $LOOP $M; }
cold(){ sync; echo 3 > /proc/sys/vm/drop_caches; }
mkdir -p $W/in; git clone -q --bare --no-local $REPO $W/in/src.git
for pack in $W/in/src.git/objects/pack/*.pack; do mv "$pack" $W/unpack.pack && rm -f "${pack%.pack}".*; git -C $W/in/src.git unpack-objects -q < $W/unpack.pack && rm $W/unpack.pack; done
CMD='git clone -q --no-local src.git work && git -C work checkout -q $(git -C work rev-list --max-count=1 --skip=200 HEAD)'
fresh; mkdir $M/root; cp -a $W/in/. $M/root/; cold; (cd $M/root && sh -c "$CMD")
for r in 1 2; do
fresh; mkdir $M/root; cp -a $W/in/. $M/root/; cold
(cd $M/root && $FSBENCH record --root $M/root -o $W/t.trace -- sh -c "$CMD") >/dev/null 2>&1
$FSBENCH trace show --json $W/t.trace | python3 -c '
import sys,json,collections
t=collections.Counter();n=collections.Counter();dur=0;bl=0;rec=0
for l in sys.stdin:
  d=json.loads(l)
  if "end" in d: dur=d["end"]["duration_ns"]
  e=d.get("event")
  if not e: continue
  k=list(e["op"].keys())[0] if isinstance(e["op"],dict) else e["op"]
  t[k]+=e["dur_ns"]; n[k]+=1; bl+=e.get("blocked_ns",0); rec+=e.get("recorder_ns",0)
print("recording span %.3f blocked %.3f recorder %.3f"%(dur/1e9,bl/1e9,rec/1e9))
for k,v in t.most_common(8): print("  trace %-10s n %6d total %.4f s"%(k,n[k],v/1e9))'
for way in recorded afap; do
fresh; mkdir $M/root
$FSBENCH replay --dir $M/root --trace $W/t.trace --timing $way --cache cold --no-store --quiet --json $W/r.json 2>/dev/null
cp $W/r.json /root/x41/loose/r-$way-$r.json
done
done
