#!/bin/bash
# git-loose on a cp -a tree (atime after mtime, as the bench's inputs have after their first copy)
# against the same tree with every atime set 1 s before its mtime (as a freshly made tree has):
# relatime then updates each file's atime on its first read.
set -euo pipefail
N=$1; FS=${FS:-ext4}
W=$(mktemp -d /var/tmp/atm.XXXXXX); M=$W/mnt; mkdir -p $M
cleanup() { mountpoint -q $M && umount $M; for l in $(losetup -j $W/fs.img | cut -d: -f1); do losetup -d $l; done; rm -rf $W; }
trap cleanup EXIT INT TERM
fresh() { mountpoint -q $M && umount $M; for l in $(losetup -j $W/fs.img 2>/dev/null | cut -d: -f1); do losetup -d $l; done; rm -f $W/fs.img; truncate -s 4g $W/fs.img
  l=$(losetup --find --show --direct-io=on $W/fs.img)
  case $FS in ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $l;; xfs) mkfs.xfs -q -f $l;; btrfs) mkfs.btrfs -q -f $l >/dev/null;; esac; mount $l $M
  mkdir $M/root; cp -a $W/in/. $M/root/; }
mkdir $W/in; git clone -q --bare --no-local /work/main $W/in/src.git
for pack in $W/in/src.git/objects/pack/*.pack; do mv $pack $W/u.pack && rm -f ${pack%.pack}.*; git -C $W/in/src.git unpack-objects -q < $W/u.pack; rm $W/u.pack; done
cp -a $W/in $W/throwaway  # the inputs' first read: their atime after their mtime from now on
CMD="git clone -q --no-local src.git work && git -C work checkout -q \$(git -C work rev-list --max-count=1 --skip=200 HEAD)"
run() { sync; echo 3 > /proc/sys/vm/drop_caches; s=$(date +%s.%N); (cd $M/root && sh -c "$CMD"); e=$(date +%s.%N); echo "$1 $(echo "$e - $s" | bc)"; }
for i in $(seq 1 $N); do
  fresh; run cpa
  fresh; python3 - $M/root <<'PY'
import os, sys
for d, dirs, files in os.walk(sys.argv[1]):
    for n in [d] + [os.path.join(d, f) for f in files]:
        st = os.lstat(n)
        os.utime(n, ns=(st.st_mtime_ns - 1_000_000_000, st.st_mtime_ns), follow_symlinks=False)
PY
  run fresh-atime
done
