#!/bin/bash
# git or git-loose on ext4 on a loop device whose image is in tmpfs (no disk noise): per round,
# a recording, the app, and the recorded-time and afap replays of that round's trace, cold.
set -euo pipefail
N=$1; APP=${APP:-git-loose}; FS=${FS:-ext4}; B=${B:-/work/main/target/release/fsbench}
W=$(mktemp -d /var/tmp/shm.XXXXXX); I=$(mktemp -d /dev/shm/img.XXXXXX); M=$W/mnt; mkdir -p $M
cleanup() { mountpoint -q $M && umount $M; for l in $(losetup -j $I/fs.img | cut -d: -f1); do losetup -d $l; done; rm -rf $W $I; }
trap cleanup EXIT INT TERM
fresh() { mountpoint -q $M && umount $M; for l in $(losetup -j $I/fs.img 2>/dev/null | cut -d: -f1); do losetup -d $l; done; rm -f $I/fs.img; truncate -s 4g $I/fs.img
  l=$(losetup --find --show $I/fs.img)
  case $FS in ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $l;; xfs) mkfs.xfs -q -f $l;; btrfs) mkfs.btrfs -q -f $l >/dev/null;; esac; mount $l $M; mkdir $M/root; }
mkdir $W/in; git clone -q --bare --no-local /work/main $W/in/src.git
if [ $APP = git-loose ]; then for pack in $W/in/src.git/objects/pack/*.pack; do mv $pack $W/u.pack && rm -f ${pack%.pack}.*; git -C $W/in/src.git unpack-objects -q < $W/u.pack; rm $W/u.pack; done; fi
cp -a $W/in $W/throwaway
CMD="git clone -q --no-local src.git work && git -C work checkout -q \$(git -C work rev-list --max-count=1 --skip=200 HEAD)"
cold() { sync; echo 3 > /proc/sys/vm/drop_caches; }
app() { fresh; cp -a $W/in/. $M/root/; cold; s=$(date +%s.%N); (cd $M/root && sh -c "$CMD"); e=$(date +%s.%N); echo "$(echo "$e - $s" | bc)"; }
rep() { fresh; $B replay --dir $M/root --trace $W/t.trace --timing $1 --cache cold --no-store --quiet --json $W/r.json
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); w=next(r for r in d["runs"][0]["cases"][0]["samples"][0]["results"] if "operation" not in r); print({m["metric"]: m["value"] for m in w["measurements"]}["replay_time"]/1e9)' $W/r.json; }
app >/dev/null
echo -e "round\trecording\tapp\trecorded\tafap"
for i in $(seq 1 $N); do
  fresh; cp -a $W/in/. $M/root/; cold; (cd $M/root && $B record --root $M/root -o $W/t.trace -- sh -c "$CMD") 2>/dev/null
  r=$($B trace stats --json $W/t.trace | python3 -c 'import json,sys; print(json.load(sys.stdin)["duration_ns"]/1e9)')
  if ((i % 2)); then a=$(app); rr=$(rep recorded); af=$(rep afap); else af=$(rep afap); rr=$(rep recorded); a=$(app); fi
  echo -e "$i\t$r\t$a\t$rr\t$af"
done
