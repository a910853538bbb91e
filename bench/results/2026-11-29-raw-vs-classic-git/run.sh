#!/bin/bash
# classic vs raw sched hooks: the same git recording, alternating; stats of each trace and its recorded-time replay on $FS
set -e
ROUNDS=${1:-6}; FS=${FS:-xfs}
FSBENCH=/work/main/target/release/fsbench
REPO=/work/main
W=$(mktemp -d /var/tmp/fsbench-aa.XXXXXX); M=$W/mnt; mkdir -p $M; LOOP=
cleanup(){ set +e; mountpoint -q $M && umount $M; [ -n "$LOOP" ] && losetup -d $LOOP; rm -rf $W; }
trap cleanup EXIT INT TERM
fresh(){ mountpoint -q $M && umount $M; [ -n "$LOOP" ] && losetup -d $LOOP; rm -f $W/fs.img; truncate -s 4g $W/fs.img
 LOOP=$(losetup --find --show --direct-io=on $W/fs.img)
 case $1 in ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $LOOP;; xfs) mkfs.xfs -q -f $LOOP;; btrfs) mkfs.btrfs -q -f $LOOP >/dev/null;; esac
 mount $LOOP $M; }
cold(){ sync; echo 3 > /proc/sys/vm/drop_caches; }
mkdir -p $W/in; git clone -q --bare --no-local $REPO $W/in/src.git
CMD='git clone -q --no-local src.git work && git -C work checkout -q $(git -C work rev-list --max-count=1 --skip=200 HEAD)'
printf 'round\tway\trec_s\tevents\tsum_dur\tsum_rec\tsum_blocked\twoken\tthink\thooks\treplay_s\tapp_s\n'
for r in $(seq 1 $ROUNDS); do
 ways="classic raw"; ((r%2)) || ways="raw classic"
 for way in $ways; do
  fresh ext4; mkdir $M/root; cp -a $W/in/. $M/root/; cold
  if [ $way = classic ]; then export FSBENCH_RECORD_CLASSIC_SCHED=1; else unset FSBENCH_RECORD_CLASSIC_SCHED; fi
  (cd $M/root && $FSBENCH record --root $M/root -o $W/t.trace -- sh -c "$CMD") >/dev/null 2>&1
  unset FSBENCH_RECORD_CLASSIC_SCHED
  st=$($FSBENCH trace show --json $W/t.trace | python3 -c '
import sys,json
ev=0;sd=0;sr=0;sb=0;wk=0;think=0;last={};dur=0;mech=""
for l in sys.stdin:
  d=json.loads(l)
  if "header" in d: mech=d["header"]["mechanism"]
  if "end" in d: dur=d["end"]["duration_ns"]
  e=d.get("event")
  if not e: continue
  ev+=1;sd+=e["dur_ns"];sr+=e.get("recorder_ns",0);sb+=e.get("blocked_ns",0);wk+=("woken" in e)
  t=e["tid"]
  if t in last: think+=max(0,e["start_ns"]-last[t]-e.get("recorder_ns",0))
  last[t]=e["start_ns"]+e["dur_ns"]
print("%.4f\t%d\t%.4f\t%.4f\t%.4f\t%d\t%.4f\t%s"%(dur/1e9,ev,sd/1e9,sr/1e9,sb/1e9,wk,think/1e9,mech.split("(")[1].split(";")[0]))')
  fresh $FS; mkdir $M/root
  $FSBENCH replay --dir $M/root --trace $W/t.trace --timing recorded --dependencies true --cache cold --no-store --quiet --json $W/r.json
  rs=$(python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
w=next(r for r in d["runs"][0]["cases"][0]["samples"][0]["results"] if "operation" not in r)
print({x["metric"]:x["value"] for x in w["measurements"]}["replay_time"]/1e9)' $W/r.json)
  fresh $FS; mkdir $M/root; cp -a $W/in/. $M/root/; cold
  s=$(date +%s.%N); (cd $M/root && sh -c "$CMD"); e=$(date +%s.%N)
  printf '%s\t%s\t%s\t%s\t%s\n' $r $way "$st" $rs $(echo "$e - $s"|bc)
 done
done
