//! Speed of the Nalimov index: decoding whole ranges (as the retrograde generator does) and
//! indexing the positions so found (as the probe does), in positions per second on one thread,
//! and the memory its lookup tables take. Run: `cargo bench --bench index`.

use fortress::egtb::index::shared_table_bytes;
use fortress::egtb::{EndgameIndex, Half, Material};
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let threads = 1;
    println!(
        "Nalimov index speed, {threads} thread, {} logical CPUs on this machine",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "{:<8} {:>5} {:>14} {:>12} {:>14} {:>14} {:>10}",
        "endgame", "half", "entries", "broken %", "decode/s", "index/s", "own KiB"
    );
    for name in [
        "KQK", "KPK", "KQKR", "KRPK", "KPKP", "KQRKR", "KRPKP", "KQPKQ", "KBNNK", "KPPKP",
    ] {
        let m = Material::parse(name).unwrap();
        let t0 = Instant::now();
        let idx = EndgameIndex::new(&m);
        let build = t0.elapsed();
        for &half in idx.stored_halves() {
            let size = idx.size(half);
            // A contiguous slice from the middle of the range, at most 4M entries.
            let n = size.min(4_000_000);
            let lo = (size - n) / 2;
            let mut found = Vec::with_capacity(n as usize);
            let t = Instant::now();
            let mut broken = 0u64;
            for i in lo..lo + n {
                match idx.decode(half, black_box(i)) {
                    Some(p) => found.push(p),
                    None => broken += 1,
                }
            }
            let dt = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let mut sum = 0u64;
            for p in &found {
                sum = sum.wrapping_add(idx.index(black_box(p)).map_or(0, |x| x.1));
            }
            let it = t.elapsed().as_secs_f64();
            black_box(sum);
            println!(
                "{:<8} {:>5} {:>14} {:>11.1}% {:>12.2}M {:>12.2}M {:>10.1}   (built in {:.1} ms)",
                name,
                half.name(),
                size,
                100.0 * broken as f64 / n as f64,
                n as f64 / dt / 1e6,
                found.len() as f64 / it / 1e6,
                idx.table_bytes() as f64 / 1024.0,
                build.as_secs_f64() * 1e3,
            );
        }
    }
    println!(
        "shared lookup tables (all endgames): {:.1} KiB",
        shared_table_bytes() as f64 / 1024.0
    );
    let _ = Half::Wtm;
}
