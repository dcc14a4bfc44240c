//! The skills of the fixture (the `io.modelcontextprotocol/skills` extension): the folder
//! `conformance/skills/` (or `STERNA_SKILLS_DIR`). Its first skill by URI,
//! `skill://docs/release-notes`, has subfolders at its root, which the directory
//! scenario needs.

use sterna::server::ServerBuilder;
use sterna::server::skills::Skills;

/// Serves the fixture's skills folder.
pub(crate) fn add<K>(b: ServerBuilder<K>) -> ServerBuilder<K> {
    let dir = std::env::var("STERNA_SKILLS_DIR")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/skills").to_owned());
    let skills = Skills::from_dir(&dir).unwrap_or_else(|e| panic!("the fixture's skills: {e}"));
    b.skills(skills)
}
