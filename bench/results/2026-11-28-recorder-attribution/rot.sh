#!/bin/bash
# rot.sh ROUNDS variants... : order rotated each round; prints per-variant median ratio to alone
R=$1; shift; vs=("$@"); n=${#vs[@]}
: > rot.txt
for r in $(seq 0 $((R-1))); do
  line="$r"
  for i in $(seq 0 $((n-1))); do v=${vs[$(( (i + r) % n ))]}; line="$line $v=$(./exp.sh 1 $v | cut -d' ' -f2 | cut -d= -f2)"; done
  echo "$line" | tee -a rot.txt
done
python3 -c "
import statistics as st
rows=[dict(kv.split('=') for kv in l.split()[1:]) for l in open('rot.txt')]
for k in rows[0]:
  v=[float(r[k]) for r in rows]; print(k, round(st.median(v),3), 'ratio-to-alone median', round(st.median([float(r[k])/float(r['alone']) for r in rows]),3))
"
