#!/usr/bin/env python3
"""Checks a conformance results directory against a revision's frozen requirements.

usage: conformance_check.py REQUIREMENTS_YAML server|client RESULTS_DIR [SCENARIO ...]
                            [--also SCENARIO ...]

Every scored scenario of the section (or the scenarios named before --also), and every
scenario named after --also (unscored ones this repository holds itself to), must have
run, with no FAILURE and no WARNING check. Prints a table and a one-line summary naming
the revision; exits 1 otherwise.
"""
import json, pathlib, re, sys

def scored(yaml_path, section):
    names, current = [], None
    for line in pathlib.Path(yaml_path).read_text().splitlines():
        if re.match(r"^[a-z_]+:", line):
            current = line.split(":")[0]
            continue
        m = re.match(r"^  - ([A-Za-z0-9_./-]+)\s*(#.*)?$", line)
        if m and current == section:
            names.append(m.group(1))
    return names

def results(root):
    out = {}
    for f in sorted(pathlib.Path(root).rglob("checks.json")):
        rel = f.parent.relative_to(root).as_posix()
        name = re.sub(r"^server-", "", re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", rel))
        counts = {}
        bad = []
        for c in json.loads(f.read_text()):
            counts[c["status"]] = counts.get(c["status"], 0) + 1
            if c["status"] in ("FAILURE", "WARNING"):
                bad.append(f'{c["id"]}: {c["status"]} {c.get("errorMessage") or ""}'.strip())
        out[name] = (counts, bad)
    return out

def check(names, got, label):
    """Prints one line per scenario; returns (failed scenarios, failed checks, warnings)."""
    failed = checks = warnings = 0
    for name in names:
        if name not in got:
            print(f"  MISSING  {name}{label}")
            failed += 1
            continue
        counts, bad = got[name]
        w = counts.get("WARNING", 0)
        f = counts.get("FAILURE", 0)
        warnings += w
        checks += f
        ok = f == 0 and w == 0
        failed += 0 if ok else 1
        print(f'  {"pass" if ok else "FAIL"}  {name}{label}: {counts.get("SUCCESS", 0)} passed, {f} failed, {w} warnings')
        for b in bad:
            print(f"          {b}")
    return failed, checks, warnings

def main():
    args = sys.argv[1:]
    also = []
    if "--also" in args:
        i = args.index("--also")
        args, also = args[:i], args[i + 1:]
    yaml_path, section, root, *only = args
    revision = pathlib.Path(yaml_path).stem
    wanted = only or scored(yaml_path, section)
    got = results(root)
    what = "scenarios" if only else "scored scenarios"
    failed, checks, warnings = check(wanted, got, "")
    x_failed, x_checks, x_warnings = check(also, got, " (unscored)")
    print(f"{section} {revision}: {len(wanted) - failed}/{len(wanted)} {what} passed, "
          f"{checks} failed checks, {warnings} warnings")
    if also:
        print(f"{section} {revision}, unscored: {len(also) - x_failed}/{len(also)} passed, "
              f"{x_checks} failed checks, {x_warnings} warnings")
    sys.exit(1 if failed or x_failed else 0)

main()
