#!/bin/bash
# git alone on fresh ext4 and xfs, alternating, cold: elapsed user sys (s), and major/minor faults, ctx switches.
set -euo pipefail
N=$1
W=$(mktemp -d /var/tmp/afs.XXXXXX); M=$W/mnt; mkdir -p $M
cleanup() { mountpoint -q $M && umount $M; for l in $(losetup -j $W/fs.img | cut -d: -f1); do losetup -d $l; done; rm -rf $W; }
trap cleanup EXIT INT TERM
fresh() { mountpoint -q $M && umount $M; for l in $(losetup -j $W/fs.img 2>/dev/null | cut -d: -f1); do losetup -d $l; done; rm -f $W/fs.img; truncate -s 4g $W/fs.img
  l=$(losetup --find --show --direct-io=on $W/fs.img)
  case $1 in ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $l;; xfs) mkfs.xfs -q -f $l;; esac; mount $l $M
  mkdir $M/root; cp -a $W/src.git $M/root/; sync; echo 3 > /proc/sys/vm/drop_caches; }
git clone -q --bare --no-local /work/main $W/src.git
CMD="git clone -q --no-local src.git work && git -C work checkout -q \$(git -C work rev-list --max-count=1 --skip=200 HEAD)"
for i in $(seq 1 $N); do for fs in ext4 xfs; do
  fresh $fs; (cd $M/root && /usr/bin/time -f "$fs %e %U %S maj=%F min=%R vcs=%w ics=%c" sh -c "$CMD") 2>&1 | tail -1
done; done
