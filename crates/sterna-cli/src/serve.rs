//! `sterna serve`: the demo server on stdio, or over Streamable HTTP — alone, or as one
//! replica of a fleet sharing Redis (`--redis`) behind a load balancer.

use crate::cli::ServeArgs;
use crate::demo_server;
use crate::exit::CliError;
use std::io::Write;
use std::sync::Arc;
use sterna::server::http::{HttpConfig, HttpServer, McpService, SessionConfig};
use sterna::server::skills::Skills;
use sterna::server::state::{ReplayStore, StateKeys};
use tracing::Instrument;

/// The response header naming the replica that answered.
pub(crate) const REPLICA_HEADER: &str = "x-sterna-replica";

/// Keys from `STERNA_STATE_KEYS`, or an ephemeral key (logged by the server builder).
pub(crate) fn keys_from_env() -> Result<StateKeys, CliError> {
    match std::env::var("STERNA_STATE_KEYS") {
        Ok(list) => StateKeys::from_base64_list(&list)
            .map_err(|e| CliError::Usage(format!("STERNA_STATE_KEYS: {e}"))),
        Err(_) => Ok(StateKeys::ephemeral()),
    }
}

/// Runs the demo server until end of input (stdio) or Ctrl-C / SIGTERM (HTTP).
pub(crate) async fn run(args: ServeArgs) -> Result<(), CliError> {
    let keys = keys_from_env()?;
    let skills = skills(&args)?;
    let Some(addr) = args.http else {
        let server = demo_server::build(keys, None, None, None, skills);
        return sterna::server::transport::serve_stdio(server)
            .await
            .map_err(|e| CliError::Local(format!("stdio: {e}")));
    };
    let replica = args.replica.clone().unwrap_or_default();
    let span = tracing::info_span!("serve", replica = %replica);
    async move {
        // Before the server is built: sterna registers its metrics then.
        let metrics = metrics_route(args.metrics)?;
        let http = endpoint(&args, keys, skills).await?;
        let http = match metrics {
            Some(render) => http.text_route("/metrics", metrics_type(), render),
            None => http,
        };
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| CliError::Local(format!("bind {addr}: {e}")))?;
        let local = listener
            .local_addr()
            .map_err(|e| CliError::Local(e.to_string()))?;
        tracing::info!(%local, redis = args.redis.is_some(), "listening");
        println!("listening on http://{local}/mcp");
        let _ = std::io::stdout().flush();
        http.serve_with_shutdown(listener, shutdown())
            .await
            .map_err(|e| CliError::Local(format!("http: {e}")))
    }
    .instrument(span)
    .await
}

/// The running tasks' lease asked for.
fn lease(args: &ServeArgs) -> Result<std::time::Duration, CliError> {
    std::time::Duration::try_from_secs_f64(args.task_lease)
        .ok()
        .filter(|d| *d >= std::time::Duration::from_millis(100))
        .ok_or_else(|| {
            let msg = format!("--task-lease {}: at least 0.1 (seconds)", args.task_lease);
            CliError::Usage(msg)
        })
}

/// The Prometheus recorder, installed, and what renders its metrics (with `--metrics`).
#[cfg(feature = "prometheus")]
fn metrics_route(
    on: bool,
) -> Result<Option<impl Fn() -> String + Send + Sync + 'static>, CliError> {
    use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
    if !on {
        return Ok(None);
    }
    let seconds = [
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    ];
    let buckets = |b: PrometheusBuilder, name: &str, values: &[f64]| {
        b.set_buckets_for_metric(Matcher::Full(name.to_owned()), values)
    };
    let m = |e: metrics_exporter_prometheus::BuildError| CliError::Local(format!("metrics: {e}"));
    let builder = PrometheusBuilder::new();
    let builder = buckets(builder, sterna::server::metrics::STORE_SECONDS, &seconds).map_err(m)?;
    let builder = buckets(builder, sterna::server::metrics::BUS_LAG, &seconds).map_err(m)?;
    let rounds = [1.0, 2.0, 3.0, 4.0, 5.0, 8.0, 10.0];
    let builder = buckets(builder, sterna::server::metrics::ROUNDS, &rounds).map_err(m)?;
    let bytes = [256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262_144.0];
    let builder = buckets(builder, sterna::server::metrics::STATE_BYTES, &bytes).map_err(m)?;
    let handle = builder.install_recorder().map_err(m)?;
    sterna::server::metrics::describe();
    Ok(Some(move || {
        handle.run_upkeep();
        handle.render()
    }))
}

/// Built without the `prometheus` feature: `--metrics` is refused.
#[cfg(not(feature = "prometheus"))]
fn metrics_route(on: bool) -> Result<Option<fn() -> String>, CliError> {
    if on {
        return Err(CliError::Usage(
            "--metrics: this sterna was built without the prometheus feature".to_owned(),
        ));
    }
    Ok(None)
}

/// The content type of Prometheus's text format.
fn metrics_type() -> http::HeaderValue {
    http::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8")
}

/// The HTTP endpoint: alone, or a replica of a fleet on Redis.
async fn endpoint(
    args: &ServeArgs,
    keys: StateKeys,
    skills: Option<Skills>,
) -> Result<HttpServer, CliError> {
    let lease = Some(lease(args)?);
    let served = match &args.redis {
        None => {
            let replay = sterna::server::state::MemoryReplayStore::default()
                .per_principal(args.single_use_share);
            let replay: Arc<dyn ReplayStore> = Arc::new(replay);
            HttpServer::new(demo_server::build(keys, Some(replay), None, lease, skills))
        }
        Some(url) => {
            if keys.is_ephemeral() {
                tracing::warn!(
                    "a fleet replica with an ephemeral key: no other replica can open its \
                     states; set STERNA_STATE_KEYS to the fleet's key list"
                );
            }
            let connected = match &args.redis_ca {
                None => sterna_redis::Redis::connect(url).await,
                Some(path) => {
                    let pem = std::fs::read(path).map_err(|e| {
                        CliError::Local(format!("--redis-ca {}: {e}", path.display()))
                    })?;
                    sterna_redis::Redis::connect_with_root_ca(url, &pem).await
                }
            };
            let redis = connected
                .map_err(|e| CliError::Local(format!("redis {url}: {e}")))?
                .with_prefix(args.redis_prefix.clone());
            // A user without a command the fleet needs is refused here, not mid-request.
            for warning in redis
                .check_settings()
                .await
                .map_err(|e| CliError::Local(format!("redis {url}: {e}")))?
            {
                tracing::warn!("{warning}");
            }
            let server = demo_server::build(
                keys,
                Some(Arc::new(
                    redis
                        .replay_store()
                        .replicas(args.redis_replicas)
                        .per_principal(args.single_use_share),
                )),
                Some(Arc::new(redis.task_store())),
                lease,
                skills,
            );
            let bus = sterna_redis::RedisBus::new(&redis);
            let sessions = SessionConfig::new()
                .store(Arc::new(redis.session_store()))
                .streams(Arc::new(redis.stream_store()))
                .bus(bus.clone());
            let service = McpService::new(server.clone(), HttpConfig::new().sessions(sessions));
            // Changes made here reach the fleet; the fleet's changes and the answers
            // meant for requests running here arrive through the bus.
            bus.attach(&server, Some(service.clone()));
            HttpServer::from_service(service)
        }
    };
    let served = match &args.trusted_proxies {
        Some(proxies) => {
            let header = args.forwarded_header.unwrap_or_default();
            served.trusted_proxies(proxies.clone().reading(header))
        }
        None => served,
    };
    Ok(match &args.replica {
        None => served,
        Some(name) => {
            let value = http::HeaderValue::from_str(name)
                .map_err(|_| CliError::Usage(format!("--replica {name:?}: not a header value")))?;
            served.response_header(http::HeaderName::from_static(REPLICA_HEADER), value)
        }
    })
}

/// Ctrl-C or SIGTERM.
async fn shutdown() {
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
}

/// The skills folder of `--skills`, loaded (an error names the file at fault); on Unix,
/// SIGHUP re-reads it.
fn skills(args: &ServeArgs) -> Result<Option<Skills>, CliError> {
    let Some(dir) = &args.skills else {
        return Ok(None);
    };
    let skills = Skills::from_dir(dir).map_err(|e| CliError::Local(format!("--skills: {e}")))?;
    #[cfg(unix)]
    {
        let again = skills.clone();
        let mut hup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
            .map_err(|e| CliError::Local(format!("SIGHUP: {e}")))?;
        tokio::spawn(async move {
            while hup.recv().await.is_some() {
                match again.reload().await {
                    Ok(changed) => tracing::info!(changed, "skills reloaded on SIGHUP"),
                    Err(e) => tracing::error!(
                        "skills reload failed (still serving the previous ones): {e}"
                    ),
                }
            }
        });
    }
    Ok(Some(skills))
}
