#!/usr/bin/env python3
"""Dependencies a crate declares but never names in its code (normal, optional and dev
dependencies, across src/, tests/, benches/, examples/ and doc Markdown included by it).
A dependency counts as used when its crate name (dashes as underscores) appears as a path
(`name::`, `use name`, `extern crate name`) or in a feature that forwards to it. Exits 1
when one is unused. Usage: scripts/lib/unused_deps.py [crate dir …]"""
import pathlib, re, sys, tomllib

# Needed without being named in code (features, linking, doc tests of Markdown files).
ALLOW = {
    'sterna-cli': {'rustls'},  # read through the certificate error's source chain
}

def names(manifest):
    data = tomllib.loads(manifest.read_text())
    out = {}
    for section in ('dependencies', 'dev-dependencies'):
        for name, spec in data.get(section, {}).items():
            pkg = spec.get('package', name) if isinstance(spec, dict) else name
            out[name] = section
    for target in data.get('target', {}).values():
        for section in ('dependencies', 'dev-dependencies'):
            for name in target.get(section, {}):
                out[name] = section
    return data, out

def text_of(root):
    parts = []
    for d in ('src', 'tests', 'benches', 'examples', 'docs'):
        for p in (root / d).rglob('*'):
            if p.suffix in ('.rs', '.md') and p.is_file():
                parts.append(p.read_text(errors='ignore'))
    for p in root.glob('*.rs'):
        parts.append(p.read_text(errors='ignore'))
    return '\n'.join(parts)

def main(dirs):
    bad = 0
    for d in dirs:
        root = pathlib.Path(d)
        manifest = root / 'Cargo.toml'
        data, deps = names(manifest)
        code = text_of(root)
        crate = data['package']['name']
        features = ' '.join(' '.join(v) for v in data.get('features', {}).values())
        for name, section in sorted(deps.items()):
            ident = name.replace('-', '_')
            if name in ALLOW.get(crate, set()):
                continue
            if crate.replace('-', '_') == ident:
                continue  # a crate's dev-dependency on itself (features for tests)
            if re.search(rf'(?<![\w-]){ident}\s*::|use\s+{ident}\b|extern crate {ident}\b|\b{ident}!|use\s+\{{[^}}]*\b{ident}\b', code):
                continue
            if f'{name}/' in features and section == 'dependencies' and re.search(rf'dep:{name}\b', features) is None:
                continue  # only forwards features
            print(f'{crate}: {section} `{name}` is never used')
            bad += 1
    if bad:
        sys.exit(1)
    print(f'no unused dependency in {len(dirs)} crates')

main(sys.argv[1:] or [str(p.parent) for p in pathlib.Path('.').glob('crates/*/Cargo.toml')] + ['conformance', 'bench', 'examples'])
