#!/bin/bash
# git-loose: per round, a fresh recording, then the app, the old replay and the new replay (recorded timing), order alternating
. /root/x41/lib.sh
lscpu | grep "Model name"
app >/dev/null
for r in $(seq 1 ${1:-6}); do
  s=$(rec $W/t.trace)
  runs="app old new"; ((r % 2)) || runs="new old app"
  line="round $r recording $s"
  for x in $runs; do
    case $x in
      app) v=$(app) ;;
      old) v=$(rep recorded $W/t.trace /root/x41/fsbench-old) ;;
      new) v=$(rep recorded $W/t.trace /root/x41/fsbench-new) ;;
    esac
    line="$line $x $v"
  done
  echo "$line"
done
