"""Checks the Markdown files people read on GitHub and crates.io (every tracked *.md), so
that they render there as they do in rustdoc. Fails on:

* rustdoc-only links: a link or reference definition whose target is a Rust path
  (`](crate::…)`, `](sterna::server::Tool)`, `](Self::x)`), and intra-doc shortcut links
  (`` [`Tool`] `` with no target), which show as plain brackets outside rustdoc;
* hidden lines in Rust code blocks (`# use …;`, `#`, `## …`): rustdoc hides them, GitHub and
  crates.io show them;
* relative links in a guide that rustdoc includes (`include_str!` of a `.md`): they break on
  docs.rs, so those guides link with full URLs; in other files, a relative link must name a
  file that exists;
* a code block after `<!-- file: PATH -->` that differs from PATH (the README's quick start is
  the files CI runs), or after `<!-- file: PATH#NAME -->` from the lines of PATH between
  `// [NAME]` and `// [/NAME]` (without their indentation).

With `--docs DIR` (the output of `cargo doc`), every link to docs.rs of one of this workspace's
crates must also name a page (and anchor) that exists in DIR: the crates are not published
yet, so docs.rs cannot tell.

Usage: python3 scripts/lib/markdown_links.py [--docs DIR] [FILE.md …] (default: every tracked
*.md). Prints `file:line: problem` for each finding; exits 1 if there is any.
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^\s*(```+|~~~+)\s*([^`]*)$")
LINK = re.compile(r"\]\(([^()\s]*(?:\([^()\s]*\))?[^()\s]*)(?:\s+\"[^\"]*\")?\)")
REFDEF = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)")
RUST_PATH = re.compile(r"^(?:crate|self|super|Self|[A-Za-z_][A-Za-z0-9_]*)(?:::[A-Za-z0-9_]+)+(?:#.*)?$")
SHORTCUT = re.compile(r"\[`[^`\]]+`\](?![(\[:])")
HIDDEN = re.compile(r"^\s*#(?:\s|$|#)")
SAME_AS = re.compile(r"^<!--\s*file:\s*(\S+)\s*-->\s*$")
EXTERNAL = ("http://", "https://", "mailto:", "#")
DOCS_RS = re.compile(r"^https://docs\.rs/(sterna[a-z-]*)(?:/latest/([a-z_]+)/([^#]*))?(?:#(.*))?$")
DOCS = None  # the `cargo doc` output, with --docs
DOCS_CHECKED = [0]


def tracked_markdown():
    out = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.split()
    return [ROOT / p for p in out if "node_modules/" not in p]


def rustdoc_guides():
    """The Markdown files some crate includes as documentation."""
    found = set()
    rs = subprocess.run(["git", "ls-files", "*.rs"], cwd=ROOT, check=True,
                        capture_output=True, text=True).stdout.split()
    for p in rs:
        src = (ROOT / p).read_text(encoding="utf-8")
        for m in re.finditer(r'include_str!\(\s*"([^"]+\.md)"\s*\)', src):
            found.add(((ROOT / p).parent / m.group(1)).resolve())
    return found


def is_rust(info, in_rustdoc):
    lang = info.split(",")[0].strip() if info else ""
    return lang == "rust" or (lang == "" and in_rustdoc)


def check_docs_rs(target, n, problems):
    m = DOCS_RS.match(target)
    if not m or DOCS is None:
        return
    DOCS_CHECKED[0] += 1
    krate, module, page, anchor = m.groups()
    module = module or krate.replace("-", "_")
    file = DOCS / module / (page or "index.html")
    if file.is_dir() or not page or page.endswith("/"):
        file = file / "index.html" if file.is_dir() else file
    if not file.is_file():
        problems.append(f"{n}: `{target}`: no such page in the generated docs ({file})")
    elif anchor and f'id="{anchor}"' not in file.read_text(encoding="utf-8", errors="replace"):
        problems.append(f"{n}: `{target}`: the page has no anchor #{anchor}")


def check_link(target, path, n, in_rustdoc, problems):
    check_docs_rs(target, n, problems)
    if RUST_PATH.match(target):
        problems.append(f"{n}: rustdoc-only link `]({target})`: link to docs.rs or a file instead")
        return
    if not target or target.startswith(EXTERNAL):
        return
    if in_rustdoc:
        problems.append(f"{n}: relative link `]({target})` in a guide rustdoc includes: it breaks "
                        "on docs.rs; use a full URL")
        return
    file = (path.parent / target.split("#")[0]).resolve()
    if not file.exists():
        problems.append(f"{n}: `]({target})` names a file that does not exist")


def region(text, name):
    """The lines between `// [NAME]` and `// [/NAME]`, without their common indentation."""
    lines = text.splitlines(keepends=True)
    marks = [i for i, l in enumerate(lines) if l.strip() in (f"// [{name}]", f"// [/{name}]")]
    if len(marks) != 2:
        return None
    inner = lines[marks[0] + 1:marks[1]]
    indent = min((len(l) - len(l.lstrip()) for l in inner if l.strip()), default=0)
    return "".join(l[indent:] if l.strip() else l.lstrip(" ") for l in inner)


def check_block(path, start, lines, same_as, problems):
    file, _, name = same_as.partition("#")
    want = ROOT / file
    if not want.exists():
        problems.append(f"{start}: `<!-- file: {same_as} -->` names a file that does not exist")
        return
    text = want.read_text(encoding="utf-8")
    if name:
        text = region(text, name)
        if text is None:
            problems.append(f"{start}: {file} has no `// [{name}]` … `// [/{name}]` region")
            return
    if "".join(lines) != text:
        problems.append(f"{start}: this code block differs from {same_as} (copy it in)")


def check(path, in_rustdoc):
    problems = []
    fence = None
    info = ""
    same_as = None
    block_start = 0
    block = []
    pending = None
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(keepends=True), 1):
        m = FENCE.match(line.rstrip("\n"))
        if fence is None and m:
            fence, info, block_start, block = m.group(1), m.group(2).strip(), n, []
            same_as, pending = pending, None
            continue
        if fence is not None:
            if m and m.group(1).startswith(fence) and not m.group(2).strip():
                if same_as:
                    check_block(path, block_start, block, same_as, problems)
                fence = None
                continue
            block.append(line)
            if is_rust(info, in_rustdoc) and HIDDEN.match(line):
                problems.append(f"{n}: hidden line in a Rust code block (shows outside rustdoc): "
                                f"{line.strip()}")
            continue
        s = SAME_AS.match(line.strip())
        if s:
            pending = s.group(1)
        elif line.strip():
            pending = None
        for target in LINK.findall(line):
            check_link(target, path, n, in_rustdoc, problems)
        r = REFDEF.match(line)
        if r:
            check_link(r.group(1), path, n, in_rustdoc, problems)
        for s in SHORTCUT.findall(line):
            problems.append(f"{n}: intra-doc link {s} without a target (shows as brackets)")
    if fence is not None:
        problems.append(f"{block_start}: code block never closed")
    return problems


def main():
    global DOCS
    args = sys.argv[1:]
    if args[:1] == ["--docs"]:
        DOCS = pathlib.Path(args[1]).resolve()
        args = args[2:]
    files = [pathlib.Path(a).resolve() for a in args] or tracked_markdown()
    guides = rustdoc_guides()
    failed = 0
    for f in files:
        for p in check(f, f in guides):
            print(f"{f.relative_to(ROOT)}:{p}")
            failed += 1
    if failed:
        print(f"markdown: {failed} problem(s) in {len(files)} file(s)", file=sys.stderr)
        sys.exit(1)
    print(f"markdown: {len(files)} file(s), no rustdoc-only link, no hidden line, "
          f"{len(guides)} rustdoc guide(s) with full URLs only"
          + (f", {DOCS_CHECKED[0]} docs.rs link(s) found in {DOCS}" if DOCS else ""))


if __name__ == "__main__":
    main()
