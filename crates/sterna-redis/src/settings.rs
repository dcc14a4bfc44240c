//! What a fleet needs of its Redis, checked at startup ([`Redis::check_settings`]): the
//! commands the stores and the bus send (an ACL user without one of them is refused with
//! the list of what is missing), and persistence (a warning when a restart would forget
//! consumed states). The eviction policy is the replay store's own check
//! ([`RedisReplayStore`](crate::RedisReplayStore)).

use super::Redis;
use std::fmt;

/// Commands sent as such: `(command, arguments after the key)`. A probe key of the
/// prefix's receives them (a string: the hash, sorted set and stream commands fail on
/// its type, after the ACL check has passed).
const DIRECT: &[(&str, &[&str])] = &[
    ("SET", &["1", "PX", "10000"]),
    ("GET", &[]),
    ("GETEX", &["PX", "10000"]),
    ("EXISTS", &[]),
    ("PEXPIRE", &["10000"]),
    ("HGET", &["v"]),
    ("HMGET", &["v", "d"]),
    ("ZREM", &["m"]),
    ("XADD", &["MAXLEN", "1", "*", "f", "v"]),
    ("XRANGE", &["-", "+", "COUNT", "1"]),
    ("EVAL", &[]),
];

/// Commands the scripts run (`redis.call`), tried with `redis.pcall` in one script:
/// the names of those refused.
const IN_SCRIPTS: &str = r"
local refused = {}
local function try(name, ...)
  local r = redis.pcall(name, ...)
  if type(r) == 'table' and r.err and (string.find(r.err, 'NOPERM') or string.find(r.err, 'permission') or string.find(r.err, 'can.t run')) then
    table.insert(refused, name)
  end
end
try('TIME')
try('EXISTS', KEYS[1])
try('GET', KEYS[1])
try('PTTL', KEYS[1])
try('PEXPIRE', KEYS[1], 10000)
try('HGET', KEYS[1], 'v')
try('HSET', KEYS[1], 'v', 1)
try('ZSCORE', KEYS[1], 'm')
try('ZCARD', KEYS[1])
try('ZADD', KEYS[1], 0, 'm')
try('ZREM', KEYS[1], 'm')
try('ZREMRANGEBYSCORE', KEYS[1], '-inf', 0)
if ARGV[1] ~= '' then try('PUBLISH', ARGV[1], '') end
try('DEL', KEYS[1])
return refused";

/// What [`Redis::check_settings`] refuses.
#[derive(Debug)]
pub enum SettingsError {
    /// Redis could not be asked.
    Redis(redis::RedisError),
    /// The user (ACL) may not run these commands, which the fleet needs.
    Missing(Vec<String>),
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Redis(e) => write!(f, "the Redis settings could not be checked: {e}"),
            Self::Missing(names) => write!(
                f,
                "the Redis user may not run {}, which the fleet needs (add them to its ACL: \
                 see the deployment guide's command list)",
                names.join(", ")
            ),
        }
    }
}

impl std::error::Error for SettingsError {}

impl From<redis::RedisError> for SettingsError {
    fn from(e: redis::RedisError) -> Self {
        Self::Redis(e)
    }
}

fn refused(e: &redis::RedisError) -> bool {
    e.code() == Some("NOPERM") || e.to_string().contains("NOPERM")
}

impl Redis {
    /// Checks what the fleet needs of this Redis (each primary of a cluster): `Err` when
    /// the user may not run a command the stores or the bus send (`NOPERM`), else the
    /// warnings to log (persistence off; `WAIT` refused, which
    /// [`replicas`](crate::RedisReplayStore::replicas) needs; neither `CONFIG` nor
    /// `INFO` allowed, so the eviction policy cannot be read).
    pub async fn check_settings(&self) -> Result<Vec<String>, SettingsError> {
        let probe = self.key("probe", "settings");
        let channel = self.key("probe", "channel");
        let mut conn = self.conn.clone();
        let mut missing = Vec::new();
        for (name, args) in DIRECT {
            let mut cmd = redis::cmd(name);
            if *name == "EVAL" {
                cmd.arg("return 1").arg(1).arg(&probe);
            } else {
                cmd.arg(&probe).arg(*args);
            }
            match cmd.query_async::<redis::Value>(&mut conn).await {
                Err(e) if refused(&e) => missing.push((*name).to_owned()),
                Err(e) if e.is_io_error() || e.is_timeout() => return Err(e.into()),
                _ => {}
            }
        }
        let publish = if self.is_cluster() {
            "SPUBLISH"
        } else {
            "PUBLISH"
        };
        match redis::cmd(publish)
            .arg(&channel)
            .arg("")
            .query_async::<redis::Value>(&mut conn)
            .await
        {
            Err(e) if refused(&e) => missing.push(publish.to_owned()),
            Err(e) if e.is_io_error() || e.is_timeout() => return Err(e.into()),
            _ => {}
        }
        if !missing.iter().any(|m| m == "EVAL") {
            // The answer script publishes from inside (one Redis, not a cluster).
            let inside = if self.is_cluster() { "" } else { &channel };
            let names: Vec<String> = redis::cmd("EVAL")
                .arg(IN_SCRIPTS)
                .arg(1)
                .arg(&probe)
                .arg(inside)
                .query_async(&mut conn)
                .await?;
            for n in names {
                if !missing.contains(&n) {
                    missing.push(n);
                }
            }
        }
        let _ = redis::cmd("DEL")
            .arg(&probe)
            .query_async::<redis::Value>(&mut conn)
            .await;
        if !missing.is_empty() {
            return Err(SettingsError::Missing(missing));
        }
        let mut warnings = Vec::new();
        if let Err(e) = redis::cmd("WAIT")
            .arg(0)
            .arg(0)
            .query_async::<redis::Value>(&mut conn)
            .await
            && refused(&e)
        {
            warnings.push(
                "the Redis user may not run WAIT: RedisReplayStore::replicas(n) would refuse \
                 every single-use call"
                    .to_owned(),
            );
        }
        warnings.extend(self.persistence().await);
        Ok(warnings)
    }

    /// A warning per primary that would forget consumed states on a restart.
    async fn persistence(&self) -> Vec<String> {
        let forgets = "a restart forgets the single-use states consumed since";
        let aof: Result<Vec<Vec<String>>, _> = self
            .on_every_primary(redis::cmd("CONFIG").arg("GET").arg("appendonly"))
            .await;
        let save: Result<Vec<Vec<String>>, _> = self
            .on_every_primary(redis::cmd("CONFIG").arg("GET").arg("save"))
            .await;
        if let (Ok(aof), Ok(save)) = (aof, save) {
            let no_aof = aof
                .iter()
                .any(|p| p.get(1).is_some_and(|v| v.eq_ignore_ascii_case("no")));
            let no_save = save.iter().any(|p| p.get(1).is_none_or(|v| v.is_empty()));
            return match (no_aof, no_save) {
                (false, _) => Vec::new(),
                (true, true) => vec![format!(
                    "Redis persistence is off (appendonly no, no save points): {forgets} it \
                     started; set appendonly yes"
                )],
                (true, false) => vec![format!(
                    "Redis persists by snapshots only (appendonly no): {forgets} the last \
                     snapshot; set appendonly yes"
                )],
            };
        }
        let info: Result<Vec<String>, _> = self
            .on_every_primary(redis::cmd("INFO").arg("persistence"))
            .await;
        match info {
            Ok(texts) if texts.iter().any(|t| t.contains("aof_enabled:0")) => vec![format!(
                "Redis runs without the append-only file (INFO persistence: aof_enabled:0): \
                 {forgets} the last snapshot, if any; set appendonly yes"
            )],
            Ok(_) => Vec::new(),
            Err(_) => vec![
                "Redis persistence cannot be read (CONFIG and INFO refused): make sure the \
                 append-only file is on (appendonly yes)"
                    .to_owned(),
            ],
        }
    }
}
