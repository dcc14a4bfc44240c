//! A token store in a JSON file, readable by its owner only (mode `0600` on Unix),
//! replaced atomically (written aside, then renamed).

use super::error::StoreError;
use super::store::{Credentials, TokenStore};
use futures_util::future::BoxFuture;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Tokens and client registrations in a file (for CLIs). The file is created with mode
/// `0600` and replaced atomically on every save; concurrent processes sharing one file
/// overwrite each other's changes (the last save wins).
#[derive(Debug, Clone)]
pub struct FileStore {
    path: PathBuf,
}

impl FileStore {
    /// A store at `path` (created on the first save, with its directory).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn read(path: &Path) -> Result<Credentials, StoreError> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(StoreError::Corrupt),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Credentials::default()),
        Err(e) => Err(StoreError::Io(e)),
    }
}

fn write(path: &Path, credentials: &Credentials) -> Result<(), StoreError> {
    let bytes = serde_json::to_vec_pretty(credentials).map_err(StoreError::Corrupt)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(StoreError::Io)?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&tmp).map_err(StoreError::Io)?;
    #[cfg(unix)]
    {
        // The file may have existed with a wider mode.
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(StoreError::Io)?;
    }
    file.write_all(&bytes).map_err(StoreError::Io)?;
    file.sync_all().map_err(StoreError::Io)?;
    std::fs::rename(&tmp, path).map_err(StoreError::Io)
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StoreError::Io(std::io::Error::other(e)))?
}

impl TokenStore for FileStore {
    fn load(&self) -> BoxFuture<'_, Result<Credentials, StoreError>> {
        let path = self.path.clone();
        Box::pin(blocking(move || read(&path)))
    }

    fn save<'a>(&'a self, credentials: &'a Credentials) -> BoxFuture<'a, Result<(), StoreError>> {
        let path = self.path.clone();
        let credentials = credentials.clone();
        Box::pin(blocking(move || write(&path, &credentials)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::oauth::{ClientInfo, Secret, Tokens};

    fn dir() -> PathBuf {
        let mut p = std::env::temp_dir();
        p.push(format!(
            "sterna-store-{}",
            crate::client::oauth::pkce::random_string(8)
        ));
        p
    }

    #[tokio::test]
    async fn round_trip_with_owner_only_permissions() {
        let d = dir();
        let store = FileStore::new(d.join("nested/tokens.json"));
        assert_eq!(store.load().await.unwrap(), Credentials::default());
        let mut c = Credentials::default();
        c.set_client("https://as", ClientInfo::confidential("id", "s3cret"));
        c.set_tokens(
            "https://as",
            "https://rs/mcp",
            Tokens {
                access_token: Secret::new("at"),
                token_type: "Bearer".into(),
                expires_at: Some(1),
                scope: None,
                refresh_token: Some(Secret::new("rt")),
            },
        );
        store.save(&c).await.unwrap();
        assert_eq!(store.load().await.unwrap(), c);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(store.path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
            // Saving again keeps the mode even if someone widened it.
            std::fs::set_permissions(store.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
            store.save(&c).await.unwrap();
            let mode = std::fs::metadata(store.path())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::remove_dir_all(d).unwrap();
    }
}
