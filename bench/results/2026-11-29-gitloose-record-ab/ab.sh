#!/bin/bash
# git-loose: the application alone vs under fsbench record (span), fresh ext4 each, cold; PAIRS pairs; STATS=1: bpf stats on one recording
set -e
PAIRS=${1:-6}
FSBENCH=/work/main/target/release/fsbench
REPO=/work/main
W=$(mktemp -d /var/tmp/fsbench-loose.XXXXXX); M=$W/mnt; mkdir -p $M; LOOP=
cleanup(){ set +e; echo 0 > /proc/sys/kernel/bpf_stats_enabled; mountpoint -q $M && umount $M; [ -n "$LOOP" ] && losetup -d $LOOP; rm -rf $W; }
trap cleanup EXIT INT TERM
fresh(){ mountpoint -q $M && umount $M; [ -n "$LOOP" ] && losetup -d $LOOP; LOOP=; rm -f $W/fs.img; truncate -s 4g $W/fs.img
 LOOP=$(losetup --find --show --direct-io=on $W/fs.img); mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $LOOP; mount $LOOP $M; }
cold(){ sync; echo 3 > /proc/sys/vm/drop_caches; }
mkdir -p $W/in; git clone -q --bare --no-local $REPO $W/in/src.git
for pack in $W/in/src.git/objects/pack/*.pack; do mv "$pack" $W/unpack.pack && rm -f "${pack%.pack}".*; git -C $W/in/src.git unpack-objects -q < $W/unpack.pack && rm $W/unpack.pack; done
CMD='git clone -q --no-local src.git work && git -C work checkout -q $(git -C work rev-list --max-count=1 --skip=200 HEAD)'
fresh; mkdir $M/root; cp -a $W/in/. $M/root/; cold; (cd $M/root && sh -c "$CMD")
for p in $(seq 1 $PAIRS); do
 hows="alone rec"; ((p%2)) || hows="rec alone"
 for how in $hows; do
  fresh; mkdir $M/root; cp -a $W/in/. $M/root/; cold
  s=$(date +%s.%N)
  if [ $how = alone ]; then (cd $M/root && sh -c "$CMD"); else (cd $M/root && $FSBENCH record --root $M/root -o $W/t.trace -- sh -c "$CMD") >/dev/null 2>&1; fi
  e=$(date +%s.%N)
  if [ $how = rec ]; then
   st=$($FSBENCH trace show --json $W/t.trace | python3 -c '
import sys,json
ev=0;sd=0;sr=0;sb=0;dur=0;nb=0
for l in sys.stdin:
  d=json.loads(l)
  if "end" in d: dur=d["end"]["duration_ns"]
  e=d.get("event")
  if not e: continue
  ev+=1;sd+=e["dur_ns"];sr+=e.get("recorder_ns",0);b=e.get("blocked_ns",0);sb+=b;nb+=b>0
print("span %.4f events %d calls %.4f recorder %.4f blocked %.4f (%d)"%(dur/1e9,ev,sd/1e9,sr/1e9,sb/1e9,nb))')
  else st=""; fi
  echo "$p $how $(echo "$e - $s"|bc) $st"
 done
done
