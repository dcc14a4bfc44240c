//! A token store in a JSON file, readable by its owner only (mode `0600` on Unix),
//! replaced atomically: written to a fresh file with an unpredictable name (created
//! exclusively, never through a symlink), synced, then renamed over the store.

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
    let (tmp, file) = create_temporary(path)?;
    let result = fill(file, &bytes).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        // Best effort: the write already failed, and the name is ours alone.
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(StoreError::Io)
}

/// How many fresh names to try before giving up (each has 96 random bits, so a clash
/// means someone is racing us; trying a few times is enough).
const TEMPORARY_ATTEMPTS: usize = 4;

/// Creates a new file next to `path` under an unpredictable name (`<file>.<random>.tmp`),
/// exclusively (an existing file or symlink of that name is an error, never followed or
/// truncated) and with mode `0600` from the start.
fn create_temporary(path: &Path) -> Result<(PathBuf, std::fs::File), StoreError> {
    let mut last = None;
    for _ in 0..TEMPORARY_ATTEMPTS {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".{}.tmp", super::pkce::random_string(12)));
        let tmp = PathBuf::from(name);
        match open_exclusive(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(StoreError::Io(e)),
        }
    }
    Err(StoreError::Io(last.unwrap_or_else(|| {
        std::io::Error::from(std::io::ErrorKind::AlreadyExists)
    })))
}

/// `O_CREAT | O_EXCL` (never follows a symlink), plus `O_NOFOLLOW` and mode `0600` on
/// Unix.
fn open_exclusive(tmp: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(nix::libc::O_NOFOLLOW);
    }
    options.open(tmp)
}

/// Writes `bytes` and flushes them to the disk before the rename makes them visible.
fn fill(mut file: std::fs::File, bytes: &[u8]) -> std::io::Result<()> {
    file.write_all(bytes)?;
    file.sync_all()
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
    use crate::oauth::{ClientInfo, Secret, Tokens};

    fn dir() -> PathBuf {
        let mut p = std::env::temp_dir();
        p.push(format!(
            "sterna-store-{}",
            crate::oauth::pkce::random_string(8)
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

    fn sample() -> Credentials {
        let mut c = Credentials::default();
        c.set_tokens(
            "https://as",
            "https://rs/mcp",
            Tokens {
                access_token: Secret::new("at"),
                token_type: "Bearer".into(),
                expires_at: None,
                scope: None,
                refresh_token: Some(Secret::new("rt")),
            },
        );
        c
    }

    /// A symlink planted where a temporary file could be expected (the old fixed
    /// `<file>.tmp` and other guessable names) is neither followed nor replaced: the victim
    /// keeps its content and mode, and the store holds the tokens.
    #[cfg(unix)]
    #[tokio::test]
    async fn planted_symlinks_are_not_followed() {
        use std::os::unix::fs::PermissionsExt;
        let d = dir();
        std::fs::create_dir_all(&d).unwrap();
        let victim = d.join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
        let path = d.join("tokens.json");
        let planted = [
            "tokens.json.tmp",
            ".tokens.json.tmp",
            "tokens.json~",
            "tokens.tmp",
        ];
        for name in planted {
            std::os::unix::fs::symlink(&victim, d.join(name)).unwrap();
        }
        let store = FileStore::new(&path);
        let c = sample();
        store.save(&c).await.unwrap();
        store.save(&c).await.unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        let mode = std::fs::metadata(&victim).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644);
        assert!(
            !std::fs::symlink_metadata(&path)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(store.load().await.unwrap(), c);
        // No temporary file is left behind; the planted links are untouched.
        let mut names: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        let mut expected: Vec<String> = planted.iter().map(|s| s.to_string()).collect();
        expected.extend(["tokens.json".to_string(), "victim".to_string()]);
        expected.sort();
        assert_eq!(names, expected);
        std::fs::remove_dir_all(d).unwrap();
    }
}
