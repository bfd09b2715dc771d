//! `engine bench`: a fixed-depth search of every position of `bench.epd` with one thread and a
//! cleared table of fixed size. Its node count is deterministic: the engine's signature, which
//! changes exactly when the search or evaluation changes.

use crate::chess::Position;
use crate::eval::network::Network;
use crate::search::{Control, Engine, Limits, SyzygyUse};
use std::time::Instant;

/// The positions, compiled in so that the signature does not depend on the working directory.
pub const BENCH_EPD: &str = include_str!("../bench.epd");
pub const DEFAULT_DEPTH: u32 = 11;
const HASH_MB: usize = 16;

pub struct BenchResult {
    pub nodes: u64,
    pub millis: u64,
}

/// The positions of `bench.epd` (the text before any `;` comment on each line).
pub fn positions() -> Vec<Position> {
    BENCH_EPD
        .lines()
        .map(|l| l.split(';').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(|fen| Position::from_fen(fen).unwrap_or_else(|e| panic!("bench.epd: {}: {}", fen, e)))
        .collect()
}

/// Runs the bench; `progress` gets each position's index, FEN and node count.
pub fn run(depth: u32, progress: &mut dyn FnMut(usize, &str, u64)) -> BenchResult {
    run_with(depth, None, None, Network::built_in(), progress)
}

/// The bench with endgame tables probed in the search (`engine bench --dir DIRS`) and Syzygy
/// tables (`--syzygy DIRS`).
pub fn run_with(
    depth: u32,
    tables: Option<std::sync::Arc<crate::egtb::Tablebases>>,
    syzygy: Option<SyzygyUse>,
    network: std::sync::Arc<Network>,
    progress: &mut dyn FnMut(usize, &str, u64),
) -> BenchResult {
    let mut engine = Engine::new(HASH_MB);
    engine.network = network;
    engine.tables = tables;
    engine.syzygy = syzygy;
    let limits = Limits {
        depth: Some(depth),
        ..Default::default()
    };
    let start = Instant::now();
    let mut nodes = 0;
    for (i, pos) in positions().iter().enumerate() {
        engine.clear_hash();
        let control = Control::new(false);
        let result = engine.search(pos, &limits, &control, &mut |_| {});
        progress(i + 1, &pos.to_fen(), result.nodes);
        nodes += result.nodes;
    }
    BenchResult {
        nodes,
        millis: start.elapsed().as_millis() as u64,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn bench_positions_are_legal_and_varied() {
        let positions = super::positions();
        assert!(positions.len() >= 40);
        let small = positions.iter().filter(|p| p.men() <= 5).count();
        assert!(small >= 10, "only {} positions of five men or fewer", small);
    }

    #[test]
    fn bench_is_deterministic() {
        let a = super::run(5, &mut |_, _, _| {}).nodes;
        let b = super::run(5, &mut |_, _, _| {}).nodes;
        assert_eq!(a, b);
        assert!(a > 0);
    }
}
