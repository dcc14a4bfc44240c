//! `skills/list`, `skills/get` and `resources/directory/read`, decoded once by the wing
//! against the catalog of that moment (a reload during the call does not mix two
//! catalogs), and answered with the extension's result members; each era adds its
//! stamps (`resultType`, `ttlMs`/`cacheScope` on 2026-07-28 only).

use super::Skills;
use super::catalog::Catalog;
use crate::server::context::RequestEnv;
use crate::server::core::Server;
use crate::server::outcome::{Completed, ExtReply, Outcome, Payload};
use crate::server::wing::WingCall;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;
use sterna_types::error::ErrorObject;
use sterna_types::jsonrpc::RequestId;
use sterna_types::result::CacheScope;
use sterna_types::skills::{DIRECTORY_READ, GET, LIST};

#[derive(Deserialize)]
struct ListIn {
    #[serde(default)]
    cursor: Option<String>,
}

#[derive(Deserialize)]
struct GetIn {
    uri: String,
}

#[derive(Deserialize)]
struct DirIn {
    uri: String,
    #[serde(default)]
    cursor: Option<String>,
}

enum Op {
    List(Option<String>),
    Get(String),
    Directory(String, Option<String>),
}

/// A decoded request, with the catalog it runs against.
struct SkillsCall {
    catalog: Arc<Catalog>,
    cache: (Duration, CacheScope),
    page: usize,
    op: Op,
}

fn params<T: DeserializeOwned>(method: &str, raw: Option<&RawValue>) -> Result<T, ErrorObject> {
    let raw = raw.map_or("{}", RawValue::get);
    serde_json::from_str(raw)
        .map_err(|e| ErrorObject::invalid_params(format!("Invalid params of {method}: {e}")))
}

/// Decodes a request of one of the wing's methods.
pub(super) fn decode(
    skills: &Skills,
    page: usize,
    method: &str,
    raw: Option<&RawValue>,
) -> Result<Box<dyn WingCall<Server>>, ErrorObject> {
    let op = match method {
        LIST => Op::List(params::<ListIn>(method, raw)?.cursor),
        GET => Op::Get(params::<GetIn>(method, raw)?.uri),
        DIRECTORY_READ => {
            let p = params::<DirIn>(method, raw)?;
            Op::Directory(p.uri, p.cursor)
        }
        m => return Err(ErrorObject::method_not_found(m)),
    };
    Ok(Box::new(SkillsCall {
        catalog: skills.catalog(),
        cache: skills.config().cache,
        page,
        op,
    }))
}

impl WingCall<Server> for SkillsCall {
    fn run<'s>(
        self: Box<Self>,
        _server: &'s Server,
        _id: RequestId,
        _env: RequestEnv,
    ) -> BoxFuture<'s, Option<Outcome>> {
        let outcome = match self.answer() {
            Ok(members) => Outcome::Complete(Completed {
                payload: Payload::Ext(ExtReply::complete(members)),
                cache: Some(self.cache),
            }),
            Err(e) => Outcome::Failed(e.into()),
        };
        Box::pin(async move { Some(outcome) })
    }
}

impl SkillsCall {
    fn answer(&self) -> Result<Map<String, Value>, ErrorObject> {
        let c = &self.catalog;
        let mut out = Map::new();
        match &self.op {
            Op::List(cursor) => {
                let (page, next) = self.page(&c.entries, "skills", cursor.as_deref())?;
                out.insert(
                    "skills".into(),
                    serde_json::to_value(page).expect("entries serialize"),
                );
                if let Some(next) = next {
                    out.insert("nextCursor".into(), next.into());
                }
            }
            Op::Get(uri) => {
                let skill = c.get(uri).ok_or_else(|| {
                    ErrorObject::invalid_params(format!("No skill is served at {uri}"))
                })?;
                out.insert(
                    "skill".into(),
                    serde_json::to_value(skill).expect("entries serialize"),
                );
            }
            Op::Directory(uri, cursor) => {
                let children = c.directory(uri).ok_or_else(|| {
                    ErrorObject::invalid_params(format!("Not a directory of a served skill: {uri}"))
                })?;
                let (page, next) = self.page(children, "dir", cursor.as_deref())?;
                out.insert(
                    "resources".into(),
                    serde_json::to_value(page).expect("rows serialize"),
                );
                if let Some(next) = next {
                    out.insert("nextCursor".into(), next.into());
                }
            }
        }
        Ok(out)
    }

    /// The page a cursor points at, and the next cursor. A cursor names the catalog it
    /// came from: one from another catalog (before a reload, another replica's) is
    /// `-32602`, and the host lists again.
    fn page<'c, T>(
        &self,
        items: &'c [T],
        kind: &str,
        cursor: Option<&str>,
    ) -> Result<(&'c [T], Option<String>), ErrorObject> {
        let fp = &self.catalog.fingerprint;
        let start = match cursor {
            None => 0,
            Some(c) => {
                let bad = || ErrorObject::invalid_params("Invalid cursor");
                let text = URL_SAFE_NO_PAD
                    .decode(c)
                    .ok()
                    .and_then(|b| String::from_utf8(b).ok())
                    .ok_or_else(bad)?;
                let mut parts = text.splitn(3, '/');
                let (k, f, n) = (parts.next(), parts.next(), parts.next());
                let n: usize = n.and_then(|n| n.parse().ok()).ok_or_else(bad)?;
                if k != Some(kind) || f != Some(fp.as_str()) || n == 0 || n >= items.len() {
                    return Err(bad());
                }
                n
            }
        };
        let end = (start + self.page).min(items.len());
        let next =
            (end < items.len()).then(|| URL_SAFE_NO_PAD.encode(format!("{kind}/{fp}/{end}")));
        Ok((&items[start..end], next))
    }
}
