//! The skills wing: what it declares (per era: the same in both), the methods it adds,
//! and the resources it lists and serves (every SKILL.md listed; every file read exactly
//! as it was hashed).

use super::Skills;
use super::catalog::Catalog;
use super::mime;
use crate::server::core::Server;
use crate::server::outcome::Failure;
use crate::server::wing::{Era, ReadResult, Wing, WingRequest};
use base64::Engine;
use futures_util::future::BoxFuture;
use serde_json::value::RawValue;
use std::sync::Arc;
use sterna_types::capabilities::{ResourcesCapability, ServerCapabilities};
use sterna_types::content::{BlobResourceContents, ResourceContents, TextResourceContents};
use sterna_types::meta::RequestMeta;
use sterna_types::resources::{ReadResourceResult, Resource};
use sterna_types::skills::{DIRECTORY_READ, EXTENSION, GET, LIST, SkillsCapability};

/// The methods, with and without `resources/directory/read`.
const WITH_DIRECTORIES: &[&str] = &[LIST, GET, DIRECTORY_READ];
const WITHOUT_DIRECTORIES: &[&str] = &[LIST, GET];

/// The skills a server serves, as a wing.
pub(crate) struct SkillsWing {
    pub(super) skills: Skills,
    pub(super) page: usize,
}

impl SkillsWing {
    pub(super) fn new(skills: Skills, page: usize) -> Self {
        Self { skills, page }
    }
}

impl Wing<Server> for SkillsWing {
    /// The same in both eras: the extension (settings inline) and `resources`.
    fn capabilities(&self, _era: Era, caps: &mut ServerCapabilities) {
        let settings = SkillsCapability {
            directory_read: self.skills.config().directory_read,
        };
        let serde_json::Value::Object(settings) =
            serde_json::to_value(settings).expect("settings serialize")
        else {
            unreachable!("settings serialize as an object")
        };
        caps.extensions
            .get_or_insert_with(Default::default)
            .insert(EXTENSION.to_owned(), settings);
        caps.resources
            .get_or_insert_with(ResourcesCapability::default)
            .list_changed = Some(true);
    }

    fn methods(&self, _era: Era) -> &'static [&'static str] {
        if self.skills.config().directory_read {
            WITH_DIRECTORIES
        } else {
            WITHOUT_DIRECTORIES
        }
    }

    fn decode<'a>(
        &'a self,
        method: &'a str,
        _meta: &RequestMeta,
        params: Option<&'a RawValue>,
    ) -> WingRequest<'a, Server> {
        WingRequest::unnamed(super::methods::decode(
            &self.skills,
            self.page,
            method,
            params,
        ))
    }

    fn lists_resources(&self) -> bool {
        true
    }

    fn resources(&self) -> Vec<Resource> {
        self.skills.catalog().rows()
    }

    fn read_resource<'a>(&'a self, uri: &'a str) -> Option<BoxFuture<'a, ReadResult>> {
        let catalog: Arc<Catalog> = self.skills.catalog();
        if let Some(body) = catalog.file(uri) {
            let result = read_result(uri, &body.bytes, body.mime);
            return Some(Box::pin(async move { Ok(result) }));
        }
        let (dynamic, rel) = catalog.dynamic(uri)?;
        let read = dynamic.read.clone();
        Some(Box::pin(async move {
            let mime = mime::of(&rel, None);
            match read(rel).await {
                Some(bytes) => Ok(read_result(uri, &bytes, mime)),
                None => Err(Failure::ResourceNotFound(uri.to_owned())),
            }
        }))
    }
}

/// The bytes as `text` when they are UTF-8 (exactly those characters), else as a `blob`:
/// either way, what a host hashes is what was hashed here.
fn read_result(uri: &str, bytes: &[u8], mime: &str) -> ReadResourceResult {
    let content = match std::str::from_utf8(bytes) {
        Ok(text) => ResourceContents::Text(TextResourceContents {
            uri: uri.to_owned(),
            mime_type: Some(mime.to_owned()),
            text: text.to_owned(),
            meta: None,
        }),
        Err(_) => ResourceContents::Blob(BlobResourceContents {
            uri: uri.to_owned(),
            mime_type: Some(mime.to_owned()),
            blob: base64::engine::general_purpose::STANDARD.encode(bytes),
            meta: None,
        }),
    };
    ReadResourceResult::new(vec![content])
}
