#!/bin/bash
# One git-loose recording (tmpfs-backed loop, ext4, cold) under perf record -a: CPU by command and thread.
set -euo pipefail
APP=${APP:-git-loose}; B=${B:-/work/main/target/release/fsbench}
W=$(mktemp -d /var/tmp/pr.XXXXXX); I=$(mktemp -d /dev/shm/img.XXXXXX); M=$W/mnt; mkdir -p $M
cleanup() { mountpoint -q $M && umount $M; for l in $(losetup -j $I/fs.img | cut -d: -f1); do losetup -d $l; done; rm -rf $W $I; }
trap cleanup EXIT INT TERM
truncate -s 4g $I/fs.img; l=$(losetup --find --show $I/fs.img); mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $l; mount $l $M; mkdir $M/root
mkdir $W/in; git clone -q --bare --no-local /work/main $W/in/src.git
if [ $APP = git-loose ]; then for pack in $W/in/src.git/objects/pack/*.pack; do mv $pack $W/u.pack && rm -f ${pack%.pack}.*; git -C $W/in/src.git unpack-objects -q < $W/u.pack; rm $W/u.pack; done; fi
cp -a $W/in $W/throwaway
CMD="git clone -q --no-local src.git work && git -C work checkout -q \$(git -C work rev-list --max-count=1 --skip=200 HEAD)"
cp -a $W/in/. $M/root/; sync; echo 3 > /proc/sys/vm/drop_caches
cd $M/root
perf record -q -o /root/exp/perf.data -a -F 1999 -- $B record --root $M/root -o $W/t.trace -- sh -c "$CMD" 2>&1 | tail -2
cd /
perf report -i /root/exp/perf.data --stdio --sort comm 2>/dev/null | grep -v "^#" | grep -v "^$" | head -15
