#!/bin/bash
# After a recording: is the next application run slower whatever its filesystem? Rounds of: record (ext4), app A, app B (A/B swapped every round).
set -euo pipefail
N=$1; B=${B:-/root/exp/fsbench-d8f0dbd-rel}
W=$(mktemp -d /var/tmp/ord.XXXXXX); M=$W/mnt; mkdir -p $M
cleanup() { mountpoint -q $M && umount $M; for l in $(losetup -j $W/fs.img | cut -d: -f1); do losetup -d $l; done; rm -rf $W; }
trap cleanup EXIT INT TERM
fresh() { mountpoint -q $M && umount $M; for l in $(losetup -j $W/fs.img 2>/dev/null | cut -d: -f1); do losetup -d $l; done; rm -f $W/fs.img; truncate -s 4g $W/fs.img
  l=$(losetup --find --show --direct-io=on $W/fs.img)
  case $1 in ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $l;; xfs) mkfs.xfs -q -f $l;; esac; mount $l $M
  mkdir $M/root; cp -a $W/src.git $M/root/; sync; echo 3 > /proc/sys/vm/drop_caches; }
git clone -q --bare --no-local /work/main $W/src.git
CMD="git clone -q --no-local src.git work && git -C work checkout -q \$(git -C work rev-list --max-count=1 --skip=200 HEAD)"
app() { fresh $1; s=$(date +%s.%N); (cd $M/root && sh -c "$CMD"); e=$(date +%s.%N); echo "$e - $s" | bc; }
for i in $(seq 1 $N); do
  fresh ext4; (cd $M/root && $B record --root $M/root -o $W/t.trace -- sh -c "$CMD" >/dev/null 2>&1)
  if ((i % 2)); then a=ext4; b=xfs; else a=xfs; b=ext4; fi
  ta=$(app $a); tb=$(app $b)
  echo "round $i: first after the recording $a $ta, second $b $tb"
done
