"""The shell commands of the guides, so that a test runs every one of them.

A command is a line of a ```sh block (continuation lines joined, a trailing `# comment`
dropped, blank and comment-only lines skipped). scripts/examples runs each guide's commands
(the addresses swapped for free ports on loopback) and records the text it ran as written in
the guide; this script then compares:

  guide_commands.py list FILE...                  every command, one per line
  guide_commands.py check RAN EXEMPT FILE...      fails when a command of FILE… was neither
                                                  run (a line of RAN) nor exempted (a line
                                                  `COMMAND<TAB>why` of EXEMPT), or when RAN
                                                  or EXEMPT names a command no guide has
"""
import pathlib
import re
import sys

FENCE = re.compile(r"^\s*(```+|~~~+)\s*(\S*)")
SHELLS = {"sh", "bash", "shell"}


def strip_comment(line):
    """`cmd  # note` -> `cmd` (a `#` after whitespace and outside quotes)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def commands(path):
    out = []
    fence = None
    shell = False
    pending = ""
    for raw in pathlib.Path(path).read_text(encoding="utf-8").splitlines():
        m = FENCE.match(raw)
        if fence is None:
            if m:
                fence, shell = m.group(1), m.group(2) in SHELLS
            continue
        if raw.strip().startswith(fence) and not raw.strip().strip(fence[0]):
            fence = None
            continue
        if not shell:
            continue
        line = strip_comment(raw)
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        line = (pending + line.strip()).strip()
        pending = ""
        if line:
            out.append(" ".join(line.split()))
    return out


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "list":
        for f in sys.argv[2:]:
            for c in commands(f):
                print(c)
        return
    if len(sys.argv) >= 5 and sys.argv[1] == "check":
        norm = lambda s: " ".join(s.split())
        ran = {norm(l) for l in open(sys.argv[2], encoding="utf-8") if l.strip()}
        exempt = {}
        for l in open(sys.argv[3], encoding="utf-8"):
            if l.strip():
                cmd, _, why = l.rstrip("\n").partition("\t")
                exempt[norm(cmd)] = why.strip()
        found = {}
        for f in sys.argv[4:]:
            for c in commands(f):
                found.setdefault(c, f)
        problems = [f"not run by any test: {c}  ({f})" for c, f in found.items()
                    if c not in ran and c not in exempt]
        problems += [f"run as a guide command, but no guide has it: {c}" for c in ran if c not in found]
        problems += [f"exempted, but no guide has it: {c}" for c in exempt if c not in found]
        for p in problems:
            print(p)
        n_ran = sum(1 for c in found if c in ran)
        print(f"guide commands: {len(found)} in {len(sys.argv) - 4} guide(s): {n_ran} run, "
              f"{sum(1 for c in found if c in exempt and c not in ran)} exempted (each with its "
              f"reason), {len(problems)} problem(s)")
        sys.exit(1 if problems else 0)
    print(__doc__, file=sys.stderr)
    sys.exit(2)


if __name__ == "__main__":
    main()
