//! What an endgame's DTZ and DTZ50 files say about the 50-move rule, in the terms of
//! Bourzutschky, Tamplin, Haworth (2005), Tables 3-5: per side to move and winner, the deepest
//! DTZ and DTZ50 wins with the number of positions at that depth, the wins the rule draws and
//! the wins it delays. Index entries are counted, as the paper does: Nalimov's index gives a
//! pawnless position with both kings on a long diagonal and its reflection an entry each, and
//! the paper's KBBKNN figures (Table 5: 141,874,223 wins drawn with White to move, 46
//! positions at the deepest DTZ50) count both.

use crate::chess::{Color, Position};
use crate::egtb::format::Outcome;
use crate::egtb::index::Half;
use crate::egtb::material::Material;
use crate::egtb::play::tables::EndgameTables;
use rayon::prelude::*;

/// The deepest wins of one metric among some positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deepest {
    /// The depth in the paper's unit, the moves the winner makes before the zeroing (or
    /// mate): with the winner to move ceil(plies / 2), with the loser to move floor(plies / 2).
    pub moves: u16,
    /// Positions at that many moves. A move's two plies can both be the depth: a zeroing move
    /// of the winner's, or the loser's forced capture after it.
    pub positions: u64,
    /// The largest depth in plies among them.
    pub plies: u16,
}

impl Deepest {
    /// A position at `plies` more, its loser to move or not.
    fn add(this: &mut Option<Deepest>, plies: u16, loser_to_move: bool) {
        let moves = if loser_to_move {
            plies / 2
        } else {
            plies.div_ceil(2)
        };
        match this {
            Some(d) if d.moves > moves => {}
            Some(d) if d.moves == moves => {
                d.positions += 1;
                d.plies = d.plies.max(plies);
            }
            _ => {
                *this = Some(Deepest {
                    moves,
                    positions: 1,
                    plies,
                })
            }
        }
    }

    /// The deeper of two, positions added where equal.
    fn merge(a: Option<Deepest>, b: Option<Deepest>) -> Option<Deepest> {
        match (a, b) {
            (Some(x), Some(y)) if x.moves == y.moves => Some(Deepest {
                moves: x.moves,
                positions: x.positions + y.positions,
                plies: x.plies.max(y.plies),
            }),
            (Some(x), Some(y)) => Some(if x.moves > y.moves { x } else { y }),
            (x, y) => x.or(y),
        }
    }
}

/// The figures of one side to move and one winner.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WinStats {
    /// Positions DTZ calls won: the paper's "nominal wins".
    pub wins: u64,
    pub max_dtz: Option<Deepest>,
    /// Over the wins that hold under the 50-move rule (DTZ50 wins).
    pub max_dtz50: Option<Deepest>,
    /// DTZ wins that DTZ50 calls draws (Table 5, "extra draws").
    pub drawn_by_rule50: u64,
    /// Wins under both whose DTZ50 is more plies than their DTZ (Table 5, "delayed").
    pub delayed_by_rule50: u64,
}

impl WinStats {
    /// The figures of one entry whose DTZ and DTZ50, from the winner's side, are `dtz` and
    /// `dtz50` plies (None: not a win for that side).
    fn add(&mut self, dtz: Option<u16>, dtz50: Option<u16>, loser_to_move: bool) {
        if let Some(z) = dtz {
            self.wins += 1;
            Deepest::add(&mut self.max_dtz, z, loser_to_move);
            match dtz50 {
                None => self.drawn_by_rule50 += 1,
                Some(z50) if z50 > z => self.delayed_by_rule50 += 1,
                Some(_) => {}
            }
        }
        if let Some(z50) = dtz50 {
            Deepest::add(&mut self.max_dtz50, z50, loser_to_move);
        }
    }

    fn merge(self, o: WinStats) -> WinStats {
        WinStats {
            wins: self.wins + o.wins,
            max_dtz: Deepest::merge(self.max_dtz, o.max_dtz),
            max_dtz50: Deepest::merge(self.max_dtz50, o.max_dtz50),
            drawn_by_rule50: self.drawn_by_rule50 + o.drawn_by_rule50,
            delayed_by_rule50: self.delayed_by_rule50 + o.delayed_by_rule50,
        }
    }
}

/// The figures of an endgame, per side to move and winner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndgameStats {
    pub material: Material,
    /// Indexed by `Half as usize`, then by the winner's `Color::index()` (open to `egtb` for
    /// its tests).
    pub(super) by: [[WinStats; 2]; 2],
}

impl EndgameStats {
    /// The figures of the positions with `stm` to move that `winner` wins: the paper's columns
    /// 1-0 wtm, 1-0 btm, 0-1 wtm, 0-1 btm are (Wtm, White), (Btm, White), (Wtm, Black),
    /// (Btm, Black).
    pub fn get(&self, stm: Half, winner: Color) -> &WinStats {
        &self.by[stm as usize][winner.index()]
    }
}

/// Reads every entry of the DTZ and DTZ50 files of `tables` (all threads of rayon's pool) and
/// counts each legal one; a side to move the files leave out is worked out by one ply, with
/// `others` holding the sub-endgames. The files must hold every entry of the index they store
/// (`paper::compare_dir` checks their headers first). None if a sub-endgame needed is not in
/// `others`.
pub fn scan(tables: &EndgameTables, others: &[EndgameTables]) -> Option<EndgameStats> {
    let index = tables.index();
    // [half][0: side to move wins, 1: it loses]
    let mut by_stm = [[WinStats::default(); 2]; 2];
    for &h in index.stored_halves() {
        const CHUNK: u64 = 1 << 16;
        let size = index.size(h);
        by_stm[h as usize] = (0..size.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                let mut s = [WinStats::default(); 2];
                let mut pos = Position::startpos();
                for i in c * CHUNK..((c + 1) * CHUNK).min(size) {
                    // Broken entries hold their neighbours' values: only a decoded
                    // position says the entry is one.
                    if index.decode(h, i).is_none() {
                        continue;
                    }
                    // DTM is not needed where the files store the side: reading it would
                    // cost a third more decompression.
                    let [dtz, dtz50] = if tables.zeroing_missing() == Some(h) {
                        let [_, z, z50] = tables.values_by_one_ply(h, i, others, &mut pos)?;
                        [z, z50]
                    } else {
                        tables.zeroing_pair(h, i).expect("entry in range")
                    }
                    .map(|v| v.outcome());
                    let win = |o| match o {
                        Outcome::Win(n) => Some(n),
                        _ => None,
                    };
                    let loss = |o| match o {
                        Outcome::Loss(n) => Some(n),
                        _ => None,
                    };
                    s[0].add(win(dtz), win(dtz50), false);
                    s[1].add(loss(dtz), loss(dtz50), true);
                }
                Some(s)
            })
            .try_reduce(
                || [WinStats::default(); 2],
                |a, b| Some([a[0].merge(b[0]), a[1].merge(b[1])]),
            )?;
    }
    // A symmetric endgame stores Btm only; its Wtm positions are those with colours flipped,
    // the same figures for the side to move.
    if index.material().is_symmetric() {
        by_stm[Half::Wtm as usize] = by_stm[Half::Btm as usize];
    }
    let mut by = [[WinStats::default(); 2]; 2];
    for h in Half::BOTH {
        let stm = h.stm();
        by[h as usize][stm.index()] = by_stm[h as usize][0];
        by[h as usize][(!stm).index()] = by_stm[h as usize][1];
    }
    Some(EndgameStats {
        material: index.material(),
        by,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A loser's forced capture after the winner's k-th move is k moves deep, as the zeroing
    /// move the winner makes as his k-th is: KRBKNN's 82 positions at the deepest loss of
    /// White to move (Table 3) count the 4-ply losses, not its 12 of 3 plies.
    #[test]
    fn depth_in_the_winners_moves() {
        let mut loser = None;
        for plies in [3, 4, 4] {
            Deepest::add(&mut loser, plies, true);
        }
        let at = |moves, positions, plies| {
            Some(Deepest {
                moves,
                positions,
                plies,
            })
        };
        assert_eq!(loser, at(2, 2, 4));
        let mut winner = None;
        for plies in [3, 4, 4] {
            Deepest::add(&mut winner, plies, false);
        }
        assert_eq!(winner, at(2, 3, 4));
        Deepest::add(&mut winner, 5, false);
        assert_eq!(winner, at(3, 1, 5));
    }
}
