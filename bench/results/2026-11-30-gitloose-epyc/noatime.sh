#!/bin/bash
# One git-loose recording; then the app and the recorded-time replay on fresh FS mounted relatime
# (the default) and noatime, alternating: does the replay pay atime updates the app does not?
set -euo pipefail
N=$1; FS=${FS:-ext4}; B=/work/main/target/release/fsbench; T=${T:-recorded}
W=$(mktemp -d /var/tmp/nat.XXXXXX); M=$W/mnt; mkdir -p $M
cleanup() { mountpoint -q $M && umount $M; for l in $(losetup -j $W/fs.img | cut -d: -f1); do losetup -d $l; done; rm -rf $W; }
trap cleanup EXIT INT TERM
fresh() { mountpoint -q $M && umount $M; for l in $(losetup -j $W/fs.img 2>/dev/null | cut -d: -f1); do losetup -d $l; done; rm -f $W/fs.img; truncate -s 4g $W/fs.img
  l=$(losetup --find --show --direct-io=on $W/fs.img)
  case $FS in ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $l;; xfs) mkfs.xfs -q -f $l;; btrfs) mkfs.btrfs -q -f $l >/dev/null;; esac; mount -o $1 $l $M; mkdir $M/root; }
mkdir $W/in; git clone -q --bare --no-local /work/main $W/in/src.git
for pack in $W/in/src.git/objects/pack/*.pack; do mv $pack $W/u.pack && rm -f ${pack%.pack}.*; git -C $W/in/src.git unpack-objects -q < $W/u.pack; rm $W/u.pack; done
cp -a $W/in $W/throwaway
CMD="git clone -q --no-local src.git work && git -C work checkout -q \$(git -C work rev-list --max-count=1 --skip=200 HEAD)"
cold() { sync; echo 3 > /proc/sys/vm/drop_caches; }
app() { fresh $1; cp -a $W/in/. $M/root/; cold; s=$(date +%s.%N); (cd $M/root && sh -c "$CMD"); e=$(date +%s.%N); echo "app $1 $(echo "$e - $s" | bc)"; }
rep() { fresh $1; $B replay --dir $M/root --trace $W/t.trace --timing $T --cache ${CACHE:-cold} --no-store --quiet --json $W/r.json
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); w=next(r for r in d["runs"][0]["cases"][0]["samples"][0]["results"] if "operation" not in r); print("replay", sys.argv[2], {m["metric"]: m["value"] for m in w["measurements"]}["replay_time"]/1e9)' $W/r.json $1; }
app relatime >/dev/null
fresh relatime; cp -a $W/in/. $M/root/; cold; (cd $M/root && $B record --root $M/root -o $W/t.trace -- sh -c "$CMD") 2>/dev/null
echo "recording $($B trace stats --json $W/t.trace | python3 -c 'import json,sys; print(json.load(sys.stdin)["duration_ns"]/1e9)')"
for i in $(seq 1 $N); do
  if ((i % 2)); then o="relatime noatime"; else o="noatime relatime"; fi
  for m in $o; do [ -z "${NOAPP:-}" ] && app $m; rep $m; done
done
