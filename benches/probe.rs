//! Probe cost over random won positions of the endgames named (default KRK KPK KQKR KRKP; their
//! tables must be in DIR): with the block cache holding every block the probes meet (cached),
//! and with a cache of one block, so that nearly every probe decompresses a block (uncached).
//! Run it on two directories of the same tables in two file formats to compare the formats:
//! `cargo bench --bench probe -- DIR [ENDGAME ...]`.

#[path = "../tests/common/bench_args.rs"]
mod bench_args;
#[path = "../tests/common/playout.rs"]
mod playout;

use fortress::chess::Position;
use fortress::egtb::file::BLOCK_SIZE;
use fortress::egtb::probe::{Tablebases, Wdl};
use std::sync::Arc;
use std::time::Instant;

fn main() {
    let (dir, mut names) = bench_args::dir_and_endgames("probe");
    if names.is_empty() {
        names = ["KRK", "KPK", "KQKR", "KRKP"].map(String::from).to_vec();
    }
    let tb = Tablebases::new();
    tb.set_path(vec![dir]);
    let reg = tb.snapshot();
    let mut positions: Vec<Position> = Vec::new();
    for (k, name) in names.iter().enumerate() {
        positions.extend(playout::won_positions(&reg, name, 0, 500, 7 + k as u64));
    }
    let run = |threads: usize, rounds: usize| {
        let t = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..threads {
                let tb = Arc::clone(&tb);
                let positions = &positions;
                s.spawn(move || {
                    let mut reader = tb.reader();
                    let mut wins = 0u64;
                    for _ in 0..rounds {
                        for p in positions {
                            let v = reader.probe(p);
                            wins += (v.map(|v| v.wdl()) == Some(Wdl::Win)) as u64;
                        }
                    }
                    std::hint::black_box(wins);
                });
            }
        });
        let n = (threads * rounds * positions.len()) as f64;
        n / t.elapsed().as_secs_f64() / 1e6
    };
    println!("{} positions of {}", positions.len(), names.join(" "));
    // Room for every block the positions meet (a direct-mapped cache of the default 64 MB
    // would lose some of them to collisions).
    fortress::egtb::set_cache_bytes(1 << 30);
    run(1, 1); // fills the cache
    for threads in [1, 2] {
        println!(
            "{threads} thread(s), cached: {:.2} M probes/s",
            run(threads, 1000)
        );
    }
    fortress::egtb::set_cache_bytes(BLOCK_SIZE);
    println!("1 thread, uncached: {:.3} M probes/s", run(1, 20));
}
