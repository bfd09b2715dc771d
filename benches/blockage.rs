//! Benchmark of the blockage detector in the search (Tabibi, Felner and Netanyahu, Section 4):
//! on pawn endings with at least six pawns a side, nodes per second with the detector on and off,
//! how many roots are blockages, how many blockages the search finds (the paper: 446,824), and how
//! many positions score 0.00 at a fixed depth with and without it (the paper: 895 against 569 of
//! 3,118 drawn games' positions).
//!
//! The positions are the engine's own: random openings from the start position, stripped to
//! kings and pawns, then played on by the engine itself for a few moves.
//! Run: `cargo bench --bench blockage` (env BLOCKAGE_DEPTH, default 12; BLOCKAGE_POSITIONS, default
//! 240; BLOCKAGE_MODES, default `off,on,off,on`: a noisy machine is better measured by counting
//! instructions of one mode at a time under `valgrind --tool=callgrind`).

use fortress::chess::{legal_moves, Color, PieceType, Position};
use fortress::recognize::{blockage, Men};
use fortress::search::{Control, Engine, Limits};
use std::collections::HashSet;
use std::time::Instant;

fn pawns(pos: &Position, c: Color) -> u32 {
    pos.pieces(c, PieceType::Pawn).count()
}

fn strip_to_pawns(pos: &Position) -> Option<Position> {
    let fen = pos.to_fen();
    let mut fields = fen.split(' ');
    let placement: String = fields
        .next()?
        .chars()
        .map(|c| if "nbrqNBRQ".contains(c) { '1' } else { c })
        .collect();
    // Re-compress runs of empty squares.
    let mut squashed = String::new();
    for rank in placement.split('/') {
        let mut run = 0;
        for c in rank.chars() {
            if let Some(d) = c.to_digit(10) {
                run += d;
            } else {
                if run > 0 {
                    squashed.push_str(&run.to_string());
                    run = 0;
                }
                squashed.push(c);
            }
        }
        if run > 0 {
            squashed.push_str(&run.to_string());
        }
        squashed.push('/');
    }
    squashed.pop();
    let stm = fields.next()?;
    Position::from_fen(&format!("{} {} - - 0 1", squashed, stm)).ok()
}

fn positions(count: usize) -> Vec<Position> {
    let mut rng = fastrand::Rng::with_seed(0x5EED_B10C);
    let mut engine = Engine::new(8);
    engine.blockage_detection = false;
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    while out.len() < count {
        let mut pos = Position::startpos();
        for _ in 0..rng.usize(6..14) {
            let moves = legal_moves(&pos);
            if moves.is_empty() {
                break;
            }
            pos.make_move(moves.as_slice()[rng.usize(..moves.len())]);
        }
        let Some(mut pos) = strip_to_pawns(&pos) else {
            continue;
        };
        // The engine plays the pawn ending on for a few moves, to get contact between the pawns.
        let plies = rng.usize(4..28);
        for _ in 0..plies {
            let limits = Limits {
                depth: Some(5),
                ..Default::default()
            };
            let r = engine.search(&pos, &limits, &Control::new(false), &mut |_| {});
            let Some(m) = r.best else { break };
            pos.make_move(m);
        }
        if pawns(&pos, Color::White) < 6
            || pawns(&pos, Color::Black) < 6
            || legal_moves(&pos).is_empty()
        {
            continue;
        }
        if seen.insert(pos.key()) {
            out.push(Position::from_fen(&pos.to_fen()).expect("a legal position"));
        }
    }
    out
}

fn main() {
    let depth: u32 = std::env::var("BLOCKAGE_DEPTH")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let count: usize = std::env::var("BLOCKAGE_POSITIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(240);
    let t = Instant::now();
    let set = positions(count);
    println!(
        "{} pawn endings with >= 6 pawns a side, made in {:.1} s",
        set.len(),
        t.elapsed().as_secs_f64()
    );
    let roots_blocked = set
        .iter()
        .filter(|p| {
            let m = Men::from(*p);
            blockage::cannot_win(&m, Color::White) || blockage::cannot_win(&m, Color::Black)
        })
        .count();
    println!(
        "roots where the detector finds a blockage for either side: {}",
        roots_blocked
    );
    let threads = 1;
    let modes = std::env::var("BLOCKAGE_MODES").unwrap_or_else(|_| "off,on,off,on".into());
    for on in modes.split(',').map(|m| m.trim() == "on") {
        let mut engine = Engine::new(16);
        engine.blockage_detection = on;
        let (mut nodes, mut zero, mut blockages) = (0u64, 0usize, 0u64);
        let start = Instant::now();
        for pos in &set {
            engine.clear_hash();
            let limits = Limits {
                depth: Some(depth),
                ..Default::default()
            };
            let r = engine.search(pos, &limits, &Control::new(false), &mut |_| {});
            nodes += r.nodes;
            blockages += r.blockages;
            zero += (r.score == 0) as usize;
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "BlockageDetection {:5}: depth {}, {} threads: {} nodes in {:.2} s = {:.0} nodes/s; blockages found in the search: {}; scored 0.00: {} of {}",
            on,
            depth,
            threads,
            nodes,
            secs,
            nodes as f64 / secs,
            blockages,
            zero,
            set.len()
        );
    }
}
