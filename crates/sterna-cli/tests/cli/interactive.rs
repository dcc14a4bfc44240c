//! Interactive runs in a pseudo-terminal: what a person sees and types.

use crate::screen::{Screen, show};
use crate::sterna;

const DOWN: &str = "\x1b[B";
const ENTER: &str = "\r";
const ESC: &str = "\x1b";
const CTRL_C: &str = "\x03";
const BACKSPACE: &str = "\x7f";

#[test]
fn demo_region_is_an_arrow_key_select() {
    let mut s = Screen::spawn(&["demo"]);
    s.wait_for("> Europe (Ireland) [eu-west-1]");
    s.send(DOWN);
    let screen = s.wait_for("> US East (N. Virginia) [us-east-1]");
    show("the demo's region select after one Down", &screen);
    assert!(
        screen.contains("  Europe (Ireland) [eu-west-1]"),
        "{screen}"
    );
    assert!(screen.contains("sterna-demo asks: Which region should orders be created in?"));
    s.send(ENTER);
    s.wait_for("Send these answers?");
    s.send(ENTER);
    let screen = s.wait_for("← complete: Created orders in us-east-1");
    show("the demo, done", &screen);
    assert_eq!(s.exit_code(), 0);
}

fn sign_up() -> Screen {
    Screen::spawn(&["call", "sign_up", "--", sterna(), "serve"])
}

#[test]
fn form_fields_in_declared_order_with_validation_and_reprompt() {
    let mut s = sign_up();
    s.wait_for("? name");
    s.send("Ada Lovelace");
    s.send(ENTER);
    s.wait_for("? email");
    s.send("ada");
    s.send(ENTER);
    let screen = s.wait_for("must be an email address");
    show("a validation error, the field asked again", &screen);
    assert!(
        screen.contains("? email ada"),
        "the answer stays for editing:\n{screen}"
    );
    s.send("@example.org");
    s.send(ENTER);
    s.wait_for("? age");
    s.send("12");
    s.send(ENTER);
    s.wait_for("must be at least 13");
    s.send(BACKSPACE);
    s.send(BACKSPACE);
    s.send("36");
    s.send(ENTER);
    s.wait_for("? topics");
    s.send(" "); // Releases
    s.send(DOWN);
    s.send(DOWN);
    s.send(" "); // Events
    s.send(ENTER);
    s.wait_for("? newsletter");
    s.send("n");
    s.send(ENTER);
    s.wait_for("Send these answers?");
    s.send(ENTER);
    let screen = s.wait_for(
        "Signed up Ada Lovelace <ada@example.org>, 36, topics [releases, events], newsletter no",
    );
    show("the sign-up form, sent", &screen);
    let at = |t: &str| {
        screen
            .find(t)
            .unwrap_or_else(|| panic!("{t} missing:\n{screen}"))
    };
    assert!(
        at("> name") < at("> email") && at("> email") < at("> age") && at("> age") < at("> topics")
    );
    assert_eq!(s.exit_code(), 0);
}

#[test]
fn esc_declines_the_form() {
    let mut s = sign_up();
    s.wait_for("? name");
    s.send(ESC);
    let screen = s.wait_for("Not signed up: you declined");
    assert!(screen.contains("→ declined"), "{screen}");
    assert_eq!(s.exit_code(), 0);
}

#[test]
fn ctrl_c_cancels_the_form() {
    let mut s = sign_up();
    s.wait_for("? name");
    s.send("Ada");
    s.send(ENTER);
    s.wait_for("? email");
    s.send(CTRL_C);
    let screen = s.wait_for("Not signed up: you cancelled");
    assert!(screen.contains("→ cancelled"), "{screen}");
    assert_eq!(s.exit_code(), 0);
}

#[test]
fn progress_is_a_bar() {
    let mut s = Screen::spawn(&[
        "call",
        "deploy",
        r#"{"steps":8,"step_ms":250}"#,
        "--",
        sterna(),
        "serve",
    ]);
    let screen = s.wait_for("deploying [");
    show("a progress bar", &screen);
    assert!(screen.contains("/8"), "{screen}");
    assert!(
        screen.contains("[info] deploying in 8 steps"),
        "log messages with their level:\n{screen}"
    );
    let screen = s.wait_for("Deployed in 8 steps");
    assert!(screen.contains("✓ deploying 8/8"), "{screen}");
    assert_eq!(s.exit_code(), 0);
}

#[test]
fn esc_on_the_demo_form_is_named_a_decline() {
    let mut s = Screen::spawn(&["demo"]);
    s.wait_for("> Europe (Ireland) [eu-west-1]");
    s.send(ESC);
    let screen = s.wait_for("← complete, an error result:");
    show("Esc on the demo's select", &screen);
    assert!(screen.contains("<declined>"), "{screen}");
    assert!(!screen.contains("<canceled>"), "{screen}");
    assert_eq!(s.exit_code(), 1);
}

#[test]
fn booleans_show_their_hint_before_any_key() {
    let mut s = sign_up();
    for (field, answer) in [
        ("? name", "Ada"),
        ("? email", "ada@example.org"),
        ("? age", "36"),
    ] {
        s.wait_for(field);
        s.send(answer);
        s.send(ENTER);
    }
    s.wait_for("? topics");
    s.send(" ");
    s.send(ENTER);
    let screen = s.wait_for("? newsletter");
    show("a boolean field", &screen);
    assert!(screen.contains("? newsletter (y/n)"), "{screen}");
    s.send(CTRL_C);
    s.wait_for("Not signed up: you cancelled");
    assert_eq!(s.exit_code(), 0);
}

#[test]
fn nullable_arguments_are_asked_as_typed_optional_fields() {
    let mut s = Screen::spawn(&["call", "deploy", "--", sterna(), "serve"]);
    s.wait_for("? step_ms (optional)");
    s.send("10");
    s.send(ENTER);
    let screen = s.wait_for("? steps (optional)");
    show("a nullable integer argument", &screen);
    assert!(screen.contains("whole number"), "{screen}");
    s.send("fast");
    s.send(ENTER);
    s.wait_for("\"fast\" is not a whole number");
    for _ in 0..4 {
        s.send(BACKSPACE);
    }
    s.send("3");
    s.send(ENTER);
    s.wait_for("Deployed in 3 steps");
    assert_eq!(s.exit_code(), 0);
}

#[test]
fn listen_without_words_shows_resource_updates() {
    let mut s = Screen::spawn(&["connect", "--history", "/dev/null", "--", sterna(), "serve"]);
    s.wait_for("sterna-demo>");
    s.send("listen\r");
    s.wait_for("⟳ listening:");
    s.send("call touch_readme\r");
    let screen = s.wait_for("⟳ resource updated: sterna://readme");
    show("listen with no words", &screen);
    s.send("quit\r");
    assert_eq!(s.exit_code(), 0);
}

#[test]
fn a_legacy_session_names_its_protocol() {
    let mut s = Screen::spawn(&[
        "connect",
        "--history",
        "/dev/null",
        "--era",
        "legacy",
        "--",
        sterna(),
        "serve",
    ]);
    let screen = s.wait_for("sterna-demo>");
    show("connect --era legacy", &screen);
    // The banner wraps where the terminal ends (the binary's path sets where).
    let unwrapped = screen.replace('\n', "");
    assert!(
        unwrapped.contains("— protocol 2025-11-25 (a 2025-11-2"),
        "{screen}"
    );
    assert!(!screen.contains("2026-07-28"), "{screen}");
    s.send("quit\r");
    assert_eq!(s.exit_code(), 0);
}
