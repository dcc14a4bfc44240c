//! requestState sealing: seal and open of a typical state (the seed's first round).

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use sterna::server::state::__bench::Typical;

fn state(c: &mut Criterion) {
    let t = Typical::new();
    let token = t.seal();
    println!("typical requestState: {} bytes", token.len());
    assert!(t.open(&token));
    c.bench_function("state/seal", |b| b.iter(|| black_box(t.seal())));
    c.bench_function("state/open", |b| {
        b.iter(|| black_box(t.open(black_box(&token))))
    });
}

criterion_group!(benches, state);
criterion_main!(benches);
