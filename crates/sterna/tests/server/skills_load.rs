//! Loading a skills folder: what is served (digests at load, nested skills, hidden entries
//! skipped), and each hostile folder refused with an error naming the file at fault.

use super::skills_dir::{TempDir, skill_md, two_skills};
use sterna::server::skills::{SkillDef, Skills, SkillsError, SkillsErrorKind as K};
use sterna::types::skills::frontmatter::FrontmatterError;
use sterna::types::skills::{EntryProblem, SkillResources, digest};

fn load(d: &TempDir) -> Result<Skills, SkillsError> {
    Skills::from_dir(d.path())
}

fn err(d: &TempDir) -> SkillsError {
    load(d).expect_err("the folder must be refused")
}

#[test]
fn a_folder_with_nested_skills_is_served_with_digests_computed_at_load() {
    let d = two_skills("load");
    let skills = load(&d).unwrap();
    let entries = skills.entries();
    let uris: Vec<&str> = entries.iter().map(|e| e.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            "skill://docs/release-notes/SKILL.md",
            "skill://docs/release-notes/checklist/SKILL.md",
            "skill://pdf-processing/SKILL.md"
        ]
    );
    let notes = &entries[0];
    let SkillResources::Files(files) = &notes.resources else {
        panic!("listed")
    };
    let listed: Vec<&str> = files.iter().map(|f| f.uri.as_str()).collect();
    // SKILL.md first; the nested skill's files are files of the enclosing one.
    assert_eq!(
        listed,
        [
            "skill://docs/release-notes/SKILL.md",
            "skill://docs/release-notes/checklist/SKILL.md",
            "skill://docs/release-notes/guides/STYLE.md",
            "skill://docs/release-notes/logo.bin",
            "skill://docs/release-notes/templates/notes.md"
        ]
    );
    let style = std::fs::read(d.path().join("docs/release-notes/guides/STYLE.md")).unwrap();
    assert_eq!(files[2].digest, digest(&style));
    assert_eq!(files[2].size, style.len() as u64);
    // Frontmatter verbatim, typed by the core schema.
    assert_eq!(entries[2].frontmatter["metadata"]["version"], "1.0");
    assert_eq!(entries[2].frontmatter["level"], 2);
    for e in &entries {
        e.check().unwrap();
    }
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_folder_is_refused_and_named() {
    let d = two_skills("symlink");
    let link = d.path().join("pdf-processing/references/passwd");
    std::os::unix::fs::symlink("/etc/passwd", &link).unwrap();
    let e = err(&d);
    assert!(matches!(e.kind, K::Symlink), "{e}");
    assert_eq!(e.path, link);
    // A link to a folder outside is refused the same way (never walked).
    std::fs::remove_file(&link).unwrap();
    let dir_link = d.path().join("pdf-processing/etc");
    std::os::unix::fs::symlink("/etc", &dir_link).unwrap();
    let e = err(&d);
    assert!(matches!(e.kind, K::Symlink) && e.path == dir_link, "{e}");
}

#[cfg(unix)]
#[test]
fn a_fifo_is_refused_without_being_opened() {
    let d = two_skills("fifo");
    let fifo = d.path().join("pdf-processing/pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let e = err(&d);
    assert!(matches!(e.kind, K::NotRegular) && e.path == fifo, "{e}");
}

#[cfg(unix)]
#[test]
fn an_unreadable_file_is_named() {
    use std::os::unix::fs::PermissionsExt;
    let d = two_skills("unreadable");
    let f = d.write("pdf-processing/secret.md", "x");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(&f).is_ok() {
        // Running as root: permissions do not stop reads. A file that disappears after
        // the walk is the unreadable case then (covered in the loader's unit tests);
        // here, a folder that cannot be listed because it is not a folder any more.
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        let missing = Skills::from_dir(d.path().join("no-such-folder")).unwrap_err();
        assert!(matches!(missing.kind, K::Io(_)), "{missing}");
        assert!(missing.path.ends_with("no-such-folder"));
        return;
    }
    let e = err(&d);
    assert!(
        matches!(&e.kind, K::Io(io) if io.kind() == std::io::ErrorKind::PermissionDenied),
        "{e}"
    );
    assert_eq!(e.path, f);
}

#[cfg(unix)]
#[test]
fn a_non_utf8_name_is_refused_and_named() {
    use std::os::unix::ffi::OsStrExt;
    let d = two_skills("utf8");
    let bad = d
        .path()
        .join("pdf-processing")
        .join(std::ffi::OsStr::from_bytes(b"caf\xe9.md"));
    std::fs::write(&bad, "x").unwrap();
    let e = err(&d);
    assert!(matches!(e.kind, K::NonUtf8Name) && e.path == bad, "{e}");
}

#[test]
fn names_that_break_the_rules_are_refused_and_named() {
    let cases: [(&str, &str); 5] = [
        ("Bad_Name/SKILL.md", "Bad_Name"),
        ("double--dash/SKILL.md", "double--dash"),
        ("folder/SKILL.md", "other-name"),
        ("Acme/tool/SKILL.md", "tool"),
        ("ok/SKILL.md", "ok"),
    ];
    for (i, (rel, name)) in cases.iter().enumerate() {
        let d = TempDir::new("names");
        let md = if i == 4 {
            "---\nname: ok\n---\n".to_owned()
        } else {
            skill_md(name, "d")
        };
        let at = d.write(rel, md);
        let e = err(&d);
        assert_eq!(e.path, at, "case {i}: {e}");
        let expected = match i {
            0 | 1 => matches!(e.kind, K::Entry(EntryProblem::InvalidName(_))),
            2 => matches!(e.kind, K::Entry(EntryProblem::NameMismatch { .. })),
            3 => matches!(e.kind, K::BadName(_)),
            _ => matches!(e.kind, K::Entry(EntryProblem::MissingField("description"))),
        };
        assert!(expected, "case {i}: {e}");
    }
    let d = two_skills("spaces");
    let f = d.write("pdf-processing/my notes.md", "x");
    let e = err(&d);
    assert!(matches!(e.kind, K::BadName(_)) && e.path == f, "{e}");
    let d = TempDir::new("root");
    d.write("SKILL.md", skill_md("root", "d"));
    assert!(matches!(err(&d).kind, K::RootSkill));
}

#[test]
fn the_file_limits_are_enforced_at_load_naming_the_file() {
    let d = TempDir::new("count");
    d.write("many/SKILL.md", skill_md("many", "Many files"));
    for i in 0..512 {
        d.write(&format!("many/f/{i:04}.txt"), "x");
    }
    let e = err(&d);
    assert!(matches!(e.kind, K::TooManyFiles { max: 512 }), "{e}");
    assert!(
        e.path.ends_with("many/f/0511.txt"),
        "the 513th file is named: {e}"
    );
    let d = TempDir::new("size");
    d.write("big/SKILL.md", skill_md("big", "Big files"));
    d.write("big/a.bin", vec![1u8; 10 << 20]);
    let over = d.write("big/b.bin", vec![2u8; 7 << 20]);
    let e = err(&d);
    assert!(matches!(e.kind, K::TooLarge { max: 16_777_216 }), "{e}");
    assert_eq!(e.path, over);
    // The whole catalog's bound.
    let e = Skills::builder()
        .dir(d.path())
        .max_bytes(1 << 20)
        .load()
        .unwrap_err();
    assert!(matches!(e.kind, K::TooLarge { max: 1_048_576 }), "{e}");
}

#[test]
fn hostile_frontmatter_is_refused_with_bounded_work() {
    let mut bomb =
        String::from("---\nname: bomb\ndescription: d\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let p = i - 1;
        bomb.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    bomb.push_str("---\n");
    let d = TempDir::new("bomb");
    let at = d.write("bomb/SKILL.md", &bomb);
    let e = err(&d);
    assert!(
        matches!(e.kind, K::Frontmatter(FrontmatterError::TooLarge { .. })),
        "{e}"
    );
    assert_eq!(e.path, at);
    let deep = format!(
        "---\nname: deep\ndescription: d\nx: {}1{}\n---\n",
        "[".repeat(100),
        "]".repeat(100)
    );
    let d = TempDir::new("deep");
    d.write("deep/SKILL.md", deep);
    assert!(matches!(
        err(&d).kind,
        K::Frontmatter(FrontmatterError::TooDeep { .. })
    ));
    let d = TempDir::new("binary");
    d.write("bin/SKILL.md", [0xffu8, 0xfe, 0x00]);
    assert!(matches!(err(&d).kind, K::NotText));
}

#[test]
fn skills_in_code_follow_the_same_rules() {
    let ok = SkillDef::new("acme/refunds")
        .file("SKILL.md", skill_md("refunds", "Refunds"))
        .file("a/b.md", "b");
    let skills = Skills::builder().skill(ok.clone()).load().unwrap();
    assert_eq!(skills.entries()[0].uri, "skill://acme/refunds/SKILL.md");
    let e = Skills::builder()
        .skill(SkillDef::new("acme/refunds").file("SKILL.md", skill_md("other", "d")))
        .load();
    assert!(matches!(
        e.unwrap_err().kind,
        K::Entry(EntryProblem::NameMismatch { .. })
    ));
    let e = Skills::builder()
        .skill(ok.clone().file("../escape.md", "x"))
        .load()
        .unwrap_err();
    assert!(matches!(e.kind, K::BadName(_)), "{e}");
    let e = Skills::builder()
        .skill(ok.clone())
        .skill(ok)
        .load()
        .unwrap_err();
    assert!(matches!(e.kind, K::Duplicate(_)), "{e}");
}
