//! Answers given ahead of the questions: `--set FIELD=VALUE`, `--set KEY.FIELD=VALUE` and
//! `--answers FILE`. They are typed later, against the schema the server sends.

use crate::exit::CliError;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// One given answer, before it is typed.
#[derive(Debug, Clone)]
pub(crate) enum Given {
    /// Text from `--set` (typed by the field's schema: numbers, yes/no, comma lists).
    Text(String),
    /// A JSON value from `--answers` (strings are read as text).
    Json(Value),
}

/// What the user answered a whole question with, without filling it in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// `"accept"` (a URL question: consent to open it).
    Accept,
    /// `"decline"`.
    Decline,
    /// `"cancel"`.
    Cancel,
}

/// Everything given on the command line.
#[derive(Debug, Default, Clone)]
pub(crate) struct Answers {
    sets: HashMap<String, String>,
    targeted: HashMap<(String, String), String>,
    file: Map<String, Value>,
    /// The `--set` keys that answered something so far.
    used: Arc<Mutex<HashSet<String>>>,
}

impl Answers {
    /// Reads `--set` values and the `--answers` file.
    pub(crate) fn parse(sets: &[String], file: Option<&Path>) -> Result<Self, CliError> {
        let mut a = Self::default();
        for s in sets {
            let (k, v) = s
                .split_once('=')
                .ok_or_else(|| CliError::Usage(format!("--set {s}: expected FIELD=VALUE")))?;
            match k.split_once('.') {
                Some((q, f)) => a
                    .targeted
                    .insert((q.to_owned(), f.to_owned()), v.to_owned()),
                None => a.sets.insert(k.to_owned(), v.to_owned()),
            };
        }
        if let Some(path) = file {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::Usage(format!("--answers {}: {e}", path.display())))?;
            match serde_json::from_str(&text) {
                Ok(Value::Object(m)) => a.file = m,
                Ok(_) => return Err(CliError::Usage("--answers: expected a JSON object".into())),
                Err(e) => {
                    return Err(CliError::Usage(format!(
                        "--answers {}: {e}",
                        path.display()
                    )));
                }
            }
        }
        Ok(a)
    }

    /// A verdict given for question `key` (`"key": "decline"` in the file, or
    /// `--set key=decline`).
    pub(crate) fn verdict(&self, key: &str) -> Option<Verdict> {
        let text = match self.file.get(key) {
            Some(Value::String(s)) => Some(s.as_str()),
            _ => self.set(key),
        };
        match text? {
            "accept" => Some(Verdict::Accept),
            "decline" => Some(Verdict::Decline),
            "cancel" => Some(Verdict::Cancel),
            _ => None,
        }
    }

    /// The value given for `field` of question `key` (most specific first: `--set
    /// key.field`, the file's `key` object, `--set field`, the file's top level).
    pub(crate) fn field(&self, key: &str, field: &str) -> Option<Given> {
        if let Some(v) = self.targeted.get(&(key.to_owned(), field.to_owned())) {
            return Some(Given::Text(v.clone()));
        }
        if let Some(v) = self.file.get(key).and_then(|q| q.get(field)) {
            return Some(Given::Json(v.clone()));
        }
        if let Some(v) = self.set(field) {
            return Some(Given::Text(v.to_owned()));
        }
        match self.file.get(field) {
            Some(v) if !v.is_object() => Some(Given::Json(v.clone())),
            _ => None,
        }
    }

    /// `--set KEY=VALUE`, marked as used.
    fn set(&self, key: &str) -> Option<&str> {
        let v = self.sets.get(key)?;
        self.used
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.to_owned());
        Some(v)
    }

    /// The `--set FIELD=…` keys that answered nothing so far, sorted.
    pub(crate) fn unused(&self) -> Vec<String> {
        let used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<String> = self
            .sets
            .keys()
            .filter(|k| !used.contains(*k))
            .cloned()
            .collect();
        out.sort();
        out
    }

    /// `--set KEY.FIELD=…` for question `key` must name one of its `fields`.
    pub(crate) fn check_targeted(&self, key: &str, fields: &[&str]) -> Result<(), CliError> {
        for (q, f) in self.targeted.keys() {
            if q == key && !fields.contains(&f.as_str()) {
                return Err(CliError::Usage(format!(
                    "--set {q}.{f}: question `{q}` has no field `{f}` (its fields: {})",
                    fields.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// A whole answer given for question `key` as an object (a sampling result).
    pub(crate) fn object(&self, key: &str) -> Option<&Map<String, Value>> {
        self.file.get(key).and_then(Value::as_object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn most_specific_answer_wins() {
        let dir = std::env::temp_dir().join(format!("sterna-answers-{}", std::process::id()));
        std::fs::write(
            &dir,
            r#"{"pick": {"region": "us-east-1"}, "region": "eu-west-1", "other": "decline"}"#,
        )
        .unwrap();
        let a = Answers::parse(&["age=3".into(), "q.age=4".into()], Some(&dir)).unwrap();
        std::fs::remove_file(&dir).unwrap();
        assert!(matches!(a.field("pick", "region"), Some(Given::Json(v)) if v == "us-east-1"));
        assert!(matches!(a.field("x", "region"), Some(Given::Json(v)) if v == "eu-west-1"));
        assert!(matches!(a.field("q", "age"), Some(Given::Text(v)) if v == "4"));
        assert!(matches!(a.field("z", "age"), Some(Given::Text(v)) if v == "3"));
        assert_eq!(a.verdict("other"), Some(Verdict::Decline));
        assert_eq!(a.verdict("pick"), None);
        assert!(Answers::parse(&["nope".into()], None).is_err());
        let a = Answers::parse(&["regoin=x".into(), "age=3".into()], None).unwrap();
        assert!(a.field("q", "age").is_some());
        assert_eq!(a.unused(), ["regoin"]);
    }
}
