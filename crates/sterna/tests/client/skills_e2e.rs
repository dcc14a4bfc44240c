//! sterna's client and server together, over both eras: list, get, load, read a file of a
//! nested skill, read a directory, and refresh after a reload.

use super::skills_dir::two_skills;
use sterna::client::skills::{SkillError, VerifyFailure};
use sterna::client::{Client, EraMode};
use sterna::server::Server;
use sterna::server::skills::Skills;

fn client(server: Server, era: EraMode) -> Client {
    Client::builder("skills-e2e", "0")
        .era(era)
        .in_process(server)
}

#[tokio::test]
async fn list_get_load_and_read_in_both_eras() {
    let d = two_skills("e2e");
    let skills = Skills::from_dir(d.path()).unwrap();
    let server = Server::builder("skills", "1")
        .ephemeral_state_keys()
        .skills(skills.clone())
        .build()
        .unwrap();
    for era in [EraMode::Auto, EraMode::Legacy] {
        let c = client(server.clone(), era);
        let s = c.skills();
        assert!(s.capability().await.unwrap().unwrap().directory_read);
        let listing = s.list().await.unwrap();
        assert_eq!(listing.skills.len(), 3, "{era:?}");
        assert!(listing.rejected.is_empty());
        let entry = s.get("skill://docs/release-notes/SKILL.md").await.unwrap();
        let loaded = s.load(&entry).await.unwrap();
        assert!(loaded.skill_md().starts_with("---\nname: release-notes"));
        // The nested skill's SKILL.md is an ordinary file of the enclosing one.
        let nested = loaded.read("checklist/SKILL.md").await.unwrap();
        assert!(nested.text().unwrap().contains("name: checklist"));
        let logo = loaded.read("logo.bin").await.unwrap();
        assert_eq!(logo.bytes, [0u8, 159, 146, 150, 255]);
        let kids = s
            .read_directory("skill://docs/release-notes")
            .await
            .unwrap();
        assert_eq!(kids.len(), 5, "{era:?}");
        let e = s.get("skill://docs/nope/SKILL.md").await.unwrap_err();
        assert!(matches!(e, SkillError::Client(_)), "{e}");
        c.close().await;
    }
}

#[tokio::test]
async fn a_held_entry_no_longer_verifies_after_the_skill_changed_and_a_refresh_does() {
    let d = two_skills("e2e-refresh");
    let skills = Skills::from_dir(d.path()).unwrap();
    let server = Server::builder("skills", "1")
        .ephemeral_state_keys()
        .skills(skills.clone())
        .build()
        .unwrap();
    let c = client(server, EraMode::Auto);
    let held = c
        .skills()
        .get("skill://pdf-processing/SKILL.md")
        .await
        .unwrap();
    let loaded = c.skills().load(&held).await.unwrap();
    d.write("pdf-processing/references/FORMS.md", "# Forms, rotated\n");
    assert!(skills.reload().await.unwrap());
    let e = loaded.read("references/FORMS.md").await.unwrap_err();
    let SkillError::Verification(v) = &e else {
        panic!("{e}")
    };
    assert!(matches!(v.failure, VerifyFailure::Size { .. }), "{e}");
    let fresh = c
        .skills()
        .get("skill://pdf-processing/SKILL.md")
        .await
        .unwrap();
    assert_ne!(
        fresh, held,
        "a new set of digests: approval of the old one is revoked"
    );
    let reloaded = c.skills().load(&fresh).await.unwrap();
    let forms = reloaded.read("references/FORMS.md").await.unwrap();
    assert_eq!(forms.text(), Some("# Forms, rotated\n"));
}
