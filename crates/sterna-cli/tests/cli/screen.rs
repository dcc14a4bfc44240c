//! The real `sterna` binary in a pseudo-terminal; what it draws is fed to a terminal
//! emulator (vt100) and read back as a screen. Every wait is bounded.

use expectrl::Session;
use expectrl::process::unix::{PtyStream, UnixProcess};
use std::io::Write;
use std::process::Command;
use std::time::{Duration, Instant};

/// How long any one wait may take.
const WAIT: Duration = Duration::from_secs(30);

/// Columns and rows of the terminal.
const COLS: u16 = 100;
const ROWS: u16 = 32;

/// A program on a pseudo-terminal, and its screen.
pub(crate) struct Screen {
    session: Session<UnixProcess, PtyStream>,
    parser: vt100::Parser,
}

/// Rows of a tall terminal, which is also 400 columns wide (for the wire, which prints a
/// lot, in long lines).
pub(crate) const TALL: u16 = 200;

impl Screen {
    /// Starts `sterna ARGS` on a fresh terminal.
    pub(crate) fn spawn(args: &[&str]) -> Self {
        Self::spawn_with(args, |_| {})
    }

    /// Starts `sterna ARGS` on a fresh terminal, with `setup` changing the command first
    /// (its environment, its directory).
    pub(crate) fn spawn_with(args: &[&str], setup: impl FnOnce(&mut Command)) -> Self {
        Self::spawn_sized(args, ROWS, setup)
    }

    /// Starts `sterna ARGS` on a terminal of `rows` rows.
    pub(crate) fn spawn_sized(args: &[&str], rows: u16, setup: impl FnOnce(&mut Command)) -> Self {
        let cols = if rows == TALL { 4 * COLS } else { COLS };
        // The pty is made 80 columns wide and resized after the child has started: a
        // `sterna` that reads the size first would draw for 80 columns. So the size is set
        // from inside, before `sterna` starts.
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(format!(
                "stty cols {cols} rows {rows} && exec \"$0\" \"$@\""
            ))
            .arg(crate::sterna())
            .args(args)
            .env("STERNA_LOG", "error")
            .env("TERM", "xterm-256color")
            .env("HOME", std::env::temp_dir())
            .env_remove("STERNA_CONFIG")
            .env_remove("BROWSER");
        setup(&mut cmd);
        let mut session = Session::spawn(cmd).expect("sterna starts on a pty");
        session
            .get_process_mut()
            .set_window_size(cols, rows)
            .expect("window size");
        Self {
            session,
            parser: vt100::Parser::new(rows, cols, 0),
        }
    }

    /// Reads what is there; answers cursor position queries as a terminal would.
    fn pump(&mut self) {
        let mut buf = [0u8; 8192];
        loop {
            match self.session.try_read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let chunk = &buf[..n];
                    let mut rest = chunk;
                    while let Some(i) = find(rest, b"\x1b[6n") {
                        self.parser.process(&rest[..i]);
                        let (row, col) = self.parser.screen().cursor_position();
                        let reply = format!("\x1b[{};{}R", row + 1, col + 1);
                        let _ = self.session.write_all(reply.as_bytes());
                        rest = &rest[i + 4..];
                    }
                    self.parser.process(rest);
                }
                Err(_) => break,
            }
        }
    }

    /// The screen as text, now: one line per row (a row filled to the last column is
    /// not joined with the next, as `vt100::Screen::contents` would).
    pub(crate) fn contents(&mut self) -> String {
        self.pump();
        let cols = self.parser.screen().size().1;
        self.parser
            .screen()
            .rows(0, cols)
            .map(|r| r.trim_end().to_owned())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Waits until the screen shows `text`; returns the screen.
    pub(crate) fn wait_for(&mut self, text: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let c = self.contents();
            if c.contains(text) {
                return c;
            }
            assert!(
                Instant::now() < deadline,
                "waited {WAIT:?} for {text:?}; the screen:\n{c}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Types `keys`.
    pub(crate) fn send(&mut self, keys: &str) {
        self.session.write_all(keys.as_bytes()).expect("typing");
        self.session.flush().expect("typing");
        std::thread::sleep(Duration::from_millis(60));
    }

    /// Waits for the program to exit; returns its exit code.
    pub(crate) fn exit_code(&mut self) -> i32 {
        use ptyprocess::WaitStatus;
        let deadline = Instant::now() + WAIT;
        loop {
            self.pump();
            match self.session.get_process().status() {
                Ok(WaitStatus::Exited(_, code)) => return code,
                Ok(WaitStatus::Signaled(_, s, _)) => panic!("killed by {s:?}"),
                _ => {}
            }
            assert!(
                Instant::now() < deadline,
                "sterna did not exit:\n{}",
                self.parser.screen().contents()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let p = self.session.get_process_mut();
        if p.is_alive().unwrap_or(false) {
            let _ = p.exit(true);
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Prints a screen for the test log (`--nocapture` shows it).
pub(crate) fn show(title: &str, screen: &str) {
    let trimmed: Vec<&str> = screen.lines().collect();
    let end = trimmed
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(0, |i| i + 1);
    println!("----- {title} -----\n{}\n-----", trimmed[..end].join("\n"));
}
