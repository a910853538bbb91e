#!/bin/bash
# exp.sh ROUNDS variant...   variant: alone | full | nosched | noconf | none
cd /root/rc2
B=/root/exp-fsbench
one() {
  rm -rf mnt/root; mkdir mnt/root; cp load.sql mnt/root/
  sync; echo 3 > /proc/sys/vm/drop_caches
  # warm the binaries so both see the same
  sqlite3 :memory: "select 1" >/dev/null
  local cmd='s=$(date +%s%N); sqlite3 app.db ".read load.sql" >/dev/null; e=$(date +%s%N); echo $((e-s)) > /root/rc2/inner'
  case $1 in
    alone) (cd mnt/root && sh -c "$cmd") ;;
    full) (cd mnt/root && $B record --root /root/rc2/mnt/root -o /root/rc2/t.trace -- sh -c "$cmd") 2>/dev/null ;;
    new) (cd mnt/root && /root/new-fsbench record --root /root/rc2/mnt/root -o /root/rc2/t.trace -- sh -c "$cmd") 2>/dev/null ;;
    poll10) (cd mnt/root && FSBENCH_EXP_POLL=10 /root/poll-fsbench record --root /root/rc2/mnt/root -o /root/rc2/t.trace -- sh -c "$cmd") 2>/dev/null ;;
    poll100) (cd mnt/root && FSBENCH_EXP_POLL=100 /root/poll-fsbench record --root /root/rc2/mnt/root -o /root/rc2/t.trace -- sh -c "$cmd") 2>/dev/null ;;
    nosched) (cd mnt/root && FSBENCH_EXP_SKIP=sched_switch,sched_waking,page_fault_user $B record --root /root/rc2/mnt/root -o /root/rc2/t.trace -- sh -c "$cmd") 2>/dev/null ;;
    noswitch) (cd mnt/root && FSBENCH_EXP_SKIP=sched_switch $B record --root /root/rc2/mnt/root -o /root/rc2/t.trace -- sh -c "$cmd") 2>/dev/null ;;
    nowaking) (cd mnt/root && FSBENCH_EXP_SKIP=sched_waking $B record --root /root/rc2/mnt/root -o /root/rc2/t.trace -- sh -c "$cmd") 2>/dev/null ;;
    nofault) (cd mnt/root && FSBENCH_EXP_SKIP=page_fault_user $B record --root /root/rc2/mnt/root -o /root/rc2/t.trace -- sh -c "$cmd") 2>/dev/null ;;
    noconf) (cd mnt/root && FSBENCH_EXP_NOCONF=1 $B record --root /root/rc2/mnt/root -o /root/rc2/t.trace -- sh -c "$cmd") 2>/dev/null ;;
    none) (cd mnt/root && FSBENCH_EXP_SKIP=sys_enter,sys_exit,sched_switch,sched_waking,page_fault_user $B record --root /root/rc2/mnt/root -o /root/rc2/t.trace -- sh -c "$cmd") 2>/dev/null ;;
    nosys) (cd mnt/root && FSBENCH_EXP_SKIP=sys_enter,sys_exit $B record --root /root/rc2/mnt/root -o /root/rc2/t.trace -- sh -c "$cmd") 2>/dev/null ;;
  esac
  cat /root/rc2/inner
}
R=$1; shift
for r in $(seq 1 $R); do
  line="$r"
  for v in "$@"; do line="$line $v=$(python3 -c "print(round($(one $v)/1e9,3))")"; done
  echo "$line"
done
