#!/usr/bin/env python3
"""Import cycles between the files of each crate (default: the library crates). A file
depends on another when it names a path into it: `crate::a::b`, `super::b`, `self::b`, a
`use` of an item that a module file re-exports counting as a use of the file defining it.
Module declarations (`mod x;`) and re-exports (`pub use`) are not dependencies. Prints every cycle (strongly
connected component) and exits 1 when there is one.
Usage: scripts/lib/cycles.py [crate dir …]"""
import pathlib, re, sys

def modules(src):
    """Module path (tuple) → file, for every .rs file under src."""
    out = {}
    for p in src.rglob('*.rs'):
        rel = p.relative_to(src).with_suffix('')
        parts = list(rel.parts)
        if parts[-1] in ('mod', 'lib', 'main'):
            parts = parts[:-1]
        out[tuple(parts)] = p
    # `#[path = "..."] mod x;` declarations
    for path, p in list(out.items()):
        for m in re.finditer(r'#\[path\s*=\s*"([^"]+)"\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)', p.read_text()):
            target = (p.parent / m.group(1)).resolve()
            for k, v in list(out.items()):
                if v.resolve() == target:
                    out[path + (m.group(2),)] = v
    return out

TOKENS = re.compile(
    r'//[^\n]*|/\*.*?\*/'          # comments
    r'|\br(#*)".*?"\1'            # raw strings
    r'|"(?:\\.|[^"\\])*"'          # strings (over several lines too)
    r"|'(?:\\.|[^'\\])'",          # char literals ('"', '{')
    re.S)

def strip(text):
    """The code without comments, and with every string and char literal emptied."""
    def empty(m):
        t = m.group(0)
        return '' if t.startswith('/') else ('""' if t[0] in 'r"' else "''")
    return strip_tests(TOKENS.sub(empty, text))

def strip_tests(text):
    """Drops inline `#[cfg(test)] mod x { … }` blocks: unit tests are not the library's
    structure (and their `super::` is the file itself)."""
    while True:
        m = re.search(r'#\[cfg\(test\)\]\s*mod\s+\w+\s*\{', text)
        if not m:
            return text
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {'{': 1, '}': -1}.get(text[i], 0)
            i += 1
        text = text[:m.start()] + text[i:]

def reexports(mods):
    """(module path, name) → module path of the file that defines it, for `pub use` lists."""
    table = {}
    for path, p in mods.items():
        text = strip(p.read_text())
        for m in re.finditer(r'pub(?:\([^)]*\))?\s+use\s+([^;]+);', text):
            for full in expand(m.group(1)):
                name = full.split(' as ')[-1].split('::')[-1].strip()
                target = resolve(full.split(' as ')[0].strip(), path, mods)
                if target is not None:
                    table[(path, name)] = target
    return table

def expand(tree, prefix=''):
    tree = tree.strip()
    m = re.match(r'^(.*?)\{(.*)\}$', tree, re.S)
    if not m:
        yield prefix + tree
        return
    head, body = m.group(1), m.group(2)
    depth, cur, parts = 0, '', []
    for ch in body:
        if ch == '{': depth += 1
        if ch == '}': depth -= 1
        if ch == ',' and depth == 0:
            parts.append(cur); cur = ''
        else:
            cur += ch
    parts.append(cur)
    for part in parts:
        if part.strip():
            yield from expand(part, prefix + head)

def resolve(path, here, mods, table=None):
    segs = [s for s in path.split('::') if s]
    if not segs:
        return None
    if segs[0] == 'crate':
        base, segs = (), segs[1:]
    elif segs[0] in ('super', 'self'):
        base = here
        while segs and segs[0] in ('super', 'self'):
            base = base[:-1] if segs[0] == 'super' else base
            segs = segs[1:]
    elif here + (segs[0],) in mods:
        base = here  # a child module named without `self::`
    else:
        return None  # another crate, or a name in scope
    cur = base
    for i, s in enumerate(segs):
        if cur + (s,) in mods:
            cur = cur + (s,)
            continue
        if table is not None and (cur, s) in table:
            return table[(cur, s)]
        break
    return cur

def graph_of(src):
    mods = modules(src)
    table = reexports(mods)
    graph = {p: set() for p in mods}
    for path, p in mods.items():
        text = strip(p.read_text())
        text = re.sub(r'(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*;', '', text)
        # A re-export is a door, not a use: whoever names the item through it depends on
        # the file that defines it (see `reexports`).
        text = re.sub(r'\bpub(?:\([^)]*\))?\s+use\s+[^;]+;', '', text)
        refs = []
        for m in re.finditer(r'\buse\s+([^;]+);', text):
            refs += list(expand(m.group(1)))
        refs += re.findall(r'\b(?:crate|super|self)(?:::\w+)+', text)
        for r in refs:
            t = resolve(r.split(' as ')[0].strip(), path, mods, table)
            if t is not None and t != path and t in graph:
                graph[path].add(t)
    return mods, graph

def sccs(graph):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(100000)
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
                out.append(comp)
    for v in graph:
        if v not in index:
            strong(v)
    return out

def main(dirs):
    found = 0
    for d in dirs:
        src = pathlib.Path(d) / 'src'
        mods, graph = graph_of(src)
        for comp in sccs(graph):
            found += 1
            names = sorted(str(mods[c].relative_to(src)) for c in comp)
            print(f'{d}: cycle of {len(comp)} files: ' + ', '.join(names))
            for c in comp:
                for w in sorted(graph[c] & set(comp)):
                    print(f'    {mods[c].relative_to(src)} -> {mods[w].relative_to(src)}')
    if found:
        sys.exit(1)
    print('no import cycle in ' + ', '.join(dirs))

main(sys.argv[1:] or ['crates/sterna-types', 'crates/sterna-net', 'crates/sterna-server', 'crates/sterna-client'])
