"""Checks that what the README and the crate's front page tell a newcomer is what the code is:

* every `cargo add` line of a quick start (the ```sh block that starts with `cargo new NAME`)
  adds what examples/quickstart/NAME/Cargo.toml depends on: the same crates, default features
  on or off, the same features (versions and `--path` aside). CI builds and runs those
  packages, so the commands a reader types give the program CI ran;
* the feature table of crates/sterna/README.md names every feature of crates/sterna/Cargo.toml
  once, and says "yes" exactly for the default ones;
* the Rust version the READMEs state is the workspace's `rust-version`.

(The `main.rs` blocks themselves are compared with the files by markdown_links.py.)
Usage: python3 scripts/lib/quickstart.py. Exits 1 on a mismatch.
"""
import pathlib
import re
import shlex
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "crates/sterna/README.md"]


def sh_blocks(text):
    return re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M)


def parse_add(line):
    """`cargo add NAME [--path P] [--no-default-features] [--features a,b]` -> (name, spec)."""
    words = shlex.split(line.split("#")[0])[2:]
    name, default, features = None, True, set()
    i = 0
    while i < len(words):
        w = words[i]
        if w == "--no-default-features":
            default = False
        elif w in ("--features", "-F"):
            i += 1
            features |= set(words[i].replace(",", " ").split())
        elif w == "--path":
            i += 1
        elif not w.startswith("-"):
            name = w.split("@")[0]
        i += 1
    return name, (default, frozenset(features))


def manifest_deps(package):
    deps = tomllib.loads((ROOT / "examples/quickstart" / package / "Cargo.toml").read_text())["dependencies"]
    out = {}
    for name, spec in deps.items():
        spec = spec if isinstance(spec, dict) else {}
        out[name] = (spec.get("default-features", True), frozenset(spec.get("features", [])))
    return out


def check_quick_starts(problems):
    for page in PAGES:
        seen = set()
        for block in sh_blocks(page.read_text(encoding="utf-8")):
            lines = [l for l in block.splitlines() if l.strip()]
            m = re.match(r"cargo new (\S+)", lines[0]) if lines else None
            if not m:
                continue
            package = m.group(1)
            seen.add(package)
            added = dict(parse_add(l) for l in lines[1:] if l.startswith("cargo add "))
            want = manifest_deps(package)
            if added != want:
                problems.append(f"{page.relative_to(ROOT)}: the `cargo add` lines for {package} add "
                                f"{sorted(added.items())}, but its Cargo.toml has {sorted(want.items())}")
        for package in ("hello-server", "hello-client"):
            if package not in seen:
                problems.append(f"{page.relative_to(ROOT)}: no quick start block `cargo new {package}`")


def check_features(problems):
    manifest = tomllib.loads((ROOT / "crates/sterna/Cargo.toml").read_text())["features"]
    defaults = set(manifest["default"])
    text = (ROOT / "crates/sterna/README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([a-z-]+)` \| (yes|no) \|", text, flags=re.M)
    table = {}
    for name, default in rows:
        if name in table:
            problems.append(f"feature table: `{name}` twice")
        table[name] = default == "yes"
    want = {name: name in defaults for name in manifest if name != "default"}
    if table != want:
        problems.append(f"feature table of crates/sterna/README.md: {sorted(table.items())}; "
                        f"crates/sterna/Cargo.toml: {sorted(want.items())}")


def check_msrv(problems):
    msrv = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["package"]["rust-version"]
    for page in PAGES:
        stated = re.findall(r"Rust \*\*(\d+\.\d+)", page.read_text(encoding="utf-8"))
        if stated != [msrv]:
            problems.append(f"{page.relative_to(ROOT)}: states Rust {stated}, the workspace's "
                            f"rust-version is {msrv}")


def main():
    problems = []
    check_quick_starts(problems)
    check_features(problems)
    check_msrv(problems)
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    print("quick start: the cargo add lines are the packages' dependencies; the feature table "
          "is Cargo.toml's; the stated Rust version is rust-version")


if __name__ == "__main__":
    main()
