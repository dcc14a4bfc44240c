//! The extension's gate: a request uses tasks only when it declares the extension itself.

use sterna_types::error::ErrorObject;
use sterna_types::meta::RequestMeta;
use sterna_types::tasks::EXTENSION;

/// `-32021` naming the extension.
pub(super) fn undeclared(what: &str) -> ErrorObject {
    ErrorObject::missing_capability(
        format!("{what} needs the {EXTENSION} extension, which this request did not declare"),
        serde_json::json!({ "extensions": { EXTENSION: {} } }),
    )
}

/// The extension's gate of `tasks/*`: the request itself must declare it.
pub(crate) fn gate(meta: &RequestMeta) -> Result<(), ErrorObject> {
    if meta.client_capabilities.extension(EXTENSION) {
        Ok(())
    } else {
        Err(undeclared("This method"))
    }
}
