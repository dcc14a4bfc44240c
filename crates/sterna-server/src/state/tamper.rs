//! Tampering at scale: over a million mutations of real sealed states, none may open.
//! `cargo test -p sterna --release --lib state::tamper -- --ignored --nocapture`

use super::StateKeys;
use super::codec::{Binding, Carried, FlowState, StatePayload, open, seal};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use std::collections::HashSet;

const NOW: u64 = 1_800_000_100;
const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// A small deterministic generator (xorshift64*), so a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

fn payloads() -> Vec<StatePayload> {
    let flow = |round, asked: usize, answers: usize, app: Option<usize>| FlowState {
        round,
        asked: (0..asked)
            .map(|i| (format!("q{i}"), [i as u8; 8]))
            .collect(),
        answers: (0..answers)
            .map(|i| Carried {
                key: format!("a{i}"),
                question: [i as u8; 8],
                json: format!(r#"{{"action":"accept","content":{{"n":{i}}}}}"#).into_bytes(),
            })
            .collect(),
        app: app.map(|n| vec![0x5a; n]),
        flow_id: [0x42; 16],
    };
    let at = |flow| StatePayload {
        iat: 1_800_000_000,
        exp: 1_800_000_600,
        flow,
    };
    vec![
        at(flow(1, 0, 0, None)),
        at(flow(1, 1, 0, None)),
        at(flow(2, 2, 2, Some(16))),
        at(flow(3, 1, 3, Some(300))),
    ]
}

/// Counts mutations and asserts none opens.
struct Tally<'a> {
    keys: &'a StateKeys,
    binding: Binding<'a>,
    originals: HashSet<String>,
    tried: u64,
    accepted: Vec<String>,
}

impl Tally<'_> {
    fn try_str(&mut self, token: &str) {
        if self.originals.contains(token) {
            return; // not a mutation
        }
        self.tried += 1;
        if open(self.keys, &self.binding, token, 64 * 1024, NOW, 5).is_ok() {
            self.accepted.push(token.to_owned());
        }
    }

    fn try_bytes(&mut self, token: &[u8]) {
        if let Ok(t) = std::str::from_utf8(token) {
            self.try_str(t);
        }
    }

    fn try_raw(&mut self, raw: &[u8]) {
        self.try_str(&URL_SAFE_NO_PAD.encode(raw));
    }
}

fn mutate_one(t: &mut Tally<'_>, token: &str, rng: &mut Rng) {
    let raw = URL_SAFE_NO_PAD
        .decode(token)
        .expect("a sealed token decodes");
    let text = token.as_bytes();
    // Every single-bit flip of the sealed bytes, and of the text.
    for i in 0..raw.len() * 8 {
        let mut m = raw.clone();
        m[i / 8] ^= 1 << (i % 8);
        t.try_raw(&m);
    }
    for i in 0..text.len() * 8 {
        let mut m = text.to_vec();
        m[i / 8] ^= 1 << (i % 8);
        t.try_bytes(&m);
    }
    // Truncations at every length, of the text and of the bytes.
    for n in 0..text.len() {
        t.try_str(&token[..n]);
    }
    for n in 0..raw.len() {
        t.try_raw(&raw[..n]);
    }
    // Extensions: one alphabet character, and 1..=64 random bytes.
    for &c in ALPHABET {
        t.try_str(&format!("{token}{}", char::from(c)));
    }
    for n in 1..=64 {
        let mut m = raw.clone();
        m.extend((0..n).map(|_| rng.next_u64() as u8));
        t.try_raw(&m);
    }
    // Base64 alphabet swaps: every position, every other character.
    for i in 0..text.len() {
        for &c in ALPHABET {
            if c != text[i] {
                let mut m = text.to_vec();
                m[i] = c;
                t.try_bytes(&m);
            }
        }
    }
    // Random byte replacements (1 to 4 bytes at a time).
    for _ in 0..120_000 {
        let mut m = raw.clone();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(m.len());
            m[at] = rng.next_u64() as u8;
        }
        t.try_raw(&m);
    }
}

/// Splices of two valid states: a prefix of one and the rest of the other, cut at
/// every position of the text and of the bytes.
fn splice(t: &mut Tally<'_>, a: &str, b: &str) {
    for i in 0..=a.len().min(b.len()) {
        t.try_str(&format!("{}{}", &a[..i], &b[i..]));
    }
    let (ra, rb) = (
        URL_SAFE_NO_PAD.decode(a).expect("decodes"),
        URL_SAFE_NO_PAD.decode(b).expect("decodes"),
    );
    for i in 0..=ra.len().min(rb.len()) {
        let mut m = ra[..i].to_vec();
        m.extend_from_slice(&rb[i..]);
        t.try_raw(&m);
    }
}

#[test]
#[ignore = "a million mutations: run with --release -- --ignored"]
fn a_million_mutations_of_real_states_never_open() {
    let started = std::time::Instant::now();
    let keys = StateKeys::new(&[[11u8; 32], [12u8; 32]]).expect("distinct keys");
    let digest = [0x33u8; 32];
    let binding = Binding {
        audience: "srv",
        principal: "alice",
        method: "tools/call",
        target: "provision_database",
        args_digest: &digest,
    };
    // Several real tokens: each payload sealed twice (two nonces).
    let tokens: Vec<String> = payloads()
        .iter()
        .flat_map(|p| [seal(&keys, &binding, p), seal(&keys, &binding, p)])
        .collect();
    for tok in &tokens {
        assert!(open(&keys, &binding, tok, 64 * 1024, NOW, 5).is_ok());
    }
    let mut t = Tally {
        keys: &keys,
        binding,
        originals: tokens.iter().cloned().collect(),
        tried: 0,
        accepted: Vec::new(),
    };
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for tok in &tokens {
        mutate_one(&mut t, tok, &mut rng);
    }
    for a in &tokens {
        for b in &tokens {
            if a != b {
                splice(&mut t, a, b);
            }
        }
    }
    println!(
        "tamper: {} mutations of {} real states (lengths {:?}), {} accepted, in {:?}",
        t.tried,
        tokens.len(),
        tokens.iter().map(String::len).collect::<Vec<_>>(),
        t.accepted.len(),
        started.elapsed()
    );
    assert!(t.tried >= 1_000_000, "only {} mutations", t.tried);
    assert!(
        t.accepted.is_empty(),
        "accepted: {:?}",
        &t.accepted[..t.accepted.len().min(5)]
    );
}
