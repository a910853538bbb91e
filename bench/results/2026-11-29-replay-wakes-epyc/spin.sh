#!/bin/bash
. /root/x41/lib.sh
for r in $(seq 1 ${1:-4}); do
  runs="50000 0 10000"; ((r % 2)) || runs="10000 0 50000"
  line="round $r"
  for x in $runs; do v=$(XSPIN=$x rep recorded $W/t.trace /root/x41/fsbench-xspin); line="$line spin$x $v"; done
  echo "$line"
done
