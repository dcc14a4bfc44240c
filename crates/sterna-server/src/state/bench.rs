//! Entry points for the benchmarks (not a stable API).

use super::StateKeys;
use super::codec::{Binding, FlowState, StatePayload, open, seal};

/// A typical state: the seed's `provision_database`, one question asked.
#[expect(missing_debug_implementations, reason = "a benchmark fixture")]
pub struct Typical {
    keys: StateKeys,
    payload: StatePayload,
    digest: [u8; 32],
}

impl Default for Typical {
    fn default() -> Self {
        Self::new()
    }
}

impl Typical {
    /// Builds the keys and the payload.
    pub fn new() -> Self {
        let args = serde_json::value::to_raw_value(&serde_json::json!({"name": "orders"}))
            .expect("JSON serializes");
        Self {
            keys: StateKeys::ephemeral(),
            payload: StatePayload {
                iat: 1_800_000_000,
                exp: 1_800_000_600,
                flow: FlowState {
                    round: 1,
                    asked: vec![("pick_region".into(), [0x5a; 8])],
                    answers: Vec::new(),
                    app: None,
                    flow_id: [0x42; 16],
                },
            },
            digest: super::digest::args_digest(Some(&args)).expect("the arguments are JSON"),
        }
    }

    fn binding(&self) -> Binding<'_> {
        Binding {
            audience: "sterna-demo",
            principal: "",
            method: "tools/call",
            target: "provision_database",
            args_digest: &self.digest,
        }
    }

    /// Seals the state.
    pub fn seal(&self) -> String {
        seal(&self.keys, &self.binding(), &self.payload)
    }

    /// Opens a sealed state; true on success.
    pub fn open(&self, token: &str) -> bool {
        open(&self.keys, &self.binding(), token, 65536, 1_800_000_100, 5).is_ok()
    }
}
