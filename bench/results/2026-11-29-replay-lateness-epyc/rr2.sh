#!/bin/bash
# One trace (arg 1), replayed recorded-timing N times each with the rule and without, alternating; prints seconds.
set -euo pipefail
T=$1; N=${2:-5}; B=${B:-/root/exp/fsbench-new}; FS=${FS:-ext4}
W=$(mktemp -d /var/tmp/rr.XXXXXX); M=$W/mnt; mkdir -p $M; LOOP=
detach() { for l in $(losetup -j $W/fs.img | cut -d: -f1); do losetup -d $l; done; }
# (fresh runs in subshells too: the loop devices are found by their image, not kept in a variable)
cleanup() { mountpoint -q $M && umount $M; detach; rm -rf $W; }
trap cleanup EXIT INT TERM
fresh() { mountpoint -q $M && umount $M; detach; rm -f $W/fs.img; truncate -s 4g $W/fs.img
  LOOP=$(losetup --find --show --direct-io=on $W/fs.img); mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $LOOP; mount $LOOP $M; }
rep() { fresh; mkdir $M/root; $B replay --dir $M/root --trace $T --timing ${TIMING:-recorded} --dependencies $1 --cache cold --no-store --quiet --json $W/r.json
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); w=next(r for r in d["runs"][0]["cases"][0]["samples"][0]["results"] if "operation" not in r); m={x["metric"]:x["value"] for x in w["measurements"]}; print(m["replay_time"]/1e9)' $W/r.json; }
echo -e "rule\tnorule"
for i in $(seq 1 $N); do a=$(rep true); b=$(rep false); echo -e "$a\t$b"; done
