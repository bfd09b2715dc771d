//! Probe cost over random won positions of the endgames named (default KRK KPK KQKR KRKP; their
//! tables and their sub-endgames' must be in DIR), for a probe of all three values and for the
//! search's verdict: with the block cache holding every block the probes meet (cached), and with
//! a cache of one block, so that nearly every probe decompresses a block (uncached).
//! Run it on two directories of the same tables in two file formats to compare the formats:
//! `cargo bench --bench probe -- DIR [ENDGAME ...]`.

#[path = "../tests/common/bench_args.rs"]
mod bench_args;
#[path = "../tests/common/playout.rs"]
mod playout;

use fortress::chess::Position;
use fortress::egtb::format::BLOCK_SIZE;
use fortress::egtb::play::probe::{TableVerdict, Tablebases, Wdl};
use std::sync::Arc;
use std::time::Instant;

/// What a round reads of each position.
#[derive(Clone, Copy)]
enum Read {
    /// DTM, DTZ and DTZ50 (`engine probe`, the root's strategy).
    Probe,
    /// The search's verdict: the result, DTZ50 where the counter is not fresh, DTM.
    Verdict,
}

fn main() {
    let (dir, mut names) = bench_args::dir_and_endgames("probe");
    if names.is_empty() {
        names = ["KRK", "KPK", "KQKR", "KRKP"].map(String::from).to_vec();
    }
    let tb = Tablebases::new();
    tb.set_path(vec![dir]);
    let reg = tb.snapshot();
    // Won positions of each side to move, with a fresh counter and with 20 plies on it (the
    // search's verdict reads DTZ50 only then).
    let positions = |h: u16| {
        let mut out: Vec<Position> = Vec::new();
        for (k, name) in names.iter().enumerate() {
            out.extend(playout::won_positions(&reg, name, h, 500, 7 + k as u64));
        }
        out
    };
    let (fresh, counted) = (positions(0), positions(20));
    let run = |threads: usize, rounds: usize, read: Read, positions: &[Position]| {
        let t = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..threads {
                let tb = Arc::clone(&tb);
                s.spawn(move || {
                    let mut reader = tb.reader();
                    let mut wins = 0u64;
                    for _ in 0..rounds {
                        for p in positions {
                            wins += match read {
                                Read::Probe => reader.probe(p).map(|v| v.wdl()) == Some(Wdl::Win),
                                Read::Verdict => {
                                    matches!(reader.verdict(p), Some(TableVerdict::Win(_)))
                                }
                            } as u64;
                        }
                    }
                    std::hint::black_box(wins);
                });
            }
        });
        let n = (threads * rounds * positions.len()) as f64;
        n / t.elapsed().as_secs_f64() / 1e6
    };
    println!(
        "{} and {} positions of {} (counters 0 and 20)",
        fresh.len(),
        counted.len(),
        names.join(" ")
    );
    let kinds = [
        ("probe", Read::Probe, &fresh),
        ("verdict, counter 0", Read::Verdict, &fresh),
        ("verdict, counter 20", Read::Verdict, &counted),
    ];
    // Room for every block the positions meet (a direct-mapped cache of the default 64 MB
    // would lose some of them to collisions).
    fortress::egtb::set_cache_bytes(1 << 30);
    for (_, read, p) in kinds {
        run(1, 1, read, p); // fills the cache
    }
    for threads in [1, 2] {
        for (what, read, p) in kinds {
            println!(
                "{threads} thread(s), cached, {what}: {:.2} M/s",
                run(threads, 1000, read, p)
            );
        }
    }
    fortress::egtb::set_cache_bytes(BLOCK_SIZE);
    for (what, read, p) in kinds {
        println!("1 thread, uncached, {what}: {:.3} M/s", run(1, 20, read, p));
    }
}
