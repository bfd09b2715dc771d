//! `engine datagen`: games of the engine against itself at a fixed node count, for tuning the
//! evaluation (Texel's method). Each game starts from a book position plus a few random plies;
//! every position where the side to move is not in check and the search's move is quiet is kept,
//! labelled afterwards with the game's result, one `FEN | result` line each (result from White's
//! side: 1, 0.5 or 0).

use crate::chess::{legal_moves, Color, Position};
use crate::search::{Control, Engine, Limits, MATE_BOUND};
use fastrand::Rng;
use std::io::{BufRead, Write};

pub struct DatagenArgs {
    pub games: usize,
    pub nodes: u64,
    pub random_plies: usize,
    pub seed: u64,
}

/// Plays `args.games` games from `openings` (FENs) and writes the labelled positions to `out`.
pub fn run(openings: &[Position], args: &DatagenArgs, out: &mut dyn Write) -> std::io::Result<()> {
    // Seeded, so the same arguments give the same games.
    let mut rng = Rng::with_seed(args.seed);
    let mut engine = Engine::new(16);
    engine.threads = 1;
    let limits = Limits {
        nodes: Some(args.nodes),
        ..Default::default()
    };
    let (mut positions, mut results) = (0usize, [0usize; 3]);
    for game in 0..args.games {
        let Some(mut pos) = start_position(openings, args.random_plies, &mut rng) else {
            continue;
        };
        engine.clear_hash();
        let mut kept: Vec<String> = Vec::new();
        // White's result once known: 2 win, 1 draw, 0 loss.
        let mut result = None;
        let (mut winning_plies, mut drawn_plies) = (0i32, 0u32);
        for ply in 0.. {
            if legal_moves(&pos).is_empty() {
                let white_mated = pos.in_check() && pos.side_to_move() == Color::White;
                result = Some(if !pos.in_check() {
                    1
                } else if white_mated {
                    0
                } else {
                    2
                });
                break;
            }
            if pos.repetitions() >= 2 || pos.halfmove_clock() >= 100 || pos.insufficient_material()
            {
                break;
            }
            let found = engine.search(&pos, &limits, &Control::new(false), &mut |_| {});
            let Some(best) = found.best else { break };
            let white_score = if pos.side_to_move() == Color::White {
                found.score
            } else {
                -found.score
            };
            // Adjudication: a side ahead by 10 pawns for 8 plies wins; a score within 0.10 for
            // 20 plies after move 40 is a draw; 400 plies are a draw.
            winning_plies = match white_score {
                s if s >= 1000 => winning_plies.max(0) + 1,
                s if s <= -1000 => winning_plies.min(0) - 1,
                _ => 0,
            };
            drawn_plies = if white_score.abs() <= 10 {
                drawn_plies + 1
            } else {
                0
            };
            if winning_plies.abs() >= 8 {
                result = Some(if winning_plies > 0 { 2 } else { 0 });
                break;
            }
            if (ply >= 80 && drawn_plies >= 20) || ply >= 400 {
                break;
            }
            let quiet = pos.piece_at(best.to()).is_none() && !best.is_promotion();
            if quiet && !pos.in_check() && found.score.abs() < MATE_BOUND {
                kept.push(pos.to_fen());
            }
            pos.make_move(best);
        }
        let result = result.unwrap_or(1);
        results[result] += 1;
        let label = ["0", "0.5", "1"][result];
        for fen in &kept {
            writeln!(out, "{} | {}", fen, label)?;
        }
        positions += kept.len();
        out.flush()?;
        if (game + 1) % 50 == 0 {
            eprintln!(
                "games {} positions {} (White wins {}, draws {}, losses {})",
                game + 1,
                positions,
                results[2],
                results[1],
                results[0]
            );
        }
    }
    Ok(())
}

/// A random book position with `plies` random legal moves played on it; `None` if the game ended.
fn start_position(openings: &[Position], plies: usize, rng: &mut Rng) -> Option<Position> {
    let mut pos = if openings.is_empty() {
        Position::startpos()
    } else {
        openings[rng.usize(..openings.len())].clone()
    };
    for _ in 0..plies {
        let moves = legal_moves(&pos);
        if moves.is_empty() {
            return None;
        }
        pos.make_move(moves.as_slice()[rng.usize(..moves.len())]);
    }
    Some(pos)
}

/// Reads the FENs of an EPD or FEN file (the first four fields of each line; clocks default).
pub fn read_openings(reader: impl BufRead) -> Vec<Position> {
    reader
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().take(4).collect();
            if fields.len() < 4 {
                return None;
            }
            Position::from_fen(&fields.join(" ")).ok()
        })
        .collect()
}
