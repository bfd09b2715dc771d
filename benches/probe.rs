//! Probe cost (issue #6): the per-thread snapshot reader (one atomic load per probe) against
//! taking the registry's read lock on every probe, with 1 and 2 threads, over random KRK/KPK
//! positions. Run: `cargo bench --bench probe -- DIR` (DIR holding KRK and KPK tables).

#[path = "../tests/common/playout.rs"]
mod playout;

use fortress::chess::Position;
use fortress::egtb::probe::{Tablebases, Wdl};
use std::sync::Arc;
use std::time::Instant;

fn main() {
    let Some(dir) = std::env::args().skip(1).find(|a| a != "--bench") else {
        eprintln!("usage: cargo bench --bench probe -- DIR");
        return;
    };
    let tb = Tablebases::new();
    tb.set_path(vec![dir.into()]);
    let reg = tb.snapshot();
    let mut positions: Vec<Position> = playout::won_positions(&reg, "KRK", 0, 500, 7);
    positions.extend(playout::won_positions(&reg, "KPK", 0, 500, 9));
    const ROUNDS: usize = 4000;
    let run = |threads: usize, locked: bool| {
        let t = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..threads {
                let tb = Arc::clone(&tb);
                let positions = &positions;
                s.spawn(move || {
                    let mut reader = tb.reader();
                    let mut wins = 0u64;
                    for _ in 0..ROUNDS {
                        for p in positions {
                            let v = if locked {
                                tb.snapshot().probe(p)
                            } else {
                                reader.probe(p)
                            };
                            wins += (v.map(|v| v.wdl()) == Some(Wdl::Win)) as u64;
                        }
                    }
                    std::hint::black_box(wins);
                });
            }
        });
        let n = (threads * ROUNDS * positions.len()) as f64;
        n / t.elapsed().as_secs_f64() / 1e6
    };
    for threads in [1, 2] {
        println!(
            "{threads} thread(s): snapshot reader {:.1} M probes/s, read lock per probe {:.1} M probes/s",
            run(threads, false),
            run(threads, true)
        );
    }
}
