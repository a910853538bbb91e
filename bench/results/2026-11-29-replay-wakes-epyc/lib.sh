# scratch helpers of the runs here (a 4 GiB ext4 image on a loop device with direct I/O under /var/tmp/x41; the git-loose input made once)
# (as run, fresh() detached only a loop device it knew of, and $(app) knew none: each run in a command substitution left its loop device attached until removed by hand; fresh() and cleanup() now detach every loop device over the image)
# scratch helpers for git-loose replay study
FSBENCH=${FSBENCH:-/work/main/target/release/fsbench}
REPO=/work/main
W=/var/tmp/x41; M=$W/mnt; mkdir -p $M; LOOP=
cleanup(){ set +e; mountpoint -q $M && umount $M; for d in $(losetup -j $W/fs.img | cut -d: -f1); do losetup -d $d; done; LOOP=; }
trap cleanup EXIT INT TERM
fresh(){ mountpoint -q $M && umount $M; for d in $(losetup -j $W/fs.img | cut -d: -f1); do losetup -d $d; done; LOOP=; rm -f $W/fs.img; truncate -s 4g $W/fs.img
 LOOP=$(losetup --find --show --direct-io=on $W/fs.img); mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 $LOOP; mount $LOOP $M; }
cold(){ sync; echo 3 > /proc/sys/vm/drop_caches; }
if [ ! -d $W/in/src.git ]; then
 mkdir -p $W/in; git clone -q --bare --no-local $REPO $W/in/src.git
 for pack in $W/in/src.git/objects/pack/*.pack; do mv "$pack" $W/unpack.pack && rm -f "${pack%.pack}".*; git -C $W/in/src.git unpack-objects -q < $W/unpack.pack && rm $W/unpack.pack; done
fi
CMD='git clone -q --no-local src.git work && git -C work checkout -q $(git -C work rev-list --max-count=1 --skip=200 HEAD)'
app(){ fresh; mkdir $M/root; cp -a $W/in/. $M/root/; cold; local s=$(date +%s.%N); (cd $M/root && sh -c "$CMD"); local e=$(date +%s.%N); echo "$e - $s" | bc; }
rec(){ fresh; mkdir $M/root; cp -a $W/in/. $M/root/; cold; (cd $M/root && $FSBENCH record --root $M/root -o ${1:-$W/t.trace} -- sh -c "$CMD") >/dev/null 2>&1; $FSBENCH trace stats --json ${1:-$W/t.trace} | python3 -c 'import json,sys; print(json.load(sys.stdin)["duration_ns"]/1e9)'; }
rep(){ # timing [trace] [binary]
 fresh; mkdir $M/root; local B=${3:-$FSBENCH}
 $B replay --dir $M/root --trace ${2:-$W/t.trace} --timing $1 --cache cold --no-store --quiet --json $W/r.json 2>/dev/null
 python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
rs=d["runs"][0]["cases"][0]["samples"][0]["results"]
w=next(r for r in rs if "operation" not in r)
m={x["metric"]:x["value"] for x in w["measurements"]}
print(m["replay_time"]/1e9)' $W/r.json; }
