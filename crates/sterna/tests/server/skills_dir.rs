//! Folders of skills for the skills tests: a temporary folder removed on drop, and the
//! two-skill layout the tests share (one skill under a prefix with subfolders and a
//! nested skill, one at the top).

use std::path::{Path, PathBuf};

pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("sterna-skills-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `rel` (creating its folders).
    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let p = self.0.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, bytes).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n")
}

/// `docs/release-notes` (guides/, templates/, a nested skill `checklist` and a binary
/// file) and `pdf-processing` (references/).
pub fn two_skills(tag: &str) -> TempDir {
    let d = TempDir::new(tag);
    d.write(
        "docs/release-notes/SKILL.md",
        skill_md("release-notes", "Draft release notes"),
    );
    d.write("docs/release-notes/guides/STYLE.md", "Short lines.\n");
    d.write("docs/release-notes/templates/notes.md", "## Changes\n");
    d.write("docs/release-notes/logo.bin", [0u8, 159, 146, 150, 255]);
    d.write(
        "docs/release-notes/checklist/SKILL.md",
        skill_md("checklist", "Check a release"),
    );
    d.write("pdf-processing/SKILL.md", "---\nname: pdf-processing\ndescription: Extract text from PDFs\nmetadata:\n  version: \"1.0\"\nlevel: 2\n---\nRead references/FORMS.md\n");
    d.write("pdf-processing/references/FORMS.md", "# Forms\n");
    d.write("README.md", "not a skill: ignored\n");
    d.write(".git/config", "hidden: skipped\n");
    d
}
