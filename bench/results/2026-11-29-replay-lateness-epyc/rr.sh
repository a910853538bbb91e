#!/bin/bash
# A/B of two replay builds against the same round's recording: git (and others) on ext4.
set -euo pipefail
ROUNDS=${1:-6}; APP=${APP:-git}; FS=${FS:-ext4}
A=/root/exp/fsbench-b7a4d45; B=${B:-/root/exp/fsbench-new}
W=$(mktemp -d /var/tmp/rr.XXXXXX); M=$W/mnt; mkdir -p $M; LOOP=
detach() { for l in $(losetup -j $W/fs.img | cut -d: -f1); do losetup -d $l; done; }
# (fresh runs in subshells too: the loop devices are found by their image, not kept in a variable)
cleanup() { mountpoint -q $M && umount $M; detach; rm -rf $W; }
trap cleanup EXIT INT TERM
KEEP=${KEEP:-}
fresh() { mountpoint -q $M && umount $M; detach; rm -f $W/fs.img; truncate -s 4g $W/fs.img
  LOOP=$(losetup --find --show --direct-io=on $W/fs.img)
  case $1 in ext4) mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $LOOP;; xfs) mkfs.xfs -q -f $LOOP;; btrfs) mkfs.btrfs -q -f $LOOP >/dev/null;; esac
  mount $LOOP $M; }
cold() { sync; echo 3 > /proc/sys/vm/drop_caches; }
mkdir -p $W/in
case $APP in
  git) git clone -q --bare --no-local /work/main $W/in/src.git; CMD="git clone -q --no-local src.git work && git -C work checkout -q \$(git -C work rev-list --max-count=1 --skip=200 HEAD)";;
  git-loose) git clone -q --bare --no-local /work/main $W/in/src.git
    for pack in $W/in/src.git/objects/pack/*.pack; do mv $pack $W/unpack.pack && rm -f ${pack%.pack}.*; git -C $W/in/src.git unpack-objects -q < $W/unpack.pack && rm $W/unpack.pack; done
    CMD="git clone -q --no-local src.git work && git -C work checkout -q \$(git -C work rev-list --max-count=1 --skip=200 HEAD)";;
  sqlite) python3 - $W/in/load.sql 1000 <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("PRAGMA journal_mode=DELETE;\nPRAGMA synchronous=FULL;\n")
    f.write("CREATE TABLE t(id INTEGER PRIMARY KEY, k TEXT, v BLOB);\nCREATE INDEX tk ON t(k);\n")
    for i in range(int(sys.argv[2])):
        f.write(f"BEGIN; INSERT INTO t(k, v) VALUES('key{i * 7919 % 100003}', randomblob(2000)); COMMIT;\n")
PY
  CMD='sqlite3 app.db ".read load.sql" >/dev/null';;
esac
rep() { fresh $FS; mkdir $M/root; "$1" replay --dir $M/root --trace $W/t.trace --timing recorded --dependencies true --cache cold --no-store --quiet --json $W/r.json
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); w=next(r for r in d["runs"][0]["cases"][0]["samples"][0]["results"] if "operation" not in r); m={x["metric"]:x["value"] for x in w["measurements"]}; print(m["replay_time"]/1e9)' $W/r.json; [ -n "$KEEP" ] && cp $W/r.json $KEEP.$(basename $1).json; true; }
app() { fresh $FS; mkdir $M/root; cp -a $W/in/. $M/root/; cold; s=$(date +%s.%N); (cd $M/root && sh -c "$CMD"); e=$(date +%s.%N); echo "$e - $s" | bc; }
echo -e "round\trecording\tapp\told\tnew"
for r in $(seq 1 $ROUNDS); do
  fresh ext4; mkdir $M/root; cp -a $W/in/. $M/root/; cold
  (cd $M/root && $B record --root $M/root -o $W/t.trace -- sh -c "$CMD") 2>/dev/null
  [ -n "$KEEP" ] && cp $W/t.trace $KEEP.$r.trace
  rec=$($B trace stats --json $W/t.trace | python3 -c 'import json,sys; print(json.load(sys.stdin)["duration_ns"]/1e9)')
  if ((r % 2)); then a=$(app); o=$(rep $A); n=$(rep $B); else n=$(rep $B); o=$(rep $A); a=$(app); fi
  echo -e "$r\t$rec\t$a\t$o\t$n"
done
