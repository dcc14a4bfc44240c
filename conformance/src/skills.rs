//! The client scenarios of the skills extension (`sep-2640-client-*`): list the skills
//! and read nothing (`no-prefetch`); or list, load `pdf-processing` through the
//! verifying path, and only if it verifies read `references/FORMS.md` (`verify-*`: the
//! harness serves a SKILL.md whose size, digest or frontmatter does not match, so the
//! load must refuse it and FORMS.md must never be read).

use sterna::client::Client;
use sterna::client::skills::SkillError;

/// Whether `scenario` is one of the extension's.
pub(crate) fn is_skills(scenario: &str) -> bool {
    scenario.starts_with("sep-2640-client-")
}

/// Runs a skills scenario.
pub(crate) async fn run(c: &Client, scenario: &str) -> Result<(), SkillError> {
    let skills = c.skills();
    let listing = skills.list().await?;
    for (uri, why) in &listing.rejected {
        eprintln!("rejected entry {uri}: {why}");
    }
    println!("{} skill(s) listed", listing.skills.len());
    if scenario == "sep-2640-client-no-prefetch" {
        return Ok(());
    }
    let Some(entry) = listing
        .skills
        .iter()
        .find(|s| s.name() == Some("pdf-processing"))
    else {
        println!("no pdf-processing skill listed");
        return Ok(());
    };
    let loaded = skills.load(entry).await?;
    println!(
        "loaded {} ({} bytes, verified)",
        entry.uri,
        loaded.skill_md().len()
    );
    let forms = loaded.read("references/FORMS.md").await?;
    println!("read {} ({} bytes, verified)", forms.uri, forms.bytes.len());
    Ok(())
}
