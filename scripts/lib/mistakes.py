"""The mistakes a newcomer makes, and the errors they get: each examples/mistakes/*.rs is
compiled with rustc against the libraries cargo built for examples/ (nothing is rebuilt),
and its `//! expect: TEXT` lines must appear in the compiler's error output; with
`//! expect-run: TEXT` it must compile, and running it must fail (exit 1) printing TEXT.

Usage: python3 scripts/lib/mistakes.py OUT_DIR CARGO_BUILD_ARGS…
(e.g. `--workspace --examples --locked`: the same selection the caller built, so that cargo
finds everything fresh). Exits 1 when an expectation does not hold.
"""
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXTERNS = ("sterna", "tokio", "serde", "schemars")


def libraries(cargo_args):
    """The rlib of each crate in EXTERNS, and the deps directory, from cargo's own report."""
    out = subprocess.run(["cargo", "build", "--message-format=json", *cargo_args], cwd=ROOT,
                         check=True, capture_output=True, text=True).stdout
    libs = {}
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") != "compiler-artifact":
            continue
        name = msg["target"]["name"].replace("-", "_")
        rlibs = [f for f in msg["filenames"] if f.endswith(".rlib")]
        if name in EXTERNS and "lib" in msg["target"]["kind"] and rlibs:
            libs.setdefault(name, set()).add(rlibs[0])
    missing = [n for n in EXTERNS if n not in libs]
    ambiguous = [n for n, f in libs.items() if len(f) > 1]
    if missing or ambiguous:
        sys.exit(f"mistakes: cargo built no single library for {missing + ambiguous}")
    return {n: f.pop() for n, f in libs.items()}


def compile_(src, out, libs):
    deps = pathlib.Path(libs["sterna"]).parent
    cmd = ["rustc", "--edition", "2024", "--crate-type", "bin", "--color", "never",
           "-C", "debuginfo=0", "-o", str(out), "-L", f"dependency={deps}", str(src)]
    for name, rlib in libs.items():
        cmd += ["--extern", f"{name}={rlib}"]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)


def main():
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    libs = libraries(sys.argv[2:])
    failed = False
    for src in sorted((ROOT / "examples" / "mistakes").glob("*.rs")):
        lines = src.read_text(encoding="utf-8").splitlines()
        expect = [l.split(":", 1)[1].strip() for l in lines if l.startswith("//! expect:")]
        expect_run = [l.split(":", 1)[1].strip() for l in lines if l.startswith("//! expect-run:")]
        built = compile_(src, out / src.stem, libs)
        (out / f"{src.stem}.rustc.txt").write_text(built.stderr)
        if expect:
            got, text = built.returncode != 0, built.stderr
            what = "does not compile"
        else:
            if built.returncode != 0:
                print(f"  FAIL  mistakes/{src.name}: should compile:\n{built.stderr}")
                failed = True
                continue
            run = subprocess.run([str(out / src.stem)], stdin=subprocess.DEVNULL,
                                 capture_output=True, text=True, timeout=60)
            got, text = run.returncode == 1, run.stderr + run.stdout
            what = "fails at run time (exit 1)"
            expect = expect_run
        absent = [e for e in expect if e not in text]
        if got and not absent:
            shown = next((e for e in expect), "")
            print(f"  pass  mistakes/{src.name} {what}: {shown[:150]}")
        else:
            print(f"  FAIL  mistakes/{src.name}: {what}: {got}; missing {absent}\n{text}")
            failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
