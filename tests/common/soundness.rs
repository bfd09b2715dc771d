//! The recognizers against the tables (issue #7), shared by `tests/generator.rs` (every 3- and
//! 4-man table) and `benches/soundness.rs` (5-man tables): for every position of a table, with
//! each colouring (so both sides to move and both colours as the stronger side), every bound
//! that a recognizer claims must hold for the position's result by DTM (the game-theoretic
//! value, without the 50-move rule, which is what the recognizers speak about).
#![allow(dead_code)]

#[path = "playout.rs"]
mod playout;

use fortress::chess::{Color, PieceType, Position};
use fortress::egtb::format::{Metric, Outcome as TbOutcome};
use fortress::egtb::{EndgameTables, TbPosition};
use fortress::recognize::{recognize, BlockageTable, Bound, Men, Outcome, PawnEnding, Wanted};
use rayon::prelude::*;

/// Claims made and claims wrong, per recognizer.
#[derive(Default, Clone, Debug)]
pub struct Soundness {
    /// Positions looked at (each colouring counts once).
    pub positions: u64,
    /// `recognize::recognize`, exact values: dead positions, KNNK, KPK, wrong bishop with rook
    /// pawns.
    pub exact: u64,
    /// `recognize::recognize`, bounds: a bare king cannot win.
    pub bare: u64,
    /// `BlockageTable::bound`: the fence detector, in positions of kings and pawns.
    pub blockage: u64,
    /// `Position::insufficient_material` (the search's first draw test), in tables without
    /// pawns, rooks and queens, where it can say anything; first colouring only.
    pub dead: u64,
    pub wrong: u64,
    /// A few wrong claims, for the failure message.
    pub examples: Vec<String>,
}

impl Soundness {
    fn add(mut self, o: Soundness) -> Soundness {
        self.positions += o.positions;
        self.exact += o.exact;
        self.bare += o.bare;
        self.blockage += o.blockage;
        self.dead += o.dead;
        self.wrong += o.wrong;
        self.examples.extend(o.examples);
        self.examples.truncate(5);
        self
    }

    fn claim(&mut self, what: &str, bound: Bound, value: Outcome, tb: &TbPosition) {
        let holds = match bound {
            Bound::Exact(o) => o == value,
            Bound::AtMostDraw => value != Outcome::Win,
            Bound::AtLeastDraw => value != Outcome::Loss,
        };
        if !holds {
            self.wrong += 1;
            if self.examples.len() < 5 {
                self.examples.push(format!(
                    "{what} says {bound:?}, the table {value:?}: {}",
                    playout::fen_of(tb, 0)
                ));
            }
        }
    }
}

fn men_of(tb: &TbPosition) -> Men {
    let mut men = Men::empty(tb.stm);
    men.pieces = tb.pieces;
    men.en_passant = tb.ep;
    men
}

/// Checks every position of `t`.
pub fn check(t: &EndgameTables) -> Soundness {
    let index = t.index();
    let m = t.material();
    let minors_only = Color::BOTH.iter().all(|&c| {
        [PieceType::Pawn, PieceType::Rook, PieceType::Queen]
            .iter()
            .all(|&k| m.count(c, k) == 0)
    });
    index
        .stored_halves()
        .iter()
        .map(|&h| {
            (0..index.size(h))
                .into_par_iter()
                .fold(
                    || (Soundness::default(), BlockageTable::new(10)),
                    |(mut s, mut blockage), i| {
                        let Some(tb) = index.decode(h, i) else {
                            return (s, blockage);
                        };
                        let value = match t.value(Metric::Dtm, h, i).expect("in range").outcome() {
                            TbOutcome::Win(_) => Outcome::Win,
                            TbOutcome::Draw => Outcome::Draw,
                            TbOutcome::Loss(_) => Outcome::Loss,
                            TbOutcome::Broken => return (s, blockage),
                        };
                        // The colour-flipped position has the same value for its side to move.
                        for pos in [tb, tb.color_flipped()] {
                            s.positions += 1;
                            let men = men_of(&pos);
                            if let Some(b) = recognize(&men) {
                                match b {
                                    Bound::Exact(_) => s.exact += 1,
                                    _ => s.bare += 1,
                                }
                                s.claim("material recognizer", b, value, &pos);
                            }
                            if let Some(ending) = PawnEnding::of_men(&men) {
                                if let Some(b) = blockage.bound(&ending, Wanted::BOTH) {
                                    s.blockage += 1;
                                    s.claim("blockage detector", b, value, &pos);
                                }
                            }
                            // Colour-blind code: one colouring is enough (and FENs are slow).
                            // (The chess core refuses positions no game can reach, such as
                            // a triple check, which the tables hold too.)
                            if minors_only && pos == tb {
                                let Ok(p) = Position::from_fen(&playout::fen_of(&pos, 0)) else {
                                    continue;
                                };
                                if p.insufficient_material() {
                                    s.dead += 1;
                                    s.claim(
                                        "insufficient material",
                                        Bound::Exact(Outcome::Draw),
                                        value,
                                        &pos,
                                    );
                                }
                            }
                        }
                        (s, blockage)
                    },
                )
                .map(|(s, _)| s)
                .reduce(Soundness::default, Soundness::add)
        })
        .fold(Soundness::default(), Soundness::add)
}
