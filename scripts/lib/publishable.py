"""Lists the workspace's publishable packages (those without `publish = false`), one
`-p NAME` pair per line, after checking that each has what crates.io and docs.rs need:
description, license, repository, documentation, readme (an existing file), keywords (1–5),
categories and `[package.metadata.docs.rs]` with `all-features = true`. Exits 1 naming what is
missing. Usage: python3 scripts/lib/publishable.py
"""
import json
import pathlib
import subprocess
import sys

meta = json.loads(subprocess.run(["cargo", "metadata", "--no-deps", "--format-version", "1", "--locked"],
                                 check=True, capture_output=True, text=True).stdout)
members = set(meta["workspace_members"])
problems, names = [], []
for p in meta["packages"]:
    if p["id"] not in members or p["publish"] == []:
        continue
    names.append(p["name"])
    for field in ("description", "license", "repository", "documentation", "readme"):
        if not p.get(field):
            problems.append(f"{p['name']}: no `{field}`")
    readme = p.get("readme")
    if readme and not (pathlib.Path(p["manifest_path"]).parent / readme).is_file():
        problems.append(f"{p['name']}: readme {readme} does not exist")
    if not 1 <= len(p.get("keywords") or []) <= 5:
        problems.append(f"{p['name']}: needs 1 to 5 keywords")
    if not p.get("categories"):
        problems.append(f"{p['name']}: no categories")
    if not ((p.get("metadata") or {}).get("docs", {}).get("rs", {}).get("all-features")):
        problems.append(f"{p['name']}: no [package.metadata.docs.rs] all-features = true")
for line in problems:
    print(line, file=sys.stderr)
if problems:
    sys.exit(1)
for n in names:
    print(f"-p\n{n}")
