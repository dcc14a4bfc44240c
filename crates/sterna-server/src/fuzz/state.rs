//! Target `state_open`: `requestState` opening with a fixed key ring and binding.
//!
//! First byte even: the rest, as text, is a token: it never opens unless it is byte for
//! byte a token this process sealed. First byte odd: the rest shapes a payload, which is
//! sealed, must open to itself, and must not open under another binding or with one bit
//! of the token flipped (at a position the input chooses).

use crate::state::StateKeys;
use crate::state::codec::{Binding, Carried, FlowState, StatePayload, open, seal};
use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

const NOW: u64 = 1_800_000_000;
const MAX_LEN: usize = 64 * 1024;

fn keys() -> &'static StateKeys {
    static KEYS: OnceLock<StateKeys> = OnceLock::new();
    KEYS.get_or_init(|| StateKeys::new(&[[3u8; 32], [4u8; 32]]).expect("two distinct keys"))
}

const DIGEST: [u8; 32] = [0x42; 32];
const OTHER_DIGEST: [u8; 32] = [0x43; 32];

fn binding(digest: &[u8; 32]) -> Binding<'_> {
    Binding {
        audience: "fuzz",
        principal: "alice",
        method: "tools/call",
        target: "book",
        args_digest: digest,
    }
}

/// Tokens this process sealed (bounded: the oldest are forgotten wholesale).
static SEALED: Mutex<Option<HashSet<String>>> = Mutex::new(None);

fn remember(token: &str) {
    let mut s = SEALED.lock().unwrap_or_else(|p| p.into_inner());
    let set = s.get_or_insert_with(HashSet::new);
    if set.len() > 10_000 {
        set.clear();
    }
    set.insert(token.to_owned());
}

fn sealed_here(token: &str) -> bool {
    let s = SEALED.lock().unwrap_or_else(|p| p.into_inner());
    s.as_ref().is_some_and(|set| set.contains(token))
}

/// Reads little pieces off the input.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn byte(&mut self) -> u8 {
        let (b, rest) = self.0.split_first().map_or((0, &[][..]), |(b, r)| (*b, r));
        self.0 = rest;
        b
    }

    fn u64(&mut self) -> u64 {
        (0..8).fold(0u64, |n, _| (n << 8) | u64::from(self.byte()))
    }

    fn bytes(&mut self) -> Vec<u8> {
        let n = usize::from(self.byte() % 48).min(self.0.len());
        let (b, rest) = self.0.split_at(n);
        self.0 = rest;
        b.to_vec()
    }

    fn text(&mut self) -> String {
        String::from_utf8_lossy(&self.bytes()).into_owned()
    }

    fn eight(&mut self) -> [u8; 8] {
        std::array::from_fn(|_| self.byte())
    }
}

fn payload(r: &mut Reader<'_>) -> StatePayload {
    let iat = NOW - r.u64() % 10_000;
    let exp = NOW + r.u64() % 10_000;
    let round = u32::from(r.byte());
    let asked = (0..r.byte() % 4).map(|_| (r.text(), r.eight())).collect();
    let answers = (0..r.byte() % 4)
        .map(|_| Carried {
            key: r.text(),
            question: r.eight(),
            json: r.bytes(),
        })
        .collect();
    let app = (r.byte() % 2 == 1).then(|| r.bytes());
    StatePayload {
        iat,
        exp,
        flow: FlowState {
            round,
            asked,
            answers,
            app,
            flow_id: [round as u8; 16],
        },
    }
}

pub(crate) fn run(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let b = binding(&DIGEST);
    if mode % 2 == 0 {
        let token = String::from_utf8_lossy(rest);
        if open(keys(), &b, &token, MAX_LEN, NOW, 5).is_ok() {
            assert!(
                sealed_here(&token),
                "a token nobody sealed opened: {token:?}"
            );
        }
        // No stored-state reference was ever minted under these keys: none may verify.
        assert!(
            crate::state::stored::verify(keys(), rest).is_err(),
            "a forged stored-state reference verified"
        );
        return;
    }
    let mut r = Reader(rest);
    let p = payload(&mut r);
    let token = seal(keys(), &b, &p);
    remember(&token);
    let opened = open(keys(), &b, &token, MAX_LEN, NOW, 5).expect("a fresh seal opens");
    assert_eq!(opened.payload, p, "open(seal(x)) != x");
    let other = binding(&OTHER_DIGEST);
    assert!(open(keys(), &other, &token, MAX_LEN, NOW, 5).is_err());
    let mut raw = token.clone().into_bytes();
    let at = usize::from(r.byte()) * 256 + usize::from(r.byte());
    let at = at % raw.len();
    raw[at] ^= 1 << (r.byte() % 8);
    if let Ok(t) = String::from_utf8(raw)
        && t != token
    {
        assert!(open(keys(), &b, &t, MAX_LEN, NOW, 5).is_err(), "{t} opened");
    }
}
