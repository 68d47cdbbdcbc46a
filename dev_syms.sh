Z=../.z3/lib/libz3.so.4
nm -D --defined-only $Z | awk '{print $3}' | sort -u > /tmp/z3syms
nm -D --defined-only /tmp/bd/lib/libtessel.so | awk '{print $3}' | sort -u > /tmp/tslsyms
for f in /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib/*.so.9; do
  nm -D $f | awk '{print $NF}' | sort -u > /tmp/u
  echo "$(basename $f) z3: $(comm -12 /tmp/u /tmp/z3syms | wc -l) tessel: $(comm -12 /tmp/u /tmp/tslsyms | wc -l)"
  comm -12 /tmp/u /tmp/z3syms | grep -v "^_ZNSt\|^_ZSt\|^_ZNKSt" | head -8
  comm -12 /tmp/u /tmp/tslsyms | grep -v "^_ZNSt\|^_ZSt\|^_ZNKSt" | head -8
done
