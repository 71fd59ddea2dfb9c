#!/usr/bin/env python3
# The resident pages of a running gateway's own binary, by the module of the symbols they hold (docs/daemon-bench.md,
# "Where the RSS is"): reads /proc/PID/maps and /proc/PID/pagemap (root) and the binary's symbols with nm.
# Usage: scripts/binary-pages.py PID BINARY
import sys,struct,re,bisect,collections,subprocess
pid=int(sys.argv[1]); binary=sys.argv[2]
maps=[l.split() for l in open(f'/proc/{pid}/maps') if l.rstrip().endswith(binary.split('/')[-1]) or binary in l]
base=None; regions=[]
for m in maps:
    lo,hi=[int(x,16) for x in m[0].split('-')]; off=int(m[2],16)
    if base is None: base=lo-off
    regions.append((lo,hi,m[1]))
pm=open(f'/proc/{pid}/pagemap','rb')
resident=[]
for lo,hi,perm in regions:
    pm.seek(lo//4096*8); data=pm.read((hi-lo)//4096*8)
    for i in range((hi-lo)//4096):
        (e,)=struct.unpack_from('<Q',data,i*8)
        if e>>63 & 1: resident.append((lo+i*4096-base,perm))
syms=[]
out=subprocess.run(['nm','-S','--defined-only',binary],capture_output=True,text=True).stdout
for l in out.split('\n'):
    p=l.split()
    if len(p)==4:
        syms.append((int(p[0],16),int(p[1],16),p[3]))
syms.sort(); addrs=[s[0] for s in syms]
def mod(name):
    m=re.match(r'^_?\$s(\d+)([A-Za-z_][A-Za-z0-9_]*)',name)
    if m: return m.group(2)[:int(m.group(1))]
    if name.startswith('$s'): return 'Swift stdlib'
    if name.startswith('_Z'): return 'C++'
    return 'C/other'
by=collections.Counter(); sec=collections.Counter()
# attribute each resident page to the modules of symbols overlapping it (bytes)
for va,perm in resident:
    i=bisect.bisect_right(addrs,va+4096)-1; covered=0; j=i
    while j>=0 and syms[j][0]+syms[j][1]>va:
        s0=max(syms[j][0],va); s1=min(syms[j][0]+syms[j][1],va+4096)
        if s1>s0: by[mod(syms[j][2])]+=s1-s0; covered+=s1-s0
        if syms[j][0]<=va: break
        j-=1
    by['(no symbol: metadata, rodata, eh_frame)']+=max(0,4096-covered)
print('resident pages',len(resident),'=',len(resident)*4,'kB')
for k,v in by.most_common(25): print(f'{v/1024:8.0f} kB  {k}')
