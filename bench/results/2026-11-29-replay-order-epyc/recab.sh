#!/bin/bash
# git recorded by two builds, alternating on fresh ext4s (cold): trace span and the recorder_ns sum.
set -euo pipefail
N=$1; OLD=$2; NEW=$3
W=$(mktemp -d /var/tmp/rab.XXXXXX); M=$W/mnt; mkdir -p $M
cleanup() { mountpoint -q $M && umount $M; for l in $(losetup -j $W/fs.img | cut -d: -f1); do losetup -d $l; done; rm -rf $W; }
trap cleanup EXIT INT TERM
fresh() { mountpoint -q $M && umount $M; for l in $(losetup -j $W/fs.img 2>/dev/null | cut -d: -f1); do losetup -d $l; done; rm -f $W/fs.img; truncate -s 4g $W/fs.img
  l=$(losetup --find --show --direct-io=on $W/fs.img); mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $l; mount $l $M
  mkdir $M/root; cp -a $W/src.git $M/root/; sync; echo 3 > /proc/sys/vm/drop_caches; }
git clone -q --bare --no-local /work/main $W/src.git
CMD="git clone -q --no-local src.git work && git -C work checkout -q \$(git -C work rev-list --max-count=1 --skip=200 HEAD)"
for i in $(seq 1 $N); do
  if ((i % 2)); then order="old new"; else order="new old"; fi
  for who in $order; do
    B=$OLD; [ $who = new ] && B=$NEW
    fresh; (cd $M/root && $B record --root $M/root -o $W/t.trace -- sh -c "$CMD" >/dev/null 2>&1)
    $B trace show --json $W/t.trace | python3 -c '
import json, sys
ev = [json.loads(l)["event"] for l in sys.stdin if l.startswith("{\"event\"")]
span = max(e["start_ns"] + e["dur_ns"] for e in ev) - min(e["start_ns"] for e in ev)
own = sum(e.get("recorder_ns", 0) for e in ev)
print("'$who' round '$i': %d events over %.1f ms; recorder_ns %.1f ms" % (len(ev), span / 1e6, own / 1e6))'
  done
done
