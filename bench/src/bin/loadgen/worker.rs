//! A load generator's worker: its client (a keep-alive connection, or a 2025-11-25
//! session), the operations it runs back to back until the end of the run, and its tally.

use super::{Conn, Mode, Opts, connect, echo_op, legacy, mrtr_op};
use std::time::{Duration, Instant};

pub(crate) struct Tally {
    pub(crate) ops: u64,
    pub(crate) errors: u64,
    pub(crate) latencies_us: Vec<u32>,
    pub(crate) first_error: Option<String>,
}

/// A worker's client: a keep-alive connection, or a 2025-11-25 session.
enum Client {
    Plain(Conn),
    Legacy(legacy::Session),
}

async fn open(o: &Opts) -> Result<Client, String> {
    match o.mode {
        Mode::Legacy | Mode::LegacyEcho => legacy::open(o).await.map(Client::Legacy),
        _ => connect(o).await.map(Client::Plain),
    }
}

async fn operation(client: &mut Client, o: &Opts, id: u64) -> Result<(), String> {
    match (client, o.mode) {
        (Client::Plain(c), Mode::Echo) => echo_op(c, o, id).await,
        (Client::Plain(c), _) => mrtr_op(c, o, id).await,
        (Client::Legacy(s), mode) => {
            let op = async {
                if mode == Mode::Legacy {
                    legacy::push_op(s, o, id).await
                } else {
                    legacy::echo_op(s, o, id).await
                }
            };
            tokio::time::timeout(legacy::OP_TIMEOUT, op)
                .await
                .unwrap_or_else(|_| Err(format!("no answer within {:?}", legacy::OP_TIMEOUT)))
        }
    }
}

pub(crate) async fn worker(
    o: Opts,
    index: usize,
    measure_from: Instant,
    stop_at: Instant,
) -> Tally {
    let mut t = Tally {
        ops: 0,
        errors: 0,
        latencies_us: Vec::with_capacity(1 << 16),
        first_error: None,
    };
    let mut id = (index as u64) << 40;
    let mut client: Option<Client> = None;
    while Instant::now() < stop_at {
        if client.is_none() {
            match open(&o).await {
                Ok(c) => client = Some(c),
                Err(e) => {
                    t.errors += u64::from(Instant::now() >= measure_from);
                    t.first_error.get_or_insert(e);
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            }
        }
        let c = client.as_mut().expect("connected");
        let started = Instant::now();
        id += 2;
        let outcome = operation(c, &o, id).await;
        let done = Instant::now();
        let counted = started >= measure_from && done <= stop_at;
        match outcome {
            Ok(()) if counted => {
                t.ops += 1;
                t.latencies_us.push(
                    done.duration_since(started)
                        .as_micros()
                        .min(u128::from(u32::MAX)) as u32,
                );
            }
            Ok(()) => {}
            Err(e) => {
                if counted {
                    t.errors += 1;
                    t.first_error.get_or_insert(e);
                }
                // A connection or session left mid-operation is not reused.
                client = None;
            }
        }
    }
    if let Some(Client::Legacy(s)) = client {
        legacy::close(s, &o).await;
    }
    t
}
