#!/usr/bin/env python3
"""Import cycles between the files of one module directory (default
crates/sterna/src/server): file a depends on file b when a names `super::b…`
(or `crate::<dir>::b…`), or on mod.rs when it names `super::Item` directly.
Prints every cycle (strongly connected component) and exits 1 when there is one."""
import pathlib, re, sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else 'crates/sterna/src/server')
dirname = root.name
files = {p.stem: p for p in root.glob('*.rs')}
graph = {name: set() for name in files}
for name, path in files.items():
    text = re.sub(r'//[^\n]*', '', path.read_text())
    for m in re.finditer(rf'(?:\bsuper|\bcrate::{dirname})::(\{{[^}}]*\}}|\w+)', text):
        targets = re.findall(r'\w+', m.group(1))
        for t in targets:
            if t in files and t != name:
                graph[name].add(t)
            elif t[:1].isupper() and name != 'mod' and m.group(0).startswith('super'):
                graph[name].add('mod')

index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]
def strong(v):
    index[v] = low[v] = counter[0]; counter[0] += 1; stack.append(v); on.add(v)
    for w in graph[v]:
        if w not in index:
            strong(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1:
            sccs.append(sorted(comp))
sys.setrecursionlimit(10000)
for v in graph:
    if v not in index:
        strong(v)
if sccs:
    for c in sccs:
        print('cycle:', ' ↔ '.join(c))
    sys.exit(1)
print(f'no import cycle among the {len(files)} files of {root}')
