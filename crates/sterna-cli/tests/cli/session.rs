//! `sterna connect` in a pseudo-terminal: Tab completes names, calls ask their questions.

use crate::screen::{Screen, show};
use crate::sterna;

#[test]
fn session_completes_names_and_calls_tools() {
    let mut s = Screen::spawn(&["connect", "--history", "/dev/null", "--", sterna(), "serve"]);
    s.wait_for("sterna-demo>");
    s.send("tools\r");
    s.wait_for("provision_database — Creates a database");
    s.send("call prov\t");
    s.wait_for("call provision_database");
    s.send(" {\"name\":\"billing\"}\r");
    s.wait_for("> Europe (Ireland) [eu-west-1]");
    s.send("\r");
    s.wait_for("Send these answers?");
    s.send("\r");
    let screen = s.wait_for("Created billing in eu-west-1");
    s.send("read sterna://readme\r");
    s.wait_for("The sterna demo server");
    s.send("describe sign_up\r");
    let screen2 = s.wait_for("tool sign_up");
    show("a session", &screen2);
    assert!(
        screen.contains("round 1: questions [\"pick_region\"]"),
        "{screen}"
    );
    s.send("listen sterna://readme\r");
    s.wait_for("⟳ listening:");
    s.send("call touch_readme\r");
    let screen3 = s.wait_for("⟳ resource updated: sterna://readme");
    show("listen", &screen3);
    s.send("quit\r");
    assert_eq!(s.exit_code(), 0);
}
