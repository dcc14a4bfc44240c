#!/usr/bin/env python3
"""Longest functions and largest files in crates/*/src (lines, braces matched; comments
and strings are skipped when matching). Exits 1 when a function is over 80 lines or a
file over 500 (the house rules). Usage: scripts/lib/sizes.py [N]"""
import pathlib, re, sys

def strip(src):
    # Blank out string/char literals and comments so braces inside them do not count.
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith('//', i):
            j = src.find('\n', i); j = n if j < 0 else j
            out.append(' ' * (j - i)); i = j
        elif src.startswith('/*', i):
            j = src.find('*/', i + 2); j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', src[i:j])); i = j
        elif c == 'r' and re.match(r'r#*"', src[i:i + 10]) and (i == 0 or not (src[i-1].isalnum() or src[i-1] == '_')):
            m = re.match(r'r(#*)"', src[i:]); close = '"' + m.group(1)
            j = src.find(close, i + len(m.group(0))); j = n if j < 0 else j + len(close)
            out.append(re.sub(r'[^\n]', ' ', src[i:j])); i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == '\\' else 1
            out.append(re.sub(r'[^\n]', ' ', src[i:j + 1])); i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", src[i:i + 4]):
            m = re.match(r"'(\\.|[^\\'])'", src[i:]); out.append(' ' * len(m.group(0))); i += len(m.group(0))
        else:
            out.append(c); i += 1
    return ''.join(out)

def functions(path):
    text = strip(path.read_text())
    for m in re.finditer(r'\bfn\s+(\w+)', text):
        brace = text.find('{', m.end()); semi = text.find(';', m.end())
        if brace < 0 or (0 <= semi < brace):
            continue
        depth, j = 0, brace
        while j < len(text):
            if text[j] == '{': depth += 1
            elif text[j] == '}':
                depth -= 1
                if depth == 0: break
            j += 1
        start = text.count('\n', 0, m.start()) + 1
        end = text.count('\n', 0, j) + 1
        yield end - start + 1, f'{path}:{start} {m.group(1)}'

n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
files = sorted(pathlib.Path('crates').glob('*/src/**/*.rs'))
fns = sorted((f for p in files for f in functions(p)), reverse=True)
print('longest functions:')
for length, where in fns[:n]:
    print(f'  {length:4d}  {where}')
print('largest files:')
sizes = sorted(((len(p.read_text().splitlines()), p) for p in files), reverse=True)
for length, p in sizes[:n]:
    print(f'  {length:4d}  {p}')
over = [f'function {w}: {l} lines (max 80)' for l, w in fns if l > 80]
over += [f'file {p}: {l} lines (max 500)' for l, p in sizes if l > 500]
for o in over:
    print('too long: ' + o, file=sys.stderr)
sys.exit(1 if over else 0)
