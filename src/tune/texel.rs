//! `engine tune FILE`: Texel's method. The evaluation is a weight vector times counts (reported
//! through `eval::Trace`), blended by phase and endgame scale; the tuner fits the weights so that
//! a sigmoid of each position's score predicts its game result (least squares), by full-batch
//! gradient descent with Adam, with a small pull towards the starting weights so that rarely
//! seen counts (a queen with 25 squares) keep their hand-set values. The last tenth of the file
//! (whole games) is held out and its error printed, to see over-fitting. Positions in check, or whose score a capture sequence would change
//! (quiescence differs from the static evaluation), are left out.

use super::record::Record;
use crate::chess::{generate, Color, Gen, MoveList, Position};
use crate::eval::{
    evaluate_cached, evaluate_traced, PawnCache, Trace, N_WEIGHTS, PHASE_TOTAL, S, TERMS, WEIGHTS,
};
use std::fmt::Write as _;

/// One position as the tuner sees it: the counts of its terms (White's minus Black's), how they
/// are blended, and the result.
struct Entry {
    counts: Vec<(u16, i16)>,
    /// Middlegame share (phase / 24) and endgame share ((24 - phase) / 24 * scale / 64).
    mg: f32,
    eg: f32,
    result: f32,
}

/// Dense White-minus-Black counts of one evaluation.
struct Counts([i32; N_WEIGHTS]);

impl Trace for Counts {
    fn add(&mut self, weight: usize, color: Color, count: i32) {
        self.0[weight] += if color == Color::White { count } else { -count };
    }
}

pub struct TuneArgs {
    pub epochs: usize,
    pub rate: f64,
    /// Weight of the squared distance to the starting weights in the loss.
    pub prior: f64,
}

/// Keeps the quiet positions of `records` (as `datagen` writes them), fits the weights and
/// returns the new `weights.rs`.
pub fn run(records: &[Record], args: &TuneArgs) -> Result<String, String> {
    let mut entries = load(records)?;
    // The positions of one game share its result: the held-out tenth is the file's last tenth,
    // whole games, so that its error shows over-fitting.
    let held_out = entries.split_off(entries.len() - entries.len() / 10);
    eprintln!(
        "{} quiet positions, {} held out",
        entries.len(),
        held_out.len()
    );
    if entries.is_empty() || held_out.is_empty() {
        return Err("too few positions".into());
    }
    let start: Vec<[f64; 2]> = WEIGHTS.iter().map(|s| [s.0 as f64, s.1 as f64]).collect();
    let mut w = start.clone();
    let k = fit_scale(&entries, &w);
    let report = |epoch: usize, w: &[[f64; 2]]| {
        eprintln!(
            "epoch {} error {:.6} held out {:.6}",
            epoch,
            error(&entries, w, k),
            error(&held_out, w, k)
        );
    };
    eprintln!("K = {:.4}", k);
    report(0, &w);

    let (mut m, mut v) = (vec![[0.0; 2]; N_WEIGHTS], vec![[0.0; 2]; N_WEIGHTS]);
    let (b1, b2) = (0.9f64, 0.999f64);
    for epoch in 1..=args.epochs {
        let grad = gradient(&entries, &w, k);
        for i in 0..N_WEIGHTS {
            for p in 0..2 {
                let g = grad[i][p] + 2.0 * args.prior * (w[i][p] - start[i][p]);
                m[i][p] = b1 * m[i][p] + (1.0 - b1) * g;
                v[i][p] = b2 * v[i][p] + (1.0 - b2) * g * g;
                let mh = m[i][p] / (1.0 - b1.powi(epoch as i32));
                let vh = v[i][p] / (1.0 - b2.powi(epoch as i32));
                w[i][p] -= args.rate * mh / (vh.sqrt() + 1e-8);
            }
        }
        if epoch % 100 == 0 || epoch == args.epochs {
            report(epoch, &w);
        }
    }
    Ok(weights_file(&w))
}

fn load(records: &[Record]) -> Result<Vec<Entry>, String> {
    let mut entries = Vec::new();
    let mut pawns = PawnCache::new();
    let (mut lines, mut noisy) = (0usize, 0usize);
    for (i, r) in records.iter().enumerate() {
        let result = r.result.white_score();
        let mut pos = r.position().map_err(|e| format!("record {i}: {e}"))?;
        lines += 1;
        if pos.in_check() {
            continue;
        }
        let stand = evaluate_cached(&pos, &mut pawns);
        if quiescence(&mut pos, -30_000, 30_000, &mut pawns) != stand {
            noisy += 1;
            continue;
        }
        let mut counts = Counts([0; N_WEIGHTS]);
        let traced = evaluate_traced(&pos, &mut counts);
        let phase = traced.phase as f32 / PHASE_TOTAL as f32;
        entries.push(Entry {
            counts: counts
                .0
                .iter()
                .enumerate()
                .filter(|(_, &c)| c != 0)
                .map(|(i, &c)| (i as u16, c as i16))
                .collect(),
            mg: phase,
            eg: (1.0 - phase) * traced.scale as f32 / 64.0,
            result,
        });
        if lines % 200_000 == 0 {
            eprintln!("read {} positions", lines);
        }
    }
    eprintln!("{} positions read, {} left out as not quiet", lines, noisy);
    Ok(entries)
}

/// Captures only, from the static evaluation; the score of a quiet position is its evaluation.
/// Most valuable victim first, by the least valuable attacker, so that the cut-offs come early.
fn quiescence(pos: &mut Position, mut alpha: i32, beta: i32, pawns: &mut PawnCache) -> i32 {
    let stand = evaluate_cached(pos, pawns);
    if stand >= beta {
        return stand;
    }
    alpha = alpha.max(stand);
    let mut list = MoveList::new();
    generate(pos, Gen::Captures, &mut list);
    let value = |sq| pos.piece_at(sq).map_or(0, |p| p.kind.index() as i32);
    let mut moves: Vec<_> = list
        .iter()
        .map(|m| (8 * value(m.to()) - value(m.from()), m))
        .collect();
    moves.sort_unstable_by_key(|&(order, _)| -order);
    let mut best = stand;
    for (_, m) in moves {
        pos.make_move(m);
        let score = -quiescence(pos, -beta, -alpha, pawns);
        pos.unmake_move();
        if score > best {
            best = score;
            if score >= beta {
                break;
            }
            alpha = alpha.max(score);
        }
    }
    best
}

/// White's score of an entry under weights `w`.
fn score(e: &Entry, w: &[[f64; 2]]) -> f64 {
    let (mut mg, mut eg) = (0.0, 0.0);
    for &(i, c) in &e.counts {
        mg += w[i as usize][0] * c as f64;
        eg += w[i as usize][1] * c as f64;
    }
    mg * e.mg as f64 + eg * e.eg as f64
}

fn sigmoid(k: f64, score: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-k * score / 400.0))
}

fn error(entries: &[Entry], w: &[[f64; 2]], k: f64) -> f64 {
    let sum: f64 = entries
        .iter()
        .map(|e| (e.result as f64 - sigmoid(k, score(e, w))).powi(2))
        .sum();
    sum / entries.len() as f64
}

/// The sigmoid's scale that best fits the present weights (Texel's K), by narrowing a scan.
fn fit_scale(entries: &[Entry], w: &[[f64; 2]]) -> f64 {
    let (mut lo, mut hi) = (0.1f64, 3.0f64);
    for _ in 0..4 {
        let step = (hi - lo) / 10.0;
        let best = (0..=10)
            .map(|i| lo + step * i as f64)
            .min_by(|a, b| error(entries, w, *a).total_cmp(&error(entries, w, *b)))
            .unwrap_or(1.0);
        lo = (best - step).max(0.01);
        hi = best + step;
    }
    (lo + hi) / 2.0
}

/// The gradient of the mean squared error with respect to every weight.
fn gradient(entries: &[Entry], w: &[[f64; 2]], k: f64) -> Vec<[f64; 2]> {
    let mut g = vec![[0.0; 2]; N_WEIGHTS];
    let c = k * std::f64::consts::LN_10 / 400.0;
    for e in entries {
        let p = sigmoid(k, score(e, w));
        let d = -2.0 * (e.result as f64 - p) * p * (1.0 - p) * c;
        let (dm, de) = (d * e.mg as f64, d * e.eg as f64);
        for &(i, n) in &e.counts {
            g[i as usize][0] += dm * n as f64;
            g[i as usize][1] += de * n as f64;
        }
    }
    let n = entries.len() as f64;
    for x in g.iter_mut() {
        x[0] /= n;
        x[1] /= n;
    }
    g
}

/// `src/eval/weights.rs` for weights `w`, rounded, one commented block per term.
pub fn weights_file(w: &[[f64; 2]]) -> String {
    let mut out = String::from(
        "//! The evaluation's weights (middlegame, endgame), written by `engine tune`; `mod.rs` says\n\
         //! where each term starts.\n\nuse super::{N_WEIGHTS, S};\n\n#[rustfmt::skip]\n\
         pub const WEIGHTS: [S; N_WEIGHTS] = [\n",
    );
    for &(name, start, len) in TERMS {
        let _ = writeln!(out, "    // {}", name);
        for row in w[start..start + len].chunks(8) {
            let cells: Vec<String> = row
                .iter()
                .map(|x| {
                    let s = S(x[0].round() as i32, x[1].round() as i32);
                    format!("S({}, {}),", s.0, s.1)
                })
                .collect();
            let _ = writeln!(out, "    {}", cells.join(" "));
        }
    }
    out.push_str("];\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::record::GameResult;

    /// The present weights, written out, are the file they were read from.
    #[test]
    fn weights_file_round_trips() {
        let w: Vec<[f64; 2]> = WEIGHTS.iter().map(|s| [s.0 as f64, s.1 as f64]).collect();
        assert_eq!(weights_file(&w), include_str!("../eval/weights.rs"));
    }

    /// The tuner's model of an entry gives the engine's evaluation (up to integer rounding).
    #[test]
    fn model_matches_the_evaluation() {
        let data = [
            (
                "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b - - 0 1",
                GameResult::Draw,
            ),
            ("8/5k2/8/3p4/3P4/2B5/5K2/8 w - - 0 1", GameResult::Win),
            (
                "r4rk1/pp3ppp/2n5/8/8/2N5/PP3PPP/R4RK1 b - - 0 1",
                GameResult::Loss,
            ),
        ];
        let records: Vec<Record> = data
            .iter()
            .map(|&(fen, result)| Record::new(&Position::from_fen(fen).unwrap(), 0, result, false))
            .collect();
        let entries = load(&records).unwrap();
        assert_eq!(entries.len(), 3);
        let w: Vec<[f64; 2]> = WEIGHTS.iter().map(|s| [s.0 as f64, s.1 as f64]).collect();
        for (e, (fen, result)) in entries.iter().zip(data) {
            assert_eq!(e.result, result.white_score());
            let pos = Position::from_fen(fen).unwrap();
            let white = crate::eval::evaluate(&pos)
                * if pos.side_to_move() == Color::White {
                    1
                } else {
                    -1
                };
            assert!((score(e, &w) - white as f64).abs() <= 2.0, "{fen}");
        }
    }
}
